#!/usr/bin/env python3
"""bench/compare.py — opgraph against its peers, like with like (timing method: bench/timing.py).

  python3 bench/compare.py gemm  [--rounds 10] [--shapes MxNxK/chain,...] [--no-compile]
  python3 bench/compare.py sdpa  [--rounds 10]
  python3 bench/compare.py host  [--reps 200] [--burst 50]

bench/run.sh runs these with the Python module built (PYTHONPATH=build-py) and torch's libcudnn
named in OPGRAPH_LIBCUDNN, so opgraph's cuDNN plans and torch run the same library.

gemm: bf16, A [M, K] row-major, W [N, K] (B = W^T, the Linear layout), bf16 out. Sides: ours (the
  gemm family's first plan), cudnn (the cudnn family's first plan), cublas (torch.mm, out=). Fused
  matmul + bias + gelu (erf): ours, cudnn, torch eager (mm, + bias, gelu: three kernels), cublaslt
  (torch._addmm_activation(use_gelu=True): cuBLASLt's GELU epilogue, tanh form), compile
  (torch.compile of the eager function, default mode). Kernel time under CUDA graphs, interleaved;
  the table gives ours / each peer per shape, the geomeans over M >= 1024 and M <= 128 against
  cuBLAS, and ours / cuDNN per shape class of the gemm heuristics' BACKEND marker
  (src/engines/gemm: decode M <= 64, small 64 < M <= 256, large K < 8192, large K >= 8192).
  Host: for M <= 128, the host enqueue per call of ours (Python execute) and of torch.mm.
  OPGRAPH_GEMM_TORCH_KERNELS=1 also prints the GPU kernels one call of each side launches (e.g.
  cuBLAS's nvjet_sm90_tst_176x128_...).
sdpa: bf16 B4 H16 S4096 D128, causal and not, forward (inference) and backward. Sides: ours
  (opgraph's cudnn plan) and torch's cuDNN attention (the aten ops torch's SDPA calls:
  _scaled_dot_product_cudnn_attention and its backward), on the same q, k, v, dO; outputs
  checked against float32 torch and against each other.
host: host enqueue per call (min over bursts from a drained queue): a pointwise add (cudnn), a
  64^3 fp16 matmul (cudnn) and a 16x4096x4096 bf16 gemm (our gemm engine): torch's own call vs
  opgraph's Python execute (tensor keys, prepared pack), the C++ execute of the same plan
  (_execute_repeat: no Python per call) and the binding alone (normalise, no run). Target: Python
  execute within --target-us (2 us) of the C++ execute; above it counts as a failure.

Output: progress lines, then the table. Exit 1 when a check fails or a side cannot run.
"""
import argparse
import os
import sys

import torch

import opgraph
import timing

FLOP_TOL = (2e-2, 2e-2)


def device_graph(**context):
    handle = opgraph.create_handle()
    opgraph.set_stream(handle, torch.cuda.current_stream())
    return handle, opgraph.pygraph(handle=handle, **context)


def first_plans(g, families):
    """{family prefix: plan index} of the first plan of each family in the graph's list (built)."""
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    names = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
    out = {}
    for fam in families:
        i = next((i for i, s in enumerate(names) if s.startswith(fam)), None)
        if i is not None:
            g.build_plan_at_index(i)
            out[fam] = i
    return out, names


def opgraph_side(name, handle, g, index, pack, outs):
    ws = torch.empty(max(g.get_workspace_size_plan_at_index(index), 1), device="cuda", dtype=torch.uint8)
    return timing.Side(name, lambda: g.execute_plan_at_index(pack, ws, index), lambda: outs,
                       on_stream=lambda s: opgraph.set_stream(handle, s))


def loaded_cudnn():
    """The libcudnn files this process has mapped (which copy opgraph and torch run)."""
    seen = []
    try:
        for line in open("/proc/self/maps"):
            p = line.split()[-1]
            if "libcudnn.so" in p and p not in seen:
                seen.append(p)
    except OSError:
        pass
    return seen


# ---------------------------------------------------------------------------------------- gemm

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192)] + [
    (m, n, k) for m in (16, 128, 1024, 4096, 16384)
    for (n, k) in ((4096, 4096), (14336, 4096), (4096, 14336), (28672, 8192), (8192, 28672))]
FUSED = [(4096, 4096, 4096), (16, 4096, 4096)]


def shape_class(m, k):
    """The gemm heuristics' BACKEND-marker class (src/engines/gemm: shape_class)."""
    if m <= 64:
        return "decode (M <= 64)"
    if m <= 256:
        return "small (64 < M <= 256)"
    return "large, K < 8192" if k < 8192 else "large, K >= 8192"


def gemm_case(m, n, k, fused, use_compile):
    torch.manual_seed(m * 31 + n * 7 + k + fused)
    a = torch.randn(1, m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * k ** -0.5
    bias = torch.randn(1, 1, n, device="cuda", dtype=torch.bfloat16)
    b = w.t().unsqueeze(0)  # [1, K, N] column-major
    a2, wt, bias1 = a[0], w.t(), bias[0, 0]
    handle, g = device_graph(io_data_type=torch.bfloat16, intermediate_data_type=torch.float32,
                             compute_data_type=torch.float32)
    A, B = g.tensor_like(a, name="a"), g.tensor_like(b, name="b")
    y = g.matmul(A=A, B=B)
    pack = {A: a, B: b}
    if fused:
        Bias = g.tensor_like(bias, name="bias")
        y = g.gelu(input=g.bias(input=y, bias=Bias))
        pack[Bias] = bias
    y.set_output(True).set_data_type(torch.bfloat16)
    plans, names = first_plans(g, ("gemm", "cudnn_eng"))
    sides = []
    for fam, label in (("gemm", "ours"), ("cudnn_eng", "cudnn")):
        if fam in plans:
            out = torch.empty(1, m, n, device="cuda", dtype=torch.bfloat16)
            sides.append(opgraph_side(label, handle, g, plans[fam], {**pack, y: out}, [out]))
    o_eager = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    if not fused:
        sides.append(timing.Side("cublas", lambda: torch.mm(a2, wt, out=o_eager), lambda: [o_eager]))
        ref = [(a.float() @ w.float().t())[0]]
    else:
        gelu = torch.nn.functional.gelu
        # Each peer's own call, its output allocated as it would be (no copy into a caller's buffer).
        held = {}
        def eager():
            held["eager"] = gelu(torch.mm(a2, wt) + bias1)
        sides.append(timing.Side("eager", eager, lambda: [held["eager"]], poison=lambda: held.pop("eager", None)))
        if hasattr(torch, "_addmm_activation"):
            def lt():
                held["lt"] = torch._addmm_activation(bias1, a2, wt, use_gelu=True)
            sides.append(timing.Side("cublaslt", lt, lambda: [held["lt"]], poison=lambda: held.pop("lt", None)))
        if use_compile:
            fn = torch.compile(lambda x, wtt, bb: gelu(x @ wtt + bb))
            def run_compiled():
                held["compile"] = fn(a2, wt, bias1)
            try:
                run_compiled()
                torch.cuda.synchronize()
                sides.append(timing.Side("compile", run_compiled, lambda: [held["compile"]],
                                         poison=lambda: held.pop("compile", None)))
            except Exception as exc:  # noqa: BLE001 - report, compare the rest
                print("  torch.compile failed: %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:160]))
        ref = [gelu(a.float() @ w.float().t() + bias.float())[0]]
    # opgraph's outputs are [1, M, N]: compare them as [M, N].
    for s in sides:
        if s.name in ("ours", "cudnn"):
            outs = s.outputs()
            s.outputs = (lambda o=outs: [o[0][0]])
    return sides, ref, names, plans


def run_gemm(args):
    want = [w for w in (args.shapes or "").split(",") if w]
    cases = [(m, n, k, False) for (m, n, k) in dict.fromkeys(SHAPES)] + [(m, n, k, True) for (m, n, k) in FUSED]
    cases = [c for c in cases if not want or "%dx%dx%d/%s" % (c[0], c[1], c[2], "bias+gelu" if c[3] else "none") in want]
    rows, failed = [], []
    for (m, n, k, fused) in cases:
        key = "%dx%dx%d/%s" % (m, n, k, "bias+gelu" if fused else "none")
        sides, ref, names, plans = gemm_case(m, n, k, fused, not args.no_compile)
        bad = timing.check_outputs(sides, ref, *FLOP_TOL)
        del ref
        for name, why in bad.items():
            failed.append("CHECK FAILED %s %s: %s" % (key, name, why))
            print(failed[-1], flush=True)
        good = [s for s in sides if s.name not in bad]
        if not any(s.name == "ours" for s in good):
            failed.append("NO OURS %s (plans: %s)" % (key, ", ".join(names[:4])))
            print(failed[-1], flush=True)
            continue
        res = timing.compare(good, rounds=args.rounds)
        tf = {name: 2.0 * m * n * k / (r.ms * 1e-3) / 1e12 for name, r in res.items()}
        host = {}
        if m <= 128:
            for s in good:
                if s.name in ("ours", "cublas", "cudnn"):
                    host[s.name] = timing.host_us(s.run, reps=30, burst=10)
        if os.environ.get("OPGRAPH_GEMM_TORCH_KERNELS") == "1":  # which library kernel each side ran
            for s in good:
                print("KERNELS shape=%s side=%s names=%s" % (key, s.name, " | ".join(timing.kernel_names(s.run))))
        method = next(iter(res.values())).method
        plan = names[plans["gemm"]].split("[")[0]
        rows.append((m, n, k, fused, tf, host, method, plan))
        print("GEMM shape=%dx%dx%d chain=%s %s method=%s calls=%d spread=%s plan=%s%s" % (
            m, n, k, "bias+gelu" if fused else "none",
            " ".join("%s=%.1f" % kv for kv in tf.items()), method, next(iter(res.values())).calls,
            "/".join("%.3f" % r.spread() for r in res.values()), plan,
            "".join(" host_%s_us=%.2f" % kv for kv in host.items())), flush=True)
        del sides, good, res
        torch.cuda.empty_cache()

    print()
    print("libcudnn mapped in this process: %s" % (", ".join(loaded_cudnn()) or "?"))
    print("GEMM, bf16 in/out, A row-major, B = W^T (Linear); TFLOP/s of kernel time (CUDA-graph replay, "
          "interleaved rounds, medians); cuBLAS = torch.mm, cuDNN = the cudnn family's first plan")
    print("%-18s %8s %8s %8s %7s %7s %8s %8s  %s" % ("M x N x K", "ours", "cuBLAS", "cuDNN", "o/cB", "o/cD",
                                                    "host o", "host cB", "our plan"))
    f1 = lambda v: "%.1f" % v if v else "-"  # noqa: E731
    f2 = lambda v: "%.2f" % v if v else "-"  # noqa: E731
    plain = [r for r in rows if not r[3]]
    for (m, n, k, _, tf, host, method, plan) in plain:
        o, cb, cd = tf.get("ours"), tf.get("cublas"), tf.get("cudnn")
        print("%-18s %8s %8s %8s %7s %7s %8s %8s  %s%s" % (
            "%dx%dx%d" % (m, n, k), f1(o), f1(cb), f1(cd), f2(o / cb if o and cb else None),
            f2(o / cd if o and cd else None), f2(host.get("ours")), f2(host.get("cublas")), plan,
            "" if method == "graph" else " (profiler)"))
    for label, sel in (("M >= 1024", lambda r: r[0] >= 1024), ("M <= 128", lambda r: r[0] <= 128)):
        xs = [r[4]["ours"] / r[4]["cublas"] for r in plain if sel(r) and "cublas" in r[4]]
        if xs:
            print("geomean ours/cuBLAS %s: %.3f (%d shapes, range %.2f-%.2f)" % (label, timing.geomean(xs), len(xs),
                                                                              min(xs), max(xs)))
    per = {}
    for r in plain:
        if "cudnn" in r[4]:
            per.setdefault(shape_class(r[0], r[2]), []).append(r[4]["ours"] / r[4]["cudnn"])
    for name in ("decode (M <= 64)", "small (64 < M <= 256)", "large, K < 8192", "large, K >= 8192"):
        if name in per:
            v = per[name]
            print("class %-22s ours/cuDNN geomean %.3f (range %.2f-%.2f, %d shapes)" % (
                name, timing.geomean(v), min(v), max(v), len(v)))
    for (m, n, k, fused, tf, host, method, plan) in rows:
        if fused:
            o = tf.get("ours")
            print("fused %dx%dx%d bias+gelu: ours %.1f; %s" % (m, n, k, o, "; ".join(
                "%s %.1f (ours/%s %.2f)" % (p, tf[p], p, o / tf[p]) for p in ("cudnn", "eager", "cublaslt", "compile")
                if p in tf)))
    for line in failed:
        print(line)
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------- sdpa

def run_sdpa(args):
    from torch.nn.functional import scaled_dot_product_attention as sdpa_math
    b, h, s, d = 4, 16, 4096, 128
    scale = d ** -0.5
    failed, rows = [], []
    aten = torch.ops.aten
    for causal in (False, True):
        torch.manual_seed(40 + causal)
        q, k, v, do = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
        # float32 reference, forward and backward
        qf, kf, vf = (t.float().requires_grad_(True) for t in (q, k, v))
        of = sdpa_math(qf, kf, vf, is_causal=causal, scale=scale)
        gq, gk, gv = torch.autograd.grad(of, (qf, kf, vf), do.float())
        ref_o, ref_g = of.detach(), [gq, gk, gv]
        del qf, kf, vf, of

        # ours: forward (inference) and forward-with-stats + backward
        handle, gf = device_graph(io_data_type=torch.bfloat16, intermediate_data_type=torch.float32,
                                  compute_data_type=torch.float32)
        Q, K, V = (gf.tensor_like(t, name=nm) for t, nm in ((q, "q"), (k, "k"), (v, "v")))
        O, _ = gf.sdpa(q=Q, k=K, v=V, attn_scale=scale, use_causal_mask=causal, generate_stats=False)
        O.set_output(True).set_dim([b, h, s, d]).set_stride(list(q.stride())).set_data_type(torch.bfloat16)
        pf, names_f = first_plans(gf, ("cudnn_eng",))
        o_ours = torch.empty_like(q)
        fwd_sides = []
        if "cudnn_eng" in pf:
            fwd_sides.append(opgraph_side("ours", handle, gf, pf["cudnn_eng"], {Q: q, K: k, V: v, O: o_ours}, [o_ours]))
        else:
            failed.append("NO OURS sdpa fwd causal=%d (plans: %s)" % (causal, ", ".join(names_f[:4])))

        held = {}
        def torch_fwd():
            held["o"] = aten._scaled_dot_product_cudnn_attention(q, k, v, None, False, 0.0, causal, False,
                                                                  scale=scale)[0]
        fwd_sides.append(timing.Side("torch", torch_fwd, lambda: [held["o"]], poison=held.clear))

        # backward inputs: each side's own forward (O, log-sum-exp) of the same q, k, v
        hb, gb = device_graph(io_data_type=torch.bfloat16, intermediate_data_type=torch.float32,
                              compute_data_type=torch.float32)
        Qb, Kb, Vb, Ob, dOb = (gb.tensor_like(t, name=nm) for t, nm in ((q, "q"), (k, "k"), (v, "v"), (q, "o"),
                                                                         (do, "dO")))
        st = torch.empty(b, h, s, 1, device="cuda", dtype=torch.float32)
        Sb = gb.tensor_like(st, name="stats")
        dQ, dK, dV = gb.sdpa_backward(q=Qb, k=Kb, v=Vb, o=Ob, dO=dOb, stats=Sb, attn_scale=scale,
                                      use_causal_mask=causal)
        grads = [torch.empty_like(q) for _ in range(3)]
        for t, buf in zip((dQ, dK, dV), grads):
            t.set_output(True).set_dim([b, h, s, d]).set_stride(list(buf.stride())).set_data_type(torch.bfloat16)
        pb, names_b = first_plans(gb, ("cudnn_eng",))
        # ours' forward with stats
        h2, g2 = device_graph(io_data_type=torch.bfloat16, intermediate_data_type=torch.float32,
                              compute_data_type=torch.float32)
        Q2, K2, V2 = (g2.tensor_like(t, name=nm) for t, nm in ((q, "q"), (k, "k"), (v, "v")))
        O2, S2 = g2.sdpa(q=Q2, k=K2, v=V2, attn_scale=scale, use_causal_mask=causal, generate_stats=True)
        O2.set_output(True).set_dim([b, h, s, d]).set_stride(list(q.stride())).set_data_type(torch.bfloat16)
        S2.set_output(True).set_data_type(torch.float32)
        p2, _ = first_plans(g2, ("cudnn_eng",))
        o2 = torch.empty_like(q)
        bwd_sides = []
        if "cudnn_eng" in pb and "cudnn_eng" in p2:
            ws2 = torch.empty(max(g2.get_workspace_size_plan_at_index(p2["cudnn_eng"]), 1), device="cuda",
                              dtype=torch.uint8)
            g2.execute_plan_at_index({Q2: q, K2: k, V2: v, O2: o2, S2: st}, ws2, p2["cudnn_eng"])
            torch.cuda.synchronize()
            bwd_sides.append(opgraph_side("ours", hb, gb, pb["cudnn_eng"],
                                          {Qb: q, Kb: k, Vb: v, Ob: o2, dOb: do, Sb: st, dQ: grads[0], dK: grads[1],
                                           dV: grads[2]}, grads))
        else:
            failed.append("NO OURS sdpa bwd causal=%d (plans: %s)" % (causal, ", ".join(names_b[:4])))
        fw = aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, causal, False, scale=scale)
        t_out, t_lse, cum_q, cum_k, max_q, max_k, seed, offset = fw[:8]
        tg = {}
        def torch_bwd_op():
            tg["g"] = aten._scaled_dot_product_cudnn_attention_backward(
                do, q, k, v, t_out, t_lse, seed, offset, None, cum_q, cum_k, max_q, max_k, 0.0, causal,
                scale=scale)
        torch_bwd = torch_bwd_op
        try:
            torch_bwd_op()
            torch.cuda.synchronize()
            bwd_how = "aten cudnn backward op"
        except Exception as exc:  # noqa: BLE001 - the op's Python signature: autograd instead
            print("  aten cudnn backward op not callable here (%s); torch's side runs autograd.grad" % (
                str(exc).splitlines()[0][:120]), flush=True)
            from torch.nn.attention import SDPBackend, sdpa_kernel
            qg, kg, vg = (t.detach().requires_grad_(True) for t in (q, k, v))
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                og = torch.nn.functional.scaled_dot_product_attention(qg, kg, vg, is_causal=causal, scale=scale)
            def torch_bwd():
                tg["g"] = torch.autograd.grad(og, (qg, kg, vg), do, retain_graph=True)
            bwd_how = "autograd.grad of torch's cuDNN SDPA"
        print("  torch's backward: %s" % bwd_how, flush=True)
        bwd_sides.append(timing.Side("torch", torch_bwd, lambda: list(tg["g"]), poison=tg.clear))

        for phase, sides, ref, tol, mult in (("fwd", fwd_sides, [ref_o], 2e-2, 1.0),
                                             ("bwd", bwd_sides, ref_g, 5e-2, 2.5)):
            bad = timing.check_outputs(sides, ref, tol, tol)
            for name, why in bad.items():
                failed.append("CHECK FAILED sdpa %s causal=%d %s: %s" % (phase, causal, name, why))
                print(failed[-1], flush=True)
            good = [x for x in sides if x.name not in bad]
            if len(good) < 2:
                continue
            res = timing.compare(good, rounds=args.rounds)
            flops = mult * 4 * b * h * s * s * d / (2 if causal else 1)
            tf = {nm: flops / (r.ms * 1e-3) / 1e12 for nm, r in res.items()}
            ms = {nm: r.ms for nm, r in res.items()}
            rows.append((phase, causal, ms, tf, next(iter(res.values())).method))
            print("SDPA %s causal=%d %s method=%s spread=%s" % (
                phase, causal, " ".join("%s_ms=%.4f %s_tflops=%.1f" % (nm, ms[nm], nm, tf[nm]) for nm in ms),
                rows[-1][4], "/".join("%.3f" % r.spread() for r in res.values())), flush=True)
        del fwd_sides, bwd_sides, ref_g, ref_o, grads
        torch.cuda.empty_cache()
    print()
    print("libcudnn mapped in this process: %s" % (", ".join(loaded_cudnn()) or "?"))
    print("SDPA bf16 B4 H16 S4096 D128: kernel time (CUDA-graph replay, interleaved, medians), same q, k, v, dO")
    print("%-5s %-6s %10s %10s %9s %9s %11s" % ("pass", "causal", "ours ms", "torch ms", "ours TF", "torch TF",
                                               "torch/ours"))
    for (phase, causal, ms, tf, method) in rows:
        print("%-5s %-6d %10.4f %10.4f %9.1f %9.1f %11.3f%s" % (
            phase, causal, ms.get("ours", float("nan")), ms.get("torch", float("nan")), tf.get("ours", 0),
            tf.get("torch", 0), ms.get("torch", float("nan")) / ms.get("ours", float("nan")),
            "" if method == "graph" else " (profiler)"))
    print("(torch/ours = ours' time as a fraction of torch's is its inverse: > 1 means ours is faster)")
    for line in failed:
        print(line)
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------- host

def run_host(args):
    rows, failed = [], []
    cases = []
    # pointwise add, 1 x 4096 fp16 (cudnn pointwise)
    a = torch.randn(1, 4096, device="cuda", dtype=torch.float16)
    b2 = torch.randn(1, 4096, device="cuda", dtype=torch.float16)
    c = torch.empty_like(a)
    handle, g = device_graph(io_data_type=torch.float16, intermediate_data_type=torch.float32,
                             compute_data_type=torch.float32)
    A, B = g.tensor_like(a, name="a"), g.tensor_like(b2, name="b")
    C = g.add(a=A, b=B)
    C.set_output(True).set_data_type(torch.float16)
    cases.append(("add 1x4096 fp16", g, {A: a, B: b2, C: c}, lambda: torch.add(a, b2, out=c), c,
                  lambda: a.float() + b2.float(), "cudnn_eng"))
    # matmul 64^3 fp16 (cudnn)
    x = torch.randn(1, 64, 64, device="cuda", dtype=torch.float16)
    y = torch.randn(1, 64, 64, device="cuda", dtype=torch.float16) / 8
    z = torch.empty(1, 64, 64, device="cuda", dtype=torch.float16)
    handle2, g2 = device_graph(io_data_type=torch.float16, intermediate_data_type=torch.float32,
                               compute_data_type=torch.float32)
    X, Y = g2.tensor_like(x, name="x"), g2.tensor_like(y, name="y")
    Z = g2.matmul(A=X, B=Y)
    Z.set_output(True).set_data_type(torch.float16)
    cases.append(("matmul 64^3 fp16", g2, {X: x, Y: y, Z: z}, lambda: torch.matmul(x, y, out=z), z,
                  lambda: x.float() @ y.float(), "cudnn_eng"))
    # gemm 16x4096x4096 bf16 (our gemm engine)
    ga = torch.randn(1, 16, 4096, device="cuda", dtype=torch.bfloat16)
    gw = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) / 64
    go = torch.empty(1, 16, 4096, device="cuda", dtype=torch.bfloat16)
    handle3, g3 = device_graph(io_data_type=torch.bfloat16, intermediate_data_type=torch.float32,
                               compute_data_type=torch.float32)
    GA, GB = g3.tensor_like(ga, name="a"), g3.tensor_like(gw.t().unsqueeze(0), name="b")
    GY = g3.matmul(A=GA, B=GB)
    GY.set_output(True).set_data_type(torch.bfloat16)
    go2 = torch.empty(16, 4096, device="cuda", dtype=torch.bfloat16)
    ga2, gwt = ga[0], gw.t()  # the peer's operand views made once, as opgraph's pack is
    cases.append(("gemm 16x4096x4096 bf16", g3, {GA: ga, GB: gw.t().unsqueeze(0), GY: go},
                  lambda: torch.mm(ga2, gwt, out=go2), go, lambda: ga.float() @ gw.float().t(), "gemm"))
    r, bu = args.reps, args.burst
    for (label, g, pack, peer, out, ref, fam) in cases:
        plans, names = first_plans(g, (fam,))
        if fam not in plans:
            failed.append("%s: no %s plan (%s)" % (label, fam, ", ".join(names[:4])))
            continue
        g.select_plan(plans[fam])
        ws = torch.empty(max(g.get_workspace_size(), 1), device="cuda", dtype=torch.uint8)
        out.fill_(float("nan"))
        g.execute(pack, ws)
        torch.cuda.synchronize()
        ok = bool(torch.allclose(out.float(), ref(), atol=2e-2, rtol=2e-2))
        if not ok:
            failed.append("CHECK FAILED host %s: opgraph's output differs from float32 torch" % label)
        prepared = g.prepare_variant_pack(pack)
        vals = [
            ("torch's own call", timing.host_us(peer, r, bu)),
            ("opgraph C++ execute (_execute_repeat, no Python per call)",
             timing.host_us(lambda: g._execute_repeat(pack, ws, bu), r, 1) / bu),
            ("opgraph Python execute, tensor keys", timing.host_us(lambda: g.execute(pack, ws), r, bu)),
            ("opgraph Python execute, prepared pack", timing.host_us(lambda: g.execute(prepared, ws), r, bu)),
            ("binding only (normalise, no run)", timing.host_us(lambda: g._normalize_only(pack, ws), r, bu)),
        ]
        rows.append((label, names[plans[fam]].split("[")[0], ok, vals))
        print("HOST case=%s plan=%s %s" % (label.replace(" ", "_"), names[plans[fam]].split("[")[0],
                                           " ".join("%.2f" % v for _, v in vals)), flush=True)
    print()
    print("host enqueue per call, us (min over %d bursts of %d calls from a drained queue; C++ execute: bursts of "
          "%d inside one _execute_repeat call)" % (r, bu, bu))
    for (label, plan, ok, vals) in rows:
        print("## %s; plan %s; output %s" % (label, plan, "checked" if ok else "WRONG"))
        for name, v in vals:
            print("  %-58s %8.2f" % (name, v))
        diff = vals[2][1] - vals[1][1]
        verdict = "OK" if diff <= args.target_us else "ABOVE TARGET"
        print("  %-58s %+8.2f (target <= %.1f: %s)" % ("Python execute - C++ execute", diff, args.target_us, verdict))
        if diff > args.target_us:
            failed.append("host %s: Python execute - C++ execute %+.2f us, above the %.1f us target" % (
                label, diff, args.target_us))
        print("  %-58s %8.2f" % ("Python execute / torch's own call", vals[2][1] / vals[0][1]))
    for line in failed:
        print(line)
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("gemm", "sdpa", "host"))
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--shapes", default=os.environ.get("OPGRAPH_GEMM_SHAPES", ""))
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--burst", type=int, default=50)
    ap.add_argument("--target-us", type=float, default=2.0, help="host: the binding's cost over the C++ execute")
    args = ap.parse_args()
    print("# compare.py %s: %s; torch %s (cuDNN %s); OPGRAPH_LIBCUDNN=%s" % (
        args.what, torch.cuda.get_device_name(), torch.__version__, torch.backends.cudnn.version(),
        os.environ.get("OPGRAPH_LIBCUDNN", "(search)")), flush=True)
    return {"gemm": run_gemm, "sdpa": run_sdpa, "host": run_host}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
