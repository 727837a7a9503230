"""PyTorch models as dplace graphs, and placements back to modules, from Python.

The logic is scripts/dplace-export-torch's (docs/import.md), which the build copies into this package as
dplace._export_torch: export() traces one training step of a torch.nn.Module (forward, loss, backward,
optimizer update) with torch.fx and returns it as a dplace.Graph, the same graph the script writes;
module_placement() maps a placement of that graph back to module paths, as `dplace-export-torch
--map-placement` does. torch (Debian's python3-torch) is imported only when a function needs it.

    import torch, dplace
    from dplace import torch_export
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10))
    g = torch_export.export(model, batch=64, input_shape=(512,))
    d = dplace.Devices.preset("p100x2")
    best = dplace.optimize(g, d, agent="search", time=10)
    torch_export.module_placement(g, d, best.placement)   # {"0": {"device": "gpu:0", ...}, ...}
"""
import dplace

from . import _export_torch as exporter

__all__ = ["export", "module_placement", "torch_devices", "exporter"]


def export(model, batch=32, input_shape=None, *, input_dtype="float32", input_high=1000, optimizer="sgd", lr=0.1,
           momentum=0.9, weight_decay=0.0, loss="auto", name=None, profile=False, profile_steps=3):
    """One training step of model as a dplace.Graph.

    model        a torch.nn.Module, or a spec as the script takes it: a torchvision model's name ("resnet50")
                 or "module:callable" (a module on sys.path or a .py file, and a function returning the model)
    batch        the batch size
    input_shape  one sample's shape without the batch (a tuple); None for a torchvision name (3x224x224,
                 3x299x299 for inception_v3)
    input_dtype  'float32' or 'int64' (token ids below input_high)
    optimizer    'sgd' (lr, momentum, weight_decay) or 'adam'; loss 'auto', 'cross_entropy' or 'mse'
    name         the graph's name (default: the model's and the batch, "resnet50_b32")
    profile      time each op on this machine's CPU (and GPU) as its measured cost (profile_steps steps)

    Raises ValueError for a model or arguments the exporter refuses (its one-line message), ImportError
    without torch. The trace runs the model on fake tensors; torch's random state is reseeded (0), as the
    script does.
    """
    import torch

    torch.manual_seed(0)
    if isinstance(model, str):
        spec = model
        model, model_name = _call(exporter.load_model, spec)
        if input_shape is None:
            if ":" in spec:
                raise ValueError(f'model "{spec}": input_shape is required for module:callable')
            input_shape = exporter.default_input_shape(spec)
    else:
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"model: a torch.nn.Module or a model spec (str), not {type(model).__name__}")
        spec = model_name = type(model).__name__
        if input_shape is None:
            raise ValueError("input_shape: one sample's shape without the batch, such as (3, 224, 224)")
    shape = tuple(int(s) for s in input_shape)
    if batch < 1 or not shape or min(shape) < 1:
        raise ValueError(f"batch {batch} and input_shape {shape}: positive sizes")
    step = _call(exporter.trace_step, model, spec, batch, shape, input_dtype, input_high, optimizer, lr, momentum,
                 weight_decay, loss)
    graph_name = name or exporter.default_graph_name(model_name, batch)
    ops, fx_of = _call(exporter.build_graph, step)
    if profile:
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
        for dev in devices:
            costs = exporter.profile_costs(step, ops, fx_of, profile_steps, dev, lambda s: None)
            key = "gpu" if dev == "cuda" else "cpu"
            for i, sec in costs.items():
                ops[i].setdefault("cost", {})[key] = sec
    return dplace.Graph.from_json(exporter.graph_text(graph_name, ops), what=graph_name)


def _call(fn, *args):
    try:
        return fn(*args)
    except exporter.InputError as e:
        raise ValueError(str(e)) from None


def module_placement(graph, devices, placement):
    """{module path: {"device": the device running most of its ops, "ops": {device: count}}} for a placement
    of an exported graph: a module's forward ops, their gradients and its parameters' updates count for it;
    "" is the model's own forward, "input", "loss" and "optimizer" the step's other parts."""
    placement = [int(x) for x in placement]
    if len(placement) != len(graph):
        raise ValueError(f"placement: {len(placement)} devices for a graph of {len(graph)} ops")
    names = devices.names
    if placement and not 0 <= min(placement) <= max(placement) < len(names):
        raise ValueError(f"placement: devices out of range 0..{len(names) - 1}")
    ops = [{"scope": s} for s in graph.scopes]
    return exporter.placement_modules(ops, names, placement)


def torch_devices(mapping):
    """{module path: "cpu" or "cuda:N"} of module_placement's result: dplace's gpu:N is torch's cuda:N."""
    out = {}
    for path, v in mapping.items():
        dev = v["device"]
        out[path] = "cpu" if dev.startswith("cpu") else "cuda:" + dev.split(":", 1)[1]
    return out
