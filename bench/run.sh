#!/usr/bin/env bash
#
# bench/run.sh -- braidsort benchmarks: PostgreSQL's Sort vs. braidsort's
#                 "Custom Scan (BraidSort)" on a sortbenchmark-shaped table.
#
# Usage (must be run as root; the server itself runs as the `postgres` user):
#
#     sudo bash bench/run.sh            # OnePass run (the default; 5M rows, 5 reps)
#     sudo bash bench/run.sh --quick    # smoke run (200k rows, 2 reps, 4MB work_mem)
#     sudo ROWS=10000000 TMPFS_SIZE=4G bash bench/run.sh
#     sudo bash bench/run.sh --spill    # MergePass run: work_mem 16MB, both systems spill
#     sudo ROWS=20000000 bash bench/run.sh --spill
#     sudo bash bench/run.sh --sweep    # value-size sweep (PAYLOADS), WiscSort Fig. 8 style
#
# Modes (--onepass / --spill / --sweep, or MODE=onepass|spill|sweep):
#   onepass (default)  work_mem large enough for braidsort's IndexMap, too small
#                      for PostgreSQL's tuples; configs A and B; writes
#                      results/onepass-YYYYMMDD-HHMMSS.md
#   spill              work_mem 16MB for both systems: PostgreSQL does an
#                      external merge, braidsort spills sorted runs of
#                      <key, ref> to braidsort.spill_tablespace and merges them
#                      ("Sort Method: braid mergepass", checked; aborts if not).
#                      Records per run the time and the bytes written to the
#                      spill device (braidsort: "Device Bytes Written";
#                      PostgreSQL: pg_stat_database.temp_bytes delta and the
#                      Sort's "Disk: NkB"). Config A only unless CONFIGS="A B".
#                      Writes results/spill-YYYYMMDD-HHMMSS.md
#   sweep              value-size sweep: for each PAYLOAD in PAYLOADS, 2M rows,
#                      work_mem 16MB, braidsort forced, config A (table cached);
#                      plus one run per payload with braidsort.force = off,
#                      recording whether the planner chose BraidSort or Sort
#                      (and why it declined). Writes results/sweep-YYYYMMDD-HHMMSS.md
#
# What it does:
#   * creates a throwaway cluster (initdb --no-locale -E UTF8) in a temp
#     directory under /tmp, listening only on a unix socket in that directory
#     (port number BENCH_PORT), with shared_preload_libraries = 'braidsort',
#     max_parallel_workers_per_gather = 0 and jit = off;
#   * mounts a tmpfs (standing in for a DAX mount; falls back to a directory
#     under /dev/shm if mounting is not permitted), creates tablespace
#     braid_dax on it and sets temp_tablespaces = 'braid_dax' so that
#     PostgreSQL's external sort (and braidsort's spill files) go there; in
#     the spill and sweep modes also braidsort.spill_tablespace = 'braid_dax';
#   * loads sortbench(k bytea, v bytea): ROWS rows, 10-byte random key,
#     PAYLOAD-byte value; VACUUM ANALYZE; warms it (count(*), pg_prewarm);
#   * onepass: for shared_buffers = SB_LARGE (config A) and SB_SMALL (config B),
#     restarting the server in between, runs
#         EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT * FROM sortbench ORDER BY k
#     alternately with braidsort off (PostgreSQL's Sort) and with
#     braidsort.enable = on, braidsort.force = on, REPS times each, at the
#     same work_mem, after one untimed warm-up run of each (the warm-up is a
#     full EXPLAIN (ANALYZE, BUFFERS) that is kept for the results file,
#     together with the pg_stat_database.temp_bytes delta it caused);
#     the spill and sweep modes do the same (per config / per payload) and
#     also record each run's temp_bytes delta and braidsort's device counters;
#   * checks every plan (BraidSort when on, a plain Sort when off), computes
#     medians and the speed-up pg/braid, prints a table and writes the
#     results file.
#   * On exit (success, error or Ctrl-C) stops the server, unmounts the
#     tmpfs and removes every temporary directory.
#
# Environment (defaults in brackets; "spill:"/"sweep:" where those modes differ):
#   MODE [onepass]           onepass, spill or sweep (same as --onepass/--spill/--sweep)
#   BENCH_PORT [5488]        port number (names the unix socket; no TCP)
#   ROWS [5000000]           rows in sortbench            (sweep: 2000000; --quick: 200000)
#   PAYLOAD [90]             bytes in v                   (not used by sweep)
#   PAYLOADS ["10 50 90 500"] sweep: the payload sizes, in bytes
#   REPS [5]                 timed runs per system/config (sweep: 3; --quick: 2)
#   WORK_MEM [128MB]         work_mem for both systems    (spill, sweep: 16MB; --quick: 4MB)
#   SB_LARGE [2GB]           shared_buffers of config A (should hold the table)
#                            (spill, sweep: computed from ROWS/PAYLOAD(S): at least 2GB
#                            and twice the estimated heap, so that braidsort's planner,
#                            too, treats the table as cached)
#   SB_SMALL [128MB]         shared_buffers of config B (PostgreSQL's default)
#   CONFIGS ["A B"]          configurations to run        (spill: "A"; sweep: always A)
#   TMPFS_SIZE [2G]          size of the tmpfs ("DAX") mount
#                            (spill, sweep: computed from ROWS/PAYLOAD(S): table +
#                            1.25 x PostgreSQL's temp files + 256MB)
#   TABLE_TABLESPACE [braid_dax]  tablespace of sortbench (pg_default = cluster dir)
#   PGBIN [/usr/lib/postgresql/15/bin]
#   RESULTS_DIR [<script dir>/results]
# Explicitly set environment variables win over --quick's and the modes' values.
#
set -euo pipefail
shopt -s inherit_errexit

# ----------------------------------------------------------------------------
# arguments and settings
# ----------------------------------------------------------------------------
ORIG_CMDLINE="$0${*:+ $*}"
QUICK=0
for arg in "$@"; do
	case "$arg" in
		--quick) QUICK=1 ;;
		-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
		*) echo "run.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
	esac
done

# remember which variables came from the environment (for the results file)
ENV_GIVEN=""
for v in BENCH_PORT ROWS PAYLOAD REPS WORK_MEM SB_LARGE SB_SMALL TMPFS_SIZE \
         TABLE_TABLESPACE PGBIN RESULTS_DIR; do
	if [[ -n "${!v+x}" ]]; then ENV_GIVEN+="$v=${!v} "; fi
done

if (( QUICK )); then
	ROWS=${ROWS:-200000}
	REPS=${REPS:-2}
	WORK_MEM=${WORK_MEM:-4MB}
fi
BENCH_PORT=${BENCH_PORT:-5488}
ROWS=${ROWS:-5000000}
PAYLOAD=${PAYLOAD:-90}
REPS=${REPS:-5}
WORK_MEM=${WORK_MEM:-128MB}
SB_LARGE=${SB_LARGE:-2GB}
SB_SMALL=${SB_SMALL:-128MB}
TMPFS_SIZE=${TMPFS_SIZE:-2G}
TABLE_TABLESPACE=${TABLE_TABLESPACE:-braid_dax}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname "$SCRIPT_DIR")
RESULTS_DIR=${RESULTS_DIR:-$SCRIPT_DIR/results}

die() { echo "run.sh: ERROR: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

for v in BENCH_PORT ROWS PAYLOAD REPS; do
	[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')"
done
[[ "$TABLE_TABLESPACE" =~ ^[a-z_][a-z0-9_]*$ ]] || die "bad TABLE_TABLESPACE '$TABLE_TABLESPACE'"
for v in WORK_MEM SB_LARGE SB_SMALL; do
	[[ "${!v}" =~ ^[0-9]+(kB|MB|GB|TB)?$ ]] || die "$v must look like 128MB (got '${!v}')"
done
[[ "$TMPFS_SIZE" =~ ^[0-9]+[kKmMgG%]?$ ]] || die "TMPFS_SIZE must look like 2G (got '$TMPFS_SIZE')"

[[ $(id -u) -eq 0 ]] || die "must be run as root (it mounts a tmpfs and runs the server as 'postgres')"
id postgres >/dev/null 2>&1 || die "no 'postgres' OS user"
for b in initdb pg_ctl postgres psql pg_config; do
	[[ -x "$PGBIN/$b" ]] || die "$PGBIN/$b not found (set PGBIN)"
done
PKGLIBDIR=$("$PGBIN/pg_config" --pkglibdir)
[[ -f "$PKGLIBDIR/braidsort.so" ]] || die "braidsort.so is not installed in $PKGLIBDIR (run 'make install')"
command -v awk >/dev/null || die "awk is required"

# Refuse a port somebody is already using (TCP or a socket of the same number
# in the usual places); our own server only listens on a private socket.
if command -v ss >/dev/null 2>&1 && ss -Hltn "sport = :$BENCH_PORT" 2>/dev/null | grep -q .; then
	die "TCP port $BENCH_PORT is in use; pick another with BENCH_PORT"
fi

as_pg() { runuser -u postgres -- "$@"; }

# ----------------------------------------------------------------------------
# temp dirs, cleanup
# ----------------------------------------------------------------------------
WORK=""
DAX=""
DAX_MOUNTED=0
DAX_IS_SHM=0
PGDATA_DIR=""
SERVER_LOG=""

cleanup() {
	local rc=$?
	set +e
	trap - EXIT INT TERM
	if [[ -n "$PGDATA_DIR" && -f "$PGDATA_DIR/postmaster.pid" ]]; then
		log "stopping server"
		if ! as_pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -w -t 60 stop -m fast >/dev/null 2>&1; then
			as_pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -w -t 30 stop -m immediate >/dev/null 2>&1
		fi
	fi
	if (( DAX_MOUNTED )); then
		umount "$DAX" 2>/dev/null || { sleep 1; umount "$DAX" 2>/dev/null; } ||
			{ echo "run.sh: umount $DAX failed, doing a lazy unmount" >&2; umount -l "$DAX"; }
		DAX_MOUNTED=0
	fi
	if (( DAX_IS_SHM )) && [[ "$DAX" == /dev/shm/braidbench-dax.* ]]; then
		rm -rf -- "$DAX"
	fi
	if [[ "$WORK" == /tmp/braidbench.* && -d "$WORK" ]]; then
		if mountpoint -q "$WORK/dax" 2>/dev/null; then
			echo "run.sh: $WORK/dax is still mounted; leaving $WORK in place" >&2
		else
			rm -rf -- "$WORK"
		fi
	fi
	if (( rc != 0 )); then echo "run.sh: failed (exit $rc); everything was cleaned up" >&2; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "run.sh: interrupted" >&2; exit 130' INT
trap 'echo "run.sh: terminated" >&2; exit 143' TERM

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
WORK=$(mktemp -d /tmp/braidbench.XXXXXX)
chmod 755 "$WORK"
chown postgres: "$WORK"
cd "$WORK"      # a directory the postgres user can enter
PGDATA_DIR="$WORK/data"
SERVER_LOG="$WORK/server.log"
REPORT="$WORK/report.md"
SOCK="$WORK"

# ---- the "DAX" tmpfs ----
DAX="$WORK/dax"
mkdir "$DAX"
DAX_NOTE=""
if mount -t tmpfs -o "size=$TMPFS_SIZE,mode=0755" tmpfs "$DAX" 2>"$WORK/mount.err"; then
	DAX_MOUNTED=1
	DAX_NOTE="tmpfs (size=$TMPFS_SIZE) mounted at $DAX"
else
	rmdir "$DAX"
	DAX=$(mktemp -d /dev/shm/braidbench-dax.XXXXXX)
	DAX_IS_SHM=1
	DAX_NOTE="mounting a tmpfs was not permitted ($(tr '\n' ' ' <"$WORK/mount.err")); FALLBACK: plain directory $DAX on the existing /dev/shm tmpfs (no size limit of its own)"
	echo "run.sh: NOTE: $DAX_NOTE" >&2
fi
mkdir "$DAX/ts"
chown -R postgres: "$DAX"
chmod 700 "$DAX/ts"
log "DAX stand-in: $DAX_NOTE"

# ----------------------------------------------------------------------------
# cluster
# ----------------------------------------------------------------------------
log "initdb in $PGDATA_DIR"
as_pg "$PGBIN/initdb" -D "$PGDATA_DIR" --no-locale -E UTF8 -U postgres \
	--auth=trust >"$WORK/initdb.log" 2>&1 || { cat "$WORK/initdb.log" >&2; die "initdb failed"; }

cat >>"$PGDATA_DIR/postgresql.conf" <<EOF

# ---- bench/run.sh ----
port = $BENCH_PORT
listen_addresses = ''
unix_socket_directories = '$SOCK'
shared_preload_libraries = 'braidsort'
max_parallel_workers_per_gather = 0
jit = off
temp_tablespaces = 'braid_dax'
work_mem = '$WORK_MEM'
# throwaway, read-only benchmark cluster: make loading cheap, keep it quiet
fsync = off
synchronous_commit = off
full_page_writes = off
wal_level = minimal
max_wal_senders = 0
max_wal_size = '8GB'
checkpoint_timeout = '1h'
autovacuum = off
EOF

SERVER_CONFIG=$(sed -n '/^# ---- bench\/run.sh ----/,$p' "$PGDATA_DIR/postgresql.conf")

start_server() {	# $1 = shared_buffers
	log "starting server (shared_buffers=$1)"
	as_pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -l "$SERVER_LOG" -w -t 120 \
		-o "-c shared_buffers=$1" start >/dev/null ||
		{ tail -n 30 "$SERVER_LOG" >&2; die "server did not start"; }
}
stop_server() {
	log "stopping server"
	as_pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -w -t 120 stop -m fast >/dev/null ||
		die "server did not stop"
}

PSQL=("$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$SOCK" -p "$BENCH_PORT" -U postgres)

# sql DB ARGS...: run psql, die with the server log on error
sql() {
	local db=$1; shift
	local out
	if ! out=$("${PSQL[@]}" -d "$db" "$@" 2>&1); then
		echo "$out" >&2
		echo "---- last lines of the server log ----" >&2
		tail -n 20 "$SERVER_LOG" >&2
		if grep -q 'No space left on device' <<<"$out"; then
			echo "run.sh: the tmpfs is full: it holds the table (TABLE_TABLESPACE=$TABLE_TABLESPACE) and all temp files; raise TMPFS_SIZE" >&2
		fi
		die "psql failed"
	fi
	printf '%s\n' "$out"
}

start_server "$SB_LARGE"
sql postgres -c "CREATE TABLESPACE braid_dax LOCATION '$DAX/ts'" >/dev/null
sql postgres -c "CREATE DATABASE bench" >/dev/null
[[ "$(sql bench -c 'SHOW braidsort.enable')" == "on" ]] ||
	die "braidsort.enable is not 'on' by default; is braidsort preloaded?"

# ----------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------
log "loading sortbench: $ROWS rows, 10-byte keys, $PAYLOAD-byte payloads (tablespace $TABLE_TABLESPACE)"
t0=$(date +%s)
# Same transaction as CREATE TABLE + wal_level=minimal: the load skips WAL.
sql bench <<EOF >/dev/null
BEGIN;
CREATE TABLE sortbench (k bytea NOT NULL, v bytea NOT NULL) TABLESPACE $TABLE_TABLESPACE;
INSERT INTO sortbench
SELECT decode(substr(md5(random()::text), 1, 20), 'hex'),
       decode(substr(repeat(md5(g::text), ceil($PAYLOAD / 16.0)::int), 1, 2 * $PAYLOAD), 'hex')
FROM generate_series(1, $ROWS) AS g;
COMMIT;
VACUUM (ANALYZE) sortbench;
CHECKPOINT;
EOF
log "loaded in $(( $(date +%s) - t0 ))s"
TABLE_INFO=$(sql bench -F ' ' -c "SELECT count(*), pg_size_pretty(pg_relation_size('sortbench')),
	pg_relation_size('sortbench'), pg_size_bytes('$SB_LARGE'),
	(SELECT min(length(k)) || '/' || max(length(k)) || ' ' || min(length(v)) || '/' || max(length(v)) FROM sortbench)
	FROM sortbench")
read -r TBL_ROWS TBL_SIZE_PRETTY_N TBL_SIZE_PRETTY_U TBL_BYTES SB_LARGE_BYTES KLEN VLEN <<<"$TABLE_INFO"
TBL_SIZE_PRETTY="$TBL_SIZE_PRETTY_N $TBL_SIZE_PRETTY_U"
[[ "$TBL_ROWS" == "$ROWS" ]] || die "sortbench has $TBL_ROWS rows, expected $ROWS"
log "sortbench: $TBL_ROWS rows, $TBL_SIZE_PRETTY; k length min/max $KLEN, v length min/max $VLEN"
WARNINGS=()
if (( TBL_BYTES > SB_LARGE_BYTES )); then
	WARNINGS+=("sortbench ($TBL_SIZE_PRETTY) is larger than SB_LARGE=$SB_LARGE: config A does not hold the table in shared buffers")
	echo "run.sh: WARNING: ${WARNINGS[-1]}" >&2
fi
HAVE_PREWARM=0
if sql bench -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm" >/dev/null 2>&1; then HAVE_PREWARM=1; fi
(( HAVE_PREWARM )) || log "pg_prewarm not available; warming with count(*) only"

warm_table() {
	sql bench -c "SELECT count(*) FROM sortbench" >/dev/null
	if (( HAVE_PREWARM )); then
		sql bench -c "SELECT pg_prewarm('sortbench')" >/dev/null
	fi
}

# ----------------------------------------------------------------------------
# benchmark helpers
# ----------------------------------------------------------------------------
QUERY="SELECT * FROM sortbench ORDER BY k"
SET_PG="SET work_mem = '$WORK_MEM'; SET braidsort.enable = off;"
SET_BRAID="SET work_mem = '$WORK_MEM'; SET braidsort.enable = on; SET braidsort.force = on;"

# check_plan SYSTEM PLAN-TEXT
check_plan() {
	local sys=$1 plan=$2
	if [[ $sys == braid ]]; then
		grep -q 'Custom Scan (BraidSort)' <<<"$plan" ||
			{ echo "$plan" >&2; die "braidsort on/forced, but the plan has no 'Custom Scan (BraidSort)'"; }
	else
		if grep -q 'BraidSort' <<<"$plan"; then
			echo "$plan" >&2; die "braidsort.enable = off, but the plan still contains BraidSort"
		fi
		grep -Eq '^ *(-> +)?Sort +\(' <<<"$plan" ||
			{ echo "$plan" >&2; die "braidsort.enable = off, but the plan has no Sort node"; }
	fi
}

# timed_run SYSTEM -> prints execution time in ms
timed_run() {
	local sys=$1 set out t
	if [[ $sys == braid ]]; then set=$SET_BRAID; else set=$SET_PG; fi
	out=$(sql bench -c "$set" -c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $QUERY")
	check_plan "$sys" "$out"
	t=$(sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' <<<"$out")
	[[ -n "$t" ]] || { echo "$out" >&2; die "no 'Execution Time' in EXPLAIN output"; }
	echo "$t"
}

# capture_run SYSTEM CONFIG: the untimed warm-up, kept as the full EXPLAIN
# ANALYZE output; also records the pg_stat_database.temp_bytes delta.
declare -A CAPTURE TEMP_DELTA TEMP_FILES_DELTA DISK_KB SORT_METHOD
capture_run() {
	local sys=$1 cfg=$2 set out plan b0 b1 f0 f1
	if [[ $sys == braid ]]; then set=$SET_BRAID; else set=$SET_PG; fi
	# the pause lets earlier sessions' exit-time stats flushes land first
	out=$(sql bench <<EOF
SELECT pg_sleep(0.5);
SELECT 'TEMPSTAT ' || temp_bytes || ' ' || temp_files FROM pg_stat_database WHERE datname = current_database();
$set
EXPLAIN (ANALYZE, BUFFERS) $QUERY;
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
SELECT 'TEMPSTAT ' || temp_bytes || ' ' || temp_files FROM pg_stat_database WHERE datname = current_database();
EOF
)
	plan=$(grep -v '^TEMPSTAT ' <<<"$out" | sed '/^$/d')
	check_plan "$sys" "$plan"
	read -r b0 f0 < <(grep '^TEMPSTAT ' <<<"$out" | sed -n '1s/^TEMPSTAT //p')
	read -r b1 f1 < <(grep '^TEMPSTAT ' <<<"$out" | sed -n '2s/^TEMPSTAT //p')
	CAPTURE[$sys,$cfg]=$plan
	TEMP_DELTA[$sys,$cfg]=$(( b1 - b0 ))
	TEMP_FILES_DELTA[$sys,$cfg]=$(( f1 - f0 ))
	DISK_KB[$sys,$cfg]=$(grep -o 'Disk: [0-9]*kB' <<<"$plan" | head -n1 | grep -o '[0-9]*' || true)
	SORT_METHOD[$sys,$cfg]=$(grep -E '(Fallback )?Sort Method:' <<<"$plan" | sed 's/^ *//' | paste -sd ';' - | sed 's/;/; /g' || true)
}

# median of the arguments
median() {
	printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END {
		if (NR == 0) { print "nan"; exit }
		if (NR % 2) printf "%.3f\n", a[(NR + 1) / 2];
		else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
minmax() {	# minmax min|max VALUES...
	local which=$1; shift
	printf '%s\n' "$@" | sort -g | if [[ $which == min ]]; then head -n1; else tail -n1; fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f\n", a / b; else print "nan" }'; }
human_bytes() {
	awk -v b="$1" 'BEGIN { split("B kB MB GB TB", u, " "); i = 1;
		while (b >= 1024 && i < 5) { b /= 1024; i++ } printf (i == 1 ? "%d %s" : "%.1f %s"), b, u[i] }'
}

# ----------------------------------------------------------------------------
# the two configurations
# ----------------------------------------------------------------------------
CONFIGS=(A B)
declare -A CFG_SB=([A]="$SB_LARGE" [B]="$SB_SMALL")
declare -A CFG_DESC=([A]="large shared_buffers (holds the table)" [B]="PostgreSQL default shared_buffers")
declare -A TIMES MEDIAN UNFORCED_PLAN

first=1
for cfg in "${CONFIGS[@]}"; do
	sb=${CFG_SB[$cfg]}
	if (( first )); then
		first=0
		stop_server		# restart so config A starts from the same state as B
	fi
	start_server "$sb"
	[[ "$(sql bench -c 'SHOW shared_buffers')" == "$sb" ]] || log "note: SHOW shared_buffers = $(sql bench -c 'SHOW shared_buffers')"
	warm_table

	# does braidsort pick itself without force? (informational)
	UNFORCED_PLAN[$cfg]=$(sql bench -c "SET work_mem = '$WORK_MEM'; SET braidsort.enable = on; SET braidsort.force = off;" \
		-c "EXPLAIN (COSTS OFF) $QUERY")

	log "config $cfg (shared_buffers=$sb, work_mem=$WORK_MEM): warm-up / capture runs"
	capture_run pg "$cfg"
	capture_run braid "$cfg"
	log "  pg:    ${SORT_METHOD[pg,$cfg]}; temp written $(human_bytes "${TEMP_DELTA[pg,$cfg]}")"
	log "  braid: ${SORT_METHOD[braid,$cfg]}; temp written $(human_bytes "${TEMP_DELTA[braid,$cfg]}")"

	TIMES[pg,$cfg]=""
	TIMES[braid,$cfg]=""
	for (( i = 1; i <= REPS; i++ )); do
		for sys in pg braid; do
			t=$(timed_run "$sys")
			TIMES[$sys,$cfg]+="$t "
			log "config $cfg rep $i/$REPS  $(printf '%-5s' "$sys") $t ms"
		done
	done
	# shellcheck disable=SC2086
	MEDIAN[pg,$cfg]=$(median ${TIMES[pg,$cfg]})
	# shellcheck disable=SC2086
	MEDIAN[braid,$cfg]=$(median ${TIMES[braid,$cfg]})
	stop_server
done

# ----------------------------------------------------------------------------
# summary
# ----------------------------------------------------------------------------
summary_table() {
	printf '| config | shared_buffers | work_mem | PostgreSQL median (ms) | braidsort median (ms) | speed-up pg/braid |\n'
	printf '|---|---|---|---:|---:|---:|\n'
	for cfg in "${CONFIGS[@]}"; do
		printf '| %s: %s | %s | %s | %s | %s | %sx |\n' "$cfg" "${CFG_DESC[$cfg]}" "${CFG_SB[$cfg]}" "$WORK_MEM" \
			"${MEDIAN[pg,$cfg]}" "${MEDIAN[braid,$cfg]}" "$(ratio "${MEDIAN[pg,$cfg]}" "${MEDIAN[braid,$cfg]}")"
	done
}

echo
echo "==== braidsort OnePass benchmark: SELECT * FROM sortbench ORDER BY k ===="
echo "rows=$ROWS ($TBL_SIZE_PRETTY) payload=${PAYLOAD}B work_mem=$WORK_MEM reps=$REPS"
echo
printf '%-6s %-14s %-9s %14s %14s %10s\n' config shared_buffers work_mem "pg median ms" "braid med. ms" "pg/braid"
for cfg in "${CONFIGS[@]}"; do
	printf '%-6s %-14s %-9s %14s %14s %9sx\n' "$cfg" "${CFG_SB[$cfg]}" "$WORK_MEM" \
		"${MEDIAN[pg,$cfg]}" "${MEDIAN[braid,$cfg]}" "$(ratio "${MEDIAN[pg,$cfg]}" "${MEDIAN[braid,$cfg]}")"
done
echo
for cfg in "${CONFIGS[@]}"; do
	echo "config $cfg  pg sort:    ${SORT_METHOD[pg,$cfg]}  (temp written $(human_bytes "${TEMP_DELTA[pg,$cfg]}"))"
	echo "config $cfg  braidsort:  ${SORT_METHOD[braid,$cfg]}  (temp written $(human_bytes "${TEMP_DELTA[braid,$cfg]}"))"
done
for w in "${WARNINGS[@]+"${WARNINGS[@]}"}"; do echo "WARNING: $w"; done

# ----------------------------------------------------------------------------
# results file
# ----------------------------------------------------------------------------
GIT_COMMIT=$(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo "n/a (no commit / not a git repository)")
GIT_DIRTY=$(git -C "$REPO_DIR" status --porcelain 2>/dev/null | wc -l || echo "?")
SO_SHA=$(sha256sum "$PKGLIBDIR/braidsort.so" | cut -c1-16)
CPU_MODEL=$(lscpu 2>/dev/null | grep 'Model name' | sed 's/^Model name:[[:space:]]*//' | head -n1 || true)
MEM_TOTAL=$(free -g | awk '/^Mem:/ { print $2 " GiB" }')
PG_VERSION=$("$PGBIN/postgres" --version)

{
	echo "# braidsort OnePass benchmark — $(date '+%Y-%m-%d %H:%M:%S %Z')"
	echo
	echo "Query: \`$QUERY\`, rows discarded in the server via"
	echo "\`EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF)\`; time = its \"Execution Time\"."
	echo "PostgreSQL: \`$SET_PG\`  braidsort: \`$SET_BRAID\`"
	echo
	echo "## Command"
	echo
	echo '```'
	echo "${ENV_GIVEN}bash $ORIG_CMDLINE"
	echo '```'
	echo
	echo "Effective settings: BENCH_PORT=$BENCH_PORT ROWS=$ROWS PAYLOAD=$PAYLOAD REPS=$REPS WORK_MEM=$WORK_MEM"
	echo "SB_LARGE=$SB_LARGE SB_SMALL=$SB_SMALL TMPFS_SIZE=$TMPFS_SIZE TABLE_TABLESPACE=$TABLE_TABLESPACE quick=$QUICK"
	echo
	echo "## Machine"
	echo
	echo "- CPUs (nproc): $(nproc)"
	echo "- CPU model: ${CPU_MODEL:-unknown}"
	echo "- Memory: $MEM_TOTAL"
	echo "- Kernel: $(uname -r)"
	echo "- Load average at start / end of the run: $LOAD_START / $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine adds noise)"
	echo "- PostgreSQL: $PG_VERSION"
	echo "- braidsort repo commit: $GIT_COMMIT ($GIT_DIRTY uncommitted/untracked paths); installed braidsort.so sha256 $SO_SHA…"
	echo "- DAX stand-in: $DAX_NOTE"
	echo
	echo "## Data"
	echo
	echo "sortbench: $TBL_ROWS rows, heap $TBL_SIZE_PRETTY ($TBL_BYTES bytes) in tablespace $TABLE_TABLESPACE;"
	echo "k length min/max $KLEN bytes, v length min/max $VLEN bytes. Warmed with count(*)$( (( HAVE_PREWARM )) && echo " and pg_prewarm") after each restart."
	for w in "${WARNINGS[@]+"${WARNINGS[@]}"}"; do echo; echo "**WARNING:** $w"; done
	echo
	echo "Server settings added to postgresql.conf (shared_buffers given per configuration on the command line):"
	echo
	echo '```'
	echo "$SERVER_CONFIG"
	echo '```'
	echo
	echo "## Results (medians of $REPS runs)"
	echo
	summary_table
	echo
	echo "Temp data written (pg_stat_database.temp_bytes delta of the captured run; EXPLAIN \"Disk:\" where shown):"
	echo
	echo "| config | system | sort method | temp_bytes delta | temp files | EXPLAIN Disk |"
	echo "|---|---|---|---:|---:|---:|"
	for cfg in "${CONFIGS[@]}"; do
		for sys in pg braid; do
			d=${DISK_KB[$sys,$cfg]}
			echo "| $cfg | $sys | ${SORT_METHOD[$sys,$cfg]} | ${TEMP_DELTA[$sys,$cfg]} ($(human_bytes "${TEMP_DELTA[$sys,$cfg]}")) | ${TEMP_FILES_DELTA[$sys,$cfg]} | ${d:+${d} kB} |"
		done
	done
	echo
	echo "## Individual runs (ms, in execution order; runs alternate pg, braid)"
	echo
	echo "| config | system | runs | min | median | max |"
	echo "|---|---|---|---:|---:|---:|"
	for cfg in "${CONFIGS[@]}"; do
		for sys in pg braid; do
			# shellcheck disable=SC2086
			echo "| $cfg | $sys | ${TIMES[$sys,$cfg]% } | $(minmax min ${TIMES[$sys,$cfg]}) | ${MEDIAN[$sys,$cfg]} | $(minmax max ${TIMES[$sys,$cfg]}) |"
		done
	done
	echo
	echo "## Captured EXPLAIN (ANALYZE, BUFFERS) outputs (the untimed warm-up runs)"
	for cfg in "${CONFIGS[@]}"; do
		for sys in pg braid; do
			echo
			echo "### Config $cfg (shared_buffers=${CFG_SB[$cfg]}), $( [[ $sys == pg ]] && echo "PostgreSQL (braidsort.enable = off)" || echo "braidsort (enable = on, force = on)")"
			echo
			echo '```'
			echo "${CAPTURE[$sys,$cfg]}"
			echo '```'
		done
		echo
		echo "Plan with braidsort.enable = on and braidsort.force = off (cost model's own choice), config $cfg:"
		echo
		echo '```'
		echo "${UNFORCED_PLAN[$cfg]}"
		echo '```'
	done
} >"$REPORT"

mkdir -p "$RESULTS_DIR"
RESULT_FILE="$RESULTS_DIR/onepass-$(date +%Y%m%d-%H%M%S).md"
cp "$REPORT" "$RESULT_FILE"
echo
echo "results written to $RESULT_FILE"
