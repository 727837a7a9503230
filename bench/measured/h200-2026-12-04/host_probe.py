"""Host and GPU probe for the real-GPU check: what one eager op costs the
host (dispatch), and the matrix-product rates the cost model's peaks and
efficiencies describe. Prints JSON."""
import json, os, sys, time
import torch

def per_op(fn, n):
    for _ in range(50):
        fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return (time.perf_counter() - t) / n

def mm_rate(dev, dtype, n, reps=10):
    a = torch.randn(n, n, device=dev, dtype=dtype)
    b = torch.randn(n, n, device=dev, dtype=dtype)
    for _ in range(3):
        a @ b
    if dev == "cuda":
        torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    if dev == "cuda":
        torch.cuda.synchronize()
    return 2 * n ** 3 * reps / (time.perf_counter() - t) / 1e12

out = {"torch": torch.__version__, "threads": torch.get_num_threads(), "cpus": os.cpu_count()}
x = torch.randn(64)
out["cpu_add_small_s"] = per_op(lambda: torch.add(x, x), 20000)
lin = torch.nn.Linear(64, 64)
out["cpu_linear_module_small_s"] = per_op(lambda: lin(x), 20000)
out["cpu_tflops_fp32_2048"] = mm_rate("cpu", torch.float32, 2048, 5)
try:
    out["cpu_tflops_bf16_2048"] = mm_rate("cpu", torch.bfloat16, 2048, 5)
except Exception as e:
    out["cpu_tflops_bf16_2048"] = str(e)
v = torch.randn(1 << 26)
t = time.perf_counter(); (v * 2.0); out["cpu_mul_256MiB_GBps"] = 3 * v.numel() * 4 / (time.perf_counter() - t) / 1e9
if torch.cuda.is_available():
    g = torch.randn(64, device="cuda")
    out["gpu_add_small_s"] = per_op(lambda: torch.add(g, g), 20000)
    gl = torch.nn.Linear(64, 64).cuda()
    out["gpu_linear_module_small_s"] = per_op(lambda: gl(g), 20000)
    out["h2d_small_s"] = per_op(lambda: x.to("cuda"), 5000)
    out["d2h_small_s"] = per_op(lambda: g.to("cpu"), 5000)
    big = torch.randn(1 << 26)
    torch.cuda.synchronize(); t = time.perf_counter(); bg = big.to("cuda"); torch.cuda.synchronize()
    out["h2d_256MiB_GBps"] = big.numel() * 4 / (time.perf_counter() - t) / 1e9
    t = time.perf_counter(); bg.to("cpu"); torch.cuda.synchronize()
    out["d2h_256MiB_GBps"] = big.numel() * 4 / (time.perf_counter() - t) / 1e9
    for name, dt, allow in (("fp32", torch.float32, False), ("tf32", torch.float32, True),
                            ("bf16", torch.bfloat16, False)):
        torch.backends.cuda.matmul.allow_tf32 = allow
        out[f"gpu_tflops_{name}_8192"] = mm_rate("cuda", dt, 8192)
    torch.backends.cuda.matmul.allow_tf32 = False
print(json.dumps(out, indent=1))
