"""Minimal Gymnasium-style spaces and Env base, used by dplace.envs when gymnasium is not installed.

Debian does not package gymnasium. These classes follow its API as far as dplace's environments use it:
Box, Discrete, MultiDiscrete and Dict with shape, dtype, sample() (with an optional mask for the discrete
ones), contains(), seed() and a seeded np_random (numpy's PCG64 from a SeedSequence, as gymnasium's
seeding.np_random makes it, so that a seed gives the same numbers with or without gymnasium); and Env with
reset()'s seeding, np_random, metadata, render_mode, spec, unwrapped and close(). When gymnasium imports,
dplace.envs uses gymnasium's own classes instead.
"""
import numpy as np

__all__ = ["Space", "Box", "Discrete", "MultiDiscrete", "Dict", "Env", "np_random"]


def np_random(seed=None):
    """(generator, seed): numpy's PCG64 seeded from a SeedSequence of seed (None: fresh entropy)."""
    if seed is not None and not (isinstance(seed, (int, np.integer)) and seed >= 0):
        raise ValueError(f"seed must be a non-negative int or None, not {seed!r}")
    seq = np.random.SeedSequence(None if seed is None else int(seed))
    return np.random.Generator(np.random.PCG64(seq)), seq.entropy


class Space:
    """A set of values with a shape, a dtype, a seeded generator and sample()."""

    def __init__(self, shape=None, dtype=None, seed=None):
        self._shape = None if shape is None else tuple(int(s) for s in shape)
        self.dtype = None if dtype is None else np.dtype(dtype)
        self._np_random = None
        if seed is not None:
            self.seed(seed)

    @property
    def shape(self):
        return self._shape

    @property
    def np_random(self):
        if self._np_random is None:
            self.seed()
        return self._np_random

    def seed(self, seed=None):
        """Seeds the space's generator; returns [the seed used]."""
        self._np_random, s = np_random(seed)
        return [s]

    def __contains__(self, x):
        return self.contains(x)


class Box(Space):
    """A box in R^n (or Z^n for integer dtypes): low <= x <= high elementwise."""

    def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
        dtype = np.dtype(dtype)
        if shape is None:
            shape = np.broadcast(np.asarray(low), np.asarray(high)).shape
        super().__init__(shape, dtype, seed)
        self.low = np.broadcast_to(np.asarray(low, dtype=dtype), self.shape).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=dtype), self.shape).copy()

    def sample(self, mask=None):
        if mask is not None:
            raise ValueError("Box.sample takes no mask")
        if np.issubdtype(self.dtype, np.integer):
            return self.np_random.integers(self.low, self.high, endpoint=True, dtype=self.dtype)
        low = np.where(np.isfinite(self.low), self.low, -1e6)
        high = np.where(np.isfinite(self.high), self.high, 1e6)
        return self.np_random.uniform(low, high).astype(self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return bool(x.shape == self.shape and np.can_cast(x.dtype, self.dtype, "same_kind")
                    and np.all(x >= self.low) and np.all(x <= self.high))

    def __repr__(self):
        return f"Box({self.low.min() if self.low.size else 0}, {self.high.max() if self.high.size else 0}, " \
               f"{self.shape}, {self.dtype})"

    def __eq__(self, other):
        return (isinstance(other, Box) and self.shape == other.shape and self.dtype == other.dtype
                and np.array_equal(self.low, other.low) and np.array_equal(self.high, other.high))


class Discrete(Space):
    """{start, ..., start + n - 1}."""

    def __init__(self, n, seed=None, start=0):
        if n < 1:
            raise ValueError(f"Discrete: n must be positive, not {n}")
        super().__init__((), np.int64, seed)
        self.n, self.start = int(n), int(start)

    def sample(self, mask=None):
        if mask is None:
            return self.start + int(self.np_random.integers(self.n))
        mask = np.asarray(mask)
        if mask.shape != (self.n,):
            raise ValueError(f"Discrete.sample: mask of shape {mask.shape}, expected ({self.n},)")
        allowed = np.flatnonzero(mask)
        return self.start + int(self.np_random.choice(allowed)) if allowed.size else self.start

    def contains(self, x):
        if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            return self.start <= int(x) < self.start + self.n
        x = np.asarray(x)
        return x.shape == () and np.issubdtype(x.dtype, np.integer) and self.start <= int(x) < self.start + self.n

    def __repr__(self):
        return f"Discrete({self.n})"

    def __eq__(self, other):
        return isinstance(other, Discrete) and self.n == other.n and self.start == other.start


class MultiDiscrete(Space):
    """A vector whose entry i lies in {0, ..., nvec[i] - 1}."""

    def __init__(self, nvec, dtype=np.int64, seed=None):
        self.nvec = np.asarray(nvec, dtype=np.int64)
        if np.any(self.nvec < 1):
            raise ValueError("MultiDiscrete: every nvec entry must be positive")
        super().__init__(self.nvec.shape, dtype, seed)

    def sample(self, mask=None):
        if mask is None:
            return (self.np_random.random(self.nvec.shape) * self.nvec).astype(self.dtype)
        if len(mask) != len(self.nvec):
            raise ValueError(f"MultiDiscrete.sample: {len(mask)} masks for {len(self.nvec)} entries")
        out = np.empty(self.nvec.shape, dtype=self.dtype)
        for i, (n, m) in enumerate(zip(self.nvec, mask)):
            allowed = np.flatnonzero(np.asarray(m)[:n])
            out[i] = self.np_random.choice(allowed) if allowed.size else 0
        return out

    def contains(self, x):
        x = np.asarray(x)
        return bool(x.shape == self.shape and np.issubdtype(x.dtype, np.integer) and np.all(x >= 0)
                    and np.all(x < self.nvec))

    def __repr__(self):
        return f"MultiDiscrete({self.nvec.tolist() if self.nvec.size <= 8 else f'[{self.nvec.size} entries]'})"

    def __eq__(self, other):
        return isinstance(other, MultiDiscrete) and np.array_equal(self.nvec, other.nvec)


class Dict(Space):
    """A dict of named spaces, sampled and checked key by key."""

    def __init__(self, spaces, seed=None):
        self.spaces = dict(spaces)
        super().__init__(None, None, None)
        if seed is not None:
            self.seed(seed)

    def seed(self, seed=None):
        self._np_random, s = np_random(seed)
        subs = self._np_random.integers(2 ** 31, size=len(self.spaces))
        for sp, ss in zip(self.spaces.values(), subs):
            sp.seed(int(ss))
        return [s]

    def sample(self, mask=None):
        return {k: sp.sample() for k, sp in self.spaces.items()}

    def contains(self, x):
        return isinstance(x, dict) and x.keys() == self.spaces.keys() and all(
            sp.contains(x[k]) for k, sp in self.spaces.items())

    def __getitem__(self, key):
        return self.spaces[key]

    def keys(self):
        return self.spaces.keys()

    def items(self):
        return self.spaces.items()

    def __repr__(self):
        return "Dict(" + ", ".join(f"{k!r}: {v!r}" for k, v in self.spaces.items()) + ")"


class Env:
    """gymnasium.Env's interface: reset(*, seed=None, options=None) -> (obs, info), step(action) -> (obs,
    reward, terminated, truncated, info), render(), close(), action_space, observation_space, metadata,
    render_mode, spec, np_random (seeded by reset(seed=...)), unwrapped."""

    metadata = {"render_modes": []}
    render_mode = None
    spec = None
    action_space = None
    observation_space = None
    _np_random = None

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._np_random, _ = np_random(seed)
        return None

    def step(self, action):
        raise NotImplementedError

    def render(self):
        return None

    def close(self):
        pass

    @property
    def np_random(self):
        if self._np_random is None:
            self._np_random, _ = np_random()
        return self._np_random

    @np_random.setter
    def np_random(self, value):
        self._np_random = value

    @property
    def unwrapped(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.close()
        return False

    def __str__(self):
        return f"<{type(self).__name__} instance>"
