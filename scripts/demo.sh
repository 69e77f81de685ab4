#!/usr/bin/env bash
# demo.sh: braidsort end to end, from a fresh Debian 12 machine.
#
# Run as root from the repository.  Installs dependencies, builds and
# installs braidsort, starts a sandbox PostgreSQL 15 (as the postgres user)
# with shared_preload_libraries = 'braidsort' and a tablespace on a tmpfs
# standing in for a DAX mount, loads a sortbenchmark-shaped table, runs the
# same ORDER BY with braidsort off and on, prints both EXPLAIN ANALYZE
# outputs and the speed-up, then stops the server and removes everything
# (KEEP=1 leaves the sandbox running and prints how to connect).
#
# Environment: ROWS [2000000], WORK_MEM [64MB], SHARED_BUFFERS [1GB],
# DEMO_PORT [5477], REPS [3].
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
ROWS=${ROWS:-2000000}
WORK_MEM=${WORK_MEM:-64MB}
SHARED_BUFFERS=${SHARED_BUFFERS:-1GB}
DEMO_PORT=${DEMO_PORT:-5477}
REPS=${REPS:-3}
KEEP=${KEEP:-0}
PGBIN=/usr/lib/postgresql/15/bin

if [ "$(id -u)" -ne 0 ]; then
	echo "demo.sh: run as root (it installs packages and mounts a tmpfs)" >&2
	exit 1
fi

bash "$here/scripts/install-deps.sh"

echo "== building and installing braidsort"
make -C "$here" -s PG_CONFIG=$PGBIN/pg_config >/dev/null
make -C "$here" -s PG_CONFIG=$PGBIN/pg_config install >/dev/null

sandbox=$(mktemp -d /tmp/braidsort-demo.XXXXXX)
dax="$sandbox/dax"
mounted=0
cleanup() {
	if [ "$KEEP" = 1 ]; then
		return
	fi
	if [ -f "$sandbox/data/postmaster.pid" ]; then
		runuser -u postgres -- $PGBIN/pg_ctl -D "$sandbox/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	if [ "$mounted" = 1 ]; then
		umount "$dax" || true
	fi
	rm -rf "$sandbox"
}
trap cleanup EXIT

# the "DAX" device: a tmpfs mount, or a directory in /dev/shm if mounting
# is not allowed here
mkdir -p "$dax"
if mount -t tmpfs -o size=2G,mode=0700 tmpfs "$dax" 2>/dev/null; then
	mounted=1
	echo "== emulated DAX device: tmpfs mounted at $dax"
else
	rm -rf "$dax"
	dax=$(mktemp -d /dev/shm/braidsort-dax.XXXXXX)
	echo "== emulated DAX device: $dax (could not mount a tmpfs)"
fi
chown -R postgres: "$sandbox" "$dax"

echo "== starting a sandbox PostgreSQL 15 in $sandbox (port $DEMO_PORT)"
runuser -u postgres -- $PGBIN/initdb -D "$sandbox/data" --no-locale -E UTF8 -A trust >/dev/null
cat >> "$sandbox/data/postgresql.conf" <<EOF
shared_preload_libraries = 'braidsort'
port = $DEMO_PORT
listen_addresses = ''
unix_socket_directories = '$sandbox'
shared_buffers = $SHARED_BUFFERS
max_parallel_workers_per_gather = 0
jit = off
EOF
runuser -u postgres -- $PGBIN/pg_ctl -D "$sandbox/data" -l "$sandbox/server.log" -w start >/dev/null

psql_demo() {
	runuser -u postgres -- $PGBIN/psql -X -q -h "$sandbox" -p "$DEMO_PORT" -d postgres -v ON_ERROR_STOP=1 "$@"
}

echo "== loading sortbench: $ROWS rows, 10-byte random key, 90-byte payload"
psql_demo >/dev/null <<EOF
CREATE EXTENSION braidsort;
CREATE EXTENSION pg_prewarm;
CREATE TABLESPACE dax LOCATION '$dax';
ALTER SYSTEM SET temp_tablespaces = 'dax';
SELECT pg_reload_conf();
CREATE TABLE sortbench (k bytea NOT NULL, v bytea NOT NULL);
INSERT INTO sortbench
SELECT decode(substr(md5(random()::text) || md5(random()::text), 1, 20), 'hex'),
	   decode(repeat(md5(g::text), 3) || substr(md5(g::text), 1, 84), 'hex')
FROM generate_series(1, $ROWS) g;
VACUUM ANALYZE sortbench;
SELECT pg_prewarm('sortbench');
EOF

query="SELECT * FROM sortbench ORDER BY k"
explain_run() {		# $1 = braidsort.enable
	psql_demo -At <<EOF
SET work_mem = '$WORK_MEM';
SET braidsort.enable = $1;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) $query;
EOF
}
exec_ms() { grep -o 'Execution Time: [0-9.]*' | awk '{print $3}'; }

echo
echo "== PostgreSQL's own sort (braidsort.enable = off), work_mem = $WORK_MEM"
pg_plan=$(explain_run off)
echo "$pg_plan"
echo
echo "== the same query with braidsort (chosen by its cost model, not forced)"
braid_plan=$(explain_run on)
echo "$braid_plan"
if ! grep -q "Custom Scan (BraidSort)" <<<"$braid_plan"; then
	echo "demo.sh: braidsort did not replace the Sort" >&2
	exit 1
fi

echo
echo "== timing $REPS runs of each, alternating (rows are discarded in the server)"
pg_times=(); braid_times=()
for _ in $(seq "$REPS"); do
	pg_times+=("$(explain_run off | exec_ms)")
	braid_times+=("$(explain_run on | exec_ms)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
pg_med=$(median "${pg_times[@]}")
braid_med=$(median "${braid_times[@]}")
printf 'PostgreSQL sort: %s ms (runs: %s)\n' "$pg_med" "${pg_times[*]}"
printf 'braidsort:       %s ms (runs: %s)\n' "$braid_med" "${braid_times[*]}"
awk -v p="$pg_med" -v b="$braid_med" 'BEGIN {printf "speed-up:        %.2fx\n", p / b}'

if [ "$KEEP" = 1 ]; then
	echo
	echo "The sandbox is still running. Connect with:"
	echo "  sudo -u postgres psql -h $sandbox -p $DEMO_PORT postgres"
	echo "Stop it with:"
	echo "  sudo -u postgres $PGBIN/pg_ctl -D $sandbox/data stop; sudo umount $dax"
fi
