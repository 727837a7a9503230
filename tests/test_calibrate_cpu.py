#!/usr/bin/python3
"""bench/calibrate_cpu.py, the CPU calibration from PyTorch measurements,
end to end on its --quick set (an MLP and a small Transformer at three
batch sizes each): prepared (exported, placed on the CPU), measured by
scripts/dplace-measure-torch pinned to one core, one thread, and analyzed
(the fit on the fit rows alone, the held-out rows simulated on the
calibrated file, the table and the class shares); bad input gets one line
and exit 2. Nothing here is timed: only the plumbing is checked.

usage: test_calibrate_cpu.py DPLACE_BINARY [TEST]   (exit 0 when all pass, 1
on the first failure, 77 when /usr/bin/python3 has no torch)."""
import csv
import importlib
import json
import os
import shutil
import sys
import tempfile

import script_check
from script_check import check, one_line, sh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
SCRIPT = os.path.join(ROOT, "bench", "calibrate_cpu.py")
CPU3 = os.path.join(ROOT, "bench", "devices", "cpu3.json")
PY = sys.executable

try:
    importlib.import_module("torch")
except ImportError as e:
    print(f"test_calibrate_cpu: skipped: {e} (scripts/setup.sh installs python3-torch)")
    sys.exit(77)

DPLACE = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("DPLACE_BIN", "")
TMP = tempfile.mkdtemp(prefix="test_calibrate_cpu.")
def test_end_to_end():
    d = os.path.join(TMP, "e2e")
    sh([PY, SCRIPT, "prepare", "--out", d, "--quick", "--dplace", DPLACE], "prepare")
    with open(os.path.join(d, "manifest.json")) as f:
        man = json.load(f)
    check(man["format"] == "dplace-gpu-check" and len(man["models"]) == 6, "six graphs in the manifest")
    fit = [e["name"] for e in man["models"] if e["split"] == "fit"]
    check(len(fit) == 4, f"the first and last batch of each model are fitted: {fit}")
    for e in man["models"]:
        with open(os.path.join(d, e["placements"][0]["file"])) as f:
            p = json.load(f)
        check(p["devices"] == ["cpu:0"] and set(p["placement"]) == {0} and len(p["placement"]) == e["ops"],
              f"{e['name']}: every op on the CPU")
        spec = e["model"].rpartition(":")[0]
        check(not os.path.isabs(spec) and (not spec.endswith(".py") or os.path.isfile(os.path.join(d, spec))),
              f"{e['name']}: its model file {spec} inside the folder, named relative to it")
    # measured elsewhere, as on another machine: nothing outside the folder is needed
    moved = os.path.join(TMP, "e2e-moved")
    shutil.move(d, moved)
    d = moved
    sh([PY, SCRIPT, "measure", d, "--cores", "0", "--threads", "1", "--repeat", "2", "--steps", "2",
        "--warmup", "1"], "measure")
    with open(os.path.join(d, "measured.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == 12 and all(r["status"] == "ok" for r in rows), "2 rounds of 6 graphs measured")
    out = os.path.join(d, "table.md")
    r = sh([PY, SCRIPT, "analyze", d, "--shares", "-o", out, "--dplace", DPLACE], "analyze")
    with open(os.path.join(d, "fit.csv")) as f:
        fit_rows = f.read().strip().splitlines()
    check(fit_rows[0] == "graph,placement_file,seconds" and len(fit_rows) == 5
          and all(row.split("/")[0] in fit for row in fit_rows[1:]), f"fit.csv holds the fit rows only: {fit_rows}")
    with open(os.path.join(d, "calibrated.json")) as f:
        cal = json.load(f)
    check(cal["format"] == "dplace-devices" and cal["version"] == 2, "the calibrated file is dplace-devices v2")
    with open(out) as f:
        table = f.read()
    check(table == r.stdout, "-o writes what is printed")
    body = [line for line in table.splitlines() if line.startswith("| mlp") or line.startswith("| transformer")]
    check(len(body) == 6 and sum("| fit |" in line for line in body) == 4
          and sum("| held: batch |" in line for line in body) == 2, f"six rows, four fitted: {body}")
    check("**held out, all** | 2 |" in table and "Not determined by the fit" in table
          and "Fitted (stock -> calibrated" in table, "the summary, the fitted and the undetermined parameters")
    check(sum(line.startswith("- mlp b") or line.startswith("- transformer b") for line in table.splitlines()) == 6
          and "launch" in table, "a class-share line per graph")
    kept = [p for p in json.load(open(os.path.join(d, "calibrate.json")))[-1]["parameters"] if p["kept"]]
    check([p["name"] for p in kept] == ["cpu:0 data.memory"] and kept[0]["calibrated"] == kept[0]["stock"]
          and "Kept at the devices file's values (--keep): data.memory" in table,
          f"the copy rate kept at the stock row's: {kept}")
    check(cal["devices"][0]["efficiency"]["data"]["memory"] == kept[0]["stock"], "the calibrated file holds it")
    sh([PY, SCRIPT, "analyze", d, "--keep", "none", "-o", out, "--dplace", DPLACE], "analyze --keep none")
    with open(out) as f:
        check("Kept at the devices file's values (--keep): none." in f.read(), "--keep none keeps nothing")


def test_bad_input():
    r = sh([PY, SCRIPT, "analyze", os.path.join(TMP, "none")], "analyze without a folder", 2)
    one_line(r, "manifest.json: cannot read", "analyze without a folder")
    r = sh([PY, SCRIPT, "measure", os.path.join(TMP, "none")], "measure without a manifest", 2)
    one_line(r, "manifest.json: missing", "measure without a manifest")
    r = sh([PY, SCRIPT, "bandwidth", "--cores", "a,b"], "bad cores", 2)
    one_line(r, "--cores 'a,b'", "bad cores")
    r = sh([PY, SCRIPT, "prepare", "--out", os.path.join(TMP, "cpu3"), "--devices", CPU3, "--dplace", DPLACE],
           "three devices", 2)
    one_line(r, "needs exactly one device, of kind cpu", "three devices")



if __name__ == "__main__":
    script_check.main("test_calibrate_cpu", globals(), DPLACE, tmp=TMP)
