#!/usr/bin/python3
"""heldout: the pretrained placer against the search and the baselines on
graph and machine pairs that training never saw.

    bench/heldout.py run --arm search          # 4 thread-minutes of the search per pair
    bench/heldout.py run --arm search-2m       # the search's two-minute result on 2 threads
    bench/heldout.py run --arm zero-shot       # --agent pretrained --updates 0
    bench/heldout.py job --seeds 1,2,3         # README's job against the search alone, same time
    bench/heldout.py tune                      # fine-tuning: the trained policy against the untrained control
    bench/heldout.py transfer                  # --init from another zoo model's checkpoint against scratch
    bench/heldout.py mars                      # Mars from an encoder pre-trained on nmt2 against the HP
    bench/heldout.py table                     # the tables of docs/results/pretrained.md, markdown

Every pair is a held-out pair of bench/corpus/manifest.json (its graph family
or its machine family is held out); the list below spans a held-out zoo graph
(GNMT), a held-out PyTorch export (the Transformer encoder), the held-out
machines (L4, RTX 4090) and memory-tight machines where one GPU is out of
memory. Each run's --json summary is kept in bench/heldout/ARM/ID.json,
written atomically; a pair whose file exists is done (resumable).
"""
import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

ROOT = corpus.ROOT
OUT = os.path.join(ROOT, "bench", "heldout")
PAIRS = [
    "gnmt4_b128@p100x4",
    "gnmt4_b128@l4x4-tight",
    "transformer_encoder_b8@a100-sxmx4-tight",
    "transformer_encoder_b4@rtx4090x2",
    "nmt4_b64@l4x4",
    "resnet50_b64@rtx4090x4",
    "inception_v3_b8@l4x4-tight",
    "bert_base_b24@rtx4090x2-tight",
]

ARMS = {
    # the teacher's budget on a pair it never taught: 4 minutes on one thread
    "search": ["--agent", "search", "--time", "4m", "--threads", "1"],
    # the target's reference as it words it: the search's two-minute result, on both threads
    "search-2m": ["--agent", "search", "--time", "2m", "--threads", "2"],
    "zero-shot": ["--agent", "pretrained", "--updates", "0", "--baselines", "none", "--threads", "2"],
}


def run_pair(p, arm, seed):
    cache = os.path.join(corpus.DEFAULT_DIR, "cache")
    gargs = corpus.graph_args(p, cache)
    dev = corpus.devices_arg(p, gargs, cache)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "best.json")
        t0 = time.monotonic()
        summary = json.loads(corpus.run_cmd([corpus.DPLACE, "optimize", *gargs, "--devices", dev, *ARMS[arm],
                                             "--seed", str(seed), "--json", "--quiet", "-o", out], 3600))
        wall = time.monotonic() - t0
    rec = {"id": p["id"], "arm": arm, "seed": seed, "wall_s": round(wall, 2), "summary": summary}
    corpus.write_atomic(os.path.join(OUT, arm, p["id"] + ".json"), json.dumps(rec) + "\n")
    return rec


def run(args):
    m = corpus.load_manifest(corpus.DEFAULT_DIR)
    byid = {p["id"]: p for p in m["pairs"]}
    for pid in PAIRS:
        p = byid[pid]
        if p["split"] != "held-out":
            sys.exit(f"heldout: {pid} is not a held-out pair of the manifest")
        if os.path.exists(os.path.join(OUT, args.arm, pid + ".json")):
            continue
        rec = run_pair(p, args.arm, args.seed)
        best = rec["summary"]["best_step_time_s"]
        print(f"heldout: {args.arm} {pid}: {'none valid' if best is None else f'{best:.4f} s'} in {rec['wall_s']} s",
              file=sys.stderr, flush=True)


# README's job (the trained policy, a short fine-tune, the search from its
# best) against the search alone in the same wall time, 2 threads each, one
# run after the other: nmt4 on k40x4 (README's pair) and three held-out pairs.
JOB_PAIRS = ["nmt4_b64@k40x4", "gnmt4_b128@p100x4", "inception_v3_b8@l4x4-tight", "bert_base_b24@rtx4090x2-tight"]
JOB_ARMS = {
    "job": ["--agent", "pretrained", "--time", "2m", "--search-after", "105s", "--threads", "2"],
    "search-alone": ["--agent", "search", "--time", "2m", "--threads", "2"],
}


def job(args):
    m = corpus.load_manifest(corpus.DEFAULT_DIR)
    byid = {p["id"]: p for p in m["pairs"]}
    cache = os.path.join(corpus.DEFAULT_DIR, "cache")
    for seed in [int(x) for x in args.seeds.split(",")]:
        for pid in JOB_PAIRS:
            p = byid[pid]
            for arm, flags in JOB_ARMS.items():
                out = os.path.join(OUT, "job", f"{pid}_{arm}_s{seed}.json")
                if os.path.exists(out):
                    continue
                gargs = corpus.graph_args(p, cache)
                dev = corpus.devices_arg(p, gargs, cache)
                t0 = time.monotonic()
                summary = json.loads(corpus.run_cmd([corpus.DPLACE, "optimize", *gargs, "--devices", dev, *flags,
                                                     "--seed", str(seed), "--json", "--quiet"], 3600))
                rec = {"id": pid, "arm": arm, "seed": seed, "wall_s": round(time.monotonic() - t0, 2),
                       "summary": summary}
                corpus.write_atomic(out, json.dumps(rec) + "\n")
                print(f"heldout: job {pid} {arm} seed {seed}: {summary['best_step_time_s']:.4f} s",
                      file=sys.stderr, flush=True)


# Fine-tuning on a held-out pair: the untrained control (the same network,
# fresh weights: bench_pretrained random) for 4 minutes against the trained
# policy for 1 minute, one thread each; the time the trained run takes to
# reach the control's 4-minute best.
TUNE_PAIRS = ["gnmt4_b128@p100x4", "nmt4_b64@l4x4", "bert_base_b24@rtx4090x2-tight"]
BENCH = os.environ.get("BENCH_PRETRAINED", os.path.join(ROOT, "build", "bench", "bench_pretrained"))


def first_reach(rec, log, target):
    """Seconds of training after which the run's best was at or under
    target: its zero-shot preparation when that already reached it (the
    log has no rows for it), else the first fine-tuning row's."""
    s = rec["summary"]
    zb = s.get("zero_shot_best_s")
    if s["updates"] == 0 or (zb is not None and zb <= target):
        return s.get("zero_shot_s")
    with open(log) as f:
        head = f.readline().strip().split(",")
        ib, ie = head.index("best_s"), head.index("wall_s")
        for line in f:
            x = line.strip().split(",")
            if float(x[ib]) <= target:
                return float(x[ie])
    return None


def tune(args):
    m = corpus.load_manifest(corpus.DEFAULT_DIR)
    byid = {p["id"]: p for p in m["pairs"]}
    cache = os.path.join(corpus.DEFAULT_DIR, "cache")
    os.makedirs(os.path.join(OUT, "tune"), exist_ok=True)
    control = os.path.join(OUT, "tune", "control.dpp")
    if not os.path.exists(control):
        corpus.run_cmd([BENCH, "random", control, "1"], 60)
    for pid in TUNE_PAIRS:
        p = byid[pid]
        gargs = corpus.graph_args(p, cache)
        dev = corpus.devices_arg(p, gargs, cache)
        for arm, flags in (("control", ["--init", control, "--time", "4m"]), ("trained", ["--time", "60s"])):
            out = os.path.join(OUT, "tune", f"{pid}_{arm}.json")
            if os.path.exists(out):
                continue
            log = os.path.join(OUT, "tune", f"{pid}_{arm}.csv")
            summary = json.loads(corpus.run_cmd([corpus.DPLACE, "optimize", *gargs, "--devices", dev, "--agent",
                                                 "pretrained", *flags, "--threads", "1", "--seed", "1",
                                                 "--baselines", "none", "--json", "--quiet", "--log", log], 3600))
            rec = {"id": pid, "arm": arm, "summary": summary}
            corpus.write_atomic(out, json.dumps(rec) + "\n")
            print(f"heldout: tune {pid} {arm}: {summary['best_step_time_s']} s", file=sys.stderr, flush=True)


# The older transfer, `--init` from another run's checkpoint: Post's policy
# (the dplace preset's learned agent; op types by a fixed list, so its
# networks fit any graph) trained on nmt2 k40x4, then on other zoo graphs of
# the same device count from it and from scratch, the same updates and
# seed, one thread each; when the run from it reaches the scratch run's
# best.
XFER_SOURCE = (["--model", "nmt2", "--devices", "k40x4"], 300)
XFER_TARGETS = [("nmt4@k40x4", ["--model", "nmt4", "--devices", "k40x4"]),
                ("gnmt4@p100x4", ["--model", "gnmt4", "--devices", "p100x4"])]
XFER_UPDATES = 150


def transfer(args):
    folder = os.path.join(OUT, "transfer")
    os.makedirs(folder, exist_ok=True)
    ck = os.path.join(folder, "nmt2_post.ck")
    common = ["--agent", "post", "--set", "type-ids=fixed", "--threads", "1", "--seed", "1", "--baselines", "none",
              "--json", "--quiet"]
    if not os.path.exists(ck):
        gargs, n = XFER_SOURCE
        tmp = ck + ".part"
        corpus.run_cmd([corpus.DPLACE, "optimize", *gargs, *common, "--updates", str(n), "--checkpoint", tmp], 7200)
        os.replace(tmp, ck)
    for name, gargs in XFER_TARGETS:
        for arm, flags in (("scratch", []), ("init", ["--init", ck])):
            out = os.path.join(folder, f"{name}_{arm}.json")
            if os.path.exists(out):
                continue
            log = os.path.join(folder, f"{name}_{arm}.csv")
            summary = json.loads(corpus.run_cmd([corpus.DPLACE, "optimize", *gargs, *common, *flags, "--updates",
                                                 str(XFER_UPDATES), "--log", log], 7200))
            corpus.write_atomic(out, json.dumps({"id": name, "arm": arm, "summary": summary}) + "\n")
            print(f"heldout: transfer {name} {arm}: {summary['best_step_time_s']:.4f} s", file=sys.stderr, flush=True)


# Mars with an encoder pre-trained on another graph: Deep Graph Infomax and
# a few policy updates on nmt2 p100x4 (op types by a fixed list, so the
# networks fit any graph), then 4 minutes on gnmt4 and bert_base from that
# checkpoint (the pre-training skipped) against the Hierarchical Planner's 4
# minutes, one thread each, one run after the other. At the paper's sizes
# the source run alone takes over an hour of one core
# (docs/design/mars-in-a-fixed-budget.md).
MARS_SOURCE = ["--model", "nmt2", "--devices", "p100x4", "--updates", "20"]
MARS_TARGETS = [("gnmt4@p100x4", ["--model", "gnmt4", "--devices", "p100x4"]),
                ("bert_base@p100x4", ["--model", "bert_base", "--devices", "p100x4"])]


def mars(args):
    folder = os.path.join(OUT, "mars")
    os.makedirs(folder, exist_ok=True)
    ck = os.path.join(folder, "nmt2_mars.ck")
    fixed = ["--set", "type-ids=fixed"]
    common = ["--threads", "1", "--seed", "1", "--json", "--quiet"]
    if not os.path.exists(ck):
        tmp = ck + ".part"
        corpus.run_cmd([corpus.DPLACE, "optimize", *MARS_SOURCE, "--agent", "mars", *fixed, *common,
                        "--baselines", "none", "--checkpoint", tmp], 7200)
        os.replace(tmp, ck)
    for name, gargs in MARS_TARGETS:
        for arm, flags in (("mars", ["--agent", "mars", *fixed, "--init", ck]), ("hp", ["--agent", "hp"])):
            out = os.path.join(folder, f"{name}_{arm}.json")
            if os.path.exists(out):
                continue
            summary = json.loads(corpus.run_cmd([corpus.DPLACE, "optimize", *gargs, *flags, *common, "--time", "4m"],
                                                7200))
            corpus.write_atomic(out, json.dumps({"id": name, "arm": arm, "summary": summary}) + "\n")
            print(f"heldout: mars {name} {arm}: {summary['best_step_time_s']} s", file=sys.stderr, flush=True)


def load(arm, name):
    path = os.path.join(OUT, arm, name + ".json")
    return json.load(open(path)) if os.path.exists(path) else None


def fmt(x, digits=4):
    return "none valid" if x is None else f"{x:.{digits}f}"


def table(args):
    print("| pair | zero-shot | wall | best baseline | zero-shot / baseline | search, 4 thread-minutes | "
          "zero-shot / search | search, 2 minutes on 2 threads | zero-shot / it |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios_b, ratios_s, ratios_2, wins = [], [], [], 0
    for pid in PAIRS:
        z, s, s2 = load("zero-shot", pid), load("search", pid), load("search-2m", pid)
        if not z or not s:
            continue
        zb, ss = z["summary"]["best_step_time_s"], s["summary"]
        bb, sb = ss["best_baseline_s"], ss["best_step_time_s"]
        rb = zb / bb if zb else float("inf")
        rs = zb / sb if zb else float("inf")
        ratios_b.append(rb), ratios_s.append(rs)
        wins += rb <= 1
        two = "| |"
        if s2:
            s2b = s2["summary"]["best_step_time_s"]
            ratios_2.append(zb / s2b if zb else float("inf"))
            two = f"| {fmt(s2b)} | {ratios_2[-1]:.3f} |"
        print(f"| {pid} | {fmt(zb)} | {z['wall_s']:.1f} s | {fmt(bb)} ({ss['best_baseline']}) | {rb:.3f} | "
              f"{fmt(sb)} | {rs:.3f} {two}")
    if ratios_b:
        med = lambda r: (sorted(r)[(len(r) - 1) // 2] + sorted(r)[len(r) // 2]) / 2  # noqa: E731
        line = (f"\nAt or under the best baseline on {wins} of {len(ratios_b)}; median ratio to it "
                f"{med(ratios_b):.3f}, to the search {med(ratios_s):.3f}")
        if len(ratios_2) == len(ratios_s):
            line += f" (to its two-minute result {med(ratios_2):.3f})"
        print(line + ".\n")
    print("| pair | seed | README's job | the search alone | job / search |")
    print("|---|---|---|---|---|")
    for pid in JOB_PAIRS:
        js, ss = [], []
        for seed in (1, 2, 3):
            a, b = load("job", f"{pid}_job_s{seed}"), load("job", f"{pid}_search-alone_s{seed}")
            if not a or not b:
                continue
            x, y = a["summary"]["best_step_time_s"], b["summary"]["best_step_time_s"]
            js.append(x), ss.append(y)
            print(f"| {pid} | {seed} | {fmt(x)} | {fmt(y)} | {x / y:.3f} |")
        if js:
            mj, ms = sum(js) / len(js), sum(ss) / len(ss)
            print(f"| {pid} | mean | {mj:.4f} | {ms:.4f} | {mj / ms:.3f} |")
    print("\n| pair | control, 4 min | trained, zero-shot | trained reaches the control's best after |")
    print("|---|---|---|---|")
    for pid in TUNE_PAIRS:
        c, t = load("tune", f"{pid}_control"), load("tune", f"{pid}_trained")
        if not c or not t:
            continue
        target = c["summary"]["best_step_time_s"]
        reach = first_reach(t, os.path.join(OUT, "tune", f"{pid}_trained.csv"), target)
        print(f"| {pid} | {fmt(target)} | {fmt(t['summary'].get('zero_shot_best_s'))} | "
              f"{'not within 60 s' if reach is None else f'{reach:.1f} s'} |")
    print("\n| target | Mars from nmt2's checkpoint, 4 min | the Hierarchical Planner, 4 min | Mars / HP |")
    print("|---|---|---|---|")
    for name, _ in MARS_TARGETS:
        a, b = load("mars", f"{name}_mars"), load("mars", f"{name}_hp")
        if not a or not b:
            continue
        x, y = a["summary"]["best_step_time_s"], b["summary"]["best_step_time_s"]
        print(f"| {name} | {fmt(x)} | {fmt(y)} | {'-' if x is None or y is None else f'{x / y:.3f}'} |")
    print(f"\n| target | scratch, {XFER_UPDATES} updates | from nmt2's checkpoint | first update of each at or "
          "under the scratch run's best | wall time there |")
    print("|---|---|---|---|---|")
    for name, _ in XFER_TARGETS:
        a, b = load("transfer", f"{name}_scratch"), load("transfer", f"{name}_init")
        if not a or not b:
            continue
        target = a["summary"]["best_step_time_s"]
        ra, rb = reach_update(name, "scratch", target), reach_update(name, "init", target)
        cell = lambda r: "not reached" if r is None else f"{r[0]}"  # noqa: E731
        wall = lambda r: "-" if r is None else f"{r[1]:.0f} s"  # noqa: E731
        print(f"| {name} | {fmt(target)} | {fmt(b['summary']['best_step_time_s'])} | {cell(ra)} / {cell(rb)} | "
              f"{wall(ra)} / {wall(rb)} |")


def reach_update(name, arm, target):
    """(update, wall seconds) of the first row of a transfer run's update
    log whose best is at or under target, or None."""
    with open(os.path.join(OUT, "transfer", f"{name}_{arm}.updates.csv")) as f:
        head = f.readline().strip().split(",")
        iu, ib, ie = head.index("update"), head.index("best_s"), head.index("wall_s")
        for line in f:
            x = line.strip().split(",")
            if float(x[ib]) <= target * (1 + 1e-8):  # the log rounds to 9 digits
                return int(x[iu]), float(x[ie])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["run", "job", "tune", "transfer", "mars", "table"])
    ap.add_argument("--arm", choices=sorted(ARMS), help="run: which arm")
    ap.add_argument("--seeds", default="1,2,3", help="job: the seeds")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.command == "run" and not args.arm:
        ap.error("run needs --arm")
    {"run": run, "job": job, "tune": tune, "transfer": transfer, "mars": mars, "table": table}[args.command](args)


if __name__ == "__main__":
    main()
