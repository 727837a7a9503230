#!/usr/bin/python3
"""A real-GPU check of the simulator, in three stages (docs/measure.md, "A
real-GPU check"):

  prepare   on this machine: export each model (scripts/dplace-export-torch),
            make placements of it that split its modules between the CPU and
            the GPU(s) (every single device, every baseline placer's,
            contiguous splits in topological order, seeded random ones), all
            module-level (what the measurer runs), simulate each with
            `dplace simulate`, and write DIR: manifest.json, devices.json,
            simulated.csv, the graphs and placements, the model files and the
            measuring scripts, every path relative to DIR;
  measure   on the GPU machine: runs scripts/dplace-measure-torch (the copy in
            DIR) alone, in one process over DIR's placements: DIR/smoke.csv
            with --smoke, else DIR/measured.csv;
  analyze   back here: joins the measurements with the simulations,
            calibrates the devices on a seeded part of the placements when
            `dplace calibrate` exists, and prints for the rest simulated
            against measured (mean absolute percentage error, Spearman, the
            worst placements) and where PyTorch's eager execution departs
            from the simulator's dataflow executor, as markdown.

usage: bench/gpu_check.py prepare --out DIR [--model "NAME[:BATCH[:SHAPE]] [--dtype D ...]"]... [--devices FILE|PRESET]
           [--placements 30] [--random 6] [--cuts 7] [--methods LIST] [--steps 5] [--warmup 2] [--repeat 3]
           [--time-budget 480] [--profile] [--seed 1] [--dplace build/dplace]
       bench/gpu_check.py measure DIR [--smoke] [measurer options: --map-all cpu, --time-budget S, ...]
       bench/gpu_check.py analyze DIR [--csv FILE] [--fit-share 0.5] [--seed 1] [--worst 5] [-o FILE]
           [--devices FILE|PRESET] [--executor tf|torch]

analyze compares with the simulated times prepare wrote, or, given
--devices or --executor, simulates every placement again on those devices
(DIR's devices.json by default) under that executor (the graph's by
default) and calibrates from there: one run's measurements judged under
both executors, or against another description of the machine.

Exit status 0; 2 for bad input (one line naming the file and the item); 1
when a command it runs fails (its last line shown)."""
import argparse
import csv
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SCRIPTS = os.path.join(ROOT, "scripts")
EXPORTER = os.path.join(SCRIPTS, "dplace-export-torch")
MEASURER = os.path.join(SCRIPTS, "dplace-measure-torch")
MODELS_FILE = os.path.join(ROOT, "bench", "gpu_check_models.py")
DEFAULT_MODELS = ["bench/gpu_check_models.py:resnet18:32:3,112,112",
                  "bench/gpu_check_models.py:transformer:32:64,256"]
DEFAULT_DEVICES = os.path.join(ROOT, "bench", "devices", "h100x1.json")
METHODS = "scotch,mincut,metis,m-topo,m-etf,m-sct"
SPECIAL = ("input", "loss", "constant", "optimizer")
PROG = "gpu_check"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_vs_sim as mvs  # noqa: E402  (rank statistics and the machine's description)


class Bad(Exception):
    """Bad input: one line, exit status 2."""


class Failed(Exception):
    """A command this script runs failed: one line, exit status 1."""


def run_out_err(cmd, what, cwd=None, env=None):
    """cmd's (stdout, stderr); Failed, naming `what` and the last line it
    printed, when it exits non-zero."""
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or r.stdout.strip().splitlines() or ["?"])[-1]
        raise Failed(f"{what} failed (exit {r.returncode}): {last}")
    return r.stdout, r.stderr


def run(cmd, what, cwd=None):
    return run_out_err(cmd, what, cwd)[0]


def write_atomic(path, text):
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        raise Bad(f"{path}: cannot write: {e.strerror}")


def read_json(path, fmt=None):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise Bad(f"{path}: cannot read: {e.strerror}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise Bad(f"{path}: not JSON: {e}")
    if fmt and (not isinstance(doc, dict) or doc.get("format") != fmt):
        raise Bad(f'{path}: not a {fmt} file (needs "format": "{fmt}")')
    return doc


# ---------------------------------------------------------------------------
# prepare

# The exporter's step options a --model may add after its NAME[:BATCH[:SHAPE]]
# (they reach the measurer as the manifest's step_args), and --name, which
# names the graph (a second dtype of one model needs its own name).
MODEL_OPTIONS = ("--dtype", "--input-dtype", "--input-high", "--optimizer", "--lr", "--momentum", "--weight-decay",
                 "--loss", "--tf32", "--name")


def parse_model(spec):
    """"NAME[:BATCH[:SHAPE]] [--option VALUE]..." -> (name, batch, shape or
    None, [step options], graph name or None); NAME is a torchvision name or
    FILE.py:callable, the options are MODEL_OPTIONS."""
    words = spec.split()
    parts = words[0].split(":") if words else [""]
    tail = []
    while len(parts) > 1 and len(tail) < 2 and parts[-1].replace(",", "").isdigit():
        tail.insert(0, parts.pop())
    name = ":".join(parts)
    if not name or (len(tail) == 2 and not tail[0].isdigit()):
        raise Bad(f'--model "{spec}": expected NAME[:BATCH[:SHAPE]] (resnet18:32, '
                  "bench/gpu_check_models.py:resnet18:32:3,112,112)")
    batch = int(tail[0]) if tail else 32
    shape = tail[1] if len(tail) == 2 else None
    if batch < 1:
        raise Bad(f'--model "{spec}": the batch must be at least 1')
    opts, gname = [], None
    rest = words[1:]
    if len(rest) % 2:
        raise Bad(f'--model "{spec}": each option after the model takes a value ("--dtype bfloat16")')
    for k in range(0, len(rest), 2):
        if rest[k] not in MODEL_OPTIONS:
            raise Bad(f'--model "{spec}": "{rest[k]}" is not one of {", ".join(MODEL_OPTIONS)}')
        if rest[k] == "--name":
            gname = rest[k + 1]
        else:
            opts += rest[k:k + 2]
    return name, batch, shape, opts, gname


def carry_model(name, out):
    """(the spec the exporter takes here, the spec the manifest names) of a
    model: a FILE.py:callable (FILE here, else relative to the repository)
    is copied into OUT/models and named there, relative to OUT, so that the
    folder measures on another machine; a torchvision name is both. Bad
    when the file is missing."""
    mod, sep, fn = name.rpartition(":")
    if not (sep and mod.endswith(".py")):
        return name, name
    src = mod if os.path.isabs(mod) or os.path.isfile(mod) else os.path.join(ROOT, mod)
    if not os.path.isfile(src):
        raise Bad(f'--model "{name}": no file {mod}')
    os.makedirs(os.path.join(out, "models"), exist_ok=True)
    shutil.copy2(src, os.path.join(out, "models", os.path.basename(src)))
    return os.path.abspath(src) + ":" + fn, "models/" + os.path.basename(src) + ":" + fn


def unit_of(op):
    """The module an op runs with (the measurer's unit): its scope without
    "gradients/", dots for slashes; "" is the model's own forward."""
    scope = op.get("scope", "") if isinstance(op.get("scope"), str) else ""
    while scope.startswith("gradients/"):
        scope = scope[len("gradients/"):]
    return "" if scope == "gradients" else scope.replace("/", ".")


def unit_order(ops):
    """The units in topological (forward) order: each by its first op that
    is neither state (Parameter, Buffer) nor a gradient; optimizer and
    constant scopes left out (they follow the majority)."""
    first = {}
    for i, op in enumerate(ops):
        u = unit_of(op)
        if u in ("optimizer", "constant"):
            continue
        grad = isinstance(op.get("scope"), str) and op["scope"].startswith("gradients")
        key = i if op.get("type") not in ("Parameter", "Buffer") and not grad else len(ops) + i
        first[u] = min(first.get(u, key), key)
    return sorted(first, key=lambda u: first[u])


def expand(ops, unit_dev, n_dev):
    """A per-unit choice as a placement of every op; optimizer and constant
    scopes on the device most units use (ties: the lower index)."""
    counts = [0] * n_dev
    for d in unit_dev.values():
        counts[d] += 1
    major = max(range(n_dev), key=lambda d: (counts[d], -d))
    return [unit_dev.get(unit_of(op), major) for op in ops]


def module_level(ops, place, devices):
    """The placement as the measurer runs it: every op on the device of
    most of its module's ops (ties to the name first alphabetically)."""
    counts = {}
    for op, d in zip(ops, place):
        c = counts.setdefault(unit_of(op), {})
        c[d] = c.get(d, 0) + 1
    best = {u: sorted(c.items(), key=lambda kv: (-kv[1], devices[kv[0]]))[0][0] for u, c in counts.items()}
    return {u: d for u, d in best.items() if u not in ("optimizer", "constant")}


def make_placements(ops, devices, kinds, baselines, args, rng):
    """[(label, kind, unit -> device index)]: each single device, each
    baseline, contiguous splits at --cuts points between the CPU and the
    first GPU both ways (and the first two GPUs, when there are two), then
    seeded random ones, --random of them at least and more until
    --placements of all use two devices or more."""
    order = unit_order(ops)
    cpus = [j for j, k in enumerate(kinds) if k == "cpu"]
    gpus = [j for j, k in enumerate(kinds) if k != "cpu"]
    out = [(f"all on {d}", "single", {u: j for u in order}) for j, d in enumerate(devices)]
    for label, unit_dev in baselines:
        out.append((label, "baseline", unit_dev))
    pairs = []
    if cpus and gpus:
        pairs += [(cpus[0], gpus[0]), (gpus[0], cpus[0])]
    if len(gpus) >= 2:
        pairs.append((gpus[0], gpus[1]))
    if not pairs and len(devices) >= 2:
        pairs.append((0, 1))
    m = len(order)
    cuts = sorted({round(m * k / (args.cuts + 1)) for k in range(1, args.cuts + 1)} - {0, m})
    for a, b in pairs:
        for c in cuts:
            out.append((f"{devices[a]} then {devices[b]} at {c}/{m}", "split",
                        {u: (a if i < c else b) for i, u in enumerate(order)}))
    shares = (0.1, 0.25, 0.5, 0.75)
    others = gpus if cpus and gpus else list(range(1, len(devices)))
    home = cpus[0] if cpus and gpus else 0
    seen = {tuple(sorted(p[2].items())) for p in out}
    n_split = sum(1 for p in out if len(set(p[2].values())) > 1)
    tries, k = 0, 0
    while (n_split < args.placements or k < args.random) and tries < 100 * (args.placements + args.random) \
            and len(devices) > 1:
        tries += 1
        share = shares[tries % len(shares)]
        unit_dev = {u: (home if rng.random() < share else rng.choice(others)) for u in order}
        key = tuple(sorted(unit_dev.items()))
        if len(set(unit_dev.values())) < 2 or key in seen:
            continue
        seen.add(key)
        k += 1
        out.append((f"random {k} (CPU share {share:g})" if cpus and gpus else f"random {k}", "random", unit_dev))
        n_split += 1
    return out


def simulate(dplace, graph, devices, placement, executor=None):
    """(step seconds or None, verdict, serial seconds: every device's and
    link's busy time added, transfers, transfer bytes, devices used), under
    the graph's executor or the one given."""
    out = run([dplace, "simulate", "--graph", graph, "--devices", devices, "--placement", placement, "--json"]
              + (["--executor", executor] if executor else []), f"dplace simulate --placement {placement}")
    r = json.loads(out[out.index("{"):])
    serial = sum(d.get("busy_s", 0.0) for d in r.get("devices", [])) + sum(
        lk.get("busy_s", 0.0) for lk in r.get("links", []))
    used = [d["name"] for d in r.get("devices", []) if d.get("ops", 0) > 0]
    step = r["step_time_s"] if r.get("verdict") == "valid" else None
    return step, r.get("verdict", "?"), serial, r.get("transfers", 0), r.get("transfer_bytes", 0), used


def git_commit():
    try:
        r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        return r.stdout.strip() or "?"
    except OSError:
        return "?"


def prepare(args):
    t0 = time.time()
    if not os.access(args.dplace, os.X_OK):
        raise Bad(f"no dplace binary at {args.dplace} (--dplace)")
    if args.placements < 1 or args.cuts < 1 or args.random < 0:
        raise Bad(f"--placements {args.placements} --cuts {args.cuts} --random {args.random}: needs placements and "
                  "cuts at least 1, random at least 0")
    if args.steps < 1 or not 0 <= args.warmup < args.steps or args.repeat < 1:
        raise Bad(f"--steps {args.steps} --warmup {args.warmup} --repeat {args.repeat}: needs 0 <= warmup < steps "
                  "and repeat >= 1")
    models = [parse_model(s) for s in (args.model or DEFAULT_MODELS)]
    out = args.out
    os.makedirs(out, exist_ok=True)
    for sub in ("scripts", "models"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    for name in ("dplace-export-torch", "dplace-measure-torch"):
        shutil.copy2(os.path.join(SCRIPTS, name), os.path.join(out, "scripts", name))
    shutil.copy2(os.path.join(SCRIPTS, "gpu-check.sh"), os.path.join(out, "gpu-check.sh"))

    # the devices, as a file in DIR
    devices_path = os.path.join(out, "devices.json")
    if os.path.isfile(args.devices):
        doc = read_json(args.devices, "dplace-devices")
        write_atomic(devices_path, json.dumps(doc, indent=1) + "\n")
    else:
        run([args.dplace, "devices", args.devices, "-o", devices_path], f"dplace devices {args.devices}")
        doc = read_json(devices_path, "dplace-devices")
    devs = doc.get("devices")
    if not isinstance(devs, list) or not devs or not all(isinstance(d, dict) and "name" in d for d in devs):
        raise Bad(f'{args.devices}: needs a "devices" array of objects with a "name"')
    devices = [d["name"] for d in devs]
    kinds = [d.get("kind", "gpu") for d in devs]

    entries, sim_rows = [], []
    rng = random.Random(args.seed)
    for name, batch, shape, opts, want_name in models:
        spec, model_rel = carry_model(name, out)
        step_args = ["--batch", str(batch)] + (["--input-shape", shape] if shape else []) + opts
        tmp_graph = os.path.join(out, f".export.{os.getpid()}.json")
        cmd = [EXPORTER, spec, *step_args, "-q", "-o", tmp_graph] + (["--name", want_name] if want_name else [])
        if args.profile:
            cmd += ["--profile"] + (["--threads", str(args.threads)] if args.threads else [])
        print(f"{PROG}: exporting {name} at batch {batch}", file=sys.stderr, flush=True)
        run(cmd, f"dplace-export-torch {name}")
        graph = read_json(tmp_graph, "dplace-graph")
        gname = graph.get("name", "graph")
        if any(e["name"] == gname for e in entries):
            os.unlink(tmp_graph)
            raise Bad(f'--model "{name}": its graph "{gname}" is another --model\'s too (change the batch, or '
                      "name it: --name)")
        mdir = os.path.join(out, gname)
        if os.path.isdir(mdir):
            shutil.rmtree(mdir)
        os.makedirs(mdir)
        graph_rel = f"{gname}/graph.json"
        os.replace(tmp_graph, os.path.join(out, graph_rel))
        ops = graph["ops"]

        bdir = os.path.join(mdir, "baselines")
        run([args.dplace, "baseline", "--graph", os.path.join(out, graph_rel), "--devices", devices_path,
             "--methods", args.methods, "--seed", str(args.seed), "--out-dir", bdir], "dplace baseline")
        baselines = []
        for m in args.methods.split(","):
            path = os.path.join(bdir, m + ".json")
            if os.path.isfile(path):
                p = read_json(path, "dplace-placement")
                idx = {d: j for j, d in enumerate(devices)}
                place = [idx[p["devices"][d]] for d in p["placement"]]
                baselines.append((m, module_level(ops, place, devices)))
        shutil.rmtree(bdir)

        placements, seen = [], {}
        for label, kind, unit_dev in make_placements(ops, devices, kinds, baselines, args, rng):
            place = expand(ops, unit_dev, len(devices))
            key = tuple(place)
            if key in seen:
                seen[key]["label"] += f" = {label}"
                continue
            k = len(placements)
            rel = f"{gname}/p{k:02d}.json"
            text = ('{"format": "dplace-placement", "version": 1, "graph": ' + json.dumps(gname)
                    + ', "units": "module",\n "devices": ' + json.dumps(devices)
                    + ',\n "placement": [' + ",".join(map(str, place)) + "]}\n")
            write_atomic(os.path.join(out, rel), text)
            step, verdict, serial, transfers, tbytes, used = simulate(args.dplace, os.path.join(out, graph_rel),
                                                                      devices_path, os.path.join(out, rel))
            entry = {"file": rel, "label": label, "kind": kind, "devices_used": used, "simulated_s": step,
                     "serial_s": serial, "verdict": verdict, "transfers": transfers, "transfer_bytes": tbytes}
            seen[key] = entry
            placements.append(entry)
        # the smoke run: the CPU alone, the first GPU alone, a split between them
        marks = [p for p in placements if p["kind"] == "single"][:2]
        marks += [p for p in placements if p["kind"] == "split"][len([q for q in placements if q["kind"] == "split"])
                                                                 // 2:][:1]
        for p in marks:
            p["smoke"] = True
        n_split = sum(1 for p in placements if len(p["devices_used"]) > 1)
        print(f"{PROG}: {gname}: {len(ops)} ops, {len(placements)} placements ({n_split} over two devices or "
              "more)", file=sys.stderr, flush=True)
        entries.append({"name": gname, "model": model_rel, "step_args": step_args, "graph": graph_rel,
                        "ops": len(ops), "placements": placements})
        for p in placements:
            sim_rows.append([gname, p["file"], p["label"], p["kind"], " ".join(p["devices_used"]),
                             "" if p["simulated_s"] is None else f"{p['simulated_s']:.9g}",
                             f"{p['serial_s']:.9g}", p["verdict"], p["transfers"], p["transfer_bytes"]])

    # the device time of the full run, from the simulated step times (before any calibration)
    per_meas = 1.0  # model copy, placing, optimizer: a second is generous for the default models
    est = sum(args.repeat * (per_meas + args.steps * (p["simulated_s"] or p["serial_s"]))
              for e in entries for p in e["placements"])
    manifest = {"format": "dplace-gpu-check", "version": 1, "created": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                                        time.gmtime()),
                "commit": git_commit(), "prepared_on": mvs.machine(), "seed": args.seed,
                "devices": "devices.json", "device_names": devices, "profile": bool(args.profile),
                "measure": {"steps": args.steps, "warmup": args.warmup, "repeat": args.repeat,
                            "time_budget_s": args.time_budget, "smoke_steps": 3, "smoke_warmup": 1,
                            "smoke_time_budget_s": 60, "estimate_s": round(est)},
                "models": entries}
    write_atomic(os.path.join(out, "manifest.json"), json.dumps(manifest, indent=1) + "\n")
    text = "model,placement_file,label,kind,devices_used,simulated_s,serial_s,verdict,transfers,transfer_bytes\n"
    buf = []
    for row in sim_rows:
        w = csv.writer(_Lines(buf), lineterminator="\n")
        w.writerow(row)
    write_atomic(os.path.join(out, "simulated.csv"), text + "".join(buf))
    n = sum(len(e["placements"]) for e in entries)
    print(f"{PROG}: wrote {out}: {n} placements of {len(entries)} models; the full run's device time from the "
          f"simulated steps: about {est:.0f} s ({args.repeat} rounds x {args.steps} steps; its budget "
          f"{args.time_budget:g} s); {time.time() - t0:.0f} s", file=sys.stderr)
    if est > args.time_budget:
        print(f"{PROG}: the estimate passes the time budget: the measurer will stop at it; fewer --placements, "
              "--repeat or --steps, or smaller models, make a full run", file=sys.stderr)
    return 0


class _Lines:
    def __init__(self, buf):
        self.buf = buf

    def write(self, s):
        self.buf.append(s)


# ---------------------------------------------------------------------------
# measure

def measure(args, rest):
    """Runs DIR's copy of the measurer in place of this process."""
    manifest = os.path.join(args.dir, "manifest.json")
    measurer = os.path.join(args.dir, "scripts", "dplace-measure-torch")
    for path in (manifest, measurer):
        if not os.path.isfile(path):
            raise Bad(f"{path}: missing (bench/gpu_check.py prepare --out {args.dir} writes it)")
    csv_path = os.path.join(args.dir, "smoke.csv" if args.smoke else "measured.csv")
    cmd = [sys.executable, measurer, "--manifest", manifest, "--csv", csv_path] + (["--smoke"] if args.smoke
                                                                                    else []) + rest
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, cmd)


# ---------------------------------------------------------------------------
# analyze

def read_measured(path, manifest):
    """{(model, placement_file): [seconds of the ok rows]}, {...: last status
    not ok}; every row checked against the manifest."""
    known = {(e["name"], p["file"]) for e in manifest["models"] for p in e["placements"]}
    models = {e["name"] for e in manifest["models"]}
    times, other = {}, {}
    try:
        f = open(path, encoding="utf-8", newline="")
    except OSError as e:
        raise Bad(f"{path}: cannot read: {e.strerror}")
    with f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header != ["model", "placement_file", "seconds", "status"]:
            raise Bad(f"{path}: line 1 is {header!r}, not the header model,placement_file,seconds,status")
        for n, row in enumerate(reader, start=2):
            if len(row) != 4:
                raise Bad(f"{path}: line {n} has {len(row)} fields, not 4")
            model, pfile, secs, status = row
            if model not in models:
                raise Bad(f'{path}: line {n}: model "{model}" is not in the manifest ({", ".join(sorted(models))})')
            if (model, pfile) not in known:
                raise Bad(f'{path}: line {n}: {pfile} is not a placement of model "{model}" in the manifest')
            if status == "ok":
                try:
                    t = float(secs)
                except ValueError:
                    t = float("nan")
                if not t > 0 or t == float("inf"):
                    raise Bad(f"{path}: line {n}: seconds {secs!r} is not a positive number")
                times.setdefault((model, pfile), []).append(t)
            elif status.split(" ")[0] in ("oom", "failed", "skipped"):
                other[(model, pfile)] = status
            else:
                raise Bad(f"{path}: line {n}: status {status!r} is not ok, oom, failed or skipped")
    return times, other


def has_calibrate(dplace):
    try:
        r = subprocess.run([dplace, "calibrate", "--help"], capture_output=True, text=True)
    except OSError:
        return False
    return r.returncode == 0


def calibrate(dplace, folder, manifest, fit, held, devices=None, executor=None):
    """Fits the manifest's devices to the measured fit placements with
    `dplace calibrate` and simulates the held-out ones on the result:
    ({(model, file): calibrated seconds}, a line saying what happened).
    devices (a path or preset; default the manifest's) is the fit's starting
    point; executor (default each graph's) how the steps ran. Without the
    command in this build: ({}, "calibrate: not available in this build")."""
    if not has_calibrate(dplace):
        return {}, "calibrate: not available in this build"
    rows = ["graph,placement_file,seconds"]
    graphs = {e["name"]: e["graph"] for e in manifest["models"]}
    for (model, pfile), secs in fit:
        rows.append(f"{graphs[model]},{pfile},{secs:.9g}")
    write_atomic(os.path.join(folder, "calibrate_fit.csv"), "\n".join(rows) + "\n")
    cmd = [dplace, "calibrate"]
    for g in sorted({graphs[m] for (m, _), _ in fit}):
        cmd += ["--graph", g]
    cmd += ["--devices", devices or manifest.get("devices", "devices.json"), "--measurements", "calibrate_fit.csv",
            "--holdout", "0", "-o", "calibrated.json"] + (["--executor", executor] if executor else [])
    try:
        report = run(cmd, "dplace calibrate", cwd=folder)
    except Failed as e:
        return {}, f"calibrate: {e}"
    out = {}
    for (model, pfile) in held:
        step, _, _, _, _, _ = simulate(dplace, os.path.join(folder, graphs[model]),
                                       os.path.join(folder, "calibrated.json"), os.path.join(folder, pfile),
                                       executor)
        out[(model, pfile)] = step
    last = (report.strip().splitlines() or [""])[-1]
    return out, f"calibrate: fitted on {len(fit)} placements ({' '.join(cmd[1:])}): {last}"


def mape(pairs):
    return 100 * statistics.mean(abs(s - m) / m for m, s in pairs) if pairs else float("nan")


def rho(pairs):
    return mvs.spearman([m for m, _ in pairs], [s for _, s in pairs]) if len(pairs) >= 2 else float("nan")


def fmt(v):
    return "-" if v is None else f"{v:.4g}"


def eager_section(rows, manifest, cpu_only):
    """What the numbers say about PyTorch eager execution against the
    simulator's dataflow executor: lines of markdown."""
    lines = ["## Where PyTorch eager execution departs from the simulator", ""]
    lines.append("The simulator runs each device's ops as soon as their inputs are there, every device at once, "
                 "and a transfer as a link's busy time. PyTorch's eager step runs the ops in program order from "
                 "one host thread: a CPU op blocks that thread until it is done, a GPU op is queued "
                 "asynchronously on the device's stream, and a tensor moved to the CPU (the measurer's `.to()` "
                 "at a module boundary) waits for the GPU work before it. So CPU and GPU work overlap only where "
                 "queued GPU kernels are still running while the host thread does CPU ops, never the other way, "
                 "and every module boundary from a GPU to the CPU synchronises.")
    lines.append("")
    by_kind = {}
    for r in rows:
        if r["meas"] is not None and r["sim"]:
            by_kind.setdefault(r["kind"] if r["kind"] != "single" else r["label"].split(" = ")[0], []).append(
                r["meas"] / r["sim"])
    if by_kind:
        lines.append("Measured / simulated (uncalibrated), median per kind of placement: "
                     + "; ".join(f"{k} {statistics.median(v):.2f} ({len(v)})" for k, v in sorted(by_kind.items()))
                     + ".")
        lines.append("")
    # overlap: does the measurement follow the overlapped schedule or the serial sum? Each model's
    # measured times are first scaled by its single-device placements' measured/simulated ratio,
    # where overlap plays no part, so that a cost model off by a constant factor does not count.
    scale = {}
    for e in manifest["models"]:
        ones = [r["meas"] / r["sim"] for r in rows if r["model"] == e["name"] and r["meas"] is not None
                and r["sim"] and len(r["used"]) == 1]
        if ones:
            scale[e["name"]] = statistics.median(ones)
    idx, closer, n = [], 0, 0
    for r in rows:
        if r["meas"] is None or not r["sim"] or len(r["used"]) < 2 or r["model"] not in scale:
            continue
        gap = r["serial"] - r["sim"]
        if gap > 0.05 * r["sim"]:
            meas = r["meas"] / scale[r["model"]]
            n += 1
            idx.append((meas - r["sim"]) / gap)
            if abs(meas - r["serial"]) < abs(meas - r["sim"]):
                closer += 1
    if n:
        lines.append(f"Overlap: on {n} placements over two devices or more the simulator credits more than 5% of "
                     "overlap (its step time under the sum of every device's and link's busy time). With each "
                     "model's measured times scaled by its single-device placements' measured/simulated ratio ("
                     + ", ".join(f"{k} {v:.2f}" for k, v in scale.items()) + "), the measured time is closer to "
                     f"that serial sum on {closer} of them; the scaled measured excess over the simulated time, as "
                     f"a share of the overlap credited, has median {statistics.median(idx):.2f} (0: overlapped as "
                     "simulated; 1: serial, as one host thread running the ops in order would be; above 1: slower "
                     "still, the cost of crossing devices).")
    else:
        lines.append("Overlap: no placement here gets more than 5% of overlap from the simulator (or no "
                     "single-device placement was measured to scale by), so the numbers cannot tell overlapped "
                     "from serial execution.")
    lines.append("")
    tr = [(r["transfers"], r["meas"] / r["sim"]) for r in rows if r["meas"] is not None and r["sim"]
          and len(r["used"]) >= 2]
    if len(tr) >= 3:
        lines.append(f"Transfers: over the {len(tr)} placements on two devices or more, Spearman between the "
                     f"number of tensors crossing devices and measured/simulated is "
                     f"{mvs.spearman([a for a, _ in tr], [b for _, b in tr]):+.2f} (positive: each crossing costs "
                     "more than the simulated link time, as a synchronising copy does).")
        lines.append("")
    per_op = []
    for e in manifest["models"]:
        for r in rows:
            if r["model"] == e["name"] and r["meas"] is not None and r["sim"] and r["kind"] == "single":
                per_op.append(f"{e['name']} on {r['used'][0]} {r['meas'] / e['ops'] * 1e6:.1f} us measured, "
                              f"{r['sim'] / e['ops'] * 1e6:.1f} us simulated")
    if per_op:
        lines.append("Per op, all on one device (the step's time over its ops): " + "; ".join(per_op) + ". Where "
                     "the measured figure is far above the simulated one on a GPU, the step is bound by the host "
                     "(Python dispatch and kernel launch), which the simulator prices as a launch overhead only.")
        lines.append("")
    if cpu_only:
        lines.append("**This run mapped every device to the CPU** (`--map-all cpu`): every placement is the same "
                     "computation on the same cores, so the differences between rows are the machine's noise and "
                     "the per-op cost of the measurer's placing, and none of the figures above says anything "
                     "about GPUs.")
        lines.append("")
    return lines


def check_manifest(doc, path):
    """The fields analyze reads, each present and of its type."""
    models = doc.get("models")
    if not isinstance(models, list) or not models:
        raise Bad(f'{path}: needs a non-empty "models" array')
    for k, e in enumerate(models):
        if not (isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("graph"), str)
                and isinstance(e.get("ops"), int) and isinstance(e.get("placements"), list)):
            raise Bad(f'{path}: models[{k}] needs "name", "graph", "ops" and "placements"')
        for j, p in enumerate(e["placements"]):
            sim = p.get("simulated_s") if isinstance(p, dict) else None
            if not (isinstance(p, dict) and isinstance(p.get("file"), str) and isinstance(p.get("label"), str)
                    and isinstance(p.get("devices_used"), list) and (sim is None or isinstance(sim, (int, float)))
                    and isinstance(p.get("serial_s", 0), (int, float))):
                raise Bad(f'{path}: models[{k}].placements[{j}] needs "file", "label", "devices_used" and a '
                          'number or null "simulated_s"')


def analyze(args):
    folder = args.dir
    mpath = os.path.join(folder, "manifest.json")
    manifest = read_json(mpath, "dplace-gpu-check")
    check_manifest(manifest, mpath)
    csv_path = args.csv or os.path.join(folder, "measured.csv")
    times, other = read_measured(csv_path, manifest)
    if not times:
        raise Bad(f"{csv_path}: no measurement with status ok")
    if not 0 <= args.fit_share < 1:
        raise Bad(f"--fit-share {args.fit_share}: must be in [0, 1)")
    info_path = csv_path + ".info"
    info = ""
    if os.path.isfile(info_path):
        with open(info_path, encoding="utf-8") as f:
            info = f.read().strip()
    rows = []
    for e in manifest["models"]:
        for p in e["placements"]:
            key = (e["name"], p["file"])
            ts = times.get(key, [])
            rows.append({"model": e["name"], "file": p["file"], "label": p["label"], "kind": p.get("kind", "?"),
                         "used": p.get("devices_used", []), "sim": p.get("simulated_s"),
                         "serial": p.get("serial_s") or 0.0, "transfers": p.get("transfers", 0),
                         "meas": statistics.median(ts) if ts else None, "times": ts,
                         "status": other.get(key, "ok" if ts else "not measured")})
    devices = None  # the manifest's, as prepare simulated
    if args.devices or args.executor:
        # a file here, else DIR's own (devices.json), else a preset's name
        devices = args.devices or os.path.join(folder, manifest.get("devices", "devices.json"))
        if os.path.isfile(devices):
            devices = os.path.abspath(devices)
        graphs = {e["name"]: os.path.join(folder, e["graph"]) for e in manifest["models"]}
        for r in rows:
            r["sim"], _, r["serial"], r["transfers"], _, _ = simulate(
                args.dplace, graphs[r["model"]], devices, os.path.join(folder, r["file"]), args.executor)
    both = [r for r in rows if r["meas"] is not None and r["sim"]]
    rng = random.Random(args.seed)
    fit, held = [], []
    for e in manifest["models"]:
        mine = [r for r in both if r["model"] == e["name"]]
        rng.shuffle(mine)
        k = round(len(mine) * args.fit_share)
        fit += mine[:k]
        held += mine[k:]
    cal, cal_line = ({}, "calibrate: no placements to fit (--fit-share 0)") if not fit else calibrate(
        args.dplace, folder, manifest, [((r["model"], r["file"]), r["meas"]) for r in fit],
        [(r["model"], r["file"]) for r in held], devices, args.executor)
    for r in rows:
        r["cal"] = cal.get((r["model"], r["file"]))
    cpu_only = "--map-all cpu" in info or args.cpu_only

    out = ["# Real-GPU check: measured against simulated step times", ""]
    out.append(f"Prepared at commit {manifest.get('commit', '?')} on {manifest.get('prepared_on', '?')} "
               f"({manifest.get('created', '?')}); measured: {info or 'no ' + os.path.basename(info_path)}.")
    out.append("")
    if devices:
        out.append(f"Simulated again on {os.path.basename(devices)} under "
                   + (f"the {args.executor} executor" if args.executor else "each graph's executor") + ".")
        out.append("")
    out.append(cal_line + ".")
    out.append("")
    for e in manifest["models"]:
        mine = [r for r in rows if r["model"] == e["name"]]
        nm = sum(1 for r in mine if r["meas"] is not None)
        bad = sorted({r["status"].split(" ")[0] for r in mine if r["meas"] is None})
        out.append(f"- {e['name']} ({e.get('model', '?')} {' '.join(e.get('step_args', []))}, {e['ops']} ops): "
                   f"{len(mine)} placements,"
                   f" {nm} measured" + (f" (others: {', '.join(bad)})" if bad else "")
                   + f", {sum(1 for r in fit if r['model'] == e['name'])} fitted, "
                   f"{sum(1 for r in held if r['model'] == e['name'])} held out")
    out.append("")
    calibrated = any(r["cal"] is not None for r in held)
    out.append(f"## The {len(held)} held-out placements" if fit else "## Every placement (nothing fitted)")
    out.append("")
    out.append("| model | placement | devices used | measured s (min-max) | simulated s | error % |"
               + (" calibrated s | error % |" if calibrated else ""))
    out.append("|---|---|---|---:|---:|---:|" + ("---:|---:|" if calibrated else ""))
    for r in held:
        spread = fmt(r["meas"]) + (f" ({fmt(min(r['times']))}-{fmt(max(r['times']))})" if len(r["times"]) > 1
                                   else "")
        err = 100 * (r["sim"] - r["meas"]) / r["meas"]
        line = f"| {r['model']} | {r['label']} | {', '.join(r['used'])} | {spread} | {fmt(r['sim'])} | {err:+.1f} |"
        if calibrated:
            c = r["cal"]
            cerr = "-" if c is None else f"{100 * (c - r['meas']) / r['meas']:+.1f}"
            line += f" {fmt(c)} | {cerr} |"
        out.append(line)
    out.append("")
    out.append("| set | placements | MAPE % | Spearman |" + (" calibrated MAPE % | calibrated Spearman |"
                                                            if calibrated else ""))
    out.append("|---|---:|---:|---:|" + ("---:|---:|" if calibrated else ""))
    groups = [(e["name"], [r for r in held if r["model"] == e["name"]]) for e in manifest["models"]]
    groups.append(("all held out", held))
    groups.append(("all measured, uncalibrated", both))
    for name, g in groups:
        pairs = [(r["meas"], r["sim"]) for r in g]
        line = f"| {name} | {len(g)} | {mape(pairs):.1f} | {rho(pairs):+.2f} |"
        if calibrated:
            cp = [(r["meas"], r["cal"]) for r in g if r["cal"] is not None]
            line += f" {mape(cp):.1f} | {rho(cp):+.2f} |" if name != "all measured, uncalibrated" else " | |"
        out.append(line)
    out.append("")
    key = "cal" if calibrated else "sim"
    worst = sorted([r for r in held if r[key] is not None], key=lambda r: -abs(r[key] - r["meas"]) / r["meas"])
    out.append(f"Worst held-out placements ({'calibrated' if calibrated else 'uncalibrated'}): "
               + "; ".join(f"{r['model']} {r['label']} ({fmt(r['meas'])} s measured, {fmt(r[key])} s simulated, "
                           f"{100 * (r[key] - r['meas']) / r['meas']:+.0f}%)" for r in worst[:args.worst]) + ".")
    out.append("")
    out += eager_section(rows, manifest, cpu_only)
    text = "\n".join(out).rstrip() + "\n"
    print(text, end="")
    write_atomic(args.output or os.path.join(folder, "report.md"), text)
    return 0


# ---------------------------------------------------------------------------

def main(argv):
    ap = argparse.ArgumentParser(prog="bench/gpu_check.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="stage", required=True)
    p = sub.add_parser("prepare", help="export, place and simulate on this machine into --out DIR")
    p.add_argument("--out", required=True, help="the folder to carry to the GPU machine")
    p.add_argument("--model", action="append", help="NAME[:BATCH[:SHAPE]], then any of the exporter's "
                   + ", ".join(MODEL_OPTIONS) + " with their values, in one argument; repeatable (default: "
                   + ", ".join(DEFAULT_MODELS) + ")")
    p.add_argument("--devices", default=DEFAULT_DEVICES, help="the GPU machine as a dplace-devices file or preset "
                                                              "(default bench/devices/h100x1.json)")
    p.add_argument("--placements", type=int, default=30, help="placements over two devices or more, per model, "
                                                              "at least (default 30)")
    p.add_argument("--random", type=int, default=6, help="random placements per model, at least (default 6; "
                                                          "more when needed to reach --placements)")
    p.add_argument("--cuts", type=int, default=7, help="cut points of the contiguous splits (default 7)")
    p.add_argument("--methods", default=METHODS, help=f"baseline placers (default {METHODS})")
    p.add_argument("--steps", type=int, default=5, help="measured steps per placement and round (default 5)")
    p.add_argument("--warmup", type=int, default=2, help="of which warm-up (default 2)")
    p.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    p.add_argument("--time-budget", type=float, default=480, help="seconds the full run may take (default 480)")
    p.add_argument("--profile", action="store_true", help="export with --profile: this machine's measured op "
                                                          "times (only when this machine is the measuring one)")
    p.add_argument("--threads", type=int, help="torch threads of --profile")
    p.add_argument("--seed", type=int, default=1, help="seed of the random placements and the baselines")
    p.add_argument("--dplace", default=os.path.join(ROOT, "build", "dplace"))
    m = sub.add_parser("measure", help="on the GPU machine: run DIR's measurer over DIR's placements")
    m.add_argument("dir")
    m.add_argument("--smoke", action="store_true", help="a few placements, one round: DIR/smoke.csv")
    a = sub.add_parser("analyze", help="calibrate on part, compare the rest: markdown on stdout and DIR/report.md")
    a.add_argument("dir")
    a.add_argument("--csv", help="the measurements (default DIR/measured.csv)")
    a.add_argument("--fit-share", type=float, default=0.5, help="share of each model's placements fitted "
                                                                "(default 0.5)")
    a.add_argument("--seed", type=int, default=1, help="seed of the fit/hold-out split (default 1)")
    a.add_argument("--worst", type=int, default=5, help="worst placements listed (default 5)")
    a.add_argument("--cpu-only", action="store_true", help="say the run mapped every device to the CPU (said "
                                                           "anyway when the measurer's .info says --map-all cpu)")
    a.add_argument("--devices", help="simulate and calibrate on this dplace-devices file or preset (default: "
                                     "the simulated times prepare wrote, on DIR/devices.json)")
    a.add_argument("--executor", choices=["tf", "torch"], help="simulate and calibrate under this executor "
                                                                "(default: each graph's)")
    a.add_argument("--dplace", default=os.path.join(ROOT, "build", "dplace"))
    a.add_argument("-o", "--output", help="the report (default DIR/report.md)")
    args, rest = ap.parse_known_args(argv)
    if rest and args.stage != "measure":
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        if args.stage == "prepare":
            return prepare(args)
        if args.stage == "measure":
            return measure(args, rest)
        return analyze(args)
    except Bad as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except Failed as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
