#!/usr/bin/python3
"""bench/corpus.py, the teacher's corpus of graph and machine pairs: the
plan's split keeps every held-out graph and machine family out of training;
a pair taught by the search writes a record whose placement is the search's
best (it simulates to the summary's step time); a memory-tight pair puts one
GPU out of memory; a run resumes past the pairs done; bad usage gets one line
and exit 2. Nothing here is timed.

usage: test_corpus.py DPLACE_BINARY [TEST]   (exit 0 when all pass, 1 on the
first failure)."""
import base64
import gzip
import json
import os
import subprocess
import sys
import tempfile

import script_check
from script_check import check, check_eq, one_line, sh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
SCRIPT = os.path.join(ROOT, "bench", "corpus.py")
PY = "/usr/bin/python3"
DPLACE = sys.argv[1] if len(sys.argv) > 1 else None
TMP = tempfile.mkdtemp(prefix="dplace-corpus-test.")
PAIR = "synthetic-2000@k40x2"


def corpus(*args, want=0):
    return sh([PY, SCRIPT, *args, "--dir", TMP], f"corpus {' '.join(args)}", want)


def setup():
    os.environ["DPLACE_BIN"] = DPLACE
    corpus("plan")


def test_plan_holds_families_out():
    m = json.load(open(os.path.join(TMP, "manifest.json")))
    train = [p for p in m["pairs"] if p["split"] == "train"]
    held = [p for p in m["pairs"] if p["split"] == "held-out"]
    check(len(train) >= 300 and len(held) >= 6, f"{len(train)} train and {len(held)} held-out pairs")
    check(all(p["graph_family"] not in m["held_out_graph_families"] and
              p["machine_family"] not in m["held_out_machine_families"] for p in train),
          "no training pair has a held-out graph or machine family")
    check(any(p["kind"] == "torch" for p in held) and any(p["tight"] for p in held),
          "the held-out pairs include a PyTorch export and a memory-tight machine")
    check_eq(len({p["id"] for p in m["pairs"]}), len(m["pairs"]), "pair ids are unique")


def record(pid):
    return json.load(open(os.path.join(TMP, "pairs", pid + ".json")))


def test_teach_writes_the_search_best():
    corpus("run", "--only", PAIR, "--teacher", "5")
    for pid in (PAIR, PAIR + "-tight"):
        rec = record(pid)
        s = rec["summary"]
        place = list(gzip.decompress(base64.b64decode(rec["placement_gz_b64"])))
        check_eq(len(place), s["ops"], f"{pid}: a device per op")
        path = os.path.join(TMP, pid + ".placement.json")
        with open(path, "w") as f:
            json.dump({"format": "dplace-placement", "version": 1, "devices": rec["devices"], "placement": place}, f)
        dev = "k40x2" if pid == PAIR else os.path.join(TMP, "cache", "devices", pid.replace("@", "_") + ".json")
        sim = json.loads(sh([DPLACE, "simulate", "--model", "synthetic-2000", "--devices", dev, "--placement", path,
                             "--json"], f"{pid}: simulate the record's placement").stdout)
        check(sim["valid"] and abs(sim["step_time_s"] - s["best_step_time_s"]) <= 1e-9 * sim["step_time_s"],
              f"{pid}: the record's placement simulates to the search's best ({sim['step_time_s']} against "
              f"{s['best_step_time_s']})")
    check(record(PAIR)["summary"]["single_gpu_s"] is not None, "one GPU holds the plain pair's graph")
    check(record(PAIR + "-tight")["summary"]["single_gpu_s"] is None, "one GPU is out of memory on the tight pair")


def test_run_resumes():
    corpus("run", "--only", PAIR, "--teacher", "5")
    r = corpus("run", "--only", PAIR, "--teacher", "5")
    check("0 pairs to teach" in r.stderr, f"a second run teaches nothing: {r.stderr!r}")


def test_bad_usage():
    r = corpus("run", "--jobs", "0", want=2)
    one_line(r, "--jobs", "--jobs 0")
    r = sh([PY, SCRIPT, "status", "--dir", os.path.join(TMP, "none")], "status without a plan", 2)
    one_line(r, "no manifest", "status without a plan")


if __name__ == "__main__":
    script_check.main("test_corpus", globals(), DPLACE, TMP, setup)
