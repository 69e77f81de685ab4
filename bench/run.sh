#!/usr/bin/env bash
# bench/run.sh: the benchmarks' entry command (see docs/benchmarks.md).
#
#   sudo bash bench/run.sh [--onepass|--spill|--sweep|--threads|--concurrency|--realistic|--wlimit|--join|--adaptive]
#                          [--quick] [options of bench.py's workload]
#   sudo bash bench/run.sh --quick          # every mode on small tables (~2.5 min)
#   bash bench/run.sh --report FILES...     # markdown and PNG plots of result files
#   sudo bash bench/run.sh --pg 18 --spill  # against another major's PostgreSQL, in the
#                                           # Debian root scripts/pgroot.sh makes for it
#
# Installs the driver's Debian packages if missing and runs bench/bench.py
# with the system Python; "bench/run.sh --spill --help" lists a mode's options.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode="" quick=0 args=() pg="" out="$here/results" prev=""
for a in "$@"; do
	if [ "$prev" = --pg ]; then pg=$a; prev=""; continue; fi
	if [ "$prev" = --out ]; then out=$a; fi
	prev=$a
	case "$a" in
		--onepass|--spill|--sweep|--threads|--concurrency|--realistic|--wlimit|--join|--adaptive|--report) mode=${a#--} ;;
		--quick) quick=1 ;;
		--pg) ;;
		*) args+=("$a") ;;
	esac
done
this=15
[ -f /etc/braidsort-pgroot ] && this=$(cat /etc/braidsort-pgroot)
if [ -n "$pg" ] && [ "$pg" != "$this" ]; then
	# in that major's root, on a copy of this tree; the results come back
	# to --out (bench/results by default)
	root=$(bash "$here/../scripts/pgroot.sh" "$pg")
	rm -rf "$root/build/bench-out"
	drop=() skip=0
	for a in "$@"; do
		if [ $skip = 1 ]; then skip=0; continue; fi
		case "$a" in --pg|--out) skip=1 ;; *) drop+=("$a") ;; esac
	done
	bash "$here/../scripts/pgroot.sh" "$pg" --in-tree bench/run.sh "${drop[@]}" --out /build/bench-out
	mkdir -p "$out"
	cp "$root/build/bench-out"/* "$out"/
	echo "run.sh: results of PostgreSQL $pg copied to $out"
	exit 0
fi
if [ -z "$mode" ]; then mode=$([ $quick = 1 ] && echo quick || echo onepass)
elif [ $quick = 1 ]; then args+=(--quick); fi
missing=""
/usr/bin/python3 -c 'import psycopg' 2>/dev/null || missing+=" python3-psycopg"
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || missing+=" python3-matplotlib"
if [ -n "$missing" ]; then
	[ "$(id -u)" = 0 ] || { echo "run.sh: needs$missing; run as root to install it" >&2; exit 1; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null; }
fi
exec /usr/bin/python3 "$here/bench.py" "$mode" "${args[@]+"${args[@]}"}"
