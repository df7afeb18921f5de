#!/usr/bin/env python3
"""Host cost of a Python `graph.execute` of a built one-kernel plan, versus a torch op of the same size.

Method: for each variant, `reps` times: drain the GPU queue (torch.cuda.synchronize), then
time a burst of `burst` back-to-back calls with perf_counter; per-call cost = burst time /
burst. The reported number is the MIN over reps (the least-disturbed burst). Bursts are
short enough (default 50 calls of a tiny kernel) that the launch queue never fills, so the
time measured is host enqueue cost, not GPU time.

Variants (all on one pointwise ADD of `--n` fp16 elements):
  torch.add(out=)            the torch op of the same size
  opgraph execute, tensor keys   g.execute({A: a, B: b, C: c}, ws)
  opgraph execute, uid keys      g.execute({1: a, ...}, ws)
  opgraph execute, int addresses g.execute({uid: a.data_ptr(), ...}, ws)  (no normalisation work)
  binding only, tensor keys      g._normalize_only({A: a, B: b, C: c}, ws): the execute path without
                                 the C++ execute — what the binding adds over a C++ caller (target <= 2 µs)

Writes the table to stdout and to bench/results/python_overhead_<UTC date>.md (device,
commit, command included). Usage: python3 bench/python_overhead.py [--n 4096] [--reps 200] [--burst 50]
"""
import argparse
import datetime
import os
import subprocess
import sys
import time

import torch

import opgraph


def per_call_us(fn, reps, burst):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(burst):
            fn()
        t1 = time.perf_counter()
        best = min(best, (t1 - t0) / burst)
    torch.cuda.synchronize()
    return best * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--burst", type=int, default=50)
    args = ap.parse_args()

    a = torch.randn(1, args.n, device="cuda", dtype=torch.float16)
    b = torch.randn(1, args.n, device="cuda", dtype=torch.float16)
    c = torch.empty_like(a)

    major, minor = torch.cuda.get_device_capability()
    g = opgraph.pygraph(io_data_type=torch.float16, compute_data_type=torch.float32,
                        handle=opgraph.create_handle(), sm_version=major * 10 + minor,
                        sm_count=torch.cuda.get_device_properties(0).multi_processor_count)
    A, B = g.tensor_like(a, name="a"), g.tensor_like(b, name="b")
    C = g.add(a=A, b=B)
    C.set_output(True).set_data_type(torch.float16)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    g.build_plans()
    plan = g.get_plan_name_at_index(g.get_selected_plan_index())
    ws = torch.empty(max(g.get_workspace_size(), 1), device="cuda", dtype=torch.uint8)
    g.execute({A: a, B: b, C: c}, ws)
    torch.cuda.synchronize()
    assert torch.allclose(c.float(), a.float() + b.float(), atol=1e-2), "opgraph ADD result is wrong"

    by_tensor = {A: a, B: b, C: c}
    by_uid = {A.uid: a, B.uid: b, C.uid: c}
    by_addr = {A.uid: a.data_ptr(), B.uid: b.data_ptr(), C.uid: c.data_ptr()}
    ws_addr = ws.data_ptr()
    rows = [
        ("torch.add(out=)", per_call_us(lambda: torch.add(a, b, out=c), args.reps, args.burst)),
        ("opgraph execute, tensor keys", per_call_us(lambda: g.execute(by_tensor, ws), args.reps, args.burst)),
        ("opgraph execute, uid keys", per_call_us(lambda: g.execute(by_uid, ws), args.reps, args.burst)),
        ("opgraph execute, int addresses", per_call_us(lambda: g.execute(by_addr, ws_addr), args.reps, args.burst)),
        ("binding only (normalise, no run), tensor keys",
         per_call_us(lambda: g._normalize_only(by_tensor, ws), args.reps, args.burst)),
        ("binding only (normalise, no run), int addresses",
         per_call_us(lambda: g._normalize_only(by_addr, ws_addr), args.reps, args.burst)),
    ]

    try:
        commit = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], text=True).strip()
    except Exception:
        commit = os.environ.get("OPGRAPH_COMMIT", "unknown")
    now = datetime.datetime.now(datetime.timezone.utc)
    lines = [
        f"# Python execute host overhead — {now:%Y-%m-%d %H:%M} UTC",
        "",
        f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; Python {sys.version.split()[0]}; "
        f"commit {commit}",
        f"command: python3 bench/python_overhead.py --n {args.n} --reps {args.reps} --burst {args.burst}",
        f"plan: {plan}; method: min over {args.reps} bursts of {args.burst} calls from a drained queue",
        "",
        "| variant | host µs / call |",
        "|---|---|",
    ] + [f"| {name} | {us:.2f} |" for name, us in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"python_overhead_{now:%Y%m%d}.md"), "a") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
