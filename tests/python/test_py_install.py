#!/usr/bin/python3
"""`pip install .` from the checkout with Debian's packaged build tools (pyproject.toml, setup.py): the
extension is the build's own (DPLACE_CMAKE_BUILD_DIR), so that the test builds nothing new and fetches nothing.

usage: test_py_install.py [TEST]   (tests/python/pyt.py: the runner's rules)"""
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyt  # noqa: E402
from pyt import check, check_eq  # noqa: E402

dplace = pyt.import_dplace()


def test_pip_install_from_checkout():
    d = os.environ.get("DPLACE_PYTHON_DIR")
    if not d:
        pyt.skip("no DPLACE_PYTHON_DIR: the build whose extension pip installs")
    missing = [m for m in ("pip", "setuptools", "wheel") if importlib.util.find_spec(m) is None]
    if missing:
        pyt.skip(f"{sys.executable} lacks {', '.join(missing)} (Debian's python3-pip, python3-setuptools, "
                 "python3-wheel)")
    target = os.path.join(pyt.tmpdir(), "site")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["DPLACE_CMAKE_BUILD_DIR"] = os.path.dirname(os.path.abspath(d))
    rc, out, err = pyt.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps",
                            "--no-index", "--no-cache-dir", "--target", target, pyt.ROOT], env=env)
    check_eq(rc, 0, f"pip's exit status (stderr: {err.strip()[-2000:]})")
    env["PYTHONPATH"] = target
    code = ("import dplace\n"
            "g, d = dplace.Graph.from_zoo('synthetic-600'), dplace.Devices.preset('k40x2')\n"
            "print(dplace.__file__)\n"
            "print(repr(dplace.Simulator(g, d).simulate('gpu').step_time))\n"
            "print(dplace.torch_export.exporter.__name__)")
    rc, out, err = pyt.run([sys.executable, "-c", code], env=env, cwd=os.path.dirname(target))
    check_eq(rc, 0, f"exit status of the installed package's run (stderr: {err.strip()})")
    lines = out.split("\n")
    check(lines[0].startswith(os.path.join(target, "dplace")), f"imported from {lines[0]}, not {target}")
    g, dv = dplace.Graph.from_zoo("synthetic-600"), dplace.Devices.preset("k40x2")
    check_eq(lines[1], repr(dplace.Simulator(g, dv).simulate("gpu").step_time), "the installed package's step time")
    check_eq(lines[2], "dplace._export_torch", "the exporter module")
    for f in ("py.typed", "__init__.pyi", "_dplace.pyi"):
        check(os.path.exists(os.path.join(target, "dplace", f)), f"the installed package holds {f}")


if __name__ == "__main__":
    pyt.main(globals())
