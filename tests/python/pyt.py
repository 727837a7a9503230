"""The runner the Python package's tests share (tests/python/test_py_*.py).

A test program runs every `def test_x():` of its module, or the one its last argument names, and exits 0
when they pass, 1 on the first failure (its message and traceback on stderr), 2 for an unknown name, and
77 (skipped) when the dplace module was not built into $DPLACE_PYTHON_DIR (CTest sets it to the build's
python/ folder; without it, the dplace on sys.path is tested). Each function runs alone: no state from an
earlier one. pytest runs the same files (tests/python/conftest.py points it at the build); a skip is then
pytest's.
"""
import os
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def skip(why):
    """Skips the test (exit 77), or under pytest the test or the module being collected."""
    if "pytest" in sys.modules:
        import pytest

        pytest.skip(why, allow_module_level=True)
    print(f"skipped: {why}")
    sys.exit(77)


def import_dplace():
    """The dplace package under test; exits 77 when the module was not built."""
    d = os.environ.get("DPLACE_PYTHON_DIR")
    if d:
        pkg = os.path.join(d, "dplace")
        if not os.path.isdir(pkg) or not any(f.startswith("_dplace") and f.endswith(".so") for f in os.listdir(pkg)):
            skip(f"the dplace module was not built into {pkg} (needs python3-dev and python3-numpy; "
                 "sanitized builds do not build it)")
        sys.path.insert(0, d)
    try:
        import dplace
    except ImportError as e:
        skip(f"import dplace failed: {e} (build it into build/, or set DPLACE_PYTHON_DIR to a build's python/ "
             "folder)")
    if d and not os.path.abspath(dplace.__file__).startswith(os.path.abspath(d)):
        raise SystemExit(f"FAIL: imported {dplace.__file__}, not the build's {d}")
    return dplace


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def check_eq(got, want, what):
    if got != want:
        raise Failure(f"{what}: got {got!r}, expected {want!r}")


def raises(exc, fn, *args, match=None, **kwargs):
    """Calls fn and checks that it raises exc (with match in its message); returns the exception."""
    try:
        fn(*args, **kwargs)
    except exc as e:
        if match is not None and match not in str(e):
            raise Failure(f"{fn.__name__ if hasattr(fn, '__name__') else fn}: {type(e).__name__} {str(e)!r} "
                          f"does not say {match!r}")
        if not str(e):
            raise Failure(f"{type(e).__name__} without a message")
        return e
    raise Failure(f"expected {exc.__name__} from {getattr(fn, '__name__', fn)}{args!r}")


def tmpdir():
    return tempfile.mkdtemp(prefix="dplace_pytest.")


def dplace_bin():
    b = os.environ.get("DPLACE_BIN") or os.path.join(ROOT, "build", "dplace")
    if not os.path.exists(b):
        skip(f"no dplace program at {b} (DPLACE_BIN)")
    return b


def run(cmd, **kw):
    """Runs a command: (exit status, stdout, stderr)."""
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return r.returncode, r.stdout, r.stderr


def main(namespace):
    tests = {k: v for k, v in namespace.items() if k.startswith("test_") and callable(v)}
    names = list(tests)
    if len(sys.argv) > 1 and sys.argv[-1].startswith("test_"):
        if sys.argv[-1] not in tests:
            print(f"unknown test {sys.argv[-1]} (tests: {', '.join(names)})", file=sys.stderr)
            sys.exit(2)
        names = [sys.argv[-1]]
    for n in names:
        try:
            tests[n]()
        except SystemExit:
            raise
        except BaseException as e:
            traceback.print_exc()
            print(f"FAIL: {n}: {type(e).__name__}: {e}", file=sys.stderr)
            sys.exit(1)
        print(f"ok {n}")
    sys.exit(0)
