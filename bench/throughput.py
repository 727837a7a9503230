#!/usr/bin/python3
"""Throughput check (docs/calibration.md, "Throughput across batch sizes"):
dplace's single-GPU step time for ResNet-50, VGG-16 and Inception-V3 training
steps at batch 32 and 64 (PyTorch exports of torchvision's models, and the
zoo's TensorFlow inception_v3) beside the step time TensorFlow published for
the cards it measured, 2017 (batch / images per second).

usage: bench/throughput.py [--dplace build/dplace] [--work DIR]

Exports into DIR (default: a temporary folder; existing exports there are
reused), simulates each graph with every op on the GPU, prints one row per
(model, batch) and exits 1 when a judged cell (a card TensorFlow measured:
P100 SXM2, K80) is off by more than 30%."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
EXPORTER = os.path.join(ROOT, "scripts", "dplace-export-torch")
TOLERANCE = 0.30

# TensorFlow's "Benchmarks" page (tensorflow.org/performance/benchmarks, May 2017,
# tf_cnn_benchmarks, synthetic data, SGD, one GPU): images/second. P100: NVIDIA
# DGX-1 (Tesla P100 SXM2); K80: Google Compute Engine (one GK210 of a Tesla K80).
PUBLISHED = {
    ("P100", "resnet50", 32): 195, ("P100", "resnet50", 64): 219,
    ("P100", "vgg16", 32): 144, ("P100", "vgg16", 64): 154,
    ("P100", "inception_v3", 32): 128, ("P100", "inception_v3", 64): 142,
    ("K80", "resnet50", 32): 49.5, ("K80", "resnet50", 64): 51.9,
    ("K80", "vgg16", 32): 35.4,
    ("K80", "inception_v3", 32): 29.3, ("K80", "inception_v3", 64): 30.5,
}
DEVICES = [  # (column, device spec, card it is judged against or None)
    ("p100x1", "p100x1", None),
    ("P100-SXM2", os.path.join(ROOT, "bench", "devices", "p100-sxm2x1.json"), "P100"),
    ("k40x1", "k40x1", None),
    ("K80", os.path.join(ROOT, "bench", "devices", "k80x1.json"), "K80"),
]


def step_time(dplace, graph_args, devices):
    r = subprocess.run([dplace, "simulate"] + graph_args + ["--devices", devices, "--placement", "gpu", "--json"],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"throughput: dplace simulate {' '.join(graph_args)} --devices {devices}: {r.stderr.strip()}")
    res = json.loads(r.stdout)
    return res["step_time_s"], res["valid"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dplace", default=os.path.join(ROOT, "build", "dplace"))
    ap.add_argument("--work", help="folder for the exported graphs (kept; default: a temporary one)")
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="dplace-throughput.")
    os.makedirs(work, exist_ok=True)
    rows, misses = [], 0
    for model in ("resnet50", "vgg16", "inception_v3", "zoo:inception_v3"):
        for batch in (32, 64):
            if model.startswith("zoo:"):
                graph_args = ["--model", model[4:], "--batch", str(batch)]
                key = model[4:]
            else:
                path = os.path.join(work, f"{model}_b{batch}.json")
                if not os.path.exists(path):
                    subprocess.run([sys.executable, EXPORTER, model, "--batch", str(batch), "-o", path, "-q"],
                                   check=True)
                graph_args = ["--graph", path]
                key = model
            cells = []
            for col, spec, card in DEVICES:
                t, valid = step_time(args.dplace, graph_args, spec)
                pub = PUBLISHED.get((card, key, batch)) if card else None
                ratio = t / (batch / pub) if pub else None
                miss = ratio is not None and abs(ratio - 1) > TOLERANCE
                misses += miss
                cells.append((col, t, valid, pub, ratio, miss))
            rows.append((model, batch, cells))
    print("seconds per training step, every op on one GPU; published = batch / (TensorFlow's images/s);")
    print("ratio = dplace / published, * outside +-30% (judged on the cards TensorFlow measured)")
    head = f"{'model':18s} {'batch':>5s}"
    for col, _, card in DEVICES:
        head += f" | {col:>9s}" + (f" {'published':>9s} {'ratio':>6s}" if card else "")
    print(head)
    for model, batch, cells in rows:
        line = f"{model:18s} {batch:5d}"
        for col, t, valid, pub, ratio, miss in cells:
            line += f" | {t:9.3f}" + ("" if valid else "!")
            if any(c == col and card for c, _, card in DEVICES):
                line += f" {batch / pub:9.3f} {ratio:5.2f}{'*' if miss else ' '}" if pub else f" {'-':>9s} {'-':>6s}"
        print(line)
    print(f"cells outside +-30%: {misses}   (! = out of memory on that card)")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
