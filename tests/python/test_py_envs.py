#!/usr/bin/python3
"""dplace.envs: the Gymnasium contract of PlacementEnv and NodeEnv (types, shapes, spaces, termination, the
same seed giving the same episode), their rewards against the simulator, action masks, pickling (and a
spawned process), and a gymnasium.Env subclass with registered ids when gymnasium imports (a stub module).

usage: test_py_envs.py [TEST]   (tests/python/pyt.py: the runner's rules)"""
import multiprocessing
import os
import pickle
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyt  # noqa: E402
from pyt import check, check_eq, raises  # noqa: E402

dplace = pyt.import_dplace()
import numpy as np  # noqa: E402
from dplace import envs  # noqa: E402

MODEL, PRESET = "inception_v3", "k40x2"


def check_obs(env, obs):
    check(env.observation_space.contains(obs), f"{type(env).__name__}: the observation lies in its space")
    F = len(envs.UNIT_FEATURES)
    check_eq(obs["features"].shape, (env.n_units, F), "features shape")
    check_eq(obs["features"].dtype, np.float32, "features dtype")
    check(np.all(np.isfinite(obs["features"])), "features finite")
    check_eq(obs["edges"].dtype, np.int32, "edges dtype")
    check_eq(obs["edges"].shape[1], 2, "edges shape")
    check_eq(obs["edge_bytes"].shape, (len(obs["edges"]),), "edge_bytes")
    check_eq(obs["mask"].shape, (env.n_units, env.n_devices), "mask shape")
    check_eq(obs["placement"].shape, (env.n_units,), "placement shape")


def test_placement_env_contract():
    env = envs.PlacementEnv(MODEL, PRESET, units="metis", groups=24)
    check_eq(env.metadata["render_modes"], ["ansi", "human"], "metadata")
    check(env.render_mode is None, "render_mode")
    check_eq(env.action_space.shape, (env.n_units,), "action space")
    check(env.n_units <= 24, "metis groups")
    raises(RuntimeError, env.step, np.zeros(env.n_units, dtype=np.int64), match="reset")
    obs, info = env.reset(seed=11)
    check_obs(env, obs)
    check_eq(info["action_mask"].shape, (env.n_units, env.n_devices), "info action_mask")
    sim = dplace.Simulator(env.graph, env.devices)
    a = env.action_space.sample()
    check(env.action_space.contains(a), "a sample lies in the action space")
    obs2, reward, terminated, truncated, info = env.step(a)
    check_obs(env, obs2)
    check(terminated is True and truncated is False, "one-step episodes")
    check(isinstance(reward, float), "reward is a float")
    want = sim.simulate(env.units.expand(a))
    check_eq(info["step_time"], want.step_time, "info step_time")
    check_eq(reward, -env.cost(want), "reward = -cost")
    check(np.array_equal(info["placement"], env.units.expand(a)), "info placement")
    check_eq(obs2["placement"].tolist(), list(a), "the observation holds the action")
    raises(RuntimeError, env.step, a, match="reset")
    # a GPU for every unit: CPU-only ops go to the CPU (soft placement): valid
    env.reset()
    _, r, _, _, info = env.step(np.full(env.n_units, 1))
    check(info["valid"] and info["reason"] == "", f"every unit on gpu:0: {info['reason']}")
    check_eq(info["step_time"], sim.simulate("gpu").step_time, "all units on gpu:0 is single GPU")
    # the same seed, the same samples and episode
    seqs = []
    for _ in range(2):
        e = envs.PlacementEnv(MODEL, PRESET, units="metis", groups=24, reward="neg_sqrt")
        e.reset(seed=5)
        acts = [e.action_space.sample() for _ in range(3)]
        rewards = []
        for x in acts:
            e.reset()
            rewards.append(e.step(x)[1])
        seqs.append((np.stack(acts), rewards))
    check(np.array_equal(seqs[0][0], seqs[1][0]) and seqs[0][1] == seqs[1][1], "same seed, same episodes")
    check(all(r < 0 for r in seqs[0][1]), "neg_sqrt rewards negative")
    rw, batch = env.evaluate(np.stack([a, np.full(env.n_units, 1)]), threads=2)
    check_eq(rw[0], -env.cost(want), "evaluate() row 0 = step()")
    check_eq(rw[1], r, "evaluate() row 1 = step()")
    env.reset()
    raises(ValueError, env.step, np.zeros(3, dtype=np.int64), match="shape")
    raises(ValueError, env.step, np.full(env.n_units, 7), match="out of range")
    raises(ValueError, env.step, np.full(env.n_units, 0.5), match="integer")
    check("step" in env.render(), "render('ansi') describes the last step")
    pen = envs.PlacementEnv(MODEL, PRESET, units="metis", groups=24, invalid_reward=-5.0)
    pen.reset()
    bad = np.zeros(pen.n_units, dtype=np.int64)
    cpu_only = pen.units.masks[:, 1:].any(axis=1)
    bad[cpu_only] = 1
    _, r, _, _, info = pen.step(bad)
    check(info["valid"] or r == -5.0, "invalid_reward replaces an invalid placement's reward")
    raises(ValueError, envs.PlacementEnv, MODEL, PRESET, reward="neg_log", match="reward")


def test_node_env_episode():
    env = envs.NodeEnv(MODEL, PRESET, units="metis", groups=16, start="gpu")
    obs, info = env.reset(seed=3)
    check_obs(env, obs)
    start_cost = env.cost(env.last_result)
    check_eq(start_cost, env.sim.simulate("gpu").step_time, "the episode starts from single GPU")
    check_eq(env.action_space.n, env.n_devices, "Discrete(D)")
    rewards, steps, done = [], 0, False
    seen = []
    while not done:
        m = env.action_masks()
        check_eq(m.dtype, np.bool_, "action_masks dtype")
        check(m.any(), "the mask is never empty")
        check(np.all(m <= env.units.masks[obs["unit"]]), "the mask within the unit's allowed devices")
        check(np.array_equal(m, info["action_mask"]), "info action_mask = action_masks()")
        seen.append(int(obs["unit"]))
        a = env.action_space.sample(mask=m.astype(np.int8))
        obs, r, done, trunc, info = env.step(a)
        check(not trunc, "never truncated")
        rewards.append(r)
        steps += 1
        check_eq(info["step_time"], env.sim.simulate(env.placement).step_time, f"step {steps}: step_time")
    check_eq(steps, env.n_units, "one step per unit")
    check_eq(sorted(seen), list(range(env.n_units)), "every unit once")
    check(abs(sum(rewards) - (start_cost - env.cost(env.last_result))) < 1e-9, "rewards telescope")
    raises(RuntimeError, env.step, 0, match="reset")
    # the same seed, the same episode
    runs = []
    for _ in range(2):
        e = envs.NodeEnv(MODEL, PRESET, units="metis", groups=16)
        e.reset(seed=9)
        rs, done = [], False
        while not done:
            _, r, done, _, _ = e.step(e.action_space.sample(mask=e.action_masks().astype(np.int8)))
            rs.append(r)
        runs.append(rs)
    check_eq(runs[0], runs[1], "same seed, same episode")
    env.reset()
    raises(ValueError, env.step, 9, match="out of range")
    raises(ValueError, env.step, 0.5)


def test_node_env_masks_and_starts():
    g, d = dplace.Graph.from_zoo("nmt2"), dplace.Devices.preset("k40x2")
    env = envs.NodeEnv(g, d, units="metis", groups=12, start="m-etf")
    env.reset()
    check(np.array_equal(env.placement, dplace.place(g, d, "m-etf")), "start m-etf")
    env.reset(options={"start": "cpu"})
    check(np.array_equal(env.placement, env.sim.placement("cpu")), "start cpu (options)")
    # GPUs of 1.5 GB: nmt2's 2.4 GB of parameters cannot all go to one; filling gpu:1 unit by unit, the memory
    # check rules it out before the parameters there exceed it
    devs = d.devices
    for k in (1, 2):
        devs[k]["memory_bytes"] = 3 * 2 ** 29
    small = dplace.Devices(devs, d.links)
    env = envs.NodeEnv(g, small, units="metis", groups=12, start="cpu")
    env.reset()
    ruled_out, done = 0, False
    while not done:
        m = env.action_masks()
        u = env._observe()["unit"]
        ruled_out += int(env.units.masks[u, 2] and not m[2])
        obs, r, done, _, info = env.step(int(np.flatnonzero(m)[-1]))
        params = env.sim.simulate(env.placement).param_bytes
        check(params[2] <= small.memory_bytes[2], "the mask kept gpu:1's parameters within its memory")
    check(ruled_out > 0, "some unit's mask ruled gpu:1 out (surely out of memory)")
    raises(ValueError, envs.NodeEnv, g, d, order="random", match="order")
    raises(ValueError, envs.NodeEnv, g, d, start=np.zeros(3, dtype=np.int32), match="start")


def test_default_units_and_pickling():
    env = envs.PlacementEnv("synthetic-600", "k40x2")
    u, n = dplace.units(env.graph)
    check_eq(env.n_units, n, "the default units are TensorFlow's colocation units")
    env.reset(seed=1)
    a = env.action_space.sample()
    want = env.step(a)[1]
    for e in (pickle.loads(pickle.dumps(env)),):
        e.reset()
        check_eq(e.step(a)[1], want, "an unpickled PlacementEnv")
    node = envs.NodeEnv("synthetic-600", "k40x2")
    node.reset(seed=2)
    for _ in range(5):
        node.step(node.action_space.sample(mask=node.action_masks().astype(np.int8)))
    copy = pickle.loads(pickle.dumps(node))
    check(np.array_equal(copy.placement, node.placement), "a pickled NodeEnv keeps its episode")
    acts = [int(np.flatnonzero(node.action_masks())[0])] * 3
    check_eq([copy.step(x)[1] for x in acts], [node.step(x)[1] for x in acts], "and goes on the same")


def _spawned_reward(env, action):
    env.reset()
    return env.step(action)[1]


def test_spawned_process():
    env = envs.PlacementEnv("synthetic-600", "k40x2")
    env.reset(seed=4)
    a = env.action_space.sample()
    want = _spawned_reward(env, a)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        got = pool.apply(_spawned_reward, (env, a))
    check_eq(got, want, "the reward in a spawned process")


STUB = '''
"""A stand-in for gymnasium: the parts dplace.envs uses, and a record of what it registers."""
import numpy as np
from dplace import spaces
registered = {}
class Env(spaces.Env):
    stub = True
class _Registry(dict):
    pass
class envs:
    registry = _Registry()
def register(id, entry_point, kwargs=None):
    envs.registry[id] = (entry_point, kwargs)
'''

SPACES_STUB = "from dplace.spaces import Box, Discrete, MultiDiscrete, Dict\n"

CHILD = '''
import numpy as np, gymnasium, dplace.envs as envs
assert envs.HAVE_GYMNASIUM
assert issubclass(envs.PlacementEnv, gymnasium.Env) and issubclass(envs.NodeEnv, gymnasium.Env)
reg = gymnasium.envs.registry
assert reg["dplace/Placement-v0"][0] == "dplace.envs:PlacementEnv", reg
assert reg["dplace/Node-v0"][0] == "dplace.envs:NodeEnv", reg
e = envs.PlacementEnv("synthetic-600", "k40x2")
assert isinstance(e, gymnasium.Env) and getattr(e, "stub", False)
obs, info = e.reset(seed=1)
obs, r, term, trunc, info = e.step(e.action_space.sample())
assert term and not trunc and r < 0
n = envs.NodeEnv("synthetic-600", "k40x2")
n.reset(seed=1)
print("stub ok", r)
'''


def test_gymnasium_subclass_with_stub():
    tmp = pyt.tmpdir()
    os.makedirs(os.path.join(tmp, "gymnasium"))
    with open(os.path.join(tmp, "gymnasium", "__init__.py"), "w") as f:
        f.write(textwrap.dedent(STUB))
    with open(os.path.join(tmp, "gymnasium", "spaces.py"), "w") as f:
        f.write(SPACES_STUB)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([tmp, os.path.dirname(os.path.dirname(dplace.__file__))]))
    rc, out, err = pyt.run([sys.executable, "-c", CHILD], env=env)
    check(rc == 0 and "stub ok" in out, f"with a gymnasium module: {out}{err}")
    check(not envs.HAVE_GYMNASIUM or "gymnasium" in sys.modules, "this process: no gymnasium unless installed")


if __name__ == "__main__":
    pyt.main(globals())
