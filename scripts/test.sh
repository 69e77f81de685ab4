#!/usr/bin/env bash
# test.sh: the whole braidsort test suite, from a fresh Debian 12 machine.
#
# Run as root from the repository: installs dependencies, builds and
# installs braidsort, runs the pure-C unit tests, then, as the postgres
# user, the pg_regress suite and the TAP tests against temporary servers
# they start themselves.  Exits 0 only if everything passed.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

bash scripts/install-deps.sh

echo "== the tree agrees with itself (versions, layers, docs/design.md's names)"
python3 scripts/check-tree.py

PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
export PG_CONFIG

echo "== build and install"
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

echo "== unit tests"
make -s unittest PG_CONFIG=$PG_CONFIG

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

# tmpfs mounts standing in for DAX devices: a roomy one, and a tiny one the
# full-device test fills up (skipped where mounting is not allowed)
dax_env=()
mkdir -p "$work/dax" "$work/tinydax"
if mount -t tmpfs -o size=1G,mode=0700 tmpfs "$work/dax" 2>/dev/null; then
	mounts+=("$work/dax")
	dax_env+=("BRAID_TEST_DAX=$work/dax")
fi
if mount -t tmpfs -o size=2M,mode=0700 tmpfs "$work/tinydax" 2>/dev/null; then
	mounts+=("$work/tinydax")
	dax_env+=("BRAID_TEST_TINY_DAX=$work/tinydax")
fi
chown -R postgres: "$work"

echo "== regression and TAP tests (as postgres)"
status=0
runuser -u postgres -- env "${dax_env[@]}" make -C "$work/src" -s installcheck PG_CONFIG=$PG_CONFIG || status=$?
if [ $status -ne 0 ]; then
	for f in "$work/src/regression.diffs" "$work/src"/tmp_check/log/regress_log_*; do
		[ -f "$f" ] && { echo "---- $f"; tail -n 200 "$f"; }
	done
	echo "test.sh: FAILED" >&2
	exit $status
fi
echo "== benchmark driver (bench/run.sh --quick, then its report)"
bash bench/run.sh --quick --no-build --out "$work/bench" &&
	bash bench/run.sh --report --out "$work/bench" "$work/bench"/*.json >/dev/null ||
	{ echo "test.sh: the benchmark driver failed" >&2; exit 1; }

# The Debian package (about 40 s): with BRAID_TEST_PACKAGE=1, or when its
# build tools are installed already, unless BRAID_TEST_PACKAGE=0.  This
# script runs under the install lock, which package.sh would otherwise take.
if [ "${BRAID_TEST_PACKAGE:-}" = 1 ] || { [ "${BRAID_TEST_PACKAGE:-}" != 0 ] &&
	dpkg -s debhelper postgresql-server-dev-all >/dev/null 2>&1; }; then
	echo "== Debian package"
	BRAID_INSTALL_LOCK_HELD=1 bash scripts/package.sh
fi
echo "test.sh: all braidsort tests passed"
