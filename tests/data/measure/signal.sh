#!/bin/sh
# Fixture (test_measure): dies by a signal (SIGSEGV sent to itself, with
# core dumps off so that no core file lands in tests/).
ulimit -c 0 2>/dev/null
echo "about to crash" >&2
kill -SEGV $$
sleep 5
