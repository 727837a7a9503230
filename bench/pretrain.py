#!/usr/bin/python3
"""pretrain: the pretrained placer's policy, imitated from the search on the
corpus's training pairs (bench/corpus.py), written to policies/pretrained.dpp.

    bench/pretrain.py data                   # each taught pair replayed -> bench/pretrain/data/ID.bin
    bench/pretrain.py train [--epochs N]     # imitation, resumable -> policies/pretrained.dpp
    bench/pretrain.py rl [--updates N]       # then policy-gradient training over the pairs (resumable)
    bench/pretrain.py relabel IN OUT [--note TEXT]   # a policy's weights under this build's feature set
    bench/pretrain.py curve CSV              # an rl run's diagnostics, a tenth of its updates a row
    bench/pretrain.py status
    bench/pretrain.py train --data D --work W --curve C --out P   # an experiment beside the shipped policy

`data` runs build/bench/bench_pretrained data on every training pair whose
teacher record exists: the decoder replays the search's best placement
unit by unit and keeps up to 1,200 of its decisions (each: one row of
features per device offered, the teacher's device, and the devices whose
rows equal it: identical GPUs in identical states). Held-out pairs are never
read here: the manifest's split decides, and `train` refuses a data file of
a held-out pair.

`train` fits the network (features -> 64 -> 64 -> score, ReLU) with
PyTorch: the loss of a decision is -log of the policy's probability of the
teacher's set of devices; every pair weighs the same. The inputs are
normalised by the training rows' mean and spread, which the file keeps.
Checkpoints (bench/pretrain/ckpt.pt, atomic) after every epoch; a run
resumes from one. The curve (loss and accuracy per epoch, on the training
pairs and on a tenth of them kept aside for validation) goes to
docs/results/pretrain_curve.csv. The policy file is dplace-policy v1
(include/dplace/pretrained.h).
"""
import argparse
import base64
import glob
import gzip
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

ROOT = corpus.ROOT
WORK = os.path.join(ROOT, "bench", "pretrain")
DATA = os.path.join(WORK, "data")
BENCH = os.environ.get("BENCH_PRETRAINED", os.path.join(ROOT, "build", "bench", "bench_pretrained"))
POLICY = os.path.join(ROOT, "policies", "pretrained.dpp")
CURVE = os.path.join(ROOT, "docs", "results", "pretrain_curve.csv")
FEATURES = 33
FEATURE_SET = 4
COST_MODEL = 2
H1 = H2 = 64  # the hidden widths (--hidden changes them)


def graph_spec(gargs):
    """bench_pretrained's GRAPH for corpus.graph_args's arguments: a graph
    file's path, or a zoo model as NAME[:BATCH]."""
    return gargs[1] if gargs[0] == "--graph" else (gargs[1] + (":" + gargs[3] if len(gargs) > 2 else ""))


def manifest():
    return {p["id"]: p for p in corpus.load_manifest(corpus.DEFAULT_DIR)["pairs"]}


def data(args):
    m = manifest()
    cache = os.path.join(corpus.DEFAULT_DIR, "cache")
    recs = sorted(glob.glob(os.path.join(corpus.DEFAULT_DIR, "pairs", "*.json")))
    folder = args.data
    os.makedirs(folder, exist_ok=True)
    done = 0
    for f in recs:
        rec = json.load(open(f))
        p = m[rec["id"]]
        if p["split"] != "train":
            continue
        out = os.path.join(folder, p["id"] + ".bin")
        if os.path.exists(out):
            continue
        gargs = corpus.graph_args(p, cache)
        gspec = graph_spec(gargs)
        dev = corpus.devices_arg(p, gargs, cache)
        placement = list(gzip.decompress(base64.b64decode(rec["placement_gz_b64"])))
        with tempfile.TemporaryDirectory() as tmp:
            pf = os.path.join(tmp, "p.json")
            with open(pf, "w") as fh:
                json.dump({"format": "dplace-placement", "version": 1, "graph": rec["summary"]["graph"],
                           "devices": rec["devices"], "placement": placement}, fh)
            tmp_out = os.path.join(tmp, "d.bin")
            cmd = [BENCH, "data", gspec, dev, pf, tmp_out, str(args.steps), "1"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print(f"pretrain: {p['id']}: {r.stderr.strip()}", file=sys.stderr)
                continue
            os.replace(tmp_out, out)
        done += 1
        print(f"pretrain: [{done}] {r.stdout.strip()}", file=sys.stderr, flush=True)


def read_data(path):
    with open(path, "rb") as f:
        b = f.read()
    if b[:8] != b"DPPTDATA":
        raise ValueError(f"{path}: not imitation data")
    nf, nd, n, _ = struct.unpack_from("<4I", b, 8)
    if nf != FEATURES:
        raise ValueError(f"{path}: {nf} features, this trainer reads {FEATURES}: run `data` again")
    rec = np.dtype([("cand", "<u8"), ("target", "<u8"), ("action", "<u4"), ("pad", "<u4"),
                    ("rows", "<f4", (nd, nf))])
    a = np.frombuffer(b, dtype=rec, count=n, offset=24)
    return nd, a


def load_all(data_dir=DATA):
    """Every training pair's decisions, padded to 9 devices: rows [N, 9, F],
    cand and target masks [N, 9], the pair of each decision."""
    m = manifest()
    rows, cand, tgt, pair = [], [], [], []
    files = sorted(glob.glob(os.path.join(data_dir, "*.bin")))
    ids = sorted(os.path.basename(f)[:-4] for f in files)
    index = {pid: i for i, pid in enumerate(ids)}
    for f in files:
        pid = os.path.basename(f)[:-4]
        i = index[pid]
        if m[pid]["split"] != "train":
            sys.exit(f"pretrain: {f} is a held-out pair's: training never reads one")
        nd, a = read_data(f)
        if len(a) == 0:
            continue
        r = np.zeros((len(a), 9, FEATURES), np.float32)
        r[:, :nd] = a["rows"]
        bits = (1 << np.arange(9, dtype=np.uint64))
        cand.append((a["cand"][:, None] & bits) != 0)
        tgt.append((a["target"][:, None] & bits) != 0)
        rows.append(r)
        pair.append(np.full(len(a), i, np.int32))
    return np.concatenate(rows), np.concatenate(cand), np.concatenate(tgt), np.concatenate(pair), ids


def write_policy(path, mean, std, sd, note):
    import torch  # noqa: F401
    parts = [mean, std, sd["l1.weight"], sd["l1.bias"], sd["l2.weight"], sd["l2.bias"], sd["l3.weight"],
             sd["l3.bias"]]
    flat = np.concatenate([np.asarray(x, np.float32).reshape(-1) for x in parts]).astype("<f4")
    body = flat.tobytes()
    h = 0xcbf29ce484222325
    for byte in body:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    hdr = b"DPPOLICY" + struct.pack("<6I", 1, FEATURE_SET, COST_MODEL, FEATURES, sd["l1.weight"].shape[0],
                                    sd["l2.weight"].shape[0])
    hdr += struct.pack("<QQ", flat.size, h) + note.encode()[:63].ljust(64, b"\0")
    _write_bytes(path, hdr + body)


def _write_bytes(path, b):
    """Writes b to path atomically."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(b)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def train(args):
    import torch
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rows, cand, tgt, pair, files = load_all(args.data)
    n_pairs = len(files)
    rng = np.random.default_rng(args.seed)
    val_pairs = set(rng.choice(n_pairs, max(1, n_pairs // 10), replace=False).tolist())
    is_val = np.array([p in val_pairs for p in pair])
    flat = rows[cand]
    mean = flat.mean(0)
    std = flat.std(0) + 1e-3
    X = torch.tensor((rows - mean) / std, dtype=torch.float32)
    C = torch.tensor(cand)
    Tg = torch.tensor(tgt & cand)
    counts = np.bincount(pair, minlength=n_pairs).astype(np.float64)
    W = torch.tensor(1.0 / counts[pair], dtype=torch.float32)  # every pair weighs the same
    tr_idx = np.nonzero(~is_val)[0]
    va_idx = np.nonzero(is_val)[0]

    net = torch.nn.Sequential()
    h = args.hidden
    net.add_module("l1", torch.nn.Linear(FEATURES, h))
    net.add_module("r1", torch.nn.ReLU())
    net.add_module("l2", torch.nn.Linear(h, h))
    net.add_module("r2", torch.nn.ReLU())
    net.add_module("l3", torch.nn.Linear(h, 1))
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    ckpt = os.path.join(args.work, "ckpt.pt")
    epoch0, curve = 0, []
    if os.path.exists(ckpt) and not args.fresh:
        s = torch.load(ckpt)
        net.load_state_dict(s["net"])
        opt.load_state_dict(s["opt"])
        epoch0, curve = s["epoch"], s["curve"]
        print(f"pretrain: resumed at epoch {epoch0}", file=sys.stderr)

    def loss_acc(idx):
        x, c, t, w = X[idx], C[idx], Tg[idx], W[idx]
        s = net(x).squeeze(-1).masked_fill(~c, -1e9)
        lse = torch.logsumexp(s, -1)
        lt = torch.logsumexp(s.masked_fill(~t, -1e9), -1)
        loss = ((lse - lt) * w).sum() / w.sum()
        acc = ((t.gather(1, s.argmax(-1, keepdim=True)).squeeze(1)).float() * w).sum() / w.sum()
        return loss, acc

    for epoch in range(epoch0, args.epochs):
        t0 = time.monotonic()
        perm = torch.tensor(rng.permutation(tr_idx))
        net.train()
        for i in range(0, len(perm), args.batch):
            loss, _ = loss_acc(perm[i:i + args.batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            tl, ta = loss_acc(torch.tensor(tr_idx))
            vl, va = loss_acc(torch.tensor(va_idx))
        curve.append((epoch + 1, float(tl), float(ta), float(vl), float(va), round(time.monotonic() - t0, 1)))
        print(f"pretrain: epoch {epoch + 1}: train loss {tl:.4f} acc {ta:.3f}  validation loss {vl:.4f} acc {va:.3f}"
              f"  ({curve[-1][-1]} s)", file=sys.stderr, flush=True)
        os.makedirs(args.work, exist_ok=True)
        tmp = ckpt + ".tmp"
        torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "epoch": epoch + 1, "curve": curve}, tmp)
        os.replace(tmp, ckpt)
    sd = {k: v.detach().numpy() for k, v in net.state_dict().items()}
    note = f"imitation of the search, {n_pairs} corpus pairs, {len(curve)} epochs"
    write_policy(args.out, mean, std, sd, note)
    lines = ["epoch,train_loss,train_acc,validation_loss,validation_acc,seconds"]
    lines += [",".join(str(x) for x in row) for row in curve]
    corpus.write_atomic(args.curve, "\n".join(lines) + "\n")
    print(f"pretrain: wrote {args.out} ({n_pairs} pairs, {len(rows)} decisions)", file=sys.stderr)


def rl_list(path, per_graph):
    """Writes the pairs `rl` trains on: up to per_graph training pairs of
    each graph of the manifest, drawn with seed 1, never a held-out one."""
    import random
    m = corpus.load_manifest(corpus.DEFAULT_DIR)
    cache = os.path.join(corpus.DEFAULT_DIR, "cache")
    by = {}
    for p in m["pairs"]:
        if p["split"] == "train":
            by.setdefault(p["graph"], []).append(p)
    rnd = random.Random(1)
    pick = []
    for g in sorted(by):
        ps = by[g][:]
        rnd.shuffle(ps)
        pick += ps[:per_graph + 1]
    rnd.shuffle(pick)
    lines, seen = [], {}
    for p in pick:
        seen[p["graph"]] = seen.get(p["graph"], 0) + 1
        if seen[p["graph"]] > per_graph:
            continue
        gargs = corpus.graph_args(p, cache)
        gspec = graph_spec(gargs)
        lines.append(f"{gspec} {corpus.devices_arg(p, gargs, cache)}\n")
    corpus.write_atomic(path, f"# up to {per_graph} training pairs per graph of the manifest\n" + "".join(lines))
    return len(lines)


def rl(args):
    """Policy-gradient training over the corpus's training pairs, from the
    shipped policy or --start's (bench_pretrained rl: one pair per update
    in turn, resumable): run it again to go on."""
    folder = os.path.join(WORK, "rl")
    os.makedirs(folder, exist_ok=True)
    lst = os.path.join(folder, "pairs.txt")
    if not os.path.exists(lst):
        print(f"pretrain: rl: {rl_list(lst, args.per_graph)} pairs", file=sys.stderr)
    cmd = [BENCH, "rl", lst, args.start, os.path.join(folder, "policy.dpp"), str(args.updates), str(args.samples),
           str(args.lr), str(args.seed), str(args.temperature), str(args.every)]
    sys.exit(subprocess.run(cmd).returncode)


def relabel(args):
    """Writes IN's weights as a policy of this build's feature set (and
    --note): for weights trained under a decoder whose features are the same
    list but were computed otherwise (the decode order), to go on training
    them under this one. The weights' checksum is left as it is."""
    def refuse(why):
        print(f"pretrain: {args.paths[0]}: {why}", file=sys.stderr)
        sys.exit(2)
    try:
        b = bytearray(open(args.paths[0], "rb").read())
    except OSError as e:
        refuse(f"cannot read it ({e.strerror})")
    if len(b) < 112 or b[:8] != b"DPPOLICY":
        refuse("not a dplace policy")
    if struct.unpack_from("<I", b, 20)[0] != FEATURES:
        refuse(f"{struct.unpack_from('<I', b, 20)[0]} features, this build {FEATURES}")
    struct.pack_into("<I", b, 12, FEATURE_SET)
    if args.note is not None:
        note = args.note.encode()[:63]
        b[48:112] = note + b"\0" * (64 - len(note))
    _write_bytes(os.path.abspath(args.paths[1]), bytes(b))


def curve(args):
    """An rl run's diagnostics from its curve (CSV: a row per update) and,
    beside it, CSV's .greedy.csv when there is one: per tenth of the
    updates the mean entropy of the decisions, the gradient norm before
    clipping, the samples' valid share and their mean step time against
    the same pair's in the run's first pass over the pairs (geometric
    mean); per greedy measurement (--greedy), every pair's greedy step
    time against update 0's. Markdown tables, to paste into docs/results."""
    import csv
    import math
    def read(path, cols, names=None):
        """The rows of path; a file without a header line (bench_pretrained
        writes the greedy file so) takes names."""
        try:
            with open(path, newline="") as f:
                head = f.readline()
                f.seek(0)
                got = list(csv.DictReader(f, fieldnames=None if head.startswith("update,") else names))
            i = -1
            for i, r in enumerate(got):
                for c in cols:
                    float(r[c])
        except OSError as e:
            print(f"pretrain: {path}: cannot read it ({e.strerror})", file=sys.stderr)
            sys.exit(2)
        except (KeyError, TypeError, ValueError):
            print(f"pretrain: {path}: row {i + 2}: not an rl curve (needs the columns {', '.join(cols)})",
                  file=sys.stderr)
            sys.exit(2)
        return got
    rows = read(args.paths[0], ["update", "mean_s", "valid_share", "entropy", "grad_norm"])
    if not rows:
        print(f"pretrain: {args.paths[0]}: no updates", file=sys.stderr)
        sys.exit(2)
    first = {}
    for r in rows:
        first.setdefault(r["pair"], float(r["mean_s"]))
    n = len(rows)
    print("| updates | entropy (nats) | gradient norm | valid share | sample mean / first pass's |")
    print("|---|---|---|---|---|")
    for t in range(10):
        part = rows[t * n // 10:(t + 1) * n // 10]
        if not part:
            continue
        ratios = [math.log(float(r["mean_s"]) / first[r["pair"]]) for r in part
                  if float(r["mean_s"]) > 0 and first[r["pair"]] > 0]
        mean = lambda k: sum(float(r[k]) for r in part) / len(part)  # noqa: E731
        geo = f"{math.exp(sum(ratios) / len(ratios)):.3f}" if ratios else "-"
        print(f"| {part[0]['update']}-{part[-1]['update']} | {mean('entropy'):.4f} | {mean('grad_norm'):.1f} "
              f"| {mean('valid_share'):.3f} | {geo} |")
    greedy = args.greedy or (args.paths[0][:-4] + ".greedy.csv" if args.paths[0].endswith(".csv") else None)
    if greedy and os.path.exists(greedy):
        by = {}
        for r in read(greedy, ["update", "greedy_s"], ["update", "pair", "greedy_s"]):
            by.setdefault(int(r["update"]), {})[r["pair"]] = float(r["greedy_s"])
        base = by.get(0, {})
        print()
        print("| update | greedy / update 0's, geometric mean | faster | slower | not valid |")
        print("|---|---|---|---|---|")
        for u in sorted(by):
            ok = [(by[u][p], base[p]) for p in by[u] if p in base and 0 < by[u][p] < math.inf and 0 < base[p] < math.inf]
            geo = math.exp(sum(math.log(a / b) for a, b in ok) / len(ok)) if ok else float("nan")
            bad = sum(1 for v in by[u].values() if not 0 < v < math.inf)
            print(f"| {u} | {geo:.3f} | {sum(a < b * 0.999 for a, b in ok)} | {sum(a > b * 1.001 for a, b in ok)} "
                  f"| {bad} |")


def status(args):
    m = manifest()
    files = glob.glob(os.path.join(DATA, "*.bin"))
    print(f"data: {len(files)} pairs of {sum(1 for p in m.values() if p['split'] == 'train')} training pairs")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["data", "train", "rl", "relabel", "curve", "status"])
    ap.add_argument("paths", nargs="*", help="relabel: IN OUT; curve: CSV")
    ap.add_argument("--note", default=None, help="relabel: what the policy was trained on (63 bytes)")
    ap.add_argument("--greedy", default=None, help="curve: the greedy measurements (default: CSV's .greedy.csv)")
    ap.add_argument("--start", default=POLICY, help="rl: the policy it starts from")
    ap.add_argument("--steps", type=int, default=1200, help="decisions kept per pair (data)")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--hidden", type=int, default=H1, help="the two hidden layers' width")
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--lr", type=float, default=None, help="train: 1e-3 (Adam); rl: 1e-4")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--fresh", action="store_true", help="ignore a checkpoint")
    ap.add_argument("--updates", type=int, default=2000, help="rl: updates in all (a rerun goes on to this)")
    ap.add_argument("--samples", type=int, default=8, help="rl: placements per update")
    ap.add_argument("--temperature", type=float, default=0.5, help="rl: the samples' temperature")
    ap.add_argument("--every", type=int, default=200, help="rl: save and measure the greedy placements every N")
    ap.add_argument("--per-graph", type=int, default=2, help="rl: training pairs per graph")
    ap.add_argument("--data", default=DATA, help="the folder of the imitation data")
    ap.add_argument("--work", default=WORK, help="the folder of the checkpoint")
    ap.add_argument("--curve", default=CURVE, help="where the training curve goes")
    ap.add_argument("--out", default=POLICY)
    args = ap.parse_args()
    if args.lr is None:
        args.lr = 1e-4 if args.command == "rl" else 1e-3
    if args.command == "relabel" and len(args.paths) != 2:
        ap.error("relabel takes IN and OUT")
    if args.command == "curve" and len(args.paths) != 1:
        ap.error("curve takes one CSV")
    {"data": data, "train": train, "rl": rl, "relabel": relabel, "curve": curve, "status": status}[args.command](args)


if __name__ == "__main__":
    main()
