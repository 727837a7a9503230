#!/usr/bin/python3
"""dplace.torch_export.export's dtype and tf32: a bfloat16 export carries bfloat16 products with float32
master weights and update, a dtype the exporter cannot trace is refused in one line naming it, and the
graph records which float32 products may run in TF32. Skipped (77) without torch.

usage: test_py_torch_dtype.py [TEST]   (tests/python/pyt.py: the runner's rules)"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyt  # noqa: E402
from pyt import check, check_eq, raises  # noqa: E402

dplace = pyt.import_dplace()


def need_torch():
    try:
        import torch
    except ImportError as e:
        pyt.skip(f"no torch: {e} (scripts/setup.sh installs python3-torch)")
    from dplace import torch_export
    return torch, torch_export


def conv_net(torch):
    """A convolution, a relu and a linear layer: products of both kinds."""
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                               torch.nn.Linear(8 * 8 * 8, 10))


def exported(te, model, **kw):
    """The export of model (a [3, 8, 8] input, batch 4) as its JSON document."""
    g = te.export(model, batch=4, input_shape=(3, 8, 8), **kw)
    return json.loads(g.to_json())


def test_bfloat16_export_carries_bfloat16():
    torch, te = need_torch()
    doc = exported(te, conv_net(torch), dtype="bfloat16")
    products = [op for op in doc["ops"] if op["type"] in ("convolution", "convolution_backward", "addmm", "mm")]
    check(len(products) >= 4, f"the products of the step: {[op['type'] for op in products]}")
    for op in products:
        dtypes = {o["dtype"] for o in op["outputs"] if "dtype" in o}
        check_eq(dtypes, {"bfloat16"}, f"{op['name']}'s outputs")
    for op in doc["ops"]:
        if op["type"] in ("Parameter", "add_", "mul_"):  # the master weights and SGD's update stay float32
            check_eq(op["outputs"][0]["dtype"], "float32", f"{op['name']}'s output")


def test_unknown_dtype_refused():
    torch, te = need_torch()
    e = raises(ValueError, te.export, conv_net(torch), 4, (3, 8, 8), dtype="int8", match='dtype "int8"')
    check("\n" not in str(e), f"one line: {str(e)!r}")


def test_float16_traced_or_refused():
    """float16 is traced where this torch autocasts it on the CPU, else refused in one line naming it."""
    torch, te = need_torch()
    try:
        doc = exported(te, conv_net(torch), dtype="float16")
    except ValueError as e:
        check('dtype "float16"' in str(e) and "\n" not in str(e), f"one line naming float16: {str(e)!r}")
        return
    mm = [op for op in doc["ops"] if op["type"] == "addmm"]
    check_eq(mm[0]["outputs"][0]["dtype"], "float16", "the linear layer's product")


def test_tf32_recorded():
    torch, te = need_torch()
    check_eq(exported(te, conv_net(torch), tf32="on").get("tf32"), {"matmul": True, "conv": True}, "tf32='on'")
    check_eq(exported(te, conv_net(torch), tf32="off").get("tf32"), None, "tf32='off' (written as nothing)")
    want = {"matmul": torch.backends.cuda.matmul.allow_tf32, "conv": torch.backends.cudnn.allow_tf32}
    check_eq(exported(te, conv_net(torch)).get("tf32", {"matmul": False, "conv": False}), want,
             "tf32='torch': torch.backends' settings")
    raises(ValueError, te.export, conv_net(torch), 4, (3, 8, 8), tf32="maybe", match='tf32 "maybe"')


if __name__ == "__main__":
    pyt.main(globals())
