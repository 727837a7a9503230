#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite twice: the normal build and
# the AddressSanitizer + UndefinedBehaviorSanitizer build, with a smoke run
# of every fuzz target (clang + libFuzzer, a few seconds each; docs/fuzzing.md)
# between them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup.sh --sanitize
echo "== tests: normal build" >&2
(cd build && ctest --output-on-failure -j2)
echo "== fuzz smoke run: every reader, ${DPLACE_FUZZ_SMOKE_S:-3} s each" >&2
scripts/fuzz.sh smoke "${DPLACE_FUZZ_SMOKE_S:-3}"
# last, so that the run closes on CTest's summary line
echo "== tests: ASan + UBSan build" >&2
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j2)
