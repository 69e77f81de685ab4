#!/usr/bin/env bash
# bench/ordinary_disk.sh: braidsort spilling to an ordinary filesystem, what
# a DBA without persistent memory gets (docs/benchmarks.md, "ordinary-disk").
#
#   sudo bash bench/ordinary_disk.sh [--rows N] [--work-mem M] [--reps N]
#                                    [--parallel on|off] [--out DIR] [--no-build]
#
# An ext4 filesystem on a loop device (a file on this machine's disk) holds
# the tablespace both sorts spill to: temp_tablespaces for PostgreSQL's
# external sort, braidsort.spill_tablespace for braidsort's (forced, so that
# it runs whatever its cost model says of a device it has no profile of).
# For each sort: its time (EXPLAIN ANALYZE, median of --reps, the two
# alternating) and the sectors the loop device wrote while it ran and in
# the 35 s after it (the kernel writes dirty pages back after 30 s; a
# temporary file deleted before then is never written).  The cluster is
# throwaway, at PostgreSQL's defaults but for work_mem.  Writes
# ordinary-disk-<stamp>.json and .md to --out (bench/results).
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")" && pwd)
rows=1000000 workmem=4MB reps=3 parallel=off out="$here/results" build=1 port=5498
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) rows=$2; shift ;;
		--work-mem) workmem=$2; shift ;;
		--reps) reps=$2; shift ;;
		--parallel) parallel=$2; shift ;;
		--out) out=$2; shift ;;
		--no-build) build=0 ;;
		--help|-h) sed -n '2,18p' "$0"; exit 0 ;;
		*) echo "ordinary_disk.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || { echo "ordinary_disk.sh: run as root (it makes a loop device)" >&2; exit 1; }
pgconfig=${PG_CONFIG:-$(command -v pg_config || echo /usr/lib/postgresql/15/bin/pg_config)}
bin=$($pgconfig --bindir)
if [ $build = 1 ]; then
	make -C "$here/.." -s -j2 PG_CONFIG="$pgconfig" >/dev/null
	make -C "$here/.." -s install PG_CONFIG="$pgconfig" >/dev/null
fi

dir=$(mktemp -d /var/tmp/braid-disk.XXXXXX)
loop=""
cleanup() {
	set +e
	runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
	mountpoint -q "$dir/mnt" && umount "$dir/mnt"
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
truncate -s 4G "$dir/disk.img"
loop=$(losetup -f --show "$dir/disk.img")
mkfs.ext4 -q -F "$loop"
mkdir -p "$dir/mnt"
mount "$loop" "$dir/mnt"
mkdir "$dir/mnt/ts"
chown -R postgres: "$dir"
dev=$(basename "$loop")
written() { awk '{print $7}' "/sys/block/$dev/stat"; }

runuser -u postgres -- "$bin/initdb" -D "$dir/data" -E UTF8 --no-locale -A trust -U postgres >/dev/null
cat >> "$dir/data/postgresql.conf" <<EOF
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
shared_preload_libraries = 'braidsort'
jit = off
EOF
runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null
psql() { runuser -u postgres -- "$bin/psql" -h "$dir" -p $port -U postgres -X -qAt "$@" postgres; }
psql -c "CREATE EXTENSION braidsort" \
	-c "CREATE TABLESPACE disk LOCATION '$dir/mnt/ts'" \
	-c "CREATE TABLE sortbench (k bytea, payload text)" \
	-c "INSERT INTO sortbench SELECT decode(md5(g::text), 'hex')::bytea, repeat(md5((g * 7)::text), 3) FROM generate_series(1, $rows) g" \
	-c "VACUUM ANALYZE sortbench" >/dev/null
query="SELECT * FROM sortbench ORDER BY k"
common="SET work_mem = '$workmem'; SET temp_tablespaces = disk; SET braidsort.spill_tablespace = disk;"
[ "$parallel" = off ] && common+=" SET max_parallel_workers_per_gather = 0;"
declare -A set=([pg]="SET braidsort.enable = off;" [braid]="SET braidsort.force = on;")
one() {		# variant -> "ms sectors_during sectors_after method"
	local before mid after plan ms method
	sync
	before=$(written)
	plan=$(psql -c "$common ${set[$1]}" -c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $query")
	mid=$(written)
	sleep 35
	after=$(written)
	ms=$(echo "$plan" | sed -n 's/^Execution Time: \([0-9.]*\) ms/\1/p')
	method=$(echo "$plan" | sed -n 's/^ *Sort Method: \([a-z ]*\).*/\1/p' | head -1 | sed 's/ *$//')
	echo "$ms $((mid - before)) $((after - before)) $method"
}
one pg >/dev/null
one braid >/dev/null
results=()
for r in $(seq "$reps"); do
	order=(pg braid)
	[ $((r % 2)) = 0 ] && order=(braid pg)
	for v in "${order[@]}"; do
		res=$(one "$v")
		echo "ordinary_disk.sh: rep $r $v: $res" >&2
		results+=("$v $res")
	done
done
server=$("$bin/postgres" --version)
size=$(psql -c "SELECT pg_size_pretty(pg_table_size('sortbench'))")
mkdir -p "$out"
stamp=$(date -u +%Y%m%d-%H%M%S)
commit=$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
printf '%s\n' "${results[@]}" | /usr/bin/python3 -c '
import json, statistics, sys
stamp, commit, server, rows, workmem, parallel, size, out = sys.argv[1:9]
runs = []
for line in sys.stdin:
    v, ms, during, after, method = (line.strip().split(" ", 4) + [""])[:5]
    runs.append({"variant": v, "ms": float(ms), "sectors_during": int(during),
                 "sectors_with_writeback": int(after), "method": method})
med = {v: {k: statistics.median(r[k] for r in runs if r["variant"] == v)
           for k in ("ms", "sectors_during", "sectors_with_writeback")} for v in ("pg", "braid")}
res = {"workload": "ordinary_disk", "stamp": stamp, "commit": commit, "server": server,
       "rows": int(rows), "work_mem": workmem, "parallel": parallel, "table_size": size,
       "filesystem": "ext4 on a loop device", "runs": runs, "median": med,
       "pg_over_braid": round(med["pg"]["ms"] / med["braid"]["ms"], 3)}
json.dump(res, open(f"{out}/ordinary-disk-{stamp}.json", "w"), indent=1)
methods = {v: next(r["method"] for r in runs if r["variant"] == v) for v in ("pg", "braid")}
md = [f"# ordinary-disk-{stamp} ({commit}, {server})", "",
      f"`SELECT * FROM sortbench ORDER BY k`, {rows} rows ({size}), work_mem {workmem}, parallel query {parallel}, "
      "spilling to a tablespace on ext4 on a loop device; medians.", "",
      "| sort | method | time | sectors written while it ran | ... and in the 35 s after |", "|---|---|---:|---:|---:|"]
for v, name in (("pg", "PostgreSQL"), ("braid", "braidsort (forced)")):
    ms, during, after = med[v]["ms"], med[v]["sectors_during"], med[v]["sectors_with_writeback"]
    md.append(f"| {name} | {methods[v]} | {ms:.0f} ms | {during:.0f} | {after:.0f} |")
ratio = res["pg_over_braid"]
md += ["", f"pg/braid: **{ratio:.2f}x**"]
open(f"{out}/ordinary-disk-{stamp}.md", "w").write("\n".join(md) + "\n")
print("\n".join(md))
' "$stamp" "$commit" "$server" "$rows" "$workmem" "$parallel" "$size" "$out"
