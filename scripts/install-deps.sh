#!/usr/bin/env bash
# install-deps.sh: install what braidsort needs to build, test and run on
# Debian 12 (as root): PostgreSQL 15 server and headers, libpmem, the TAP
# test modules, a C toolchain.  Safe to run repeatedly.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: run as root (it installs Debian packages)" >&2
	exit 1
fi

PKGS="postgresql-15 postgresql-server-dev-15 postgresql-contrib libpmem-dev \
	libicu-dev libipc-run-perl build-essential util-linux"

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
