#!/usr/bin/env bash
# copy-tree.sh: a clean copy of this checkout, without build products.
#
#	bash scripts/copy-tree.sh DEST [PG_CONFIG]
#
# Copies what git tracks (as it is in the working tree) and the files git
# does not ignore into DEST (created if missing).  Without git (a tree
# copied without .git), a plain copy, cleaned with "make clean" when a
# PG_CONFIG is given.  Used where the suite, the packaging and the roots of
# other majors build from a copy: scripts/package.sh, scripts/pgroot.sh
# --in-tree, scripts/stage-old-major.sh.
set -euo pipefail

dest=${1:?usage: bash scripts/copy-tree.sh DEST [PG_CONFIG]}
pg_config=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)

mkdir -p "$dest"
if git -C "$here" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -C "$here" ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			if [ -e "$here/$f" ]; then printf '%s\0' "$f"; fi
		done |
		tar -C "$here" --null -T - -cf - | tar -C "$dest" -xf -
else
	cp -a "$here/." "$dest"
	if [ -n "$pg_config" ]; then
		make -s -C "$dest" clean PG_CONFIG="$pg_config" >/dev/null
	fi
fi
