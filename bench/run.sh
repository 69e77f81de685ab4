#!/usr/bin/env bash
# bench/run.sh: the benchmarks' entry command (see docs/benchmarks.md).
#
#   sudo bash bench/run.sh [--onepass|--spill|--sweep|--threads|--concurrency|--realistic|--wlimit|--join|--adaptive]
#                          [--quick] [options of bench.py's workload]
#   sudo bash bench/run.sh --quick          # every mode on small tables (~2.5 min)
#   bash bench/run.sh --report FILES...     # markdown and PNG plots of result files
#
# Installs the driver's Debian packages if missing and runs bench/bench.py
# with the system Python; "bench/run.sh --spill --help" lists a mode's options.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode="" quick=0 args=()
for a in "$@"; do
	case "$a" in
		--onepass|--spill|--sweep|--threads|--concurrency|--realistic|--wlimit|--join|--adaptive|--report) mode=${a#--} ;;
		--quick) quick=1 ;;
		*) args+=("$a") ;;
	esac
done
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
