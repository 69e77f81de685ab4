#!/usr/bin/env bash
# stage-old-major.sh: put this Debian 12 system's PostgreSQL 15, with
# braidsort built for it from this tree, into a root made by
# scripts/pgroot.sh, for the test that upgrades a 15 cluster with braidsort
# to the root's major with pg_upgrade (test/t/015_pg_upgrade.pl).
#
#	bash scripts/stage-old-major.sh 15 ROOT
#
# No later Debian release ships PostgreSQL 15, so its files are those of
# Debian 12's own packages (postgresql-15, postgresql-client-15), copied to
# the same paths in the root (/usr/lib/postgresql/15, /usr/share/postgresql/15),
# with the shared libraries they need that the root's release no longer
# has (older sonames of ICU, libxml2, OpenLDAP...) from this system in
# /usr/lib/postgresql/15/staged-lib, for LD_LIBRARY_PATH (not LLVM's: the
# tests run without JIT).  The root's own packages are left alone.  Run as
# root on Debian 12.
set -euo pipefail

old=${1:?usage: bash scripts/stage-old-major.sh 15 ROOT}
root=${2:?usage: bash scripts/stage-old-major.sh 15 ROOT}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ "$old" != 15 ]; then
	echo "stage-old-major.sh: only Debian 12's PostgreSQL 15 can be staged" >&2
	exit 2
fi
if [ ! -f "$root/etc/braidsort-pgroot" ]; then
	echo "stage-old-major.sh: $root is not a root made by scripts/pgroot.sh" >&2
	exit 2
fi

bash "$here/scripts/install-deps.sh" --pg 15

# braidsort for 15, built in a copy of the tree and installed aside
work=$(mktemp -d /tmp/braidsort-stage.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/dest"
bash "$here/scripts/copy-tree.sh" "$work/src" /usr/lib/postgresql/15/bin/pg_config
make -s -C "$work/src" PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config >/dev/null
make -s -C "$work/src" PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config install DESTDIR="$work/dest" >/dev/null

# PostgreSQL 15's files as its packages installed them, then braidsort's
rm -rf "$root/usr/lib/postgresql/15" "$root/usr/share/postgresql/15"
tar -C / -cf - usr/lib/postgresql/15 usr/share/postgresql/15 | tar -C "$root" -xf -
tar -C "$work/dest" -cf - . | tar -C "$root" -xf -

# the libraries the root lacks, by soname, until none is missing
lib="$root/usr/lib/postgresql/15/staged-lib"
mkdir -p "$lib"
for round in 1 2 3 4 5 6; do
	missing=$(find "$root/usr/lib/postgresql/15/bin" "$root/usr/lib/postgresql/15/lib" "$lib" \
		-type f \( -perm -u+x -o -name '*.so*' \) ! -name 'llvmjit*' -print0 |
		sed -z "s|^$root||" |
		xargs -0 chroot "$root" env LD_LIBRARY_PATH=/usr/lib/postgresql/15/staged-lib ldd 2>/dev/null |
		awk '/=> not found/ { print $1 }' | sort -u) || true	# (ldd fails on scripts)
	[ -z "$missing" ] && break
	if [ "$round" = 6 ]; then
		echo "stage-old-major.sh: libraries still missing after 5 rounds:" $missing >&2
		exit 1
	fi
	for so in $missing; do
		# (this system's own architecture: amd64)
		path=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ && !found { print $NF; found = 1 }')
		if [ -z "$path" ]; then
			echo "stage-old-major.sh: $so is not on this system either" >&2
			exit 1
		fi
		cp -L "$path" "$lib/$so"
	done
done
echo "Debian 12's PostgreSQL 15 and braidsort $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$here/braidsort.control"), staged by scripts/stage-old-major.sh" \
	>"$root/usr/lib/postgresql/15/staged-by-braidsort"
echo "stage-old-major.sh: PostgreSQL 15 staged in $root ($(ls "$lib" | wc -l) libraries from this system)"
