#!/usr/bin/env bash
# random-test.sh: a long batch of braidsort's randomized differential tests.
#
#	sudo bash scripts/random-test.sh [--seed N] [--minutes M] [--case N]
#
# Runs test/t/012_random.pl (a server of its own, random tables, random
# queries run with braidsort off and forced, results compared) with a new
# seed for 10 minutes, or the given seed, time or single case.  A failing
# case is printed with its query, settings and the command that runs it
# again.  Run as root from the repository, after scripts/test.sh (or
# scripts/install-deps.sh and make install) on this machine.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
minutes=10
case_=""
while [ $# -gt 0 ]; do
	case "$1" in
		--seed) seed=$2; shift 2 ;;
		--minutes) minutes=$2; shift 2 ;;
		--case) case_=$2; shift 2 ;;
		*) echo "usage: random-test.sh [--seed N] [--minutes M] [--case N]" >&2; exit 2 ;;
	esac
done

work=$(mktemp -d /tmp/braidsort-random.XXXXXX)
cleanup() {
	umount "$work/dax" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
cp -a "$here/." "$work/src"
mkdir -p "$work/dax"
dax_env=()
if mount -t tmpfs -o size=1G,mode=0700 tmpfs "$work/dax" 2>/dev/null; then
	dax_env+=("BRAID_TEST_DAX=$work/dax")
fi
chown -R postgres: "$work"

echo "random-test.sh: seed $seed, ${minutes} minutes${case_:+, case $case_}"
status=0
runuser -u postgres -- env "${dax_env[@]}" BRAID_RANDOM_SEED="$seed" \
	BRAID_RANDOM_SECONDS=$((minutes * 60)) ${case_:+BRAID_RANDOM_CASE=$case_} \
	make -C "$work/src" -s installcheck REGRESS= ISOLATION= PROVE_TESTS=test/t/012_random.pl \
	PROVE_FLAGS=--verbose PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config || status=$?
if [ $status -ne 0 ]; then
	grep -h -A6 "^# FAILED case\|^FAILED case" "$work/src"/tmp_check/log/regress_log_012_random 2>/dev/null || true
	echo "random-test.sh: FAILED (seed $seed)" >&2
fi
exit $status
