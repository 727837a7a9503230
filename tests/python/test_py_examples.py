#!/usr/bin/python3
"""The examples run: a 20-second smoke run of the REINFORCE example, the random search, and the PyTorch
model exported from Python (dplace.torch_export, the same graph as scripts/dplace-export-torch), placed and
mapped back to its modules. Skipped (77) without torch where they need it.

usage: test_py_examples.py [TEST]   (tests/python/pyt.py: the runner's rules)"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyt  # noqa: E402
from pyt import check, check_eq, raises  # noqa: E402

dplace = pyt.import_dplace()
EXAMPLES = os.path.join(pyt.ROOT, "examples")
MODELS = os.path.join(pyt.ROOT, "tests", "data", "torch", "models.py")


def need_torch():
    try:
        import torch  # noqa: F401
    except ImportError as e:
        pyt.skip(f"no torch: {e} (scripts/setup.sh installs python3-torch)")


def example(name, *args, timeout=60):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(dplace.__file__)))
    return pyt.run([sys.executable, os.path.join(EXAMPLES, name)] + list(args), env=env, timeout=timeout)


def test_reinforce_smoke():
    need_torch()
    rc, out, err = example("reinforce_placement.py", "--time", "20", "--updates", "100", "--batch", "8",
                           "--groups", "16", timeout=90)
    check(rc == 0, f"reinforce_placement.py failed: {err}")
    lines = out.splitlines()
    check(any(line.strip().startswith("60 ") or line.split()[:1] == ["60"] for line in lines) or "after" in out,
          f"a curve and a summary: {out}")
    check("trained  best" in out and "control  best" in out and "learned:" in out, f"the summary: {out}")


def test_random_search():
    rc, out, err = example("random_search.py", "--model", "synthetic-600", "--placements", "200", "--batch", "50")
    check(rc == 0, f"random_search.py failed: {err}")
    check("mutate" in out and "best baseline" in out, f"its lines: {out}")


def test_torch_export_module():
    need_torch()
    from dplace import torch_export
    tmp = pyt.tmpdir()
    path = os.path.join(tmp, "small.json")
    rc = torch_export.exporter.main(["-q", f"{MODELS}:small", "--batch", "4", "--input-shape", "3,8,8", "-o", path])
    check_eq(rc, 0, "the exporter as a module, as the script runs")
    g = torch_export.export(f"{MODELS}:small", batch=4, input_shape=(3, 8, 8))
    with open(path) as f:
        check_eq(g.to_json(), dplace.Graph.from_json(f.read()).to_json(), "export() = the script's graph")
    sys.path.insert(0, os.path.dirname(MODELS))
    import models
    h = torch_export.export(models.small(), batch=4, input_shape=(3, 8, 8), name="small_b4")
    check_eq(len(h), len(g), "export(nn.Module) = export(spec)")
    d = dplace.Devices.preset("p100x2")
    r = dplace.optimize(h, d, agent="search", updates=5)
    m = torch_export.module_placement(h, d, r.placement)
    check("conv" in m and "fc" in m, f"the modules: {sorted(m)}")
    check(all(v["device"] in d.names for v in m.values()), "devices by name")
    check(set(torch_export.torch_devices(m).values()) <= {"cpu", "cuda:0", "cuda:1"}, "torch devices")
    raises(ValueError, torch_export.export, models.small(), batch=4, match="input_shape")
    raises(ValueError, torch_export.export, f"{MODELS}:not_a_module", input_shape=(4,), match="not_a_module")
    raises(ValueError, torch_export.module_placement, h, d, [0], match="placement")


def test_units_of_an_export_equal_cli():
    need_torch()
    from dplace import torch_export
    import json
    tmp = pyt.tmpdir()
    g = torch_export.export(f"{MODELS}:encoder2", batch=4, input_shape=(6, 32))
    path = os.path.join(tmp, "enc.json")
    g.save(path)
    d = dplace.Devices.preset("p100x2")
    mods, n = dplace.units(g, "module")
    check_eq(dplace.units(g, "auto")[1], n, "auto is module on an export")
    check(0 < n < dplace.units(g, "op")[1], f"{n} modules, fewer than the op units")
    check(dplace.units(g, "module:1")[1] <= n, "module:1 no finer than module")
    raises(ValueError, dplace.units, g, "pieces", match="pieces")
    for units in ("auto", "op"):
        b = dplace.baselines(g, d, units=units)
        check_eq(b.units, "module" if units == "auto" else "op", f"{units}: what the placers placed")
        rc, out, err = pyt.run([pyt.dplace_bin(), "baseline", "--graph", path, "--devices", "p100x2", "--units", units,
                                "--json"])
        check(rc == 0, f"dplace baseline: {err}")
        rows = {r["method"]: r for r in json.loads(out)["methods"]}
        for r in b:
            if r.ok:
                check_eq(float(f"{r.step_time:.10g}"), rows[r.method]["step_time_s"], f"{units}: {r.method}")
        if units == "auto":
            m = b["m-etf"].placement
            check(all(len(set(m[mods == k])) == 1 for k in range(n)), "m-etf keeps every module whole")
    r = dplace.optimize(g, d, agent="search", updates=5, seed=2, settings={"moves": 8})
    check_eq(r.units, "module", "optimize placed modules")
    check(all(len(set(r.placement[mods == k])) == 1 for k in range(n)), "the search keeps every module whole")
    rc, out, err = pyt.run([pyt.dplace_bin(), "optimize", "--graph", path, "--devices", "p100x2", "--agent", "search",
                            "--updates", "5", "--seed", "2", "--set", "moves=8", "--json", "--quiet"])
    check(rc == 0, f"dplace optimize: {err}")
    check_eq(float(f"{r.best_step_time_s:.10g}"), json.loads(out)["best_step_time_s"], "the search on an export, as the CLI")
    raises(dplace.Error, dplace.optimize, dplace.Graph.from_zoo("synthetic-600"), d, agent="search", updates=1,
           units="module", match="module")
    raises(ValueError, dplace.optimize, g, d, agent="search", updates=1, units="pieces", match="pieces")


def test_torch_place_example():
    need_torch()
    rc, out, err = example("torch_place.py", "--time", "3", "--layers", "1", "--seq", "16", "--batch", "8",
                           timeout=120)
    check(rc == 0, f"torch_place.py failed: {err}")
    check("module -> device" in out and "encoder" in out, f"the mapping: {out}")


if __name__ == "__main__":
    pyt.main(globals())
