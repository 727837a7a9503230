#!/usr/bin/python3
"""dplace.baselines, place, group and optimize: the command line's numbers for the same arguments; the
callback sees each update and stops the run; Ctrl-C stops it with the checkpoint written, then raises
KeyboardInterrupt; a stopped run resumes; bad arguments raise with a message.

usage: test_py_jobs.py [TEST]   (tests/python/pyt.py: the runner's rules)"""
import json
import os
import signal
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyt  # noqa: E402
from pyt import check, check_eq, raises  # noqa: E402

dplace = pyt.import_dplace()
import numpy as np  # noqa: E402

MODEL, PRESET = "nmt2", "k40x2"


def cli_json(*args):
    rc, out, err = pyt.run([pyt.dplace_bin()] + list(args))
    check(rc == 0, f"dplace {' '.join(args)} failed: {err}")
    return json.loads(out)


def digits(v):
    return None if v is None else float(f"{v:.10g}")


def test_baselines_equal_cli():
    g, d = dplace.Graph.from_zoo(MODEL), dplace.Devices.preset(PRESET)
    b = dplace.baselines(g, d)
    check_eq([r.method for r in b], dplace.place_methods(), "every placer, in order")
    j = cli_json("baseline", "--model", MODEL, "--devices", PRESET, "--json")
    rows = {r["method"]: r for r in j["methods"]} if "methods" in j else {r["method"]: r for r in j["rows"]}
    for r in b:
        c = rows[r.method]
        if not r.ok:
            check(not c["applied"], f"{r.method}: failed in both")
            continue
        check_eq(digits(r.step_time), c["step_time_s"], f"{r.method}: step time")
        check_eq(r.result.valid, c["valid"], f"{r.method}: valid")
        check_eq(r.rules, c["rules"], f"{r.method}: the rule set kept")
        check(r.rules in (("dataflow", "paper") if r.method.startswith("m-") else (None,)),
              f"{r.method}: rules {r.rules!r}")
    sim = dplace.Simulator(g, d)
    for r in b:
        if r.ok:
            check_eq(sim.simulate(r.placement).step_time, r.step_time, f"{r.method}: its placement simulates so")
    check_eq(b.expert_s, sim.simulate("expert").step_time, "expert_s")
    check(b.best in b.reports and b.best_s == min(r.step_time for r in b if r.ok and r.result.valid), "best")
    check(0 < b.bound["bound_s"] <= b.best_s, "bound")
    check("m-etf" in b.table(), "table")
    some = dplace.baselines(g, d, methods=["gpu", "m-etf"], bound=False)
    check_eq(list(some.reports), ["gpu", "m-etf"], "methods asked")
    check_eq(some["m-etf"].step_time, b["m-etf"].step_time, "the same m-etf")
    check(np.array_equal(dplace.place(g, d, "m-etf", rules=b["m-etf"].rules), b["m-etf"].placement),
          "place() with the rule set kept equals the report's")
    for rules in ("dataflow", "paper"):
        one = dplace.baselines(g, d, methods="m-etf", rules=rules, bound=False)["m-etf"]
        check_eq(one.rules, rules, f"rules={rules}: the report's")
        check(np.array_equal(dplace.place(g, d, "m-etf", rules=rules), one.placement), f"rules={rules}: place()")
    raises(ValueError, dplace.place, g, d, "m-etf", rules="baechi", match="rules")
    raises(ValueError, dplace.baselines, g, d, rules="baechi", match="rules")
    check_eq(list(dplace.baselines(g, d, methods="gpu,cpu").reports), ["gpu", "cpu"], "a comma list")
    raises(ValueError, dplace.baselines, g, d, methods=["gpu", "magic"], match="magic")
    raises(ValueError, dplace.baselines, g, d, memory_fraction=2.0, match="memory_fraction")
    raises(dplace.Error, dplace.place, dplace.Graph.from_zoo("synthetic-600"), d, "expert", match="expert")
    raises(ValueError, dplace.place, g, d, "magic", match="magic")


def test_group_and_units():
    g, d = dplace.Graph.from_zoo(MODEL), dplace.Devices.preset(PRESET)
    u, n = dplace.units(g)
    check_eq(u.shape, (len(g),), "units shape")
    check_eq(int(u.max()) + 1, n, "unit ids dense")
    cg = g.colocation_groups()
    for method in ("metis", "fluid", "random", "colocation"):
        grp, k = dplace.group(g, method, groups=16, seed=2, devices=d)
        check(0 < k and int(grp.max()) + 1 == k, f"{method}: ids dense ({k} groups)")
        check(k <= 16 or method == "colocation", f"{method}: at most 16 groups")
        for c in np.unique(cg[cg >= 0])[:50]:
            check_eq(len(np.unique(grp[cg == c])), 1, f"{method}: colocation group {c} in one group")
        m = dplace.unit_masks(g, d, grp, k)
        check_eq(m.shape, (k, len(d)), f"{method}: masks shape")
    raises(ValueError, dplace.group, g, "magic", match="magic")
    raises(ValueError, dplace.unit_masks, g, d, u, n, pool=[], match="pool")


def test_optimize_search_equals_cli():
    g, d = dplace.Graph.from_zoo(MODEL), dplace.Devices.preset(PRESET)
    r = dplace.optimize(g, d, agent="search", updates=8, seed=3, threads=2, settings={"moves": 8})
    j = cli_json("optimize", "--model", MODEL, "--devices", PRESET, "--agent", "search", "--updates", "8", "--seed",
                 "3", "--threads", "2", "--set", "moves=8", "--json", "--quiet")
    check_eq(digits(r.best_step_time_s), j["best_step_time_s"], "search: best step time")
    check_eq((r.updates, r.samples), (j["updates"], j["samples"]), "search: updates, samples")
    check_eq(r.best_by, j["best_by"], "best_by")
    check_eq(r.settings, j["settings"], "settings")
    check_eq(r.search_start, j["search_start"], "the search's start")
    check_eq(r.search_moves_simulated, j["search_moves_simulated"], "moves simulated")
    check_eq(len(r.history), 8, "a history entry per update")
    check_eq([h["update"] for h in r.history], list(range(1, 9)), "history updates")
    check_eq(r.history[-1]["best_s"], r.best_step_time_s, "the history's last best")
    check_eq(dplace.Simulator(g, d).simulate(r.placement).step_time, r.best_step_time_s, "the placement's step time")
    check_eq(r.result.step_time, r.best_step_time_s, "result")
    check_eq(digits(r.single_gpu_s), j["single_gpu_s"], "single GPU")
    check_eq(digits(r.lower_bound_s), j["lower_bound_s"], "bound")


def test_optimize_agent_equals_cli():
    g, d = dplace.Graph.from_zoo(MODEL), dplace.Devices.preset(PRESET)
    tmp = pyt.tmpdir()
    r = dplace.optimize(g, d, agent="hp", updates=2, seed=5, settings={"batch": 3, "elite_moves": 0},
                        log=os.path.join(tmp, "py.csv"), baselines=["gpu", "expert"])
    j = cli_json("optimize", "--model", MODEL, "--devices", PRESET, "--agent", "hp", "--updates", "2", "--seed",
                 "5", "--set", "batch=3", "--set", "elite-moves=0", "--baselines", "gpu,expert",
                 "--log", os.path.join(tmp, "cli.csv"), "--json", "--quiet")
    check_eq(digits(r.best_step_time_s), j["best_step_time_s"], "hp: best step time")
    check_eq(r.samples, j["samples"], "hp: samples")
    check_eq(r.settings, j["settings"], "hp: settings")
    check_eq(digits(r.final_greedy_s), j["final_greedy_s"], "hp: the final greedy placement")

    def rows(path):  # the per-sample log without its clock columns
        with open(path) as f:
            lines = f.read().splitlines()
        head = lines[0].split(",")
        keep = [i for i, c in enumerate(head) if "elapsed" not in c and not c.endswith("_s") or c == "step_time_s"]
        return [[x.split(",")[i] for i in keep] for x in lines]

    check_eq(rows(os.path.join(tmp, "py.csv")), rows(os.path.join(tmp, "cli.csv")), "the per-sample logs")


def test_optimize_callback_stops_and_resumes():
    g, d = dplace.Graph.from_zoo(MODEL), dplace.Devices.preset(PRESET)
    tmp = pyt.tmpdir()
    ck = os.path.join(tmp, "run.ck")
    seen = []

    def cb(info):
        seen.append(info)
        return info["update"] < 3

    r = dplace.optimize(g, d, agent="search", updates=10, seed=2, checkpoint=ck, callback=cb,
                        settings={"moves": 4})
    check(r.interrupted and r.stopped_by_callback, "stopped by the callback")
    check_eq([s["update"] for s in seen], [1, 2, 3], "the callback saw updates 1..3")
    check_eq(r.updates, 3, "three updates")
    check(os.path.exists(ck), "the checkpoint was written")
    full = dplace.optimize(g, d, agent="search", updates=10, seed=2, settings={"moves": 4})
    resumed = dplace.optimize(g, d, agent="search", updates=10, seed=2, settings={"moves": 4}, resume=ck)
    check_eq(resumed.updates, 10, "resumed to 10 updates")
    check_eq(resumed.best_step_time_s, full.best_step_time_s, "a resumed run ends as the run never stopped")

    def boom(info):
        raise ZeroDivisionError("from the callback")

    raises(ZeroDivisionError, dplace.optimize, g, d, agent="search", updates=5, callback=boom, match="callback")

    def nested(info):
        dplace.optimize(g, d, agent="search", updates=1)

    raises(RuntimeError, dplace.optimize, g, d, agent="search", updates=5, callback=nested, match="callback")


def test_optimize_ctrl_c_writes_checkpoint():
    g, d = dplace.Graph.from_zoo(MODEL), dplace.Devices.preset(PRESET)
    ck = os.path.join(pyt.tmpdir(), "run.ck")
    seen = []

    def cb(info):  # the signal comes in the middle of the run, from another thread
        seen.append(info["update"])
        if info["update"] == 2:
            threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()

    try:
        dplace.optimize(g, d, agent="search", updates=100000, checkpoint=ck, callback=cb, settings={"moves": 4})
    except KeyboardInterrupt:
        pass
    else:
        raise pyt.Failure("no KeyboardInterrupt")
    check(2 <= len(seen) < 100000, f"stopped after {len(seen)} updates")
    check(os.path.exists(ck), "the checkpoint was written")
    r = dplace.optimize(g, d, agent="search", updates=len(seen) + 2, resume=ck, settings={"moves": 4})
    check(r.updates >= len(seen), "the checkpoint resumes")
    check(signal.getsignal(signal.SIGINT) is signal.default_int_handler, "Python's SIGINT handler is back")


def test_optimize_bad_arguments():
    g, d = dplace.Graph.from_zoo("synthetic-600"), dplace.Devices.preset(PRESET)
    raises(ValueError, dplace.optimize, g, d, agent="nope", match="nope")
    raises(ValueError, dplace.optimize, g, d, updates=3, placements=30, match="one budget")
    raises(ValueError, dplace.optimize, g, d, agent="hp", settings={"lr": -1}, match="lr")
    raises(ValueError, dplace.optimize, g, d, agent="hp", settings={"no_such": 1}, match="no-such")
    raises(ValueError, dplace.optimize, g, d, agent="search", settings={"lr": 0.1}, match="lr")
    raises(ValueError, dplace.optimize, g, d, agent="search", search_after=10, match="search-after")
    raises(ValueError, dplace.optimize, g, d, agent="search", updates=0, match="updates")
    raises(ValueError, dplace.optimize, g, d, agent="hp", init_placement=np.zeros(len(g), dtype=np.int32),
           match="start placement")
    raises(ValueError, dplace.optimize, g, d, agent="search", init_placement=np.zeros(3, dtype=np.int32),
           match="shape")
    raises(ValueError, dplace.optimize, g, d, time="soon", match="duration")
    raises(TypeError, dplace.optimize, g, d, updates=2.5)
    raises(TypeError, dplace.optimize, g, d, settings={"lr": [1]})
    raises(TypeError, dplace.optimize, g, d, callback=3)
    raises(ValueError, dplace.optimize, g, d, threads=0, match="threads")
    raises(TypeError, dplace.optimize, g, d, noise="high", match="noise")
    raises(ValueError, dplace.optimize, g, d, seed=-1, match="seed: in 0..2147483647")
    raises(ValueError, dplace.optimize, g, d, checkpoint_every=0, match="checkpoint-every")
    raises(ValueError, dplace.optimize, g, d, steps=2, warmup=2, match="warmup")
    raises(ValueError, dplace.optimize, g, d, measure_timeout=0, match="measure-timeout")
    raises(dplace.Error, dplace.optimize, g, d, agent="search", updates=2, resume="/nonexistent/x.ck",
           match="x.ck")


# What only Python's result has beside the JSON summary's keys.
PYTHON_ONLY = {"placement", "result", "history", "warnings", "wall_s", "stopped_by_callback"}


def test_optimize_keys_equal_cli():
    g, d = dplace.Graph.from_zoo(MODEL), dplace.Devices.preset(PRESET)
    for agent, extra, cli_extra in (("search", {}, []),
                                    ("post", {"search_after": 1}, ["--search-after", "1s"])):
        r = dplace.optimize(g, d, agent=agent, updates=2, seed=4, baselines="gpu,m-etf", **extra)
        j = cli_json("optimize", "--model", MODEL, "--devices", PRESET, "--agent", agent, "--updates", "2", "--seed",
                     "4", "--baselines", "gpu,m-etf", "--json", "--quiet", *cli_extra)
        keys = set(vars(r))
        check_eq(sorted(keys - PYTHON_ONLY), sorted(j), f"{agent}: the result's keys are the JSON summary's")


def test_optimize_noise_refused_as_cli():
    g, d = dplace.Graph.from_zoo("synthetic-600"), dplace.Devices.preset(PRESET)
    rc, out, err = pyt.run([pyt.dplace_bin(), "optimize", "--model", "synthetic-600", "--devices", PRESET,
                            "--noise", "7"])
    check_eq(rc, 2, "the CLI refuses --noise 7")
    try:
        dplace.optimize(g, d, agent="hp", noise=7)
    except ValueError as e:
        check(str(e) in err, f"Python's message {str(e)!r} is the CLI's: {err!r}")
    else:
        raise pyt.Failure("noise=7 was accepted")


def test_optimize_best_is_the_written_placement():
    g, d = dplace.Graph.from_zoo("rnnlm"), dplace.Devices.preset("k40x2")
    tmp = pyt.tmpdir()
    out = os.path.join(tmp, "best.json")
    r = dplace.optimize(g, d, agent="post", updates=2, search_after=2, seed=1, out=out, baselines="none",
                        settings={"batch": 4})
    check_eq(r.best_phase, "search-after", "search-after found the best")
    check(r.best_step_time_s <= r.train_best_step_time_s, "the job's best is no worse than the training's")
    written = dplace.Simulator(g, d).simulate(dplace.read_placement(out, g, d))
    check_eq(written.step_time, r.best_step_time_s, "the written placement's step time is best_step_time_s")
    check_eq(r.result.step_time, r.best_step_time_s, "result is the job's best")


def test_optimize_keyword_only_after_agent():
    g, d = dplace.Graph.from_zoo("synthetic-600"), dplace.Devices.preset(PRESET)
    raises(TypeError, dplace.optimize, g, d, "search", 2, match="positional")


def test_pretrained_equals_cli():
    """The shipped policy from Python: the CLI's placement and step time for the same arguments."""
    g, d = dplace.Graph.from_zoo("rnnlm"), dplace.Devices.preset("k40x4")
    tmp = pyt.tmpdir()
    out = os.path.join(tmp, "cli.json")
    r = dplace.optimize(g, d, agent="pretrained", updates=1, seed=3, baselines="none",
                        settings={"zero_shot": 6, "zero_shot_time": "1000s", "tune_samples": 4})
    j = cli_json("optimize", "--model", "rnnlm", "--devices", "k40x4", "--agent", "pretrained", "--updates", "1",
                 "--seed", "3", "--baselines", "none", "--set", "zero-shot=6", "--set", "zero-shot-time=1000s",
                 "--set", "tune-samples=4", "--json", "--quiet", "-o", out)
    check_eq(r.agent, "pretrained", "the agent's name")
    check(abs(r.best_step_time_s - j["best_step_time_s"]) <= 1e-9 * j["best_step_time_s"],
          f"Python's best {r.best_step_time_s} is the CLI's {j['best_step_time_s']} (10 digits)")
    check_eq(list(r.placement), list(dplace.read_placement(out, g, d)), "Python's placement is the CLI's")
    check_eq(r.samples, j["samples"], "the same samples")


def test_pretrained_bad_policy_refused():
    """A policy file that is not one, or is truncated, is refused in one line naming it."""
    g, d = dplace.Graph.from_zoo("rnnlm"), dplace.Devices.preset("k40x2")
    tmp = pyt.tmpdir()
    bad = os.path.join(tmp, "bad.dpp")
    with open(bad, "wb") as f:
        f.write(b"DPPOLICY" + bytes(40))
    e = raises(dplace.InputError, dplace.optimize, g, d, agent="pretrained", updates=0, init=bad, match="bad.dpp")
    check("\n" not in str(e), "one line")
    raises(dplace.MissingFileError, dplace.optimize, g, d, agent="pretrained", updates=0,
           init=os.path.join(tmp, "missing.dpp"), match="missing.dpp")


if __name__ == "__main__":
    pyt.main(globals())
