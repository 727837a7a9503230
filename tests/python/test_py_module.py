#!/usr/bin/python3
"""The dplace package: its version, documentation and stubs; Graph and Devices as read-only objects with
numpy arrays; graphs and device sets through files, JSON text and Python; pickling.

usage: test_py_module.py [TEST]   (tests/python/pyt.py: the runner's rules)"""
import os
import pickle
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyt  # noqa: E402
from pyt import check, check_eq, raises  # noqa: E402

dplace = pyt.import_dplace()
import numpy as np  # noqa: E402

TINY = os.path.join(pyt.ROOT, "tests", "data", "tiny.json")


def test_version_docs_and_stubs():
    with open(os.path.join(pyt.ROOT, "CMakeLists.txt")) as f:
        version = re.search(r"project\(dplace VERSION ([0-9.]+)", f.read()).group(1)
    check_eq(dplace.__version__, version, "__version__ (CMake's project version)")
    for name in dplace.__all__:
        obj = getattr(dplace, name)
        if callable(obj):
            check(obj.__doc__ and len(obj.__doc__) > 20, f"dplace.{name} has a docstring")
    for cls in (dplace.Graph, dplace.Devices, dplace.Simulator, dplace.SimResult, dplace.Delta):
        for k, v in vars(cls).items():
            if not k.startswith("_") and (callable(v) or hasattr(v, "__get__")):
                check(getattr(v, "__doc__", None), f"{cls.__name__}.{k} has a docstring")
    pkg = os.path.dirname(dplace.__file__)
    for f in ("py.typed", "__init__.pyi", "_dplace.pyi"):
        check(os.path.exists(os.path.join(pkg, f)), f"the package holds {f}")
    with open(os.path.join(pkg, "__init__.pyi")) as f:
        stub = f.read()
    for name in dplace.__all__:
        check(re.search(rf"\b{name}\b", stub), f"__init__.pyi declares {name}")


def test_graph_from_zoo():
    g = dplace.Graph.from_zoo("synthetic-600")
    check_eq(g.zoo_name, "synthetic-600", "zoo_name")
    n = len(g)
    check(n == g.n_ops and n > 400, f"len(g) {n}")
    check_eq(len(g.names), n, "names")
    check_eq(len(set(g.names)), n, "unique names")
    check_eq(g.index(g.names[7]), 7, "index of a name")
    raises(KeyError, g.index, "no such op")
    check_eq(len(g.types), n, "types")
    e = g.edges()
    st = g.stats()
    check_eq(e.shape, (st["edges"], 2), "edges() shape against stats()")
    check_eq(e.dtype, np.int32, "edges dtype")
    check(np.all((e >= 0) & (e < n)), "edges in range")
    pos = np.empty(n, dtype=np.int64)
    for order in (g.topo_order(), g.topo_order(depth_first=True)):
        check_eq(sorted(order.tolist()), list(range(n)), "a topological order is a permutation")
        pos[order] = np.arange(n)
        check(np.all(pos[e[:, 0]] < pos[e[:, 1]]), "producers before consumers")
    check_eq(g.edge_bytes().shape, (len(e),), "edge_bytes")
    f = g.features()
    check_eq(f.shape, (n, len(dplace.Graph.FEATURES)), "features shape")
    col = {c: i for i, c in enumerate(dplace.Graph.FEATURES)}
    check_eq(f[:, col["flops"]].sum(), st["flops"], "features' flops sum to the stats'")
    check_eq(int(f[:, col["n_inputs"]].sum()), st["edges"], "n_inputs sum to the edges")
    ids, vocab = g.type_ids()
    check_eq([vocab[i] for i in ids], g.types, "type_ids index the types")
    cg = g.colocation_groups()
    check_eq(int(cg.max()) + 1, st["colocation_groups"], "colocation groups")
    check_eq(sum(c != "" for c in g.constraints), st["constrained"], "constraints")
    raises(dplace.Error, dplace.Graph.from_zoo, "no-such-model", match="no-such-model")
    raises(ValueError, dplace.Graph.from_zoo, "nmt2", batch=0, match="batch")
    raises(TypeError, dplace.Graph.from_zoo, "nmt2", batch=2.5)
    check_eq(len(dplace.Graph.from_zoo("nmt2", batch=16)), len(dplace.Graph.from_zoo("nmt2")), "batch keeps ops")
    raises(TypeError, dplace.Graph)


def test_graph_files_and_text():
    g = dplace.Graph.from_file(TINY)
    check_eq((g.name, len(g), g.zoo_name), ("tiny", 5, None), "tiny.json")
    check_eq(g.scopes[2], "dense", "scope")
    check_eq(g.constraints[0], "cpu", "constraint")
    d = dplace.Devices.preset("k40x2")
    p = np.array([0, 1, 1, 1, 1], dtype=np.int32)
    want = dplace.Simulator(g, d).simulate(p)
    tmp = pyt.tmpdir()
    path = os.path.join(tmp, "g.json")
    g.save(path)
    for h in (dplace.Graph.from_file(path), dplace.Graph.from_json(g.to_json()),
              dplace.Graph.from_json(g.to_json().encode()), pickle.loads(pickle.dumps(g))):
        r = dplace.Simulator(h, d).simulate(p)
        check(r.step_time.hex() == want.step_time.hex(), "a round trip simulates the same")
        check_eq(h.names, g.names, "names after a round trip")
    e = raises(dplace.Error, dplace.Graph.from_file, os.path.join(tmp, "missing.json"), match="missing.json")
    check_eq(e.status, "io", "status of a missing file")
    e = raises(dplace.Error, dplace.Graph.from_json, '{"format": "dplace-graph", "version": 1, "ops": [{"name": 3}]}')
    check(e.status in ("parse", "invalid"), f"status {e.status}")
    raises(dplace.Error, dplace.Graph.from_json, "{", what="mine", match="mine")
    raises(ValueError, dplace.Graph.from_json, "ab\0c")
    raises(TypeError, dplace.Graph.from_file, 3)


def test_zoo_graph_pickles_by_recipe():
    g = dplace.Graph.from_zoo("nmt2", batch=16)
    data = pickle.dumps(g)
    check(len(data) < 200, f"a zoo graph pickles as its recipe ({len(data)} bytes)")
    h = pickle.loads(data)
    check_eq((h.zoo_name, len(h), h.names[:5]), (g.zoo_name, len(g), g.names[:5]), "unpickled")


def test_devices():
    d = dplace.Devices.preset("k40x4")
    check_eq(len(d), 5, "k40x4 has 5 devices")
    check_eq(d.names, ["cpu:0", "gpu:0", "gpu:1", "gpu:2", "gpu:3"], "names")
    check_eq(d.kinds, ["cpu", "gpu", "gpu", "gpu", "gpu"], "kinds")
    check_eq(d.gpus(), [1, 2, 3, 4], "gpus")
    check_eq(d.cpus(), [0], "cpus")
    check_eq(d.memory_bytes.dtype, np.uint64, "memory dtype")
    check(d.memory_bytes[1] > 11 * 2 ** 30, "a K40 has 12 GB")
    check_eq(d.index("gpu:2"), 3, "index")
    raises(KeyError, d.index, "tpu:0")
    check_eq(d.preset_name, "k40x4", "preset_name")
    check(d.transfer_seconds(1, 2, 1e6) > 0 and d.transfer_seconds(1, 1, 1e6) == 0, "transfer_seconds")
    # the same set built from Python simulates the same
    e = dplace.Devices(d.devices, d.links, name="mine", staging=d.staging)
    check_eq((e.name, e.preset_name, e.names), ("mine", None, d.names), "built from Python")
    g = dplace.Graph.from_zoo("nmt2")
    p = g.expert_placement(d)
    want = dplace.Simulator(g, d).simulate(p).step_time
    tmp = pyt.tmpdir()
    e.save(os.path.join(tmp, "d.json"))
    for x in (e, dplace.Devices.from_file(os.path.join(tmp, "d.json")), dplace.Devices.from_json(e.to_json()),
              dplace.Devices.load(os.path.join(tmp, "d.json")), pickle.loads(pickle.dumps(e)),
              pickle.loads(pickle.dumps(d)), dplace.Devices.load("k40x4")):
        check_eq(dplace.Simulator(g, x).simulate(p).step_time, want, f"{x!r} simulates as k40x4")
    # one GPU and a CPU without a link between them: transfers cross... nothing: refused
    one = [dict(name="cpu:0", kind="cpu", peak_flops=1e12, mem_bandwidth=5e10, memory_bytes=2 ** 36),
           dict(name="gpu:0", kind="gpu", peak_flops=5e12, mem_bandwidth=3e11, memory_bytes=2 ** 34, streams=2)]
    small = dplace.Devices(one, [dict(**{"from": "cpu:0", "to": "gpu:0", "bandwidth": 1e10})])
    check_eq(small.streams.tolist(), [1, 2], "streams")
    check_eq(len(small.links), 2, "a duplex link is two directions")
    raises(ValueError, dplace.Devices, [dict(one[0], colour="red")], match="colour")
    raises(ValueError, dplace.Devices, [dict(one[0], kind="tpu")], match="kind")
    raises(ValueError, dplace.Devices, [{"name": "x", "kind": "cpu"}], match="peak_flops")
    raises(TypeError, dplace.Devices, [dict(one[0], peak_flops="fast")], match="peak_flops")
    raises(dplace.Error, dplace.Devices, one + [one[0]], match="cpu:0")
    raises(dplace.Error, dplace.Devices, one, [dict(**{"from": "cpu:0", "to": "gpu:9", "bandwidth": 1e9})],
           match="gpu:9")
    raises(TypeError, dplace.Devices, [3])
    raises(dplace.Error, dplace.Devices.preset, "k40x99", match="k40x99")


def test_devices_tensor_flops():
    """A set built from a preset's dicts keeps its tensor-core peaks: a bfloat16 product simulates as on the
    preset, at the BF16 peak; a bad tensor_flops is refused naming it."""
    d = dplace.Devices.preset("a100-sxmx2")
    check_eq(d.devices[1]["tensor_flops"], {"tf32": 156e12, "float16": 312e12, "bfloat16": 312e12}, "A100's peaks")
    check("tensor_flops" not in d.devices[0], "a CPU has none")
    g = dplace.Graph.from_json(
        '{"format": "dplace-graph", "version": 1, "ops": ['
        '{"name": "a", "type": "Placeholder", "outputs": [{"shape": [4096, 4096], "dtype": "bfloat16"}]},'
        '{"name": "mm", "type": "mm", "inputs": [0, 0], "outputs": [{"shape": [4096, 4096], "dtype": "bfloat16"}],'
        ' "flops": 137438953472}]}')
    e = dplace.Devices(d.devices, d.links)
    want = dplace.Simulator(g, d).simulate([1, 1]).step_time
    check_eq(dplace.Simulator(g, e).simulate([1, 1]).step_time, want, "bfloat16 mm on the rebuilt set")
    check(want < 137438953472 / 19.5e12, f"{want} s: faster than the FP32 peak allows")
    gpu = dict(d.devices[1], name="gpu:9")
    raises(ValueError, dplace.Devices, [dict(gpu, tensor_flops={"fp8": 1e15})], match="fp8")
    raises(dplace.Error, dplace.Devices, [dict(gpu, model="P100", tensor_flops={"bfloat16": 1e14})], match="bfloat16")


def test_lists():
    check("nmt4" in [n for n, _ in dplace.zoo_models()], "zoo_models")
    check("k40x4" in dplace.device_presets(), "device_presets")
    names = [n for n, _ in dplace.agents()]
    check("dplace" in names and "search" in names and "hp" in names, f"agents {names}")
    s = {r["name"]: r for r in dplace.settings("hp")}
    check("lr" in s and "batch" in s and "search-after" in s, "settings rows")
    check_eq(s["grouper"]["value"], "learned", "hp's grouper")
    check("metis" in s["grouper"]["choices"], "grouper choices")
    raises(ValueError, dplace.settings, "nope", match="nope")
    check_eq(dplace.place_methods()[:3], ["cpu", "gpu", "expert"], "place_methods")
    check("metis" in dplace.group_methods(), "group_methods")



def fresh_python(code):
    """Runs code in a new interpreter that imports the dplace under test: (exit status, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(dplace.__file__))))
    return pyt.run([sys.executable, "-c", code], env=env)


def test_import_loads_no_submodule_nor_torch():
    rc, out, err = fresh_python("import dplace, sys; print(sorted(m for m in sys.modules if m == 'torch' or "
                                "m.startswith(('torch.', 'gymnasium', 'dplace.'))))")
    check_eq(rc, 0, f"exit status (stderr: {err.strip()})")
    check_eq(out.strip(), "['dplace._dplace']", "modules after import dplace")


def test_submodules_load_on_first_use():
    rc, out, err = fresh_python(
        "import dplace\n"
        "env = dplace.envs.PlacementEnv('synthetic-600', 'k40x2')\n"
        "obs, info = env.reset(seed=1)\n"
        "n = len(dplace.Devices.preset('k40x2'))\n"
        "print(callable(dplace.torch_export.export), dplace.spaces.Box.__name__, obs['mask'].shape[1] == n)\n"
        "print(all(n in dir(dplace) for n in ('envs', 'spaces', 'torch_export')))")
    check_eq(rc, 0, f"exit status (stderr: {err.strip()})")
    check_eq(out.split(), ["True", "Box", "True", "True"], "the submodules after a plain import dplace")


def test_unknown_attribute_raises_attribute_error():
    raises(AttributeError, getattr, dplace, "no_such_thing", match="no_such_thing")

if __name__ == "__main__":
    pyt.main(globals())
