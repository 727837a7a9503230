# Shared harness of the CLI tests (sourced by test_cli*.sh): a temporary
# folder $T removed on exit, pass/fail counters, and
#   expect STATUS PATTERN -- CMD...   exit status and a stdout/stderr pattern
#   absent FILE                       FILE must not exist (nothing written after an error)
#   finish NAME                       prints the counts; exit status 1 on any failure
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
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

finish() {
  echo "$1: $pass passed, $fail failed"
  [ "$fail" = 0 ]
}
