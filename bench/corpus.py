#!/usr/bin/python3
"""corpus: graph and machine pairs with the search's best placement of each,
the teacher of a placer trained across graphs.

    bench/corpus.py plan                      # the pairs and their split -> bench/corpus/manifest.json
    bench/corpus.py run --jobs 2              # the search on every pair not yet done, resumable
    bench/corpus.py status                    # done, left, failed, by split

A pair is a graph (a zoo model at a batch size, the synthetic generator at a
size, a PyTorch training step exported by scripts/dplace-export-torch) and a
machine (a device preset of 2 to 8 GPUs, or its memory-tight variant: every
GPU's memory cut so that the graph does not fit on one). The split is fixed
by the plan, not drawn: whole graph families and whole machine families are
held out (HELD_OUT_*), so that no held-out graph or machine is ever seen in
training, in any batch size or GPU count.

For each pair, `run` runs dplace's search (`dplace optimize --agent search`)
for --teacher updates on one thread (a budget in updates, not seconds, so
that a label does not depend on how loaded the machine was) and keeps, in bench/corpus/pairs/ID.json
(written atomically), its summary (the search's best, the references, the
lower bound) and its best placement, one device index per op, gzip'd and
base64'd. A pair whose file exists is done; an interrupted run resumes where
it stopped. Graph exports and device files are cached in bench/corpus/cache/
(not kept in the repository: the plan rebuilds them).

Exit status 0 when every pair asked for is done, 1 when some failed (named on
stderr), 2 for bad usage.
"""
import argparse
import base64
import concurrent.futures
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DIR = os.path.join(ROOT, "bench", "corpus")
DPLACE = os.environ.get("DPLACE_BIN", os.path.join(ROOT, "build", "dplace"))
EXPORT = os.path.join(ROOT, "scripts", "dplace-export-torch")

# Graph sources: (family, kind, spec, batches). kind: zoo (dplace's own
# models, --model NAME --batch B), synth (--model synthetic-N, spec N), torch
# (scripts/dplace-export-torch SPEC --batch B [--input-shape]).
GRAPHS = [
    ("inception_v3", "zoo", "inception_v3", [1, 8]),
    ("resnet152", "zoo", "resnet152", [32, 128]),
    ("rnnlm", "zoo", "rnnlm", [32, 64]),
    ("nmt", "zoo", "nmt2", [32, 64]),
    ("nmt", "zoo", "nmt4", [64]),
    ("gnmt", "zoo", "gnmt4", [128, 256]),
    ("bert", "zoo", "bert_base", [8, 24]),
    ("synthetic", "synth", "2000", [0]),
    ("synthetic", "synth", "6000", [0]),
    ("synthetic", "synth", "12000", [0]),
    ("synthetic", "synth", "25000", [0]),
    ("torch-resnet", "torch", "resnet18", [32, 128]),
    ("torch-resnet", "torch", "resnet50", [32, 64]),
    ("torch-vgg", "torch", "vgg16", [8, 32]),
    ("torch-mobilenet", "torch", "mobilenet_v2", [32, 128]),
    ("torch-densenet", "torch", "densenet121", [16]),
    ("torch-transformer", "torch", "bench/torch_models.py:transformer_encoder", [4, 8]),
]

# Machines: presets, each also memory-tight where a graph fits one GPU.
MACHINES = [
    ("k40", "k40x2"), ("k40", "k40x4"), ("k40", "k40x8"),
    ("p100", "p100x2"), ("p100", "p100x4"), ("p100", "p100x8"),
    ("v100", "v100-nvlinkx4"), ("v100", "v100-pciex8"),
    ("a100", "a100-sxmx4"), ("a100", "a100-pciex8"),
    ("h100", "h100-sxmx4"),
    ("l4", "l4x4"), ("rtx4090", "rtx4090x2"), ("rtx4090", "rtx4090x4"),
]

# Held out of training, whole families: a graph family of the zoo (GNMT, an
# 8-layer-deep seq2seq of over 50k ops at batch 256, as GDP held one out), a
# PyTorch export family (the Transformer encoder) and two machine families.
HELD_OUT_GRAPHS = {"gnmt", "torch-transformer"}
HELD_OUT_MACHINES = {"l4", "rtx4090"}
TIGHT_FRACTION = 0.6  # a tight machine's GPU memory: this share of the graph's peak on one GPU


def die(msg):
    print(f"corpus: {msg}", file=sys.stderr)
    sys.exit(2)


def write_atomic(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def graph_id(kind, spec, batch):
    if kind == "synth":
        return f"synthetic-{spec}"
    name = spec.rsplit(":", 1)[-1]
    return f"{name}_b{batch}"


def plan(args):
    """Every graph on every machine, plain and tight; split by family."""
    pairs = []
    for family, kind, spec, batches in GRAPHS:
        for b in batches:
            gid = graph_id(kind, spec, b)
            for mfam, preset in MACHINES:
                for tight in (False, True):
                    held = family in HELD_OUT_GRAPHS or mfam in HELD_OUT_MACHINES
                    pairs.append({"id": f"{gid}@{preset}{'-tight' if tight else ''}", "graph": gid,
                                  "graph_family": family, "kind": kind, "spec": spec, "batch": b,
                                  "machine": preset, "machine_family": mfam, "tight": tight,
                                  "split": "held-out" if held else "train"})
    manifest = {"format": "dplace-corpus", "version": 1,
                "held_out_graph_families": sorted(HELD_OUT_GRAPHS),
                "held_out_machine_families": sorted(HELD_OUT_MACHINES),
                "tight_fraction": TIGHT_FRACTION, "pairs": pairs}
    write_atomic(os.path.join(args.dir, "manifest.json"), json.dumps(manifest, indent=1) + "\n")
    n_held = sum(p["split"] == "held-out" for p in pairs)
    print(f"corpus: {len(pairs)} pairs ({len(pairs) - n_held} train, {n_held} held out) -> "
          f"{os.path.join(args.dir, 'manifest.json')}")


def load_manifest(d):
    path = os.path.join(d, "manifest.json")
    try:
        with open(path) as f:
            m = json.load(f)
    except FileNotFoundError:
        die(f"{path}: no manifest (run `bench/corpus.py plan` first)")
    except ValueError as e:
        die(f"{path}: not JSON: {e}")
    if m.get("format") != "dplace-corpus" or m.get("version") != 1:
        die(f"{path}: not a dplace-corpus v1 manifest")
    return m


def run_cmd(cmd, timeout):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} ...: exit {r.returncode}: {r.stderr.strip()[-400:]}")
    return r.stdout


def graph_args(p, cache):
    """The command-line arguments that load p's graph (exporting it once)."""
    if p["kind"] == "zoo":
        return ["--model", p["spec"], "--batch", str(p["batch"])]
    if p["kind"] == "synth":
        return ["--model", f"synthetic-{p['spec']}"]
    path = os.path.join(cache, "graphs", p["graph"] + ".json")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # TensorFlow's executor: the corpus, its teacher's placements and
        # the pretrained policy were made under it
        cmd = ["/usr/bin/python3", EXPORT, p["spec"], "--batch", str(p["batch"]), "--executor", "tf", "-o", path]
        if p["spec"].endswith(":transformer_encoder"):
            cmd += ["--input-shape", "128,1024"]
        run_cmd(cmd, 1800)
    return ["--graph", path]


def devices_arg(p, gargs, cache):
    """The preset, or for a tight pair a device file whose GPUs hold
    TIGHT_FRACTION of the graph's peak memory on one GPU (so one GPU is out
    of memory and the placement must spread)."""
    if not p["tight"]:
        return p["machine"]
    path = os.path.join(cache, "devices", p["id"].replace("@", "_") + ".json")
    if os.path.exists(path):
        return path
    sim = json.loads(run_cmd([DPLACE, "simulate", *gargs, "--devices", p["machine"], "--placement", "gpu",
                              "--json"], 600))
    peak = max(d.get("peak_bytes", 0) for d in sim["devices"] if d["name"].startswith("gpu"))
    with tempfile.TemporaryDirectory() as tmp:
        run_cmd([DPLACE, "devices", p["machine"], "-o", os.path.join(tmp, "d.json")], 60)
        with open(os.path.join(tmp, "d.json")) as f:
            ds = json.load(f)
    for d in ds["devices"]:
        if d.get("kind") == "gpu":
            d["memory_bytes"] = int(min(d["memory_bytes"], peak * TIGHT_FRACTION))
    ds["name"] = p["machine"] + "-tight"
    write_atomic(path, json.dumps(ds, indent=1) + "\n")
    return path


def pack(placement):
    return base64.b64encode(gzip.compress(bytes(placement), mtime=0)).decode()


def teach(p, d, updates, seed):
    """The search on one pair; its record, written atomically."""
    cache = os.path.join(d, "cache")
    gargs = graph_args(p, cache)
    dev = devices_arg(p, gargs, cache)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "best.json")
        t0 = time.monotonic()
        summary = json.loads(run_cmd([DPLACE, "optimize", *gargs, "--devices", dev, "--agent", "search", "--updates",
                                      str(updates), "--threads", "1", "--seed", str(seed), "--json", "--quiet",
                                      "-o", out], 6 * 3600))
        wall = time.monotonic() - t0
        with open(out) as f:
            placed = json.load(f)
    rec = {"id": p["id"], "pair": p, "teacher": {"agent": "search", "updates": updates, "seed": seed,
                                                "threads": 1, "wall_s": round(wall, 2)},
           "summary": summary, "devices": placed["devices"], "placement_gz_b64": pack(placed["placement"])}
    write_atomic(os.path.join(d, "pairs", p["id"] + ".json"), json.dumps(rec) + "\n")
    return rec


def run(args):
    m = load_manifest(args.dir)
    todo = [p for p in m["pairs"] if (args.split == "all" or p["split"] == args.split)
            and not os.path.exists(os.path.join(args.dir, "pairs", p["id"] + ".json"))]
    # a fixed shuffle, so that the first pairs done span the graphs and machines
    todo.sort(key=lambda p: hashlib.sha256(p["id"].encode()).hexdigest())
    if args.only:
        todo = [p for p in todo if args.only in p["id"]]
    if args.limit:
        todo = todo[:args.limit]
    print(f"corpus: {len(todo)} pairs to teach, {args.jobs} at a time, {args.teacher} search updates each",
          file=sys.stderr)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = {ex.submit(teach, p, args.dir, args.teacher, args.seed): p for p in todo}
        for k, fut in enumerate(concurrent.futures.as_completed(futs), 1):
            p = futs[fut]
            try:
                rec = fut.result()
                s = rec["summary"]
                print(f"corpus: [{k}/{len(todo)}] {p['id']}: search {s['best_step_time_s']} s, best baseline "
                      f"{s['best_baseline']} {s['best_baseline_s']} s, bound {s['lower_bound_s']:.6g} s",
                      file=sys.stderr, flush=True)
            except Exception as e:  # one pair's failure is reported, the others go on
                failed += 1
                print(f"corpus: [{k}/{len(todo)}] {p['id']}: FAILED: {e}", file=sys.stderr, flush=True)
    return 1 if failed else 0


def status(args):
    m = load_manifest(args.dir)
    by = {}
    for p in m["pairs"]:
        done = os.path.exists(os.path.join(args.dir, "pairs", p["id"] + ".json"))
        k = by.setdefault(p["split"], [0, 0])
        k[0 if done else 1] += 1
    for split, (done, left) in sorted(by.items()):
        print(f"{split:9s} {done:4d} done, {left:4d} left")
    return 0


def main():
    ap = argparse.ArgumentParser(prog="corpus", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["plan", "run", "status"])
    ap.add_argument("--dir", default=DEFAULT_DIR, help="the corpus folder (default bench/corpus)")
    ap.add_argument("--jobs", type=int, default=1, help="pairs taught at once (one thread each)")
    ap.add_argument("--teacher", type=int, default=400, help="search updates per pair (default 400)")
    ap.add_argument("--seed", type=int, default=1, help="the search's seed (default 1)")
    ap.add_argument("--split", choices=["train", "held-out", "all"], default="all")
    ap.add_argument("--limit", type=int, default=0, help="at most this many pairs (0: all)")
    ap.add_argument("--only", default="", help="only the pairs whose id contains this text")
    args = ap.parse_args()
    if args.jobs < 1 or args.teacher <= 0:
        die("--jobs must be >= 1 and --teacher > 0")
    if args.command != "plan" and not os.access(DPLACE, os.X_OK):
        die(f"{DPLACE}: no dplace binary (build it: scripts/setup.sh, or set DPLACE_BIN)")
    return {"plan": plan, "run": run, "status": status}[args.command](args) or 0


if __name__ == "__main__":
    sys.exit(main())
