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
#     sudo bash bench/run.sh --threads  # 1 vs 2 sort threads (OnePass) and write threads (MergePass)
#     sudo bash bench/run.sh --concurrency   # pgbench, io_policy interference_aware vs overlap
#
# Modes (--onepass / --spill / --sweep / --threads / --concurrency, or MODE=...):
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
#   threads            thread scaling on this machine, braidsort forced, config A
#                      (table cached), one server throughout:
#                      sort phase: OnePass (work_mem THREADS_SORT_WORK_MEM, checked:
#                      "Sort Method: braid onepass") with braidsort.sort_threads = 1
#                      vs 2, alternating, REPS each; parses Build/Sort/Gather Time,
#                      "Sort Threads" (must equal the setting) and Execution Time.
#                      braidsort shows its phase times only with TIMING on, so each
#                      repetition runs EXPLAIN (ANALYZE, COSTS OFF) for the phases and
#                      EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) for a total without
#                      EXPLAIN's per-row timing overhead, for each thread count;
#                      write phase: MergePass (work_mem THREADS_SPILL_WORK_MEM,
#                      spill to braid_dax, checked: "braid mergepass") with
#                      braidsort.write_threads = 1 vs 2 (server-wide: ALTER SYSTEM +
#                      pg_reload_conf(), checked with SHOW in a new session before
#                      every run), for each braidsort.emulate_write_ns in
#                      THREADS_WRITE_NS; records Sort Time (sorting + writing runs),
#                      Merge Time, Execution Time, Device Bytes Written. Medians per
#                      thread count and the ratios time(1)/time(2), against the target
#                      "sort phase >= 1.6x faster with 2 threads".
#                      Writes results/threads-YYYYMMDD-HHMMSS.md
#   concurrency        pgbench (CONC_CLIENTS clients and jobs, CONC_SECONDS each) running
#                      bench/concurrency.sql: a heap-TID MergePass over sortbench
#                      (CONC_ROWS rows), a value-log sort over sortbench UNION ALL
#                      sortbench2 (CONC_ROWS2 rows), and two sorts whose results are
#                      checked in the server by bench_check() (row count, content and
#                      order checksums against braidsort.enable = off; a mismatch
#                      raises, so pgbench reports the client as aborted). Session
#                      settings via PGOPTIONS (braidsort forced, braidsort.work_mem =
#                      CONC_WORK_MEM, spill to braid_dax, emulate_write_ns /
#                      emulate_read_ns). braidsort.io_policy (server-wide: ALTER
#                      SYSTEM + pg_reload_conf(), checked with SHOW) alternates
#                      between CONC_POLICIES, CONC_REPS runs each, each after
#                      braidsort.stats_reset(). Records pgbench's tps, latency average,
#                      failed transactions and aborted clients, braidsort.scheduler's
#                      read_grants, write_grants, waits, phase_switches, "overlaps",
#                      and braidsort.stats' device bytes_written / bytes_read. Medians per
#                      policy, ratio tps(interference_aware)/tps(overlap).
#                      Writes results/concurrency-YYYYMMDD-HHMMSS.md
#   threads and concurrency run CREATE EXTENSION braidsort (for its views).
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
#   MODE [onepass]           onepass, spill, sweep, threads or concurrency (same as --MODE)
#   BENCH_PORT [5488]        port number (names the unix socket; no TCP)
#   ROWS [5000000]           rows in sortbench            (sweep: 2000000; --quick: 200000;
#                            threads --quick: 300000; concurrency: CONC_ROWS)
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
#  threads mode:
#   THREADS_SORT_WORK_MEM [512MB]   work_mem of the sort phase (must give a OnePass)
#   THREADS_SPILL_WORK_MEM [16MB]   work_mem of the write phase (must give a MergePass;
#                                   --quick: 4MB, as 300k rows do not spill at 16MB)
#   THREADS_WRITE_NS ["0 200"]      write phase: the braidsort.emulate_write_ns variants
#  concurrency mode:
#   CONC_ROWS [1000000]             rows in sortbench        (--quick: 300000)
#   CONC_ROWS2 [CONC_ROWS / 4]      rows in sortbench2       (--quick: 200000; at
#                                   braidsort.work_mem 4MB a heap-TID sort spills above ~175k rows)
#   CONC_CLIENTS [4]                pgbench -c
#   CONC_JOBS [CONC_CLIENTS]        pgbench -j
#   CONC_SECONDS [30]               pgbench -T               (--quick: 10)
#   CONC_REPS [3]                   pgbench runs per policy  (--quick: 2)
#   CONC_POLICIES ["interference_aware overlap"]  the io_policy values, alternated
#   CONC_WORK_MEM [4096]            braidsort.work_mem of the pgbench sessions (kB, or 4MB)
#   CONC_EMULATE_WRITE_NS [300]     braidsort.emulate_write_ns of the pgbench sessions
#   CONC_EMULATE_READ_NS [100]      braidsort.emulate_read_ns of the pgbench sessions
#   CONC_EXTRA_OPTIONS [""]         more "-c name=value" for the sessions' PGOPTIONS
#   CONC_SCRIPT [<script dir>/concurrency.sql]   the pgbench script
# Explicitly set environment variables win over --quick's and the modes' values.
#
set -euo pipefail
shopt -s inherit_errexit

# ----------------------------------------------------------------------------
# arguments and settings
# ----------------------------------------------------------------------------
ORIG_CMDLINE="$0${*:+ $*}"
QUICK=0
MODE_ARG=""
for arg in "$@"; do
	case "$arg" in
		--quick) QUICK=1 ;;
		--onepass|--spill|--sweep|--threads|--concurrency)
			if [[ -n "$MODE_ARG" && "$MODE_ARG" != "${arg#--}" ]]; then
				echo "run.sh: --$MODE_ARG and $arg exclude each other" >&2; exit 2
			fi
			MODE_ARG=${arg#--} ;;
		-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
		*) echo "run.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
	esac
done

# remember which variables came from the environment (for the results file)
ENV_GIVEN=""
for v in MODE BENCH_PORT ROWS PAYLOAD PAYLOADS REPS WORK_MEM SB_LARGE SB_SMALL CONFIGS \
         TMPFS_SIZE TABLE_TABLESPACE PGBIN RESULTS_DIR \
         THREADS_SORT_WORK_MEM THREADS_SPILL_WORK_MEM THREADS_WRITE_NS \
         CONC_ROWS CONC_ROWS2 CONC_CLIENTS CONC_JOBS CONC_SECONDS CONC_REPS CONC_POLICIES \
         CONC_WORK_MEM CONC_EMULATE_WRITE_NS CONC_EMULATE_READ_NS CONC_EXTRA_OPTIONS CONC_SCRIPT; do
	if [[ -n "${!v+x}" ]]; then ENV_GIVEN+="$v=${!v} "; fi
done

if [[ -n "$MODE_ARG" ]]; then
	if [[ -n "${MODE:-}" && "$MODE" != "$MODE_ARG" ]]; then
		echo "run.sh: MODE=$MODE contradicts --$MODE_ARG" >&2; exit 2
	fi
	MODE=$MODE_ARG
fi
MODE=${MODE:-onepass}
case "$MODE" in
	onepass|spill|sweep|threads|concurrency) ;;
	*) echo "run.sh: MODE must be onepass, spill, sweep, threads or concurrency (got '$MODE')" >&2; exit 2 ;;
esac
# what was given explicitly (the spill and sweep modes compute the rest)
SB_LARGE_GIVEN=${SB_LARGE+1}
TMPFS_SIZE_GIVEN=${TMPFS_SIZE+1}

if (( QUICK )); then
	case "$MODE" in
		threads)
			ROWS=${ROWS:-300000}
			THREADS_SPILL_WORK_MEM=${THREADS_SPILL_WORK_MEM:-4MB} ;;
		concurrency)
			CONC_ROWS=${CONC_ROWS:-300000}
			CONC_ROWS2=${CONC_ROWS2:-200000}
			CONC_SECONDS=${CONC_SECONDS:-10}
			CONC_REPS=${CONC_REPS:-2} ;;
	esac
	[[ $MODE == concurrency ]] || ROWS=${ROWS:-200000}
	REPS=${REPS:-2}
	WORK_MEM=${WORK_MEM:-4MB}
fi
case "$MODE" in
	spill)
		WORK_MEM=${WORK_MEM:-16MB}
		CONFIGS=${CONFIGS:-A} ;;
	sweep)
		ROWS=${ROWS:-2000000}
		REPS=${REPS:-3}
		WORK_MEM=${WORK_MEM:-16MB}
		PAYLOADS=${PAYLOADS:-10 50 90 500}
		[[ -z "${CONFIGS:-}" || "$CONFIGS" == A ]] ||
			{ echo "run.sh: the sweep runs config A (cached table) only; unset CONFIGS" >&2; exit 2; }
		CONFIGS=A ;;
	threads)
		THREADS_SORT_WORK_MEM=${THREADS_SORT_WORK_MEM:-512MB}
		THREADS_SPILL_WORK_MEM=${THREADS_SPILL_WORK_MEM:-16MB}
		THREADS_WRITE_NS=${THREADS_WRITE_NS:-0 200}
		[[ -z "${CONFIGS:-}" || "$CONFIGS" == A ]] ||
			{ echo "run.sh: the threads mode runs config A (cached table) only; unset CONFIGS" >&2; exit 2; }
		CONFIGS=A ;;
	concurrency)
		CONC_ROWS=${CONC_ROWS:-1000000}
		if [[ -n "${ROWS:-}" && "$ROWS" != "$CONC_ROWS" ]]; then
			echo "run.sh: the concurrency mode takes its row count from CONC_ROWS; unset ROWS" >&2; exit 2
		fi
		ROWS=$CONC_ROWS
		[[ "$CONC_ROWS" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: CONC_ROWS must be a positive integer" >&2; exit 2; }
		CONC_ROWS2=${CONC_ROWS2:-$(( CONC_ROWS / 4 > 0 ? CONC_ROWS / 4 : 1 ))}
		CONC_CLIENTS=${CONC_CLIENTS:-4}
		CONC_JOBS=${CONC_JOBS:-$CONC_CLIENTS}
		CONC_SECONDS=${CONC_SECONDS:-30}
		CONC_REPS=${CONC_REPS:-3}
		CONC_POLICIES=${CONC_POLICIES:-interference_aware overlap}
		CONC_WORK_MEM=${CONC_WORK_MEM:-4096}
		CONC_EMULATE_WRITE_NS=${CONC_EMULATE_WRITE_NS:-300}
		CONC_EMULATE_READ_NS=${CONC_EMULATE_READ_NS:-100}
		CONC_EXTRA_OPTIONS=${CONC_EXTRA_OPTIONS:-}
		[[ -z "${CONFIGS:-}" || "$CONFIGS" == A ]] ||
			{ echo "run.sh: the concurrency mode runs config A (cached table) only; unset CONFIGS" >&2; exit 2; }
		CONFIGS=A ;;
esac
BENCH_PORT=${BENCH_PORT:-5488}
ROWS=${ROWS:-5000000}
PAYLOAD=${PAYLOAD:-90}
PAYLOADS=${PAYLOADS:-}
REPS=${REPS:-5}
WORK_MEM=${WORK_MEM:-128MB}
SB_LARGE=${SB_LARGE:-2GB}
SB_SMALL=${SB_SMALL:-128MB}
CONFIGS=${CONFIGS:-A B}
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
if [[ $MODE == threads ]]; then
	for v in THREADS_SORT_WORK_MEM THREADS_SPILL_WORK_MEM; do
		[[ "${!v}" =~ ^[0-9]+(kB|MB|GB|TB)?$ ]] || die "$v must look like 512MB (got '${!v}')"
	done
	read -r -a WRITE_NS_LIST <<<"$THREADS_WRITE_NS"
	(( ${#WRITE_NS_LIST[@]} > 0 )) || die "THREADS_WRITE_NS is empty"
	for ns in "${WRITE_NS_LIST[@]}"; do
		[[ "$ns" =~ ^[0-9]+$ ]] || die "THREADS_WRITE_NS must be non-negative integers (got '$ns')"
	done
fi
if [[ $MODE == concurrency ]]; then
	for v in CONC_ROWS2 CONC_CLIENTS CONC_JOBS CONC_SECONDS CONC_REPS; do
		[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')"
	done
	for v in CONC_EMULATE_WRITE_NS CONC_EMULATE_READ_NS; do
		[[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer (got '${!v}')"
	done
	[[ "$CONC_WORK_MEM" =~ ^[0-9]+(kB|MB|GB)?$ ]] || die "CONC_WORK_MEM must look like 4096 or 4MB (got '$CONC_WORK_MEM')"
	read -r -a POLICY_LIST <<<"$CONC_POLICIES"
	(( ${#POLICY_LIST[@]} > 0 )) || die "CONC_POLICIES is empty"
	for pol in "${POLICY_LIST[@]}"; do
		[[ "$pol" == interference_aware || "$pol" == overlap ]] ||
			die "CONC_POLICIES may only contain interference_aware and overlap (got '$pol')"
	done
	CONC_SCRIPT=${CONC_SCRIPT:-$SCRIPT_DIR/concurrency.sql}
	[[ -r "$CONC_SCRIPT" ]] || die "pgbench script $CONC_SCRIPT not found (set CONC_SCRIPT)"
	[[ -x "$PGBIN/pgbench" ]] || die "$PGBIN/pgbench not found (set PGBIN)"
	# every pgbench session: braidsort forced, a small budget so that each sort
	# spills, spill device braid_dax with a slower emulated device
	CONC_PGOPTIONS="-c braidsort.force=on -c braidsort.work_mem=$CONC_WORK_MEM -c braidsort.spill_tablespace=braid_dax"
	CONC_PGOPTIONS+=" -c braidsort.emulate_write_ns=$CONC_EMULATE_WRITE_NS -c braidsort.emulate_read_ns=$CONC_EMULATE_READ_NS"
	CONC_PGOPTIONS+="${CONC_EXTRA_OPTIONS:+ $CONC_EXTRA_OPTIONS}"
fi
read -r -a CONFIGS <<<"$CONFIGS"
(( ${#CONFIGS[@]} > 0 )) || die "CONFIGS is empty"
declare -A seen=()
for c in "${CONFIGS[@]}"; do
	[[ "$c" == A || "$c" == B ]] || die "CONFIGS may only contain A and B (got '$c')"
	[[ -z "${seen[$c]:-}" ]] || die "CONFIGS lists $c twice"
	seen[$c]=1
done
unset seen
if [[ $MODE == sweep ]]; then
	read -r -a PAYLOAD_LIST <<<"$PAYLOADS"
	(( ${#PAYLOAD_LIST[@]} > 0 )) || die "PAYLOADS is empty"
	for p in "${PAYLOAD_LIST[@]}"; do
		[[ "$p" =~ ^[1-9][0-9]*$ ]] || die "PAYLOADS must be positive integers (got '$p')"
		(( p <= 1900 )) || die "payload $p: values over ~1900 bytes would be TOASTed/compressed; use at most 1900"
	done
else
	PAYLOAD_LIST=("$PAYLOAD")
fi

# ---- size estimates for the spill and sweep modes ----
# Heap tuple of a sortbench row: 24-byte header, k (10 bytes + 1-byte varlena
# header), v (PAYLOAD bytes; 1-byte header up to 126 bytes, else padding to
# int alignment + 4-byte header).
est_tuple_len() {
	local p=$1
	if (( p <= 126 )); then echo $(( 24 + 11 + 1 + p )); else echo $(( 24 + 11 + 1 + 4 + p )); fi
}
# heap bytes: MAXALIGNed tuples + 4-byte line pointers on 8168 usable bytes a page
est_heap_bytes() {
	local rows=$1 tup slot per
	tup=$(est_tuple_len "$2")
	slot=$(( (tup + 7) / 8 * 8 + 4 ))
	per=$(( 8168 / slot )); (( per <= 291 )) || per=291
	echo $(( (rows + per - 1) / per * 8192 ))
}
# PostgreSQL's external sort writes each tuple as a MinimalTuple without its
# 10-byte offset plus a 4-byte length word: heap tuple length - 14.
est_pg_temp_bytes() { echo $(( $1 * ($(est_tuple_len "$2") - 14) )); }
# braidsort's runs: [varint len][10-byte key][8-byte ref], at most two
# generations of runs on the device at once
est_braid_spill_bytes() { echo $(( $1 * 19 * 2 )); }
MB=$(( 1024 * 1024 ))
SIZE_NOTE=""
if [[ $MODE != onepass ]]; then
	EST_HEAP_MAX=0
	EST_TMPFS_USED_MAX=0
	EST_NOTE_PARTS=()
	if [[ $MODE == concurrency ]]; then
		# both tables; per client the spills of the value-log sort over their
		# UNION ALL (rows, a little extra per row, runs, partly filled 64MB
		# segments), all clients at once; stands in for "1.25 x temp" below
		h=$(( $(est_heap_bytes "$CONC_ROWS" "$PAYLOAD") + $(est_heap_bytes "$CONC_ROWS2" "$PAYLOAD") ))
		spill=$(( CONC_CLIENTS * ((CONC_ROWS + CONC_ROWS2) * ($(est_tuple_len "$PAYLOAD") + 40) + 128 * MB) ))
		used=$spill
		[[ $TABLE_TABLESPACE != braid_dax ]] || used=$(( used + h ))
		EST_HEAP_MAX=$h
		EST_TMPFS_USED_MAX=$used
		EST_NOTE_PARTS+=("payload ${PAYLOAD}B: tables ~$(( h / MB ))MB, braidsort spills of $CONC_CLIENTS clients ~$(( spill / MB ))MB")
	fi
	for p in "${PAYLOAD_LIST[@]}"; do
		[[ $MODE != concurrency ]] || break
		h=$(est_heap_bytes "$ROWS" "$p")
		t=$(est_pg_temp_bytes "$ROWS" "$p")
		b=$(est_braid_spill_bytes "$ROWS")
		spill=$(( t * 5 / 4 )); (( spill >= b )) || spill=$b
		used=$spill
		[[ $TABLE_TABLESPACE != braid_dax ]] || used=$(( used + h ))
		(( h <= EST_HEAP_MAX )) || EST_HEAP_MAX=$h
		(( used <= EST_TMPFS_USED_MAX )) || EST_TMPFS_USED_MAX=$used
		EST_NOTE_PARTS+=("payload ${p}B: table ~$(( h / MB ))MB, PostgreSQL temp ~$(( t / MB ))MB")
	done
	SIZE_NOTE="estimates for $ROWS rows$( [[ $MODE != concurrency ]] || echo " + $CONC_ROWS2 rows (sortbench2)"): $(IFS=';'; echo "${EST_NOTE_PARTS[*]}" | sed 's/;/; /g')"
	if [[ -z "$TMPFS_SIZE_GIVEN" ]]; then
		# table (if it lives there) + 1.25 x PostgreSQL's temp files + 256MB, in 256MB steps
		TMPFS_SIZE="$(( (EST_TMPFS_USED_MAX + 256 * MB + 256 * MB - 1) / (256 * MB) * 256 ))M"
		if [[ $MODE == concurrency ]]; then
			SIZE_NOTE+="; TMPFS_SIZE=$TMPFS_SIZE computed (tables in $TABLE_TABLESPACE + spills of all clients + 256MB)"
		else
			SIZE_NOTE+="; TMPFS_SIZE=$TMPFS_SIZE computed (table in $TABLE_TABLESPACE + 1.25 x temp + 256MB)"
		fi
	fi
	if [[ -z "$SB_LARGE_GIVEN" ]]; then
		# braidsort's planner treats a table as cached when it is at most half of shared_buffers
		sb_mb=$(( (2 * EST_HEAP_MAX + 256 * MB + 256 * MB - 1) / (256 * MB) * 256 ))
		(( sb_mb >= 2048 )) || sb_mb=2048
		if (( sb_mb % 1024 == 0 )); then SB_LARGE="$(( sb_mb / 1024 ))GB"; else SB_LARGE="${sb_mb}MB"; fi
		SIZE_NOTE+="; SB_LARGE=$SB_LARGE computed (>= 2GB and 2 x table)"
	fi
	# refuse to run the machine out of memory: the tmpfs contents plus the
	# cached table in shared buffers (both are only resident once used)
	mem_avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
	need_kb=$(( (EST_TMPFS_USED_MAX + EST_HEAP_MAX + 512 * MB) / 1024 ))
	if (( need_kb > mem_avail_kb * 9 / 10 )); then
		die "this run needs ~$(( need_kb / 1024 ))MB of memory (tmpfs ~$(( EST_TMPFS_USED_MAX / MB ))MB + cached table ~$(( EST_HEAP_MAX / MB ))MB + slack), but only $(( mem_avail_kb / 1024 ))MB are available; lower ROWS"
	fi
fi

[[ $(id -u) -eq 0 ]] || die "must be run as root (it mounts a tmpfs and runs the server as 'postgres')"
id postgres >/dev/null 2>&1 || die "no 'postgres' OS user"
for b in initdb pg_ctl postgres psql pg_config; do
	[[ -x "$PGBIN/$b" ]] || die "$PGBIN/$b not found (set PGBIN)"
done
PKGLIBDIR=$("$PGBIN/pg_config" --pkglibdir)
[[ -f "$PKGLIBDIR/braidsort.so" ]] || die "braidsort.so is not installed in $PKGLIBDIR (run 'make install')"
SO_SHA_START=$(sha256sum "$PKGLIBDIR/braidsort.so" | cut -c1-16)
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
if [[ $MODE != onepass ]]; then
	# braidsort's spill files go to the same "DAX" tablespace as PostgreSQL's temp files
	echo "braidsort.spill_tablespace = 'braid_dax'" >>"$PGDATA_DIR/postgresql.conf"
fi

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
if [[ $MODE != onepass ]]; then
	for g in temp_tablespaces braidsort.spill_tablespace; do
		[[ "$(sql bench -c "SHOW $g")" == "braid_dax" ]] || die "$g is not 'braid_dax'"
	done
fi

# ----------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------
WARNINGS=()
# load_table PAYLOAD: (re)create and load sortbench; sets TBL_ROWS, TBL_BYTES,
# TBL_SIZE_PRETTY, SB_LARGE_BYTES, KLEN, VLEN
load_table() {
	local payload=$1 t0 info n u
	log "loading sortbench: $ROWS rows, 10-byte keys, $payload-byte payloads (tablespace $TABLE_TABLESPACE)"
	t0=$(date +%s)
	if [[ $MODE == sweep ]]; then
		# the previous payload's table: its space on the tmpfs is freed at once
		sql bench -c "DROP TABLE IF EXISTS sortbench" -c "CHECKPOINT" >/dev/null
	fi
	# Same transaction as CREATE TABLE + wal_level=minimal: the load skips WAL.
	sql bench <<SQL >/dev/null
BEGIN;
CREATE TABLE sortbench (k bytea NOT NULL, v bytea NOT NULL) TABLESPACE $TABLE_TABLESPACE;
INSERT INTO sortbench
SELECT decode(substr(md5(random()::text), 1, 20), 'hex'),
       decode(substr(repeat(md5(g::text), ceil($payload / 16.0)::int), 1, 2 * $payload), 'hex')
FROM generate_series(1, $ROWS) AS g;
COMMIT;
VACUUM (ANALYZE) sortbench;
CHECKPOINT;
SQL
	log "loaded in $(( $(date +%s) - t0 ))s"
	info=$(sql bench -F ' ' -c "SELECT count(*), pg_size_pretty(pg_relation_size('sortbench')),
		pg_relation_size('sortbench'), pg_size_bytes('$SB_LARGE'),
		(SELECT min(length(k)) || '/' || max(length(k)) || ' ' || min(length(v)) || '/' || max(length(v)) FROM sortbench)
		FROM sortbench")
	read -r TBL_ROWS n u TBL_BYTES SB_LARGE_BYTES KLEN VLEN <<<"$info"
	TBL_SIZE_PRETTY="$n $u"
	[[ "$TBL_ROWS" == "$ROWS" ]] || die "sortbench has $TBL_ROWS rows, expected $ROWS"
	log "sortbench: $TBL_ROWS rows, $TBL_SIZE_PRETTY; k length min/max $KLEN, v length min/max $VLEN"
	if (( TBL_BYTES > SB_LARGE_BYTES )); then
		WARNINGS+=("sortbench${2:+ ($2)} ($TBL_SIZE_PRETTY) is larger than SB_LARGE=$SB_LARGE: config A does not hold the table in shared buffers")
		echo "run.sh: WARNING: ${WARNINGS[-1]}" >&2
	elif [[ $MODE != onepass ]] && (( 2 * TBL_BYTES > SB_LARGE_BYTES )); then
		WARNINGS+=("sortbench${2:+ ($2)} ($TBL_SIZE_PRETTY) is more than half of SB_LARGE=$SB_LARGE: braidsort's planner counts it as not cached (affects force = off plans only)")
		echo "run.sh: WARNING: ${WARNINGS[-1]}" >&2
	fi
}
if [[ $MODE != sweep ]]; then
	load_table "$PAYLOAD"
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
# configurations, machine description
# ----------------------------------------------------------------------------
declare -A CFG_SB=([A]="$SB_LARGE" [B]="$SB_SMALL")
declare -A CFG_DESC=([A]="large shared_buffers (holds the table)" [B]="PostgreSQL default shared_buffers")
declare -A TIMES MEDIAN UNFORCED_PLAN

collect_machine_info() {
	GIT_COMMIT=$(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo "n/a (no commit / not a git repository)")
	GIT_DIRTY=$(git -C "$REPO_DIR" status --porcelain 2>/dev/null | wc -l || echo "?")
	SO_SHA=$(sha256sum "$PKGLIBDIR/braidsort.so" | cut -c1-16)
	CPU_MODEL=$(lscpu 2>/dev/null | grep 'Model name' | sed 's/^Model name:[[:space:]]*//' | head -n1 || true)
	MEM_TOTAL=$(free -g | awk '/^Mem:/ { print $2 " GiB" }')
	PG_VERSION=$("$PGBIN/postgres" --version)
}
machine_md() {
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
}

# ----------------------------------------------------------------------------
# onepass mode (the default)
# ----------------------------------------------------------------------------
summary_table() {
	printf '| config | shared_buffers | work_mem | PostgreSQL median (ms) | braidsort median (ms) | speed-up pg/braid |\n'
	printf '|---|---|---|---:|---:|---:|\n'
	for cfg in "${CONFIGS[@]}"; do
		printf '| %s: %s | %s | %s | %s | %s | %sx |\n' "$cfg" "${CFG_DESC[$cfg]}" "${CFG_SB[$cfg]}" "$WORK_MEM" \
			"${MEDIAN[pg,$cfg]}" "${MEDIAN[braid,$cfg]}" "$(ratio "${MEDIAN[pg,$cfg]}" "${MEDIAN[braid,$cfg]}")"
	done
}

run_onepass() {
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

	collect_machine_info
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
		machine_md
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
}

# ----------------------------------------------------------------------------
# spill and sweep modes: helpers
# ----------------------------------------------------------------------------
SET_UNFORCED="SET work_mem = '$WORK_MEM'; SET braidsort.enable = on; SET braidsort.force = off;"
BLOCK_SIZE=8192

# plan_int NAME PLAN: the integer of the first "NAME: N" line of a plan
plan_int() {
	sed -n "s/^ *$1: \([0-9][0-9]*\)\$/\1/p" <<<"$2" | head -n1
}
# median of integers, printed as an integer
median_int() { median "$@" | awk '{ printf "%.0f\n", $1 }'; }
# same_or_range VALUES...: the value if all are equal, else "min-max"
same_or_range() {
	local lo hi
	lo=$(minmax min "$@"); hi=$(minmax max "$@")
	if [[ "$lo" == "$hi" ]]; then echo "$lo"; else echo "$lo-$hi"; fi
}
# bytes_cell BYTES: "N (human)" for the results tables
bytes_cell() { if [[ -n "$1" && "$1" != "-" ]]; then echo "$1 ($(human_bytes "$1"))"; fi; }

# bench_run SYSTEM KIND: one run of the spill and sweep modes, in one session
# that also reads pg_stat_database's temp counters before and after it.
#   SYSTEM  pg       braidsort.enable = off (PostgreSQL's Sort)
#           braid    braidsort.enable = on, braidsort.force = on
#           unforced braidsort.enable = on, braidsort.force = off: the planner
#                    decides; braidsort's DEBUG1 message says why it declined
#   KIND    timed    EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF)
#           capture  EXPLAIN (ANALYZE, BUFFERS): the untimed warm-up, kept
# Sets R_PLAN R_TIME R_NODE R_WHY R_METHOD R_TEMP_BYTES R_TEMP_FILES R_DISK_KB
# R_TEMP_WRITTEN (bytes; from BUFFERS, so capture runs only) and braidsort's
# R_DEV_W R_DEV_R R_RUNS R_PASSES (empty when the plan has no BraidSort).
bench_run() {
	local sys=$1 kind=$2 set explain dbg="" undbg="" out b0 f0 b1 f1 blks
	case $sys in
		pg) set=$SET_PG ;;
		braid) set=$SET_BRAID ;;
		unforced) set=$SET_UNFORCED; dbg="SET client_min_messages = debug1;"; undbg="RESET client_min_messages;" ;;
		*) die "bench_run: unknown system '$sys'" ;;
	esac
	if [[ $kind == capture ]]; then
		explain="EXPLAIN (ANALYZE, BUFFERS)"
	else
		explain="EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF)"
	fi
	# the pause lets earlier sessions' exit-time stats flushes land first
	out=$(sql bench <<SQL
SELECT pg_sleep(0.5);
SELECT 'TEMPSTAT ' || temp_bytes || ' ' || temp_files FROM pg_stat_database WHERE datname = current_database();
$set
$dbg
$explain $QUERY;
$undbg
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
SELECT 'TEMPSTAT ' || temp_bytes || ' ' || temp_files FROM pg_stat_database WHERE datname = current_database();
SQL
)
	R_WHY=$(sed -n 's/^.*DEBUG: *braidsort: Sort left to PostgreSQL: //p' <<<"$out" | head -n1)
	R_PLAN=$(grep -v -e '^TEMPSTAT ' -e 'DEBUG: ' <<<"$out" | sed '/^$/d')
	if [[ $sys != unforced ]]; then
		check_plan "$sys" "$R_PLAN"
	fi
	if grep -q 'Custom Scan (BraidSort)' <<<"$R_PLAN"; then
		R_NODE=BraidSort
	elif grep -Eq '^ *(-> +)?Sort +\(' <<<"$R_PLAN"; then
		R_NODE=Sort
	else
		R_NODE="neither"
	fi
	R_TIME=$(sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' <<<"$R_PLAN")
	[[ -n "$R_TIME" ]] || { echo "$R_PLAN" >&2; die "no 'Execution Time' in EXPLAIN output"; }
	read -r b0 f0 < <(grep '^TEMPSTAT ' <<<"$out" | sed -n '1s/^TEMPSTAT //p')
	read -r b1 f1 < <(grep '^TEMPSTAT ' <<<"$out" | sed -n '2s/^TEMPSTAT //p')
	R_TEMP_BYTES=$(( b1 - b0 ))
	R_TEMP_FILES=$(( f1 - f0 ))
	R_DISK_KB=$(grep -o 'Disk: [0-9]*kB' <<<"$R_PLAN" | head -n1 | grep -o '[0-9]*' || true)
	blks=$(grep -o 'temp [^,]*written=[0-9]*' <<<"$R_PLAN" | head -n1 | sed 's/.*written=//' || true)
	R_TEMP_WRITTEN=${blks:+$(( blks * BLOCK_SIZE ))}
	R_METHOD=$(grep -E 'Sort Method:' <<<"$R_PLAN" | sed 's/^ *//' | paste -sd ';' - | sed 's/;/; /g' || true)
	R_DEV_W="" R_DEV_R="" R_RUNS="" R_PASSES=""
	if [[ $R_NODE == BraidSort ]]; then
		R_DEV_W=$(plan_int 'Device Bytes Written' "$R_PLAN")
		R_DEV_R=$(plan_int 'Device Bytes Read' "$R_PLAN")
		R_RUNS=$(plan_int 'Runs' "$R_PLAN")
		R_PASSES=$(plan_int 'Merge Passes' "$R_PLAN")
		[[ -n "$R_DEV_W" && -n "$R_DEV_R" && -n "$R_RUNS" && -n "$R_PASSES" ]] ||
			{ echo "$R_PLAN" >&2; die "could not parse Runs / Merge Passes / Device Bytes Written / Device Bytes Read from braidsort's EXPLAIN ANALYZE output"; }
	fi
	if [[ $sys == braid && $MODE == spill ]] && ! grep -q 'Sort Method: braid mergepass' <<<"$R_PLAN"; then
		echo "$R_PLAN" >&2
		die "braidsort did not spill (no 'Sort Method: braid mergepass'): its IndexMap fit in work_mem=$WORK_MEM; raise ROWS or lower WORK_MEM"
	fi
}

# explain_unforced: the plan braidsort's cost model picks without force
# (EXPLAIN without ANALYZE) and, if it declines, why; sets U_PLAN, U_WHY.
explain_unforced() {
	local out
	out=$(sql bench -c "$SET_UNFORCED SET client_min_messages = debug1;" -c "EXPLAIN (COSTS OFF) $QUERY")
	U_WHY=$(sed -n 's/^.*DEBUG: *braidsort: Sort left to PostgreSQL: //p' <<<"$out" | head -n1)
	U_PLAN=$(grep -v 'DEBUG: ' <<<"$out")
}

# measure KEY LABEL: warm-up (capture) run of each system, then REPS timed
# runs alternating pg, braid; results in the arrays below, keyed "system,KEY"
declare -A CAP_PLAN CAP_TEMPB CAP_TEMPF CAP_DISKKB CAP_TEMPW CAP_DEVW CAP_METHOD
declare -A TEMPB TEMPF DISKKB DEVW DEVR NRUNS NPASSES MED_BYTES MED_DISKKB MED_DEVR
declare -A RUNS_SUM PASSES_SUM
measure() {
	local key=$1 label=$2 sys i
	log "$label: warm-up / capture runs"
	for sys in pg braid; do
		bench_run "$sys" capture
		CAP_PLAN[$sys,$key]=$R_PLAN
		CAP_TEMPB[$sys,$key]=$R_TEMP_BYTES
		CAP_TEMPF[$sys,$key]=$R_TEMP_FILES
		CAP_DISKKB[$sys,$key]=$R_DISK_KB
		CAP_TEMPW[$sys,$key]=$R_TEMP_WRITTEN
		CAP_DEVW[$sys,$key]=$R_DEV_W
		CAP_METHOD[$sys,$key]=$R_METHOD
	done
	log "  pg:    ${CAP_METHOD[pg,$key]}; temp_bytes $(human_bytes "${CAP_TEMPB[pg,$key]}")"
	log "  braid: ${CAP_METHOD[braid,$key]}; device bytes written $(human_bytes "${CAP_DEVW[braid,$key]}")"
	if [[ -z "${CAP_DISKKB[pg,$key]}" ]]; then
		WARNINGS+=("$label: PostgreSQL's Sort did not spill (${CAP_METHOD[pg,$key]}); lower WORK_MEM or raise ROWS")
		echo "run.sh: WARNING: ${WARNINGS[-1]}" >&2
	fi

	for sys in pg braid; do
		TIMES[$sys,$key]="" TEMPB[$sys,$key]="" TEMPF[$sys,$key]="" DISKKB[$sys,$key]=""
		DEVW[$sys,$key]="" DEVR[$sys,$key]="" NRUNS[$sys,$key]="" NPASSES[$sys,$key]=""
	done
	for (( i = 1; i <= REPS; i++ )); do
		for sys in pg braid; do
			bench_run "$sys" timed
			TIMES[$sys,$key]+="$R_TIME "
			TEMPB[$sys,$key]+="$R_TEMP_BYTES "
			TEMPF[$sys,$key]+="$R_TEMP_FILES "
			if [[ $sys == pg ]]; then
				DISKKB[$sys,$key]+="${R_DISK_KB:-0} "
				log "$label rep $i/$REPS  pg    $R_TIME ms  temp_bytes $(human_bytes "$R_TEMP_BYTES")${R_DISK_KB:+ (Disk: ${R_DISK_KB}kB)}"
			else
				DEVW[$sys,$key]+="$R_DEV_W "
				DEVR[$sys,$key]+="$R_DEV_R "
				NRUNS[$sys,$key]+="$R_RUNS "
				NPASSES[$sys,$key]+="$R_PASSES "
				log "$label rep $i/$REPS  braid $R_TIME ms  device written $(human_bytes "$R_DEV_W"), runs $R_RUNS, merge passes $R_PASSES"
			fi
		done
	done
	# shellcheck disable=SC2086
	{
		MEDIAN[pg,$key]=$(median ${TIMES[pg,$key]})
		MEDIAN[braid,$key]=$(median ${TIMES[braid,$key]})
		MED_BYTES[pg,$key]=$(median_int ${TEMPB[pg,$key]})
		MED_BYTES[braid,$key]=$(median_int ${DEVW[braid,$key]})
		MED_DISKKB[pg,$key]=$(median_int ${DISKKB[pg,$key]})
		MED_DEVR[braid,$key]=$(median_int ${DEVR[braid,$key]})
		RUNS_SUM[$key]=$(same_or_range ${NRUNS[braid,$key]})
		PASSES_SUM[$key]=$(same_or_range ${NPASSES[braid,$key]})
	}
	if [[ "$(same_or_range ${TEMPB[braid,$key]})" != 0 ]]; then
		WARNINGS+=("$label: braidsort's runs created PostgreSQL temp files too (temp_bytes deltas: ${TEMPB[braid,$key]% })")
		echo "run.sh: WARNING: ${WARNINGS[-1]}" >&2
	fi
}

# write reduction pg/braid, or why there is none
write_ratio() {
	if [[ "$2" == 0 ]]; then echo "n/a (braid wrote 0)"; else echo "$(ratio "$1" "$2")x"; fi
}

# common parts of the spill and sweep results files
results_preamble() {	# results_preamble TITLE
	echo "# $1 — $(date '+%Y-%m-%d %H:%M:%S %Z')"
	echo
	echo "Query: \`$QUERY\`, rows discarded in the server via"
	echo "\`EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF)\`; time = its \"Execution Time\"."
	echo "PostgreSQL: \`$SET_PG\`  braidsort: \`$SET_BRAID\`"
	echo "Both spill to tablespace braid_dax on the tmpfs (\`temp_tablespaces = 'braid_dax'\`,"
	echo "\`braidsort.spill_tablespace = 'braid_dax'\`)."
	echo
	echo "Bytes written to the spill device: for braidsort its EXPLAIN ANALYZE \`Device Bytes Written\`"
	echo "(all runs, intermediate merge runs included); for PostgreSQL the run's"
	echo "\`pg_stat_database.temp_bytes\` delta (the size of its temp files when they were deleted) and the"
	echo "Sort's \`Disk: NkB\`. Neither counts PostgreSQL's rewrites of reused temp-file blocks in"
	echo "multi-pass merges; the warm-up's \`Buffers: temp written\` does (shown in the details)."
	echo "braidsort's spill files are not PostgreSQL temp files, so its runs add nothing to temp_bytes."
	echo
	echo "## Command"
	echo
	echo '```'
	echo "${ENV_GIVEN}bash $ORIG_CMDLINE"
	echo '```'
	echo
	echo "Effective settings: MODE=$MODE BENCH_PORT=$BENCH_PORT ROWS=$ROWS $( [[ $MODE == sweep ]] && echo "PAYLOADS=\"${PAYLOAD_LIST[*]}\"" || echo "PAYLOAD=$PAYLOAD") REPS=$REPS WORK_MEM=$WORK_MEM"
	echo "SB_LARGE=$SB_LARGE SB_SMALL=$SB_SMALL CONFIGS=\"${CONFIGS[*]}\" TMPFS_SIZE=$TMPFS_SIZE TABLE_TABLESPACE=$TABLE_TABLESPACE quick=$QUICK"
	echo
	echo "Sizing: $SIZE_NOTE"
	echo
	machine_md
}
server_settings_md() {
	echo "Server settings added to postgresql.conf (shared_buffers given on the command line):"
	echo
	echo '```'
	echo "$SERVER_CONFIG"
	echo '```'
}
capture_md() {	# capture_md HEADING PLAN
	echo
	echo "### $1"
	echo
	echo '```'
	echo "$2"
	echo '```'
}

# ----------------------------------------------------------------------------
# spill mode
# ----------------------------------------------------------------------------
declare -A U_PLAN_CFG U_WHY_CFG
run_spill() {
	local first=1 cfg sb i sys w
	local -a t_pg t_br b_pg d_pg b_br r_br n_br p_br
	for cfg in "${CONFIGS[@]}"; do
		sb=${CFG_SB[$cfg]}
		if (( first )); then
			first=0
			stop_server		# every configuration starts from a fresh server
		fi
		start_server "$sb"
		[[ "$(sql bench -c 'SHOW shared_buffers')" == "$sb" ]] || log "note: SHOW shared_buffers = $(sql bench -c 'SHOW shared_buffers')"
		BLOCK_SIZE=$(sql bench -c 'SHOW block_size')
		warm_table
		explain_unforced
		U_PLAN_CFG[$cfg]=$U_PLAN
		U_WHY_CFG[$cfg]=$U_WHY
		measure "$cfg" "config $cfg (shared_buffers=$sb, work_mem=$WORK_MEM)"
		stop_server
	done

	echo
	echo "==== braidsort spill (MergePass) benchmark: SELECT * FROM sortbench ORDER BY k ===="
	echo "rows=$ROWS ($TBL_SIZE_PRETTY) payload=${PAYLOAD}B work_mem=$WORK_MEM reps=$REPS  spill device: braid_dax ($DAX_NOTE)"
	echo
	printf '%-6s %-9s %12s %12s %8s %14s %14s %9s %6s %7s\n' config shared_b "pg med. ms" "braid med.ms" "pg/braid" \
		"pg written" "braid written" "pg/braid" runs passes
	for cfg in "${CONFIGS[@]}"; do
		printf '%-6s %-9s %12s %12s %7sx %14s %14s %9s %6s %7s\n' "$cfg" "${CFG_SB[$cfg]}" \
			"${MEDIAN[pg,$cfg]}" "${MEDIAN[braid,$cfg]}" "$(ratio "${MEDIAN[pg,$cfg]}" "${MEDIAN[braid,$cfg]}")" \
			"$(human_bytes "${MED_BYTES[pg,$cfg]}")" "$(human_bytes "${MED_BYTES[braid,$cfg]}")" \
			"$(write_ratio "${MED_BYTES[pg,$cfg]}" "${MED_BYTES[braid,$cfg]}")" "${RUNS_SUM[$cfg]}" "${PASSES_SUM[$cfg]}"
	done
	echo "(pg written = median pg_stat_database.temp_bytes delta; braid written = median Device Bytes Written)"
	echo
	for cfg in "${CONFIGS[@]}"; do
		echo "config $cfg  pg sort:    ${CAP_METHOD[pg,$cfg]}"
		echo "config $cfg  braidsort:  ${CAP_METHOD[braid,$cfg]}  (force = off would pick: $(grep -q 'BraidSort' <<<"${U_PLAN_CFG[$cfg]}" && echo BraidSort || echo "PostgreSQL's Sort${U_WHY_CFG[$cfg]:+ -- ${U_WHY_CFG[$cfg]}}"))"
	done
	for w in "${WARNINGS[@]+"${WARNINGS[@]}"}"; do echo "WARNING: $w"; done

	collect_machine_info
	{
		results_preamble "braidsort spill (MergePass) benchmark"
		echo
		echo "## Data"
		echo
		echo "sortbench: $TBL_ROWS rows, heap $TBL_SIZE_PRETTY ($TBL_BYTES bytes) in tablespace $TABLE_TABLESPACE;"
		echo "k length min/max $KLEN bytes, v length min/max $VLEN bytes. Warmed with count(*)$( (( HAVE_PREWARM )) && echo " and pg_prewarm") after each restart."
		for w in "${WARNINGS[@]+"${WARNINGS[@]}"}"; do echo; echo "**WARNING:** $w"; done
		echo
		server_settings_md
		echo
		echo "## Results (medians of $REPS runs)"
		echo
		echo "| config | shared_buffers | work_mem | PostgreSQL median (ms) | braidsort median (ms) | speed-up pg/braid | PostgreSQL bytes written (temp_bytes) | braidsort bytes written (Device Bytes Written) | write reduction pg/braid | braid Runs | braid Merge Passes |"
		echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
		for cfg in "${CONFIGS[@]}"; do
			echo "| $cfg: ${CFG_DESC[$cfg]} | ${CFG_SB[$cfg]} | $WORK_MEM | ${MEDIAN[pg,$cfg]} | ${MEDIAN[braid,$cfg]} | $(ratio "${MEDIAN[pg,$cfg]}" "${MEDIAN[braid,$cfg]}")x | $(bytes_cell "${MED_BYTES[pg,$cfg]}") | $(bytes_cell "${MED_BYTES[braid,$cfg]}") | $(write_ratio "${MED_BYTES[pg,$cfg]}" "${MED_BYTES[braid,$cfg]}") | ${RUNS_SUM[$cfg]} | ${PASSES_SUM[$cfg]} |"
		done
		echo
		echo "Spill details (medians of the timed runs; \"Buffers: temp written\" from the warm-up run):"
		echo
		echo "| config | system | sort method | temp_bytes | temp files | EXPLAIN Disk | Buffers: temp written | Device Bytes Written | Device Bytes Read |"
		echo "|---|---|---|---:|---:|---:|---:|---:|---:|"
		for cfg in "${CONFIGS[@]}"; do
			# shellcheck disable=SC2086
			echo "| $cfg | pg | ${CAP_METHOD[pg,$cfg]} | $(bytes_cell "${MED_BYTES[pg,$cfg]}") | $(same_or_range ${TEMPF[pg,$cfg]}) | ${MED_DISKKB[pg,$cfg]} kB | $(bytes_cell "${CAP_TEMPW[pg,$cfg]}") | | |"
			# shellcheck disable=SC2086
			echo "| $cfg | braid | ${CAP_METHOD[braid,$cfg]} | $(bytes_cell "$(median_int ${TEMPB[braid,$cfg]})") | $(same_or_range ${TEMPF[braid,$cfg]}) | | $(bytes_cell "${CAP_TEMPW[braid,$cfg]}") | $(bytes_cell "${MED_BYTES[braid,$cfg]}") | $(bytes_cell "${MED_DEVR[braid,$cfg]}") |"
		done
		echo
		echo "## Individual runs (in execution order; runs alternate pg, braid)"
		echo
		echo "| config | rep | pg (ms) | pg temp_bytes | pg Disk (kB) | braid (ms) | braid Device Bytes Written | braid Device Bytes Read | Runs | Merge Passes |"
		echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		for cfg in "${CONFIGS[@]}"; do
			read -r -a t_pg <<<"${TIMES[pg,$cfg]}"
			read -r -a b_pg <<<"${TEMPB[pg,$cfg]}"
			read -r -a d_pg <<<"${DISKKB[pg,$cfg]}"
			read -r -a t_br <<<"${TIMES[braid,$cfg]}"
			read -r -a b_br <<<"${DEVW[braid,$cfg]}"
			read -r -a r_br <<<"${DEVR[braid,$cfg]}"
			read -r -a n_br <<<"${NRUNS[braid,$cfg]}"
			read -r -a p_br <<<"${NPASSES[braid,$cfg]}"
			for (( i = 0; i < REPS; i++ )); do
				echo "| $cfg | $(( i + 1 )) | ${t_pg[i]} | ${b_pg[i]} | ${d_pg[i]} | ${t_br[i]} | ${b_br[i]} | ${r_br[i]} | ${n_br[i]} | ${p_br[i]} |"
			done
			# shellcheck disable=SC2086
			echo "| $cfg | **median** | **${MEDIAN[pg,$cfg]}** | ${MED_BYTES[pg,$cfg]} | ${MED_DISKKB[pg,$cfg]} | **${MEDIAN[braid,$cfg]}** | ${MED_BYTES[braid,$cfg]} | ${MED_DEVR[braid,$cfg]} | ${RUNS_SUM[$cfg]} | ${PASSES_SUM[$cfg]} |"
		done
		echo
		echo "## Captured EXPLAIN (ANALYZE, BUFFERS) outputs (the untimed warm-up runs)"
		for cfg in "${CONFIGS[@]}"; do
			capture_md "Config $cfg (shared_buffers=${CFG_SB[$cfg]}), PostgreSQL (braidsort.enable = off)" "${CAP_PLAN[pg,$cfg]}"
			capture_md "Config $cfg (shared_buffers=${CFG_SB[$cfg]}), braidsort (enable = on, force = on)" "${CAP_PLAN[braid,$cfg]}"
			echo
			echo "Plan with braidsort.enable = on and braidsort.force = off (cost model's own choice), config $cfg${U_WHY_CFG[$cfg]:+; braidsort declined: \"${U_WHY_CFG[$cfg]}\"}:"
			echo
			echo '```'
			echo "${U_PLAN_CFG[$cfg]}"
			echo '```'
		done
	} >"$REPORT"
}

# ----------------------------------------------------------------------------
# sweep mode
# ----------------------------------------------------------------------------
declare -A P_SIZE P_BYTES UNF_NODE UNF_WHY UNF_TIME UNF_PLAN UNF_METHOD
run_sweep() {
	local p key sys i w
	local -a t_pg t_br b_pg b_br n_br p_br
	# the server started above runs with SB_LARGE (config A) throughout
	[[ "$(sql bench -c 'SHOW shared_buffers')" == "$SB_LARGE" ]] || log "note: SHOW shared_buffers = $(sql bench -c 'SHOW shared_buffers')"
	BLOCK_SIZE=$(sql bench -c 'SHOW block_size')
	for p in "${PAYLOAD_LIST[@]}"; do
		key=$p
		load_table "$p" "payload ${p}B"
		P_SIZE[$key]=$TBL_SIZE_PRETTY
		P_BYTES[$key]=$TBL_BYTES
		warm_table
		measure "$key" "payload ${p}B"
		if ! grep -q 'braid mergepass' <<<"${CAP_METHOD[braid,$key]}"; then
			WARNINGS+=("payload ${p}B: braidsort did not spill (${CAP_METHOD[braid,$key]}): its IndexMap fit in work_mem=$WORK_MEM, so it wrote nothing to the device; raise ROWS for a MergePass comparison")
			echo "run.sh: WARNING: ${WARNINGS[-1]}" >&2
		fi
		log "payload ${p}B: one run with braidsort.force = off"
		bench_run unforced timed
		UNF_NODE[$key]=$R_NODE
		UNF_WHY[$key]=$R_WHY
		UNF_TIME[$key]=$R_TIME
		UNF_PLAN[$key]=$R_PLAN
		UNF_METHOD[$key]=$R_METHOD
		log "payload ${p}B force = off: planner chose $R_NODE (${R_METHOD:-?}), $R_TIME ms${R_WHY:+; braidsort declined: $R_WHY}"
	done
	stop_server

	echo
	echo "==== braidsort value-size sweep: SELECT * FROM sortbench ORDER BY k ===="
	echo "rows=$ROWS payloads=${PAYLOAD_LIST[*]} work_mem=$WORK_MEM shared_buffers=$SB_LARGE reps=$REPS  spill device: braid_dax"
	echo
	printf '%8s %9s %12s %12s %8s %13s %13s %9s %11s  %s\n' payload table "pg med. ms" "braid med.ms" "pg/braid" \
		"pg written" "braid written" "pg/braid" "runs/passes" "force = off"
	for p in "${PAYLOAD_LIST[@]}"; do
		printf '%7sB %9s %12s %12s %7sx %13s %13s %9s %11s  %s\n' "$p" "${P_SIZE[$p]}" \
			"${MEDIAN[pg,$p]}" "${MEDIAN[braid,$p]}" "$(ratio "${MEDIAN[pg,$p]}" "${MEDIAN[braid,$p]}")" \
			"$(human_bytes "${MED_BYTES[pg,$p]}")" "$(human_bytes "${MED_BYTES[braid,$p]}")" \
			"$(write_ratio "${MED_BYTES[pg,$p]}" "${MED_BYTES[braid,$p]}")" "${RUNS_SUM[$p]}/${PASSES_SUM[$p]}" \
			"${UNF_NODE[$p]}${UNF_WHY[$p]:+ ($(cut -c1-60 <<<"${UNF_WHY[$p]}"))}"
	done
	echo "(pg written = median pg_stat_database.temp_bytes delta; braid written = median Device Bytes Written)"
	for w in "${WARNINGS[@]+"${WARNINGS[@]}"}"; do echo "WARNING: $w"; done

	collect_machine_info
	{
		results_preamble "braidsort value-size sweep"
		echo
		echo "## Data"
		echo
		echo "sortbench: $ROWS rows with a 10-byte random key and a PAYLOAD-byte value, reloaded for each payload"
		echo "into tablespace $TABLE_TABLESPACE, then warmed with count(*)$( (( HAVE_PREWARM )) && echo " and pg_prewarm"); one server, shared_buffers = $SB_LARGE (config A)."
		for w in "${WARNINGS[@]+"${WARNINGS[@]}"}"; do echo; echo "**WARNING:** $w"; done
		echo
		server_settings_md
		echo
		echo "## Results (medians of $REPS runs)"
		echo
		echo "| payload | table | PostgreSQL median (ms) | braidsort median (ms) | speed-up pg/braid | PostgreSQL bytes written (temp_bytes) | braidsort bytes written (Device Bytes Written) | write reduction pg/braid | braid Runs / Merge Passes | planner with force = off | force = off run (ms) |"
		echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"
		for p in "${PAYLOAD_LIST[@]}"; do
			echo "| ${p} B | ${P_SIZE[$p]} | ${MEDIAN[pg,$p]} | ${MEDIAN[braid,$p]} | $(ratio "${MEDIAN[pg,$p]}" "${MEDIAN[braid,$p]}")x | $(bytes_cell "${MED_BYTES[pg,$p]}") | $(bytes_cell "${MED_BYTES[braid,$p]}") | $(write_ratio "${MED_BYTES[pg,$p]}" "${MED_BYTES[braid,$p]}") | ${RUNS_SUM[$p]} / ${PASSES_SUM[$p]} | $( [[ ${UNF_NODE[$p]} == BraidSort ]] && echo "BraidSort (${UNF_METHOD[$p]#Sort Method: })" || echo "PostgreSQL's ${UNF_NODE[$p]}${UNF_WHY[$p]:+: braidsort declined, \"${UNF_WHY[$p]}\"}") | ${UNF_TIME[$p]} |"
		done
		echo
		echo "Sort methods and spill details (medians of the timed runs; \"Buffers: temp written\" from the warm-up run):"
		echo
		echo "| payload | PostgreSQL sort method | EXPLAIN Disk | Buffers: temp written | braidsort sort method | Device Bytes Read |"
		echo "|---:|---|---:|---:|---|---:|"
		for p in "${PAYLOAD_LIST[@]}"; do
			echo "| ${p} B | ${CAP_METHOD[pg,$p]} | ${MED_DISKKB[pg,$p]} kB | $(bytes_cell "${CAP_TEMPW[pg,$p]}") | ${CAP_METHOD[braid,$p]} | $(bytes_cell "${MED_DEVR[braid,$p]}") |"
		done
		echo
		echo "## Individual runs (in execution order; runs alternate pg, braid)"
		echo
		echo "| payload | rep | pg (ms) | pg temp_bytes | braid (ms) | braid Device Bytes Written | Runs | Merge Passes |"
		echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
		for p in "${PAYLOAD_LIST[@]}"; do
			read -r -a t_pg <<<"${TIMES[pg,$p]}"
			read -r -a b_pg <<<"${TEMPB[pg,$p]}"
			read -r -a t_br <<<"${TIMES[braid,$p]}"
			read -r -a b_br <<<"${DEVW[braid,$p]}"
			read -r -a n_br <<<"${NRUNS[braid,$p]}"
			read -r -a p_br <<<"${NPASSES[braid,$p]}"
			for (( i = 0; i < REPS; i++ )); do
				echo "| ${p} B | $(( i + 1 )) | ${t_pg[i]} | ${b_pg[i]} | ${t_br[i]} | ${b_br[i]} | ${n_br[i]} | ${p_br[i]} |"
			done
			echo "| ${p} B | **median** | **${MEDIAN[pg,$p]}** | ${MED_BYTES[pg,$p]} | **${MEDIAN[braid,$p]}** | ${MED_BYTES[braid,$p]} | ${RUNS_SUM[$p]} | ${PASSES_SUM[$p]} |"
		done
		echo
		echo "## Captured EXPLAIN ANALYZE outputs"
		for p in "${PAYLOAD_LIST[@]}"; do
			capture_md "Payload ${p} B, PostgreSQL (braidsort.enable = off), EXPLAIN (ANALYZE, BUFFERS) warm-up" "${CAP_PLAN[pg,$p]}"
			capture_md "Payload ${p} B, braidsort (enable = on, force = on), EXPLAIN (ANALYZE, BUFFERS) warm-up" "${CAP_PLAN[braid,$p]}"
			capture_md "Payload ${p} B, braidsort.force = off (the planner's choice${UNF_WHY[$p]:+; braidsort declined: \"${UNF_WHY[$p]}\"}), EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF)" "${UNF_PLAN[$p]}"
		done
	} >"$REPORT"
}

# ----------------------------------------------------------------------------
# helpers of the threads and concurrency modes
# ----------------------------------------------------------------------------
# plan_ms NAME PLAN: the number of the first "NAME: N ms" line of a plan
plan_ms() {
	sed -n "s/^ *$1: \([0-9][0-9.]*\) ms\$/\1/p" <<<"$2" | head -n1
}

# set_sighup GUC VALUE: a server-wide (PGC_SIGHUP) parameter: ALTER SYSTEM SET
# and pg_reload_conf(), then wait until SHOW in a new session reports VALUE
# (the postmaster rereads the configuration asynchronously)
set_sighup() {
	local guc=$1 val=$2 i cur=""
	sql bench -c "ALTER SYSTEM SET $guc = '$val'" -c "SELECT pg_reload_conf()" >/dev/null
	for (( i = 0; i < 100; i++ )); do
		cur=$(sql bench -c "SHOW $guc")
		[[ "$cur" == "$val" ]] && return 0
		sleep 0.1
	done
	die "$guc: a new session's SHOW says '$cur' 10s after ALTER SYSTEM SET $guc = '$val' and pg_reload_conf()"
}
reset_sighup() {
	sql bench -c "ALTER SYSTEM RESET $1" -c "SELECT pg_reload_conf()" >/dev/null
}

# the installed braidsort.so must not change under a run (another make install)
check_so_unchanged() {
	local now
	now=$(sha256sum "$PKGLIBDIR/braidsort.so" | cut -c1-16)
	if [[ "$now" != "$SO_SHA_START" ]]; then
		WARNINGS+=("the installed braidsort.so changed during the run ($SO_SHA_START… at the start, $now… at the end, another make install): the server ran the library it preloaded at its start (the hash under Machine is that one); the build may also have taken CPU time from the run")
		echo "run.sh: WARNING: ${WARNINGS[-1]}" >&2
	fi
}

create_braidsort_extension() {
	sql bench -c "CREATE EXTENSION IF NOT EXISTS braidsort" >/dev/null
	EXT_VERSION=$(sql bench -c "SELECT extversion FROM pg_extension WHERE extname = 'braidsort'")
	log "CREATE EXTENSION braidsort (version $EXT_VERSION)"
}

# float_cell VALUE: a number with 3 decimals, or empty
f3() { [[ -z "$1" ]] || awk -v x="$1" 'BEGIN { printf "%.3f\n", x }'; }

# ----------------------------------------------------------------------------
# threads mode
# ----------------------------------------------------------------------------
set_threads_sort() {	# set_threads_sort N
	echo "SET work_mem = '$THREADS_SORT_WORK_MEM'; SET braidsort.enable = on; SET braidsort.force = on; SET braidsort.sort_threads = $1;"
}
set_threads_write() {	# set_threads_write EMULATE_WRITE_NS
	echo "SET work_mem = '$THREADS_SPILL_WORK_MEM'; SET braidsort.enable = on; SET braidsort.force = on; SET braidsort.spill_tablespace = 'braid_dax'; SET braidsort.emulate_write_ns = $1;"
}

# threads_run PHASE N NS KIND: one braidsort run in its own session
#   PHASE sort   OnePass, braidsort.sort_threads = N (checked: "Sort Threads: N")
#         write  MergePass, braidsort.write_threads = N (set server-wide before;
#                checked in this session), braidsort.emulate_write_ns = NS
#   KIND  timed   EXPLAIN (ANALYZE, COSTS OFF): braidsort shows its Build /
#                 Sort / Merge / Gather Time only with TIMING on
#         total   EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF): Execution Time
#                 without EXPLAIN's per-row timing overhead; no phase times
#         capture EXPLAIN (ANALYZE, BUFFERS), the untimed warm-up, kept
# Sets T_PLAN T_EXEC T_BUILD T_SORT T_MERGE T_GATHER T_THREADS T_DEVW T_DEVR
# T_RUNS T_PASSES T_METHOD T_WT (write_threads seen by the session) T_CAP
# (braidsort.scheduler's write_thread_cap for braid_dax after the run)
threads_run() {
	local phase=$1 n=$2 ns=$3 kind=$4 set explain out want
	if [[ $phase == sort ]]; then set=$(set_threads_sort "$n"); want="braid onepass"
	else set=$(set_threads_write "$ns"); want="braid mergepass"; fi
	case $kind in
		capture) explain="EXPLAIN (ANALYZE, BUFFERS)" ;;
		timed) explain="EXPLAIN (ANALYZE, COSTS OFF)" ;;
		total) explain="EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF)" ;;
		*) die "threads_run: unknown kind '$kind'" ;;
	esac
	out=$(sql bench -c "SELECT 'WRITE_THREADS ' || current_setting('braidsort.write_threads')" \
		-c "$set" -c "$explain $QUERY")
	T_WT=$(sed -n 's/^WRITE_THREADS //p' <<<"$out")
	T_PLAN=$(grep -v '^WRITE_THREADS ' <<<"$out" | sed '/^$/d')
	check_plan braid "$T_PLAN"
	T_METHOD=$(sed -n 's/^ *Sort Method: //p' <<<"$T_PLAN" | head -n1)
	[[ "$T_METHOD" == "$want" ]] || { echo "$T_PLAN" >&2
		if [[ $phase == sort ]]; then die "sort phase: braidsort did not sort in one pass ('$T_METHOD'); raise THREADS_SORT_WORK_MEM"
		else die "write phase: braidsort did not spill ('$T_METHOD'); raise ROWS or lower THREADS_SPILL_WORK_MEM"; fi; }
	T_EXEC=$(sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' <<<"$T_PLAN")
	T_BUILD=$(plan_ms 'Build Time' "$T_PLAN")
	T_SORT=$(plan_ms 'Sort Time' "$T_PLAN")
	T_MERGE=$(plan_ms 'Merge Time' "$T_PLAN")
	T_GATHER=$(plan_ms 'Gather Time' "$T_PLAN")
	T_THREADS=$(plan_int 'Sort Threads' "$T_PLAN")
	T_DEVW=$(plan_int 'Device Bytes Written' "$T_PLAN")
	T_DEVR=$(plan_int 'Device Bytes Read' "$T_PLAN")
	T_RUNS=$(plan_int 'Runs' "$T_PLAN")
	T_PASSES=$(plan_int 'Merge Passes' "$T_PLAN")
	[[ -n "$T_EXEC" && -n "$T_THREADS" && -n "$T_DEVW" ]] ||
		{ echo "$T_PLAN" >&2; die "could not parse Execution Time, Sort Threads or Device Bytes Written"; }
	[[ $kind == total || ( -n "$T_BUILD" && -n "$T_SORT" && -n "$T_MERGE" && -n "$T_GATHER" ) ]] ||
		{ echo "$T_PLAN" >&2; die "could not parse Build / Sort / Merge / Gather Time"; }
	if [[ $phase == sort ]]; then
		[[ "$T_THREADS" == "$n" ]] || { echo "$T_PLAN" >&2; die "braidsort.sort_threads = $n, but EXPLAIN says 'Sort Threads: $T_THREADS'"; }
	else
		[[ "$T_WT" == "$n" ]] || die "braidsort.write_threads = $n was set, but the run's session sees '$T_WT'"
	fi
	T_CAP=$(sql bench -c "SELECT write_thread_cap FROM braidsort.scheduler WHERE tablespace = 'braid_dax'" | head -n1)
}

THREAD_COUNTS=(1 2)
declare -A TH_EXEC TH_BUILD TH_SORT TH_MERGE TH_GATHER TH_THREADS TH_DEVW TH_DEVR TH_RUNS TH_PASSES TH_CAP
declare -A TH_CAPTURE TH_MED TH_TOTAL
# record_threads_run KEY: append this run's values to the per-KEY lists
record_threads_run() {
	local k=$1
	TH_EXEC[$k]+="$T_EXEC " TH_BUILD[$k]+="$T_BUILD " TH_SORT[$k]+="$T_SORT "
	TH_MERGE[$k]+="$T_MERGE " TH_GATHER[$k]+="$T_GATHER " TH_THREADS[$k]+="$T_THREADS "
	TH_DEVW[$k]+="$T_DEVW " TH_DEVR[$k]+="$T_DEVR " TH_RUNS[$k]+="$T_RUNS " TH_PASSES[$k]+="$T_PASSES "
	TH_CAP[$k]+="${T_CAP:--} "
}
# median_threads KEY: medians of KEY's lists into TH_MED[KEY,field]
median_threads() {
	local k=$1
	# shellcheck disable=SC2086
	{
		TH_MED[$k,exec]=$(median ${TH_EXEC[$k]})
		TH_MED[$k,total]=$(median ${TH_TOTAL[$k]})
		TH_MED[$k,build]=$(median ${TH_BUILD[$k]})
		TH_MED[$k,sort]=$(median ${TH_SORT[$k]})
		TH_MED[$k,merge]=$(median ${TH_MERGE[$k]})
		TH_MED[$k,gather]=$(median ${TH_GATHER[$k]})
		TH_MED[$k,devw]=$(median_int ${TH_DEVW[$k]})
		TH_MED[$k,devr]=$(median_int ${TH_DEVR[$k]})
		TH_MED[$k,threads]=$(same_or_range ${TH_THREADS[$k]})
		TH_MED[$k,runs]=$(same_or_range ${TH_RUNS[$k]})
		TH_MED[$k,passes]=$(same_or_range ${TH_PASSES[$k]})
		TH_MED[$k,cap]=$(printf '%s\n' ${TH_CAP[$k]} | sort -u | paste -sd/ -)
	}
}
# threads_runs_md KEY...: the individual runs of the keys, in execution order
threads_runs_md() {
	local k i
	local -a ex bu so me ga th dw ru pa ca to
	echo "| run | rep | Sort Threads | Build Time (ms) | Sort Time (ms) | Merge Time (ms) | Gather Time (ms) | Execution Time (ms) | Execution Time, TIMING OFF run (ms) | Device Bytes Written | Runs | Merge Passes | write_thread_cap |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for (( i = 0; i < REPS; i++ )); do
		for k in "$@"; do
			read -r -a ex <<<"${TH_EXEC[$k]}"; read -r -a bu <<<"${TH_BUILD[$k]}"
			read -r -a so <<<"${TH_SORT[$k]}"; read -r -a me <<<"${TH_MERGE[$k]}"
			read -r -a ga <<<"${TH_GATHER[$k]}"; read -r -a th <<<"${TH_THREADS[$k]}"
			read -r -a dw <<<"${TH_DEVW[$k]}"; read -r -a ru <<<"${TH_RUNS[$k]}"
			read -r -a pa <<<"${TH_PASSES[$k]}"; read -r -a ca <<<"${TH_CAP[$k]}"
			read -r -a to <<<"${TH_TOTAL[$k]}"
			echo "| ${TH_LABEL[$k]} | $(( i + 1 )) | ${th[i]} | ${bu[i]} | ${so[i]} | ${me[i]} | ${ga[i]} | ${ex[i]} | ${to[i]} | ${dw[i]} | ${ru[i]} | ${pa[i]} | ${ca[i]} |"
		done
	done
	for k in "$@"; do
		echo "| ${TH_LABEL[$k]} | **median** | ${TH_MED[$k,threads]} | **${TH_MED[$k,build]}** | **${TH_MED[$k,sort]}** | **${TH_MED[$k,merge]}** | **${TH_MED[$k,gather]}** | **${TH_MED[$k,exec]}** | **${TH_MED[$k,total]}** | ${TH_MED[$k,devw]} | ${TH_MED[$k,runs]} | ${TH_MED[$k,passes]} | ${TH_MED[$k,cap]} |"
	done
}
declare -A TH_LABEL

run_threads() {
	local n ns i k
	[[ "$(sql bench -c 'SHOW shared_buffers')" == "$SB_LARGE" ]] || log "note: SHOW shared_buffers = $(sql bench -c 'SHOW shared_buffers')"
	create_braidsort_extension
	warm_table
	TH_NCPU=$(sql bench -c "SHOW braidsort.sort_threads")
	TH_WT_DEFAULT=$(sql bench -c "SHOW braidsort.write_threads")

	# ---- sort phase: OnePass, sort_threads 1 vs 2 ----
	log "sort phase (OnePass, work_mem=$THREADS_SORT_WORK_MEM): warm-up / capture runs"
	for n in "${THREAD_COUNTS[@]}"; do
		k=sort,$n
		TH_LABEL[$k]="sort_threads=$n"
		threads_run sort "$n" 0 capture
		TH_CAPTURE[$k]=$T_PLAN
		TH_EXEC[$k]="" TH_BUILD[$k]="" TH_SORT[$k]="" TH_MERGE[$k]="" TH_GATHER[$k]="" TH_THREADS[$k]="" TH_TOTAL[$k]=""
		TH_DEVW[$k]="" TH_DEVR[$k]="" TH_RUNS[$k]="" TH_PASSES[$k]="" TH_CAP[$k]=""
		log "  sort_threads=$n: $T_METHOD, Sort Threads $T_THREADS, Sort Time $T_SORT ms, total $T_EXEC ms"
	done
	for (( i = 1; i <= REPS; i++ )); do
		for n in "${THREAD_COUNTS[@]}"; do
			threads_run sort "$n" 0 timed
			record_threads_run "sort,$n"
			log "sort phase rep $i/$REPS  sort_threads=$n  build $T_BUILD  sort $T_SORT  gather $T_GATHER  total $T_EXEC ms"
		done
		for n in "${THREAD_COUNTS[@]}"; do
			threads_run sort "$n" 0 total
			TH_TOTAL[sort,$n]+="$T_EXEC "
			log "sort phase rep $i/$REPS  sort_threads=$n  TIMING OFF total $T_EXEC ms"
		done
	done
	for n in "${THREAD_COUNTS[@]}"; do median_threads "sort,$n"; done

	# ---- write phase: MergePass, write_threads 1 vs 2, per emulate_write_ns ----
	for ns in "${WRITE_NS_LIST[@]}"; do
		log "write phase (MergePass, work_mem=$THREADS_SPILL_WORK_MEM, emulate_write_ns=$ns): warm-up / capture runs"
		for n in "${THREAD_COUNTS[@]}"; do
			k=write,$ns,$n
			TH_LABEL[$k]="ns=$ns write_threads=$n"
			set_sighup braidsort.write_threads "$n"
			threads_run write "$n" "$ns" capture
			TH_CAPTURE[$k]=$T_PLAN
			TH_EXEC[$k]="" TH_BUILD[$k]="" TH_SORT[$k]="" TH_MERGE[$k]="" TH_GATHER[$k]="" TH_THREADS[$k]="" TH_TOTAL[$k]=""
			TH_DEVW[$k]="" TH_DEVR[$k]="" TH_RUNS[$k]="" TH_PASSES[$k]="" TH_CAP[$k]=""
			log "  write_threads=$n: $T_METHOD, runs $T_RUNS, device written $(human_bytes "$T_DEVW"), total $T_EXEC ms"
		done
		for (( i = 1; i <= REPS; i++ )); do
			for n in "${THREAD_COUNTS[@]}"; do
				set_sighup braidsort.write_threads "$n"
				threads_run write "$n" "$ns" timed
				record_threads_run "write,$ns,$n"
				log "write phase ns=$ns rep $i/$REPS  write_threads=$n  sort $T_SORT  merge $T_MERGE  total $T_EXEC ms  written $(human_bytes "$T_DEVW")"
			done
			for n in "${THREAD_COUNTS[@]}"; do
				set_sighup braidsort.write_threads "$n"
				threads_run write "$n" "$ns" total
				TH_TOTAL[write,$ns,$n]+="$T_EXEC "
				log "write phase ns=$ns rep $i/$REPS  write_threads=$n  TIMING OFF total $T_EXEC ms"
			done
		done
		for n in "${THREAD_COUNTS[@]}"; do median_threads "write,$ns,$n"; done
	done
	reset_sighup braidsort.write_threads
	stop_server
	check_so_unchanged

	local sort_ratio target
	sort_ratio=$(ratio "${TH_MED[sort,1,sort]}" "${TH_MED[sort,2,sort]}")
	if awk -v r="$sort_ratio" 'BEGIN { exit !(r >= 1.6) }'; then target="met"; else target="NOT met"; fi
	TH_TARGET="sort phase (Sort Time) speed-up with 2 threads: ${sort_ratio}x; target >= 1.6x: $target"

	echo
	echo "==== braidsort thread scaling: SELECT * FROM sortbench ORDER BY k ===="
	echo "rows=$ROWS ($TBL_SIZE_PRETTY) payload=${PAYLOAD}B reps=$REPS nproc=$(nproc)"
	echo
	echo "sort phase (OnePass, work_mem=$THREADS_SORT_WORK_MEM), medians in ms:"
	printf '%-14s %12s %12s %12s %12s %14s\n' sort_threads "Build" "Sort" "Gather" "Execution" "Exec TIMING OFF"
	for n in "${THREAD_COUNTS[@]}"; do
		printf '%-14s %12s %12s %12s %12s %14s\n' "$n" "${TH_MED[sort,$n,build]}" "${TH_MED[sort,$n,sort]}" "${TH_MED[sort,$n,gather]}" "${TH_MED[sort,$n,exec]}" "${TH_MED[sort,$n,total]}"
	done
	printf '%-14s %11sx %11sx %11sx %11sx %13sx\n' "ratio 1/2" "$(ratio "${TH_MED[sort,1,build]}" "${TH_MED[sort,2,build]}")" \
		"$sort_ratio" "$(ratio "${TH_MED[sort,1,gather]}" "${TH_MED[sort,2,gather]}")" "$(ratio "${TH_MED[sort,1,exec]}" "${TH_MED[sort,2,exec]}")" \
		"$(ratio "${TH_MED[sort,1,total]}" "${TH_MED[sort,2,total]}")"
	echo "$TH_TARGET"
	for ns in "${WRITE_NS_LIST[@]}"; do
		echo
		echo "write phase (MergePass, work_mem=$THREADS_SPILL_WORK_MEM, emulate_write_ns=$ns), medians:"
		printf '%-14s %12s %12s %12s %16s %16s\n' write_threads "Sort ms" "Merge ms" "Execution ms" "Exec TIMING OFF" "Device written"
		for n in "${THREAD_COUNTS[@]}"; do
			printf '%-14s %12s %12s %12s %16s %16s\n' "$n" "${TH_MED[write,$ns,$n,sort]}" "${TH_MED[write,$ns,$n,merge]}" "${TH_MED[write,$ns,$n,exec]}" \
				"${TH_MED[write,$ns,$n,total]}" "$(human_bytes "${TH_MED[write,$ns,$n,devw]}")"
		done
		printf '%-14s %11sx %11sx %11sx %15sx\n' "ratio 1/2" "$(ratio "${TH_MED[write,$ns,1,sort]}" "${TH_MED[write,$ns,2,sort]}")" \
			"$(ratio "${TH_MED[write,$ns,1,merge]}" "${TH_MED[write,$ns,2,merge]}")" "$(ratio "${TH_MED[write,$ns,1,exec]}" "${TH_MED[write,$ns,2,exec]}")" \
			"$(ratio "${TH_MED[write,$ns,1,total]}" "${TH_MED[write,$ns,2,total]}")"
	done
	for w in "${WARNINGS[@]+"${WARNINGS[@]}"}"; do echo "WARNING: $w"; done

	collect_machine_info
	SO_SHA=$SO_SHA_START	# the library the server preloaded (see check_so_unchanged)
	{
		echo "# braidsort thread scaling benchmark — $(date '+%Y-%m-%d %H:%M:%S %Z')"
		echo
		echo "Query: \`$QUERY\`, braidsort forced, rows discarded in the server via EXPLAIN ANALYZE."
		echo "Times are braidsort's EXPLAIN ANALYZE properties (\`Build Time\`, \`Sort Time\`, \`Merge Time\`,"
		echo "\`Gather Time\`) and the total \`Execution Time\`. braidsort prints its phase times only with"
		echo "TIMING on, so each repetition has two runs per thread count: one \`EXPLAIN (ANALYZE, COSTS OFF)\`"
		echo "(phase times and its Execution Time, which includes EXPLAIN's per-row timing overhead) and one"
		echo "\`EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF)\` (\"Execution Time, TIMING OFF\": the total without that"
		echo "overhead). Thread counts 1 and 2 alternate, $REPS repetitions, after one untimed warm-up of each"
		echo "(\`EXPLAIN (ANALYZE, BUFFERS)\`, kept below). The machine has $(nproc) CPUs."
		echo
		echo "* **Sort phase** (OnePass, every run checked: \`Sort Method: braid onepass\`):"
		echo "  \`$(set_threads_sort N)\` with N = 1, 2; every run's \`Sort Threads\` checked to equal N."
		echo "* **Write phase** (MergePass, every run checked: \`Sort Method: braid mergepass\`):"
		echo "  \`$(set_threads_write NS)\` with NS in ${WRITE_NS_LIST[*]};"
		echo "  \`braidsort.write_threads\` (PGC_SIGHUP) set to 1 resp. 2 before every run with"
		echo "  \`ALTER SYSTEM SET braidsort.write_threads = N; SELECT pg_reload_conf();\`, then checked with"
		echo "  \`SHOW\` in a new session and again in the session of the run. \`braidsort.sort_threads\` is left"
		echo "  at its default ($TH_NCPU = one per CPU). For a MergePass, \`Sort Time\` covers sorting and writing"
		echo "  the runs; \`braidsort.emulate_write_ns\` is a delay per 64-byte line written, paid by the writing thread."
		echo
		echo "## Command"
		echo
		echo '```'
		echo "${ENV_GIVEN}bash $ORIG_CMDLINE"
		echo '```'
		echo
		echo "Effective settings: MODE=$MODE BENCH_PORT=$BENCH_PORT ROWS=$ROWS PAYLOAD=$PAYLOAD REPS=$REPS"
		echo "THREADS_SORT_WORK_MEM=$THREADS_SORT_WORK_MEM THREADS_SPILL_WORK_MEM=$THREADS_SPILL_WORK_MEM THREADS_WRITE_NS=\"${WRITE_NS_LIST[*]}\""
		echo "SB_LARGE=$SB_LARGE TMPFS_SIZE=$TMPFS_SIZE TABLE_TABLESPACE=$TABLE_TABLESPACE quick=$QUICK"
		echo
		echo "Sizing: $SIZE_NOTE"
		echo
		machine_md
		echo "- braidsort extension version: $EXT_VERSION; defaults: braidsort.sort_threads = $TH_NCPU, braidsort.write_threads = $TH_WT_DEFAULT"
		echo
		echo "## Data"
		echo
		echo "sortbench: $TBL_ROWS rows, heap $TBL_SIZE_PRETTY ($TBL_BYTES bytes) in tablespace $TABLE_TABLESPACE;"
		echo "k length min/max $KLEN bytes, v length min/max $VLEN bytes. Warmed with count(*)$( (( HAVE_PREWARM )) && echo " and pg_prewarm"); one server, shared_buffers = $SB_LARGE."
		for w in "${WARNINGS[@]+"${WARNINGS[@]}"}"; do echo; echo "**WARNING:** $w"; done
		echo
		server_settings_md
		echo
		echo "## Results (medians of $REPS runs)"
		echo
		echo "### Sort phase: OnePass, work_mem $THREADS_SORT_WORK_MEM, braidsort.sort_threads = 1 vs 2"
		echo
		echo "| sort_threads | Sort Threads (EXPLAIN) | Build Time (ms) | Sort Time (ms) | Gather Time (ms) | Execution Time (ms) | Execution Time, TIMING OFF (ms) |"
		echo "|---:|---:|---:|---:|---:|---:|---:|"
		for n in "${THREAD_COUNTS[@]}"; do
			echo "| $n | ${TH_MED[sort,$n,threads]} | ${TH_MED[sort,$n,build]} | ${TH_MED[sort,$n,sort]} | ${TH_MED[sort,$n,gather]} | ${TH_MED[sort,$n,exec]} | ${TH_MED[sort,$n,total]} |"
		done
		echo "| **ratio time(1)/time(2)** | | $(ratio "${TH_MED[sort,1,build]}" "${TH_MED[sort,2,build]}")x | **${sort_ratio}x** | $(ratio "${TH_MED[sort,1,gather]}" "${TH_MED[sort,2,gather]}")x | $(ratio "${TH_MED[sort,1,exec]}" "${TH_MED[sort,2,exec]}")x | $(ratio "${TH_MED[sort,1,total]}" "${TH_MED[sort,2,total]}")x |"
		echo
		echo "Target: the sort phase at least 1.6x faster with 2 threads than with 1: **$target** (Sort Time ratio ${sort_ratio}x)."
		for ns in "${WRITE_NS_LIST[@]}"; do
			echo
			echo "### Write phase: MergePass, work_mem $THREADS_SPILL_WORK_MEM, braidsort.emulate_write_ns = $ns, braidsort.write_threads = 1 vs 2"
			echo
			echo "| write_threads | Sort Time (ms) | Merge Time (ms) | Build Time (ms) | Gather Time (ms) | Execution Time (ms) | Execution Time, TIMING OFF (ms) | Device Bytes Written | Runs | Merge Passes | Sort Threads |"
			echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
			for n in "${THREAD_COUNTS[@]}"; do
				k=write,$ns,$n
				echo "| $n | ${TH_MED[$k,sort]} | ${TH_MED[$k,merge]} | ${TH_MED[$k,build]} | ${TH_MED[$k,gather]} | ${TH_MED[$k,exec]} | ${TH_MED[$k,total]} | $(bytes_cell "${TH_MED[$k,devw]}") | ${TH_MED[$k,runs]} | ${TH_MED[$k,passes]} | ${TH_MED[$k,threads]} |"
			done
			echo "| **ratio time(1)/time(2)** | **$(ratio "${TH_MED[write,$ns,1,sort]}" "${TH_MED[write,$ns,2,sort]}")x** | $(ratio "${TH_MED[write,$ns,1,merge]}" "${TH_MED[write,$ns,2,merge]}")x | $(ratio "${TH_MED[write,$ns,1,build]}" "${TH_MED[write,$ns,2,build]}")x | $(ratio "${TH_MED[write,$ns,1,gather]}" "${TH_MED[write,$ns,2,gather]}")x | $(ratio "${TH_MED[write,$ns,1,exec]}" "${TH_MED[write,$ns,2,exec]}")x | $(ratio "${TH_MED[write,$ns,1,total]}" "${TH_MED[write,$ns,2,total]}")x | | | | |"
		done
		echo
		echo "## Individual runs (in execution order; thread counts alternate)"
		echo
		echo "### Sort phase"
		echo
		threads_runs_md sort,1 sort,2
		for ns in "${WRITE_NS_LIST[@]}"; do
			echo
			echo "### Write phase, emulate_write_ns = $ns"
			echo
			threads_runs_md "write,$ns,1" "write,$ns,2"
		done
		echo
		echo "write_thread_cap: \`braidsort.scheduler.write_thread_cap\` of braid_dax, read after each run."
		echo
		echo "## Captured EXPLAIN (ANALYZE, BUFFERS) outputs (the untimed warm-up runs)"
		for n in "${THREAD_COUNTS[@]}"; do
			capture_md "Sort phase, braidsort.sort_threads = $n" "${TH_CAPTURE[sort,$n]}"
		done
		for ns in "${WRITE_NS_LIST[@]}"; do
			for n in "${THREAD_COUNTS[@]}"; do
				capture_md "Write phase, emulate_write_ns = $ns, braidsort.write_threads = $n" "${TH_CAPTURE[write,$ns,$n]}"
			done
		done
	} >"$REPORT"
}

# ----------------------------------------------------------------------------
# concurrency mode
# ----------------------------------------------------------------------------
# sql_opts ARGS...: psql on bench with the pgbench sessions' PGOPTIONS
sql_opts() {
	local out
	if ! out=$(PGOPTIONS="$CONC_PGOPTIONS" "${PSQL[@]}" -d bench "$@" 2>&1); then
		echo "$out" >&2
		echo "---- last lines of the server log ----" >&2
		tail -n 20 "$SERVER_LOG" >&2
		die "psql failed"
	fi
	printf '%s\n' "$out"
}

# concurrency_setup: sortbench2, the checksum functions and the expected
# checksums of the checked queries (computed with braidsort.enable = off)
concurrency_setup() {
	local t0 dup
	log "loading sortbench2: $CONC_ROWS2 rows, 10-byte keys, $PAYLOAD-byte payloads (tablespace $TABLE_TABLESPACE)"
	t0=$(date +%s)
	sql bench -v rows2="$CONC_ROWS2" -v payload="$PAYLOAD" -v tblspc="$TABLE_TABLESPACE" <<'SQL' >/dev/null
BEGIN;
CREATE TABLE sortbench2 (k bytea NOT NULL, v bytea NOT NULL) TABLESPACE :tblspc;
INSERT INTO sortbench2
SELECT decode(substr(md5(random()::text), 1, 20), 'hex'),
       decode(substr(repeat(md5((g + 1000000000)::text), ceil(:payload / 16.0)::int), 1, 2 * :payload), 'hex')
FROM generate_series(1, :rows2) AS g;
COMMIT;
VACUUM (ANALYZE) sortbench2;
CHECKPOINT;
SQL
	TBL2_ROWS=$(sql bench -c "SELECT count(*) FROM sortbench2")
	TBL2_SIZE=$(sql bench -c "SELECT pg_size_pretty(pg_relation_size('sortbench2'))")
	[[ "$TBL2_ROWS" == "$CONC_ROWS2" ]] || die "sortbench2 has $TBL2_ROWS rows, expected $CONC_ROWS2"
	log "loaded sortbench2 in $(( $(date +%s) - t0 ))s: $TBL2_ROWS rows, $TBL2_SIZE"
	# the checked results must not depend on the order of equal keys
	dup=$(sql bench -c "SET braidsort.enable = off" -c "SET work_mem = '256MB'" \
		-c "SELECT count(*) - count(DISTINCT k) FROM (SELECT k FROM sortbench UNION ALL SELECT k FROM sortbench2) s")
	[[ "$dup" == 0 ]] || die "sortbench and sortbench2 share $dup duplicate keys: the order checksum would depend on tie order; rerun"
	sql bench <<'SQL' >/dev/null
CREATE TABLE bench_expect (name text PRIMARY KEY, query text NOT NULL,
                           n bigint, hsum numeric, psum numeric);
-- an order-sensitive checksum of a query returning (k bytea, v bytea): row
-- count, sum of row hashes, and sum of row hashes weighted by position
-- (row_number() OVER () numbers rows in the order the sort emits them)
CREATE FUNCTION bench_checksum_sql(q text) RETURNS text
LANGUAGE sql IMMUTABLE AS $f$
SELECT format($x$SELECT count(*) AS n, coalesce(sum(h), 0) AS hsum, coalesce(sum(rn * (h %% 1000003)), 0) AS psum
FROM (SELECT row_number() OVER () AS rn, hashtextextended(encode(k, 'hex') || encode(v, 'hex'), 0) AS h
      FROM (%s) q) s$x$, q)
$f$;
CREATE FUNCTION bench_checksum(q text, OUT n bigint, OUT hsum numeric, OUT psum numeric)
LANGUAGE plpgsql AS $f$
BEGIN
	EXECUTE bench_checksum_sql(q) INTO n, hsum, psum;
END
$f$;
-- raises (so that pgbench aborts the client) unless the query's result has
-- the expected checksums; returns the row count
CREATE FUNCTION bench_check(which text) RETURNS bigint
LANGUAGE plpgsql AS $f$
DECLARE
	e bench_expect;
	got record;
BEGIN
	SELECT * INTO STRICT e FROM bench_expect WHERE name = which;
	SELECT * INTO got FROM bench_checksum(e.query);
	IF got.n <> e.n OR got.hsum <> e.hsum OR got.psum <> e.psum THEN
		RAISE EXCEPTION 'bench_check(%): wrong result: % rows, hash sum %, position-weighted sum %; expected % / % / %',
			which, got.n, got.hsum, got.psum, e.n, e.hsum, e.psum
			USING DETAIL = 'query: ' || e.query;
	END IF;
	RETURN got.n;
END
$f$;
INSERT INTO bench_expect (name, query) VALUES
  ('tid_small', $q$SELECT k, v FROM sortbench2 ORDER BY k$q$),
  ('vlog_small', $q$SELECT k, v FROM (SELECT k, v FROM sortbench2 UNION ALL SELECT k, v FROM sortbench WHERE k < '\x20'::bytea) u ORDER BY k$q$);
SQL
	log "computing the expected checksums with braidsort.enable = off"
	sql bench -c "SET braidsort.enable = off" \
		-c "UPDATE bench_expect SET (n, hsum, psum) = (SELECT * FROM bench_checksum(query))" >/dev/null
	CONC_EXPECT=$(sql bench -F ' | ' -c "SELECT name, n, hsum, psum, query FROM bench_expect ORDER BY name")
	# sanity: the check passes with PostgreSQL's Sort
	sql bench -c "SET braidsort.enable = off" -c "SELECT bench_check(name) FROM bench_expect" >/dev/null
}

# concurrency_verify: each statement of the script once, alone, under the
# sessions' settings: EXPLAIN ANALYZE (for bench_check(NAME): NAME's checksum
# query), then the statement itself
declare -a CV_STMT CV_PLAN CV_NODE CV_METHOD CV_SOURCE CV_ROWS CV_DEVW CV_TIME
concurrency_verify() {
	local line name q plan i=0
	while IFS= read -r -u 3 line; do
		[[ "$line" =~ ^[[:space:]]*$ || "$line" =~ ^[[:space:]]*-- || "$line" =~ ^[[:space:]]*\\ ]] && continue
		if [[ "$line" =~ ^SELECT\ bench_check\(\'([a-z_]+)\'\)\;$ ]]; then
			name=${BASH_REMATCH[1]}
			q=$(sql bench -c "SELECT bench_checksum_sql(query) FROM bench_expect WHERE name = '$name'")
			[[ -n "$q" ]] || die "the script calls bench_check('$name'), but bench_expect has no '$name'"
		else
			q=${line%;}
		fi
		plan=$(sql_opts -c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $q")
		CV_STMT[i]=$line
		CV_PLAN[i]=$plan
		if grep -q 'Custom Scan (BraidSort)' <<<"$plan"; then CV_NODE[i]=BraidSort
		else echo "$plan" >&2; die "statement '$line': no 'Custom Scan (BraidSort)' under the sessions' settings"; fi
		CV_METHOD[i]=$(sed -n 's/^ *Sort Method: //p' <<<"$plan" | paste -sd ';' -)
		CV_SOURCE[i]=$(sed -n 's/^ *Gather Source: //p' <<<"$plan" | paste -sd ';' -)
		CV_ROWS[i]=$(sed -n 's/^ *Rows Sorted: //p' <<<"$plan" | paste -sd ';' -)
		CV_DEVW[i]=$(plan_int 'Device Bytes Written' "$plan")
		CV_TIME[i]=$(sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' <<<"$plan")
		if [[ "${CV_DEVW[i]:-0}" == 0 ]]; then
			WARNINGS+=("statement '$line' does not spill alone (Device Bytes Written 0; ${CV_METHOD[i]}); raise CONC_ROWS / CONC_ROWS2 or lower CONC_WORK_MEM")
			echo "run.sh: WARNING: ${WARNINGS[-1]}" >&2
		fi
		log "  $(cut -c1-70 <<<"$line"): ${CV_METHOD[i]}, ${CV_SOURCE[i]}, device written $(human_bytes "${CV_DEVW[i]:-0}"), ${CV_TIME[i]} ms"
		# and the statement itself (the check must pass with braidsort, alone)
		sql_opts -c "$line" >/dev/null
		i=$(( i + 1 ))
	done 3<"$WORK/concurrency.sql"
	(( i > 0 )) || die "no statements in $CONC_SCRIPT"
}

# conc_run POLICY REP: one pgbench run; appends to the CR_* lists
declare -A CR_TPS CR_LAT CR_TXN CR_FAIL CR_ABORT CR_RC CR_RG CR_WG CR_WAITS CR_SW CR_OV CR_CAP CR_BUSY
declare -A CR_BW CR_BR CR_MP CR_OP CR_VL CR_STMT CR_OUT
conc_run() {
	local pol=$1 rep=$2 out rc sched stats tps lat txn fail abort
	local vpol rg wg waits sw ov cap busy bw br mp op vl j
	set_sighup braidsort.io_policy "$pol"
	sql bench -c "SELECT braidsort.stats_reset()" >/dev/null
	out="$WORK/pgbench-$pol-$rep.txt"
	if as_pg env PGOPTIONS="$CONC_PGOPTIONS" "$PGBIN/pgbench" -n -r -c "$CONC_CLIENTS" -j "$CONC_JOBS" -T "$CONC_SECONDS" \
		-f "$WORK/concurrency.sql" -h "$SOCK" -p "$BENCH_PORT" -U postgres bench >"$out" 2>&1; then rc=0; else rc=$?; fi
	sleep 0.5	# let the sessions' exits land
	tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' "$out")
	lat=$(sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p' "$out")
	txn=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*$/\1/p' "$out")
	fail=$(sed -n 's/^number of failed transactions: \([0-9]*\).*$/\1/p' "$out")
	abort=$(grep -c 'aborted in command' "$out" || true)
	if [[ -z "$txn" ]]; then
		cat "$out" >&2
		die "pgbench ($pol, run $rep) printed no transaction count (exit $rc)"
	fi
	# a run whose clients all aborted prints no tps / latency
	tps=${tps:-0}
	sched=$(sql bench -F ' ' -c "SELECT io_policy, read_grants, write_grants, waits, phase_switches, \"overlaps\", write_thread_cap,
		readers + writers + waiting_readers + waiting_writers + writer_threads
		FROM braidsort.scheduler WHERE tablespace = 'braid_dax'" | head -n1)
	read -r vpol rg wg waits sw ov cap busy <<<"$sched"
	if [[ -z "$sched" ]]; then
		WARNINGS+=("$pol run $rep: braidsort.scheduler has no row for braid_dax: nothing went through its gate")
		echo "run.sh: WARNING: ${WARNINGS[-1]}" >&2
		vpol=$pol rg=0 wg=0 waits=0 sw=0 ov=0 cap=- busy=0
	fi
	[[ "$vpol" == "$pol" ]] || die "braidsort.scheduler shows io_policy '$vpol' during the $pol run"
	stats=$(sql bench -F ' ' -c "SELECT
		coalesce(sum(value) FILTER (WHERE scope LIKE 'braid\_dax (%' AND counter = 'bytes_written'), 0),
		coalesce(sum(value) FILTER (WHERE scope LIKE 'braid\_dax (%' AND counter = 'bytes_read'), 0),
		coalesce(sum(value) FILTER (WHERE scope = 'global' AND counter = 'sorts_mergepass'), 0),
		coalesce(sum(value) FILTER (WHERE scope = 'global' AND counter = 'sorts_onepass'), 0),
		coalesce(sum(value) FILTER (WHERE scope = 'global' AND counter = 'sorts_value_log'), 0)
		FROM braidsort.stats")
	read -r bw br mp op vl <<<"$stats"
	local k=$pol
	CR_TPS[$k]+="$tps " CR_LAT[$k]+="${lat:-nan} " CR_TXN[$k]+="$txn " CR_FAIL[$k]+="${fail:-0} "
	CR_ABORT[$k]+="$abort " CR_RC[$k]+="$rc " CR_RG[$k]+="$rg " CR_WG[$k]+="$wg " CR_WAITS[$k]+="$waits "
	CR_SW[$k]+="$sw " CR_OV[$k]+="$ov " CR_CAP[$k]+="$cap " CR_BUSY[$k]+="$busy "
	CR_BW[$k]+="$bw " CR_BR[$k]+="$br " CR_MP[$k]+="$mp " CR_OP[$k]+="$op " CR_VL[$k]+="$vl "
	CR_OUT[$k,$rep]=$(cat "$out")
	# per-statement average latencies (pgbench -r): "latency failures statement"
	CR_STMT[$k,$rep]=$(awk '/^statement latencies in milliseconds/ { on = 1; next }
		on && /^ *[0-9.]+ +[0-9]+ +/ { print $1 }' "$out" | paste -sd ' ' -)
	[[ -n "${CR_STMT[$k,$rep]}" ]] || CR_STMT[$k,$rep]=$(for (( j = 0; j < ${#CV_STMT[@]}; j++ )); do printf 'nan '; done)
	log "$pol run $rep/$CONC_REPS: tps $tps, latency avg ${lat:-?} ms, $txn transactions, failed ${fail:-?}, aborted clients $abort, exit $rc;" \
		"grants r/w $rg/$wg, waits $waits, switches $sw, overlaps $ov; device written $(human_bytes "$bw"), read $(human_bytes "$br")"
	if (( rc != 0 || abort > 0 || ${fail:-0} > 0 )); then
		WARNINGS+=("$pol run $rep: pgbench exit $rc, $abort aborted clients, ${fail:-?} failed transactions: $(grep -E 'ERROR|aborted|FATAL' "$out" | head -n 3 | tr '\n' ' ')")
		echo "run.sh: WARNING: ${WARNINGS[-1]}" >&2
	fi
	if [[ $pol == interference_aware && "$ov" != 0 ]]; then
		WARNINGS+=("interference_aware run $rep: braidsort.scheduler counted $ov read/write overlaps (expected 0)")
		echo "run.sh: WARNING: ${WARNINGS[-1]}" >&2
	fi
	if [[ "$busy" != 0 ]]; then
		WARNINGS+=("$pol run $rep: the gate of braid_dax is not free after the run (readers + writers + waiting + writer_threads = $busy)")
		echo "run.sh: WARNING: ${WARNINGS[-1]}" >&2
	fi
}

# sum of the arguments
sum_of() { printf '%s\n' "$@" | awk '{ s += $1 } END { printf "%d\n", s }'; }

run_concurrency() {
	local pol rep i k stmts
	[[ "$(sql bench -c 'SHOW shared_buffers')" == "$SB_LARGE" ]] || log "note: SHOW shared_buffers = $(sql bench -c 'SHOW shared_buffers')"
	create_braidsort_extension
	concurrency_setup
	install -m 644 -o postgres "$CONC_SCRIPT" "$WORK/concurrency.sql"
	sql bench -c "SELECT pg_prewarm('sortbench2')" >/dev/null 2>&1 || true
	warm_table
	CONC_POLICY_DEFAULT=$(sql bench -c "SHOW braidsort.io_policy")
	log "each statement alone, with PGOPTIONS='$CONC_PGOPTIONS' (io_policy $CONC_POLICY_DEFAULT):"
	concurrency_verify
	for pol in "${POLICY_LIST[@]}"; do
		for v in CR_TPS CR_LAT CR_TXN CR_FAIL CR_ABORT CR_RC CR_RG CR_WG CR_WAITS CR_SW CR_OV CR_CAP CR_BUSY CR_BW CR_BR CR_MP CR_OP CR_VL; do
			eval "$v[\$pol]=''"
		done
	done
	log "pgbench: $CONC_CLIENTS clients, $CONC_JOBS jobs, ${CONC_SECONDS}s per run, $CONC_REPS runs per policy (${POLICY_LIST[*]})"
	for (( rep = 1; rep <= CONC_REPS; rep++ )); do
		for pol in "${POLICY_LIST[@]}"; do
			conc_run "$pol" "$rep"
		done
	done
	reset_sighup braidsort.io_policy
	stop_server
	check_so_unchanged

	declare -gA CM
	for pol in "${POLICY_LIST[@]}"; do
		# shellcheck disable=SC2086
		{
			CM[$pol,tps]=$(median ${CR_TPS[$pol]})
			CM[$pol,lat]=$(median ${CR_LAT[$pol]})
			CM[$pol,txn]=$(median_int ${CR_TXN[$pol]})
			CM[$pol,fail]=$(median_int ${CR_FAIL[$pol]})
			CM[$pol,failsum]=$(sum_of ${CR_FAIL[$pol]})
			CM[$pol,abortsum]=$(sum_of ${CR_ABORT[$pol]})
			CM[$pol,rcs]=$(printf '%s\n' ${CR_RC[$pol]} | sort -u | paste -sd/ -)
			CM[$pol,rg]=$(median_int ${CR_RG[$pol]})
			CM[$pol,wg]=$(median_int ${CR_WG[$pol]})
			CM[$pol,waits]=$(median_int ${CR_WAITS[$pol]})
			CM[$pol,sw]=$(median_int ${CR_SW[$pol]})
			CM[$pol,ov]=$(median_int ${CR_OV[$pol]})
			CM[$pol,ovmax]=$(minmax max ${CR_OV[$pol]})
			CM[$pol,cap]=$(printf '%s\n' ${CR_CAP[$pol]} | sort -u | paste -sd/ -)
			CM[$pol,bw]=$(median_int ${CR_BW[$pol]})
			CM[$pol,br]=$(median_int ${CR_BR[$pol]})
			CM[$pol,mp]=$(median_int ${CR_MP[$pol]})
			CM[$pol,op]=$(median_int ${CR_OP[$pol]})
			CM[$pol,vl]=$(median_int ${CR_VL[$pol]})
		}
		# per-statement latency medians
		stmts=${#CV_STMT[@]}
		CM[$pol,stmt]=""
		for (( i = 1; i <= stmts; i++ )); do
			local vals=()
			for (( rep = 1; rep <= CONC_REPS; rep++ )); do
				vals+=("$(cut -d' ' -f"$i" <<<"${CR_STMT[$pol,$rep]}")")
			done
			CM[$pol,stmt]+="$(median "${vals[@]}") "
		done
	done
	CONC_TPS_RATIO=""
	if [[ -n "${CM[interference_aware,tps]:-}" && -n "${CM[overlap,tps]:-}" ]]; then
		CONC_TPS_RATIO=$(ratio "${CM[interference_aware,tps]}" "${CM[overlap,tps]}")
	fi

	echo
	echo "==== braidsort concurrency benchmark: pgbench, io_policy ${POLICY_LIST[*]} ===="
	echo "sortbench $CONC_ROWS rows + sortbench2 $CONC_ROWS2 rows; $CONC_CLIENTS clients, ${CONC_SECONDS}s, $CONC_REPS runs per policy; PGOPTIONS: $CONC_PGOPTIONS"
	echo
	printf '%-19s %9s %12s %6s %6s %8s %11s %11s %9s %9s %8s %12s %12s\n' policy "tps" "lat avg ms" txns failed aborted read_grants write_grants waits switches overlaps "dev written" "dev read"
	for pol in "${POLICY_LIST[@]}"; do
		printf '%-19s %9s %12s %6s %6s %8s %11s %11s %9s %9s %8s %12s %12s\n' "$pol" "${CM[$pol,tps]}" "${CM[$pol,lat]}" "${CM[$pol,txn]}" \
			"${CM[$pol,failsum]}" "${CM[$pol,abortsum]}" "${CM[$pol,rg]}" "${CM[$pol,wg]}" "${CM[$pol,waits]}" "${CM[$pol,sw]}" \
			"${CM[$pol,ov]} (max ${CM[$pol,ovmax]})" "$(human_bytes "${CM[$pol,bw]}")" "$(human_bytes "${CM[$pol,br]}")"
	done
	echo "(medians; failed / aborted: totals over the runs)"
	[[ -z "$CONC_TPS_RATIO" ]] || echo "tps(interference_aware) / tps(overlap) = ${CONC_TPS_RATIO}x"
	for w in "${WARNINGS[@]+"${WARNINGS[@]}"}"; do echo "WARNING: $w"; done

	collect_machine_info
	SO_SHA=$SO_SHA_START	# the library the server preloaded (see check_so_unchanged)
	{
		echo "# braidsort concurrency benchmark (pgbench, io_policy) — $(date '+%Y-%m-%d %H:%M:%S %Z')"
		echo
		echo "pgbench runs \`$(basename "$CONC_SCRIPT")\` (below) with $CONC_CLIENTS clients and $CONC_JOBS jobs for ${CONC_SECONDS}s;"
		echo "\`braidsort.io_policy\` (server-wide, PGC_SIGHUP) alternates between ${POLICY_LIST[*]}, $CONC_REPS runs each:"
		echo "before each run \`ALTER SYSTEM SET braidsort.io_policy = ...; SELECT pg_reload_conf();\` (checked with"
		echo "\`SHOW\` in a new session) and \`SELECT braidsort.stats_reset();\`; after it, pgbench's tps (without"
		echo "initial connection time), latency average, failed transactions and aborted clients, \`braidsort.scheduler\`"
		echo "for braid_dax, and the device traffic of braid_dax from \`braidsort.stats\`."
		echo
		echo "Session settings (PGOPTIONS of every pgbench client): \`$CONC_PGOPTIONS\`."
		echo "\`braidsort.emulate_write_ns\` / \`emulate_read_ns\` add a delay per 64-byte line written / read to the"
		echo "tmpfs, to emulate a slower device."
		echo
		echo "Correctness: \`bench_check(NAME)\` runs NAME's query and compares its row count, the sum of its row"
		echo "hashes and the sum of its row hashes weighted by position (\`row_number() OVER ()\`: a wrong order"
		echo "changes it) with the values computed with \`braidsort.enable = off\` before the runs; it raises on a"
		echo "mismatch, which makes pgbench abort that client (counted below as an aborted client; pgbench's"
		echo "\"failed transactions\" only counts serialization and deadlock failures). All keys of sortbench and"
		echo "sortbench2 are distinct (checked), so the expected order is unique."
		echo
		echo "## Command"
		echo
		echo '```'
		echo "${ENV_GIVEN}bash $ORIG_CMDLINE"
		echo '```'
		echo
		echo "Effective settings: MODE=$MODE BENCH_PORT=$BENCH_PORT CONC_ROWS=$CONC_ROWS CONC_ROWS2=$CONC_ROWS2 PAYLOAD=$PAYLOAD"
		echo "CONC_CLIENTS=$CONC_CLIENTS CONC_JOBS=$CONC_JOBS CONC_SECONDS=$CONC_SECONDS CONC_REPS=$CONC_REPS CONC_POLICIES=\"${POLICY_LIST[*]}\""
		echo "CONC_WORK_MEM=$CONC_WORK_MEM CONC_EMULATE_WRITE_NS=$CONC_EMULATE_WRITE_NS CONC_EMULATE_READ_NS=$CONC_EMULATE_READ_NS CONC_EXTRA_OPTIONS=\"$CONC_EXTRA_OPTIONS\""
		echo "WORK_MEM=$WORK_MEM SB_LARGE=$SB_LARGE TMPFS_SIZE=$TMPFS_SIZE TABLE_TABLESPACE=$TABLE_TABLESPACE quick=$QUICK"
		echo
		echo "pgbench command (run as the postgres OS user):"
		echo
		echo '```'
		echo "PGOPTIONS='$CONC_PGOPTIONS' \\"
		echo "  $PGBIN/pgbench -n -r -c $CONC_CLIENTS -j $CONC_JOBS -T $CONC_SECONDS -f concurrency.sql -h <socket dir> -p $BENCH_PORT -U postgres bench"
		echo '```'
		echo
		echo "Sizing: $SIZE_NOTE"
		echo
		machine_md
		echo "- pgbench: $("$PGBIN/pgbench" --version)"
		echo "- braidsort extension version: $EXT_VERSION; braidsort.io_policy default: $CONC_POLICY_DEFAULT"
		echo
		echo "## Data"
		echo
		echo "sortbench: $TBL_ROWS rows, heap $TBL_SIZE_PRETTY; sortbench2: $TBL2_ROWS rows, heap $TBL2_SIZE; both in tablespace"
		echo "$TABLE_TABLESPACE, 10-byte random keys, ${PAYLOAD}-byte values, warmed with count(*)$( (( HAVE_PREWARM )) && echo " and pg_prewarm"). One server, shared_buffers = $SB_LARGE."
		echo
		echo "Expected results of the checked queries (name | rows | hash sum | position-weighted sum | query):"
		echo
		echo '```'
		echo "$CONC_EXPECT"
		echo '```'
		for w in "${WARNINGS[@]+"${WARNINGS[@]}"}"; do echo; echo "**WARNING:** $w"; done
		echo
		server_settings_md
		echo
		echo "## The pgbench script"
		echo
		echo '```sql'
		cat "$WORK/concurrency.sql"
		echo '```'
		echo
		echo "Each statement alone (one session, the settings above, io_policy $CONC_POLICY_DEFAULT, before the runs;"
		echo "for \`bench_check(NAME)\` the plan of NAME's checksum query):"
		echo
		echo "| # | statement | node | Sort Method | Gather Source | Rows Sorted | Device Bytes Written | Execution Time (ms) |"
		echo "|---:|---|---|---|---|---:|---:|---:|"
		for (( i = 0; i < ${#CV_STMT[@]}; i++ )); do
			echo "| $(( i + 1 )) | \`${CV_STMT[i]}\` | ${CV_NODE[i]} | ${CV_METHOD[i]} | ${CV_SOURCE[i]} | ${CV_ROWS[i]} | $(bytes_cell "${CV_DEVW[i]}") | ${CV_TIME[i]} |"
		done
		echo
		echo "## Results (medians of $CONC_REPS runs per policy)"
		echo
		echo "| io_policy | tps | latency average (ms) | transactions | failed transactions (total) | aborted clients (total) | pgbench exit | read_grants | write_grants | waits | phase_switches | overlaps (median / max) | write_thread_cap | device bytes_written | device bytes_read | sorts mergepass / onepass / value log |"
		echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		for pol in "${POLICY_LIST[@]}"; do
			echo "| $pol | ${CM[$pol,tps]} | ${CM[$pol,lat]} | ${CM[$pol,txn]} | ${CM[$pol,failsum]} | ${CM[$pol,abortsum]} | ${CM[$pol,rcs]} | ${CM[$pol,rg]} | ${CM[$pol,wg]} | ${CM[$pol,waits]} | ${CM[$pol,sw]} | ${CM[$pol,ov]} / ${CM[$pol,ovmax]} | ${CM[$pol,cap]} | $(bytes_cell "${CM[$pol,bw]}") | $(bytes_cell "${CM[$pol,br]}") | ${CM[$pol,mp]} / ${CM[$pol,op]} / ${CM[$pol,vl]} |"
		done
		echo
		if [[ -n "$CONC_TPS_RATIO" ]]; then
			echo "**tps(interference_aware) / tps(overlap) = ${CONC_TPS_RATIO}x**; latency average overlap / interference_aware = $(ratio "${CM[overlap,lat]}" "${CM[interference_aware,lat]}")x."
			echo
			echo "Overlaps under interference_aware, all runs: ${CR_OV[interference_aware]% } (must be 0)."
			echo
		fi
		local nchecks
		nchecks=$(grep -c "^SELECT bench_check(" "$WORK/concurrency.sql" || true)
		for pol in "${POLICY_LIST[@]}"; do
			echo "Correctness under $pol: $(sum_of ${CR_TXN[$pol]}) transactions completed over $CONC_REPS runs, each with $nchecks checked sorts that matched (a mismatch aborts the client); aborted clients: ${CM[$pol,abortsum]}; failed transactions: ${CM[$pol,failsum]}; pgbench exit status: ${CM[$pol,rcs]}."
			echo
		done
		echo "Per-statement average latency (ms; pgbench -r; medians over the runs):"
		echo
		printf '| io_policy |'; for (( i = 1; i <= ${#CV_STMT[@]}; i++ )); do printf ' stmt %d |' "$i"; done; echo
		printf '|---|'; for (( i = 1; i <= ${#CV_STMT[@]}; i++ )); do printf -- '---:|'; done; echo
		for pol in "${POLICY_LIST[@]}"; do
			printf '| %s |' "$pol"; for v in ${CM[$pol,stmt]}; do printf ' %s |' "$v"; done; echo
		done
		echo
		echo "## Individual runs (in execution order; policies alternate)"
		echo
		echo "| run | io_policy | tps | latency average (ms) | transactions | failed | aborted clients | exit | read_grants | write_grants | waits | phase_switches | overlaps | device bytes_written | device bytes_read | sorts mergepass / onepass / value log | per-statement latency (ms) |"
		echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
		local -a a_tps a_lat a_txn a_fail a_ab a_rc a_rg a_wg a_wt a_sw a_ov a_bw a_br a_mp a_op a_vl
		for (( rep = 1; rep <= CONC_REPS; rep++ )); do
			for pol in "${POLICY_LIST[@]}"; do
				read -r -a a_tps <<<"${CR_TPS[$pol]}"; read -r -a a_lat <<<"${CR_LAT[$pol]}"
				read -r -a a_txn <<<"${CR_TXN[$pol]}"; read -r -a a_fail <<<"${CR_FAIL[$pol]}"
				read -r -a a_ab <<<"${CR_ABORT[$pol]}"; read -r -a a_rc <<<"${CR_RC[$pol]}"
				read -r -a a_rg <<<"${CR_RG[$pol]}"; read -r -a a_wg <<<"${CR_WG[$pol]}"
				read -r -a a_wt <<<"${CR_WAITS[$pol]}"; read -r -a a_sw <<<"${CR_SW[$pol]}"
				read -r -a a_ov <<<"${CR_OV[$pol]}"; read -r -a a_bw <<<"${CR_BW[$pol]}"
				read -r -a a_br <<<"${CR_BR[$pol]}"; read -r -a a_mp <<<"${CR_MP[$pol]}"
				read -r -a a_op <<<"${CR_OP[$pol]}"; read -r -a a_vl <<<"${CR_VL[$pol]}"
				i=$(( rep - 1 ))
				echo "| $rep | $pol | ${a_tps[i]} | ${a_lat[i]} | ${a_txn[i]} | ${a_fail[i]} | ${a_ab[i]} | ${a_rc[i]} | ${a_rg[i]} | ${a_wg[i]} | ${a_wt[i]} | ${a_sw[i]} | ${a_ov[i]} | ${a_bw[i]} | ${a_br[i]} | ${a_mp[i]} / ${a_op[i]} / ${a_vl[i]} | ${CR_STMT[$pol,$rep]} |"
			done
		done
		echo
		echo "## Plans of the statements alone (EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF))"
		for (( i = 0; i < ${#CV_STMT[@]}; i++ )); do
			capture_md "Statement $(( i + 1 )): \`${CV_STMT[i]}\`" "${CV_PLAN[i]}"
		done
		echo
		echo "## pgbench output of each run"
		for (( rep = 1; rep <= CONC_REPS; rep++ )); do
			for pol in "${POLICY_LIST[@]}"; do
				capture_md "Run $rep, $pol" "${CR_OUT[$pol,$rep]}"
			done
		done
	} >"$REPORT"
}

# ----------------------------------------------------------------------------
# run the mode, keep the results
# ----------------------------------------------------------------------------
case $MODE in
	onepass) run_onepass ;;
	spill) run_spill ;;
	sweep) run_sweep ;;
	threads) run_threads ;;
	concurrency) run_concurrency ;;
esac

mkdir -p "$RESULTS_DIR"
RESULT_FILE="$RESULTS_DIR/$MODE-$(date +%Y%m%d-%H%M%S).md"
cp "$REPORT" "$RESULT_FILE"
echo
echo "results written to $RESULT_FILE"
