#!/bin/sh
# Fixture (test_measure): fails with status 1 after a result-looking line;
# the reason is the last line of stderr.
echo "step_time_s 1.0"
echo "Traceback (most recent call last):" >&2
printf 'RuntimeError: CUDA error: device-side assert\ttriggered\n\n' >&2
exit 1
