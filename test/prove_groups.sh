#!/bin/sh
# prove_groups.sh: PGXS's prove, in two groups, as the Makefile asks.
#
#	prove_groups.sh PROVE [ARGS...] [--alone TESTS...] [--together TESTS...]
#
# Runs PROVE with ARGS over the tests after --alone, one at a time, then
# over those after --together, PROVE_JOBS (default 2) at a time; the exit
# status is 0 only if both passed.  Without the markers (PROVE_TESTS given
# on make's command line) it runs PROVE with every argument as it is.  It
# stands in for PROVE inside PGXS's prove_installcheck, so the TAP tests
# still run after the regression and isolation tests, with PGXS's
# environment, in one tmp_check.
prove=$1
shift
flags=""
alone=""
together=""
group=flags
for a in "$@"; do
	case "$a" in
		--alone) group=alone ;;
		--together) group=together ;;
		*)
			case $group in
				flags) flags="$flags $a" ;;
				alone) alone="$alone $a" ;;
				together) together="$together $a" ;;
			esac
			;;
	esac
done
if [ -z "$alone$together" ]; then
	exec $prove "$@"
fi
status=0
if [ -n "$alone" ]; then
	# shellcheck disable=SC2086
	$prove $flags $alone || status=$?
fi
if [ -n "$together" ]; then
	# shellcheck disable=SC2086
	$prove $flags -j"${PROVE_JOBS:-2}" $together || status=$?
fi
exit $status
