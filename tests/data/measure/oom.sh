#!/bin/sh
# Fixture (test_measure): reports out of memory with a reason.
echo "allocating" >&2
echo "oom gpu:1 needs 13.2 GiB, has 11.2 GiB"
