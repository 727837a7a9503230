#!/usr/bin/python3
"""dplace.torch_export.apply_placement: a placed model trains as the unplaced one (every module on the CPU
here, half of them on a GPU where there is one), the device_map JSON round-trips through
`dplace-export-torch --map-placement --device-map`, and bad maps give one ValueError naming the module.
Skipped (77) without torch.

usage: test_py_torch_apply.py [TEST]   (tests/python/pyt.py: the runner's rules)"""
import copy
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyt  # noqa: E402
from pyt import check, check_eq, raises  # noqa: E402

dplace = pyt.import_dplace()
MODELS = os.path.join(pyt.ROOT, "tests", "data", "torch", "models.py")
TOL = 1e-6


def need_torch():
    try:
        import torch
    except ImportError as e:
        pyt.skip(f"no torch: {e} (scripts/setup.sh installs python3-torch)")
    from dplace import torch_export
    return torch, torch_export


def mlp(torch):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32), torch.nn.ReLU(),
                               torch.nn.Linear(32, 4))


def resnet(torch):
    """A small conv net with a residual add in its own forward and batch norm buffers."""
    class Res(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),
                                            torch.nn.ReLU())
            self.body = torch.nn.Sequential(torch.nn.Conv2d(8, 8, 3, padding=1), torch.nn.BatchNorm2d(8))
            self.head = torch.nn.Linear(8 * 8 * 8, 10)

        def forward(self, x):
            y = self.stem(x)
            y = torch.relu(y + self.body(y))
            return self.head(torch.flatten(y, 1))

    torch.manual_seed(0)
    return Res()


def train_step(torch, model, x, y):
    """The user's loop, the same code for the placed and the unplaced model: (loss, state after the step)."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model.train()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item(), {k: v.detach().cpu() for k, v in model.state_dict().items()}


def same_step(torch, te, build, shape, classes, mapping):
    model = build(torch)
    placed = te.apply_placement(copy.deepcopy(model), mapping)
    torch.manual_seed(1)
    x, y = torch.randn(4, *shape), torch.randint(0, classes, (4,))
    l0, s0 = train_step(torch, model, x, y)
    l1, s1 = train_step(torch, placed, x, y)
    check(abs(l0 - l1) <= TOL * max(1.0, abs(l0)), f"{mapping}: loss {l1} placed, {l0} unplaced")
    for k in s0:
        check(torch.allclose(s0[k].float(), s1[k].float(), atol=TOL, rtol=TOL),
              f"{mapping}: {k} after the step differs (max {(s0[k].float() - s1[k].float()).abs().max()})")


def test_mlp_on_cpu_trains_as_unplaced():
    torch, te = need_torch()
    same_step(torch, te, mlp, (16,), 4, {"0": "cpu", "2": "cpu", "4": "cpu"})


def test_residual_conv_on_cpu_trains_as_unplaced():
    torch, te = need_torch()
    same_step(torch, te, resnet, (3, 8, 8), 10, {"": "cpu", "body": "cpu", "head": "cpu"})


def test_gpu_placement_trains_as_unplaced():
    torch, te = need_torch()
    if not torch.cuda.is_available():
        pyt.skip("no CUDA GPU: the placement across a GPU and the CPU runs where torch sees one")
    # the residual's body on the GPU, its add (the model's own forward) and the rest on the CPU
    same_step(torch, te, resnet, (3, 8, 8), 10, {"": "cpu", "body": "cuda:0", "head": 0})
    model = te.apply_placement(resnet(torch), {"": "cpu", "body": "cuda:0"})
    check_eq(str(model.body[0].weight.device), "cuda:0", "body's weight")
    check_eq(str(model(torch.randn(2, 3, 8, 8)).device), "cpu", "the output beside the input")


def test_parameters_move_in_place():
    """An optimizer made before apply_placement still holds the model's parameters."""
    torch, te = need_torch()
    model = mlp(torch)
    before = [id(p) for p in model.parameters()]
    te.apply_placement(model, {"": "cpu"})
    check_eq([id(p) for p in model.parameters()], before, "the Parameter objects")


def test_parent_places_subtree():
    torch, te = need_torch()
    device_of = {"": "cpu", "body": "cuda:1", "body.1": "cpu"}
    check_eq(te.exporter.mapped_device(device_of, "body.0"), "cuda:1", "body.0 under body")
    check_eq(te.exporter.mapped_device(device_of, "body.1"), "cpu", "body.1, mapped itself")
    check_eq(te.exporter.mapped_device(device_of, "stem.1"), "cpu", "stem.1 under the model")
    check_eq(te.exporter.mapped_device({"body": "cpu"}, "stem.1"), None, "stem.1 without a mapped parent")


def test_device_names_normalised():
    torch, te = need_torch()
    name = te.exporter.torch_device_name
    for spec, want in ((1, "cuda:1"), (0, "cuda:0"), ("gpu:1", "cuda:1"), ("cuda:1", "cuda:1"), ("cuda", "cuda:0"),
                       ("cpu", "cpu"), ("cpu:3", "cpu"), (torch.device("cpu"), "cpu"),
                       (torch.device("cuda", 2), "cuda:2")):
        check_eq(name(spec), want, f"torch device of {spec!r}")
    for bad in (-1, True, "tpu:0", "gpu:x", "disk", 1.5, None):
        check_eq(name(bad), None, f"torch device of {bad!r}")


def test_cuda_refused_without_gpu():
    torch, te = need_torch()
    if torch.cuda.is_available():
        pyt.skip("torch sees a CUDA GPU")
    model = mlp(torch)
    for spec in ("cuda:0", 0, "gpu:0"):
        raises(ValueError, te.apply_placement, model, {"": "cpu", "2": spec}, match='module "2" on cuda:0')


def test_unknown_module_refused():
    torch, te = need_torch()
    raises(ValueError, te.apply_placement, mlp(torch), {"": "cpu", "9": "cpu"}, match='module "9" is not a module')


def test_unplaced_module_refused():
    torch, te = need_torch()
    raises(ValueError, te.apply_placement, mlp(torch), {"0": "cpu", "4": "cpu"}, match='module "2" holds')


def test_bad_device_refused():
    torch, te = need_torch()
    raises(ValueError, te.apply_placement, mlp(torch), {"": "tpu:0"}, match="not cpu, cuda:N")


def test_remove_placement():
    torch, te = need_torch()
    model = te.apply_placement(mlp(torch), {"": "cpu"})
    check("forward" in model.__dict__, "the forward wrapper")
    te.remove_placement(model)
    check("forward" not in model.__dict__, "the forward wrapper removed")
    hooks = sum(len(m._forward_pre_hooks) + len(m._forward_hooks) for m in model.modules())
    check_eq(hooks, 0, "hooks left")


def export_small(te, tmp):
    graph = os.path.join(tmp, "small.json")
    rc = te.exporter.main(["-q", f"{MODELS}:small", "--batch", "4", "--input-shape", "3,8,8", "-o", graph])
    check_eq(rc, 0, "export small")
    with open(graph) as f:
        return graph, json.load(f)


def map_placement(te, tmp, graph, g, names):
    """A placement of small: conv's ops on names[1], the rest on names[0]; its device map as the CLI writes it."""
    place, out = os.path.join(tmp, "p.json"), os.path.join(tmp, "device_map.json")
    with open(place, "w") as f:
        json.dump({"format": "dplace-placement", "version": 1, "devices": names,
                   "placement": [1 if "conv" in op.get("scope", "") else 0 for op in g["ops"]]}, f)
    rc = te.exporter.main(["-q", "--map-placement", place, "--graph", graph, "--device-map", out,
                           "-o", os.path.join(tmp, "modules.json")])
    check_eq(rc, 0, "--map-placement --device-map")
    return place, out


def test_device_map_round_trip():
    """The CLI's device map read back and applied: every parameter on its module's device."""
    torch, te = need_torch()
    tmp = pyt.tmpdir()
    graph, g = export_small(te, tmp)
    _, out = map_placement(te, tmp, graph, g, ["cpu:0", "cpu:1"])
    dm = te.read_device_map(out)
    check("conv" in dm and "fc" in dm and "input" not in dm and "loss" not in dm, f"its modules: {dm}")
    check_eq(set(dm.values()), {"cpu"}, "cpu:N is torch's cpu")
    sys.path.insert(0, os.path.dirname(MODELS))
    import models
    model = te.apply_placement(models.small(), out)
    check(all(p.device.type == "cpu" for p in model.parameters()), "every parameter on the CPU")
    te.write_device_map(dm, os.path.join(tmp, "again.json"))
    check_eq(te.read_device_map(os.path.join(tmp, "again.json")), dm, "written and read back")


def test_device_map_names_gpus_as_cuda():
    torch, te = need_torch()
    tmp = pyt.tmpdir()
    graph, g = export_small(te, tmp)
    place, out = map_placement(te, tmp, graph, g, ["gpu:0", "gpu:1"])
    dm = te.read_device_map(out)
    check_eq((dm["conv"], dm["fc"]), ("cuda:1", "cuda:0"), "gpu:N is cuda:N")
    gr = dplace.Graph.from_file(graph)
    with open(place) as f:
        placement = json.load(f)["placement"]
    d = dplace.Devices.preset("p100x2")  # cpu:0, gpu:0, gpu:1: the file's indices by name
    placement = [d.names.index(["gpu:0", "gpu:1"][i]) for i in placement]
    check_eq(te.device_map(gr, d, placement), dm, "device_map() = the CLI's")


def test_dplace_placement_file_applied():
    """A dplace-placement file with its graph places the modules as its device map does."""
    torch, te = need_torch()
    tmp = pyt.tmpdir()
    graph, g = export_small(te, tmp)
    place, _ = map_placement(te, tmp, graph, g, ["cpu:0", "cpu:1"])
    sys.path.insert(0, os.path.dirname(MODELS))
    import models
    model = te.apply_placement(models.small(), place, dplace.Graph.from_file(graph))
    check(model.__dict__.get("dplace_placer") is not None, "placed")
    raises(ValueError, te.apply_placement, models.small(), place, match="needs the graph")


def test_example_runs():
    """examples/torch_apply.py: a short search, its device map applied, training steps that print losses."""
    need_torch()
    tmp = pyt.tmpdir()
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(dplace.__file__)))
    out_map = os.path.join(tmp, "dm.json")
    rc, out, err = pyt.run([sys.executable, os.path.join(pyt.ROOT, "examples", "torch_apply.py"), "--time", "2",
                            "--steps", "2", "--batch", "8", "--device-map", out_map], env=env, timeout=120)
    check(rc == 0, f"torch_apply.py failed: {err}")
    check("step 2: loss" in out and "trained 2 steps" in out, f"its lines: {out}")
    check("stem" in json.load(open(out_map)), "the device map it wrote")


if __name__ == "__main__":
    pyt.main(globals())
