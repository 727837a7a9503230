"""Placement environments with the Gymnasium API over dplace's simulator.

PlacementEnv   one-step episodes: the action gives every unit a device (a MultiDiscrete), the reward is minus
               the simulated step time (or minus its square root, the papers' reward), as the learned placers of
               ColocRL, the Hierarchical Planner, EAGLE and Mars see it.
NodeEnv        Placeto's and Park's MDP: from a start placement, the units in topological order, one device per
               step; the reward is the decrease of the simulated step time; an episode is one pass.

A unit is a set of ops placed together: by default a PyTorch export's modules, and on other graphs
TensorFlow's colocation units (each colocation group one unit, every other op its own); or the groups of a
grouper (units='metis' with groups=64, say), or any grouping given as an array of group ids. Both environments take only (graph, devices) (Graph and Devices objects, or a
zoo model's and a device preset's names); everything else has a documented default.

Observations are dicts of numpy arrays:
    features    float32 [U, len(UNIT_FEATURES)]   per-unit features, columns named by UNIT_FEATURES
    edges       int32 [E, 2]                      the unit graph: (producer unit, consumer unit), each pair once
    edge_bytes  float32 [E]                       bytes on each unit edge (log1p-scaled with features='log')
    mask        int8 [U, D]                       the devices each unit's constraints allow (1) or forbid (0)
    placement   int32 [U]                         each unit's current device (its ops' most common device)
    unit        int (NodeEnv only)                the unit the next action places

When gymnasium imports, the environments are gymnasium.Env subclasses with gymnasium's spaces and the ids
'dplace/Placement-v0' and 'dplace/Node-v0' are registered; without it they have the same API over the minimal
classes of dplace.spaces. Environments pickle (they rebuild their simulator), so they run in vector
environments: use the 'spawn' or 'forkserver' start method (gymnasium.vector.AsyncVectorEnv(..., context=
'spawn')): a forked child does not get the process's thread pools (the nn engine's, after dplace.optimize
ran a learned agent) nor locks other threads held.
"""
import math

import numpy as np

import dplace

try:
    import gymnasium as _gym
    from gymnasium import spaces as _spaces

    _EnvBase = _gym.Env
except ImportError:
    _gym = None
    from dplace import spaces as _spaces

    _EnvBase = _spaces.Env

__all__ = ["PlacementEnv", "NodeEnv", "UNIT_FEATURES", "Units", "HAVE_GYMNASIUM"]

HAVE_GYMNASIUM = _gym is not None

UNIT_FEATURES = (
    "n_ops",            # ops in the unit
    "flops",            # their FLOPs
    "param_bytes",      # their parameters
    "temp_bytes",       # their temporary bytes
    "output_bytes",     # bytes of the tensors they produce
    "in_bytes",         # bytes of the tensors they read from other units
    "out_bytes",        # bytes other units read from them
    "gpu_seconds",      # their time on the first GPU (the first device when there is none)
    "cpu_seconds",      # their time on the first CPU (the first device when there is none)
    "cpu_only",         # 1 when the unit may not go to a GPU
    "n_allowed",        # devices the unit may go to
    "topo_position",    # the unit's first op's place in the topological order, in [0, 1]
)
_LOG_COLUMNS = (0, 1, 2, 3, 4, 5, 6)  # log1p-scaled with features='log'
_SECONDS_COLUMNS = (7, 8)            # divided by the graph's serial time on that device with features='log'


class Units:
    """The units of a graph and how a device per unit becomes an op placement.

    units: 'auto' or None (the default: a PyTorch export's modules, each whole with its gradient ops and its
    parameters' updates; on any other graph TensorFlow's colocation units: each colocation group one unit,
    every other op its own), 'op' (TensorFlow's units), 'module' or 'module:DEPTH' (dplace.units), a grouper's
    name (dplace.group_methods(): 'metis', 'scotch', 'fluid', 'random', or 'colocation', ColocRL's rule) with
    `groups` groups and `seed`, or an integer array of one group id per op.

    A unit's device applies to its ops by TensorFlow's soft placement, as dplace's learned agents expand their
    groups: an op whose colocation unit may not run there (a CPU-only op in a group sent to a GPU) goes to the
    first device its colocation unit allows. masks[u, d] says whether device d is any use to unit u: whether
    some op of it may run on d.

    Attributes: unit_of (int32 [n_ops]), n_units, members (a list of op index arrays), masks (bool [U, D]),
    op_allowed (bool [n_ops, D]: the devices each op's colocation unit allows), fallback (int32 [n_ops]: the
    first of them)."""

    def __init__(self, graph, devices, units="auto", groups=64, seed=1):
        tf_of, tf_n = dplace.units(graph)
        tf_masks = dplace.unit_masks(graph, devices, tf_of, tf_n)
        if units is None or units in ("auto", "op") or (isinstance(units, str) and units.startswith("module")):
            unit_of, n = dplace.units(graph, "auto" if units is None else units)
        elif isinstance(units, str):
            unit_of, n = dplace.group(graph, units, groups=groups, seed=seed, devices=devices)
        else:
            unit_of = np.asarray(units)
            if unit_of.shape != (len(graph),) or not np.issubdtype(unit_of.dtype, np.integer):
                raise ValueError(f"units: an int array of one group id per op, shape ({len(graph)},), "
                                 f"not {unit_of.dtype} {unit_of.shape}")
            if unit_of.size and unit_of.min() < 0:
                raise ValueError("units: group ids must be >= 0")
            n = int(unit_of.max()) + 1 if unit_of.size else 0
        self.unit_of, self.n_units = np.ascontiguousarray(unit_of, dtype=np.int32), int(n)
        order = np.argsort(self.unit_of, kind="stable")
        bounds = np.searchsorted(self.unit_of[order], np.arange(self.n_units + 1))
        self.members = [order[bounds[k]:bounds[k + 1]].astype(np.int32) for k in range(self.n_units)]
        self.op_allowed = tf_masks[tf_of]
        self.fallback = np.argmax(self.op_allowed, axis=1).astype(np.int32)
        D = len(devices)
        self.masks = np.zeros((self.n_units, D), dtype=bool)
        for d in range(D):
            self.masks[:, d] = np.bincount(self.unit_of, weights=self.op_allowed[:, d], minlength=self.n_units) > 0
        self._flat = self.op_allowed.ravel()
        self._row = np.arange(len(graph), dtype=np.int64) * D

    def expand(self, unit_devices):
        """The op placement of a device per unit ([U] -> [n_ops]; [k, U] -> [k, n_ops])."""
        d = np.asarray(unit_devices, dtype=np.int32)[..., self.unit_of]
        ok = self._flat[self._row + d]
        return np.where(ok, d, self.fallback).astype(np.int32)

    def move(self, unit, device):
        """(ops, devices): where unit's ops go when it goes to device (soft placement)."""
        ops = self.members[unit]
        ok = self.op_allowed[ops, device]
        return ops, np.where(ok, np.int32(device), self.fallback[ops]).astype(np.int32)

    def of_placement(self, placement):
        """Each unit's most common device in an op placement (the lowest index among ties)."""
        placement = np.asarray(placement)
        out = np.zeros(self.n_units, dtype=np.int32)
        for k, ops in enumerate(self.members):
            if ops.size:
                out[k] = np.bincount(placement[ops]).argmax()
        return out


def _unit_graph(graph, unit_of):
    """(edges int32 [E, 2], bytes float64 [E]): the unit pairs that op edges join, once each, and their bytes."""
    e = graph.edges()
    b = graph.edge_bytes().astype(np.float64)
    u = unit_of[e] if e.size else np.zeros((0, 2), dtype=np.int32)
    keep = u[:, 0] != u[:, 1]
    u, b = u[keep], b[keep]
    if not u.size:
        return np.zeros((0, 2), dtype=np.int32), np.zeros(0)
    n = int(unit_of.max()) + 1
    key = u[:, 0].astype(np.int64) * n + u[:, 1]
    uniq, inv = np.unique(key, return_inverse=True)
    edges = np.stack([uniq // n, uniq % n], axis=1).astype(np.int32)
    return edges, np.bincount(inv, weights=b, minlength=uniq.size)


class _PlacementBase(_EnvBase):
    """What both environments share: the graph, devices, simulator, units, observation arrays, the cost of
    a placement, pickling."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 0}

    def _setup(self, graph, devices, units, groups, group_seed, features, invalid_reward, render_mode, executor,
               **extra):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode: one of {self.metadata['render_modes']} or None, not {render_mode!r}")
        if features not in ("log", "raw"):
            raise ValueError(f"features: 'log' or 'raw', not {features!r}")
        if executor not in (None, "tf", "torch"):
            raise ValueError(f"executor: 'tf', 'torch' or None (the graph's), not {executor!r}")
        self._args = dict(graph=graph, devices=devices, units=units, groups=groups, group_seed=group_seed,
                          features=features, invalid_reward=invalid_reward, render_mode=render_mode,
                          executor=executor, **extra)
        self.graph, self.devices = dplace.as_graph(graph), dplace.as_devices(devices)
        if executor is not None and executor != self.graph.executor:
            self.graph = self.graph.with_executor(executor)
        self.render_mode = render_mode
        self.sim = dplace.Simulator(self.graph, self.devices)
        self.units = Units(self.graph, self.devices, units, groups, group_seed)
        self.n_units, self.n_devices = self.units.n_units, len(self.devices)
        self._op_seconds = self.sim.op_seconds()
        gpus, cpus = self.devices.gpus(), self.devices.cpus()
        self._gpu = gpus[0] if gpus else 0
        self._cpu = cpus[0] if cpus else 0
        self.serial_seconds = float(self._op_seconds[:, self._gpu].sum())
        self.invalid_reward = invalid_reward
        self._features = self._unit_features(features)
        self._edges, eb = _unit_graph(self.graph, self.units.unit_of)
        self._edge_bytes = (np.log1p(eb) if features == "log" else eb).astype(np.float32)
        self._mask = self.units.masks.astype(np.int8)
        self.single_gpu = self.sim.placement("gpu")
        self.last_result = None

    def _unit_features(self, mode):
        """The per-unit features, columns UNIT_FEATURES."""
        g, uo, U = self.graph, self.units.unit_of, self.units.n_units
        f = g.features()
        names = dplace.Graph.FEATURES
        col = {n: i for i, n in enumerate(names)}
        out = np.zeros((U, len(UNIT_FEATURES)), dtype=np.float64)

        def per_unit(values):
            return np.bincount(uo, weights=values, minlength=U)

        out[:, 0] = np.bincount(uo, minlength=U)
        out[:, 1] = per_unit(f[:, col["flops"]])
        out[:, 2] = per_unit(f[:, col["param_bytes"]])
        out[:, 3] = per_unit(f[:, col["temp_bytes"]])
        out[:, 4] = per_unit(f[:, col["output_bytes"]])
        e, b = g.edges(), g.edge_bytes().astype(np.float64)
        if e.size:
            cross = uo[e[:, 0]] != uo[e[:, 1]]
            out[:, 5] = np.bincount(uo[e[cross, 1]], weights=b[cross], minlength=U)
            out[:, 6] = np.bincount(uo[e[cross, 0]], weights=b[cross], minlength=U)
        out[:, 7] = per_unit(self._op_seconds[:, self._gpu])
        out[:, 8] = per_unit(self._op_seconds[:, self._cpu])
        kinds = np.array([k == "gpu" for k in self.devices.kinds])
        masks = self.units.masks
        out[:, 9] = ~np.any(masks & kinds[None, :], axis=1) if kinds.any() else 0
        out[:, 10] = masks.sum(axis=1)
        pos = np.empty(len(g), dtype=np.float64)
        pos[g.topo_order()] = np.arange(len(g)) / max(1, len(g) - 1)
        first = np.full(U, np.inf)
        np.minimum.at(first, uo, pos)
        out[:, 11] = np.where(np.isfinite(first), first, 0)
        if mode == "log":
            out[:, _LOG_COLUMNS] = np.log1p(out[:, _LOG_COLUMNS])
            for c in _SECONDS_COLUMNS:
                total = out[:, c].sum()
                if total > 0:
                    out[:, c] /= total
        return out.astype(np.float32)

    def _obs_spaces(self):
        U, D, E, F = self.n_units, self.n_devices, len(self._edges), len(UNIT_FEATURES)
        return {
            "features": _spaces.Box(-np.inf, np.inf, shape=(U, F), dtype=np.float32),
            "edges": _spaces.Box(0, max(U - 1, 0), shape=(E, 2), dtype=np.int32),
            "edge_bytes": _spaces.Box(0, np.inf, shape=(E,), dtype=np.float32),
            "mask": _spaces.Box(0, 1, shape=(U, D), dtype=np.int8),
            "placement": _spaces.Box(0, D - 1, shape=(U,), dtype=np.int32),
        }

    def _obs(self, unit_placement):
        return {"features": self._features, "edges": self._edges, "edge_bytes": self._edge_bytes,
                "mask": self._mask, "placement": np.asarray(unit_placement, dtype=np.int32)}

    def cost(self, result):
        """Seconds charged to a placement: its step time when valid; out of memory, the search's score (4 x the
        step time + the worst device's excess share, so that less overflow costs less); a broken constraint or
        a split colocation group (only an action the mask forbids makes one), 10 x the graph's serial time on
        the first GPU."""
        if result.valid:
            return result.step_time
        if result.verdict == "oom":
            return result.score
        return 10.0 * self.serial_seconds

    def _info(self, result):
        return {"step_time": result.step_time, "valid": result.valid, "verdict": result.verdict,
                "reason": result.reason, "cost": self.cost(result)}

    def render(self):
        """'ansi': the last simulated placement in words (returned); 'human': the same printed."""
        r = self.last_result
        if r is None:
            text = f"{type(self).__name__}: {self.graph.name} on {self.devices.name}, nothing simulated yet"
        else:
            lines = [f"{self.graph.name} on {self.devices.name}: step {r.step_time:.6f} s, "
                     f"{'valid' if r.valid else r.verdict + ': ' + r.reason}"]
            for d, name in enumerate(self.devices.names):
                lines.append(f"  {name:8s} {int(r.n_ops[d]):7d} ops  busy {r.busy[d]:.6f} s  peak "
                             f"{r.peak_bytes[d] / 2**30:.3f} / {r.memory_bytes[d] / 2**30:.3f} GiB")
            text = "\n".join(lines)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass

    # pickling: the constructor's arguments and the episode's state, the simulator rebuilt
    def __getstate__(self):
        return {"args": self._args, "state": self._episode_state(),
                "rng": None if self._np_random is None else self._np_random.bit_generator.state}

    def __setstate__(self, st):
        type(self).__init__(self, **st["args"])
        if st["rng"] is not None:
            self.np_random.bit_generator.state = st["rng"]
        self._restore_episode(st["state"])


class PlacementEnv(_PlacementBase):
    """One-step placement episodes (ColocRL's, the Hierarchical Planner's, EAGLE's and Mars's view).

    PlacementEnv(graph, devices, *, units='auto', groups=64, group_seed=1, reward='neg_time',
                 invalid_reward=None, start='gpu', features='log', render_mode=None, executor=None)

    executor     how the step runs: 'tf', 'torch' (PyTorch's eager mode) or None, the graph's own
                 (Graph.executor; docs/simulator.md, "Executors")

    action       a MultiDiscrete of one device per unit (nvec = [D] * U)
    reward       -cost (reward='neg_time') or -sqrt(cost) ('neg_sqrt', the papers'): cost is the step time of a
                 valid placement (see cost() for an invalid one); invalid_reward, when given, is the reward of
                 every invalid placement instead
    terminated   True after every step (one-step episodes); truncated False
    observation  the dict of the module's docstring; its placement is the start placement's ('gpu': single
                 GPU, or a baseline placer's name, or an op placement array) at reset and the action's after
    info         step_time, valid, verdict, reason ('' when valid), cost, placement (the op placement),
                 peak_bytes, and action_mask (bool [U, D], the mask observation)
    """

    def __init__(self, graph, devices, *, units="auto", groups=64, group_seed=1, reward="neg_time",
                 invalid_reward=None, start="gpu", features="log", render_mode=None, executor=None):
        if reward not in ("neg_time", "neg_sqrt"):
            raise ValueError(f"reward: 'neg_time' or 'neg_sqrt', not {reward!r}")
        self._setup(graph, devices, units, groups, group_seed, features, invalid_reward, render_mode, executor,
                    reward=reward, start=start)
        self.reward_kind = reward
        self.start_placement = self.units.of_placement(_start_placement(self, start))
        self.action_space = _spaces.MultiDiscrete(np.full(self.n_units, self.n_devices, dtype=np.int64))
        self.observation_space = _spaces.Dict(self._obs_spaces())
        self._ready = False

    def reward_of(self, result):
        """The reward of a simulated placement (as step() gives it)."""
        if not result.valid and self.invalid_reward is not None:
            return float(self.invalid_reward)
        c = self.cost(result)
        return -c if self.reward_kind == "neg_time" else -math.sqrt(c)

    def _action(self, action):
        a = np.asarray(action)
        if a.shape != (self.n_units,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"action: an integer array of one device per unit, shape ({self.n_units},), "
                             f"not {a.dtype} {a.shape}")
        if a.size and (a.min() < 0 or a.max() >= self.n_devices):
            bad = int(np.flatnonzero((a < 0) | (a >= self.n_devices))[0])
            raise ValueError(f"action[{bad}]: device {int(a[bad])} out of range 0..{self.n_devices - 1}")
        return a

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.action_space.seed(int(self.np_random.integers(2 ** 31)))
        self._ready = True
        return self._obs(self.start_placement), {"action_mask": self.units.masks}

    def step(self, action):
        if not self._ready:
            raise RuntimeError("PlacementEnv: call reset() before step() (each episode is one step)")
        a = self._action(action)
        placement = self.units.expand(a)
        r = self.sim.simulate(placement)
        self.last_result, self._ready = r, False
        info = self._info(r)
        info.update(placement=placement, peak_bytes=r.peak_bytes, action_mask=self.units.masks)
        if self.render_mode == "human":
            self.render()
        return self._obs(a), self.reward_of(r), True, False, info

    def evaluate(self, actions, threads=1):
        """Rewards of many actions ([k, U] integers) at once, simulated on `threads` threads without stepping
        the environment: (rewards float64 [k], dplace.SimBatch). Row i is what step(actions[i]) would give."""
        a = np.asarray(actions)
        if a.ndim != 2 or a.shape[1] != self.n_units or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions: an integer array of shape (k, {self.n_units}), not {a.dtype} {a.shape}")
        if a.size and (a.min() < 0 or a.max() >= self.n_devices):
            raise ValueError(f"actions: devices out of range 0..{self.n_devices - 1}")
        batch = self.sim.simulate_many(self.units.expand(a), threads=threads)
        cost = np.where(batch.valid, batch.step_time,
                        np.where(np.array(batch.verdict) == "oom", batch.score, 10.0 * self.serial_seconds))
        rewards = -cost if self.reward_kind == "neg_time" else -np.sqrt(cost)
        if self.invalid_reward is not None:
            rewards = np.where(batch.valid, rewards, float(self.invalid_reward))
        return rewards, batch

    def _episode_state(self):
        return {"ready": self._ready}

    def _restore_episode(self, st):
        self._ready = st["ready"]


class NodeEnv(_PlacementBase):
    """Placeto's and Park's MDP: the units one at a time, in topological order.

    NodeEnv(graph, devices, *, units='auto', groups=64, group_seed=1, start='gpu', order='topo',
            invalid_reward=None, features='log', render_mode=None, executor=None)

    executor     as PlacementEnv's

    start        the placement an episode starts from: 'gpu' (single GPU: every op on the first GPU, the ops
                 it cannot run on the CPU), 'cpu', a baseline placer's name ('m-etf', 'metis', 'expert', ...:
                 dplace.place_methods()), or an op placement array
    order        the units' order: 'topo' (by their first op in the graph's topological order, level by level)
                 or 'depth_first'
    action       a Discrete(D): the device of the unit obs['unit'] (all its ops move there)
    reward       the decrease of the cost (the step time when valid; see cost()) from the step before:
                 an episode's rewards sum to the start's cost minus the end's; invalid_reward, when given,
                 replaces the reward of a step that makes an invalid placement
    terminated   after the last unit; truncated False
    info         step_time, valid, verdict, reason, cost (of the placement after the step), unit (the unit
                 just placed), action_mask (bool [D], the next unit's)
    action_masks()  bool [D]: the devices the next unit's constraints allow and that the simulator's cheap
                 memory check does not prove out of memory for it (Delta.oom_devices) -- conservative: a
                 step that the mask allows can still run out of memory. Never empty: when every allowed
                 device is proven out of memory, the allowed devices.
    """

    def __init__(self, graph, devices, *, units="auto", groups=64, group_seed=1, start="gpu", order="topo",
                 invalid_reward=None, features="log", render_mode=None, executor=None):
        if order not in ("topo", "depth_first"):
            raise ValueError(f"order: 'topo' or 'depth_first', not {order!r}")
        self._setup(graph, devices, units, groups, group_seed, features, invalid_reward, render_mode, executor,
                    start=start, order=order)
        self.start = _start_placement(self, start)
        pos = np.empty(len(self.graph), dtype=np.int64)
        pos[self.graph.topo_order(depth_first=order == "depth_first")] = np.arange(len(self.graph))
        first = np.full(self.n_units, np.iinfo(np.int64).max)
        np.minimum.at(first, self.units.unit_of, pos)
        self.order = np.argsort(first, kind="stable").astype(np.int32)
        self.action_space = _spaces.Discrete(self.n_devices)
        obs = self._obs_spaces()
        obs["unit"] = _spaces.Discrete(max(self.n_units, 1))
        self.observation_space = _spaces.Dict(obs)
        self._delta = dplace.Delta(self.sim)
        self._k = None  # position in the order; None before reset
        self._mask_now = np.zeros(self.n_devices, dtype=bool)

    def _next_mask(self):
        if self._k is None or self._k >= self.n_units:
            return np.zeros(self.n_devices, dtype=bool)
        u = int(self.order[self._k])
        allowed = self.units.masks[u]
        fits = allowed.copy()
        for d in np.flatnonzero(allowed):
            fits[d] = not self._delta.surely_oom(*self.units.move(u, int(d)))
        return fits if fits.any() else allowed.copy()

    def action_masks(self):
        """bool [D]: the devices the next step may choose (see the class's docstring)."""
        return self._mask_now

    def _observe(self):
        obs = self._obs(self.units.of_placement(self._placement))
        obs["unit"] = int(self.order[min(self._k, self.n_units - 1)]) if self.n_units else 0
        return obs

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.action_space.seed(int(self.np_random.integers(2 ** 31)))
        start = self.start
        if options and "start" in options:
            start = _start_placement(self, options["start"])
        self._placement = np.array(start, dtype=np.int32)
        r = self._delta.set_base(self._placement)
        self.last_result, self._cost, self._k = r, self.cost(r), 0
        self._mask_now = self._next_mask()
        info = self._info(r)
        info["action_mask"] = self._mask_now
        return self._observe(), info

    def step(self, action):
        if self._k is None or self._k >= self.n_units:
            raise RuntimeError("NodeEnv: call reset() before step() (the episode has ended)")
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            a = np.asarray(action)
            if a.shape != () or not np.issubdtype(a.dtype, np.integer):
                raise ValueError(f"action: a device index (int), not {action!r}")
            action = int(a)
        d = int(action)
        if not 0 <= d < self.n_devices:
            raise ValueError(f"action: device {d} out of range 0..{self.n_devices - 1}")
        u = int(self.order[self._k])
        ops, devs = self.units.move(u, d)
        r = self._delta.try_move(ops, devs)
        self._delta.accept()
        self._placement[ops] = devs
        cost = self.cost(r)
        reward = self._cost - cost
        if not r.valid and self.invalid_reward is not None:
            reward = float(self.invalid_reward)
        self.last_result, self._cost, self._k = r, cost, self._k + 1
        self._mask_now = self._next_mask()
        info = self._info(r)
        info.update(unit=u, action_mask=self._mask_now)
        if self.render_mode == "human":
            self.render()
        return self._observe(), float(reward), self._k >= self.n_units, False, info

    @property
    def placement(self):
        """The current op placement (a copy)."""
        return None if self._k is None else self._placement.copy()

    def _episode_state(self):
        return None if self._k is None else {"placement": self._placement.copy(), "k": self._k}

    def _restore_episode(self, st):
        if st is None:
            return
        self._placement, self._k = st["placement"], st["k"]
        r = self._delta.set_base(self._placement)
        self.last_result, self._cost = r, self.cost(r)
        self._mask_now = self._next_mask()


def _start_placement(env, start):
    """An op placement from 'gpu', 'cpu', a device name, a baseline placer's name, or an array."""
    if isinstance(start, str):
        if start in dplace.place_methods() and start not in ("cpu", "gpu"):
            return dplace.place(env.graph, env.devices, start)
        return env.sim.placement(start)
    p = np.asarray(start)
    if p.shape != (len(env.graph),) or not np.issubdtype(p.dtype, np.integer):
        raise ValueError(f"start: 'gpu', 'cpu', a placer's name or an int array of shape ({len(env.graph)},)")
    if p.size and (p.min() < 0 or p.max() >= len(env.devices)):
        raise ValueError(f"start: devices out of range 0..{len(env.devices) - 1}")
    return p.astype(np.int32)


def _register():
    """Registers the environments' ids with gymnasium (when it is there)."""
    if _gym is None:
        return
    registry = getattr(getattr(_gym, "envs", None), "registry", None)
    for env_id, entry in (("dplace/Placement-v0", "dplace.envs:PlacementEnv"), ("dplace/Node-v0", "dplace.envs:NodeEnv")):
        if registry is not None and env_id in registry:
            continue
        _gym.register(id=env_id, entry_point=entry, kwargs={"graph": "inception_v3", "devices": "k40x2"})


_register()
