#!/usr/bin/python3
"""scripts/dplace-measure-torch: a two-device placement of a small model,
every device mapped to the CPU, measures a positive step time on a parseable
last line; a placement of another graph, a missing module, a failing model, a
device this machine lacks give one line each; out of memory prints `oom`;
`dplace optimize --measure` with it completes a short run whose log holds the
measured times.

usage: test_measure_torch.py DPLACE_BINARY   (exit 0 when all pass, 1 on the
first failure, 77 when /usr/bin/python3 has no torch). Runs in seconds: the
measurer runs in this process (torch imported once) but for the end-to-end
run, which starts it per sample."""
import contextlib
import csv
import importlib
import importlib.machinery
import importlib.util
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

import script_check
from script_check import check

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.normpath(os.path.join(HERE, "..", "scripts"))
MEASURER = os.path.join(SCRIPTS, "dplace-measure-torch")
MODELS = os.path.join(HERE, "data", "torch", "models.py")
RESULT = re.compile(r"^step_time_s ([0-9.eE+-]+)$")

try:
    torch = importlib.import_module("torch")
    importlib.import_module("torchvision")
except ImportError as e:
    print(f"test_measure_torch: skipped: {e} (scripts/setup.sh installs python3-torch and python3-torchvision)")
    sys.exit(77)

sys.dont_write_bytecode = True
loader = importlib.machinery.SourceFileLoader("dplace_measure_torch", MEASURER)
spec = importlib.util.spec_from_loader("dplace_measure_torch", loader)
me = importlib.util.module_from_spec(spec)
loader.exec_module(me)
ex = me.ex  # the exporter, as the measurer loaded it

DPLACE = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("DPLACE_BIN", "")
TMP = tempfile.mkdtemp(prefix="test_measure_torch.")
SMALL = [f"{MODELS}:small", "--batch", "4", "--input-shape", "3,8,8"]
FAST = ["--steps", "3", "--warmup", "1", "--threads", "1"]


def measure(*args):
    """Runs the measurer in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = me.main(list(args))
        except SystemExit as e:  # argparse
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def export(path, *args):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = ex.main(["-q", "-o", path] + list(args))
    check(rc == 0, f"export {' '.join(args)}: {err.getvalue()}")
    with open(path) as f:
        return json.load(f)


def write_placement(path, graph, devices, device_of_op):
    """A placement of `graph` (a loaded dplace-graph) putting op i on devices[device_of_op(op)]."""
    with open(path, "w") as f:
        json.dump({"format": "dplace-placement", "version": 1, "graph": graph["name"], "devices": devices,
                   "placement": [device_of_op(op) for op in graph["ops"]]}, f)
    return path


def step_time(rc, out, err, what):
    lines = [ln for ln in out.splitlines() if ln.strip()]
    check(rc == 0 and lines, f"{what}: exit {rc}, stdout {out!r}, stderr {err!r}")
    m = RESULT.match(lines[-1])
    check(m is not None, f"{what}: last line {lines[-1]!r} is not step_time_s SECONDS")
    t = float(m.group(1))
    check(0 < t < 60, f"{what}: step time {t}")
    return t


def one_line_error(rc, out, err, want_rc, want, what):
    check(rc == want_rc and want in err and err.count("\n") == 1 and not out.strip(),
          f"{what}: want exit {want_rc} and one line on stderr with {want!r}, got {rc}: stdout {out!r}, stderr {err!r}")


def test_two_devices():
    """conv on gpu:0, fc on gpu:1, both run on the CPU."""
    g, place = small_on_two_devices()
    rc, out, err = measure(*SMALL, *FAST, "--map-all", "cpu", "-v", place)
    step_time(rc, out, err, "small on two devices, --map-all cpu")
    # -v: both devices ran torch operations (the conv and the root's on gpu:0, the linear on gpu:1)
    counts = re.search(r"per device: gpu:0 (\d+), gpu:1 (\d+)", err)
    check(counts and int(counts.group(1)) > 0 and int(counts.group(2)) > 0, f"operations per device: {err}")
    # the same with --map per device, --model, --graph instead of tracing, the placement from the environment
    os.environ["DPLACE_PLACEMENT"] = place
    try:
        rc, out, err = measure("--model", SMALL[0], *SMALL[1:], *FAST, "--map", "gpu:0=cpu", "--map", "gpu:1=cpu",
                               "--graph", os.path.join(TMP, "small.json"))
    finally:
        del os.environ["DPLACE_PLACEMENT"]
    step_time(rc, out, err, "small with --map, --graph and DPLACE_PLACEMENT")


def test_frozen_parameters():
    """A model with a frozen layer: its export (no state for the frozen parameters) is accepted as the
    model's graph and measured."""
    args = [f"{MODELS}:small_frozen", "--batch", "4", "--input-shape", "3,8,8"]
    path = os.path.join(TMP, "small_frozen.json")
    g = export(path, *args)
    place = write_placement(os.path.join(TMP, "small_frozen_p.json"), g, ["cpu:0"], lambda op: 0)
    rc, out, err = measure(*args, *FAST, "--graph", path, place)
    step_time(rc, out, err, "small_frozen with its export as --graph")
    # the unfrozen model's export is not this model's step
    other = os.path.join(TMP, "small_for_frozen.json")
    export(other, *SMALL)
    rc, out, err = measure(*args, *FAST, "--graph", other, place)
    one_line_error(rc, out, err, 2, "not an export of", "small's export given for small_frozen")


def test_bfloat16():
    """A bfloat16 export is measured with its forward and loss under torch.autocast, its placement checked
    against the bfloat16 trace (with --graph or without); a float32 step refuses it in one line."""
    args = SMALL + ["--dtype", "bfloat16"]
    path = os.path.join(TMP, "small_bf16.json")
    g = export(path, *args)
    check(any(o.get("dtype") == "bfloat16" for op in g["ops"] for o in op["outputs"]), "the export is in bfloat16")
    place = write_placement(os.path.join(TMP, "small_bf16_p.json"), g, ["cpu:0"], lambda op: 0)
    for extra in (["--graph", path], []):
        rc, out, err = measure(*args, *FAST, "-v", *extra, place)
        step_time(rc, out, err, f"small in bfloat16 {' '.join(extra)}")
        check("under torch.autocast in bfloat16 on cpu" in err, f"autocast said: {err}")
    rc, out, err = measure(*SMALL, *FAST, "--graph", path, place)
    one_line_error(rc, out, err, 2, "its products are in bfloat16, the step's --dtype is float32",
                   "a bfloat16 export measured as float32")
    rc, out, err = measure(*SMALL, *FAST, "--dtype", "int8", place)
    one_line_error(rc, out, err, 2, 'dtype "int8"', "an unknown dtype")


def test_encoder_layers():
    """A transformer encoder with its two layers on two devices: residual adds
    and other functional operations of parent modules run too."""
    args = [f"{MODELS}:encoder2", "--batch", "2", "--input-shape", "8,32", "--optimizer", "adam"]
    g = export(os.path.join(TMP, "encoder.json"), *args)
    place = write_placement(os.path.join(TMP, "encoder_p2.json"), g, ["cpu:0", "gpu:0"],
                            lambda op: 1 if me.ex.module_path(op.get("scope", "")).startswith("layers.1") else 0)
    rc, out, err = measure(*args, *FAST, "--map", "gpu:0=cpu", "-v", place)
    step_time(rc, out, err, "encoder2 on cpu:0 and gpu:0")
    check(re.search(r"per device: cpu:0 [1-9]\d*, gpu:0 [1-9]", err) is not None, f"encoder2 per device: {err}")


def small_on_two_devices():
    """The small model's export and a two-device placement of it."""
    g = export(os.path.join(TMP, "small.json"), *SMALL)
    place = write_placement(os.path.join(TMP, "small_p2.json"), g, ["gpu:0", "gpu:1"],
                            lambda op: 1 if me.ex.module_path(op.get("scope", "")) == "fc" else 0)
    return g, place


def test_split_placement_said():
    """A placement that splits a module runs as its module map, and says so
    on stderr; a placement of whole modules runs as it is, silently."""
    g, whole = small_on_two_devices()
    split = write_placement(os.path.join(TMP, "small_split.json"), g, ["gpu:0", "gpu:1"],
                            lambda op: 1 if op.get("scope", "") == "fc" else 0)  # fc's gradients stay on gpu:0
    rc, out, err = measure(*SMALL, *FAST, "--map-all", "cpu", split)
    step_time(rc, out, err, "small, fc split")
    check("splits 1 of" in err and "module map" in err, f"the split is said: {err!r}")
    rc, out, err = measure(*SMALL, *FAST, "--map-all", "cpu", whole)
    step_time(rc, out, err, "small, whole modules")
    check("splits" not in err, f"nothing said of whole modules: {err!r}")


def test_errors():
    g, place = small_on_two_devices()
    # a placement of another graph: another op count, or another graph's name
    other = write_placement(os.path.join(TMP, "other.json"), {"name": "vgg16_b4", "ops": g["ops"][:-3]},
                            ["gpu:0"], lambda op: 0)
    one_line_error(*measure(*SMALL, *FAST, "--map-all", "cpu", other), 2,
                   f"places {len(g['ops']) - 3} ops but the export of", "a placement of fewer ops")
    renamed = write_placement(os.path.join(TMP, "renamed.json"), {"name": "vgg16_b4", "ops": g["ops"]},
                              ["gpu:0"], lambda op: 0)
    one_line_error(*measure(*SMALL, *FAST, "--map-all", "cpu", renamed), 2,
                   'a placement of graph "vgg16_b4", not of "small_b4"', "a placement of another graph's name")
    # --graph of another model
    r18 = os.path.join(TMP, "r18.json")
    with open(r18, "w") as f:
        json.dump(g, f)
    one_line_error(*measure("resnet18", "--batch", "4", "--input-shape", "3,8,8", *FAST, "--graph", r18, "--map-all",
                            "cpu", place), 2, "not an export of model \"resnet18\"", "--graph of another model")
    # missing modules: no such file, no such callable, a graph naming a module the model lacks
    one_line_error(*measure("no/such/models.py:small", "--input-shape", "3,8,8", "--map-all", "cpu", place), 2,
                   "no file no/such/models.py", "a missing model file")
    one_line_error(*measure(f"{MODELS}:nothing", "--input-shape", "3,8,8", "--map-all", "cpu", place), 2,
                   'has no callable "nothing"', "a missing callable")
    bad = json.loads(json.dumps(g))
    for op in bad["ops"]:
        if op.get("scope") == "gradients/fc":
            op["scope"] = "gradients/head"
    with open(os.path.join(TMP, "head.json"), "w") as f:
        json.dump(bad, f)
    one_line_error(*measure(*SMALL, *FAST, "--graph", os.path.join(TMP, "head.json"), "--map-all", "cpu", place), 2,
                   'belongs to module "head", which model', "a graph naming a missing module")
    # failing models: the builder raises; the real step fails (token ids past the embedding)
    one_line_error(*measure(f"{MODELS}:raises", "--input-shape", "3,8,8", "--map-all", "cpu", place), 2,
                   "raises() failed: RuntimeError: no weights at /nonexistent", "a builder that raises")
    tok = [f"{MODELS}:bad_tokens", "--batch", "2", "--input-shape", "4", "--input-dtype", "int64"]
    gt = export(os.path.join(TMP, "tokens.json"), *tok)
    tplace = write_placement(os.path.join(TMP, "tokens_p.json"), gt, ["cpu:0"], lambda op: 0)
    one_line_error(*measure(*tok, *FAST, tplace), 1,
                   "the training step failed (step 1 of 3): IndexError: index out of range", "a failing step")
    rc, out, err = measure(*tok, *FAST, "--input-high", "10", tplace)
    step_time(rc, out, err, "bad_tokens with ids in range")
    # a device this machine lacks (no CUDA here, or fewer than 64 GPUs)
    one_line_error(*measure(*SMALL, *FAST, "--map", "gpu:0=cuda:63", "--map", "gpu:1=cpu", place), 2,
                   "p2.json: device gpu:0 (", "a GPU the machine lacks")
    check("CUDA GPU" in measure(*SMALL, *FAST, "--map", "gpu:0=cuda:63", "--map", "gpu:1=cpu", place)[2],
          "the message says how many CUDA GPUs there are")
    if not torch.cuda.is_available():
        one_line_error(*measure(*SMALL, *FAST, place), 2, "this machine has no CUDA GPU", "gpu:0 by default")
    one_line_error(*measure(*SMALL, *FAST, "--map-all", "nonesuch", place), 2, "not a torch device", "a bad device")
    one_line_error(*measure(*SMALL, "--steps", "2", "--warmup", "2", "--map-all", "cpu", place), 2,
                   "needs 0 <= warmup < steps", "--warmup not below --steps")
    one_line_error(*measure(*SMALL, "--map-all", "cpu", os.path.join(TMP, "small.json")), 2,
                   "not a dplace-placement v1 file", "a graph for a placement")


def test_oom():
    args = [f"{MODELS}:huge", "--batch", "2", "--input-shape", "4"]
    g = export(os.path.join(TMP, "huge.json"), *args)
    place = write_placement(os.path.join(TMP, "huge_p.json"), g, ["cpu:0"], lambda op: 0)
    rc, out, err = measure(*args, *FAST, place)
    lines = out.strip().splitlines()
    check(rc == 0 and lines and lines[-1].startswith("oom ") and "allocate" in lines[-1],
          f"1 PiB scratch tensor: want exit 0 and an oom line, got {rc}: {out!r} {err!r}")


def test_optimize():
    """dplace optimize --measure with the script: every sample is measured."""
    small_on_two_devices()  # the export the run places
    calls = os.path.join(TMP, "calls.txt")
    log = os.path.join(TMP, "log.csv")
    cmd = (f"echo \"$1\" >> {shlex.quote(calls)}; /usr/bin/python3 {shlex.quote(MEASURER)} "
           f"{shlex.quote(SMALL[0])} --batch 4 --input-shape 3,8,8 --graph {shlex.quote(os.path.join(TMP, 'small.json'))} "
           "--steps 3 --warmup 1 --threads 1 --map-all cpu \"$1\"")
    r = subprocess.run([DPLACE, "optimize", "--graph", os.path.join(TMP, "small.json"), "--devices", "k40x2",
                        "--agent", "hp", "--updates", "2", "--set", "samples=2", "--baselines", "none", "--quiet",
                        "--log", log, "--measure", cmd, "--measure-timeout", "120"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    check(r.returncode == 0, f"dplace optimize --measure: exit {r.returncode}: {r.stdout} {r.stderr}")
    with open(log) as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == 4, f"log rows: {rows}")
    with open(calls) as f:
        n_calls = len(f.read().splitlines())
    check(n_calls >= 1, "the measuring command ran")
    bad = [row for row in rows if row["valid"] != "1" or not float(row["step_time_s"]) > 0]
    check(not bad, f"failed samples: {bad}")
    print(f"dplace optimize --measure: 4 samples, {n_calls} measured, step times "
          f"{', '.join(row['step_time_s'] for row in rows)} s")



if __name__ == "__main__":
    script_check.main("test_measure_torch", globals(), DPLACE, setup=lambda: torch.set_num_threads(1))
