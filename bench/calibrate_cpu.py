#!/usr/bin/python3
"""`dplace calibrate` on this machine's CPU: fitted to PyTorch training steps
measured on some models and batch sizes, judged on others (docs/calibrate.md,
"Calibrating a CPU from PyTorch measurements").

  prepare   exports every (model, batch) of the set with
            scripts/dplace-export-torch (no --profile: the roofline cost
            model prices the ops), writes each graph's all-on-CPU placement,
            copies of the model files and a manifest that
            scripts/dplace-measure-torch reads, every path relative to DIR
            (so DIR can be measured on another machine);
  measure   runs scripts/dplace-measure-torch --manifest once, under the
            Python that runs this script, in one process, pinned with taskset to --cores, torch on --threads
            threads (OpenMP threads bound one per core), --map-all cpu,
            --repeat rounds that each measure every graph once;
  analyze   the median over the rounds of each graph's step time (and the
            rounds' min-max spread), `dplace calibrate` from the devices
            file on the fit rows alone (--holdout 0, the KEEP parameters
            left at the file's values; again from its own
            result while a fitted parameter ends at a bound of its range,
            at most --passes times), `dplace simulate` of
            every graph on the stock and the calibrated devices, and a
            markdown table: model, batch, measured, stock and calibrated
            simulated times with their errors, the mean absolute percentage
            error (MAPE) over the fit and the held-out rows, and the
            parameters calibrate left undetermined;
  all       the three in turn;
  bandwidth the memory copy rate torch reaches here, pinned as measure
            runs (the estimate of bench/devices/this_cpu.json).

The split is fixed, not random: the fit sees the FIT_MODELS at their first
and last batch sizes only; the held-out rows are those models at their
middle batch size (batch sizes the fit has not seen) and every batch size of
the HELD_MODELS (models it has not seen).

usage: bench/calibrate_cpu.py prepare --out DIR [--devices FILE] [--dplace build/dplace] [--quick] [--overhead-probe]
       bench/calibrate_cpu.py measure DIR [--cores 0,1] [--threads 2] [--repeat 3] [--steps 8] [--warmup 3]
       bench/calibrate_cpu.py analyze DIR [--passes 3] [--shares] [--keep PARAMS|none] [-o FILE.md]
       bench/calibrate_cpu.py all --out DIR [the options of the three]
       bench/calibrate_cpu.py bandwidth [--cores 0,1] [--threads 2]

Exit status 0; 2 for bad input (one line naming the file and the item); 1
when a command it runs fails (its last line shown)."""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_check import Bad, Failed, carry_model, git_commit, read_json, write_atomic  # noqa: E402
from measure_vs_sim import cpu_model  # noqa: E402
from gpu_check import run_out_err as run  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EXPORTER = os.path.join(ROOT, "scripts", "dplace-export-torch")
MEASURER = os.path.join(ROOT, "scripts", "dplace-measure-torch")
DEFAULT_DEVICES = os.path.join(ROOT, "bench", "devices", "this_cpu.json")
GPU_MODELS = os.path.join(ROOT, "bench", "gpu_check_models.py")
CPU_MODELS = os.path.join(ROOT, "bench", "calibrate_cpu_models.py")
PROG = "calibrate_cpu"

# (name, model spec for the exporter, one sample's shape, three batch sizes).
# The fit models together hold every op class the held-out ones use:
# convolutions direct, Winograd-shaped and depthwise (3x3 in MobileNet-V2,
# 9x9 in ConvMixer: two kernel sizes, so that the depthwise slot is fitted
# to both regimes and not to MobileNet-V2's alone), matrix products large
# and batched, batch and layer norms, pooling, softmax, data movement and the
# optimizer's update.
FIT_MODELS = [
    ("resnet18", "resnet18", "3,64,64", (8, 16, 32)),
    ("mobilenet_v2", "mobilenet_v2", "3,64,64", (8, 16, 32)),
    ("vgg_small", CPU_MODELS + ":vgg_small", "3,32,32", (8, 16, 32)),
    ("transformer", GPU_MODELS + ":transformer", "64,256", (4, 8, 16)),
    ("mlp", CPU_MODELS + ":mlp", "1024", (64, 128, 256)),
    ("convmixer", CPU_MODELS + ":convmixer", "3,64,64", (4, 8, 16)),
]
# Experimental (--overhead-probe): a fit model whose step time is the
# framework's cost per op alone, so that the fit does not take that cost
# from the per-byte prices of small ops (docs/design/cpu-calibration-probes.md,
# "An overhead probe").
OVERHEAD_PROBE = ("narrow_deep", CPU_MODELS + ":narrow_deep", "16", (1, 2, 4))
HELD_MODELS = [
    ("squeezenet1_1", "squeezenet1_1", "3,64,64", (16, 32, 64)),
    ("shufflenet_v2_x1_0", "shufflenet_v2_x1_0", "3,64,64", (16, 32, 64)),
    ("transformer_wide", CPU_MODELS + ":transformer_wide", "32,512", (4, 8, 16)),
    # families a new user brings: deeper residual, compound-scaled
    # depthwise (squeeze-excitation), grouped, concatenation-heavy, a
    # pre-norm GPT-style stack
    ("resnet34", "resnet34", "3,64,64", (8, 16, 32)),
    ("efficientnet_b0", "efficientnet_b0", "3,64,64", (8, 16, 32)),
    ("regnet_x_400mf", "regnet_x_400mf", "3,64,64", (8, 16, 32)),
    ("densenet121", "densenet121", "3,64,64", (4, 8, 16)),
    ("gpt_encoder", CPU_MODELS + ":gpt_encoder", "64,384", (4, 8, 16)),
]
# Parameters the fit leaves at the devices file's values (`dplace calibrate
# --keep`; analyze --keep replaces them). The data class's memory
# efficiency (copies, concatenations) is the one the fit models determine
# least on the project's VM, its sensitivity just over calibrate's
# threshold, and fitted it took the time the fit models' other ops miss,
# pricing a copy at a twentieth of the element-wise rate it runs at alone
# (docs/design/cpu-calibration-probes.md, "The copy rate left at the stock
# row's"). On a host whose fit models determine it, --keep none.
KEEP = ("data.memory",)
FIT_BATCH_INDEX = (0, 2)  # the fit models' batch sizes in the fit; the middle one is held out
QUICK = [("mlp", CPU_MODELS + ":mlp", "1024", (8, 16, 32)),
         ("transformer", GPU_MODELS + ":transformer", "16,256", (1, 2, 4))]


def say(text):
    print(f"{PROG}: {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# prepare

def prepare(args):
    t0 = time.time()
    if not os.access(args.dplace, os.X_OK):
        raise Bad(f"no dplace binary at {args.dplace} (--dplace)")
    out = args.out
    os.makedirs(out, exist_ok=True)
    # the devices, checked by dplace and copied into DIR
    dev_path = os.path.join(out, "devices.json")
    run([args.dplace, "devices", args.devices], f"dplace devices {args.devices}")
    doc = read_json(args.devices, "dplace-devices")
    devs = doc.get("devices")
    if not isinstance(devs, list) or len(devs) != 1 or devs[0].get("kind") != "cpu":
        raise Bad(f"{args.devices}: needs exactly one device, of kind cpu (the CPU measured)")
    write_atomic(dev_path, json.dumps(doc, indent=1) + "\n")
    device = devs[0]["name"]

    if args.quick:
        sets = [("fit", QUICK)]
    else:
        sets = [("fit", FIT_MODELS + ([OVERHEAD_PROBE] if args.overhead_probe else [])), ("held", HELD_MODELS)]
    entries = []
    for role, models in sets:
        for name, spec, shape, batches in models:
            spec, rel = carry_model(spec, out)
            for k, batch in enumerate(batches):
                gname = f"{name}_b{batch}"
                split = "fit" if role == "fit" and k in FIT_BATCH_INDEX else (
                    "held: batch" if role == "fit" else "held: model")
                gdir = os.path.join(out, gname)
                os.makedirs(gdir, exist_ok=True)
                graph = os.path.join(gdir, "graph.json")
                step_args = ["--batch", str(batch), "--input-shape", shape]
                if not os.path.isfile(graph):
                    say(f"exporting {name} at batch {batch}")
                    run([EXPORTER, spec, *step_args, "--name", gname, "-q", "-o", graph],
                        f"dplace-export-torch {name} --batch {batch}")
                g = read_json(graph, "dplace-graph")
                n = len(g["ops"])
                place = os.path.join(gdir, "cpu.json")
                write_atomic(place, '{"format": "dplace-placement", "version": 1, "graph": ' + json.dumps(gname)
                             + ', "units": "module",\n "devices": ' + json.dumps([device])
                             + ',\n "placement": [' + ",".join(["0"] * n) + "]}\n")
                entries.append({"name": gname, "model_name": name, "model": rel, "batch": batch,
                                "split": split, "step_args": step_args, "graph": f"{gname}/graph.json",
                                "ops": n, "placements": [{"file": f"{gname}/cpu.json"}]})
    manifest = {"format": "dplace-gpu-check", "version": 1,
                "created": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": git_commit(),
                "devices": "devices.json", "device_names": [device], "profile": False, "models": entries}
    write_atomic(os.path.join(out, "manifest.json"), json.dumps(manifest, indent=1) + "\n")
    say(f"wrote {out}: {len(entries)} graphs ({sum(e['split'] == 'fit' for e in entries)} to fit); "
        f"{time.time() - t0:.0f} s")
    return 0


# ---------------------------------------------------------------------------
# measure

def parse_cores(text):
    try:
        cores = [int(c) for c in text.split(",") if c != ""]
    except ValueError:
        cores = []
    if not cores or any(c < 0 for c in cores) or len(set(cores)) != len(cores):
        raise Bad(f"--cores {text!r}: expected a comma-separated list of distinct core numbers, such as 0,1")
    return cores


def measure(args):
    manifest = os.path.join(args.dir, "manifest.json")
    if not os.path.isfile(manifest):
        raise Bad(f"{manifest}: missing (bench/calibrate_cpu.py prepare --out {args.dir} writes it)")
    cores = parse_cores(args.cores)
    if args.threads < 1 or args.repeat < 1 or args.steps < 1 or not 0 <= args.warmup < args.steps:
        raise Bad(f"--threads {args.threads} --repeat {args.repeat} --steps {args.steps} --warmup {args.warmup}: "
                  "needs threads, repeat and steps at least 1 and 0 <= warmup < steps")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OMP_PROC_BIND="close", OMP_PLACES="cores")
    cmd = ["taskset", "-c", ",".join(map(str, cores)), sys.executable, MEASURER, "--manifest", manifest,
           "--csv", os.path.join(args.dir, "measured.csv"), "--map-all", "cpu", "--threads", str(args.threads),
           "--repeat", str(args.repeat), "--steps", str(args.steps), "--warmup", str(args.warmup)]
    say(" ".join(cmd))
    t0 = time.time()
    r = subprocess.run(cmd, env=env)
    if r.returncode != 0:
        raise Failed(f"dplace-measure-torch failed (exit {r.returncode})")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    info = {"cores": cores, "threads": args.threads, "repeat": args.repeat, "steps": args.steps,
            "warmup": args.warmup, "seconds": round(time.time() - t0, 1), "cpu": cpu_model(),
            "cpus": os.cpu_count(), "load_after": round(load, 2),
            "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    write_atomic(os.path.join(args.dir, "measure.json"), json.dumps(info, indent=1) + "\n")
    say(f"measured in {info['seconds']:.0f} s")
    return 0


BANDWIDTH_CODE = """
import sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
a = torch.ones(64 * 1024 * 1024)  # 256 MiB of float32
b = torch.empty_like(a)
best = float("inf")
for _ in range(10):
    t = time.perf_counter()
    b.copy_(a)
    best = min(best, time.perf_counter() - t)
print(f"{2 * a.numel() * 4 / best:.4g}")
"""


def bandwidth(args):
    """The copy rate (bytes read and written per second, the best of ten
    copies of a 256 MiB float32 tensor) torch reaches pinned as measure
    runs."""
    cores = parse_cores(args.cores)
    if args.threads < 1:
        raise Bad(f"--threads {args.threads}: must be at least 1")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OMP_PROC_BIND="close", OMP_PLACES="cores")
    out, _ = run(["taskset", "-c", ",".join(map(str, cores)), "/usr/bin/python3", "-c", BANDWIDTH_CODE,
                  str(args.threads)], "the copy", env=env)
    print(f"memory copy rate, {args.threads} threads on cores {args.cores}: {float(out):.4g} bytes/s")
    return 0


# ---------------------------------------------------------------------------
# analyze

def read_measured(path, manifest):
    """{graph name: [seconds of each round's ok row]}."""
    names = {e["name"] for e in manifest["models"]}
    times = {}
    try:
        f = open(path, encoding="utf-8", newline="")
    except OSError as e:
        raise Bad(f"{path}: cannot read: {e.strerror}")
    with f:
        reader = csv.reader(f)
        if next(reader, None) != ["model", "placement_file", "seconds", "status"]:
            raise Bad(f"{path}: line 1 is not the header model,placement_file,seconds,status")
        for n, row in enumerate(reader, start=2):
            if len(row) != 4:
                raise Bad(f"{path}: line {n} has {len(row)} fields, not 4")
            if row[0] not in names:
                raise Bad(f'{path}: line {n}: graph "{row[0]}" is not in the manifest')
            if row[3] == "ok":
                try:
                    t = float(row[2])
                except ValueError:
                    t = float("nan")
                if not 0 < t < float("inf"):
                    raise Bad(f"{path}: line {n}: seconds {row[2]!r} is not a positive number")
                times.setdefault(row[0], []).append(t)
    return times


def simulate(dplace, graph, devices, placement):
    out, _ = run([dplace, "simulate", "--graph", graph, "--devices", devices, "--placement", placement, "--json"],
                 f"dplace simulate --graph {graph} --devices {devices}")
    r = json.loads(out[out.index("{"):])
    if r.get("verdict") != "valid":
        raise Failed(f"dplace simulate --graph {graph} --devices {devices}: the placement is {r.get('verdict')}: "
                     f"{r.get('reason', '')}")
    return r["step_time_s"]


def report_sections(report):
    """From calibrate's --json report: ([(parameter, stock, calibrated,
    sensitivity)] fitted, [(parameter, value kept, sensitivity)] not
    determined), the values as the text report prints them; a parameter is
    named without its device ("matmul.compute")."""
    fitted, undet = [], []
    for p in report["parameters"]:
        name = p["name"].split()[-1]
        if p["determined"]:
            fitted.append((name, f"{p['stock']:.4g}", f"{p['calibrated']:.4g}", f"{p['sensitivity']:.3f}"))
        elif not p.get("kept"):
            undet.append((name, f"{p['stock']:.4g}", f"{p['sensitivity']:.3g}"))
    return fitted, undet


CLASSES = ("elementwise", "matmul", "conv", "winograd", "grouped", "depthwise", "reduction", "data", "optimizer")


def class_shares(dplace, folder, calibrated, fitted, undet, graph, place):
    """Where the calibrated step time of an all-on-CPU graph goes: {class or
    "launch": share}. On one stream the step is the sum of the op times, each
    max(compute, memory) + launch overhead, so halving a class's two
    efficiencies adds exactly that class's roofline time, and doubling the
    launch overhead adds the launch time (meta ops' included)."""
    doc = read_json(calibrated, "dplace-devices")
    values = {p: float(b) for p, _, b, _ in fitted}
    values.update({p: float(v) for p, v, _ in undet})
    dev = doc["devices"][0]
    eff = {c: {k: values[f"{c}.{k}"] for k in ("compute", "memory") if f"{c}.{k}" in values} for c in CLASSES}
    if any(len(v) != 2 for v in eff.values()):
        return {}
    base = simulate(dplace, graph, calibrated, place)
    tmp = os.path.join(folder, f".shares.{os.getpid()}.json")
    shares = {}
    try:
        for c in CLASSES + ("launch",):
            d = dict(dev, efficiency={k: dict(v) for k, v in eff.items()})
            if c == "launch":
                d["launch_overhead_s"] = 2 * dev["launch_overhead_s"]
            else:
                d["efficiency"][c] = {k: v / 2 for k, v in eff[c].items()}
            write_atomic(tmp, json.dumps(dict(doc, devices=[d])))
            shares[c] = (simulate(dplace, graph, tmp, place) - base) / base
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return shares


def err(sim, meas):
    return 100.0 * (sim - meas) / meas


def mape(errors):
    return statistics.mean(abs(e) for e in errors) if errors else float("nan")


def analyze(args):
    folder = args.dir
    manifest = read_json(os.path.join(folder, "manifest.json"), "dplace-gpu-check")
    times = read_measured(os.path.join(folder, "measured.csv"), manifest)
    info = read_json(os.path.join(folder, "measure.json")) if os.path.isfile(
        os.path.join(folder, "measure.json")) else {}
    entries = manifest["models"]
    missing = [e["name"] for e in entries if e["name"] not in times]
    if missing:
        raise Bad(f"{folder}/measured.csv: no ok measurement of {', '.join(missing)}")
    devices = os.path.join(folder, manifest.get("devices", "devices.json"))

    keep = [] if args.keep.strip() == "none" else [k.strip() for k in args.keep.split(",") if k.strip()]
    fit = [e for e in entries if e["split"] == "fit"]
    rows = ["graph,placement_file,seconds"]
    for e in fit:
        rows.append(f"{e['graph']},{e['placements'][0]['file']},{statistics.median(times[e['name']]):.9g}")
    write_atomic(os.path.join(folder, "fit.csv"), "\n".join(rows) + "\n")
    # Each pass fits from the previous pass's file; another runs while a
    # parameter ended at a bound of its pass (docs/calibrate.md: an
    # efficiency within stock/10 .. stock x 10, a launch overhead within
    # stock/100 .. stock x 100, both relative to the pass's start).
    start, reports, passes = manifest.get("devices", "devices.json"), [], []
    for k in range(1, args.passes + 1):
        outname = f"calibrated.pass{k}.json"
        cmd = [args.dplace, "calibrate"]
        for e in fit:
            cmd += ["--graph", e["graph"]]
        cmd += ["--devices", start, "--measurements", "fit.csv", "--holdout", "0", "--json", "-o", outname]
        for k in keep:
            cmd += ["--keep", k]
        say(" ".join(cmd[1:]))
        try:
            out, _ = run(cmd, "dplace calibrate", cwd=folder)
        except Failed as e:
            # a later pass, starting elsewhere, may find more parameters
            # sensitive than the fit has measurements: keep the pass before
            if k == 1 or "fewer than the" not in str(e):
                raise
            say(f"pass {k} refused ({e}); keeping pass {k - 1}")
            break
        try:
            report = json.loads(out)
        except ValueError:
            raise Failed(f"dplace calibrate --json: not a JSON object: {out[:200]!r}")
        reports.append(report)
        bound = [p["name"].split()[-1] for p in report["parameters"] if p["at_bound"]]
        passes.append((outname, bound))
        start = outname
        if not bound:
            break
    write_atomic(os.path.join(folder, "calibrate.json"), json.dumps(reports, indent=1) + "\n")
    calibrated = os.path.join(folder, "calibrated.json")  # the last pass's file
    with open(os.path.join(folder, passes[-1][0]), encoding="utf-8") as f:
        write_atomic(calibrated, f.read())
    first_fit, first_undet = report_sections(reports[0])
    stock_values = {p: a for p, a, _, _ in first_fit}
    stock_values.update({p: v for p, v, _ in first_undet})
    fitted, undet = report_sections(reports[-1])
    ever = {}
    for r in reports:
        for p, _, b, sens in report_sections(r)[0]:
            ever[p] = sens
    final = {p: b for p, _, b, _ in fitted}
    final.update({p: v for p, v, _ in undet})

    table = []
    for e in entries:
        graph = os.path.join(folder, e["graph"])
        place = os.path.join(folder, e["placements"][0]["file"])
        ts = times[e["name"]]
        m = statistics.median(ts)
        stock = simulate(args.dplace, graph, devices, place)
        cal = simulate(args.dplace, graph, calibrated, place)
        shares = class_shares(args.dplace, folder, calibrated, fitted, undet, graph, place) if args.shares else {}
        table.append({"e": e, "meas": m, "lo": min(ts), "hi": max(ts), "n": len(ts), "stock": stock, "cal": cal,
                      "shares": shares})

    lines = []
    how = (f"{info.get('threads', '?')} torch threads pinned with taskset to cores "
           f"{','.join(map(str, info.get('cores', []))) or '?'} (OpenMP threads bound one per core), "
           f"{info.get('repeat', '?')} rounds interleaved, each the median of "
           f"{info.get('steps', 0) - info.get('warmup', 0)} steps after {info.get('warmup', '?')} warm-up"
           ) if info else "how: measure.json missing"
    lines.append(f"Measured: {how}; `scripts/dplace-measure-torch --map-all cpu`; measured is the median of the "
                 "rounds, (min-max) their spread. Stock: "
                 f"`{os.path.basename(manifest.get('devices', 'devices.json'))}` as written; calibrated: "
                 "`dplace calibrate` on the fit rows only. Error = simulated / measured - 1.")
    lines.append("")
    lines.append("| model | batch | split | measured s (min-max) | stock s | error % | calibrated s | error % |")
    lines.append("|---|---:|---|---:|---:|---:|---:|---:|")
    order = {"fit": 0, "held: batch": 1, "held: model": 2}
    for r in sorted(table, key=lambda r: (order[r["e"]["split"]], entries.index(r["e"]))):
        e = r["e"]
        lines.append(f"| {e['model_name']} | {e['batch']} | {e['split']} | {r['meas']:.4f} ({r['lo']:.4f}-"
                     f"{r['hi']:.4f}) | {r['stock']:.4f} | {err(r['stock'], r['meas']):+.1f} | {r['cal']:.4f} | "
                     f"{err(r['cal'], r['meas']):+.1f} |")
    lines.append("")
    lines.append("| rows | n | stock MAPE % | calibrated MAPE % | calibrated worst % |")
    lines.append("|---|---:|---:|---:|---:|")
    groups = [("fit", lambda s: s == "fit"), ("held out: batch sizes not fitted", lambda s: s == "held: batch"),
              ("held out: models not fitted", lambda s: s == "held: model"),
              ("**held out, all**", lambda s: s != "fit")]
    for label, pick in groups:
        sel = [r for r in table if pick(r["e"]["split"])]
        if not sel:
            continue
        se = [err(r["stock"], r["meas"]) for r in sel]
        ce = [err(r["cal"], r["meas"]) for r in sel]
        worst = max(ce, key=abs)
        lines.append(f"| {label} | {len(sel)} | {mape(se):.1f} | {mape(ce):.1f} | {worst:+.1f} |")
    lines.append("")
    spread = [100.0 * (r["hi"] - r["lo"]) / r["meas"] for r in table]
    lines.append(f"Spread of the rounds: median {statistics.median(spread):.1f}%, largest {max(spread):.1f}% of "
                 "the measured time.")
    lines.append("")
    lines.append(f"Passes of `dplace calibrate`: {len(passes)}"
                 + "".join(f"; pass {k} ended with {', '.join(b)} at a bound of its range, so pass {k + 1} started "
                           "from its file" for k, (_, b) in enumerate(passes, start=1) if b and k < len(passes))
                 + (f"; pass {len(passes)} still ended with {', '.join(passes[-1][1])} at a bound (--passes)"
                    if passes[-1][1] else "") + ".")
    lines.append("")
    lines.append("Fitted (stock -> calibrated; sensitivity d log t / d log value in the last pass that fitted it): "
                 + ("; ".join(f"{p} {stock_values.get(p, '?')} -> {final.get(p, '?')} ({ever[p]})" for p in ever)
                    if ever else "none") + ".")
    lines.append("")
    lines.append("Kept at the devices file's values (--keep): "
                 + (", ".join(f"{p['name'].split()[-1]} {p['stock']:.4g} ({p['sensitivity']:.3g})"
                              for p in reports[-1]["parameters"] if p.get("kept")) or "none") + ".")
    lines.append("")
    lines.append("Not determined by the fit (sensitivity under 0.01 in every pass, left at the stock value): "
                 + (", ".join(f"{p} ({v})" for p, _, v in undet if p not in ever) or "none") + ".")
    if args.shares:
        lines.append("")
        lines.append("Where the calibrated step time goes (share of each class's roofline time and of the launch "
                     "overheads; classes under 3% left out):")
        lines.append("")
        for r in table:
            e = r["e"]
            lines.append(f"- {e['model_name']} b{e['batch']} ({e['ops']} ops): "
                         + ", ".join(f"{c} {100 * v:.0f}%" for c, v in sorted(r["shares"].items(),
                                                                               key=lambda kv: -kv[1]) if v >= 0.03))
    text = "\n".join(lines) + "\n"
    if args.output:
        write_atomic(args.output, text)
    print(text, end="")
    held = [err(r["cal"], r["meas"]) for r in table if r["e"]["split"] != "fit"]
    say(f"held-out MAPE {mape(held):.1f}% over {len(held)} rows, the worst {max(held, key=abs, default=0):+.1f}%; "
        f"calibrate's reports in {folder}/calibrate.json")
    return 0


# ---------------------------------------------------------------------------

def main(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="stage", required=True)

    def prep_opts(p):
        p.add_argument("--devices", default=DEFAULT_DEVICES,
                       help="a dplace-devices file of one CPU device (default bench/devices/this_cpu.json)")
        p.add_argument("--quick", action="store_true", help="two tiny models only: a check of the plumbing")
        p.add_argument("--overhead-probe", action="store_true",
                       help="experimental: also fit a model of tiny ops whose time is the cost per op")

    def meas_opts(p):
        p.add_argument("--cores", default="0,1", help="the cores taskset pins the measurer to (default 0,1)")
        p.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
        p.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
        p.add_argument("--steps", type=int, default=8, help="training steps per measurement (default 8)")
        p.add_argument("--warmup", type=int, default=3, help="steps not counted (default 3)")

    def analyze_opts(p):
        p.add_argument("-o", "--output", metavar="FILE.md", help="also write the table here")
        p.add_argument("--passes", type=int, default=3,
                       help="calibrate passes at most: another starts from the last file while a fitted parameter "
                            "ended at a bound of its range (default 3)")
        p.add_argument("--shares", action="store_true",
                       help="also where each graph's calibrated time goes, by class")
        p.add_argument("--keep", default=",".join(KEEP), metavar="PARAMS",
                       help="parameters the fit leaves at the devices file's values, comma-separated, or none "
                            f"(default {','.join(KEEP)}: see KEEP)")

    def common(p):
        p.add_argument("--dplace", default=os.path.join(ROOT, "build", "dplace"), help="the dplace binary")

    p = sub.add_parser("prepare")
    p.add_argument("--out", required=True, metavar="DIR")
    prep_opts(p)
    common(p)
    p = sub.add_parser("measure")
    p.add_argument("dir", metavar="DIR")
    meas_opts(p)
    common(p)
    p = sub.add_parser("analyze")
    p.add_argument("dir", metavar="DIR")
    analyze_opts(p)
    common(p)
    p = sub.add_parser("bandwidth")
    p.add_argument("--cores", default="0,1", help="the cores taskset pins the copy to (default 0,1)")
    p.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
    common(p)
    p = sub.add_parser("all")
    p.add_argument("--out", required=True, metavar="DIR")
    prep_opts(p)
    meas_opts(p)
    analyze_opts(p)
    common(p)
    args = ap.parse_args(argv)
    args.dplace = os.path.abspath(args.dplace)
    if getattr(args, "passes", 1) < 1:
        print(f"{PROG}: --passes {args.passes}: must be at least 1", file=sys.stderr)
        return 2
    try:
        if args.stage == "prepare":
            return prepare(args)
        if args.stage == "measure":
            return measure(args)
        if args.stage == "analyze":
            return analyze(args)
        if args.stage == "bandwidth":
            return bandwidth(args)
        prepare(args)
        args.dir = args.out
        measure(args)
        return analyze(args)
    except Bad as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except Failed as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
