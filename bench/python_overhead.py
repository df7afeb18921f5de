#!/usr/bin/env python3
"""Host cost of a Python `graph.execute` of a built one-kernel plan, versus the C++ execute of the
same plan and a torch op of the same size, all in one process and one run.

Method: for each variant, `reps` times: drain the GPU queue (torch.cuda.synchronize), then time a
burst of `burst` back-to-back calls with perf_counter; per-call cost = burst time / burst. The
reported number is the MIN over reps (the least-disturbed burst). Bursts are short (default 50
calls of a tiny kernel) so the launch queue never fills: the time measured is host enqueue cost.

Cases (graphs built with handle=opgraph.create_handle(), so they plan for this GPU):
  add     pointwise ADD of 1 x n fp16 (cudnn pointwise engine)        vs torch.add(out=)
  matmul  [1, m, m] @ [1, m, m] fp16, fp32 accumulation (cudnn)       vs torch.matmul(out=)
Rows per case:
  torch op                          the torch op of the same size
  C++ execute                       g._execute_repeat(pack, ws, burst): Graph::execute of the same plan
                                    and caller pack `burst` times in C++ (GIL released, no Python)
  Python execute, tensor keys       g.execute({A: a, B: b, C: c}, ws)
  Python execute, uid keys          g.execute({uid: tensor, ...}, ws)
  Python execute, int addresses     g.execute({uid: a.data_ptr(), ...}, ws.data_ptr())
  Python execute, prepared pack     g.execute(g.prepare_variant_pack({...}), ws)
  binding only (no run)             g._normalize_only({A: a, ...}, ws)
  Python - C++ (tensor keys)        the binding's cost over a C++ caller: target <= 2 µs

Writes the table to stdout and to bench/results/python_overhead_<UTC date>.md (and $OUT when set).
Usage: python3 bench/python_overhead.py [--n 4096] [--m 64] [--reps 200] [--burst 50]
Exit status 1 when a result is wrong or the Python - C++ difference exceeds --target-us.
"""
import argparse
import datetime
import os
import subprocess
import sys
import time

import torch

import opgraph


def per_call_us(fn, reps, burst, calls_per_fn=1):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    n = max(burst // calls_per_fn, 1)
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        best = min(best, (t1 - t0) / (n * calls_per_fn))
    torch.cuda.synchronize()
    return best * 1e6


def build(kind, args):
    """(graph, tensors, torch buffers, torch op, check) for one case, planned on this GPU."""
    handle = opgraph.create_handle()
    opgraph.set_stream(handle, torch.cuda.current_stream())
    g = opgraph.pygraph(io_data_type=torch.float16, intermediate_data_type=torch.float32,
                        compute_data_type=torch.float32, handle=handle)
    if kind == "add":
        a = torch.randn(1, args.n, device="cuda", dtype=torch.float16)
        b = torch.randn(1, args.n, device="cuda", dtype=torch.float16)
        c = torch.empty_like(a)
        A, B = g.tensor_like(a, name="a"), g.tensor_like(b, name="b")
        C = g.add(a=A, b=B)
        op = lambda: torch.add(a, b, out=c)  # noqa: E731
        ref = lambda: a.float() + b.float()  # noqa: E731
    else:
        a = torch.randn(1, args.m, args.m, device="cuda", dtype=torch.float16)
        b = torch.randn(1, args.m, args.m, device="cuda", dtype=torch.float16) * args.m ** -0.5
        c = torch.empty(1, args.m, args.m, device="cuda", dtype=torch.float16)
        A, B = g.tensor_like(a, name="a"), g.tensor_like(b, name="b")
        C = g.matmul(A=A, B=B)
        op = lambda: torch.matmul(a, b, out=c)  # noqa: E731
        ref = lambda: a.float() @ b.float()  # noqa: E731
    C.set_output(True).set_data_type(torch.float16)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    g.build_plans()
    plan = g.get_plan_name_at_index(g.get_selected_plan_index())
    ws = torch.empty(max(g.get_workspace_size(), 1), device="cuda", dtype=torch.uint8)
    c.fill_(float("nan"))
    g.execute({A: a, B: b, C: c}, ws)
    torch.cuda.synchronize()
    ok = bool(torch.allclose(c.float(), ref(), atol=2e-2, rtol=2e-2))
    return g, (A, B, C), (a, b, c), ws, op, plan, ok


def measure(kind, args):
    g, (A, B, C), (a, b, c), ws, op, plan, ok = build(kind, args)
    by_tensor = {A: a, B: b, C: c}
    by_uid = {A.uid: a, B.uid: b, C.uid: c}
    by_addr = {A.uid: a.data_ptr(), B.uid: b.data_ptr(), C.uid: c.data_ptr()}
    ws_addr = ws.data_ptr()
    prepared = g.prepare_variant_pack(by_tensor)
    r, bu = args.reps, args.burst
    rows = [
        ("torch op", per_call_us(op, r, bu)),
        ("C++ execute (same plan, Graph::execute in a C++ loop)",
         per_call_us(lambda: g._execute_repeat(by_tensor, ws, bu), r, bu, calls_per_fn=bu)),
        ("Python execute, tensor keys", per_call_us(lambda: g.execute(by_tensor, ws), r, bu)),
        ("Python execute, uid keys", per_call_us(lambda: g.execute(by_uid, ws), r, bu)),
        ("Python execute, int addresses", per_call_us(lambda: g.execute(by_addr, ws_addr), r, bu)),
        ("Python execute, prepared pack", per_call_us(lambda: g.execute(prepared, ws), r, bu)),
        ("binding only (normalise, no run), tensor keys", per_call_us(lambda: g._normalize_only(by_tensor, ws), r, bu)),
    ]
    c.fill_(float("nan"))
    g.execute(prepared, ws)
    torch.cuda.synchronize()
    ok = ok and not bool(torch.isnan(c).any())
    return plan, ok, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--m", type=int, default=64)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--burst", type=int, default=50)
    ap.add_argument("--target-us", type=float, default=2.0)
    args = ap.parse_args()

    commit = os.environ.get("OPGRAPH_COMMIT")  # the device's checkout may be another tree's .git
    if not commit:
        try:
            commit = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], text=True,
                                             stderr=subprocess.DEVNULL).strip()
        except Exception:
            commit = "unknown"
    now = datetime.datetime.now(datetime.timezone.utc)
    lines = [
        f"# Python execute host overhead — {now:%Y-%m-%d %H:%M} UTC",
        "",
        f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; Python {sys.version.split()[0]}; "
        f"commit {commit}",
        f"command: python3 bench/python_overhead.py --n {args.n} --m {args.m} --reps {args.reps} --burst {args.burst}",
        f"method: min over {args.reps} bursts of {args.burst} calls from a drained queue; host µs per call",
        "",
    ]
    status = 0
    for kind, size in (("add", f"1 x {args.n} fp16"), ("matmul", f"{args.m}^3 fp16")):
        try:
            plan, ok, rows = measure(kind, args)
        except Exception as e:  # report and go on to the next case
            lines += [f"## {kind} ({size}): FAILED: {type(e).__name__}: {e}", ""]
            status = 1
            continue
        cpp = rows[1][1]
        py = rows[2][1]
        diff = py - cpp
        verdict = "OK" if diff <= args.target_us else "ABOVE TARGET"
        if plan.startswith("reference") or not ok or diff > args.target_us:
            status = 1
        lines += [f"## {kind} ({size}); plan: {plan}; result check: {'ok' if ok else 'WRONG'}", "",
                  "| variant | host µs / call |", "|---|---|"]
        lines += [f"| {name} | {us:.2f} |" for name, us in rows]
        lines += [f"| Python - C++ (tensor keys) | {diff:+.2f} (target <= {args.target_us:.1f}: {verdict}) |",
                  f"| Python - C++ (prepared pack) | {rows[5][1] - cpp:+.2f} |", ""]
    text = "\n".join(lines) + "\n"
    print(text)
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(out_dir, exist_ok=True)
    for d in filter(None, (out_dir, os.environ.get("OUT"))):
        with open(os.path.join(d, f"python_overhead_{now:%Y%m%d}.md"), "a") as f:
            f.write(text + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
