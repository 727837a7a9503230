#!/usr/bin/python3
"""Random search through Simulator.simulate_many: batches of random placements (each TensorFlow colocation
unit on a device it may use, GPUs only by default), simulated on native threads, the best kept; then the same
number of placements spent mutating the best (a few units moved each), beside every baseline placer.

    PYTHONPATH=build/python /usr/bin/python3 examples/random_search.py --model nmt2 --devices k40x2
"""
import argparse
import sys
import time

import numpy as np

import dplace


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="nmt2", help="a zoo model or a dplace-graph file")
    ap.add_argument("--devices", default="k40x2", help="a device preset or a dplace-devices file")
    ap.add_argument("--placements", type=int, default=2000, help="placements in each phase")
    ap.add_argument("--batch", type=int, default=200, help="placements per simulate_many call")
    ap.add_argument("--threads", type=int, default=2, help="simulation threads")
    ap.add_argument("--with-cpu", action="store_true", help="let units go to the CPU too")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    try:
        g, d = dplace.as_graph(args.model), dplace.as_devices(args.devices)
    except (dplace.Error, TypeError) as e:
        print(f"random_search: {e}", file=sys.stderr)
        return 2
    sim = dplace.Simulator(g, d)
    rng = np.random.default_rng(args.seed)
    unit_of, n_units = dplace.units(g)
    pool = None if args.with_cpu else (d.gpus() or None)
    masks = dplace.unit_masks(g, d, unit_of, n_units, pool=pool)
    choices = [np.flatnonzero(m) for m in masks]
    counts = np.array([len(c) for c in choices])
    table = np.zeros((n_units, counts.max()), dtype=np.int32)
    for k, c in enumerate(choices):
        table[k, :len(c)] = c

    def random_units(k):
        pick = (rng.random((k, n_units)) * counts).astype(np.int64)
        return table[np.arange(n_units), pick]

    best_s, best_units, t0, n = np.inf, None, time.monotonic(), 0
    for phase in ("random", "mutate"):
        done = 0
        while done < args.placements:
            k = min(args.batch, args.placements - done)
            if phase == "random" or best_units is None:
                units = random_units(k)
            else:  # the best with 1 to 8 units moved
                units = np.repeat(best_units[None, :], k, axis=0)
                fresh = random_units(k)
                for i in range(k):
                    moved = rng.choice(n_units, size=rng.integers(1, 9), replace=False)
                    units[i, moved] = fresh[i, moved]
            batch = sim.simulate_many(units[:, unit_of], threads=args.threads)
            t = np.where(batch.valid, batch.step_time, np.inf)
            i = int(np.argmin(t))
            if t[i] < best_s:
                best_s, best_units = float(t[i]), units[i].copy()
            done += k
            n += k
        print(f"{phase:7s} {done} placements: best {best_s:.6f} s  ({n / (time.monotonic() - t0):.0f} "
              f"placements/s on {args.threads} threads)", flush=True)
    b = dplace.baselines(g, d)
    print(b.table())
    if b.best:
        print(f"random search {best_s:.6f} s = {best_s / b.best_s:.3f} x the best baseline ({b.best}, "
              f"{b.best_s:.6f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
