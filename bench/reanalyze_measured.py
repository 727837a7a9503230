#!/usr/bin/python3
"""Re-simulates a kept set of measured placements under today's simulator
and compares: for each row of FOLDER/measured.csv, `dplace simulate` of its
placement file on the folder's graph and devices (or --devices), with any
extra simulate arguments passed through, then a markdown table (measured,
simulated, error) and the mean absolute percentage error and Spearman's rho
per model and over every row. Nothing is measured; no torch is needed.

A kept folder (bench/measured/h200-8f480c0 is the default; its README.md
says where each file came from) holds
  measured.csv     model,placement,measured_s,min_s,max_s,placement_file[,...]
                   (placement: the label; placement_file: relative to FOLDER;
                   min_s and max_s may be empty; prepared_simulated_s or
                   doc_simulated_s, when there, is the simulation made then,
                   which the output compares today's with)
  devices.json     the devices the placements were simulated on then
  MODEL/graph.json the model's dplace-graph, for each model of the CSV
  MODEL/pNN.json   the placements (dplace-placement v1)

usage: bench/reanalyze_measured.py [FOLDER] [--devices FILE|PRESET] [--sim-arg=ARG]... [--sim-args "ARGS"]
           [--dplace PATH] [--vs-doc] [--json] [-- SIMULATE ARGS...]

  e.g. bench/reanalyze_measured.py --sim-arg=--executor --sim-arg=torch
       bench/reanalyze_measured.py --sim-args "--executor torch" --json
       bench/reanalyze_measured.py -- --noise 0.1 --steps 15 --warmup 5

The dplace binary is --dplace, else $DPLACE_BIN, else build/dplace. Exit
status 0; 2 for bad input (one line naming the file and the item); 1 when
`dplace simulate` fails (its last line shown)."""
import argparse
import csv
import json
import math
import os
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_vs_sim as mvs  # noqa: E402  (rank statistics)
from gpu_check import Bad, Failed  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DEFAULT_FOLDER = os.path.join(ROOT, "bench", "measured", "h200-8f480c0")
REQUIRED = ("model", "placement", "measured_s", "min_s", "max_s", "placement_file")
REFERENCE = ("prepared_simulated_s", "doc_simulated_s")  # the simulation made then, the first present
OWN_OPTIONS = ("--graph", "--model", "--devices", "--placement", "--json")
PROG = "reanalyze_measured"


def seconds(text, path, n, column, optional=False):
    """A positive finite number of seconds from a CSV cell (None when empty and optional)."""
    text = (text or "").strip()
    if not text and optional:
        return None
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not (math.isfinite(v) and v > 0):
        raise Bad(f'{path}: line {n}: {column} "{text}" is not a positive number of seconds')
    return v


def read_rows(folder):
    """The CSV's rows, each checked: its numbers, its placement file and its model's graph there."""
    path = os.path.join(folder, "measured.csv")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            lines = list(csv.reader(f))
    except OSError as e:
        raise Bad(f"{path}: cannot read: {e.strerror}")
    except (UnicodeDecodeError, csv.Error) as e:
        raise Bad(f"{path}: not a CSV file: {e}")
    if not lines:
        raise Bad(f"{path}: empty (expected the header {','.join(REQUIRED)})")
    header = [h.strip() for h in lines[0]]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise Bad(f"{path}: line 1: the header lacks {', '.join(missing)} (expected {','.join(REQUIRED)}, "
                  "then any columns)")
    col = {c: header.index(c) for c in header}
    rows, seen = [], set()
    for n, cells in enumerate(lines[1:], start=2):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise Bad(f"{path}: line {n}: {len(cells)} fields, the header has {len(header)}")
        get = {c: cells[i].strip() for c, i in col.items()}
        model, pfile = get["model"], get["placement_file"]
        if not model or not get["placement"] or not pfile:
            raise Bad(f"{path}: line {n}: model, placement and placement_file must not be empty")
        meas = seconds(get["measured_s"], path, n, "measured_s")
        lo = seconds(get["min_s"], path, n, "min_s", optional=True)
        hi = seconds(get["max_s"], path, n, "max_s", optional=True)
        if (lo is not None and lo > meas) or (hi is not None and hi < meas):
            raise Bad(f"{path}: line {n}: measured_s {meas:g} is outside min_s-max_s "
                      f"({get['min_s']}-{get['max_s']})")
        ref_col = next((c for c in REFERENCE if c in get), None)
        ref = seconds(get[ref_col], path, n, ref_col, optional=True) if ref_col else None
        if os.path.isabs(pfile) or ".." in pfile.replace("\\", "/").split("/"):
            raise Bad(f"{path}: line {n}: placement_file {pfile} is not a path inside the folder")
        if (model, pfile) in seen:
            raise Bad(f"{path}: line {n}: {model} {pfile} is listed twice")
        seen.add((model, pfile))
        for need in (pfile, os.path.join(model, "graph.json")):
            if not os.path.isfile(os.path.join(folder, need)):
                raise Bad(f"{path}: line {n}: no file {os.path.join(folder, need)}")
        rows.append({"model": model, "placement": get["placement"], "file": pfile, "measured_s": meas,
                     "min_s": lo, "max_s": hi, "then_simulated_s": ref, "then_column": ref_col})
    if not rows:
        raise Bad(f"{path}: no rows after the header")
    return rows


def simulate(dplace, folder, devices, row, extra):
    """(step seconds or None, verdict) of one row under `dplace simulate --json`."""
    cmd = [dplace, "simulate", "--graph", os.path.join(row["model"], "graph.json"), "--devices", devices,
           "--placement", row["file"], "--json"] + extra
    try:
        p = subprocess.run(cmd, cwd=folder, capture_output=True, text=True)
    except OSError as e:
        raise Failed(f"cannot run {dplace}: {e.strerror}")
    if p.returncode != 0:
        last = [ln for ln in (p.stderr + p.stdout).splitlines() if ln.strip()]
        raise Failed(f"dplace simulate --placement {os.path.join(folder, row['file'])} {' '.join(extra)}: "
                     f"exit status {p.returncode}: {last[0] if last else 'no output'}")
    try:
        r = json.loads(p.stdout[p.stdout.index("{"):])
    except ValueError:
        raise Failed(f"dplace simulate --placement {os.path.join(folder, row['file'])}: no JSON object on stdout")
    verdict = r.get("verdict", "?")
    step = r.get("step_time_s")
    return (step if verdict == "valid" and isinstance(step, (int, float)) and step > 0 else None), verdict


def spearman(xs, ys):
    """Spearman's rho (measure_vs_sim's), None where it is undefined (JSON has no NaN)."""
    rho = mvs.spearman(xs, ys)
    return None if math.isnan(rho) else rho


def summarize(rows):
    """Per model in order of appearance, then "all": placements, MAPE % and Spearman over the valid rows."""
    groups = []
    for r in rows:
        if r["model"] not in groups:
            groups.append(r["model"])
    out = []
    for name, mine in [(g, [r for r in rows if r["model"] == g]) for g in groups] + [("all", rows)]:
        ok = [r for r in mine if r["simulated_s"] is not None]
        out.append({"set": name, "placements": len(mine), "simulated": len(ok),
                    "mape_pct": (sum(abs(r["error_pct"]) for r in ok) / len(ok)) if ok else None,
                    "spearman": spearman([r["measured_s"] for r in ok], [r["simulated_s"] for r in ok])})
    return out


def g4(v):
    return "-" if v is None else f"{v:.4g}"


def pct(v, sign=True, digits=1):
    return "-" if v is None else (f"{v:+.{digits}f}" if sign else f"{v:.{digits}f}")


def rho_s(v):
    return "-" if v is None else f"{v:+.2f}"


def markdown(folder, devices, dplace, extra, rows, summary, vs_doc):
    out = [f"# Re-simulated: {os.path.relpath(folder)}", "",
           f"dplace: {dplace}; devices: {devices}; simulate arguments: {' '.join(extra) or '(none)'}", ""]
    head = "| model | placement | measured s (min-max) | simulated s | error % |"
    rule = "|---|---|---:|---:|---:|"
    if vs_doc:
        head += " then simulated s | change % |"
        rule += "---:|---:|"
    out += [head, rule]
    for r in rows:
        rng = f" ({g4(r['min_s'])}-{g4(r['max_s'])})" if r["min_s"] is not None and r["max_s"] is not None else ""
        sim = g4(r["simulated_s"]) if r["simulated_s"] is not None else r["verdict"]
        line = f"| {r['model']} | {r['placement']} | {g4(r['measured_s'])}{rng} | {sim} | {pct(r['error_pct'])} |"
        if vs_doc:
            line += f" {g4(r['then_simulated_s'])} | {pct(r['change_pct'], digits=2)} |"
        out.append(line)
    out += ["", "| set | placements | simulated | MAPE % | Spearman |", "|---|---:|---:|---:|---:|"]
    for s in summary:
        out.append(f"| {s['set']} | {s['placements']} | {s['simulated']} | {pct(s['mape_pct'], False)} | "
                   f"{rho_s(s['spearman'])} |")
    per = ", ".join(f"{s['set']} {pct(s['mape_pct'], False)}% / {rho_s(s['spearman'])}" for s in summary[:-1])
    a = summary[-1]
    out += ["", f"summary: {a['simulated']} of {a['placements']} rows simulated; MAPE {pct(a['mape_pct'], False)}%, "
                f"Spearman {rho_s(a['spearman'])} over all ({per})"]
    changes = [r for r in rows if r["change_pct"] is not None]
    if changes and all(r["change_pct"] == 0 for r in changes):
        out.append(f"against the simulations made then (the CSV's {changes[0]['then_column']}): "
                   f"all {len(changes)} rows unchanged")
    elif changes:
        worst = max(changes, key=lambda r: abs(r["change_pct"]))
        out.append(f"against the simulations made then (the CSV's {worst['then_column']}): largest change "
                   f"{worst['change_pct']:+.4f}% ({worst['model']} {worst['placement']}), "
                   f"{sum(1 for r in changes if r['change_pct'] == 0)} of {len(changes)} rows unchanged")
    return "\n".join(out) + "\n"


def split_passthrough(argv):
    """(the script's arguments, the simulate arguments after a bare --)."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def resolve_devices(folder, spec):
    """The devices argument for dplace (absolute for a file: dplace runs in FOLDER)."""
    if spec is None:
        path = os.path.join(folder, "devices.json")
        if not os.path.isfile(path):
            raise Bad(f"{path}: no devices file in the folder (give --devices FILE|PRESET)")
        return os.path.abspath(path)
    if os.path.isfile(spec):
        return os.path.abspath(spec)
    if "/" in spec or spec.endswith(".json"):
        raise Bad(f"{spec}: no such devices file")
    return spec


def run(args, extra):
    folder = args.folder
    if not os.path.isdir(folder):
        raise Bad(f"{folder}: no such folder (a kept folder holds measured.csv, devices.json and MODEL/graph.json)")
    for a in extra:
        if a.split("=", 1)[0] in OWN_OPTIONS:
            raise Bad(f"simulate argument {a}: given by this script (use --devices for another device set)")
    devices = resolve_devices(folder, args.devices)
    found = shutil.which(args.dplace) if os.sep not in args.dplace else args.dplace
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise Bad(f"{args.dplace}: no dplace binary there (build it, or give --dplace or DPLACE_BIN)")
    args.dplace = os.path.abspath(found)  # dplace runs in FOLDER
    rows = read_rows(folder)
    for r in rows:
        r["simulated_s"], r["verdict"] = simulate(args.dplace, folder, devices, r, extra)
        r["error_pct"] = (None if r["simulated_s"] is None
                          else 100 * (r["simulated_s"] - r["measured_s"]) / r["measured_s"])
        r["change_pct"] = (None if r["simulated_s"] is None or r["then_simulated_s"] is None
                           else 100 * (r["simulated_s"] - r["then_simulated_s"]) / r["then_simulated_s"])
    summary = summarize(rows)
    if args.json:
        doc = {"folder": os.path.abspath(folder), "dplace": args.dplace, "devices": devices, "simulate_args": extra,
               "rows": rows, "summary": summary}
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    else:
        sys.stdout.write(markdown(folder, devices, args.dplace, extra, rows, summary, args.vs_doc))
    return 0


def main(argv):
    own, extra = split_passthrough(argv)
    ap = argparse.ArgumentParser(prog="bench/reanalyze_measured.py", description=__doc__.split("\n\n")[0],
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", nargs="?", default=DEFAULT_FOLDER,
                    help="the kept folder (default bench/measured/h200-8f480c0)")
    ap.add_argument("--devices", help="a dplace-devices file or a preset (default FOLDER/devices.json)")
    ap.add_argument("--sim-arg", action="append", default=[], metavar="ARG",
                    help="one argument for dplace simulate, repeatable; write --sim-arg=--flag for a flag")
    ap.add_argument("--sim-args", default="", metavar="ARGS",
                    help='arguments for dplace simulate as one string, split as a shell would ("--executor torch"; '
                         'one flag alone as --sim-args=--flag)')
    ap.add_argument("--dplace", default=os.environ.get("DPLACE_BIN") or os.path.join(ROOT, "build", "dplace"),
                    help="the dplace binary (default $DPLACE_BIN, else build/dplace)")
    ap.add_argument("--vs-doc", action="store_true",
                    help="add the simulation made then (the CSV's prepared_simulated_s, else doc_simulated_s) "
                         "beside each row, and today's change from it")
    ap.add_argument("--json", action="store_true", help="print a JSON object (rows and summary) instead of markdown")
    args = ap.parse_args(own)
    try:
        extra = list(args.sim_arg) + shlex.split(args.sim_args) + extra
    except ValueError as e:
        print(f"{PROG}: --sim-args: {e}", file=sys.stderr)
        return 2
    try:
        return run(args, extra)
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
