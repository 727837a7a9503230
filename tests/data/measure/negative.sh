#!/bin/sh
# Fixture (test_measure): prints a negative step time.
echo "step_time_s -0.5"
