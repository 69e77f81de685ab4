#!/usr/bin/env bash
# test.sh: the whole braidsort test suite, from a fresh Debian 12 machine.
#
#	bash scripts/test.sh [--pg 15 | --pg 17 | --pg 18 | --pg all]
#
# Run as root from the repository: installs dependencies, builds and
# installs braidsort, runs the pure-C unit tests, then, as the postgres
# user, the pg_regress suite and the TAP tests against temporary servers
# they start themselves.  Exits 0 only if everything passed.
#
# Without --pg it tests PostgreSQL 15, Debian 12's own.  --pg 17 and --pg 18
# run the same suite inside a Debian 13 or Debian unstable root filesystem
# made by scripts/pgroot.sh, against that release's own PostgreSQL
# packages, as a DBA there has them; --pg all runs 15, 17 and 18 one after
# the other (what CI runs), the unit tests and the benchmark driver, which
# do not depend on the major, with 15 only (BRAID_TEST_ONCE=0 for the
# others).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

major=15
if [ -f /etc/braidsort-pgroot ]; then
	major=$(cat /etc/braidsort-pgroot)
fi
want=$major
if [ "${1:-}" = "--pg" ]; then
	want=${2:?usage: bash scripts/test.sh [--pg 15|17|18|all]}
elif [ -n "${1:-}" ]; then
	echo "usage: bash scripts/test.sh [--pg 15|17|18|all]" >&2
	exit 2
fi

if [ "$want" = all ]; then
	# every major's Debian package is built and checked too
	export BRAID_TEST_PACKAGE=${BRAID_TEST_PACKAGE:-1}
	started=$(date +%s)
	results=()
	status=0
	for m in 15 17 18; do
		t0=$(date +%s)
		echo "==== PostgreSQL $m"
		# the unit tests (pure C, no PostgreSQL) and the benchmark driver
		# run once, with 15; 17 and 18 build the unit tests with their
		# own compiler only
		once=1
		[ $m = 15 ] || once=0
		if BRAID_TEST_ONCE=$once bash "$here/scripts/test.sh" --pg $m; then
			results+=("PostgreSQL $m: passed ($(($(date +%s) - t0)) s)")
		else
			results+=("PostgreSQL $m: FAILED ($(($(date +%s) - t0)) s)")
			status=1
		fi
	done
	printf '%s\n' "${results[@]}"
	echo "test.sh: 15, 17 and 18 took $(($(date +%s) - started)) s"
	exit $status
fi
if [ "$want" != "$major" ]; then
	if [ -f /etc/braidsort-pgroot ]; then
		echo "test.sh: this root has PostgreSQL $major, not $want" >&2
		exit 2
	fi
	case "$want" in
		17) exec bash "$here/scripts/pgroot.sh" "$want" --in-tree scripts/test.sh --pg "$want" ;;
		18)
			# the pg_upgrade test (test/t/015_pg_upgrade.pl) upgrades a
			# PostgreSQL 15 cluster with braidsort to 18: 15 and braidsort
			# built for it come from this Debian 12 system
			root=$(bash "$here/scripts/pgroot.sh" "$want")
			bash "$here/scripts/stage-old-major.sh" 15 "$root"
			exec bash "$here/scripts/pgroot.sh" "$want" --in-tree scripts/test.sh --pg "$want"
			;;
		*)
			echo "test.sh: PostgreSQL $want is not tested here (15, 17, 18 or all)" >&2
			exit 2
			;;
	esac
fi

# each step's start, in seconds since this major's start, for the CI log
t_major=$(date +%s)
step() {
	echo "== $* (at $(($(date +%s) - t_major)) s)"
}

step "PostgreSQL $major"
bash scripts/install-deps.sh --pg "$major"

step "the tree agrees with itself (versions, layers, docs/design.md's names)"
python3 scripts/check-tree.py

PG_CONFIG=/usr/lib/postgresql/$major/bin/pg_config
export PG_CONFIG

step "build and install"
make -s clean >/dev/null
make -s PG_CONFIG=$PG_CONFIG 2>&1 | tee /tmp/braidsort-build.log
if grep -q "warning:" /tmp/braidsort-build.log; then
	echo "test.sh: the build produced warnings" >&2
	exit 1
fi
# a function declared but built nowhere would only fail when first called
if nm -u braidsort.so | grep -w 'braid_[a-z_0-9]*'; then
	echo "test.sh: braidsort.so calls braid_* functions it does not define" >&2
	exit 1
fi
make -s PG_CONFIG=$PG_CONFIG install >/dev/null

if [ "${BRAID_TEST_ONCE:-1}" = 1 ]; then
	step "unit tests"
	make -s unittest PG_CONFIG=$PG_CONFIG
else
	step "unit tests: built only (they ran with PostgreSQL 15)"
	make -s test/unit/run_unit_tests PG_CONFIG=$PG_CONFIG
fi

# PostgreSQL refuses to run as root: run the server tests as postgres in a
# copy of the tree it owns.
work=$(mktemp -d /tmp/braidsort-test.XXXXXX)
mounts=()
cleanup() {
	for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
cp -a "$here/." "$work/src"

# tmpfs mounts standing in for DAX devices: a roomy one (two TAP tests
# spill to it at once), and a tiny one the full-device test fills up.  Where mounting is not allowed (a container
# without CAP_SYS_ADMIN) the tests that need them are skipped, but only when
# BRAID_TEST_NO_MOUNT=1 says so: otherwise a lost mount would pass silently.
dax_env=()
mkdir -p "$work/dax" "$work/tinydax"
if mount -t tmpfs -o size=2G,mode=0700 tmpfs "$work/dax" &&
	mounts+=("$work/dax") &&
	mount -t tmpfs -o size=2M,mode=0700 tmpfs "$work/tinydax"; then
	mounts+=("$work/tinydax")
	dax_env+=("BRAID_TEST_DAX=$work/dax" "BRAID_TEST_TINY_DAX=$work/tinydax")
elif [ "${BRAID_TEST_NO_MOUNT:-}" = 1 ]; then
	echo "test.sh: no tmpfs mounts here: the tests of DAX tablespaces are skipped"
else
	echo "test.sh: cannot mount the tmpfs file systems standing in for DAX devices" >&2
	echo "test.sh: (set BRAID_TEST_NO_MOUNT=1 to run without the tests that need them)" >&2
	exit 1
fi
chown -R postgres: "$work"

step "regression and TAP tests (as postgres)"
status=0
# a PostgreSQL 15 staged by scripts/stage-old-major.sh, for the pg_upgrade test
old_env=()
if [ "$major" != 15 ] && [ -x /usr/lib/postgresql/15/bin/postgres ] &&
	[ -f /usr/lib/postgresql/15/staged-by-braidsort ]; then
	old_env+=("BRAID_TEST_OLD_PG=/usr/lib/postgresql/15"
		"BRAID_TEST_OLD_PG_LIBS=/usr/lib/postgresql/15/staged-lib")
fi
runuser -u postgres -- env "${dax_env[@]}" "${old_env[@]}" make -C "$work/src" -s installcheck PG_CONFIG=$PG_CONFIG || status=$?
if [ $status -ne 0 ]; then
	for f in "$work/src/regression.diffs" "$work/src/output_iso/regression.diffs" "$work/src"/tmp_check/log/regress_log_*; do
		[ -f "$f" ] && { echo "---- $f"; tail -n 200 "$f"; }
	done
	echo "test.sh: FAILED" >&2
	exit $status
fi
if [ "${BRAID_TEST_ONCE:-1}" = 1 ]; then
	step "benchmark driver (bench/run.sh --quick, then its report)"
	bash bench/run.sh --quick --no-build --out "$work/bench" &&
		bash bench/run.sh --report --out "$work/bench" "$work/bench"/*.json >/dev/null ||
		{ echo "test.sh: the benchmark driver failed" >&2; exit 1; }
fi

# The Debian package (about 40 s): with BRAID_TEST_PACKAGE=1, or when its
# build tools are installed already, unless BRAID_TEST_PACKAGE=0.  This
# script runs under the install lock, which package.sh would otherwise take.
if [ "${BRAID_TEST_PACKAGE:-}" = 1 ] || { [ "${BRAID_TEST_PACKAGE:-}" != 0 ] &&
	dpkg -s debhelper postgresql-server-dev-all >/dev/null 2>&1; }; then
	step "Debian package"
	# nocheck: the unit tests the package build would run again ran above
	# on this same tree (or, with 17 and 18 under --pg all, with 15)
	DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }nocheck" BRAID_INSTALL_LOCK_HELD=1 bash scripts/package.sh --pg "$major"
fi
echo "test.sh: all braidsort tests passed on PostgreSQL $major ($(($(date +%s) - t_major)) s)"
