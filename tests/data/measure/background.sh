#!/bin/sh
# Fixture (test_measure): prints a good result and exits, leaving a process
# in the background that holds stdout; with MEASURE_PIDFILE set, writes its
# pid there. dplace must not wait for it, and must kill it.
sleep 30 &
[ -z "${MEASURE_PIDFILE:-}" ] || echo $! >"$MEASURE_PIDFILE"
echo "step_time_s 0.25"
