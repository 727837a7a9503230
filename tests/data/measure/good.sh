#!/bin/sh
# Fixture (test_measure): a well-behaved measuring command. It checks that
# the placement file arrives as $1 and as DPLACE_PLACEMENT, logs a little on
# both streams, and prints the result as the last line of stdout.
[ "$#" -eq 1 ] || { echo "good.sh: expected 1 argument, got $#" >&2; exit 3; }
[ "$1" = "${DPLACE_PLACEMENT:-}" ] || { echo "good.sh: \$1 '$1' != DPLACE_PLACEMENT '${DPLACE_PLACEMENT:-}'" >&2; exit 4; }
[ -r "$1" ] || { echo "good.sh: cannot read $1" >&2; exit 5; }
read -r line || true # stdin is /dev/null: nothing to read, no wait
[ -z "${line:-}" ] || { echo "good.sh: stdin is not empty" >&2; exit 6; }
echo "warming up" >&2
echo "measured 10 steps"
printf '  step_time_s   %s  \r\n\n' "${MEASURE_TIME:-0.125}"
