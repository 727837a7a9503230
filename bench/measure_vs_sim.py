#!/usr/bin/python3
"""Measured versus simulated step times of a few placements of one PyTorch
model (docs/measure.md, "Fidelity: measured versus simulated").

Exports the model's training step with scripts/dplace-export-torch (with
--profile: each op's time on this machine's CPU, and GPU when torch sees one,
becomes its measured cost), makes a few placements of it:

  - every op on one device, for each device of the set;
  - each baseline placer's (`dplace baseline --out-dir`);
  - --random N placements drawing a device per module (what the measurer can
    run: it places whole modules),

then measures each with scripts/dplace-measure-torch (--repeat rounds, each
measuring every placement once, so that a machine whose load drifts does not
favour the placements measured first; the median of the rounds) and
simulates each with
`dplace simulate` on the devices file, twice: the placement as given, and
"as run", every op moved to its module's device (the measurer runs a module
where most of its ops are placed). Prints one row per distinct placement and
the rank agreement (Spearman's rho, Kendall's tau-b) of the measured column
with each simulated one, over the placements valid in both.

usage: bench/measure_vs_sim.py [--model resnet18] [--batch 8] [--input-shape S]
           [--devices bench/devices/cpu3.json] [--map-all cpu] [--map NAME=DEV]...
           [--methods LIST] [--random 2] [--steps 10] [--warmup 5] [--repeat 3] [--threads N]
           [--dplace build/dplace] [--work DIR] [--seed 1] [--no-profile]

Exit status 0, 1 when a command failed (its stderr shown), 2 for bad usage."""
import argparse
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EXPORTER = os.path.join(ROOT, "scripts", "dplace-export-torch")
MEASURER = os.path.join(ROOT, "scripts", "dplace-measure-torch")
METHODS = "cpu,gpu,scotch,mincut,metis,m-topo,m-etf,m-sct"


def die(msg, code=1):
    print(f"measure_vs_sim: {msg}", file=sys.stderr)
    sys.exit(code)


def run(cmd, what):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"{what} failed (exit {r.returncode}): {' '.join(cmd)}\n{r.stderr.strip()}")
    return r.stdout


# ---------------------------------------------------------------------------
# Rank agreement

def ranks(xs):
    """1-based ranks, ties sharing their average rank."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(xs, ys):
    """Spearman's rho: Pearson's correlation of the ranks (nan when undefined)."""
    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    if n < 2:
        return float("nan")
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def kendall(xs, ys):
    """Kendall's tau-b (ties in either column counted as neither concordant nor discordant)."""
    n = len(xs)
    conc = disc = tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = xs[i] - xs[j], ys[i] - ys[j]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif (dx > 0) == (dy > 0):
                conc += 1
            else:
                disc += 1
    denom = math.sqrt((conc + disc + tx) * (conc + disc + ty))
    return (conc - disc) / denom if denom > 0 else float("nan")


# ---------------------------------------------------------------------------

def module_of(op):
    scope = op.get("scope", "")
    while scope.startswith("gradients/"):
        scope = scope[len("gradients/"):]
    return "" if scope == "gradients" else scope.replace("/", ".")


def write_placement(path, graph, devices, place):
    with open(path, "w") as f:
        json.dump({"format": "dplace-placement", "version": 1, "graph": graph["name"], "devices": devices,
                   "placement": place}, f)


def as_run(graph, devices, place):
    """Every op on its module's device: the device most of the module's ops
    are on, ties to the name first in alphabetical order (as
    dplace-export-torch --map-placement and the measurer choose)."""
    counts = {}
    for op, d in zip(graph["ops"], place):
        c = counts.setdefault(module_of(op), {})
        c[d] = c.get(d, 0) + 1
    best = {m: sorted(c.items(), key=lambda kv: (-kv[1], devices[kv[0]]))[0][0] for m, c in counts.items()}
    return [best[module_of(op)] for op in graph["ops"]]


def simulate(args, graph_path, devices_path, placement_path):
    out = run([args.dplace, "simulate", "--graph", graph_path, "--devices", devices_path, "--placement",
               placement_path, "--json"], "dplace simulate")
    r = json.loads(out[out.index("{"):])
    return r["step_time_s"] if r.get("verdict") == "valid" else None, r.get("verdict")


def measure(args, graph_path, placement_path):
    cmd = [MEASURER, args.model, "--batch", str(args.batch), "--graph", graph_path, "--steps", str(args.steps),
           "--warmup", str(args.warmup)]
    if args.input_shape:
        cmd += ["--input-shape", args.input_shape]
    if args.map_all:
        cmd += ["--map-all", args.map_all]
    for m in args.map:
        cmd += ["--map", m]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    r = subprocess.run(cmd + [placement_path], capture_output=True, text=True)
    last = (r.stdout.strip().splitlines() or [""])[-1]
    if r.returncode == 0 and last.startswith("step_time_s "):
        return float(last.split()[1]), "valid"
    if r.returncode == 0 and last.startswith("oom"):
        return None, "oom"
    return None, "failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]


def cpu_model():
    """The CPU's model name as lscpu gives it, else platform.processor()'s,
    else "?"."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def machine():
    name, cores = cpu_model(), os.cpu_count()
    gpu = "none"
    try:
        import torch
        if torch.cuda.is_available():
            gpu = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
    except ImportError:
        pass
    return f"CPU {name}, {cores} cores; GPU {gpu}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--input-shape")
    ap.add_argument("--devices", default=os.path.join(ROOT, "bench", "devices", "cpu3.json"),
                    help="a dplace-devices file (or preset) describing this machine (default bench/devices/cpu3.json)")
    ap.add_argument("--map-all", help="passed to the measurer (cpu on a machine without GPUs)")
    ap.add_argument("--map", action="append", default=[], help="passed to the measurer")
    ap.add_argument("--methods", default=METHODS, help=f"baseline placers (default {METHODS})")
    ap.add_argument("--random", type=int, default=2, help="random per-module placements (default 2)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3, help="rounds of measurements (default 3; the median is shown)")
    ap.add_argument("--threads", type=int, help="torch CPU threads of the measurer and the profile")
    ap.add_argument("--dplace", default=os.path.join(ROOT, "build", "dplace"))
    ap.add_argument("--work", help="folder for the graph and the placements (default: a temporary one)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-profile", action="store_true", help="export without --profile (roofline op times)")
    args = ap.parse_args()
    if not os.access(args.dplace, os.X_OK):
        die(f"no dplace binary at {args.dplace} (--dplace)", 2)
    if args.repeat < 1:
        die(f"--repeat {args.repeat}: must be at least 1", 2)
    work = args.work or tempfile.mkdtemp(prefix="measure_vs_sim.")
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    load0 = os.getloadavg()[0]

    # the machine as a devices file (a preset is written out to read its names)
    devices_path = args.devices
    if not os.path.isfile(devices_path):
        devices_path = os.path.join(work, "devices.json")
        run([args.dplace, "devices", args.devices, "-o", devices_path], "dplace devices")
    with open(devices_path) as f:
        devices = [d["name"] for d in json.load(f)["devices"]]

    graph_path = os.path.join(work, "graph.json")
    cmd = [EXPORTER, args.model, "--batch", str(args.batch), "-q", "-o", graph_path]
    if args.input_shape:
        cmd += ["--input-shape", args.input_shape]
    if not args.no_profile:
        cmd += ["--profile"] + (["--threads", str(args.threads)] if args.threads else [])
    run(cmd, "dplace-export-torch")
    with open(graph_path) as f:
        graph = json.load(f)
    n = len(graph["ops"])

    # the placements: (label, devices, placement)
    cands = [(f"all on {d}", devices, [j] * n) for j, d in enumerate(devices)]
    bdir = os.path.join(work, "baselines")
    run([args.dplace, "baseline", "--graph", graph_path, "--devices", devices_path, "--methods", args.methods,
         "--out-dir", bdir], "dplace baseline")
    for m in args.methods.split(","):
        path = os.path.join(bdir, m + ".json")
        if os.path.isfile(path):
            with open(path) as f:
                p = json.load(f)
            cands.append((m, p["devices"], p["placement"]))
    rng = random.Random(args.seed)
    modules = sorted({module_of(op) for op in graph["ops"]})
    for k in range(args.random):
        pick = {m: rng.randrange(len(devices)) for m in modules}
        cands.append((f"random {k + 1}", devices, [pick[module_of(op)] for op in graph["ops"]]))

    # one row per distinct placement (by device names)
    rows, seen = [], {}
    for label, devs, place in cands:
        key = tuple(devs[d] for d in place)
        if key in seen:
            seen[key]["label"] += f" = {label}"
            continue
        row = {"label": label, "devs": devs, "place": place}
        seen[key] = row
        rows.append(row)
    for k, row in enumerate(rows):
        p = os.path.join(work, f"p{k}.json")
        q = os.path.join(work, f"p{k}_as_run.json")
        write_placement(p, graph, row["devs"], row["place"])
        write_placement(q, graph, row["devs"], as_run(graph, row["devs"], row["place"]))
        used = sorted({row["devs"][d] for d in row["place"]})
        row["used"] = ", ".join(used)
        row["path"] = p
        row["sim"], row["sim_v"] = simulate(args, graph_path, devices_path, p)
        row["run"], row["run_v"] = simulate(args, graph_path, devices_path, q)
        row["times"], row["meas_v"] = [], "valid"
    for r in range(args.repeat):
        for row in rows:
            t, verdict = measure(args, graph_path, row["path"])
            if t is not None:
                row["times"].append(t)
            else:
                row["meas_v"] = verdict
            print(f"  round {r + 1}: {row['label']}: measured {t if t is not None else verdict}, simulated "
                  f"{row['sim'] or row['sim_v']}, as run {row['run'] or row['run_v']}", file=sys.stderr, flush=True)
    for row in rows:
        row["meas"] = statistics.median(row["times"]) if row["times"] else None
    load1 = os.getloadavg()[0]

    def cell(v, verdict):
        return f"{v:.4f}" if v is not None else verdict

    def spread(row):
        if len(row["times"]) < 2:
            return cell(row["meas"], row["meas_v"])
        return f"{row['meas']:.4f} ({min(row['times']):.3f}-{max(row['times']):.3f})"

    print(f"\n{args.model} at batch {args.batch}, {n} ops; devices {os.path.relpath(devices_path, ROOT)} "
          f"({', '.join(devices)}); measured with --steps {args.steps} --warmup {args.warmup}"
          + (f" --map-all {args.map_all}" if args.map_all else "") + "".join(f" --map {m}" for m in args.map)
          + f", median of {args.repeat} rounds (min-max); ops' costs "
          + ("from --profile" if not args.no_profile else "roofline"))
    print(f"machine: {machine()}; load average {load0:.1f} at the start, {load1:.1f} at the end\n")
    print("| placement | devices used | measured s | simulated s | simulated as run s |")
    print("|---|---|---:|---:|---:|")
    for row in rows:
        print(f"| {row['label']} | {row['used']} | {spread(row)} | "
              f"{cell(row['sim'], row['sim_v'])} | {cell(row['run'], row['run_v'])} |")
    print()
    for col, name in (("sim", "simulated"), ("run", "simulated as run")):
        ok = [r for r in rows if r["meas"] is not None and r[col] is not None]
        xs, ys = [r["meas"] for r in ok], [r[col] for r in ok]
        print(f"measured vs {name}: {len(ok)} placements, Spearman {spearman(xs, ys):+.2f}, "
              f"Kendall tau-b {kendall(xs, ys):+.2f}")
    print(f"\n({time.time() - t0:.0f} s; files in {work})")


if __name__ == "__main__":
    main()
