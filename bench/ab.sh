#!/usr/bin/env bash
# ab.sh: a workload run alternately against two builds of braidsort.
#
#	sudo bash bench/ab.sh OLD_TREE NEW_TREE ROUNDS OUT -- WORKLOAD [options]
#
# OLD_TREE and NEW_TREE are checkouts of braidsort (git worktrees, say: one
# at the commit before a change, one after).  Each round installs OLD_TREE's
# build, runs "bench/run.sh WORKLOAD --no-build [options] --out OUT" (the
# driver of this checkout), then does the same with NEW_TREE, so that the
# two builds take turns on the same machine and data and drift touches both
# alike.  Every run's result file records its build's commit; each run
# also measures PostgreSQL, so the builds can be compared by their ratios
# to PostgreSQL in the same run as well as by their own times
# (bench/run.sh --report OUT/*.json writes the tables).
set -euo pipefail

if [ $# -lt 6 ] || [ "$5" != "--" ]; then
	echo "usage: bash bench/ab.sh OLD_TREE NEW_TREE ROUNDS OUT -- WORKLOAD [options]" >&2
	exit 1
fi
old=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
rounds=$3
out=$4
shift 5
here=$(cd "$(dirname "$0")/.." && pwd)
pg_config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
mkdir -p "$out"

for ((r = 1; r <= rounds; r++)); do
	for tree in "$old" "$new"; do
		echo "== round $r of $rounds: $(git -C "$tree" rev-parse --short HEAD) ($tree)"
		make -s -C "$tree" PG_CONFIG="$pg_config" >/dev/null
		make -s -C "$tree" PG_CONFIG="$pg_config" install >/dev/null
		bash "$here/bench/run.sh" "$@" --no-build --out "$out" \
			--note "ab round $r: $(git -C "$tree" rev-parse --short HEAD)"
	done
done
