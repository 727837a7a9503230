"""The checks and the runner the script tests share (test_gpu_check.py,
test_calibrate_cpu.py, test_export_torch.py, test_measure_torch.py): a
failed check prints one FAIL line and exits 1; `sh` runs a command and
checks its exit status; `one_line` checks that a refusal is one line on
stderr without a traceback; `main` runs a file's test_* functions.
`passed` counts the checks that held."""
import os
import shutil
import subprocess
import sys
import time

passed = 0


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    global passed
    if not cond:
        fail(msg)
    passed += 1


def check_eq(got, want, what):
    check(got == want, f"{what}: got {got!r}, expected {want!r}")


def sh(cmd, what, want=0):
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    check(r.returncode == want, f"{what}: want exit {want}, got {r.returncode}: {r.stdout[-2000:]} {r.stderr[-2000:]}")
    return r


def one_line(r, want, what):
    check(r.stderr.count("\n") == 1 and want in r.stderr and "Traceback" not in r.stderr,
          f"{what}: want one line with {want!r}, got {r.stderr!r}")


def main(prog, scope, dplace, tmp=None, setup=None):
    """Runs every test_* function of scope (a test file's globals(), in file
    order, as tests/CMakeLists.txt registers them), or the one sys.argv[2]
    names: `ok NAME (seconds)` for each, then how many checks passed.
    Without an executable dplace it fails with the usage line; an unknown
    name exits 2. setup() runs before the tests; tmp, a folder, is removed
    once all passed."""
    if not dplace or not os.access(dplace, os.X_OK):
        fail(f"usage: {prog}.py DPLACE_BINARY [TEST] (got {dplace!r})")
    only = sys.argv[2] if len(sys.argv) > 2 else None
    tests = [f for name, f in list(scope.items()) if name.startswith("test_") and callable(f)
             and only in (None, name)]
    if not tests:
        print(f"{prog}: no test named {only!r}", file=sys.stderr)
        sys.exit(2)
    t0 = time.time()
    if setup:
        setup()
    for t in tests:
        t1 = time.time()
        t()
        print(f"ok {t.__name__} ({time.time() - t1:.1f} s)")
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{prog}: {passed} checks passed in {time.time() - t0:.1f} s")
