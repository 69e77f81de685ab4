#!/usr/bin/env bash
# pgroot.sh: a Debian system for a PostgreSQL major that Debian 12 does not
# ship, to build and test braidsort against it as a DBA on that release has
# it: Debian's own packages of that release, in a root filesystem made with
# mmdebstrap from deb.debian.org.
#
#	bash scripts/pgroot.sh MAJOR            print the root's path (made once)
#	bash scripts/pgroot.sh MAJOR --enter CMD...
#	                                        run CMD as root inside it, with
#	                                        /proc, /sys and /dev mounted
#	bash scripts/pgroot.sh MAJOR --in-tree SCRIPT ARGS...
#	                                        copy this tree to /build/braidsort
#	                                        inside it (afresh) and run
#	                                        "bash SCRIPT ARGS" there
#
# MAJOR 17: Debian 13 (trixie); 18: Debian unstable (sid).  (No Debian
# release ships 16.)  The root holds the server and its headers, the build
# tools and what the test suite and the package check need; it is made under
# ${BRAID_ROOTS:-/var/lib/braidsort/roots}/<suite> the first time (about a
# minute) and reused after.  Run as root on Debian 12.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "pgroot.sh: run as root (it makes and enters a root filesystem)" >&2
	exit 1
fi
major=${1:?usage: bash scripts/pgroot.sh MAJOR [--enter CMD...]}
shift
# (from 18 on, Debian ships the server's JIT as its own package, which apt
# installs with the server as a recommendation)
extra=""
case "$major" in
	17) suite=trixie ;;
	18) suite=sid extra=postgresql-18-jit ;;
	*)
		echo "pgroot.sh: no Debian release to take PostgreSQL $major from (17: trixie, 18: sid; 15 is Debian 12's own)" >&2
		exit 1
		;;
esac
roots=${BRAID_ROOTS:-/var/lib/braidsort/roots}
root="$roots/$suite"
mirror=${BRAID_DEBIAN_MIRROR:-http://deb.debian.org/debian}

packages="postgresql-$major $extra postgresql-server-dev-$major postgresql-$major-pgaudit \
libpmem-dev libicu-dev build-essential libipc-run-perl locales util-linux mount \
python3-psycopg python3-matplotlib debhelper dpkg-dev fakeroot postgresql-server-dev-all \
git ca-certificates"

if [ ! -f "$root/etc/braidsort-pgroot" ]; then
	if ! command -v mmdebstrap >/dev/null; then
		echo "pgroot.sh: installing mmdebstrap" >&2
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
	fi
	echo "pgroot.sh: making a $suite root for PostgreSQL $major in $root" >&2
	rm -rf "$root"
	mkdir -p "$roots"
	# (an unstable suite's Release file may have expired on a mirror's
	# snapshot; the archive's signature is still checked)
	# shellcheck disable=SC2086
	mmdebstrap --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
		--include="$(echo $packages | tr ' ' ',')" \
		"$suite" "$root" "$mirror" >&2
	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	echo "$major" >"$root/etc/braidsort-pgroot"
fi

case "${1:-}" in
	--enter) shift ;;
	--in-tree)
		shift
		here=$(cd "$(dirname "$0")/.." && pwd)
		rm -rf "$root/build/braidsort"
		bash "$here/scripts/copy-tree.sh" "$root/build/braidsort"
		if git -C "$here" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
			# the copy has no git: say which commit it is (bench results
			# record it; a second line says the tree had changes).  In
			# variables, not a pipe into head: with pipefail, git killed by
			# SIGPIPE would end this script
			commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || true)
			changes=$(git -C "$here" status --porcelain --untracked-files=no 2>/dev/null || true)
			{
				echo "$commit"
				if [ -n "$changes" ]; then echo "uncommitted changes"; fi
			} >"$root/build/braidsort/.source-commit"
		fi
		script=${1:?usage: bash scripts/pgroot.sh MAJOR --in-tree SCRIPT [ARGS...]}
		shift
		set -- bash -c 'cd /build/braidsort && exec bash "$@"' bash "$script" "$@"
		;;
	*)
		echo "$root"
		exit 0
		;;
esac

# /proc, /sys and /dev (with /dev/shm and /dev/pts) for the command,
# unmounted again whatever happens
mounted=()
cleanup() {
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -R "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" 2>/dev/null || true
	done
}
trap cleanup EXIT
mount -t proc proc "$root/proc"
mounted+=("$root/proc")
mount --rbind /sys "$root/sys"
mounted+=("$root/sys")
mount --make-rslave "$root/sys"
mount --rbind /dev "$root/dev"
mounted+=("$root/dev")
mount --make-rslave "$root/dev"
# a clean environment, but braidsort's own settings (BRAID_*) and a proxy
# for apt pass through
braid_env=()
while IFS= read -r v; do braid_env+=("$v"); done < <(env | grep -E '^(BRAID_|https?_proxy=|no_proxy=)' || true)
status=0
chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	"${braid_env[@]}" "$@" || status=$?
exit $status
