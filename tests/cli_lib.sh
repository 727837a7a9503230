# Shared harness of the CLI tests (sourced by test_cli*.sh): a temporary
# folder $T removed on exit, pass/fail counters, and
#   expect STATUS PATTERN -- CMD...   exit status and a stdout/stderr pattern
#   absent FILE                       FILE must not exist (nothing written after an error)
#   finish NAME                       prints the counts; exit status 1 on any failure
# Each case is a function test_NAME (its body is not indented, so that the
# checks read as one script) run by a line
#   test_run test_NAME                       or
#   test_run_datasets test_NAME DATASET      for one that reads ../shared/datasets/DATASET
# before `finish`; CMake registers one CTest per such line (tests/CMakeLists.txt).
# The script runs every case, or the one named by its second argument (an
# unknown name fails); a case whose dataset is missing is skipped, and a
# script asked for that case alone exits 77.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
only=${2:-}
found=0
skipped=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }

expect() {
  want=$1; pat=$2; shift 3
  "$@" >"$T/out" 2>"$T/err"; got=$?
  if [ "$got" != "$want" ]; then bad "$* -> exit $got, expected $want"; cat "$T/out" "$T/err" >&2; return; fi
  if [ -n "$pat" ] && ! grep -q -- "$pat" "$T/out" "$T/err"; then bad "$* -> output lacks '$pat'"; cat "$T/out" "$T/err" >&2; return; fi
  ok
}

absent() { [ -e "$1" ] && bad "$1 written after an error" || ok; }

test_run() {
  [ -n "$only" ] && [ "$only" != "$1" ] && return
  found=1
  failed_before=$fail
  "$1"
  [ "$fail" = "$failed_before" ] && echo "ok $1" || echo "FAILED $1"
}

test_run_datasets() {
  [ -n "$only" ] && [ "$only" != "$1" ] && return
  dir="${DPLACE_SHARED:-../../shared}/datasets/$2"
  if [ ! -d "$dir" ]; then
    found=1
    skipped=1
    echo "skip: $1: no dataset at $dir (set DPLACE_SHARED to the shared folder)"
    return
  fi
  test_run "$1"
}

finish() {
  if [ -n "$only" ] && [ "$found" = 0 ]; then
    echo "$1: no test case \"$only\"" >&2
    exit 2
  fi
  echo "$1: $pass passed, $fail failed"
  [ "$fail" = 0 ] || exit 1
  [ -n "$only" ] && [ "$skipped" = 1 ] && exit 77
  exit 0
}
