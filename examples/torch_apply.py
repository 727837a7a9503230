#!/usr/bin/python3
"""A dplace placement applied to a PyTorch model, then trained by a plain loop: a small residual conv net is
exported as a dplace graph (dplace.torch_export.export), placed on two GPUs and a CPU by dplace's search
(dplace.optimize), its placement turned into a Hugging Face style device map ({module path: "cpu" |
"cuda:N"}), and the model placed with dplace.torch_export.apply_placement: every module's parameters on its
device, and the tensors routed between them, so that the training loop below is the one written for the
unplaced model.

    PYTHONPATH=build/python /usr/bin/python3 examples/torch_apply.py --time 5

On a machine with fewer GPUs than the placement uses, every module goes to the CPU (the same loop runs).
--device-map FILE writes the map as JSON, which apply_placement also reads (and `dplace-export-torch
--map-placement P --graph G --device-map FILE` writes from a placement file).
"""
import argparse
import sys

try:
    import torch
    import torch.nn as nn
except ImportError as e:
    sys.exit(f"torch_apply: needs PyTorch (Debian's python3-torch; scripts/setup.sh installs it): {e}")

import dplace
from dplace import torch_export


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv1 = nn.Conv2d(width, width, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(width)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))  # the residual add runs on this block's device


class Net(nn.Module):
    def __init__(self, width=32, blocks=4, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.blocks = nn.Sequential(*[Block(width) for _ in range(blocks)])
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        return self.head(self.blocks(torch.relu(self.stem(x))).mean((2, 3)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", default="p100x2", help="a device preset or a dplace-devices file")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--time", default="5s", help="the search's time")
    ap.add_argument("--steps", type=int, default=3, help="training steps run on the placed model")
    ap.add_argument("--device-map", metavar="FILE", help="also write the device map as JSON")
    args = ap.parse_args(argv)

    torch.manual_seed(0)
    model = Net()
    g = torch_export.export(model, batch=args.batch, input_shape=(3, 32, 32), name="net")
    d = dplace.as_devices(args.devices)
    print(f"torch_apply: {g.name}: {len(g)} ops, placing on {d.name} for {args.time}")
    r = dplace.optimize(g, d, agent="search", time=args.time)
    print(r.summary())

    device_map = torch_export.device_map(g, d, r.placement)  # {"stem": "cuda:0", "blocks.2": "cuda:1", ...}
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    wanted = {int(v.split(":")[1]) for v in device_map.values() if v.startswith("cuda:")}
    if wanted and max(wanted) >= gpus:
        print(f"torch_apply: the placement uses GPUs up to cuda:{max(wanted)}, torch sees {gpus}: every module "
              "on the CPU")
        device_map = {path: "cpu" for path in device_map}
    if args.device_map:
        torch_export.write_device_map(device_map, args.device_map)
        print(f"torch_apply: wrote {args.device_map}")
    for path, dev in device_map.items():
        print(f"  {path or '(model)':20s} {dev}")

    model = torch_export.apply_placement(model, device_map)
    # From here on, the loop written for the unplaced model: the batch and the targets stay on the CPU, the
    # output comes back beside the batch, and the optimizer is made after placing.
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    for step in range(args.steps):
        x, y = torch.randn(args.batch, 3, 32, 32), torch.randint(0, 10, (args.batch,))
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"torch_apply: step {step + 1}: loss {loss.item():.4f}")
    on = sorted({str(p.device) for p in model.parameters()})
    print(f"torch_apply: trained {args.steps} steps with the parameters on {', '.join(on)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
