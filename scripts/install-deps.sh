#!/usr/bin/env bash
# install-deps.sh: install what braidsort needs to build, test and run (as
# root): a PostgreSQL server and its headers, libpmem, the TAP test modules,
# a C toolchain, the locales the tests sort under.  Safe to run repeatedly.
#
#	bash scripts/install-deps.sh [--pg MAJOR]
#
# MAJOR is 15 (the default) on Debian 12; inside a root made by
# scripts/pgroot.sh it is that root's major, 17 or 18.
set -euo pipefail

major=15
if [ -f /etc/braidsort-pgroot ]; then
	major=$(cat /etc/braidsort-pgroot)
fi
if [ "${1:-}" = "--pg" ]; then
	if [ "${2:-}" != "$major" ]; then
		echo "install-deps.sh: PostgreSQL ${2:-?} is not this system's (it has $major; see scripts/pgroot.sh)" >&2
		exit 1
	fi
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: run as root (it installs Debian packages)" >&2
	exit 1
fi

PKGS="postgresql-$major postgresql-server-dev-$major libpmem-dev python3-psycopg \
	libicu-dev libipc-run-perl build-essential util-linux mount locales postgresql-$major-pgaudit"

# from 18 on, Debian ships the server's JIT as its own package, recommended
# by the server's
if [ "$major" -ge 18 ]; then
	PKGS="$PKGS postgresql-$major-jit"
fi

missing=""
for p in $PKGS; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "install-deps.sh: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq $missing >/dev/null
fi

# libc locales the tests sort under (collations other than C/POSIX)
want_locales="en_US.UTF-8 sv_SE.UTF-8 de_DE.UTF-8"
need_gen=0
for l in $want_locales; do
	norm=$(echo "$l" | sed 's/UTF-8/utf8/')
	locale -a 2>/dev/null | grep -qx "$norm" && continue
	sed -i "s/^# *\($l UTF-8\)/\1/" /etc/locale.gen
	grep -q "^$l UTF-8" /etc/locale.gen || echo "$l UTF-8" >>/etc/locale.gen
	need_gen=1
done
if [ $need_gen -eq 1 ]; then
	echo "install-deps.sh: generating locales $want_locales"
	locale-gen >/dev/null
fi
