#!/usr/bin/env bash
# package.sh: build the Debian package postgresql-N-braidsort and check it.
#
# Run as root on Debian 12 from the repository.  The package is built for
# PostgreSQL 15, Debian 12's own; with --pg 17 or --pg 18 it is built and
# checked inside the Debian 13 or Debian unstable root that
# scripts/pgroot.sh makes, against that release's PostgreSQL (pg_buildext
# builds postgresql-N-braidsort for each major in debian/pgversions whose
# server headers are installed, and "pg_buildext updatecontrol" names the
# packages in debian/control after them).  It installs the build
# tools, builds the package with "dpkg-buildpackage -us -uc -b" in a clean
# copy of the tree (the working tree is left alone; the copy holds what git
# tracks plus new files it does not ignore), then installs the package with
# dpkg and checks it in a throw-away cluster: initdb as postgres with
# braidsort preloaded, CREATE EXTENSION, a forced sort (EXPLAIN shows
# Custom Scan (BraidSort), rows as PostgreSQL's sort orders them), a
# spilling one, the views.  Afterwards the package is removed and whatever
# braidsort files were installed before (by "make install") are put back,
# so the system is as it was, unless --keep is given.
#
#   bash scripts/package.sh [--pg MAJOR] [--keep | --build-only]
#
#   --keep        leave the package installed (a later "make install" would
#                 overwrite its files behind dpkg's back)
#   --build-only  build the package, do not install or check it
#
# The .deb files are copied to $BRAID_PKG_OUT (default
# /tmp/braidsort-packages).  The system PostgreSQL's directories are shared
# by everyone on the machine: the install and check run under
# "flock -o /tmp/braidsort-install.lock", unless BRAID_INSTALL_LOCK_HELD=1
# says the caller holds it already (scripts/test.sh does).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
self="$here/scripts/package.sh"
LOCK=/tmp/braidsort-install.lock
OUT=${BRAID_PKG_OUT:-/tmp/braidsort-packages}

if [ "$(id -u)" -ne 0 ]; then
	echo "package.sh: run as root (it installs Debian packages)" >&2
	exit 1
fi

major=15
if [ -f /etc/braidsort-pgroot ]; then
	major=$(cat /etc/braidsort-pgroot)
fi
if [ "${1:-}" = "--pg" ]; then
	want=${2:?usage: bash scripts/package.sh [--pg MAJOR] [--keep | --build-only]}
	shift 2
	if [ "$want" != "$major" ]; then
		if [ -f /etc/braidsort-pgroot ]; then
			echo "package.sh: this root has PostgreSQL $major, not $want" >&2
			exit 2
		fi
		# build and check inside that major's root; its .deb files come
		# back to $OUT
		root=$(bash "$here/scripts/pgroot.sh" "$want")
		bash "$here/scripts/pgroot.sh" "$want" --in-tree scripts/package.sh --pg "$want" "$@"
		mkdir -p "$OUT"
		# (BRAID_PKG_OUT, if set, is passed into the root: the same path there)
		cp "$root$OUT"/postgresql-"$want"-braidsort_*.deb "$OUT"/
		echo "package.sh: copied the PostgreSQL $want package to $OUT"
		exit 0
	fi
fi
PGBIN=/usr/lib/postgresql/$major/bin
PKG=postgresql-$major-braidsort

# ---------------------------------------------------------------------
# check_deb DEB: install DEB, check it in a throw-away cluster, and put the
# system back as it was.  Runs under the install lock.
# ---------------------------------------------------------------------
check_deb() {
	# not local: restore() runs from the EXIT trap, after a failed return
	deb=$1
	keep=$2
	was_installed=0
	backup=""
	cluster=""
	checked_from=$(date +%s)
	work=$(mktemp -d /tmp/braidsort-pkgcheck.XXXXXX)
	chmod 0711 "$work" # the cluster below is the postgres user's

	if dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q "install ok installed"; then
		was_installed=1
	fi

	restore() {
		if [ -n "$cluster" ] && [ -f "$cluster/data/postmaster.pid" ]; then
			runuser -u postgres -- $PGBIN/pg_ctl -D "$cluster/data" -m immediate -w stop >/dev/null 2>&1 || true
		fi
		if [ "$keep" != 1 ] && [ $was_installed = 0 ] &&
			dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q "installed"; then
			echo "package.sh: removing $PKG"
			dpkg --purge "$PKG" >/dev/null
			if [ -n "$backup" ] && [ -s "$backup" ]; then
				echo "package.sh: putting back the braidsort files installed before"
				tar -xpf "$backup" -C /
			fi
		fi
		rm -rf "$work"
	}
	trap restore EXIT

	# The files "make install" put where the package installs its own are
	# not owned by any package: dpkg overwrites them, and removes them
	# with the package.  Keep a copy to put back.
	if [ $was_installed = 0 ]; then
		backup="$work/before.tar"
		dpkg-deb --fsys-tarfile "$deb" | tar -tf - | sed -n 's|^\./|/|p' |
			while read -r f; do
				if [ -f "$f" ]; then printf '%s\n' "${f#/}"; fi
			done >"$work/before.list"
		if [ -s "$work/before.list" ]; then
			tar --format=posix -cpf "$backup" -C / -T "$work/before.list"
		fi
	fi

	echo "== installing $(basename "$deb")"
	if ! dpkg -i "$deb" >"$work/dpkg.log" 2>&1; then
		# missing dependencies: let apt bring them in and finish
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -f >>"$work/dpkg.log" 2>&1 || {
			cat "$work/dpkg.log" >&2
			return 1
		}
	fi
	# every file as the package shipped it
	if [ -n "$(dpkg -V "$PKG" 2>&1)" ]; then
		dpkg -V "$PKG" >&2 || true
		echo "package.sh: the installed files differ from the package's" >&2
		return 1
	fi

	echo "== checking it in a throw-away cluster"
	cluster="$work/cluster"
	mkdir -p "$cluster"
	chown postgres: "$cluster"
	local port
	port=$((20000 + RANDOM % 10000))
	runuser -u postgres -- $PGBIN/initdb -D "$cluster/data" --no-locale -E UTF8 -A trust -N >/dev/null
	cat >>"$cluster/data/postgresql.conf" <<EOF
shared_preload_libraries = 'braidsort'
port = $port
listen_addresses = ''
unix_socket_directories = '$cluster'
max_parallel_workers_per_gather = 0
EOF
	runuser -u postgres -- $PGBIN/pg_ctl -D "$cluster/data" -l "$cluster/server.log" -w start >/dev/null

	psql_check() {
		runuser -u postgres -- $PGBIN/psql -X -q -At -h "$cluster" -p "$port" -d postgres \
			-v ON_ERROR_STOP=1 "$@"
	}

	local want got plan sorted_braid sorted_pg
	want=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$here/braidsort.control")
	got=$(psql_check -c "CREATE EXTENSION braidsort" \
		-c "SELECT extversion FROM pg_extension WHERE extname = 'braidsort'")
	if [ "$got" != "$want" ]; then
		echo "package.sh: CREATE EXTENSION gave version '$got', braidsort.control says '$want'" >&2
		return 1
	fi
	psql_check -c "CREATE TABLE t AS SELECT (random() * 1000)::int AS k, md5(i::text) AS v
	                 FROM generate_series(1, 200000) i" -c "ANALYZE t"

	plan=$(psql_check -c "SET braidsort.force = on" -c "EXPLAIN (COSTS OFF) SELECT * FROM t ORDER BY k, v")
	if ! grep -q "Custom Scan (BraidSort)" <<<"$plan"; then
		echo "package.sh: a forced sort did not run through braidsort:" >&2
		echo "$plan" >&2
		return 1
	fi
	sorted_braid=$(psql_check -c "SET braidsort.force = on" -c "SELECT * FROM t ORDER BY k, v" | md5sum)
	sorted_pg=$(psql_check -c "SET braidsort.enable = off" -c "SELECT * FROM t ORDER BY k, v" | md5sum)
	if [ "$sorted_braid" != "$sorted_pg" ]; then
		echo "package.sh: braidsort's rows differ from PostgreSQL's sort" >&2
		return 1
	fi

	# a sort larger than its budget: runs spill through libpmem and merge
	plan=$(psql_check -c "SET braidsort.force = on" -c "SET braidsort.work_mem = '1MB'" \
		-c "SET braidsort.sort_mode = mergepass" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT * FROM t ORDER BY k, v")
	if ! grep -q "Sort Method: braid mergepass" <<<"$plan"; then
		echo "package.sh: a sort over its budget did not spill:" >&2
		echo "$plan" >&2
		return 1
	fi
	sorted_braid=$(psql_check -c "SET braidsort.force = on" -c "SET braidsort.work_mem = '1MB'" \
		-c "SET braidsort.sort_mode = mergepass" -c "SELECT * FROM t ORDER BY k, v" | md5sum)
	if [ "$sorted_braid" != "$sorted_pg" ]; then
		echo "package.sh: braidsort's spilled rows differ from PostgreSQL's sort" >&2
		return 1
	fi

	got=$(psql_check -c "SELECT value FROM braidsort.stats
	                     WHERE scope = 'global' AND counter = 'sorts_mergepass'")
	if ! [ "${got:-0}" -ge 1 ] 2>/dev/null; then
		echo "package.sh: braidsort.stats counted no MergePass sort (got '$got')" >&2
		return 1
	fi
	if ! runuser -u postgres -- $PGBIN/psql -X -At -h "$cluster" -p "$port" -d postgres \
		-c "SELECT backend_type FROM pg_stat_activity" | grep -qx "braidsort scheduler"; then
		echo "package.sh: no braidsort scheduler worker" >&2
		return 1
	fi
	runuser -u postgres -- $PGBIN/pg_ctl -D "$cluster/data" -m fast -w stop >/dev/null
	echo "package.sh: the installed package works (extension $want, forced and spilling sorts)"
	trap - EXIT
	restore
	echo "package.sh: install and check took $(($(date +%s) - checked_from)) s"
}

if [ "${1:-}" = "--check-deb" ]; then
	# re-entered under the install lock (see below)
	check_deb "$2" "$3"
	exit 0
fi

keep=0
build_only=0
case "${1:-}" in
	--keep) keep=1 ;;
	--build-only) build_only=1 ;;
	"") ;;
	*)
		echo "usage: bash scripts/package.sh [--pg MAJOR] [--keep | --build-only]" >&2
		exit 2
		;;
esac

start=$(date +%s)

# PostgreSQL, libpmem and the rest braidsort needs, then the packaging
# tools.  postgresql-server-dev-all must match the installed
# postgresql-common exactly: take that version rather than upgrade the
# server's packages.
bash "$here/scripts/install-deps.sh" --pg "$major"
tools="dpkg-dev debhelper fakeroot libpmem-dev"
missing=""
for p in $tools postgresql-server-dev-all; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	common=$(dpkg-query -W -f='${Version}' postgresql-common)
	missing=${missing/postgresql-server-dev-all/postgresql-server-dev-all=$common}
	echo "package.sh: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# A clean copy of the tree: what git tracks (as in the working tree) and
# files it does not ignore, without build products.
work=$(mktemp -d /tmp/braidsort-pkg.XXXXXX)
trap 'rm -rf "$work"' EXIT
src="$work/braidsort"
bash "$here/scripts/copy-tree.sh" "$src" "$PGBIN/pg_config"

# debian/control names the packages for the majors pg_buildext builds
# here (postgresql-15-braidsort as committed)
(cd "$src" && pg_buildext updatecontrol >/dev/null)

echo "== dpkg-buildpackage -us -uc -b"
if ! (cd "$src" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
	tail -n 60 "$work/build.log" >&2
	echo "package.sh: dpkg-buildpackage failed (log above)" >&2
	exit 1
fi
# warnings fail the build, but for two that come from the release, not
# from braidsort: dpkg-shlibdeps's about the usr-merge diversions every
# system from Debian 13 on has, and the substitution variable
# postgresql:Breaks, which pg_buildext defines from Debian 13 on only
warnings=$(grep "warning:" "$work/build.log" |
	grep -v -e "dpkg-shlibdeps: warning: diversions involved" \
		-e 'substitution variable ${postgresql:Breaks}' || true)
if [ -n "$warnings" ]; then
	echo "$warnings" >&2
	echo "package.sh: the package build produced warnings" >&2
	exit 1
fi
version=$(cd "$src" && dpkg-parsechangelog -S Version)
deb=$(ls "$work/${PKG}_${version}_"*.deb)
mkdir -p "$OUT"
cp "$work"/*.deb "$OUT"/
deb="$OUT/$(basename "$deb")"
echo "package.sh: built $deb ($(($(date +%s) - start)) s)"
dpkg-deb -f "$deb" Package Version Depends

if [ $build_only = 1 ]; then
	exit 0
fi

if [ "${BRAID_INSTALL_LOCK_HELD:-0}" = 1 ]; then
	bash "$self" --check-deb "$deb" "$keep"
else
	flock -o "$LOCK" bash "$self" --check-deb "$deb" "$keep"
fi
echo "package.sh: done in $(($(date +%s) - start)) s, waits for the install lock included"
