#!/usr/bin/python3
"""What the host of a PyTorch machine costs, measured by small programs
rather than fitted to training steps (docs/measure.md, "Probing the host"):

  probe   on the machine to describe (a GPU machine, or this one): the
          host's cost of a tiny op and of a module call, the copy rate of
          its memory, what a CPU op costs when the host's threads have been
          idle (after a sleep and, with a GPU, after waiting for one)
          against back to back, and with a GPU the time of torch's .to()
          between the host and the GPU by size: pageable memory into fresh
          memory as a module boundary copies, into reused memory, and from
          pinned memory. Writes JSON (dplace-host-probe v1).
  links   here: fits each direction's latency and bandwidth to the pageable
          copies of at most --max-mib (time = latency + bytes / bandwidth,
          least squares) and writes a devices file: --devices (a
          dplace-devices file or preset) with every link between a CPU and
          a GPU set to the fit, its "source" saying so.

usage: bench/host_probe.py probe [-o FILE] [--threads N] [--quick]
       bench/host_probe.py links PROBE.json --devices FILE|PRESET -o FILE [--max-mib 16] [--dplace build/dplace]

probe needs torch (any Python 3.11 or 3.12 with it); links needs no torch.
Exit status 0; 2 for bad input (one line naming the file and the item); 1
when a command it runs fails."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_check import Bad, read_json, write_atomic  # noqa: E402
from measure_vs_sim import cpu_model  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PROG = "host_probe"
SIZES_MIB = (0.0625, 0.25, 1, 4, 16, 64)


def median_time(fn, reps, warm=2, sync=None):
    """The median seconds of fn() over reps calls after warm ones; sync()
    (a GPU's synchronize) before the clock starts and before it stops."""
    ts = []
    for k in range(warm + reps):
        if sync:
            sync()
        t = time.perf_counter()
        fn()
        if sync:
            sync()
        if k >= warm:
            ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def per_op(fn, n, sync=None):
    """Seconds per call of fn over n calls in a row (the host's issue rate)."""
    for _ in range(50):
        fn()
    if sync:
        sync()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    if sync:
        sync()
    return (time.perf_counter() - t) / n


def probe(args):
    import torch
    if args.threads:
        torch.set_num_threads(args.threads)
    cuda = torch.cuda.is_available()
    sync = torch.cuda.synchronize if cuda else None
    n_ops = 2000 if args.quick else 20000
    out = {"format": "dplace-host-probe", "version": 1,
           "machine": {"cpu": cpu_model(), "cpus": os.cpu_count(), "torch": torch.__version__,
                       "threads": torch.get_num_threads(),
                       "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
                       if cuda else []},
           "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    x = torch.randn(64)
    lin = torch.nn.Linear(64, 64)
    big = torch.ones((16 if args.quick else 64) * 2**20 // 4)
    dst = torch.empty_like(big)
    best = min(median_time(lambda: dst.copy_(big), 1, warm=0) for _ in range(10))
    out["host"] = {"cpu_tiny_op_s": per_op(lambda: torch.add(x, x), n_ops),
                   "cpu_module_call_s": per_op(lambda: lin(x), n_ops),
                   "copy_rate_Bps": 2 * big.numel() * 4 / best}
    # a CPU op of a couple of MiB (threaded) back to back, and after the
    # host has been idle: the difference is what waking the threads costs
    a = torch.randn(2**19)
    op = lambda: torch.relu(a)  # noqa: E731
    hot = median_time(op, 21)
    def after_sleep():
        time.sleep(0.002)
        t = time.perf_counter()
        op()
        return time.perf_counter() - t
    wake = {"cpu_op_hot_s": hot, "cpu_op_after_sleep_s": statistics.median(after_sleep() for _ in range(21))}
    if cuda:
        g = torch.randn(2048, 2048, device="cuda")
        def after_gpu():
            g @ g  # about a millisecond of GPU work; the host waits for it
            torch.cuda.synchronize()
            t = time.perf_counter()
            op()
            return time.perf_counter() - t
        wake["cpu_op_after_gpu_wait_s"] = statistics.median(after_gpu() for _ in range(21))
    out["wake"] = wake
    if cuda:
        gx = torch.randn(64, device="cuda")
        out["host"]["gpu_tiny_op_issue_s"] = per_op(lambda: torch.add(gx, gx), n_ops, sync)
        rows = []
        for mib in SIZES_MIB[:4] if args.quick else SIZES_MIB:
            n = int(mib * 2**20 / 4)
            h, d = torch.randn(n), torch.randn(n, device="cuda")
            reuse, pinned = torch.empty(n), torch.randn(n).pin_memory()
            reps = 7
            rows.append({"mib": mib,
                         "h2d_s": median_time(lambda: h.to("cuda"), reps, sync=sync),
                         "d2h_fresh_s": median_time(lambda: d.to("cpu"), reps, sync=sync),
                         "d2h_reused_s": median_time(lambda: reuse.copy_(d), reps, sync=sync),
                         "h2d_pinned_s": median_time(lambda: pinned.to("cuda", non_blocking=True), reps, sync=sync)})
            print(f"{PROG}: copies of {mib:g} MiB: {json.dumps(rows[-1])}", file=sys.stderr, flush=True)
        out["copies"] = rows
    text = json.dumps(out, indent=1) + "\n"
    if args.output:
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def fit_line(points, what):
    """(latency s, bandwidth B/s) of time = latency + bytes / bandwidth by
    least squares over (bytes, seconds) points; Bad when the points cannot
    determine a positive bandwidth."""
    if len(points) < 2 or len({b for b, _ in points}) < 2:
        raise Bad(f"{what}: needs copies of at least two sizes")
    mx = statistics.fmean(b for b, _ in points)
    my = statistics.fmean(t for _, t in points)
    slope = sum((b - mx) * (t - my) for b, t in points) / sum((b - mx) ** 2 for b, _ in points)
    if not slope > 0:
        raise Bad(f"{what}: the copy times do not grow with the size (slope {slope:.3g} s/B)")
    return max(0.0, my - slope * mx), 1.0 / slope


def links(args):
    doc = read_json(args.probe)
    rows = doc.get("copies", doc.get("rows")) if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not rows:
        raise Bad(f'{args.probe}: no "copies" (probe on a machine with a GPU)')
    pts = {"h2d_s": [], "d2h_fresh_s": []}
    for k, r in enumerate(rows):
        if not isinstance(r, dict) or not isinstance(r.get("mib"), (int, float)) or not r["mib"] > 0:
            raise Bad(f'{args.probe}: copies[{k}] needs a positive "mib"')
        for key in pts:
            v = r.get(key)
            if not isinstance(v, (int, float)) or not v > 0:
                raise Bad(f'{args.probe}: copies[{k}] needs a positive "{key}"')
            if r["mib"] <= args.max_mib:
                pts[key].append((r["mib"] * 2**20, float(v)))
    to_gpu = fit_line(pts["h2d_s"], f"{args.probe}: h2d_s up to {args.max_mib:g} MiB")
    to_cpu = fit_line(pts["d2h_fresh_s"], f"{args.probe}: d2h_fresh_s up to {args.max_mib:g} MiB")
    if os.path.isfile(args.devices):
        base = read_json(args.devices, "dplace-devices")
    else:
        tmp = args.output + ".base.tmp"
        r = subprocess.run([args.dplace, "devices", args.devices, "-o", tmp], capture_output=True, text=True)
        if r.returncode != 0:
            raise Bad(f"--devices {args.devices}: " + ((r.stderr.strip().splitlines() or ["?"])[-1]))
        base = read_json(tmp, "dplace-devices")
        os.unlink(tmp)
    devs = base.get("devices") if isinstance(base, dict) else None
    if not isinstance(devs, list) or not isinstance(base.get("links"), list):
        raise Bad(f'{args.devices}: needs "devices" and "links" arrays')
    kind = {d.get("name"): d.get("kind", "gpu") for d in devs if isinstance(d, dict)}
    n = 0
    for lk in base["links"]:
        pair = (kind.get(lk.get("from")), kind.get(lk.get("to")))
        fit = to_gpu if pair == ("cpu", "gpu") else to_cpu if pair == ("gpu", "cpu") else None
        if fit:
            lk["latency_s"], lk["bandwidth"] = round(fit[0], 9), float(f"{fit[1]:.4g}")
            n += 1
    if not n:
        raise Bad(f"{args.devices}: no link between a CPU and a GPU to set")
    machine = doc.get("machine", {}) if isinstance(doc.get("machine"), dict) else {}
    note = (f"Links between the host and the GPUs from `bench/host_probe.py links {args.probe}`: "
            f"torch's .to() of pageable memory up to {args.max_mib:g} MiB, time = latency + bytes / bandwidth by "
            f"least squares; to the GPU {to_gpu[1] / 1e9:.3g} GB/s and {to_gpu[0] * 1e6:.3g} us, to the host "
            f"{to_cpu[1] / 1e9:.3g} GB/s and {to_cpu[0] * 1e6:.3g} us"
            + (f" (measured on {', '.join(machine.get('gpus', [])) or '?'}, host {machine.get('cpu', '?')})"
               if machine else "") + ".")
    base["source"] = (base.get("source", "") + " " + note).strip()
    tmp = args.output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(base, indent=1) + "\n")
    r = subprocess.run([args.dplace, "devices", tmp], capture_output=True, text=True)
    if r.returncode != 0:
        os.unlink(tmp)
        raise Bad(f"the devices written from {args.devices}: " + ((r.stderr.strip().splitlines() or ["?"])[-1]))
    os.replace(tmp, args.output)
    print(f"{PROG}: wrote {args.output}: {n} link directions; {note}", file=sys.stderr)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="stage", required=True)
    p = sub.add_parser("probe", help="measure this machine's host (and GPU)")
    p.add_argument("-o", "--output", help="the JSON (default: stdout)")
    p.add_argument("--threads", type=int, help="torch CPU threads (default torch's)")
    p.add_argument("--quick", action="store_true", help="fewer and smaller measurements: a check that it runs")
    k = sub.add_parser("links", help="a devices file with the host's links from a probe")
    k.add_argument("probe")
    k.add_argument("--devices", required=True, help="the machine's dplace-devices file or preset")
    k.add_argument("-o", "--output", required=True)
    k.add_argument("--max-mib", type=float, default=16, help="fit the copies up to this size (default 16)")
    k.add_argument("--dplace", default=os.path.join(ROOT, "build", "dplace"))
    args = ap.parse_args(argv)
    try:
        if args.stage == "probe":
            if args.threads is not None and args.threads < 1:
                raise Bad(f"--threads {args.threads}: must be at least 1")
            return probe(args)
        if not args.max_mib > 0:
            raise Bad(f"--max-mib {args.max_mib}: must be positive")
        return links(args)
    except Bad as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
