#!/usr/bin/env python3
"""bench/compare.py — opgraph against its peers, like with like (timing method: bench/timing.py).

  python3 bench/compare.py gemm  [--rounds 10] [--shapes MxNxK/chain,...] [--no-compile]
  python3 bench/compare.py sdpa  [--rounds 10]
  python3 bench/compare.py host  [--reps 200] [--burst 50] [--plan-rounds 100] [--raw-launch-log FILE]
                                 [--dry-run]
  python3 bench/compare.py gdn   [--rounds 20] [--only prefill|decode] [--cells TOKEN,...] [--dry-run]
                                 (bench/compare_gdn.py: gdn forward, ours vs fla vs FlashInfer; its docstring)
  python3 bench/compare.py gdn-bwd [--rounds 20] [--mode bwd|fwdbwd|both] [--cells TOKEN,...] [--dry-run]
                                 (bench/compare_gdn_bwd.py: gdn backward and forward + backward, ours vs fla)

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
host: three tables of HOST time, each measured alone (docs/autotune.md, "Measured host cost"):
  1. create_execution_plans + build_plans through Python per example graph (examples/graphs; the
     pygraph calls both packages share, gdn deserialised from its file): ours and, where the real
     cudnn-frontend package (`cudnn`) imports, cudnn-frontend's on the same graph (validate,
     build_operation_graph, create_execution_plans([A, FALLBACK]), check_support, build_plans);
     median of --plan-rounds interleaved rounds after 2 warm (kernels, engine configs compiled).
     Target <= 200 us for plans of our families (gemm, linear_attention).
  2. Python execute of our one-kernel gemm plan against a raw cuLaunchKernelEx of the same kernel:
     the raw launch and the C++ execute are trust_gpu --host-only's of this bench run
     (--raw-launch-log: its output; the same graph, the plan matched by name), the Python columns this
     process's, both min over 25 bursts from a drained stream / burst. Target <= 1.5x.
  3. per-call execute: a pointwise add (cudnn), a 64^3 fp16 matmul (cudnn) and a 16x4096x4096 bf16
     gemm (our gemm engine): torch's own call, opgraph's C++ execute of the plan (_execute_repeat: no
     Python per call), Python execute (tensor keys, prepared pack), the binding alone and, for the
     cuDNN cases, cudnn-frontend's pygraph.execute of the same graph (same library: OPGRAPH_LIBCUDNN
     is torch's, which cudnn-frontend loads too). Target for cuDNN plans: Python execute within
     --target-us (1.5 us) of the C++ execute.
  Any target missed counts as a failure (exit 1). --dry-run (no torch, no GPU): tables 1 and 3 on the
  host reference engine with numpy buffers and table 2's log parsed: a CPU check that the paths run
  (python/tests/test_bench_host.py), no targets.
Output: progress lines, then the table. Exit 1 when a check fails or a side cannot run.
"""
import argparse
import os
import sys
import time

import opgraph

torch = None  # imported by main(): `host --dry-run` (the CPU check) runs without torch or a GPU
timing = None

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

def real_cudnn_frontend():
    """(the real cudnn-frontend Python package `cudnn`, a line saying what it is), or (None, why not)."""
    try:
        import cudnn
    except Exception as exc:  # noqa: BLE001 - absent or broken: the peer columns say so
        return None, "cudnn-frontend not importable (%s: %s)" % (type(exc).__name__, str(exc).splitlines()[0][:120]
                                                                  if str(exc) else "")
    where = getattr(cudnn, "__file__", "") or ""
    # opgraph's alias package re-exports opgraph's classes; the real package's pygraph is its own.
    # (Not a test on the path: the real wheel may sit in a folder whose name says "opgraph".)
    pygraph_module = getattr(getattr(cudnn, "pygraph", None), "__module__", "") or ""
    if pygraph_module.startswith("opgraph") or not hasattr(cudnn, "backend_version"):
        return None, "the `cudnn` importable here is not cudnn-frontend (%s)" % where
    return cudnn, "cudnn-frontend %s (%s), cuDNN backend %s" % (getattr(cudnn, "__version__", "?"),
                                                               os.path.dirname(where), cudnn.backend_version())


# The example graphs (examples/graphs/*.json) written with the pygraph calls both packages share, so
# one function builds the same graph in opgraph and in cudnn-frontend. gdn has no cudnn-frontend
# form: ours is deserialised from its file.
def ex_matmul_bias_gelu(m, g):
    bf = m.data_type.BFLOAT16
    x = g.tensor(name="x", dim=[1, 32, 64], stride=[2048, 64, 1], data_type=bf)
    w = g.tensor(name="w", dim=[1, 64, 48], stride=[3072, 48, 1], data_type=bf)
    b = g.tensor(name="bias", dim=[1, 1, 48], stride=[48, 48, 1], data_type=bf)
    y = g.gelu(name="gelu", input=g.bias(name="bias_add", input=g.matmul(name="up", A=x, B=w), bias=b))
    y.set_output(True).set_data_type(bf)


def ex_rmsnorm(m, g):
    bf = m.data_type.BFLOAT16
    x = g.tensor(name="x", dim=[8, 256, 1, 1], stride=[256, 1, 1, 1], data_type=bf)
    s = g.tensor(name="scale", dim=[1, 256, 1, 1], stride=[256, 1, 1, 1], data_type=bf)
    eps = g.tensor(name="epsilon", dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], data_type=m.data_type.FLOAT,
                   is_pass_by_value=True)
    y, _ = g.rmsnorm(name="rmsnorm", norm_forward_phase=m.norm_forward_phase.INFERENCE, input=x, scale=s,
                     epsilon=eps)
    y.set_output(True).set_data_type(bf)


def ex_sdpa(m, g):
    bf = m.data_type.BFLOAT16
    q = g.tensor(name="q", dim=[2, 8, 32, 64], stride=[16384, 64, 512, 1], data_type=bf)
    k = g.tensor(name="k", dim=[2, 2, 32, 64], stride=[4096, 64, 128, 1], data_type=bf)
    v = g.tensor(name="v", dim=[2, 2, 32, 64], stride=[4096, 64, 128, 1], data_type=bf)
    o, st = g.sdpa(name="attention", q=q, k=k, v=v, attn_scale=0.125, generate_stats=True, use_causal_mask=True)
    o.set_output(True).set_dim([2, 8, 32, 64]).set_stride([16384, 64, 512, 1]).set_data_type(bf)
    st.set_output(True).set_data_type(m.data_type.FLOAT)


EXAMPLES = [("matmul_bias_gelu", ex_matmul_bias_gelu), ("rmsnorm", ex_rmsnorm),
            ("sdpa_causal_gqa_prefill", ex_sdpa), ("gdn_prefill_varlen", None)]
OUR_FAMILIES = ("gemm", "linear_attention")  # the <= 200 us target applies to plans of these


def plan_build_step(m, handle, build, json_text, out):
    """One timed step: a new graph built (`build`: its clock) then validate, build_operation_graph,
    create_execution_plans([A, FALLBACK]), check_support, build_plans (`plan`: its clock), the
    cudnn-frontend sequence; `out["name"]` the plan built."""
    def step(part):
        t0 = time.perf_counter()
        kw = {"handle": handle} if handle is not None else {}
        g = m.pygraph(io_data_type=m.data_type.BFLOAT16, intermediate_data_type=m.data_type.FLOAT,
                      compute_data_type=m.data_type.FLOAT, **kw)
        if build is not None:
            build(m, g)
        elif handle is not None:
            g.deserialize(handle, json_text)
        else:
            g.deserialize(json_text)
        t1 = time.perf_counter()
        try:
            g.validate()
            g.build_operation_graph()
            g.create_execution_plans([m.heur_mode.A, m.heur_mode.FALLBACK])
            g.check_support()
            g.build_plans()
        except Exception as exc:  # noqa: BLE001 - reported in the table
            out["error"] = "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:100] if str(exc) else "")
            return None
        t2 = time.perf_counter()
        if "name" not in out:
            try:
                out["name"] = g.get_plan_name_at_index(0)
            except Exception:  # noqa: BLE001 - a name is only a label
                out["name"] = "?"
        return 1e6 * ((t1 - t0) if part == "build" else (t2 - t1))
    return step


def plan_build_table(args, fe, handle, fe_handle):
    """create_execution_plans + build_plans through Python per example graph, ours and cudnn-frontend's."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "graphs")
    rows = []
    for name, build in EXAMPLES:
        text = open(os.path.join(root, name + ".json")).read() if build is None else None
        ours, theirs, cols = {}, {}, {}
        o_step = plan_build_step(opgraph, handle, build, text, ours)
        cols["ours build"] = lambda s=o_step: s("build")
        cols["ours plan"] = lambda s=o_step: s("plan")
        if fe is not None and build is not None:
            t_step = plan_build_step(fe, fe_handle, build, None, theirs)
            cols["fe build"] = lambda s=t_step: s("build")
            cols["fe plan"] = lambda s=t_step: s("plan")
        # Rounds: --plan-rounds, or fewer (at least 11) where a round takes milliseconds (cuDNN's
        # plans), so a row takes about 5 s; the first call of each column warms it.
        one = sum(v for v in (step() for step in cols.values()) if v is not None)
        n = args.plan_rounds if one * args.plan_rounds <= 5e6 else max(11, min(args.plan_rounds, int(5e6 / one)))
        med = timing.median_us(cols, n, warm=1)
        med["n"] = n
        rows.append((name, med, ours, theirs))
        print("PLANBUILD graph=%s %s plan=%s%s" % (
            name, " ".join("%s=%s" % (k.replace(" ", "_"), "-" if v is None else "%.1f" % v) for k, v in med.items()
                             if k != "n"),
            ours.get("name", "?").split("[")[0], "".join(" %s_error=%r" % (w, d["error"]) for w, d in
                                                        (("ours", ours), ("fe", theirs)) if "error" in d)), flush=True)
    f = lambda v: "-" if v is None else "%.1f" % v  # noqa: E731
    print()
    print("### create_execution_plans + build_plans through Python, per example graph (host us, median of n "
          "interleaved rounds (%d, fewer where a round takes milliseconds) after a warm one: kernels / engine configs "
          "compiled)" % args.plan_rounds)
    print("build = the pygraph calls that declare the graph; plan = validate, build_operation_graph, "
          "create_execution_plans([A, FALLBACK]), check_support, build_plans (cudnn-frontend's sequence)")
    print("%-26s %10s %10s %10s %10s %9s %5s  %-9s %s" % ("graph", "ours build", "ours plan", "fe build", "fe plan",
                                                         "fe/ours", "n", "target", "our plan"))
    failed = []
    for name, med, ours, theirs in rows:
        op, tp = med.get("ours plan"), med.get("fe plan")
        plan = ours.get("name", "?")
        ours_family = plan.startswith(OUR_FAMILIES)
        verdict = "-" if not ours_family or op is None or args.dry_run else (
            "OK" if op <= args.plan_target_us else "ABOVE")
        if verdict == "ABOVE":
            failed.append("plan+build %s: ours %.1f us, above the %.0f us target" % (name, op, args.plan_target_us))
        print("%-26s %10s %10s %10s %10s %9s %5d  %-9s %s" % (
            name, f(med.get("ours build")), f(op), f(med.get("fe build")), f(tp),
            "%.2f" % (tp / op) if op and tp else "-", med["n"], verdict, plan[:48]))
        for who, d in (("ours", ours), ("cudnn-frontend", theirs)):
            if "error" in d:
                print("  %s: %s" % (who, d["error"]))
    print("(target <= %.0f us for plans of our families %s; fe = cudnn-frontend %s)" % (
        args.plan_target_us, "/".join(OUR_FAMILIES), "(absent)" if fe is None else "on the same graph"))
    return failed


def parse_trust_host(text):
    """trust_gpu --host-only's gemm table: (plan name, {burst: (raw_launch_ns, cpp_execute_prepared_ns,
    cpp_execute_caller_ns)}), or (None, {}) when the log has none."""
    name, rows, in_table = None, {}, False
    for line in text.splitlines():
        if line.startswith("gemm plan: "):
            name = line[len("gemm plan: "):].strip()
        elif line.split()[:2] == ["burst", "raw_launch"]:
            in_table = True
        elif in_table:
            f = line.split()
            if len(f) >= 5 and f[0].isdigit():
                rows[int(f[0])] = (float(f[1]), float(f[2]), float(f[3]))
            else:
                in_table = False
    return name, rows


def trust_gemm_graph(m, handle):
    """trust_gpu --host-only's gemm graph (tests/gemm_gpu/gemm_gpu_util.h build_case of
    {1, 128, 256, 256, A row-major, B column-major, bf16 -> bf16}), written with pygraph calls."""
    kw = {"handle": handle} if handle is not None else {}
    g = m.pygraph(intermediate_data_type=m.data_type.FLOAT, compute_data_type=m.data_type.FLOAT, **kw)
    a = g.tensor(name="A", dim=[1, 128, 256], stride=[128 * 256, 256, 1], data_type=m.data_type.BFLOAT16)
    b = g.tensor(name="B", dim=[1, 256, 256], stride=[256 * 256, 1, 256], data_type=m.data_type.BFLOAT16)
    c = g.matmul(A=a, B=b)
    c.set_output(True).set_name("C").set_data_type(m.data_type.BFLOAT16)
    return g, a, b, c


def raw_launch_table(args, handle):
    """Python execute of our one-kernel gemm plan against a raw cuLaunchKernelEx of the same kernel
    (trust_gpu --host-only in the same bench run: the same graph, the same plan by name)."""
    failed = []
    if not args.raw_launch_log or not os.path.exists(args.raw_launch_log):
        print("\n### Python execute vs a raw cuLaunchKernelEx: no trust_gpu --host-only log given (--raw-launch-log)")
        return failed
    name, rows = parse_trust_host(open(args.raw_launch_log).read())
    if not name or not rows:
        failed.append("raw launch: %s has no gemm host table" % args.raw_launch_log)
        print(failed[-1])
        return failed
    print("RAWLAUNCH plan=%s bursts=%s" % (name.split("[")[0], ",".join(str(b) for b in sorted(rows))), flush=True)
    if args.dry_run:  # the CPU check: the log parsed, nothing to launch
        print("(dry run: parsed trust_gpu's table, %d bursts; the Python column needs the device)" % len(rows))
        return failed
    g, A, B, C = trust_gemm_graph(opgraph, handle)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    names = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
    if name not in names:
        failed.append("raw launch: trust_gpu's plan %s is not in this graph's list (%s)" % (name, ", ".join(names[:4])))
        print(failed[-1])
        return failed
    idx = names.index(name)
    g.build_plan_at_index(idx)
    g.select_plan(idx)
    a = torch.randn(1, 128, 256, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16) / 16
    b = w.t().unsqueeze(0)  # [1, K, N] column-major
    c = torch.full((1, 128, 256), float("nan"), device="cuda", dtype=torch.bfloat16)
    ws = torch.empty(max(g.get_workspace_size(), 1), device="cuda", dtype=torch.uint8)
    pack = {A: a, B: b, C: c}
    g.execute(pack, ws)
    torch.cuda.synchronize()
    ok = bool(torch.allclose(c.float(), a.float() @ b.float(), atol=5e-2, rtol=2e-2))
    if not ok:
        failed.append("CHECK FAILED raw-launch case: opgraph's output differs from float32 torch")
    prepared = g.prepare_variant_pack(pack)
    print("\n### Python execute of our one-kernel plan vs a raw cuLaunchKernelEx of the same kernel")
    print("plan %s (trust_gpu --host-only, same run: raw launch and C++ execute; this process: Python); host us "
          "per call, min over 25 bursts from a drained stream / burst (the same method on both sides); output %s"
          % (name[:60], "checked" if ok else "WRONG"))
    print("%-6s %10s %13s %14s %16s %12s %12s" % ("burst", "raw", "C++ execute", "Python execute",
                                                  "Python prepared", "Python/raw", "prepared/raw"))
    ratios = []
    for burst in sorted(rows):
        raw, cpp, _ = (v / 1e3 for v in rows[burst])
        py = timing.host_us(lambda: g.execute(pack, ws), 25, burst)
        pp = timing.host_us(lambda: g.execute(prepared, ws), 25, burst)
        ratios.append(py / raw)
        print("%-6d %10.2f %13.2f %14.2f %16.2f %12.2f %12.2f" % (burst, raw, cpp, py, pp, py / raw, pp / raw))
    med = sorted(ratios)[len(ratios) // 2]
    print("median Python execute / raw launch over the bursts: %.2f (target <= %.1f: %s)" % (
        med, args.raw_target, "OK" if med <= args.raw_target else "ABOVE TARGET"))
    if med > args.raw_target:
        failed.append("raw launch: Python execute / raw cuLaunchKernelEx %.2f, above the %.1fx target" % (
            med, args.raw_target))
    return failed


def fe_graph_for(fe, fe_handle, case):
    """The same case built in cudnn-frontend (case.build(module, graph) -> {tensor: buffer}), planned
    with its sequence; (graph, pack, workspace) or a string saying why not."""
    try:
        g = fe.pygraph(handle=fe_handle, io_data_type=case.io(fe), intermediate_data_type=fe.data_type.FLOAT,
                       compute_data_type=fe.data_type.FLOAT)
        pack = case.build(fe, g)
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([fe.heur_mode.A, fe.heur_mode.FALLBACK])
        g.check_support()
        g.build_plans()
        ws = torch.empty(max(g.get_workspace_size(), 1), device="cuda", dtype=torch.uint8)
        return g, pack, ws
    except Exception as exc:  # noqa: BLE001 - the row says why
        return "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:120] if str(exc) else "")


class Case:
    """A host case: `build(m, g)` declares it in module m (opgraph or cudnn-frontend) on graph g and
    returns {tensor: buffer}; io(m) its io data type; peer: torch's own call; ref: the float32 result."""

    def __init__(self, label, fam, io, build, out, ref, peer):
        self.label, self.fam, self.io, self.build, self.out, self.ref, self.peer = label, fam, io, build, out, ref, peer


def host_cases(dry_run):
    if dry_run:  # numpy on the host reference: the code paths; small, so the binding's cost shows beside the run
        import numpy as np
        a, b = np.random.default_rng(1).standard_normal((2, 1, 64)).astype(np.float32)
        c = np.full((1, 64), np.nan, np.float32)

        def add_np(m, g):
            A, B = g.tensor_like(a, name="a"), g.tensor_like(b, name="b")
            C = g.add(a=A, b=B)
            C.set_output(True).set_data_type(m.data_type.FLOAT)
            return {A: a, B: b, C: c}
        return [Case("add 1x64 fp32 (host reference)", "reference", lambda m: m.data_type.FLOAT, add_np, c,
                     lambda: a + b, None)]
    cases = []
    a = torch.randn(1, 4096, device="cuda", dtype=torch.float16)
    b2 = torch.randn(1, 4096, device="cuda", dtype=torch.float16)
    c = torch.empty_like(a)

    def add(m, g):
        A, B = g.tensor_like(a, name="a"), g.tensor_like(b2, name="b")
        C = g.add(a=A, b=B)
        C.set_output(True).set_data_type(m.data_type.HALF)
        return {A: a, B: b2, C: c}
    cases.append(Case("add 1x4096 fp16", "cudnn_eng", lambda m: m.data_type.HALF, add, c,
                      lambda: a.float() + b2.float(), lambda: torch.add(a, b2, out=c)))
    x = torch.randn(1, 64, 64, device="cuda", dtype=torch.float16)
    y = torch.randn(1, 64, 64, device="cuda", dtype=torch.float16) / 8
    z = torch.empty(1, 64, 64, device="cuda", dtype=torch.float16)

    def mm(m, g):
        X, Y = g.tensor_like(x, name="x"), g.tensor_like(y, name="y")
        Z = g.matmul(A=X, B=Y)
        Z.set_output(True).set_data_type(m.data_type.HALF)
        return {X: x, Y: y, Z: z}
    cases.append(Case("matmul 64^3 fp16", "cudnn_eng", lambda m: m.data_type.HALF, mm, z,
                      lambda: x.float() @ y.float(), lambda: torch.matmul(x, y, out=z)))
    ga = torch.randn(1, 16, 4096, device="cuda", dtype=torch.bfloat16)
    gw = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) / 64
    gb = gw.t().unsqueeze(0)
    go = torch.empty(1, 16, 4096, device="cuda", dtype=torch.bfloat16)
    go2 = torch.empty(16, 4096, device="cuda", dtype=torch.bfloat16)
    ga2, gwt = ga[0], gw.t()  # the peer's operand views made once, as opgraph's pack is

    def gemm(m, g):
        GA, GB = g.tensor_like(ga, name="a"), g.tensor_like(gb, name="b")
        GY = g.matmul(A=GA, B=GB)
        GY.set_output(True).set_data_type(m.data_type.BFLOAT16)
        return {GA: ga, GB: gb, GY: go}
    cases.append(Case("gemm 16x4096x4096 bf16", "gemm", lambda m: m.data_type.BFLOAT16, gemm, go,
                      lambda: ga.float() @ gw.float().t(), lambda: torch.mm(ga2, gwt, out=go2)))
    return cases


def run_host(args):
    failed = []
    fe, fe_line = real_cudnn_frontend()
    print("peer: %s" % fe_line, flush=True)
    if args.dry_run:
        handle = fe_handle = None
        drain = (lambda: None)  # noqa: E731
    else:
        handle = opgraph.create_handle()
        opgraph.set_stream(handle, torch.cuda.current_stream())
        fe_handle = None
        if fe is not None:
            try:
                fe_handle = fe.create_handle()
                fe.set_stream(handle=fe_handle, stream=torch.cuda.current_stream().cuda_stream)
            except Exception as exc:  # noqa: BLE001 - its columns say why
                fe, fe_line = None, "cudnn-frontend's create_handle raised %s: %s" % (type(exc).__name__, exc)
                print("peer: %s" % fe_line, flush=True)
        drain = torch.cuda.synchronize
        print("torch tensors read through: %s" % (
            "torch's DLPack C exchange table (__dlpack_c_exchange_api__)" if opgraph._C._torch_exchange_api()[0]
            else "their attributes (this torch has no DLPack C exchange table)"), flush=True)
    failed += plan_build_table(args, fe, handle, fe_handle)
    failed += raw_launch_table(args, handle)

    rows = []
    r, bu = args.reps, args.burst
    for case in host_cases(args.dry_run):
        kw = {"handle": handle} if handle is not None else {}
        g = opgraph.pygraph(io_data_type=case.io(opgraph), intermediate_data_type=opgraph.data_type.FLOAT,
                            compute_data_type=opgraph.data_type.FLOAT, **kw)
        pack = case.build(opgraph, g)
        fams = (case.fam,) if not args.dry_run else ("",)
        plans, names = first_plans(g, fams)
        if fams[0] not in plans:
            failed.append("%s: no %s plan (%s)" % (case.label, case.fam, ", ".join(names[:4])))
            continue
        idx = plans[fams[0]]
        g.select_plan(idx)
        ws_bytes = max(g.get_workspace_size(), 1)
        ws = None if args.dry_run else torch.empty(ws_bytes, device="cuda", dtype=torch.uint8)
        case.out[...] = float("nan")
        g.execute(pack, ws)
        drain()
        ref = case.ref()
        if args.dry_run:
            import numpy as np
            ok = bool(np.allclose(case.out, ref, atol=2e-2, rtol=2e-2))
        else:
            ok = bool(torch.allclose(case.out.float(), ref, atol=2e-2, rtol=2e-2))
        if not ok:
            failed.append("CHECK FAILED host %s: opgraph's output differs from the reference" % case.label)
        prepared = g.prepare_variant_pack(pack)
        vals = []
        if case.peer is not None:
            vals.append(("torch's own call", timing.host_us(case.peer, r, bu, drain)))
        vals += [
            ("opgraph C++ execute (_execute_repeat, no Python per call)",
             timing.host_us(lambda: g._execute_repeat(pack, ws, bu), r, 1, drain) / bu),
            ("opgraph Python execute, tensor keys", timing.host_us(lambda: g.execute(pack, ws), r, bu, drain)),
            ("opgraph Python execute, prepared pack", timing.host_us(lambda: g.execute(prepared, ws), r, bu, drain)),
            ("binding only (normalise, no run)", timing.host_us(lambda: g._normalize_only(pack, ws), r, bu, drain)),
        ]
        if not args.dry_run and opgraph._C._torch_exchange_api()[0]:
            # The same call reading each torch tensor's attributes instead of torch's DLPack C
            # exchange table (the binding's fallback for an older torch): the table's gain.
            opgraph._C._torch_exchange_api(False)
            try:
                vals.append(("Python execute, tensor keys, attribute reads",
                             timing.host_us(lambda: g.execute(pack, ws), r, bu, drain)))
            finally:
                opgraph._C._torch_exchange_api(True)
        fe_note = None
        if case.fam == "cudnn_eng":
            if fe is None:
                fe_note = fe_line
            else:
                got = fe_graph_for(fe, fe_handle, case)
                if isinstance(got, str):
                    fe_note = "cudnn-frontend could not plan it: " + got
                else:
                    fg, fpack, fws = got
                    try:
                        case.out[...] = float("nan")
                        fg.execute(fpack, fws, handle=fe_handle)
                        drain()
                        if not bool(torch.allclose(case.out.float(), ref, atol=2e-2, rtol=2e-2)):
                            failed.append("CHECK FAILED host %s: cudnn-frontend's output differs" % case.label)
                        vals.append(("cudnn-frontend pygraph.execute",
                                     timing.host_us(lambda: fg.execute(fpack, fws, handle=fe_handle), r, bu, drain)))
                    except Exception as exc:  # noqa: BLE001 - the row says why
                        fe_note = "cudnn-frontend's execute raised %s: %s" % (
                            type(exc).__name__, str(exc).splitlines()[0][:120] if str(exc) else "")
        rows.append((case, names[idx].split("[")[0], ok, dict(vals), [n for n, _ in vals], fe_note))
        print("HOST case=%s plan=%s %s" % (case.label.replace(" ", "_"), names[idx].split("[")[0],
                                           " ".join("%.2f" % v for _, v in vals)), flush=True)
    print()
    print("### per-call host cost of execute, us (min over %d bursts of %d calls from a drained queue; C++ execute: "
          "bursts of %d inside one _execute_repeat call)" % (r, bu, bu))
    for (case, plan, ok, vals, order, fe_note) in rows:
        print("## %s; plan %s; output %s" % (case.label, plan, "checked" if ok else "WRONG"))
        for name in order:
            print("  %-58s %8.2f" % (name, vals[name]))
        py, cpp = vals["opgraph Python execute, tensor keys"], vals["opgraph C++ execute (_execute_repeat, no Python per call)"]
        diff = py - cpp
        if case.fam == "cudnn_eng":  # the cuDNN plans' target: the C++ execute + 1.5 us
            verdict = "OK" if diff <= args.target_us else "ABOVE TARGET"
            print("  %-58s %+8.2f (target <= %.1f: %s)" % ("Python execute - C++ execute", diff, args.target_us,
                                                           verdict))
            if diff > args.target_us:
                failed.append("host %s: Python execute - C++ execute %+.2f us, above the %.1f us target" % (
                    case.label, diff, args.target_us))
        elif args.dry_run:
            print("  %-58s %+8.2f (dry run: no target)" % ("Python execute - C++ execute", diff))
        else:
            print("  %-58s %+8.2f (our plans: see the raw-launch table)" % ("Python execute - C++ execute", diff))
        if "torch's own call" in vals:
            print("  %-58s %8.2f" % ("Python execute / torch's own call", py / vals["torch's own call"]))
        if "cudnn-frontend pygraph.execute" in vals:
            print("  %-58s %8.2f" % ("Python execute / cudnn-frontend pygraph.execute",
                                     py / vals["cudnn-frontend pygraph.execute"]))
        elif fe_note:
            print("  cudnn-frontend pygraph.execute: - (%s)" % fe_note)
    if not args.dry_run:
        print("libcudnn mapped in this process (opgraph's plans and cudnn-frontend's): %s" % (
            ", ".join(loaded_cudnn()) or "?"))
    for line in failed:
        print(line)
    return 1 if failed else 0


def main():
    global torch, timing
    if sys.argv[1:2] == ["gdn"]:  # its own arguments and module (bench/compare_gdn.py)
        import compare_gdn
        return compare_gdn.main(sys.argv[2:])
    if sys.argv[1:2] == ["gdn-bwd"]:  # bench/compare_gdn_bwd.py: gdn backward, ours vs fla
        import compare_gdn_bwd
        return compare_gdn_bwd.main(sys.argv[2:])
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("gemm", "sdpa", "host"))
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--shapes", default=os.environ.get("OPGRAPH_GEMM_SHAPES", ""))
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--burst", type=int, default=50)
    ap.add_argument("--target-us", type=float, default=1.5,
                    help="host: a cuDNN plan's Python execute above its C++ execute")
    ap.add_argument("--plan-rounds", type=int, default=100, help="host: rounds of the plan + build table")
    ap.add_argument("--plan-target-us", type=float, default=200.0,
                    help="host: create_execution_plans + build_plans of our families")
    ap.add_argument("--raw-launch-log", default="",
                    help="host: trust_gpu --host-only's output of this run (raw cuLaunchKernelEx, C++ execute)")
    ap.add_argument("--raw-target", type=float, default=1.5, help="host: Python execute / raw cuLaunchKernelEx")
    ap.add_argument("--dry-run", action="store_true",
                    help="host only: no torch, no GPU; the host reference engine on numpy buffers (a CPU check "
                         "that the code paths run, not figures)")
    args = ap.parse_args()
    if args.dry_run and args.what != "host":
        ap.error("--dry-run is for host")
    import timing as timing_module
    timing = timing_module
    if args.dry_run:
        print("# compare.py host --dry-run: the host reference engine, numpy buffers (no torch, no GPU)", flush=True)
        return run_host(args)
    import torch as torch_module
    torch = torch_module
    print("# compare.py %s: %s; torch %s (cuDNN %s); OPGRAPH_LIBCUDNN=%s" % (
        args.what, torch.cuda.get_device_name(), torch.__version__, torch.backends.cudnn.version(),
        os.environ.get("OPGRAPH_LIBCUDNN", "(search)")), flush=True)
    return {"gemm": run_gemm, "sdpa": run_sdpa, "host": run_host}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
