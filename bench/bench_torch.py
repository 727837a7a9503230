#!/usr/bin/python3
"""bench_torch: every baseline placer and the search on exported PyTorch
training steps (docs/results/bench_torch.md).

Exports torchvision's ResNet-50 (batch 32, 64, 128), VGG-16 (8, 32, 128),
Inception-V3 (32, 128) and a BERT-Large-sized Transformer encoder
(bench/torch_models.py; sequence 512 and 1024 at batch 8) with
scripts/dplace-export-torch, some fitting on one GPU and some not, then on
each runs `dplace baseline` (every placer) and `dplace optimize --agent
search` (--time, --threads) on the devices, and prints one row per export:
single GPU, every baseline, the search, the search against the best valid
baseline, the simulated time of the search's module map (each module on
the device of most of its ops: what PyTorch runs, and what
dplace-measure-torch measures) with the number of modules the search's
placement splits, and the lower bound, in seconds per training step
(simulated).

    bench/bench_torch.py                                    # build/dplace, p100x4, 30 s, 2 threads
    bench/bench_torch.py --dplace OLD/dplace --only resnet50_b64,vgg16_b32 --time 10s
    bench/bench_torch.py --units op                         # everything placed op by op

With a dplace that knows `--units` both run at --units (default module:
what a PyTorch user applies); an older one places ops. Exports are kept in
--cache (default /tmp/dplace-bench-torch) and reused. Exit status 0, 2 for
bad input, 1 when a run fails.
"""
import argparse
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXPORTER = os.path.join(ROOT, "scripts", "dplace-export-torch")
TRANSFORMER = os.path.join(HERE, "torch_models.py") + ":transformer_encoder"
PLACERS = ["scotch", "mincut", "metis", "m-topo", "m-etf", "m-sct"]

# name, the exporter's arguments
CONFIGS = [
    ("resnet50_b32", ["resnet50", "--batch", "32"]),
    ("resnet50_b64", ["resnet50", "--batch", "64"]),
    ("resnet50_b128", ["resnet50", "--batch", "128"]),
    ("vgg16_b8", ["vgg16", "--batch", "8"]),
    ("vgg16_b32", ["vgg16", "--batch", "32"]),
    ("vgg16_b128", ["vgg16", "--batch", "128"]),
    ("inception_v3_b32", ["inception_v3", "--batch", "32"]),
    ("inception_v3_b128", ["inception_v3", "--batch", "128"]),
    ("transformer_s512_b8", [TRANSFORMER, "--batch", "8", "--input-shape", "512,1024"]),
    ("transformer_s1024_b8", [TRANSFORMER, "--batch", "8", "--input-shape", "1024,1024"]),
]


class InputError(Exception):
    pass


def load_exporter():
    loader = importlib.machinery.SourceFileLoader("dplace_export_torch", EXPORTER)
    spec = importlib.util.spec_from_loader("dplace_export_torch", loader)
    ex = importlib.util.module_from_spec(spec)
    loader.exec_module(ex)
    return ex


def module_map_time(a, ex, graph, placement):
    """(simulated step time of the module map of a placement file: what
    PyTorch runs, each module on the device of most of its ops; the number
    of modules the placement splits)."""
    g, p = ex.load_json(graph, "dplace-graph"), ex.load_json(placement, "dplace-placement")
    devices, place = ex.placement_arrays(p, placement)
    modules = ex.placement_modules(g["ops"], devices, place)
    mapped = ex.module_map_placement(g["ops"], devices, modules)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mapped.json")
        with open(path, "w") as f:
            f.write(ex.placement_text(g.get("name", ""), devices, mapped, "module"))
        res = json_of(run([a.dplace, "simulate", "--graph", graph, "--devices", a.devices, "--placement", path,
                           "--json"]))
    return res["step_time_s"], res["valid"], len(ex.split_modules(modules))


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
    return r.stdout


def json_of(text):
    return json.loads(text[text.index("{"):])


def knows_units(dplace):
    r = subprocess.run([dplace, "optimize", "--help"], capture_output=True, text=True)
    return "--units" in r.stdout


def export(cache, name, args):
    path = os.path.join(cache, name + ".json")
    if not os.path.exists(path):
        run(["/usr/bin/python3", EXPORTER, *args, "-q", "-o", path])
    return path


def bench_one(a, name, graph, units):
    """The row of one export: {"gpu": (s, valid), placer: (s, valid), "search": s, "bound": s, ...}."""
    extra = ["--units", units] if units else []
    t0 = time.time()
    base = json_of(run([a.dplace, "baseline", "--graph", graph, "--devices", a.devices, "--json",
                        "--methods", "gpu," + ",".join(PLACERS), *extra]))
    row = {"name": name, "units": units or "op"}
    for m in base["methods"]:
        row[m["method"]] = (m["step_time_s"], m["valid"]) if m["applied"] else (None, False)
    row["baseline_s"] = time.time() - t0
    if a.time != "0":
        with tempfile.TemporaryDirectory() as tmp:
            best = os.path.join(tmp, "best.json")
            opt = json_of(run([a.dplace, "optimize", "--graph", graph, "--devices", a.devices, "--agent", "search",
                               "--time", a.time, "--threads", str(a.threads), "--quiet", "--json", "-o", best,
                               *extra]))
            row["search"] = opt["best_step_time_s"]
            row["bound"] = opt["lower_bound_s"]
            row["search_units"] = opt.get("units", "op")
            t, valid, split = module_map_time(a, a.ex, graph, best)
            row["module_map"] = (t, valid)
            row["split_modules"] = split
    return row


def cell(v):
    s, valid = v
    if s is None:
        return "-"
    return f"{s:.3f}" + ("" if valid else "*")


def table(rows, placers):
    out = ["| export | one GPU | " + " | ".join(placers) + " | search | search / best baseline | its module map "
           "(modules split) | lower bound |", "|---|" + "---|" * (len(placers) + 6)]
    for r in rows:
        valid = [r[p][0] for p in placers if r[p][1] and r[p][0] is not None]
        best = min(valid) if valid else None
        head = f"| {r['name']} | {cell(r['gpu'])} | " + " | ".join(cell(r[p]) for p in placers)
        search = r.get("search")
        if search is None:
            out.append(head + " | - | - | - | - |")
            continue
        vs = f"{search / best:.2f}" if best else "-"
        out.append(head + f" | {search:.3f} | {vs} | {cell(r['module_map'])} ({r['split_modules']}) | "
                   f"{r['bound']:.3f} |")
    return "\n".join(out)


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="bench_torch.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--dplace", default=os.path.join(ROOT, "build", "dplace"), help="the dplace program")
    ap.add_argument("--devices", default="p100x4", help="device preset or file (default p100x4)")
    ap.add_argument("--time", default="30s", help="the search's time per export (default 30s; 0: no search)")
    ap.add_argument("--threads", type=int, default=2, help="the search's threads (default 2)")
    ap.add_argument("--units", default="module", help="module, module:DEPTH or op (default module)")
    ap.add_argument("--only", help="comma-separated export names")
    ap.add_argument("--cache", default="/tmp/dplace-bench-torch", help="where the exports are kept")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    return ap.parse_args(argv)


def main(argv):
    a = parse_args(argv)
    try:
        if not (os.path.isfile(a.dplace) and os.access(a.dplace, os.X_OK)):
            raise InputError(f"--dplace {a.dplace}: not an executable")
        names = [c[0] for c in CONFIGS]
        only = a.only.split(",") if a.only else names
        for n in only:
            if n not in names:
                raise InputError(f"--only: no export named {n!r} ({', '.join(names)})")
        if a.threads < 1:
            raise InputError(f"--threads {a.threads}: must be at least 1")
    except InputError as e:
        print(f"bench_torch.py: {e}", file=sys.stderr)
        return 2
    os.makedirs(a.cache, exist_ok=True)
    a.ex = load_exporter()
    units = a.units if knows_units(a.dplace) else None
    rows = []
    t0 = time.time()
    for name, args in CONFIGS:
        if name not in only:
            continue
        graph = export(a.cache, name, args)
        rows.append(bench_one(a, name, graph, units))
        print(f"bench_torch.py: {name} done ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    print(f"{a.dplace} on {a.devices}, units {units or 'op (this dplace has no --units)'}, search {a.time} with "
          f"{a.threads} threads; step times in s, * out of memory (or invalid)\n")
    print(table(rows, PLACERS))
    print(f"\ntotal {time.time() - t0:.0f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
