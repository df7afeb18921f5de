#!/usr/bin/env python3
"""bench/gemm_vs_torch.py — the gemm family's pick against cuBLAS (torch.matmul) and cuDNN, timed
INTERLEAVED in one process: for each shape, rounds of (ours, the cudnn family's first plan, torch) in
a rotating order, each a CUDA-event timing of `--launches` back-to-back calls; the figure is the median
over the rounds. The H200 drifts (a torch.matmul at 4096^3 read 771 and 641 TFLOP/s 20 s apart in one
call, bench/results/2026-11-30-gemm-s7-h200.txt, run S7-1): timing the three side by side, round by
round, keeps the drift out of the ratios, which bench/gemm_h200.sh (gemm_bench, then torch) cannot.

Graphs as gemm_bench builds them: A [1, M, K] row-major bf16, B = W^T with W [N, K] (a column-major
[1, K, N]), bf16 output; the fused case adds a bias row [1, 1, N] and gelu (torch eager: matmul, then
+ bias, then gelu). Ours is the first `gemm` plan of the graph's list (the family's heuristic pick,
executed through the Python binding's C++ loop, `_execute_repeat`: no per-call Python); cuDNN is the
first `cudnn_eng` plan. Each output is poisoned (NaN) and checked against torch in float32 before
timing: |err| <= 2e-2 + 2e-2 |ref| (inputs scaled so |ref| is ~1).

Usage (the Python module built: PYTHONPATH=build-py; bench/gemm_anchor_h200.sh does both):
  python3 bench/gemm_vs_torch.py [--rounds 15] [--launches 10]
  OPGRAPH_GEMM_SHAPES="MxNxK/chain,..." keeps only those cases (chain "none" or "bias+gelu").
Prints one ANCHOR line per case, then a table and the geomeans; exit 1 when a check fails.
"""
import argparse
import math
import os
import sys

import torch

import opgraph

WANT = [w for w in os.environ.get("OPGRAPH_GEMM_SHAPES", "").split(",") if w]


def cases():
    shapes = [(4096, 4096, 4096), (8192, 8192, 8192)]
    shapes += [(m, n, k) for m in (16, 128, 1024, 4096, 16384)
               for (n, k) in ((4096, 4096), (14336, 4096), (4096, 14336), (28672, 8192), (8192, 28672))]
    out = [(m, n, k, "none") for (m, n, k) in dict.fromkeys(shapes)]
    out += [(4096, 4096, 4096, "bias+gelu"), (16, 4096, 4096, "bias+gelu")]
    return [c for c in out if not WANT or "%dx%dx%d/%s" % c in WANT]


def build(m, n, k, chain):
    """The graph, its (ours, cudnn) plan indices, the buffers and torch's op for one case."""
    torch.manual_seed(m * 31 + n * 7 + k)
    a = torch.randn(1, m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * k ** -0.5
    bias = torch.randn(1, 1, n, device="cuda", dtype=torch.bfloat16)
    b = w.t().unsqueeze(0)  # [1, K, N], column-major
    a2 = a[0]  # torch's operands: [M, K] @ [N, K]^T
    out = torch.empty(1, m, n, device="cuda", dtype=torch.bfloat16)
    handle = opgraph.create_handle()
    opgraph.set_stream(handle, torch.cuda.current_stream())
    g = opgraph.pygraph(handle=handle, io_data_type=torch.bfloat16, intermediate_data_type=torch.float32,
                        compute_data_type=torch.float32)
    A, B = g.tensor_like(a, name="a"), g.tensor_like(b, name="b")
    y = g.matmul(A=A, B=B)
    pack = {A: a, B: b}
    if chain == "bias+gelu":
        Bias = g.tensor_like(bias, name="bias")
        y = g.gelu(input=g.bias(input=y, bias=Bias))
        pack[Bias] = bias
        op = lambda: torch.nn.functional.gelu(torch.matmul(a2, w.t()) + bias[0])  # noqa: E731
        ref = lambda: torch.nn.functional.gelu(a.float() @ w.float().t() + bias.float())  # noqa: E731
    else:
        op = lambda: torch.matmul(a2, w.t())  # noqa: E731
        ref = lambda: a.float() @ w.float().t()  # noqa: E731
    y.set_output(True).set_data_type(torch.bfloat16)
    pack[y] = out
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    names = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
    ours = next((i for i, s in enumerate(names) if s.startswith("gemm")), None)
    cudnn = next((i for i, s in enumerate(names) if s.startswith("cudnn_eng")), None)
    plans = {}
    for label, i in (("ours", ours), ("cudnn", cudnn)):
        if i is None:
            continue
        g.build_plan_at_index(i)
        ws = torch.empty(max(g.get_workspace_size_plan_at_index(i), 1), device="cuda", dtype=torch.uint8)
        plans[label] = (i, names[i], ws)
    return g, plans, pack, out, op, ref


def check(g, plans, pack, out, ref):
    want = ref()
    bad = []
    for label, (i, name, ws) in plans.items():
        g.select_plan(i)
        out.fill_(float("nan"))
        g.execute(pack, ws)
        torch.cuda.synchronize()
        err = (out.float() - want).abs()
        excess = (err - (2e-2 + 2e-2 * want.abs())).max().item()
        if not excess <= 0:  # NaN fails too
            bad.append("%s (%s): max |err| %.3g" % (label, name, err.max().item()))
    return bad


def event_ms(fn, launches):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn(launches)
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / launches


def measure(g, plans, pack, op, rounds, launches):
    runners = {}
    for label, (i, _, ws) in plans.items():
        def run(count, i=i, ws=ws):
            g.select_plan(i)
            g._execute_repeat(pack, ws, count)
        runners[label] = run

    def torch_run(count):
        for _ in range(count):
            op()
    runners["torch"] = torch_run
    for fn in runners.values():  # warm-up: compile, load, clocks
        fn(3)
    torch.cuda.synchronize()
    times = {label: [] for label in runners}
    labels = list(runners)
    for r in range(rounds):
        for j in range(len(labels)):
            label = labels[(r + j) % len(labels)]
            times[label].append(event_ms(runners[label], launches))
    return {label: sorted(t)[len(t) // 2] for label, t in times.items()}


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--launches", type=int, default=10)
    args = ap.parse_args()
    print("# %s; torch %s; opgraph %s; %d rounds x %d launches, medians" % (
        torch.cuda.get_device_name(), torch.__version__, getattr(opgraph, "__version__", "?"), args.rounds,
        args.launches), flush=True)
    rows, failed = [], False
    for (m, n, k, chain) in cases():
        g, plans, pack, out, op, ref = build(m, n, k, chain)
        bad = check(g, plans, pack, out, ref)
        if "ours" not in plans or bad:
            failed = True
            print("CHECK FAILED %dx%dx%d/%s: %s" % (m, n, k, chain, "; ".join(bad) or "no gemm plan"), flush=True)
            continue
        ms = measure(g, plans, pack, op, args.rounds, args.launches)
        tf = {label: 2.0 * m * n * k / (t * 1e-3) / 1e12 for label, t in ms.items()}
        # The plan's name without its knob list (gemm_v2_128x256s4_sk[CLUSTER_M=1, ...]): one token.
        row = (m, n, k, chain, tf.get("ours"), tf.get("torch"), tf.get("cudnn"), plans["ours"][1].split("[")[0])
        rows.append(row)
        print("ANCHOR shape=%dx%dx%d chain=%s ours=%.1f torch=%.1f cudnn=%s plan=%s" % (
            m, n, k, chain, row[4], row[5], "%.1f" % row[6] if row[6] else "-", row[7]), flush=True)
        del g, plans, pack, out
        torch.cuda.empty_cache()
    print("\n%-18s %-10s %8s %8s %8s %7s %7s  %s" % ("M x N x K", "epilogue", "ours", "torch", "cuDNN", "o/torch",
                                                    "o/cuDNN", "our plan"))
    for (m, n, k, chain, o, t, c, plan) in rows:
        print("%-18s %-10s %8.1f %8.1f %8s %7.2f %7s  %s" % (
            "%dx%dx%d" % (m, n, k), chain, o, t, "%.1f" % c if c else "-", o / t, "%.2f" % (o / c) if c else "-",
            plan))
    plain = [r for r in rows if r[3] == "none"]
    for label, sel in (("M >= 1024", lambda r: r[0] >= 1024), ("M <= 128", lambda r: r[0] <= 128)):
        xs = [r[4] / r[5] for r in plain if sel(r)]
        ys = [r[4] / r[6] for r in plain if sel(r) and r[6]]
        print("geomean ours/torch %s: %.3f (%d shapes); ours/cuDNN %.3f" % (label, geomean(xs), len(xs), geomean(ys)))
    for r in rows:
        if r[3] != "none":
            print("fused %dx%dx%d %s: ours %.1f vs torch eager %.1f = %.2fx" % (r[0], r[1], r[2], r[3], r[4], r[5],
                                                                             r[4] / r[5]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
