#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite twice: the normal build and
# the AddressSanitizer + UndefinedBehaviorSanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup.sh --sanitize
echo "== tests: normal build" >&2
(cd build && ctest --output-on-failure -j2)
echo "== tests: ASan + UBSan build" >&2
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j2)
