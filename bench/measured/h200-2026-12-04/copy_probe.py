"""The rate of torch's .to() between the host and the GPU, as a step's
module boundary runs it: pageable host memory, a fresh destination each
time; and into a reused destination (no page faults). Prints JSON."""
import json, time, torch
out = {"torch": torch.__version__, "rows": []}
torch.cuda.init()
for mib in (0.0625, 0.25, 1, 4, 16, 64, 256):
    n = int(mib * 2**20 / 4)
    h = torch.randn(n)
    g = torch.randn(n, device="cuda")
    reuse = torch.empty(n)
    torch.cuda.synchronize()
    row = {"mib": mib}
    for name, fn in (("h2d", lambda: h.to("cuda")), ("d2h_fresh", lambda: g.to("cpu")),
                     ("d2h_reused", lambda: reuse.copy_(g)), ("h2d_pinned", None)):
        if fn is None:
            p = h.pin_memory()
            fn = lambda: p.to("cuda", non_blocking=True)
        ts = []
        for _ in range(2 + 7):
            torch.cuda.synchronize()
            t = time.perf_counter(); fn(); torch.cuda.synchronize(); ts.append(time.perf_counter() - t)
        ts = sorted(ts[2:])
        row[name + "_s"] = ts[len(ts) // 2]
    out["rows"].append(row)
    print(json.dumps(row), flush=True)
print(json.dumps(out))
