#!/usr/bin/python3
"""bench/gpu_check.py, the real-GPU check, end to end on the CPU alone: a
tiny model prepared (exported, placed in every way the check places,
simulated), measured by scripts/dplace-measure-torch in one process with
--map-all cpu (the smoke run, then the full run under `python3 -W error`),
and analyzed (calibrating when the dplace binary has `calibrate`, else
saying it is not available); a time budget stops the measurer cleanly; bad
input gets one line and exit 2; the measuring scripts use nothing that
Python 3.12 removed or that only Debian ships.

usage: test_gpu_check.py DPLACE_BINARY [TEST]   (exit 0 when all pass, 1 on
the first failure, 77 when /usr/bin/python3 has no torch). Each test takes
seconds: the model is four linear layers at batch 4."""
import ast
import csv
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import script_check
from script_check import check, one_line, sh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
CHECK = os.path.join(ROOT, "bench", "gpu_check.py")
MODEL = os.path.join(HERE, "data", "torch", "models.py") + ":chain:4:16"
CPU3 = os.path.join(ROOT, "bench", "devices", "cpu3.json")
PY = sys.executable

try:
    importlib.import_module("torch")
except ImportError as e:
    print(f"test_gpu_check: skipped: {e} (scripts/setup.sh installs python3-torch)")
    sys.exit(77)

DPLACE = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("DPLACE_BIN", "")
TMP = tempfile.mkdtemp(prefix="test_gpu_check.")
def prepare(folder, *extra):
    return sh([PY, CHECK, "prepare", "--out", folder, "--model", MODEL, "--devices", CPU3, "--dplace", DPLACE,
               "--steps", "3", "--warmup", "1", "--repeat", "2", "--threads", "1", *extra], "prepare")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_end_to_end():
    d = os.path.join(TMP, "e2e")
    prepare(d, "--placements", "8", "--random", "3", "--cuts", "3")
    with open(os.path.join(d, "manifest.json")) as f:
        man = json.load(f)
    check(man["format"] == "dplace-gpu-check" and len(man["models"]) == 1, f"manifest: {man}")
    m = man["models"][0]
    kinds = {p["kind"] for p in m["placements"]}
    check(kinds == {"single", "baseline", "split", "random"}, f"kinds of placements: {kinds}")
    multi = [p for p in m["placements"] if len(p["devices_used"]) > 1]
    check(len(multi) >= 8, f"{len(multi)} placements over two devices or more, want 8")
    check(sum(1 for p in m["placements"] if p["kind"] == "random") >= 3, "at least --random 3 random placements")
    for rel in [m["graph"], m["model"].rsplit(":", 1)[0], man["devices"], "scripts/dplace-measure-torch",
                "scripts/dplace-export-torch", "gpu-check.sh"] + [p["file"] for p in m["placements"]]:
        check(not os.path.isabs(rel) and os.path.isfile(os.path.join(d, rel)), f"{rel}: relative, inside {d}")
    check(all(p["simulated_s"] and p["simulated_s"] > 0 for p in m["placements"]), "every placement simulated")
    check(len(read_csv(os.path.join(d, "simulated.csv"))) == len(m["placements"]), "simulated.csv: a row each")
    # the folder moved elsewhere, as to the GPU machine: nothing outside it is needed
    moved = os.path.join(TMP, "carried")
    shutil.move(d, moved)
    d = moved
    # the smoke run, through the driver (which runs only the measurer)
    r = sh([PY, CHECK, "measure", d, "--smoke", "--map-all", "cpu", "--threads", "1"], "measure --smoke")
    smoke = read_csv(os.path.join(d, "smoke.csv"))
    check(len(smoke) == 3 and all(row["status"] == "ok" for row in smoke), f"smoke.csv: {smoke}")
    check("full run estimate: about" in r.stderr, f"the smoke run estimates the full one: {r.stderr}")
    # the full run, as a person runs it on the GPU machine: the carried measurer, warnings as errors
    r = sh([PY, "-W", "error", os.path.join(d, "scripts", "dplace-measure-torch"), "--manifest",
            os.path.join(d, "manifest.json"), "--csv", os.path.join(d, "measured.csv"), "--map-all", "cpu",
            "--threads", "1"], "measure (full)")
    rows = read_csv(os.path.join(d, "measured.csv"))
    check(len(rows) == 2 * len(m["placements"]) and all(row["status"] == "ok" and float(row["seconds"]) > 0
                                                         for row in rows), f"measured.csv: {rows}")
    check(list(rows[0].keys()) == ["model", "placement_file", "seconds", "status"], "the CSV's columns")
    check("round 2/2" in r.stderr, f"progress on stderr: {r.stderr[-500:]}")
    # analyze: here the folder is back home
    r = sh([PY, CHECK, "analyze", d, "--dplace", DPLACE], "analyze")
    out = r.stdout
    for want in ("| set | placements | MAPE % | Spearman |", "Worst held-out placements",
                 "## Where PyTorch eager execution departs from the simulator", "mapped every device to the CPU"):
        check(want in out, f"the report has {want!r}: {out}")
    has_cal = subprocess.run([DPLACE, "calibrate", "--help"], capture_output=True).returncode == 0
    check(("calibrate: fitted on" in out or "calibrate: dplace calibrate failed" in out) if has_cal
          else "calibrate: not available in this build." in out, f"calibration said: {out[:600]}")
    # a held-out row names its placement; the summary row of the same model
    # counts placements instead (and has as many columns once calibrated)
    held = [ln for ln in out.splitlines() if ln.startswith("| chain_b4 |") and ln.count("|") >= 7
            and not ln.split("|")[2].strip().isdigit()]
    check(len(held) == len(m["placements"]) - round(len(m["placements"]) * 0.5),
          f"one row per held-out placement: {held}")
    with open(os.path.join(d, "report.md")) as f:
        check(f.read() == out, "report.md is what was printed")
    # a dplace with the calibrate command (here a stand-in that writes the devices back unchanged): the
    # fitted half goes to it as graph,placement_file,seconds and the held-out half is simulated on its output
    fake = os.path.join(TMP, "dplace-with-calibrate")
    with open(fake, "w") as f:
        f.write('#!/bin/sh\nif [ "$1" = calibrate ]; then\n  shift\n  [ "$1" = --help ] && exit 0\n'
                '  while [ $# -gt 0 ]; do case $1 in -o) out=$2; shift;; --devices) dev=$2; shift;; esac; shift; done\n'
                f'  cp "$dev" "$out" && echo "fit error 0.0%" && exit 0\nfi\nexec {DPLACE} "$@"\n')
    os.chmod(fake, 0o755)
    out = sh([PY, CHECK, "analyze", d, "--dplace", fake, "-o", os.path.join(d, "report2.md")], "analyze, calibrated"
             ).stdout
    n_fit = round(len(m["placements"]) * 0.5)
    check(f"calibrate: fitted on {n_fit} placements" in out and "| calibrated MAPE % |" in out,
          f"calibrated: {out[:900]}")
    fit = read_csv(os.path.join(d, "calibrate_fit.csv"))
    check(len(fit) == n_fit and list(fit[0].keys()) == ["graph", "placement_file", "seconds"]
          and all(os.path.isfile(os.path.join(d, row["placement_file"])) for row in fit), f"the fit CSV: {fit}")
    # the same measurements judged under the other executor: every placement simulated again
    out = sh([PY, CHECK, "analyze", d, "--dplace", DPLACE, "--executor", "tf", "-o", os.path.join(d, "tf.md")],
             "analyze --executor tf").stdout
    check("Simulated again on devices.json under the tf executor." in out, f"analyze --executor tf: {out[:600]}")
    print(f"end to end: {len(m['placements'])} placements, {len(rows)} measurements")


def test_time_budget():
    """A budget spent before the first measurement: every row skipped, the
    CSV still written whole, the stop said."""
    d = os.path.join(TMP, "budget")
    prepare(d, "--placements", "2", "--random", "0", "--cuts", "1", "--methods", "scotch")
    r = sh([PY, os.path.join(d, "scripts", "dplace-measure-torch"), "--manifest", os.path.join(d, "manifest.json"),
            "--csv", os.path.join(d, "measured.csv"), "--map-all", "cpu", "--time-budget", "0.001"], "budget", 1)
    rows = read_csv(os.path.join(d, "measured.csv"))
    check(rows and all(row["status"] == "skipped" and row["seconds"] == "" for row in rows), f"skipped: {rows}")
    check("stopped: the time budget (0.001 s) ran out" in r.stderr, f"the stop is said: {r.stderr}")
    r = sh([PY, CHECK, "analyze", d, "--dplace", DPLACE], "analyze of nothing measured", 2)
    one_line(r, "measured.csv: no measurement with status ok", "analyze of nothing measured")


def test_bad_input():
    d = os.path.join(TMP, "bad")
    prepare(d, "--placements", "2", "--random", "0", "--cuts", "1", "--methods", "scotch")
    with open(os.path.join(d, "manifest.json")) as f:
        man = json.load(f)
    p0 = man["models"][0]["placements"][0]["file"]
    mcsv = os.path.join(d, "measured.csv")
    r = sh([PY, CHECK, "analyze", d, "--dplace", DPLACE], "no measured.csv", 2)
    one_line(r, "measured.csv: cannot read", "a missing CSV")
    cases = [("model,placement,seconds,status\n", "line 1 is", "a wrong header"),
             (f"model,placement_file,seconds,status\nvgg16_b4,{p0},0.5,ok\n", 'line 2: model "vgg16_b4" is not in',
              "a model not in the manifest"),
             ("model,placement_file,seconds,status\nchain_b4,other/p00.json,0.5,ok\n",
              'line 2: other/p00.json is not a placement of model "chain_b4"', "a placement of another model"),
             (f"model,placement_file,seconds,status\nchain_b4,{p0},fast,ok\n", "line 2: seconds 'fast' is not",
              "non-numeric seconds"),
             (f"model,placement_file,seconds,status\nchain_b4,{p0},-1,ok\n", "line 2: seconds '-1' is not",
              "negative seconds"),
             (f"model,placement_file,seconds,status\nchain_b4,{p0},0.5\n", "line 2 has 3 fields", "a short row"),
             (f"model,placement_file,seconds,status\nchain_b4,{p0},0.5,great\n", "line 2: status 'great'",
              "an unknown status")]
    for text, want, what in cases:
        with open(mcsv, "w") as f:
            f.write(text)
        one_line(sh([PY, CHECK, "analyze", d, "--dplace", DPLACE], what, 2), want, what)
    # the measurer: a placement file of another graph in the manifest, a missing one, a bad manifest
    measurer = [PY, os.path.join(d, "scripts", "dplace-measure-torch"), "--manifest", os.path.join(d, "manifest.json"),
                "--csv", mcsv, "--map-all", "cpu"]
    path = os.path.join(d, p0)
    with open(path) as f:
        doc = json.load(f)
    doc["placement"] = doc["placement"][:-2]
    with open(path, "w") as f:
        json.dump(doc, f)
    one_line(sh(measurer, "a placement of another graph", 2), f"{p0}: places", "a placement of another graph")
    os.unlink(path)
    one_line(sh(measurer, "a missing placement file", 2), f"{p0}: cannot read", "a missing placement file")
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump({"format": "dplace-gpu-check", "version": 1, "models": [{"name": "x"}]}, f)
    one_line(sh(measurer, "a bad manifest", 2), "models[0] needs", "a bad manifest")
    one_line(sh([PY, CHECK, "analyze", d, "--dplace", DPLACE], "analyze of a bad manifest", 2), "models[0] needs",
             "analyze of a bad manifest")
    one_line(sh([PY, CHECK, "measure", os.path.join(TMP, "nowhere")], "measure of no folder", 2),
             "manifest.json: missing", "measure of no folder")
    one_line(sh([PY, CHECK, "prepare", "--out", os.path.join(TMP, "x"), "--model", "m.py:f:0",
                 "--dplace", DPLACE], "batch 0", 2), "the batch must be at least 1", "a batch of 0")
    one_line(sh([PY, CHECK, "prepare", "--out", os.path.join(TMP, "x"), "--model", MODEL + " --out y",
                 "--dplace", DPLACE], "an option not the step's", 2), '"--out" is not one of', "a foreign option")
    one_line(sh([PY, CHECK, "prepare", "--out", os.path.join(TMP, "x"), "--model", MODEL + " --dtype",
                 "--dplace", DPLACE], "an option without a value", 2), "each option after the model takes a value",
             "an option without its value")


REMOVED_IN_312 = {"distutils", "imp", "asynchat", "asyncore", "smtpd"}
DEBIAN_ONLY = {"apt", "apt_pkg", "aptsources", "debian", "debconf", "lsb_release"}
THIRD_PARTY = {"torch", "torchvision", "numpy"}


def test_compat():
    """The scripts that run on the GPU machine import only the standard
    library, torch, torchvision (only for torchvision models) and numpy, and
    nothing Python 3.12 removed; where a python3.12 is on PATH, they compile
    and print --help under it with warnings as errors."""
    files = [os.path.join(ROOT, "scripts", "dplace-measure-torch"), os.path.join(ROOT, "scripts",
                                                                                 "dplace-export-torch"),
             os.path.join(ROOT, "bench", "gpu_check_models.py"), CHECK, os.path.join(ROOT, "bench",
                                                                                  "measure_vs_sim.py")]
    stdlib = getattr(sys, "stdlib_module_names", None)
    for path in files:
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module.split(".")[0]]
            for n in names:
                check(n not in REMOVED_IN_312 and n not in DEBIAN_ONLY, f"{path}:{node.lineno}: imports {n}")
                check(n in THIRD_PARTY or n == "measure_vs_sim" or stdlib is None or n in stdlib,
                      f"{path}:{node.lineno}: imports {n}, neither the standard library nor torch")
    py312 = python312()
    if not py312:
        print("compat: no python3.12 found ($DPLACE_PYTHON312, PATH, ~/.pyenv): the import check only")
        return
    for path in files:
        sh([py312, "-W", "error", "-c", "import sys\nwith open(sys.argv[1]) as f: compile(f.read(), sys.argv[1], "
            "'exec')", path], f"python3.12 compiles {path}")
    measurer = os.path.join(ROOT, "scripts", "dplace-measure-torch")
    r = sh([py312, "-W", "error", measurer, "--help"], "python3.12 dplace-measure-torch --help")
    check("--manifest" in r.stdout and "--time-budget" in r.stdout, "the help names the many-placement options")
    if subprocess.run([py312, "-c", "import torch"], capture_output=True).returncode != 0:
        # no torch there: the options and the manifest are read, then one line says what is missing
        d = os.path.join(TMP, "compat")
        prepare(d, "--placements", "2", "--random", "0", "--cuts", "1", "--methods", "scotch")
        r = sh([py312, "-W", "error", measurer, "--manifest", os.path.join(d, "manifest.json"), "--csv",
                os.path.join(d, "m.csv"), "--map-all", "cpu"], "python3.12 without torch", 2)
        one_line(r, "No module named 'torch'; this script needs torch", "python3.12 without torch")
    print(f"compat: {py312} compiles the scripts and runs the measurer with -W error")


def python312():
    """A working Python 3.12: $DPLACE_PYTHON312, python3.12 on PATH, or
    pyenv's; None when there is none."""
    import glob
    cands = [os.environ.get("DPLACE_PYTHON312"), shutil.which("python3.12")]
    cands += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12")))
    for c in cands:
        if c and subprocess.run([c, "-c", "import sys; assert sys.version_info[:2] == (3, 12)"],
                                capture_output=True).returncode == 0:
            return c
    return None



if __name__ == "__main__":
    script_check.main("test_gpu_check", globals(), DPLACE, tmp=TMP)
