"""Type stubs of the dplace package (docs/python.md)."""
import os
from typing import Any, Callable, Iterator, Literal, Sequence

import numpy as np
import numpy.typing as npt

from ._dplace import MAX_DEVICES as MAX_DEVICES
from ._dplace import Delta as Delta
from ._dplace import Devices as Devices
from ._dplace import Error as Error
from ._dplace import FileError as FileError
from ._dplace import InputError as InputError
from ._dplace import MissingFileError as MissingFileError
from ._dplace import OutOfMemoryError as OutOfMemoryError
from ._dplace import Graph as Graph
from ._dplace import Placement
from ._dplace import SimBatch as SimBatch
from ._dplace import SimResult as SimResult
from ._dplace import Simulator as Simulator
from ._dplace import __version__ as __version__
from ._dplace import agents as agents
from ._dplace import device_presets as device_presets
from ._dplace import group as group
from ._dplace import group_methods as group_methods
from ._dplace import place as place
from ._dplace import place_methods as place_methods
from ._dplace import read_placement as read_placement
from ._dplace import resolve_placement as resolve_placement
from ._dplace import settings as settings
from ._dplace import unit_masks as unit_masks
from ._dplace import units as units
from ._dplace import write_placement as write_placement
from ._dplace import zoo_models as zoo_models

from . import envs as envs
from . import spaces as spaces
from . import torch_export as torch_export

__all__: list[str]

def as_graph(graph: Graph | str | os.PathLike[str]) -> Graph: ...
def as_devices(devices: Devices | str | os.PathLike[str]) -> Devices: ...

class BaselineReport:
    method: str
    status: str
    reason: str
    place_s: float
    n_used: int
    rules: str | None
    result: SimResult | None
    placement: npt.NDArray[np.int32] | None
    @property
    def ok(self) -> bool: ...
    @property
    def step_time(self) -> float | None: ...

class Baselines:
    reports: dict[str, BaselineReport]
    single_gpu_s: float | None
    expert_s: float | None
    best: str | None
    best_s: float | None
    bound: dict[str, float]
    units: str
    def __getitem__(self, method: str) -> BaselineReport: ...
    def __iter__(self) -> Iterator[BaselineReport]: ...
    def __len__(self) -> int: ...
    def table(self) -> str: ...

def baselines(graph: Graph | str, devices: Devices | str, methods: str | Sequence[str] | None = None, *,
              seed: int = 1, memory_fraction: float = 0.9, group: str | None = None, n_groups: int = 256,
              forward_only: bool = True, units: str = "auto", rules: str = "best",
              bound: bool = True) -> Baselines: ...

UpdateInfo = dict[str, Any]

class OptimizeResult:
    placement: npt.NDArray[np.int32] | None
    result: SimResult | None
    best_s: float | None
    best_by: Literal["none", "sample", "walk", "kept-walk", "greedy", "start", "search", "opening-draw",
                     "heavy-draw"]
    best_phase: Literal["train", "search-after"]
    best_update: int
    best_sample: int
    found_s: float
    history: list[UpdateInfo]
    train: dict[str, Any]
    references: dict[str, Any]
    search: dict[str, Any] | None
    first_tenth_mean_s: float | None
    last_tenth_mean_s: float | None
    tenth_updates: int
    interrupted: bool
    stopped_by_callback: bool
    units: str
    agent: str
    settings: str
    seed: int
    wall_s: float
    warnings: list[str]
    def summary(self) -> str: ...

def optimize(graph: Graph | str, devices: Devices | str, agent: str = "dplace", *, updates: int | None = None,
             placements: int | None = None, time: float | str | None = None, seed: int = 1, threads: int = 1,
             settings: dict[str, str | int | float | bool] | None = None, log: str | os.PathLike[str] | None = None,
             checkpoint: str | os.PathLike[str] | None = None, resume: str | os.PathLike[str] | None = None,
             callback: Callable[[UpdateInfo], bool | None] | None = None,
             out: str | os.PathLike[str] | None = None, plot: str | os.PathLike[str] | None = None,
             trace: str | os.PathLike[str] | None = None, checkpoint_every: int = 50,
             baselines: str | Sequence[str] | None = None, init: str | os.PathLike[str] | None = None,
             init_placement: Placement | None = None, search_after: float | str | None = None, noise: float = 0.0,
             steps: int = 1, warmup: int = 0, mean: bool = False, cache: bool = True, measure: str | None = None,
             measure_timeout: float = 600.0, units: str = "auto") -> OptimizeResult: ...
