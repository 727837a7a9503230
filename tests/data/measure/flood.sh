#!/bin/sh
# Fixture (test_measure): floods stdout without end.
exec yes "step_time_s 1"
