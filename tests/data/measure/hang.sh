#!/bin/sh
# Fixture (test_measure): hangs, with a grandchild in its process group.
# With MEASURE_PIDFILE set, writes the grandchild's pid there first.
# With MEASURE_NOTERM set, ignores SIGTERM (only SIGKILL stops it).
[ -z "${MEASURE_NOTERM:-}" ] || trap '' TERM
sleep 30 &
[ -z "${MEASURE_PIDFILE:-}" ] || echo $! >"$MEASURE_PIDFILE"
echo "started the step" >&2
sleep 30
echo "step_time_s 1"
