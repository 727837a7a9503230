#!/usr/bin/python3
"""A PyTorch model placed by dplace and mapped back to its modules: one training step of a small Transformer
exported as a dplace graph (dplace.torch_export, the logic of scripts/dplace-export-torch), placed on two
P100s and a CPU by dplace's search (dplace.optimize), and each module given the device that runs most of its
ops (forward, gradients and its parameters' update).

    PYTHONPATH=build/python /usr/bin/python3 examples/torch_place.py --time 20

With GPUs, --apply moves each module to its device (dplace's gpu:N is torch's cuda:N); it only prints the
mapping otherwise.
"""
import argparse
import sys

try:
    import torch
    import torch.nn as nn
except ImportError as e:
    sys.exit(f"torch_place: needs PyTorch (Debian's python3-torch; scripts/setup.sh installs it): {e}")

import dplace
from dplace import torch_export


class Model(nn.Module):
    """Token embedding, a Transformer encoder, a classifier over the mean token."""

    def __init__(self, vocab=1000, width=256, layers=4, heads=4, classes=10):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=4 * width, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(width, classes)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)).mean(1))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", default="p100x2", help="a device preset or a dplace-devices file")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seq", type=int, default=128, help="tokens per sample")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--time", default="20s", help="the search's time")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--apply", action="store_true", help="move the modules to their devices (needs the GPUs)")
    args = ap.parse_args(argv)
    model = Model(layers=args.layers)
    g = torch_export.export(model, batch=args.batch, input_shape=(args.seq,), input_dtype="int64",
                            input_high=1000, optimizer="adam", name="transformer")
    d = dplace.as_devices(args.devices)
    print(f"torch_place: {g.name}: {len(g)} ops, {g.stats()['flops'] / 1e9:.1f} GFLOP per step, on {d.name}")
    r = dplace.optimize(g, d, agent="search", time=args.time, threads=args.threads)
    print(r.summary())
    mapping = torch_export.module_placement(g, d, r.placement)
    print("module -> device (ops of each device):")
    for path, v in mapping.items():
        print(f"  {path or '(model)':40s} {v['device']:6s} {v['ops']}")
    if args.apply:
        devs = torch_export.torch_devices(mapping)
        for path, dev in devs.items():
            if path in ("", "input", "loss", "optimizer", "constant"):
                continue
            try:
                model.get_submodule(path).to(dev)
            except AttributeError:
                pass  # a scope that is not a module (a functional call's)
        print("modules moved:", sorted(set(devs.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
