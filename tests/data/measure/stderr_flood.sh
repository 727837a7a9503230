#!/bin/sh
# Fixture (test_measure): writes 2 MB of logs to stderr, then a good result:
# stderr is drained and only its tail kept, so this is a good sample.
head -c 2000000 /dev/zero | tr '\0' 'x' >&2
echo "last log line" >&2
echo "step_time_s 0.5"
