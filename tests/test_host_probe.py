#!/usr/bin/python3
"""bench/host_probe.py: the probe runs on this machine (the host's parts;
a GPU's copies where torch sees one) and writes its JSON; `links` fits a
line to copy times and writes a devices file whose host-GPU links carry
it, the other links untouched; bad input gets one line and exit 2.
Nothing here is timed: the probe's figures are checked for being there
and positive, the fit on copy times made up to fit exactly.

usage: test_host_probe.py DPLACE_BINARY [TEST]   (exit 0 when all pass, 1
on the first failure; the probe's test exits 77, skipped, when run alone
under a Python without torch, the others need none)."""
import importlib
import json
import os
import sys
import tempfile

import script_check
from script_check import check, one_line, sh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
SCRIPT = os.path.join(ROOT, "bench", "host_probe.py")
KEPT = os.path.join(ROOT, "bench", "measured", "h200-2026-12-04", "copy_probe.json")
PY = sys.executable

try:
    importlib.import_module("torch")
    NO_TORCH = None
except ImportError as e:
    NO_TORCH = e

DPLACE = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("DPLACE_BIN", "")
TMP = tempfile.mkdtemp(prefix="test_host_probe.")


def write(name, doc):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def test_probe_quick():
    if NO_TORCH:  # the probe times torch's ops; `links` below reads JSON alone
        print(f"test_host_probe: test_probe_quick skipped: {NO_TORCH} (scripts/setup.sh installs python3-torch)")
        if len(sys.argv) > 2:
            sys.exit(77)
        return
    out = os.path.join(TMP, "probe.json")
    sh([PY, SCRIPT, "probe", "--quick", "--threads", "1", "-o", out], "probe --quick")
    with open(out) as f:
        doc = json.load(f)
    check(doc["format"] == "dplace-host-probe" and doc["version"] == 1, "the probe's format")
    check(doc["machine"]["cpus"] >= 1 and doc["machine"]["threads"] == 1, f"the machine: {doc['machine']}")
    for key in ("cpu_tiny_op_s", "cpu_module_call_s", "copy_rate_Bps"):
        check(doc["host"][key] > 0, f"host {key}: {doc['host']}")
    for key in ("cpu_op_hot_s", "cpu_op_after_sleep_s"):
        check(doc["wake"][key] > 0, f"wake {key}: {doc['wake']}")
    check(("copies" in doc) == bool(doc["machine"]["gpus"]), "copies measured where there is a GPU, only there")
    check(not os.path.exists(out + ".tmp"), "no temporary file left")


def test_links_fit():
    # time = 40 us + bytes / 12 GB/s to the GPU, 30 us + bytes / 6 GB/s back, exactly; a 64 MiB row past
    # --max-mib 16 that would pull the fit (page faults) is left out
    rows = [{"mib": m, "h2d_s": 40e-6 + m * 2**20 / 12e9, "d2h_fresh_s": 30e-6 + m * 2**20 / 6e9}
            for m in (0.25, 1, 4, 16)]
    rows.append({"mib": 64, "h2d_s": 0.01, "d2h_fresh_s": 0.05})
    probe = write("made.json", {"format": "dplace-host-probe", "version": 1, "copies": rows})
    out = os.path.join(TMP, "links.json")
    r = sh([PY, SCRIPT, "links", probe, "--devices", "p100x2", "-o", out, "--dplace", DPLACE], "links")
    check("wrote" in r.stderr and "4 link directions" in r.stderr, f"what it wrote: {r.stderr}")
    with open(out) as f:
        doc = json.load(f)
    kinds = {d["name"]: d["kind"] for d in doc["devices"]}
    seen = set()
    for lk in doc["links"]:
        pair = (kinds[lk["from"]], kinds[lk["to"]])
        if pair == ("cpu", "gpu"):
            check(abs(lk["bandwidth"] / 12e9 - 1) < 1e-3 and abs(lk["latency_s"] - 40e-6) < 1e-9, f"to a GPU: {lk}")
        elif pair == ("gpu", "cpu"):
            check(abs(lk["bandwidth"] / 6e9 - 1) < 1e-3 and abs(lk["latency_s"] - 30e-6) < 1e-9, f"to the host: {lk}")
        seen.add(pair)
    check({("cpu", "gpu"), ("gpu", "cpu")} <= seen, f"both directions set: {seen}")
    check("host_probe.py links" in doc["source"], "the source says where the links came from")
    sh([DPLACE, "devices", out], "the written file loads")
    # the kept H200 probe: pageable .to() at about 12.9 GB/s both ways
    r = sh([PY, SCRIPT, "links", KEPT, "--devices", "h200x1", "-o", os.path.join(TMP, "h200.json"),
            "--dplace", DPLACE], "links of the kept probe")
    with open(os.path.join(TMP, "h200.json")) as f:
        bws = [lk["bandwidth"] for lk in json.load(f)["links"]]
    check(all(12e9 < b < 14e9 for b in bws), f"the kept probe's links: {bws}")


def test_links_keep_other_links():
    """A set with GPU-to-GPU links: only the host's change."""
    rows = [{"mib": m, "h2d_s": 1e-5 + m * 2**20 / 1e10, "d2h_fresh_s": 1e-5 + m * 2**20 / 1e10} for m in (1, 4)]
    probe = write("two.json", {"copies": rows})
    base = os.path.join(TMP, "v100.json")
    sh([DPLACE, "devices", "v100-nvlinkx4", "-o", base], "a set with NVLink")
    out = os.path.join(TMP, "v100_links.json")
    sh([PY, SCRIPT, "links", probe, "--devices", base, "-o", out, "--dplace", DPLACE], "links on a file")
    with open(base) as f:
        before = json.load(f)
    with open(out) as f:
        after = json.load(f)
    kinds = {d["name"]: d["kind"] for d in before["devices"]}
    for a, b in zip(before["links"], after["links"]):
        if "cpu" not in (kinds[a["from"]], kinds[a["to"]]):
            check(a == b, f"a link between GPUs is left as it was: {a} -> {b}")
    check(before["devices"] == after["devices"], "the devices are left as they were")


def test_bad_input():
    out = os.path.join(TMP, "never.json")
    cases = [(write("none.json", {"format": "dplace-host-probe", "version": 1}), "p100x1",
              'no "copies"', "a probe without a GPU"),
             (write("neg.json", {"copies": [{"mib": 1, "h2d_s": -1, "d2h_fresh_s": 1e-3},
                                            {"mib": 4, "h2d_s": 1e-3, "d2h_fresh_s": 2e-3}]}), "p100x1",
              'copies[0] needs a positive "h2d_s"', "a negative time"),
             (write("one.json", {"copies": [{"mib": 1, "h2d_s": 1e-4, "d2h_fresh_s": 1e-4}]}), "p100x1",
              "needs copies of at least two sizes", "one size"),
             (write("flat.json", {"copies": [{"mib": 1, "h2d_s": 2e-4, "d2h_fresh_s": 2e-4},
                                             {"mib": 4, "h2d_s": 1e-4, "d2h_fresh_s": 1e-4}]}), "p100x1",
              "do not grow with the size", "times falling with the size"),
             (KEPT, os.path.join(ROOT, "bench", "devices", "this_cpu.json"), "no link between a CPU and a GPU",
              "a set without a GPU"),
             (KEPT, "tpu-pod", "--devices tpu-pod:", "an unknown preset"),
             (os.path.join(TMP, "missing.json"), "p100x1", "cannot read", "a missing probe")]
    for probe, devices, want, what in cases:
        r = sh([PY, SCRIPT, "links", probe, "--devices", devices, "-o", out, "--dplace", DPLACE], what, 2)
        one_line(r, want, what)
        check(not os.path.exists(out), f"{what}: nothing written")
    one_line(sh([PY, SCRIPT, "probe", "--threads", "0"], "zero threads", 2), "--threads 0", "zero threads")


if __name__ == "__main__":
    script_check.main("test_host_probe", globals(), DPLACE, tmp=TMP)
