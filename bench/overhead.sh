#!/usr/bin/env bash
# bench/overhead.sh: what braidsort, merely enabled, costs a short query, in
# backend instructions a transaction (docs/benchmarks.md, "overhead").
#
#   sudo bash bench/overhead.sh [--txns N] [--scale N] [--out DIR] [--no-build]
#
# Timing a 70-microsecond transaction on a shared 2-CPU machine moves by more
# than the 1% this is about, so this counts instructions instead: the
# server runs under valgrind's callgrind (--trace-children follows every
# backend), and each pgbench client's backend reports what it executed.
# A backend's start is the same in every variant and is taken out as the
# difference of two runs, of 100 and 100 + N transactions, with the same
# random seed.  Variants alternate (braidsort off, on, off, on); the
# cluster is throwaway (initdb in a temporary directory, unix socket only),
# with the table in shared_buffers.  Writes overhead-<stamp>.json and .md
# to --out (bench/results).
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")" && pwd)
txns=1000 scale=10 out="$here/results" build=1 port=5497
while [ $# -gt 0 ]; do
	case "$1" in
		--txns) txns=$2; shift ;;
		--scale) scale=$2; shift ;;
		--out) out=$2; shift ;;
		--no-build) build=0 ;;
		--help|-h) sed -n '2,16p' "$0"; exit 0 ;;
		*) echo "overhead.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || { echo "overhead.sh: run as root (the server runs as postgres)" >&2; exit 1; }
[ "$txns" -ge 1 ] && [ "$scale" -ge 1 ] || { echo "overhead.sh: --txns and --scale must be at least 1" >&2; exit 2; }
command -v valgrind >/dev/null ||
	{ DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind >/dev/null; }; }
pgconfig=${PG_CONFIG:-$(command -v pg_config || echo /usr/lib/postgresql/15/bin/pg_config)}
bin=$($pgconfig --bindir)
major=$($pgconfig --version | sed -E 's/[^0-9]*([0-9]+).*/\1/')
if [ $build = 1 ]; then
	make -C "$here/.." -s -j2 PG_CONFIG="$pgconfig" >/dev/null
	make -C "$here/.." -s install PG_CONFIG="$pgconfig" >/dev/null
fi

dir=$(mktemp -d /tmp/braid-overhead.XXXXXX)
cg=$dir/cg
cleanup() {
	set +e
	runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
mkdir -p "$cg"
chown -R postgres: "$dir"
runuser -u postgres -- "$bin/initdb" -D "$dir/data" -E UTF8 --no-locale -A trust -U postgres >/dev/null
cat >> "$dir/data/postgresql.conf" <<EOF
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
shared_preload_libraries = 'braidsort'
jit = off
autovacuum = off
fsync = off
EOF
runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null
runuser -u postgres -- "$bin/pgbench" -h "$dir" -p $port -i -q -s "$scale" postgres >/dev/null 2>&1
runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null

# the short query with a sort: a 100-row index range, ordered by another
# column (braidsort takes its Sort adaptively), within shared_buffers (the
# first 200,000 accounts, or all of a smaller table)
last=$((scale * 100000 < 200000 ? scale * 100000 - 100 : 199700))
cat > "$dir/order100.sql" <<EOF
\\set aid random(1, $last)
SELECT aid, abalance FROM pgbench_accounts WHERE aid BETWEEN :aid AND :aid + 100 ORDER BY abalance, aid;
EOF
chown postgres: "$dir/order100.sql"

runuser -u postgres -- valgrind --tool=callgrind --trace-children=yes \
	--callgrind-out-file="$cg/cg.%p" "$bin/postgres" -D "$dir/data" >"$dir/valgrind.log" 2>&1 &
ready=0
for _ in $(seq 300); do
	"$bin/pg_isready" -q -h "$dir" -p $port && { ready=1; break; }
	sleep 1
done
[ $ready = 1 ] || { echo "overhead.sh: the server did not start under valgrind" >&2; cat "$dir/valgrind.log" >&2; exit 1; }

# instructions of the backends of one pgbench run (its own and pgbench's
# set-up connection, which callgrind writes out when they exit)
run_ir() {
	local script=$1 opts=$2 n=$3 before
	before=$(ls "$cg" | sort)
	if [ "$script" = select-only ]; then set -- -S; else set -- -f "$dir/$script.sql"; fi
	runuser -u postgres -- env PGOPTIONS="$opts" "$bin/pgbench" -h "$dir" -p $port -n -c 1 \
		--random-seed=7 -t "$n" "$@" postgres >/dev/null 2>&1
	# callgrind writes a backend's file as it exits, after pgbench has
	# returned: wait until the run's files (its backend's and pgbench's
	# set-up connection's) are complete and no more appear
	local complete=0
	for _ in $(seq 120); do
		sleep 1
		complete=$(comm -13 <(echo "$before") <(ls "$cg" | sort) |
			while read -r f; do grep -l '^totals:' "$cg/$f" || true; done | wc -l)
		[ "$complete" -ge 2 ] && break
	done
	[ "$complete" -ge 2 ] || { echo "overhead.sh: callgrind wrote no complete output for a pgbench run" >&2; exit 1; }
	comm -13 <(echo "$before") <(ls "$cg" | sort) |
		while read -r f; do awk '/^totals:/ {print $2}' "$cg/$f"; done | awk '{s += $1} END {print s + 0}'
}
run_ir select-only "" 10 >/dev/null		# warm the caches the first backend builds

rows=()
for script in select-only order100; do
	for opts in "-c braidsort.enable=off" "-c braidsort.enable=on" \
		"-c braidsort.enable=off" "-c braidsort.enable=on"; do
		a=$(run_ir $script "$opts" 100)
		b=$(run_ir $script "$opts" $((100 + txns)))
		per=$(((b - a) / txns))
		echo "overhead.sh: $script, $opts: $per instructions a transaction" >&2
		rows+=("$script|${opts##*=}|$per")
	done
done
runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true

mkdir -p "$out"
stamp=$(date -u +%Y%m%d-%H%M%S)
commit=$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
server=$("$bin/postgres" --version)
printf '%s\n' "${rows[@]}" | /usr/bin/python3 -c '
import json, statistics, sys
stamp, commit, server, txns, scale, out = sys.argv[1:7]
runs = []
for line in sys.stdin:
    script, braid, per = line.strip().split("|")
    runs.append({"script": script, "braidsort": braid, "instructions": int(per)})
summary = {}
for script in ("select-only", "order100"):
    off = statistics.median(r["instructions"] for r in runs if r["script"] == script and r["braidsort"] == "off")
    on = statistics.median(r["instructions"] for r in runs if r["script"] == script and r["braidsort"] == "on")
    summary[script] = {"off": off, "on": on, "overhead_pct": round(100.0 * (on / off - 1), 2)}
res = {"workload": "overhead", "stamp": stamp, "commit": commit, "server": server,
       "txns": int(txns), "scale": int(scale), "runs": runs, "summary": summary}
json.dump(res, open(f"{out}/overhead-{stamp}.json", "w"), indent=1)
md = [f"# overhead-{stamp} ({commit}, {server})", "",
      f"Backend instructions a pgbench transaction (callgrind), {txns} transactions, scale {scale}, median of 2 runs a variant.", "",
      "| script | braidsort off | braidsort on | overhead |", "|---|---:|---:|---:|"]
for s, v in summary.items():
    off, on, pct = v["off"], v["on"], v["overhead_pct"]
    md.append(f"| {s} | {off:.0f} | {on:.0f} | {pct:+.2f}% |")
open(f"{out}/overhead-{stamp}.md", "w").write("\n".join(md) + "\n")
print("\n".join(md))
' "$stamp" "$commit" "$server" "$txns" "$scale" "$out"
