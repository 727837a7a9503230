#!/usr/bin/python3
"""The Python binding's overhead: the same simulations timed through the dplace module and through the C
library (bench_python_c, a C program serving the bench over a pipe), alternating every few calls, so that the
machine's drift (a shared VM's speed varies by tens of percent within seconds) touches both alike.

Part 1: one simulate() call from Python against one dp_sim_run_ws call in C, on the given model's one-GPU,
expert and random placements (int32 arrays; random: each colocation unit on a device it may use): in each
round the median of REPS calls of each, C and Python in turn (which goes first alternates); the table gives the
medians over the rounds and the median of the rounds' Python/C ratios.
Part 1 also gives, in the same Python process, the library's own loop: simulate_many on one thread over REPS
copies of the placement, its seconds per placement, against the simulate() calls of the same round (the
process, its memory and its workspace the same; only the call differs).
Part 2: simulate_many's placements per second on 1 and 2 threads (K random placements per pass) against the
C library's own threads over the same placements, in turn; the 2-thread/1-thread ratio of each per round, and
the median over the rounds of Python's ratio over C's.

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_python.py [--model nmt4 --devices k40x4 --rounds 30]

Prints markdown tables (docs/results/bench_python.md) and the load average before and after.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import dplace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


class CBench:
    """bench_python_c as a server: one command a line, one answer a line."""

    def __init__(self, exe, model, devices, path):
        self.p = subprocess.Popen([exe, model, devices, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)

    def ask(self, *words):
        self.p.stdin.write(" ".join(str(w) for w in words) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            sys.exit(f"bench_python: bench_python_c stopped (exit {self.p.wait()})")
        return line.split()

    def close(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.close()
        self.p.wait()


def py_single(sim, p, reps):
    """The median seconds of one simulate(p) call over reps calls, and the step time."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = sim.simulate(p)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), r.step_time


def py_many(sim, P, threads, reps):
    """The median seconds of one simulate_many pass over reps passes (after one to warm up)."""
    sim.simulate_many(P, threads=threads)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        sim.simulate_many(P, threads=threads)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="nmt4")
    ap.add_argument("--devices", default="k40x4")
    ap.add_argument("--rounds", type=int, default=40, help="rounds of C and Python in turn")
    ap.add_argument("--reps", type=int, default=6, help="calls per placement per round and side (part 1)")
    ap.add_argument("--many", type=int, default=32, help="placements per simulate_many pass (part 2)")
    ap.add_argument("--many-reps", type=int, default=2, help="passes per thread count per round and side")
    ap.add_argument("--c-bench", default=os.path.join(ROOT, "build", "bench", "bench_python_c"))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if not os.path.exists(args.c_bench):
        sys.exit(f"bench_python: no {args.c_bench} (build the project; --c-bench PATH)")
    load0 = loadavg()
    g, d = dplace.Graph.from_zoo(args.model), dplace.Devices.preset(args.devices)
    sim = dplace.Simulator(g, d)
    rng = np.random.default_rng(args.seed)
    unit_of, n_units = dplace.units(g)
    masks = dplace.unit_masks(g, d, unit_of, n_units)

    def random_placement():
        pick = np.array([rng.choice(np.flatnonzero(m)) for m in masks], dtype=np.int32)
        return pick[unit_of]

    singles = {"one GPU": sim.placement("gpu"), "expert": g.expert_placement(d), "random": random_placement()}
    P = np.stack([random_placement() for _ in range(args.many)]).astype(np.int32)
    tmp = tempfile.mkdtemp(prefix="bench_python.")
    single_bin, many_bin = os.path.join(tmp, "single.bin"), os.path.join(tmp, "many.bin")
    np.stack(list(singles.values())).astype(np.int32).tofile(single_bin)
    P.tofile(many_bin)
    c_single = CBench(args.c_bench, args.model, args.devices, single_bin)
    c_many = CBench(args.c_bench, args.model, args.devices, many_bin)

    calls = {(w, k): [] for w in ("c", "py", "loop") for k in singles}
    rate = {(w, t): [] for w in ("c", "py") for t in (1, 2)}
    for rnd in range(args.rounds):
        order = ("c", "py") if rnd % 2 == 0 else ("py", "c")
        for i, (name, p) in enumerate(singles.items()):
            for who in order:
                if who == "c":
                    row = c_single.ask("single", i, args.reps)
                    calls[("c", name)].append(float(row[2]))
                    if float(row[3]) != sim.simulate(p).step_time:
                        sys.exit(f"bench_python: {name}: C's step time {row[3]} differs from Python's")
                else:
                    calls[("py", name)].append(py_single(sim, p, args.reps)[0])
                    copies = np.stack([p] * args.reps)
                    t0 = time.perf_counter()
                    sim.simulate_many(copies, threads=1)
                    calls[("loop", name)].append((time.perf_counter() - t0) / args.reps)
        for t in (1, 2):
            for who in order:
                if who == "c":
                    rate[("c", t)].append(args.many / float(c_many.ask("many", t, args.many_reps)[2]))
                else:
                    rate[("py", t)].append(args.many / py_many(sim, P, t, args.many_reps))
        if (rnd + 1) % 5 == 0:
            print(f"round {rnd + 1}/{args.rounds} (load {loadavg()})", file=sys.stderr, flush=True)
    c_single.close()
    c_many.close()
    med = statistics.median
    print(f"{g.name} ({len(g)} ops) on {d.name}; {args.rounds} rounds, C and Python in turn; load average "
          f"before {load0}, after {loadavg()}\n")
    print("| placement | step time (s) | C program call (ms) | Python call (ms) | Python / C program | "
          "library loop in the process (ms) | Python / loop |")
    print("|---|---|---|---|---|---|---|")
    for name, p in singles.items():
        c, py, loop = calls[("c", name)], calls[("py", name)], calls[("loop", name)]
        ratio = med([b / a for a, b in zip(c, py)])
        in_proc = med([b / a for a, b in zip(loop, py)])
        print(f"| {name} | {sim.simulate(p).step_time:.6f} | {med(c) * 1e3:.3f} | {med(py) * 1e3:.3f} | "
              f"{ratio:.3f} | {med(loop) * 1e3:.3f} | {in_proc:.3f} |")
    print("\n(times: medians over the rounds; ratios: medians of the rounds' ratios)")
    print(f"\n| simulate_many, {args.many} random placements | 1 thread (placements/s) | 2 threads (placements/s) | "
          f"2 / 1 (median of rounds) |")
    print("|---|---|---|---|")
    per_round = {}
    for who, label in (("c", "C library (bench_python_c)"), ("py", "Python (Simulator.simulate_many)")):
        r1, r2 = rate[(who, 1)], rate[(who, 2)]
        per_round[who] = [b / a for a, b in zip(r1, r2)]
        print(f"| {label} | {med(r1):.1f} | {med(r2):.1f} | {med(per_round[who]):.3f} |")
    q = med([p / c for p, c in zip(per_round["py"], per_round["c"])])
    print(f"\nPython's 2/1 ratio over C's (median of rounds): {q:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
