"""The checks the script tests share (test_gpu_check.py,
test_calibrate_cpu.py): a failed check prints one FAIL line and exits 1;
`sh` runs a command and checks its exit status; `one_line` checks that a
refusal is one line on stderr without a traceback. `passed` counts the
checks that held."""
import os
import subprocess
import sys

passed = 0


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    global passed
    if not cond:
        fail(msg)
    passed += 1


def sh(cmd, what, want=0):
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    check(r.returncode == want, f"{what}: want exit {want}, got {r.returncode}: {r.stdout[-2000:]} {r.stderr[-2000:]}")
    return r


def one_line(r, want, what):
    check(r.stderr.count("\n") == 1 and want in r.stderr and "Traceback" not in r.stderr,
          f"{what}: want one line with {want!r}, got {r.stderr!r}")
