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
    torch_export.device_map(g, d, best.placement)         # {"0": "cuda:0", "2": "cuda:1", ...}
    model = torch_export.apply_placement(model, best.placement, g, d)   # then train as before

apply_placement() is the code dplace-measure-torch runs a placement with (scripts/dplace-export-torch's
place_model): each module's parameters and buffers on its device, and the tensors routed between them.
"""
import json
import os

import dplace

from . import _export_torch as exporter

__all__ = ["export", "module_placement", "torch_devices", "device_map", "write_device_map", "read_device_map",
           "apply_placement", "remove_placement", "exporter"]


def export(model, batch=32, input_shape=None, *, input_dtype="float32", input_high=1000, optimizer="sgd", lr=0.1,
           momentum=0.9, weight_decay=0.0, loss="auto", name=None, profile=False, profile_steps=3, dtype="float32",
           tf32="torch"):
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
    dtype        the step's compute dtype: 'float32', or 'bfloat16' / 'float16' as mixed-precision training runs
                 them (torch.autocast on the forward and the loss; master weights and optimizer float32), so that
                 the ops' outputs carry the dtypes they run in ('float16' needs a torch that autocasts it on the CPU)
    tf32         which float32 products the graph lets run in TF32 (its "tf32"): 'torch' this process's
                 torch.backends settings (PyTorch's defaults: convolutions, cudnn.allow_tf32 True, not matrix
                 products, cuda.matmul.allow_tf32 False), 'on' both, 'off' neither

    The graph runs under the eager executor (Graph.executor 'torch', PyTorch's eager mode: docs/simulator.md,
    "Executors"); graph.with_executor('tf') gives a copy under TensorFlow's.

    Raises ValueError for a model or arguments the exporter refuses (its one-line message: a dtype it does not
    trace is named), ImportError
    without torch. The trace runs the model on fake tensors; torch's random state is reseeded (0), as the
    script does.
    """
    _call(exporter.check_dtype, dtype)
    tf32_field = _call(exporter.tf32_field, tf32)
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
                 weight_decay, loss, dtype)
    graph_name = name or exporter.default_graph_name(model_name, batch)
    ops, fx_of = _call(exporter.build_graph, step)
    if profile:
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
        for dev in devices:
            costs = exporter.profile_costs(step, ops, fx_of, profile_steps, dev, lambda s: None)
            key = "gpu" if dev == "cuda" else "cpu"
            for i, sec in costs.items():
                ops[i].setdefault("cost", {})[key] = sec
    return dplace.Graph.from_json(exporter.graph_text(graph_name, ops, tf32_field), what=graph_name)


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


def device_map(graph, devices, placement):
    """{module path: "cpu" or "cuda:N"} of a placement of an exported graph: module_placement's devices as
    Hugging Face's device_map writes them (dplace's gpu:N is torch's cuda:N, cpu:N is cpu), the modules
    alone (not the step's "input", "loss", "constant", "optimizer"); "" is the model's own forward. What
    `dplace-export-torch --map-placement P --graph G --device-map FILE` writes. Raises ValueError for a device
    without a torch name (neither cpu:N nor gpu:N)."""
    return _call(exporter.device_map_of, module_placement(graph, devices, placement))


def write_device_map(mapping, path):
    """Writes a device map ({module path: device}) as a JSON object to path, atomically."""
    text = "{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in mapping.items()) + "\n}\n"
    _call(exporter.write_atomic, os.fspath(path), text)


def read_device_map(path):
    """The device map of a JSON file: an object {module path: "cpu" | "cuda:N" | "gpu:N" | GPU number}, as
    write_device_map and `dplace-export-torch --device-map` write it. Raises ValueError naming the file."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not JSON: {e}") from None
    if not isinstance(doc, dict) or "format" in doc:
        raise ValueError(f"{path}: not a device map (a JSON object of module path -> device)")
    return doc


def apply_placement(model, placement, graph=None, devices=None, *, output_device="input"):
    """Places model for training, in place, and returns it: every module's parameters and buffers on its
    device, and its inputs and its operations routed there while the model runs, so that a training loop
    written for the unplaced model runs unchanged.

    placement     a device map {module path: "cpu" | "cuda:N" | "gpu:N" | GPU number} (Hugging Face's
                  device_map: a path places its whole subtree unless a child path says otherwise, "" is the
                  whole model), module_placement's result, the path of a device-map JSON file, or a placement
                  of an exported graph (dplace's array, or a dplace-placement file) with graph (and devices,
                  for an array)
    output_device where the model's output goes: "input" (the default) the device of the first tensor the
                  model is given, so that the loss meets targets kept beside the batch; a device; or None to
                  leave it on the last module's device

    Parameters move in place (the same Parameter objects), so an optimizer made before still updates them;
    make it after when it holds state already (momentum, Adam's moments), which stays where it was. The
    routing is forward hooks and a wrapper around model.forward, removed by remove_placement(model). Deep-copy
    the model before placing it rather than after: a copy of a placed model shares its routing.

    Raises ValueError, naming the module, for a path the model lacks, a device that is not cpu or cuda:N
    or that this machine lacks (cuda:0 without a GPU), or a module holding parameters or buffers that
    neither it nor a parent is mapped to; ImportError without torch."""
    import torch

    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: a torch.nn.Module, not {type(model).__name__}")
    what = "device_map"
    if isinstance(placement, (str, os.PathLike)):
        what = os.fspath(placement)
        mapping = _placement_file(what, graph)
    elif isinstance(placement, dict):
        mapping = placement
    else:
        if graph is None or devices is None:
            raise ValueError("placement: a placement array needs the graph it places and its devices")
        mapping = module_placement(graph, devices, placement)
    if mapping and all(isinstance(v, dict) and "device" in v for v in mapping.values()):
        mapping = _call(exporter.device_map_of, mapping)  # module_placement's result
    if output_device not in (None, "input"):
        name = exporter.torch_device_name(output_device)
        if name is None:
            raise ValueError(f"output_device: {output_device!r} is not \"input\", None, cpu or cuda:N")
        output_device = _call(exporter.check_torch_device, name, f"output_device {name}")
    device_of, torch_of = _call(exporter.resolve_module_map, model, mapping, what)
    _call(exporter.place_model, model, device_of, torch_of, output_device)
    return model


def remove_placement(model):
    """Removes apply_placement's routing from model (its hooks and forward wrapper) and returns it; the
    parameters and buffers stay where they were placed."""
    placer = model.__dict__.get("dplace_placer")
    if placer is not None:
        placer.remove()
    return model


def _placement_file(path, graph):
    """The module map of a device-map file, or of a dplace-placement file of graph."""
    doc = read_device_map(path) if not _is_placement_file(path) else None
    if doc is not None:
        return doc
    if graph is None:
        raise ValueError(f"{path}: a dplace-placement file needs the graph it places (graph=)")
    p = _call(exporter.load_json, path, "dplace-placement")
    names, place = _call(exporter.placement_arrays, p, path)
    if len(place) != len(graph):
        raise ValueError(f"{path}: places {len(place)} ops but the graph has {len(graph)}: not a placement of it")
    return _call(exporter.placement_modules, [{"scope": s} for s in graph.scopes], names, place)


def _is_placement_file(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return False  # read_device_map says what is wrong
    return isinstance(doc, dict) and doc.get("format") == "dplace-placement"
