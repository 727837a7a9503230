#!/usr/bin/python3
"""dplace.Simulator: simulate equals the C library's own result bit for bit (py_sim_ref) and `dplace simulate
--json`'s printed digits; simulate_many equals one call each, on any thread count and from 4 Python threads at
once; placements of every integer dtype; a Simulator outlives `del graph`; traces, bounds, Delta moves.

usage: test_py_sim.py [TEST]   (tests/python/pyt.py: the runner's rules)"""
import gc
import json
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyt  # noqa: E402
from pyt import check, check_eq, raises  # noqa: E402

dplace = pyt.import_dplace()
import numpy as np  # noqa: E402

MODEL, PRESET = "nmt2", "k40x2"


def setup():
    g, d = dplace.Graph.from_zoo(MODEL), dplace.Devices.preset(PRESET)
    return g, d, dplace.Simulator(g, d)


def random_placements(g, d, k, seed):
    """k placements: the expert's with a share of ops moved at random (valid and not), and plain random ones."""
    rng = np.random.default_rng(seed)
    base = g.expert_placement(d)
    out = []
    for i in range(k):
        p = base.copy() if i % 2 == 0 else rng.integers(0, len(d), size=len(g), dtype=np.int32)
        if i % 2 == 0:
            moved = rng.random(len(g)) < 0.05 * (i + 1)
            p[moved] = rng.integers(0, len(d), size=int(moved.sum()))
        out.append(p)
    return np.stack(out).astype(np.int32)


def c_results(placements_or_spec, *protocol):
    """The C library's results (py_sim_ref): one tuple per placement."""
    ref = os.environ.get("DPLACE_SIM_REF")
    if not ref:
        pyt.skip("no DPLACE_SIM_REF (CTest sets it)")
    if isinstance(placements_or_spec, str):
        arg = placements_or_spec
    else:
        arg = os.path.join(pyt.tmpdir(), "p.bin")
        np.ascontiguousarray(placements_or_spec, dtype=np.int32).tofile(arg)
    rc, out, err = pyt.run([ref, MODEL, PRESET, arg] + [str(x) for x in protocol])
    check(rc == 0, f"py_sim_ref failed: {err}")
    rows = []
    for line in out.splitlines():
        f = line.split()
        rows.append((float.fromhex(f[0]), f[1], int(f[2]), int(f[3]), [int(x) for x in f[4:]]))
    return rows


def same(r, c, what):
    """A SimResult against a py_sim_ref row, bit for bit."""
    check(r.step_time.hex() == c[0].hex(), f"{what}: step time {r.step_time.hex()} in Python, {c[0].hex()} in C")
    check_eq(r.verdict, c[1], f"{what}: verdict")
    check_eq(r.transfer_bytes, c[2], f"{what}: transfer bytes")
    check_eq(r.n_transfers, c[3], f"{what}: transfers")
    check_eq(r.peak_bytes.tolist(), c[4], f"{what}: peak bytes")


def test_simulate_equals_c_library():
    g, d, sim = setup()
    P = random_placements(g, d, 6, seed=1)
    rows = c_results(P)
    check_eq(len(rows), len(P), "rows from py_sim_ref")
    for i, (p, c) in enumerate(zip(P, rows)):
        same(sim.simulate(p), c, f"{MODEL} on {PRESET}, placement {i}")
    same(sim.simulate("expert"), c_results("expert")[0], "the expert placement")
    same(sim.simulate(sim.placement("gpu")), c_results("gpu")[0], "single GPU")
    # the papers' protocol: noise, steps, warm-up, seed, mean
    r = sim.simulate(P[0], steps=5, warmup=2, noise=0.05, seed=7, mean=True)
    same(r, c_results(P[:1], 5, 2, 0.05, 7, 1)[0], "placement 0 with noise 0.05, 5 steps, 2 warm-up, mean")
    check_eq(r.steps_measured, 3, "steps measured")


def test_simulate_equals_cli_json():
    g, d, sim = setup()
    tmp = pyt.tmpdir()
    P = random_placements(g, d, 2, seed=2)
    for i, p in enumerate([g.expert_placement(d), P[0], P[1]]):
        path = os.path.join(tmp, f"p{i}.json")
        dplace.write_placement(path, g, d, p)
        check(np.array_equal(dplace.read_placement(path, g, d), p), "a placement file reads back as written")
        for proto in ([], ["--noise", "0.05", "--steps", "4", "--warmup", "1", "--seed", "3"]):
            rc, out, err = pyt.run([pyt.dplace_bin(), "simulate", "--model", MODEL, "--devices", PRESET,
                                    "--placement", path, "--json"] + proto)
            check(rc == 0, f"dplace simulate failed: {err}")
            j = json.loads(out)
            kw = {} if not proto else dict(noise=0.05, steps=4, warmup=1, seed=3)
            r = sim.simulate(p, **kw)
            # the CLI prints 10 significant digits (JSON_REAL_PRECISION(10))
            check_eq(float(f"{r.step_time:.10g}"), j["step_time_s"], f"placement {i} {proto}: step time")
            check_eq(r.valid, j["valid"], f"placement {i}: valid")
            check_eq(r.verdict, j["verdict"], f"placement {i}: verdict")
            check_eq(r.reason, j["reason"], f"placement {i}: reason")
            check_eq(r.transfer_bytes, j["transfer_bytes"], f"placement {i}: transfer bytes")
            check_eq(r.peak_bytes.tolist(), [x["peak_bytes"] for x in j["devices"]], f"placement {i}: peaks")
            check_eq(r.n_ops.tolist(), [x["ops"] for x in j["devices"]], f"placement {i}: ops per device")
            check_eq([float(f"{x:.10g}") for x in r.busy], [x["busy_s"] for x in j["devices"]], f"{i}: busy")
            links = [(x["from"], x["to"], x["bytes"], x["transfers"]) for x in j["links"]]
            check_eq([(x["from"], x["to"], x["bytes"], x["transfers"]) for x in r.links], links, f"{i}: links")


def test_simulate_many_equals_single_calls():
    g, d, sim = setup()
    P = random_placements(g, d, 12, seed=3)
    single = [sim.simulate(p) for p in P]
    for threads in (1, 2, 4, 16):
        b = sim.simulate_many(P, threads=threads)
        check_eq(len(b), len(P), "batch length")
        for i, r in enumerate(single):
            check(b.step_time[i].hex() == r.step_time.hex(), f"threads {threads}, row {i}: step time "
                  f"{b.step_time[i]!r} != {r.step_time!r}")
            check_eq(bool(b.valid[i]), r.valid, f"threads {threads}, row {i}: valid")
            check_eq(b.verdict[i], r.verdict, f"threads {threads}, row {i}: verdict")
            check_eq(b.reasons[i], r.reason, f"threads {threads}, row {i}: reason")
            check_eq(b.peak_bytes[i].tolist(), r.peak_bytes.tolist(), f"threads {threads}, row {i}: peaks")
            check_eq(int(b.transfer_bytes[i]), r.transfer_bytes, f"threads {threads}, row {i}: bytes")
            check(b.score[i] == r.score, f"threads {threads}, row {i}: score")
    empty = sim.simulate_many(np.zeros((0, len(g)), dtype=np.int32), threads=2)
    check_eq(len(empty), 0, "an empty batch")


def test_python_threads_share_one_simulator():
    g, d, sim = setup()
    P = random_placements(g, d, 8, seed=4)
    want = [sim.simulate(p).step_time for p in P]
    errors, got = [], {}
    start = threading.Barrier(4)

    def work(t):
        try:
            start.wait()
            for rep in range(3):
                if t % 2:
                    b = sim.simulate_many(P, threads=2)
                    got[(t, rep)] = list(b.step_time)
                else:
                    got[(t, rep)] = [sim.simulate(p).step_time for p in P]
        except BaseException as e:  # reported below
            errors.append(e)

    th = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    check(not errors, f"threads raised {errors!r}")
    for k, v in got.items():
        check_eq(v, want, f"thread {k[0]}, repetition {k[1]}")


def test_integer_dtypes_and_sequences():
    g, d, sim = setup()
    p = g.expert_placement(d)
    want = sim.simulate(p).step_time
    for dt in (np.int8, np.uint8, np.int16, np.uint16, np.int64, np.uint64, np.uint32):
        check_eq(sim.simulate(p.astype(dt)).step_time, want, f"dtype {np.dtype(dt).name}")
    check_eq(sim.simulate(p.tolist()).step_time, want, "a list")
    check_eq(sim.simulate(p[::-1][::-1].copy(order="F")).step_time, want, "a copy")
    strided = np.repeat(p, 2)[::2]
    check_eq(sim.simulate(strided).step_time, want, "a strided view")
    check_eq(sim.simulate(p.astype(">i4")).step_time, want, "big-endian int32")
    raises(TypeError, sim.simulate, p.astype(np.float64), match="floats")
    raises(TypeError, sim.simulate, p.astype(bool), match="booleans")
    raises(TypeError, sim.simulate, p.astype(object), match="integers")
    raises(ValueError, sim.simulate, p[:-1], match="shape")
    raises(ValueError, sim.simulate, np.stack([p, p]), match="shape")
    bad = p.copy()
    bad[17] = len(d)
    raises(ValueError, sim.simulate, bad, match="placement[17]: device 3 out of range")
    bad[17] = -1
    raises(ValueError, sim.simulate, bad, match="placement[17]: device -1")
    big = p.astype(np.int64)
    big[3] = 2 ** 32  # would wrap to 0 in int32
    raises(ValueError, sim.simulate, big, match="placement[3]")
    P = np.stack([p, p])
    P[1, 5] = 9
    raises(ValueError, sim.simulate_many, P, match="placements[1, 5]")
    raises(ValueError, sim.simulate_many, P, threads=0, match="threads")


def test_simulator_keeps_graph_and_devices_alive():
    g, d = dplace.Graph.from_zoo("synthetic-600"), dplace.Devices.preset("k40x2")
    p = np.ones(len(g), dtype=np.int32)
    sim = dplace.Simulator(g, d)
    want = sim.simulate(p).step_time
    del g, d
    gc.collect()
    for _ in range(3):
        check_eq(sim.simulate(p).step_time, want, "after del graph, devices")
    check_eq(len(sim.graph), len(p), "sim.graph")
    r = sim.simulate(p)
    del sim
    gc.collect()
    check(r.device_names[0] == "cpu:0", "a SimResult keeps its device names after its Simulator goes")


def test_trace_bound_op_seconds():
    g, d, sim = setup()
    path = os.path.join(pyt.tmpdir(), "t.json")
    r = sim.trace("expert", path)
    with open(path) as f:
        t = json.load(f)
    check(len(t["traceEvents"]) > len(g), "a trace event per op at least")
    check_eq(r.step_time, sim.simulate("expert").step_time, "trace's result")
    b = sim.lower_bound()
    check_eq(b["bound_s"], max(b["critical_path_s"], b["work_s"], b["fanout_s"]), "bound is the largest")
    check(b["bound_s"] <= r.step_time, "bound under the expert's step time")
    t = sim.op_seconds()
    check_eq(t.shape, (len(g), len(d)), "op_seconds shape")
    check(np.all(t >= 0) and np.all(np.isfinite(t)), "op seconds finite, non-negative")


def test_delta_moves_equal_full_simulations():
    g, d, sim = setup()
    delta = dplace.Delta(sim)
    check(delta.base is None and delta.base_result is None, "no base before set_base")
    raises(dplace.Error, delta.try_move, [0], 1, match="base")
    base = g.expert_placement(d)
    r0 = delta.set_base(base)
    check_eq(r0.step_time, sim.simulate(base).step_time, "base result")
    rng = np.random.default_rng(5)
    for i in range(5):
        ops = rng.choice(len(g), size=20, replace=False)
        devs = rng.integers(0, len(d), size=20)
        r = delta.try_move(ops, devs)
        moved = delta.base.copy()
        moved[ops] = devs
        check(r.step_time.hex() == sim.simulate(moved).step_time.hex(), f"move {i}: try equals simulate")
        check_eq(r.verdict, sim.simulate(moved).verdict, f"move {i}: verdict")
        if i % 2:
            delta.accept()
            check(np.array_equal(delta.base, moved), f"move {i}: accepted")
    check_eq(delta.surely_oom(0, 0), False, "one op on the CPU")
    # a 1 GB gpu:1: nmt2's parameters alone overflow it
    devs = d.devices
    devs[2]["memory_bytes"] = 10 ** 9
    small = dplace.Devices(devs, d.links)
    ds = dplace.Delta(dplace.Simulator(g, small))
    ds.set_base(g.expert_placement(d))
    every = np.arange(len(g))
    check_eq(ds.oom_devices(every).tolist(), [False, False, True], "every op on a 1 GB gpu:1 surely overflows it")
    free = np.flatnonzero(g.allowed(d)[:, 2])  # the ops gpu:1 may run
    check(ds.surely_oom(free, 2) and ds.try_move(free, 2).verdict == "oom", "surely_oom is right there")
    path = delta.critical_path()
    check(path and abs(path[-1]["end_s"] - delta.base_result.step_time) < 1e-9 * delta.base_result.step_time,
          "the critical path ends at the step time")
    raises(ValueError, delta.try_move, [len(g)], 0, match="out of range")
    raises(ValueError, delta.try_move, [0], 5, match="out of range")


def test_executor_matches_cli():
    """Graph.with_executor('torch') simulates as `dplace simulate --executor torch` does, survives pickling,
    and leaves the graph it copies under its own executor; PlacementEnv(executor=) takes the same copy."""
    import pickle
    g, d, _ = setup()
    t = g.with_executor("torch")
    check_eq((g.executor, t.executor), ("tf", "torch"), "executors")
    check_eq(pickle.loads(pickle.dumps(t)).executor, "torch", "a pickled copy keeps its executor")
    p = g.expert_placement(d)
    r_tf, r_torch = dplace.Simulator(g, d).simulate(p), dplace.Simulator(t, d).simulate(p)
    check(r_torch.step_time != r_tf.step_time, "the eager executor gives another step time")
    rc, out, err = pyt.run([pyt.dplace_bin(), "simulate", "--model", MODEL, "--devices", PRESET, "--placement",
                            "expert", "--executor", "torch", "--json"])
    check(rc == 0, f"dplace simulate failed: {err}")
    check_eq(float(f"{r_torch.step_time:.10g}"), json.loads(out)["step_time_s"], "step time under torch")
    from dplace.envs import PlacementEnv
    env = PlacementEnv(g, d, executor="torch")
    check_eq(env.graph.executor, "torch", "the environment's graph")
    raises(ValueError, g.with_executor, "jax", match="'tf' or 'torch'")
    raises(ValueError, PlacementEnv, g, d, executor="jax", match="executor")


def test_host_switch_cost():
    """A device's switch_s and dispatch_s come back from Devices.devices and build the same set again; under
    the eager executor a placement that puts every tenth op on the host amid GPU work slows by the switch costs
    it pays; a bad switch_s is refused naming it."""
    g, d, _ = setup()
    devs = d.devices
    check_eq(devs[0]["switch_s"], 1.3e-3, "the preset's host takes the default")
    t = g.with_executor("torch")
    p = np.where(g.allowed(d)[:, 1], 1, 0).astype(np.int32)
    p[::10] = 0
    times = []
    for switch in (0.0, 0.01):
        devs[0]["switch_s"] = switch
        e = dplace.Devices(devs, d.links)
        check_eq(e.devices[0]["switch_s"], switch, "switch_s round-trips")
        check_eq(e.devices[0]["dispatch_s"], devs[0]["dispatch_s"], "dispatch_s round-trips")
        times.append(dplace.Simulator(t, e).simulate(p).step_time)
    check(times[1] > times[0] + 0.0099, f"the mixed placement pays switches: {times}")
    devs[0]["switch_s"] = -1.0
    raises(ValueError, dplace.Devices, devs, d.links, match="switch_s")


if __name__ == "__main__":
    pyt.main(globals())
