#!/usr/bin/python3
"""scripts/dplace-export-torch: exported graphs load, simulate and place;
FLOPs of convolution, matmul and their gradients match hand computation;
bad models and arguments get one clear error and write nothing.

usage: test_export_torch.py DPLACE_BINARY [TEST]   (run from tests/; runs
every test_* function, or the one named; exit 0 when all pass, 1 on the
first failure, 2 for an unknown name, 77 when /usr/bin/python3 has no torch)."""
import importlib
import importlib.machinery
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import contextlib

import script_check
from script_check import check, check_eq

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORTER = os.path.join(HERE, "..", "scripts", "dplace-export-torch")
MODELS = os.path.join(HERE, "data", "torch", "models.py")

try:
    torch = importlib.import_module("torch")
    importlib.import_module("torchvision")
except ImportError as e:
    print(f"test_export_torch: skipped: {e} (scripts/setup.sh installs python3-torch and python3-torchvision)")
    sys.exit(77)

loader = importlib.machinery.SourceFileLoader("dplace_export_torch", EXPORTER)
spec = importlib.util.spec_from_loader("dplace_export_torch", loader)
ex = importlib.util.module_from_spec(spec)
loader.exec_module(ex)

DPLACE = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("DPLACE_BIN", "")
TMP = tempfile.mkdtemp(prefix="test_export_torch.")


def export(*args):
    """Runs the exporter in this process: (exit status, stderr text)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = ex.main(["-q"] + list(args))
    return rc, err.getvalue()


def dplace(*args):
    r = subprocess.run([DPLACE] + list(args), capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def load(path):
    with open(path) as f:
        return json.load(f)


def op_named(g, suffix_type, scope):
    hits = [op for op in g["ops"] if op["type"] == suffix_type and op.get("scope") == scope]
    check(len(hits) == 1, f"one {suffix_type} op in scope {scope}, found {len(hits)}")
    return hits[0]


def simulate_ok(path, devices="p100x1"):
    rc, out = dplace("simulate", "--graph", path, "--devices", devices, "--placement", "gpu", "--json")
    check(rc == 0, f"dplace simulate {path}: exit {rc}: {out}")
    res = json.loads(out[out.index("{"):])
    check(res["valid"], f"{path}: the one-GPU placement is invalid: {res['reason']}")
    check_eq(res["unknown_op_types"], [], f"{path}: op types unknown to the cost model")
    return res


def test_small_flops():
    """conv 3->8 3x3 pad 1 + bias, linear 512->10, batch 2, 8x8: by hand."""
    out = os.path.join(TMP, "small.json")
    rc, err = export(f"{MODELS}:small", "--batch", "2", "--input-shape", "3,8,8", "--momentum", "0", "-o", out)
    check_eq(rc, 0, f"export small: {err}")
    g = load(out)
    # forward convolution: 2 * (N*Cout*H*W = 2*8*8*8) * (Cin*kh*kw = 27), plus the bias per output
    conv = op_named(g, "convolution", "conv")
    check_eq(conv["flops"], 2 * 1024 * 27 + 1024, "convolution flops")
    check_eq(conv["outputs"], [{"shape": [2, 8, 8, 8], "dtype": "float32"}], "convolution output")
    # its gradient: the input needs none, so the weight gradient (one direct
    # convolution) and the bias gradient (a sum over grad_out)
    back = op_named(g, "convolution_backward", "gradients/conv")
    check_eq(back["flops"], 2 * 1024 * 27 + 1024, "convolution_backward flops")
    check_eq(back["outputs"][0], {"bytes": 0}, "convolution_backward: no input gradient")
    check_eq(back["outputs"][1], {"shape": [8, 3, 3, 3], "dtype": "float32"}, "convolution_backward weight grad")
    # linear: addmm [2,512] x [512,10] + bias
    fc = op_named(g, "addmm", "fc")
    check_eq(fc["flops"], 2 * 2 * 512 * 10 + 2 * 10, "addmm flops")
    # its gradient: grad_in = grad [2,10] x W [10,512]; grad_W = grad^T [10,2] x x [2,512]
    mms = [op for op in g["ops"] if op["type"] == "mm" and op.get("scope") == "gradients/fc"]
    check_eq(sorted(op["flops"] for op in mms), [2 * 2 * 10 * 512, 2 * 10 * 2 * 512], "mm flops of fc's gradient")
    # parameter placeholders carry the parameters' bytes; no momentum: no state
    params = {op["name"]: op for op in g["ops"] if op["type"] == "Parameter"}
    check_eq(sorted(params), ["conv/bias", "conv/weight", "fc/bias", "fc/weight"], "parameter placeholders")
    check_eq(params["fc/weight"]["param_bytes"], 10 * 512 * 4, "fc/weight param_bytes")
    check_eq([op["name"] for op in g["ops"] if op["type"] == "Buffer"], [], "no optimizer state without momentum")
    # the update of each parameter is colocated with it
    upd = [op for op in g["ops"] if op.get("colocate") == "fc/weight" and op["type"] != "Parameter"]
    check(upd and all(op["type"].endswith("_") for op in upd), f"fc/weight's in-place update colocated: {upd}")
    # every input refers to an earlier-listed producer and an existing slot
    for i, op in enumerate(g["ops"]):
        for inp in op["inputs"]:
            p, slot = (inp, 0) if isinstance(inp, int) else inp
            check(0 <= p < len(g["ops"]) and slot < len(g["ops"][p]["outputs"]), f"op {i} input {inp}")
    simulate_ok(out)
    return out


def test_frozen_parameters():
    """A frozen parameter (requires_grad False) gets no gradient and no optimizer state: the frozen
    convolution runs forward only, the trained head's parameters keep their momentum."""
    out = os.path.join(TMP, "small_frozen.json")
    rc, err = export(f"{MODELS}:small_frozen", "--batch", "2", "--input-shape", "3,8,8", "-o", out)
    check_eq(rc, 0, f"export small_frozen: {err}")
    g = load(out)
    types = [op["type"] for op in g["ops"]]
    check_eq(types.count("convolution"), 1, "the frozen convolution's forward pass")
    check_eq(types.count("convolution_backward"), 0, "no gradient of the frozen convolution")
    params = sorted(op["name"] for op in g["ops"] if op["type"] == "Parameter")
    check_eq(params, ["conv/bias", "conv/weight", "fc/bias", "fc/weight"], "every parameter is a placeholder")
    states = sorted(op["name"] for op in g["ops"] if op["type"] == "Buffer")
    check_eq(states, ["fc/bias/momentum_buffer", "fc/weight/momentum_buffer"], "momentum for the trained ones only")
    check([op for op in g["ops"] if op.get("colocate") == "conv/weight" and op["type"] != "Parameter"] == [],
          "nothing updates the frozen weight")
    simulate_ok(out)


def resnet18():
    """Exports resnet18 at batch 2, 64x64, once: (its path, seconds taken)."""
    out = os.path.join(TMP, "resnet18.json")
    if not os.path.exists(out):
        t0 = time.time()
        rc, err = export("resnet18", "--batch", "2", "--input-shape", "3,64,64", "-o", out)
        check_eq(rc, 0, f"export resnet18: {err}")
        resnet18.seconds = time.time() - t0
    return out, resnet18.seconds


def test_resnet18():
    out, seconds = resnet18()
    g = load(out)
    types = {op["type"] for op in g["ops"]}
    for t in ("convolution", "convolution_backward", "native_batch_norm", "native_batch_norm_backward",
              "max_pool2d_with_indices", "addmm", "threshold_backward", "Parameter", "Buffer", "Placeholder"):
        check(t in types, f"resnet18 has {t} ops")
    check(len(g["ops"]) > 500, f"resnet18: {len(g['ops'])} ops")
    # a multi-output op's later slots are read through [producer, slot] inputs
    bn_back = op_named(g, "native_batch_norm_backward", "gradients/layer1/0/bn1")
    check(any(isinstance(i, list) for i in bn_back["inputs"]), "native_batch_norm_backward reads the saved statistics")
    # parameters: 11,689,512 floats, and as many of SGD's momentum buffers
    pbytes = sum(op.get("param_bytes", 0) for op in g["ops"] if op["type"] == "Parameter")
    check_eq(pbytes, 11689512 * 4, "resnet18 parameter bytes")
    # FLOPs of the first convolution: 7x7/2, 3->64, 32x32 output at batch 2
    conv1 = op_named(g, "convolution", "conv1")
    check_eq(conv1["flops"], 2 * (2 * 64 * 32 * 32) * (3 * 7 * 7), "resnet18 conv1 flops")
    res = simulate_ok(out)
    check(res["step_time_s"] > 0, "resnet18 simulates")
    rc, text = dplace("baseline", "--graph", out, "--devices", "k40x2", "--methods", "gpu,metis,m-etf")
    check(rc == 0 and "m-etf" in text, f"dplace baseline on resnet18: exit {rc}: {text}")
    print(f"resnet18: {len(g['ops'])} ops, exported in {seconds:.1f} s")
    return out


def test_encoder():
    out = os.path.join(TMP, "encoder.json")
    rc, err = export(f"{MODELS}:encoder2", "--batch", "4", "--input-shape", "16,32", "--optimizer", "adam",
                     "-o", out)
    check_eq(rc, 0, f"export encoder2: {err}")
    g = load(out)
    types = {op["type"] for op in g["ops"]}
    for t in ("bmm", "_softmax", "native_layer_norm", "native_layer_norm_backward", "addcdiv_", "mse_loss"):
        check(t in types, f"encoder has {t} ops (types: {sorted(types)})")
    scopes = {op.get("scope", "") for op in g["ops"]}
    check("layers/1/self_attn" in scopes and "gradients/layers/0/linear1" in scopes, f"encoder scopes: {sorted(scopes)[:20]}")
    # Adam keeps two state tensors per parameter
    n_params = sum(op["type"] == "Parameter" for op in g["ops"])
    n_state = sum(op["type"] == "Buffer" and op["name"].endswith(("/exp_avg", "/exp_avg_sq")) for op in g["ops"])
    check_eq(n_state, 2 * n_params, "Adam state placeholders")
    # a batched matmul of the attention: [B*H, S, E/H] x [B*H, E/H, S] = 2 * 16 * 16 * 16 * 8
    bmms = [op for op in g["ops"] if op["type"] == "bmm" and op.get("scope") == "layers/0/self_attn"]
    check(any(op["flops"] == 2 * 16 * 16 * 16 * 8 for op in bmms), f"attention bmm flops: {[op['flops'] for op in bmms]}")
    simulate_ok(out, "k40x2")
    rc, text = dplace("baseline", "--graph", out, "--devices", "k40x2", "--methods", "gpu,m-topo")
    check(rc == 0 and "m-topo" in text, f"dplace baseline on the encoder: exit {rc}: {text}")
    return out


def test_map_placement():
    graph = resnet18()[0]
    g = load(graph)
    place = os.path.join(TMP, "placement.json")
    n = len(g["ops"])
    # forward ops of layer1 on gpu:1, everything else on gpu:0
    devs = [1 if op.get("scope", "").startswith("layer1/") else 0 for op in g["ops"]]
    with open(place, "w") as f:
        json.dump({"format": "dplace-placement", "version": 1, "devices": ["gpu:0", "gpu:1"], "placement": devs}, f)
    rc, text = dplace("simulate", "--graph", graph, "--devices", "k40x2", "--placement", place)
    check(rc == 0, f"simulate with the hand placement: {text}")
    out = os.path.join(TMP, "map.json")
    rc, err = export("--map-placement", place, "--graph", graph, "-o", out)
    check_eq(rc, 0, f"--map-placement: {err}")
    m = load(out)
    check_eq(m["layer1.0.conv1"]["device"], "gpu:1", "layer1.0.conv1's device")
    check_eq(m["fc"]["device"], "gpu:0", "fc's device")
    # its gradients and updates count for the module too
    check(m["layer1.0.conv1"]["ops"]["gpu:0"] > 0, "layer1.0.conv1's gradient ops are counted")
    # a placement of another graph is refused
    with open(place, "w") as f:
        json.dump({"format": "dplace-placement", "version": 1, "devices": ["gpu:0"], "placement": [0] * (n - 1)}, f)
    rc, err = export("--map-placement", place, "--graph", graph)
    check(rc == 2 and "not a placement of this graph" in err, f"--map-placement of another graph: {rc} {err}")


def test_map_placement_of_split_modules():
    """A placement that splits modules: --map-placement says so, and with
    --devices prints the simulated time of its module map, which --mapped
    writes (every op on its module's device)."""
    graph = resnet18()[0]
    g = load(graph)
    place, mapped = os.path.join(TMP, "split.json"), os.path.join(TMP, "mapped.json")
    # layer1's forward ops on gpu:1, their gradients and updates on gpu:0
    devs = [1 if op.get("scope", "").startswith("layer1/") else 0 for op in g["ops"]]
    with open(place, "w") as f:
        json.dump({"format": "dplace-placement", "version": 1, "devices": ["gpu:0", "gpu:1"], "placement": devs}, f)
    os.environ["DPLACE_BIN"] = DPLACE
    rc, err = export("--map-placement", place, "--graph", graph, "--devices", "k40x2", "--mapped", mapped,
                     "-o", os.path.join(TMP, "split_map.json"))
    check_eq(rc, 0, f"--map-placement --devices: {err}")
    check("splits" in err and "modules over devices" in err, f"the split is said: {err!r}")
    line = [x for x in err.splitlines() if "module map simulated on k40x2" in x]
    check(len(line) == 1 and "the placement as given" in line[0], f"the module map's time: {err!r}")
    t_map = float(line[0].split("simulated on k40x2: ")[1].split(" s")[0])
    rc, text = dplace("simulate", "--graph", graph, "--devices", "k40x2", "--placement", mapped, "--json")
    check(rc == 0, f"simulate the module map: {text}")
    check_eq(round(json.loads(text)["step_time_s"], 6), t_map, "the module map's simulated time")
    m = load(mapped)
    check_eq(m.get("units"), "module", "the module map's granularity")
    split = ex.split_modules(ex.placement_modules(g["ops"], m["devices"], m["placement"]))
    check_eq(split, [], "modules split by the module map")


def test_optimize_places_modules():
    """dplace optimize on an export places whole modules by default: its
    --json and placement file say so, and the module map of its best
    placement is that placement, with the same simulated time."""
    graph = resnet18()[0]
    best = os.path.join(TMP, "search_best.json")
    rc, text = dplace("optimize", "--graph", graph, "--devices", "k40x2", "--agent", "search", "--updates", "20",
                      "--quiet", "--json", "-o", best)
    check(rc == 0, f"dplace optimize --agent search: exit {rc}: {text}")
    res = json.loads(text[text.index("{"):])
    check_eq(res["units"], "module", "the summary's granularity")
    check_eq(load(best).get("units"), "module", "the placement file's granularity")
    os.environ["DPLACE_BIN"] = DPLACE
    rc, err = export("--map-placement", best, "--graph", graph, "--devices", "k40x2")
    check_eq(rc, 0, f"--map-placement of the search's best: {err}")
    check("each whole" in err and "splits" not in err, f"the best splits no module: {err!r}")
    t_map = float(err.split("module map simulated on k40x2: ")[1].split(" s")[0])
    check_eq(t_map, round(res["best_step_time_s"], 6), "the module map's time against the search's")


def test_warm_start_places_modules():
    """A learned agent's imitation warm start on an export copies the best
    baseline placed by module, as the agent places: the time it names is
    that placer's by module, not by op."""
    graph = resnet18()[0]
    rc, text = dplace("optimize", "--graph", graph, "--devices", "k40x2", "--agent", "hp", "--updates", "1",
                      "--set", "warm-start=best", "--set", "warm-steps=1", "--threads", "1", "--quiet")
    check(rc == 0, f"dplace optimize --agent hp with a warm start: exit {rc}: {text}")
    line = [ln for ln in text.splitlines() if ln.startswith("warm start ")]
    check(len(line) == 1, f"one warm start line: {text}")
    name, t_warm = line[0].split(" imitating ")[1].split("'s placement (")
    t_warm = float(t_warm.split(" s)")[0])
    for units, same in (("module", True), ("op", False)):
        rc, text = dplace("baseline", "--graph", graph, "--devices", "k40x2", "--methods", name, "--json",
                          "--units", units)
        check(rc == 0, f"dplace baseline --units {units}: {text}")
        row = [m for m in json.loads(text)["methods"] if m["method"] == name][0]
        check_eq(round(row["step_time_s"], 6) == t_warm, same, f"{name} by {units} ({row['step_time_s']:.6f} s) "
                 f"against the warm start's {t_warm} s")


def test_baseline_units():
    """dplace baseline places modules on an export by default, ops with
    --units op; a graph without modules refuses --units module."""
    graph = resnet18()[0]
    for args, want in (([], "module"), (["--units", "op"], "none"), (["--units", "module:1"], "module:1")):
        rc, text = dplace("baseline", "--graph", graph, "--devices", "k40x2", "--methods", "m-etf", "--json", *args)
        check(rc == 0, f"dplace baseline {args}: exit {rc}: {text}")
        check_eq(json.loads(text)["methods"][0]["units"], want, f"m-etf's units with {args}")
    rc, text = dplace("baseline", "--model", "synthetic-200", "--devices", "k40x2", "--units", "module")
    check(rc == 2 and "has no modules" in text, f"--units module without modules: exit {rc}: {text}")


def test_accel_baselines():
    """dplace baseline lists accelerate's placements of an export: sequential
    keeps resnet18 on GPU 0, balanced spreads it over the four GPUs."""
    graph = resnet18()[0]
    rc, text = dplace("baseline", "--graph", graph, "--devices", "p100x4", "--json", "--methods",
                      "gpu,accel-balanced,accel-sequential")
    check(rc == 0, f"dplace baseline with the accel placers: exit {rc}: {text}")
    rows = {r["method"]: r for r in json.loads(text)["methods"]}
    for m, used in (("accel-sequential", 1), ("accel-balanced", 4)):
        r = rows.get(m, {})
        check(r.get("applied") and r.get("valid"), f"{m}: {r}")
        check_eq(r.get("units"), "module", f"{m}'s units")
        check_eq(r.get("devices_used"), used, f"{m}: devices used")


def test_profile():
    out = os.path.join(TMP, "profiled.json")
    rc, err = export(f"{MODELS}:small", "--batch", "2", "--input-shape", "3,8,8", "--profile", "--profile-steps", "1",
                     "--threads", "1", "-o", out)
    check_eq(rc, 0, f"export --profile: {err}")
    g = load(out)
    costs = [op["cost"] for op in g["ops"] if "cost" in op]
    check(costs and all(c.get("cpu", -1) >= 0 for c in costs), "profiled ops carry a cpu cost")
    conv = op_named(g, "convolution", "conv")
    check("cpu" in conv.get("cost", {}), "the convolution was timed")
    simulate_ok(out, "k40x1")
    rc, text = dplace("simulate", "--graph", out, "--devices", "k40x1", "--placement", "cpu")
    check(rc == 0, f"simulate the profiled graph on the CPU: {text}")


def test_bfloat16():
    """--dtype bfloat16: the products' outputs are bfloat16, the parameters float32; the graph records
    torch.backends' TF32 settings and simulates on an H100."""
    path = os.path.join(TMP, "small_bf16.json")
    rc, err = export(f"{MODELS}:small", "--input-shape", "3,8,8", "--batch", "4", "--dtype", "bfloat16", "-o", path)
    check(rc == 0, f"export: {err}")
    g = load(path)
    for op in g["ops"]:
        if op["type"] in ("convolution", "addmm", "mm"):
            check_eq(op["outputs"][0]["dtype"], "bfloat16", f"{op['name']}'s output")
        if op["type"] == "Parameter":
            check_eq(op["outputs"][0]["dtype"], "float32", f"{op['name']}'s output")
    check_eq(g.get("tf32"), {"matmul": torch.backends.cuda.matmul.allow_tf32, "conv": torch.backends.cudnn.allow_tf32},
             "the graph's tf32")
    simulate_ok(path, "h100-sxmx1")


def test_recurrent_ops_fused():
    """The ops an nn.LSTM runs, forward and backward, are marked fused (one library call issues them); its
    parameters, their updates and every other module's ops are not; the export simulates on an H100."""
    path = os.path.join(TMP, "tiny_lm.json")
    rc, err = export(f"{MODELS}:tiny_lm", "--input-shape", "5", "--input-dtype", "int64", "--input-high", "50",
                     "--batch", "2", "-o", path)
    check(rc == 0, f"export: {err}")
    g = load(path)
    fused = [op for op in g["ops"] if op.get("fused")]
    check(len(fused) > 20, f"the LSTM's ops over 5 steps are fused, found {len(fused)}")
    updates = 0
    for op in g["ops"]:
        scope, state = op.get("scope", ""), op["type"] in ("Parameter", "Buffer")
        if scope not in ("lstm", "gradients/lstm") or state:
            check(not op.get("fused"), f"{op['name']} (scope {scope!r}) is not one of the LSTM's ops, yet fused")
        elif scope == "gradients/lstm":
            check(op.get("fused") is True, f"{op['name']}: the LSTM's backward op is not fused")
        elif not op.get("fused"):
            check("colocate" in op, f"{op['name']}: an op of the LSTM's scope unfused but no parameter's update")
            updates += 1
    check(updates >= 4, f"the updates of the LSTM's 4 parameters are not fused, found {updates}")
    simulate_ok(path, "h100-sxmx1")


def test_errors():
    out = os.path.join(TMP, "never.json")
    cases = [
        (["no_such_net", "-o", out], 'model "no_such_net": torchvision'),
        ([f"{MODELS}:data_dependent", "--input-shape", "4", "-o", out], "cannot be traced"),
        ([f"{MODELS}:not_a_module", "--input-shape", "4", "-o", out], "not a torch.nn.Module"),
        ([f"{MODELS}:missing", "--input-shape", "4", "-o", out], 'has no callable "missing"'),
        ([f"{MODELS}:small", "-o", out], "--input-shape is required"),
        ([f"{MODELS}:small", "--input-shape", "3,x", "-o", out], "expected positive integers"),
        ([f"{MODELS}:small", "--input-shape", "3,9", "-o", out], "fails on an input of shape [32, 3, 9]"),
        (["resnet18", "--batch", "0", "-o", out], "--batch 0"),
        (["nosuchdir/mod.py:f", "--input-shape", "4", "-o", out], "no file nosuchdir/mod.py"),
        ([f"{MODELS}:small", "--input-shape", "3,8,8", "--batch", "2", "-o", os.path.join(TMP, "no", "dir.json")],
         "cannot write"),
        ([f"{MODELS}:small", "--input-shape", "3,8,8", "--dtype", "int8", "-o", out], 'dtype "int8"'),
        ([f"{MODELS}:small", "--input-shape", "3,8,8", "--tf32", "maybe", "-o", out], 'tf32 "maybe"'),
    ]
    for args, want in cases:
        rc, err = export(*args)
        check(rc == 2 and want in err and err.count("\n") == 1,
              f"{' '.join(args)}: want exit 2 and one line with '{want}', got {rc}: {err!r}")
        check(not os.path.exists(out), f"{' '.join(args)}: wrote {out}")
    leftovers = [f for f in os.listdir(TMP) if ".tmp." in f]
    check_eq(leftovers, [], "temporary files left behind")



if __name__ == "__main__":
    script_check.main("test_export_torch", globals(), DPLACE, setup=lambda: torch.set_num_threads(1))
