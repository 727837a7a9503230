"""pytest's set-up of the Python package's tests: `python3 -m pytest tests/python` from the checkout tests the
build's package, as CTest does (tests/python/pyt.py has the runner's rules).

The build is build/ beside this checkout's sources, or $DPLACE_BUILD_DIR; each of DPLACE_PYTHON_DIR (the folder
holding the package), DPLACE_BIN (the dplace program) and DPLACE_SIM_REF (py_sim_ref) already set is kept. A
test module whose package was not built is skipped with the reason (pyt.skip); without a build folder, the
dplace on sys.path (an installed one) is tested.
"""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DPLACE_BUILD_DIR") or os.path.join(ROOT, "build")

for var, path in (("DPLACE_PYTHON_DIR", os.path.join(BUILD, "python")), ("DPLACE_BIN", os.path.join(BUILD, "dplace")),
                  ("DPLACE_SIM_REF", os.path.join(BUILD, "tests", "py_sim_ref"))):
    if not os.environ.get(var) and os.path.exists(path):
        os.environ[var] = path
