#!/usr/bin/python3
"""REINFORCE on dplace.envs.PlacementEnv: a PyTorch policy learns to place inception_v3 on k40x2 (a Haswell
CPU and two Tesla K40) over METIS groups, and prints its learning curve beside its untrained control.

The policy gives every unit (a METIS group) a distribution over the devices its ops may use: a small graph
network over the unit graph of the observation (each unit's features, averaged with its neighbours', through
an MLP) plus a learned bias per unit and device, the devices a unit cannot use masked out. Each update samples
`batch` placements, one Gymnasium episode each (env.reset(), env.step(action): reward = -step time), and takes
a REINFORCE step against the batch's mean reward with an entropy bonus. The untrained control is the same
policy, same seed, never updated, sampled as often: whatever the trained policy beats it by, it learned.

    PYTHONPATH=build/python /usr/bin/python3 examples/reinforce_placement.py            # about a minute
    PYTHONPATH=build/python /usr/bin/python3 examples/reinforce_placement.py --seed 2 --updates 400

Prints ten lines of the curve (mean and best step time so far, trained and control), the summary, and
`learned: yes` when both the best and the last tenth's mean beat the control's.
"""
import argparse
import sys
import time

import numpy as np

try:
    import torch
    import torch.nn as nn
except ImportError as e:
    sys.exit(f"reinforce_placement: needs PyTorch (Debian's python3-torch; scripts/setup.sh installs it): {e}")

import dplace
from dplace import envs


class Policy(nn.Module):
    """Logits [U, D] from the observation: an MLP over each unit's features and its neighbours' mean, plus a
    bias per (unit, device); the devices a unit may not use get -inf."""

    def __init__(self, obs, n_devices, hidden=64):
        super().__init__()
        feats = torch.as_tensor(obs["features"])
        self.x = (feats - feats.mean(0)) / (feats.std(0) + 1e-6)
        U = len(feats)
        edges = torch.as_tensor(obs["edges"], dtype=torch.long)
        both = torch.cat([edges, edges.flip(1)]) if len(edges) else torch.zeros((0, 2), dtype=torch.long)
        adj = torch.zeros(U, U)
        adj[both[:, 0], both[:, 1]] = 1.0
        adj += torch.eye(U)
        self.adj = adj / adj.sum(1, keepdim=True)
        self.mask = torch.as_tensor(obs["mask"], dtype=torch.bool)
        F = self.x.shape[1]
        self.net = nn.Sequential(nn.Linear(2 * F, hidden), nn.Tanh(), nn.Linear(hidden, n_devices))
        self.bias = nn.Parameter(torch.zeros(U, n_devices))

    def forward(self):
        h = torch.cat([self.x, self.adj @ self.x], dim=1)
        logits = self.net(h) + self.bias
        return logits.masked_fill(~self.mask, float("-inf"))


def run(args):
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # a few thousand weights: one thread is fastest
    env = envs.PlacementEnv(args.model, args.devices, units="metis", groups=args.groups, group_seed=args.seed)
    obs, _ = env.reset(seed=args.seed)
    policy = Policy(obs, env.n_devices, args.hidden)
    control = Policy(obs, env.n_devices, args.hidden)
    control.load_state_dict(policy.state_dict())  # the same start, never trained
    opt = torch.optim.Adam(policy.parameters(), lr=args.lr)
    gen = torch.Generator().manual_seed(args.seed)

    def sample(p):
        dist = torch.distributions.Categorical(logits=p())
        probs = dist.probs.detach()
        a = torch.multinomial(probs, args.batch, replacement=True, generator=gen).T  # [batch, U]
        return a, dist

    def episodes(actions):
        costs, rewards = [], []
        for a in actions.numpy():
            env.reset()
            _, r, terminated, _, info = env.step(a)
            assert terminated
            rewards.append(r)
            costs.append(info["cost"])
        return np.array(rewards), np.array(costs)

    single_gpu = env.sim.simulate("gpu").step_time
    print(f"reinforce_placement: {env.graph.name} ({len(env.graph)} ops) on {env.devices.name}, {env.n_units} "
          f"METIS groups, batch {args.batch}, lr {args.lr}, seed {args.seed}; single GPU {single_gpu:.6f} s")
    print(f"{'update':>7s} {'trained mean':>13s} {'best':>10s}   {'control mean':>13s} {'best':>10s}   {'s':>6s}")
    t0 = time.monotonic()
    hist = {"trained": [], "control": []}
    best = {"trained": np.inf, "control": np.inf}
    window = {"trained": [], "control": []}
    every = max(1, args.updates // 10)
    u = 0
    while u < args.updates and (args.time is None or time.monotonic() - t0 < args.time):
        a, dist = sample(policy)
        rewards, costs = episodes(a)
        adv = torch.as_tensor((rewards - rewards.mean()) / (rewards.std() + 1e-9), dtype=torch.float32)
        logp = dist.log_prob(a).sum(1)
        loss = -(adv * logp).mean() - args.entropy * dist.entropy().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            ca, _ = sample(control)
        _, ccosts = episodes(ca)
        for who, c in (("trained", costs), ("control", ccosts)):
            hist[who].append(c.mean())
            best[who] = min(best[who], c.min())
            window[who].append(c.mean())
        u += 1
        if u % every == 0 or u == args.updates:
            if not args.quiet:
                print(f"{u:7d} {np.mean(window['trained']):13.6f} {best['trained']:10.6f}   "
                      f"{np.mean(window['control']):13.6f} {best['control']:10.6f}   {time.monotonic() - t0:6.1f}",
                      flush=True)
            window = {"trained": [], "control": []}
    tenth = max(1, u // 10)
    last = {w: float(np.mean(hist[w][-tenth:])) for w in hist}
    learned = best["trained"] < best["control"] and last["trained"] < last["control"]
    print(f"after {u} updates ({u * args.batch} placements each) in {time.monotonic() - t0:.1f} s:")
    print(f"  trained  best {best['trained']:.6f} s, last-tenth mean {last['trained']:.6f} s")
    print(f"  control  best {best['control']:.6f} s, last-tenth mean {last['control']:.6f} s")
    print(f"  single GPU {single_gpu:.6f} s; trained best {best['trained'] / single_gpu:.3f} x")
    print(f"learned: {'yes' if learned else 'no'}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="inception_v3", help="a zoo model or a dplace-graph file")
    ap.add_argument("--devices", default="k40x2", help="a device preset or a dplace-devices file")
    ap.add_argument("--groups", type=int, default=32, help="METIS groups (the units)")
    ap.add_argument("--updates", type=int, default=300, help="policy updates")
    ap.add_argument("--batch", type=int, default=16, help="placements sampled per update")
    ap.add_argument("--lr", type=float, default=0.01, help="Adam's learning rate")
    ap.add_argument("--entropy", type=float, default=0.01, help="entropy bonus")
    ap.add_argument("--hidden", type=int, default=64, help="hidden units of the MLP")
    ap.add_argument("--time", type=float, help="stop after this many seconds")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quiet", action="store_true", help="no curve lines, the summary only")
    args = ap.parse_args(argv)
    try:
        return run(args)
    except (dplace.Error, ValueError) as e:
        print(f"reinforce_placement: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
