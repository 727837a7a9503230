#!/usr/bin/python3
"""bench_traced: Baechi's list placers on PyTorch training steps traced op by
op, without module paths (docs/results/bench_torch.md, "Traced op by op").

Exports torchvision's ResNet-50 (batch 32), VGG-16 (batch 8) and
Inception-V3 (batch 32) with scripts/dplace-export-torch, then writes each
as a tracer that records no module paths would: every op's scope removed
and its name replaced by its type and index (`convolution_12`), so nothing
but the op types and the edges says which ops are the backward pass. On
each it runs `dplace baseline` on the devices (default p100x4, where all
three fit one GPU) and prints one row per graph: every placer's step time
and its ratio to the single GPU.

    bench/bench_traced.py                          # build/dplace, p100x4
    bench/bench_traced.py --dplace OLD/dplace --units op

Exports are kept in --cache (default /tmp/dplace-bench-traced). Exit status
0, 2 for bad input, 1 when a run fails.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXPORTER = os.path.join(ROOT, "scripts", "dplace-export-torch")
MODELS = [("resnet50", 32), ("vgg16", 8), ("inception_v3", 32)]
METHODS = ["scotch", "mincut", "metis", "m-topo", "m-etf", "m-sct"]


def write_atomic(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def traced(cache, model, batch):
    """The export of model at batch with its module paths and names removed."""
    name = f"{model}_b{batch}"
    out = os.path.join(cache, name + "_traced.json")
    if os.path.exists(out):
        return out
    src = os.path.join(cache, name + ".json")
    if not os.path.exists(src):
        subprocess.run(["/usr/bin/python3", EXPORTER, model, "--batch", str(batch), "-q", "-o", src], check=True)
    with open(src) as f:
        g = json.load(f)
    groups = {}
    for i, op in enumerate(g["ops"]):
        op.pop("scope", None)
        op["name"] = f"{op['type'].lower()}_{i}"
        if "colocate" in op:  # a group's name, kept distinct but no longer a module path
            op["colocate"] = "group_%d" % groups.setdefault(op["colocate"], len(groups))
    write_atomic(out, json.dumps(g))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dplace", default=os.path.join(ROOT, "build", "dplace"))
    ap.add_argument("--devices", default="p100x4")
    ap.add_argument("--units", default=None, help="passed to dplace baseline --units (default: its own)")
    ap.add_argument("--cache", default="/tmp/dplace-bench-traced")
    args = ap.parse_args()
    if not os.access(args.dplace, os.X_OK):
        sys.exit(f"bench_traced: {args.dplace}: not an executable (build dplace first)")
    os.makedirs(args.cache, exist_ok=True)
    print("| graph | ops | one GPU | " + " | ".join(METHODS) + " |")
    print("|---|---|---|" + "---|" * len(METHODS))
    for model, batch in MODELS:
        path = traced(args.cache, model, batch)
        cmd = [args.dplace, "baseline", "--graph", path, "--devices", args.devices, "--json"]
        if args.units:
            cmd += ["--units", args.units]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"bench_traced: {model}_b{batch}: {r.stderr.strip()}", file=sys.stderr)
            sys.exit(1)
        rows = {x["method"]: x for x in json.loads(r.stdout)["methods"]}
        gpu = rows["gpu"]["step_time_s"]
        cells = []
        for m in METHODS:
            x = rows.get(m, {})
            t = x.get("step_time_s")
            cells.append("-" if t is None else f"{t:.4f} ({t / gpu:.2f}){'' if x.get('valid', True) else '*'}")
        with open(path) as f:
            n = len(json.load(f)["ops"])
        print(f"| {model}_b{batch} | {n} | {gpu:.4f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
