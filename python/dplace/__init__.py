"""dplace from Python: fast device placements for neural-network training graphs.

The C library's graphs, device sets, simulator, baseline placers, groupers and
optimisation jobs (every learned agent and dplace's search), with numpy arrays
in and out, and placement environments with the Gymnasium API (dplace.envs).

    import dplace
    g = dplace.Graph.from_zoo("nmt4")
    d = dplace.Devices.preset("k40x4")
    sim = dplace.Simulator(g, d)
    r = sim.simulate(g.expert_placement(d))        # r.step_time, r.valid, r.peak_bytes
    b = dplace.baselines(g, d)                      # every baseline placer, simulated
    best = dplace.optimize(g, d, agent="search", time=30)

A placement is an int32 numpy array with one device index per op. Errors of the
library raise a dplace.Error carrying its one-line message, as the subclass that
is also Python's own exception where one fits: MissingFileError (a
FileNotFoundError), FileError (an OSError), InputError (a ValueError: a malformed
or inconsistent input), OutOfMemoryError (a MemoryError). Bad arguments raise
TypeError or ValueError naming them. The GIL is released while the library runs.
dplace.envs, dplace.spaces and dplace.torch_export are imported on first use.
docs/python.md is the reference and a tutorial.
"""
import importlib
import math
import os
import re
import threading
import warnings

from . import _dplace
from ._dplace import (MAX_DEVICES, Delta, Devices, Error, FileError, Graph, InputError, MissingFileError,
                      OutOfMemoryError, SimBatch, SimResult, Simulator, __version__, agents, device_presets, group,
                      group_methods, place, place_methods, read_placement, resolve_placement, settings, unit_masks,
                      units, write_placement, zoo_models)

__all__ = [
    "Error", "FileError", "MissingFileError", "InputError", "OutOfMemoryError", "Graph", "Devices", "Simulator",
    "SimResult", "SimBatch", "Delta", "Baselines", "BaselineReport",
    "OptimizeResult", "baselines", "optimize", "place", "group", "units", "unit_masks", "resolve_placement",
    "read_placement", "write_placement", "zoo_models", "device_presets", "agents", "settings", "place_methods",
    "group_methods", "as_graph", "as_devices", "MAX_DEVICES", "__version__", "envs", "spaces", "torch_export",
]

# The submodules imported on first use (PEP 562), so that `import dplace` stays fast and imports neither
# gymnasium nor torch: dplace.envs after a plain `import dplace` imports dplace.envs then.
_LAZY = ("envs", "spaces", "torch_export")


def __getattr__(name):
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def as_graph(graph):
    """A Graph from a Graph, a zoo model's name ("nmt4") or a dplace-graph file's path."""
    if isinstance(graph, Graph):
        return graph
    if isinstance(graph, (str, os.PathLike)):
        name = os.fspath(graph)
        if os.path.exists(name) or name.endswith(".json"):
            return Graph.from_file(name)
        return Graph.from_zoo(name)
    raise TypeError(f"graph: a dplace.Graph, a zoo model's name or a graph file's path, not {type(graph).__name__}")


def as_devices(devices):
    """A Devices from a Devices, a preset's name ("k40x4") or a dplace-devices file's path."""
    if isinstance(devices, Devices):
        return devices
    if isinstance(devices, (str, os.PathLike)):
        return Devices.load(os.fspath(devices))
    raise TypeError(f"devices: a dplace.Devices, a preset's name or a devices file's path, "
                    f"not {type(devices).__name__}")


# ---------------------------------------------------------------------------------------------------------------
# The baseline placers


class BaselineReport:
    """One baseline placer's result: method, status ('ok', or why it could not apply: 'unsupported', ...),
    reason, place_s (its wall-clock seconds), n_used (devices holding ops), rules (m-topo, m-etf, m-sct: the
    rule set of the placement kept, 'dataflow' or 'paper'; None for the others), result (a SimResult, None
    when status is not 'ok') and placement (an int32 array, None likewise)."""

    __slots__ = ("method", "status", "reason", "place_s", "n_used", "rules", "result", "placement")

    def __init__(self, d):
        for k in self.__slots__:
            setattr(self, k, d[k])

    @property
    def ok(self):
        """Whether the placer applied (its placement was simulated)."""
        return self.status == "ok"

    @property
    def step_time(self):
        """The simulated step time, None when the placer did not apply."""
        return self.result.step_time if self.result is not None else None

    def __repr__(self):
        if not self.ok:
            return f"<BaselineReport {self.method}: {self.status}: {self.reason}>"
        r = self.result
        return f"<BaselineReport {self.method}: {r.step_time:.6g} s{'' if r.valid else ', ' + r.verdict}>"


class Baselines:
    """Every baseline placer asked for, run and simulated (dplace.baselines): reports[name] (a BaselineReport
    per placer, in the order run), single_gpu_s and expert_s (None when not run or not valid), best and best_s
    (the fastest valid placer), bound (the lower bounds of any placement, a dict with bound_s), units (what the
    placers but cpu, gpu and expert placed: 'op' or 'module[:DEPTH]')."""

    def __init__(self, d):
        self.units = d["units"]
        self.reports = {r["method"]: BaselineReport(r) for r in d["reports"]}
        self.single_gpu_s, self.expert_s = d["single_gpu_s"], d["expert_s"]
        self.best, self.best_s, self.bound = d["best"], d["best_s"], d["bound"]

    def __getitem__(self, method):
        return self.reports[method]

    def __iter__(self):
        return iter(self.reports.values())

    def __len__(self):
        return len(self.reports)

    def table(self):
        """The reports as lines of text, as `dplace baseline` prints them."""
        lines = [f"{'method':10s} {'step (s)':>12s}  {'valid':5s}  {'place (s)':>9s}  note"]
        for r in self:
            if r.ok:
                res = r.result
                lines.append(f"{r.method:10s} {res.step_time:12.6f}  {'yes' if res.valid else 'no':5s}  "
                             f"{r.place_s:9.3f}  {res.reason}")
            else:
                lines.append(f"{r.method:10s} {'-':>12s}  {'-':5s}  {r.place_s:9.3f}  {r.status}: {r.reason}")
        if self.bound and self.bound.get("bound_s"):
            lines.append(f"{'bound':10s} {self.bound['bound_s']:12.6f}")
        return "\n".join(lines)

    def __repr__(self):
        best = f", best {self.best} {self.best_s:.6g} s" if self.best else ""
        return f"<Baselines {len(self)} placers{best}>"


def baselines(graph, devices, methods=None, *, seed=1, memory_fraction=0.9, group=None, n_groups=256,
              forward_only=True, units="auto", rules="best", bound=True):
    """Runs the baseline placers on graph and devices and simulates their placements.

    methods: None (every placer: cpu, gpu, expert, scotch, mincut, metis, m-topo, m-etf, m-sct, accel-balanced,
    accel-sequential: accelerate's infer_auto_device_map, on a PyTorch export only), a list of
    names or a comma-separated str. seed, memory_fraction, group (a grouping step: 'none', 'colocation',
    'metis', ...), n_groups and forward_only are the placers' options (docs/baselines.md). units: what every
    placer but cpu, gpu and expert places: 'op', 'module' (a PyTorch export's modules, each whole with its
    gradients and updates), 'module:DEPTH', or 'auto' (modules on an export, else ops), as `dplace baseline
    --units`. rules: the list placers' forward-only placement (docs/baselines.md): 'best' (each makes
    dplace's and Baechi's published placement and the faster is kept; the report's rules says which),
    'dataflow' or 'paper'. bound: compute the lower bound. A placer that cannot apply is reported, not
    raised. Returns a Baselines.

    The placers run one at a time in a process. METIS points the process's file descriptor 1 (stdout) at
    /dev/null while it partitions (it prints on it): output other threads write to stdout meanwhile is lost.
    """
    if methods is not None and not isinstance(methods, str):
        methods = list(methods)
        for m in methods:
            if not isinstance(m, str):
                raise TypeError(f"methods: placer names (str), not {type(m).__name__}")
    return Baselines(_dplace._baselines(as_graph(graph), as_devices(devices), methods, seed=seed,
                                        memory_fraction=memory_fraction, group=group, n_groups=n_groups,
                                        forward_only=forward_only, units=units, rules=rules, bound=bound))


# ---------------------------------------------------------------------------------------------------------------
# Optimisation jobs


class OptimizeResult:
    """What dplace.optimize found: the keys of `dplace optimize --json` as attributes (docs/cli.md lists
    them), with the same names and meanings, and what only Python has.

    best_step_time_s   the job's answer: the step time of `placement`, the placement written to `out` (after
                  search-after when it ran; None when no valid placement was found)
    best_by       what found it: 'sample', 'walk', 'kept-walk', 'greedy' (a learned agent's),
                  'opening-draw', 'heavy-draw', 'whole-layers' (the pretrained placer's zero-shot), 'start' or 'search'
                  (the search's)
    best_phase    'train' (the agent or the search itself) or 'search-after'
    best_update, best_sample, best_found_s   when it was found (in its phase; seconds into the job)
    train_best_step_time_s, train_best_by, ...   the training's own best, before search-after
    updates, samples, train_s, single_gpu_s, expert_s, best_baseline, best_baseline_s, lower_bound_s, ...
                  as in the JSON summary
    placement     the best placement (int32 array; None when none)        [Python only]
    result        its SimResult (one step, no noise)                       [Python only]
    history       one dict per update (what the callback saw): phase, update, samples, best_s, best_by, n,
                  valid, mean_s, median_s, elapsed_s, entropy, grouper_entropy, kl, elite_s, greedy_s, baseline
                                                                           [Python only]
    warnings, wall_s, stopped_by_callback                                  [Python only]
    """

    def __init__(self, d):
        self.__dict__.update(d)

    def __repr__(self):
        best = ("no valid placement" if self.best_step_time_s is None
                else f"best {self.best_step_time_s:.6g} s by {self.best_by}")
        return (f"<OptimizeResult agent {self.agent}: {best}, {self.updates} updates"
                f"{', interrupted' if self.interrupted else ''}>")

    def summary(self):
        """A few lines: the best beside single GPU, the expert, the best baseline and the bound."""
        best = self.best_step_time_s
        out = [f"agent {self.agent}: {self.updates} updates, {self.samples} placements in {self.wall_s:.1f} s"]
        if best is not None:
            out.append(f"{'best':<22s}{best:.6f} s  ({self.best_by}, {self.best_phase}, update "
                       f"{self.best_update}, after {self.best_found_s:.1f} s)")
        for label, v in (("single GPU", self.single_gpu_s), ("expert", self.expert_s),
                         (f"baseline ({self.best_baseline})", self.best_baseline_s), ("bound", self.lower_bound_s)):
            if v is not None:
                ratio = f"  ({best / v:.3f} x)" if best is not None and v > 0 else ""
                out.append(f"{label:<22s}{v:.6f} s{ratio}")
        return "\n".join(out)


_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([smh]?)\s*$")


def _seconds(value, what):
    """A duration: a number of seconds, or a str such as '90s', '2m', '1h'."""
    if isinstance(value, bool):
        raise TypeError(f"{what}: seconds (a number) or a duration such as '90s', '2m', not a bool")
    if isinstance(value, (int, float)):
        v = float(value)
    elif isinstance(value, str):
        m = _DURATION.match(value)
        if not m:
            raise ValueError(f"{what}: {value!r} is not a duration (90, '90s', '2m', '1h')")
        v = float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]
    else:
        raise TypeError(f"{what}: seconds (a number) or a duration such as '90s', not {type(value).__name__}")
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{what}: {value!r} must be a positive duration")
    return v


def _setting_text(key, value):
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value
    raise TypeError(f"settings[{key!r}]: a str, number or bool, not {type(value).__name__}")


def _budget(value, what, lo):
    if value is None:
        return -1
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what}: an int or None, not {type(value).__name__}")
    if value < lo:
        raise ValueError(f"{what}: {value}, must be at least {lo}")
    return value


def _path(value, what):
    if value is None:
        return None
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError(f"{what}: a path, not {type(value).__name__}")
    return os.fsdecode(value)


def optimize(graph, devices, agent="dplace", *, updates=None, placements=None, time=None, seed=1, threads=1,
             settings=None, log=None, checkpoint=None, resume=None, callback=None, out=None, plot=None, trace=None,
             checkpoint_every=50, baselines=None, init=None, init_placement=None, search_after=None, noise=0.0,
             steps=1, warmup=0, mean=False, cache=True, measure=None, measure_timeout=600.0, units="auto"):
    """Runs one optimisation job, as `dplace optimize` does, and returns an OptimizeResult.

    graph, devices and agent may be given by position; every other argument is keyword-only.

    agent         a learned agent's preset (dplace.agents(): 'dplace', 'hp', 'colocrl', 'eagle', 'post', 'mars',
                  ...) or 'search', dplace's own search (docs/agents.md, docs/search.md)
    updates, placements, time   the budget: policy updates (the search's steps), placements evaluated, or wall
                  time (seconds, or '90s', '2m'); give at most one of updates and placements (none of the three:
                  1,000 updates of an agent, 2,000 of the search); time includes search-after
    seed, threads the run's seed and threads (the evaluations, the policy's products, the search's chains)
    settings      a dict of settings by name (dplace.settings(agent) lists them; 'lr', 'batch', 'grouper',
                  'groups', 'elite-moves', 'search-after', ...; '_' may stand for '-'): values are str, numbers
                  or bools, set as `--set KEY=VALUE` sets them
    log, checkpoint, resume, out, plot, trace   the outputs: the per-sample log (CSV, with X.updates.csv and
                  X.search.csv beside it), the checkpoint (written every checkpoint_every updates, at the end
                  and when stopped), a checkpoint to continue from, the best placement file, the training
                  curve (SVG), the best placement's timeline (Chrome trace)
    callback      called after each update with a dict (the history's entry); returning False stops the run as
                  Ctrl-C does (None or True goes on); an exception it raises stops the run and is raised
    baselines     the placers to compare with and start the search from (None: all; a list, a str, 'none')
    init          a checkpoint whose networks a learned agent starts from; init_placement a start placement
                  of the search (an array); search_after seconds of search after a learned agent
    noise, steps, warmup, mean, cache, measure, measure_timeout   the evaluation (docs/measure.md)
    units         what every method places (--units): 'auto' (whole modules on a PyTorch export, else ops),
                  'op', 'module' or 'module:DEPTH'

    The same arguments give the command line's numbers. Ctrl-C (on the main thread) stops the run cleanly:
    the update in flight is abandoned, the checkpoint written, then KeyboardInterrupt is raised. Jobs run one
    at a time in a process (the policy's thread pool is the process's: dp_nn_set_threads); the GIL is
    released while the job runs, and taken back for each callback.
    """
    graph, devices = as_graph(graph), as_devices(devices)
    if not isinstance(agent, str):
        raise TypeError(f"agent: a preset's name or 'search', not {type(agent).__name__}")
    updates = _budget(updates, "updates", 0)
    placements = _budget(placements, "placements", 1)
    seconds = -1.0 if time is None else _seconds(time, "time")
    after = -1.0 if search_after is None else _seconds(search_after, "search_after")
    if settings is None:
        settings = {}
    if not isinstance(settings, dict):
        raise TypeError(f"settings: a dict of setting names to values, not {type(settings).__name__}")
    sets = []
    for k, v in settings.items():
        if not isinstance(k, str):
            raise TypeError(f"settings: keys are setting names (str), not {type(k).__name__}")
        sets.append((k.replace("_", "-"), _setting_text(k, v)))
    if baselines is not None and not isinstance(baselines, str):
        baselines = ",".join(baselines)
    for name, v in (("seed", seed), ("threads", threads), ("checkpoint_every", checkpoint_every), ("steps", steps),
                    ("warmup", warmup)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name}: an int, not {type(v).__name__}")
    # the ranges and the rules across arguments are the library's (dp_optimize_prepare), as the command line's
    for name, v in (("noise", noise), ("measure_timeout", measure_timeout)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"{name}: a number, not {type(v).__name__}")
    if measure is not None and not isinstance(measure, str):
        raise TypeError(f"measure: a shell command (str), not {type(measure).__name__}")
    d = _dplace._optimize(
        graph, devices, agent, sets, updates, placements, seconds, seed, threads, baselines, init_placement,
        _path(init, "init"), _path(out, "out"), _path(log, "log"), _path(plot, "plot"), _path(trace, "trace"),
        _path(checkpoint, "checkpoint"), checkpoint_every, _path(resume, "resume"), float(noise), steps, warmup,
        bool(mean), bool(cache), measure, float(measure_timeout), after, callback,
        threading.current_thread() is threading.main_thread(), units)
    for w in d["warnings"]:
        warnings.warn(w, RuntimeWarning, stacklevel=2)
    return OptimizeResult(d)
