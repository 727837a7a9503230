#!/usr/bin/python3
"""Bad input from Python: one clear exception (dplace.Error, ValueError or TypeError) with a message, never a
crash or a hang; random arrays, shapes, dtypes, device dicts and graph texts (python3-hypothesis) included.

usage: test_py_robust.py [TEST]   (tests/python/pyt.py: the runner's rules)"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyt  # noqa: E402
from pyt import check, raises  # noqa: E402

dplace = pyt.import_dplace()
import numpy as np  # noqa: E402

ALLOWED = (dplace.Error, ValueError, TypeError)
# hypothesis keeps its caches in a temporary folder, not in the source tree
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(pyt.tmpdir(), "hypothesis"))


def small():
    g, d = dplace.Graph.from_zoo("synthetic-600"), dplace.Devices.preset("k40x2")
    return g, d, dplace.Simulator(g, d)


def test_bad_input_messages():
    g, d, sim = small()
    tmp = pyt.tmpdir()
    e = raises(dplace.Error, dplace.Graph.from_file, os.path.join(tmp, "nope.json"), match="nope.json")
    check(e.status == "io", "a missing file is an io error")
    with open(os.path.join(tmp, "bad.json"), "w") as f:
        f.write('{"format": "dplace-graph", "version": 1, "ops": [{"name": "a", "inputs": [5]}]}')
    e = raises(dplace.Error, dplace.Graph.from_file, os.path.join(tmp, "bad.json"), match="bad.json")
    check(e.status in ("parse", "invalid"), f"status {e.status}")
    raises(dplace.Error, dplace.Devices.from_file, os.path.join(tmp, "bad.json"), match="bad.json")
    raises(dplace.Error, dplace.read_placement, os.path.join(tmp, "bad.json"), g, d, match="bad.json")
    raises(TypeError, dplace.Simulator, d, g, match="dplace.Graph")
    raises(TypeError, dplace.Simulator, g)
    raises(TypeError, sim.simulate, "gpu", steps="many")
    raises(ValueError, sim.simulate, "gpu", steps=0, match="steps")
    raises(ValueError, sim.simulate, "gpu", steps=3, warmup=3, match="warmup")
    raises(ValueError, sim.simulate, "gpu", noise=-1, match="noise")
    raises(dplace.Error, sim.simulate, "gpu:7", match="gpu:7")
    raises(dplace.Error, sim.simulate, "expert", match="expert")
    raises(TypeError, sim.simulate, None)
    raises(TypeError, sim.simulate, "gpu", colour=1)
    raises(TypeError, sim.simulate, [[1, 2], [3]])
    raises(TypeError, sim.placement, 3)
    raises(dplace.Error, sim.trace, "gpu", os.path.join(tmp, "no", "such", "dir", "t.json"), match="t.json")
    raises(TypeError, sim.trace, "gpu", 3.5)
    raises(TypeError, dplace.baselines, g, 3, match="devices")
    raises(dplace.Error, dplace.baselines, g, "k40x99", match="k40x99")
    raises(TypeError, dplace.Delta, g)
    raises(ValueError, dplace.write_placement, os.path.join(tmp, "p.json"), g, d, np.zeros(3, dtype=np.int32))
    # a graph that a device set cannot host: a constraint on a device kind it lacks
    gpu_only = dplace.Devices([dict(name="gpu:0", kind="gpu", peak_flops=1e12, mem_bandwidth=1e11,
                                    memory_bytes=2 ** 34)])
    raises(dplace.Error, dplace.Simulator, dplace.Graph.from_file(os.path.join(pyt.ROOT, "tests", "data",
                                                                                "tiny.json")), gpu_only, match="cpu")


def test_random_arrays_never_crash():
    try:
        from hypothesis import HealthCheck, given, settings, strategies as st
        from hypothesis.extra import numpy as hnp
    except ImportError:
        pyt.skip("python3-hypothesis is not installed (scripts/setup.sh installs it)")
    g, d, sim = small()
    delta = dplace.Delta(sim)
    delta.set_base(np.ones(len(g), dtype=np.int32))
    n = len(g)
    dtypes = st.sampled_from(["int8", "uint8", "int16", "int32", "int64", "uint64", "float32", "float64", "bool",
                              "complex64", "U3", "object"])
    shapes = st.one_of(st.just((n,)), st.just((2, n)), hnp.array_shapes(min_dims=0, max_dims=3, max_side=6),
                       st.tuples(st.integers(0, 3), st.just(n)))

    @st.composite
    def arrays(draw):
        dt, shape = draw(dtypes), draw(shapes)
        if dt in ("U3", "object"):
            return np.full(shape, "1" if dt == "U3" else None, dtype=dt)
        elems = None
        if np.issubdtype(np.dtype(dt), np.integer):
            info = np.iinfo(dt)
            elems = st.one_of(st.integers(0, 2), st.integers(int(info.min), int(info.max)))
        return draw(hnp.arrays(dt, shape, elements=elems))

    @settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(arrays(), st.integers(1, 3))
    def one(a, threads):
        for call in (lambda: sim.simulate(a), lambda: sim.simulate_many(a, threads=threads),
                     lambda: delta.try_move(a, 1), lambda: delta.surely_oom(a, a),
                     lambda: delta.oom_devices(np.concatenate([a.ravel(), a.ravel()]) if a.ndim else a),
                     lambda: dplace.unit_masks(g, d, a, 3)):
            try:
                call()
            except ALLOWED as e:
                assert str(e), f"{type(e).__name__} without a message"

    one()


def test_random_devices_and_texts_never_crash():
    try:
        from hypothesis import HealthCheck, given, settings, strategies as st
    except ImportError:
        pyt.skip("python3-hypothesis is not installed (scripts/setup.sh installs it)")
    values = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=True),
                       st.text(max_size=80), st.lists(st.integers(), max_size=3))
    keys = st.sampled_from(["name", "kind", "model", "peak_flops", "mem_bandwidth", "memory_bytes",
                            "launch_overhead_s", "streams", "colour", "from", "to", "bandwidth"])
    device = st.dictionaries(keys, values, max_size=9)

    @settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(device, max_size=4), st.lists(device, max_size=3), st.text(max_size=200))
    def one(devs, links, text):
        for call in (lambda: dplace.Devices(devs, links), lambda: dplace.Graph.from_json(text),
                     lambda: dplace.Devices.from_json(text)):
            try:
                call()
            except ALLOWED as e:
                assert str(e), f"{type(e).__name__} without a message"

    one()


if __name__ == "__main__":
    pyt.main(globals())
