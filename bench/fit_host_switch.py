#!/usr/bin/python3
"""Fits the host's switch cost (a device's "switch_s", docs/devices.md) to
kept real-GPU measurements and judges it on others: for each value tried,
every row of every folder is simulated under the eager executor with the
devices file's first CPU given that switch_s, and the value that minimises
the mean absolute percentage error over the --fit folders' rows is found by
golden-section search. Prints, for no switch cost and for the fitted one,
the error and Spearman's rho of each folder. Nothing is measured; no torch
is needed.

A folder is either a real-GPU check's (bench/gpu_check.py: manifest.json,
measured.csv with every round; a placement's time is the median of its ok
rounds) or a kept set of medians (bench/reanalyze_measured.py's format).

usage: bench/fit_host_switch.py --devices FILE --fit FOLDER [--fit FOLDER]... [--judge FOLDER]...
                                [--hi SECONDS] [--dplace PATH] [--json]

  e.g. bench/fit_host_switch.py --devices bench/devices/h200_vm16.json \\
         --fit bench/measured/h200-2026-12-04 --judge bench/measured/h200-8f480c0

Exit status 0; 2 for bad input (one line naming the file and the item); 1
when `dplace simulate` fails."""
import argparse
import json
import math
import os
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_check  # noqa: E402
import measure_vs_sim as mvs  # noqa: E402
import reanalyze_measured as rm  # noqa: E402
from gpu_check import Bad, Failed  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PROG = "fit_host_switch"
GOLD = (math.sqrt(5) - 1) / 2


def read_folder(folder):
    """[(graph path, placement path, measured seconds)] of a kept folder."""
    manifest_path = os.path.join(folder, "manifest.json")
    if os.path.isfile(manifest_path):
        manifest = gpu_check.read_json(manifest_path, "dplace-gpu-check")
        times, _ = gpu_check.read_measured(os.path.join(folder, "measured.csv"), manifest)
        graphs = {e["name"]: e["graph"] for e in manifest["models"]}
        return [(os.path.join(folder, graphs[m]), os.path.join(folder, pf), statistics.median(v))
                for (m, pf), v in sorted(times.items())]
    return [(os.path.join(folder, r["model"], "graph.json"), os.path.join(folder, r["file"]), r["measured_s"])
            for r in rm.read_rows(folder)]


def devices_with(devices, switch_s, path):
    """Writes the devices file with its first CPU's switch_s set."""
    doc = dict(devices)
    doc["devices"] = [dict(d) for d in devices["devices"]]
    cpu = next((d for d in doc["devices"] if d.get("kind") == "cpu"), None)
    cpu["switch_s"] = switch_s
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)


class Judge:
    """Simulates every folder's rows for a switch cost, caching by value."""

    def __init__(self, dplace, devices, folders, tmp):
        self.dplace, self.devices, self.folders, self.tmp = dplace, devices, folders, tmp
        self.cache = {}

    def errors(self, switch_s):
        if switch_s in self.cache:
            return self.cache[switch_s]
        path = os.path.join(self.tmp, f"devices_{len(self.cache)}.json")
        devices_with(self.devices, switch_s, path)
        out = {}
        for name, rows in self.folders.items():
            def one(row):
                step = gpu_check.simulate(self.dplace, row[0], path, row[1], "torch")[0]
                if step is None:
                    raise Failed(f"{row[1]}: not a valid placement under {path}")
                return row[2], step
            with ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1))) as ex:
                out[name] = list(ex.map(one, rows))
        self.cache[switch_s] = out
        return out

    def fit_mape(self, switch_s, fit):
        e = self.errors(switch_s)
        pairs = [p for name in fit for p in e[name]]
        return gpu_check.mape(pairs)


def golden(f, lo, hi, tol):
    """The argument of f's minimum in [lo, hi] (f unimodal there), to tol."""
    a, b = lo, hi
    c, d = b - GOLD * (b - a), a + GOLD * (b - a)
    fc, fd = f(c), f(d)
    while b - a > tol:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - GOLD * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + GOLD * (b - a)
            fd = f(d)
    return (a + b) / 2


def main(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", required=True, help="a dplace-devices file (its first CPU is the host)")
    ap.add_argument("--fit", action="append", required=True, help="a kept folder to fit on (repeatable)")
    ap.add_argument("--judge", action="append", default=[], help="a kept folder to judge on (repeatable)")
    ap.add_argument("--hi", type=float, default=0.005, help="the largest switch cost tried, seconds (0.005)")
    ap.add_argument("--tol", type=float, default=1e-5, help="the search's tolerance, seconds (1e-5)")
    ap.add_argument("--dplace", default=os.environ.get("DPLACE_BIN", os.path.join(ROOT, "build", "dplace")))
    ap.add_argument("--json", action="store_true", help="print a JSON object instead of the table")
    a = ap.parse_args(argv)
    if not (0 < a.hi <= 1) or not (0 < a.tol < a.hi):
        raise Bad(f"--hi must be in (0, 1] seconds and --tol in (0, --hi) (got {a.hi:g} and {a.tol:g})")
    devices = gpu_check.read_json(a.devices, "dplace-devices")
    if not any(isinstance(d, dict) and d.get("kind") == "cpu" for d in devices.get("devices", [])):
        raise Bad(f"{a.devices}: no CPU device, so no host to give a switch cost")
    names = list(dict.fromkeys(a.fit + a.judge))
    folders = {n: read_folder(n) for n in names}
    with tempfile.TemporaryDirectory(prefix=PROG) as tmp:
        j = Judge(a.dplace, devices, folders, tmp)
        best = golden(lambda v: j.fit_mape(v, a.fit), 0.0, a.hi, a.tol)
        report = {"devices": a.devices, "fit": a.fit, "judge": a.judge, "switch_s": best, "folders": []}
        for name in names:
            for v in (0.0, best):
                pairs = j.errors(v)[name]
                report["folders"].append({"folder": name, "role": "fit" if name in a.fit else "judge",
                                          "switch_s": v, "rows": len(pairs), "mape_pct": gpu_check.mape(pairs),
                                          "spearman": mvs.spearman([m for m, _ in pairs], [s for _, s in pairs])})
    if a.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"fitted switch_s: {best * 1e3:.3f} ms (devices {a.devices}; eager executor)\n")
    print("| folder | role | rows | switch_s ms | MAPE % | Spearman |\n|---|---|---:|---:|---:|---:|")
    for r in report["folders"]:
        print(f"| {os.path.relpath(r['folder'])} | {r['role']} | {r['rows']} | {r['switch_s'] * 1e3:.3f} | "
              f"{r['mape_pct']:.1f} | {r['spearman']:+.3f} |")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Bad as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        sys.exit(2)
    except Failed as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        sys.exit(1)
