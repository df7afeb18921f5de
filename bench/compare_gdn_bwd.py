#!/usr/bin/env python3
"""bench/compare_gdn_bwd.py — gdn backward (Gated DeltaNet): ours against fla in one process.

  python3 bench/compare.py gdn-bwd [--rounds 20] [--cells TOKEN,...] [--mode bwd|fwdbwd|both] [--dry-run]
                                   [--process-per-cell]
  (bench/run.sh gdn-bwd-peers runs it on the device)

--process-per-cell (or OPGRAPH_GDN_BWD_PROCESS_PER_CELL=1): each cell in a child process of its own (this script,
--cells <the cell's key>, its row handed back as JSON), the table printed by the parent. On an 80 GB H100 the one
process ran out of device memory after the first cell (2026-12-06: ~79 GiB held, PyTorch 7-21 GiB of it, once
fla's backward had failed to capture), which the H200's 141 GB never showed; a process a cell gives every cell a
fresh device context, at the cost of fla's Triton autotuning once a cell instead of once a head configuration.

Timing: bench/timing.py's method (kernel time against kernel time; each side's call captured into a CUDA
graph and replayed, interleaved round by round, median; where a side cannot be captured — fla's backward
runs through torch.autograd, whose kernels follow the forward's stream — every side of the cell is timed
by profiler device time instead, and the table says so).

Cells (bf16 q/k/v, d = 128, fp32 g / beta / states, use_qk_l2norm in the kernel, scale d^-1/2, initial
state in, d_final_state in): the forward comparison's five cells of the issue (16/64 4x8192, 16/64 1x32768,
16/32 4x8192, 16/32 1x32768, 2/8 1x32768) and its 16/32 varlen batch (8 mixed lengths, 32768 tokens).

Sides (the same input tensors; --dry-run prints each declaration without torch or a GPU):
  bwd      backward alone.
           ours: one gdn_bwd graph (dQ, dK, dV bf16; dG, dBeta, d_initial_state fp32) over the cell's
           tensors, dO bf16 and d_final_state fp32; built once, its workspace allocated once. It recomputes
           the forward's chunk states itself (it takes q, k, v, g, beta and the initial state).
           fla: fla.ops.gated_delta_rule.chunk_gated_delta_rule run once with autograd outside the timed
           region; the timed call is torch.autograd.grad((o, final_state), (q, k, v, g, beta, h0),
           (dO, d_final_state), retain_graph=True): every backward kernel of fla, its recomputation included.
           fla 0.6.0's guard against Triton 3.4..3.7.1 on Hopper is lifted as the issue's anchors were (its
           gradients are checked against ours below).
  fwdbwd   a training step's two halves: ours = our gdn forward's first plan + the gdn_bwd graph; fla = its
           forward with autograd + torch.autograd.grad as above.
Check: before timing, each gradient of fla against ours by RMS ratio rms(fla - ours) / rms(ours) (ours'
outputs poisoned first): above 3e-2 for dq, dk, dv, d_initial_state or 6e-2 for dg, dbeta (twice fla's
tolerances against the exact result: 8e-3 / 2e-2, plus bf16 rounding of the outputs) is a failure.

The table comes last: ours / fla per cell and mode, with the issue's anchors (fla-core 0.6.0 on this H200,
2026-12-01, not same-run) and FlashQLA's published H200 backward (QwenLM/FlashQLA benchmark_results_H200.txt,
marked "published"). Missing torch, opgraph or fla is named; a missing fla leaves its columns empty and the
run exits 1.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_gdn as fwd  # noqa: E402 - the cells, the peers' site dirs and the RMS ratio are the forward's

D = fwd.D
# The anchors (fla-core 0.6.0, this H200, 2026-12-01; torch.autograd.grad of (o, final_state) against
# (q, k, v, g, beta), ms): backward alone, forward + backward. Not same-run.
ANCHORS = {
    "16/64@4x8192": (9.922, 13.139),
    "16/64@1x32768": (10.734, 14.602),
    "16/32@4x8192": (5.661, 7.309),
    "16/32@1x32768": (6.720, 8.800),
    "2/8@1x32768": (2.709, 3.633),
}
# FlashQLA's published H200 backward (QwenLM/FlashQLA benchmark_results_H200.txt), ms. Its "32k_4seq" case is one
# varlen batch of 32768 tokens cut at random (its seed 42: FLASHQLA_VARLEN, read from its benchmark script at
# c18a486), with its own gates (a quarter of the heads g = 0, the rest logsigmoid(N(0, 1)) / 16): the cell below has
# its lengths, not its gates.
FLASHQLA_VARLEN = (7212, 7072, 13725, 4759)
PUBLISHED = {"16/32@1x32768": 2.515, "16/32@varlen4x32768": 2.978}
PUBLISHED_NOTE = ("FlashQLA also publishes 2.893 ms for 8 sequences of 4096 tokens (not one of these cells); its "
                  "varlen4x32768 figure is under its own gates, ours under the cells' logsigmoid(N(0, 1))")
TOL = {"dq": 3e-2, "dk": 3e-2, "dv": 3e-2, "dh0": 3e-2, "dg": 6e-2, "dbeta": 6e-2}
TARGETS = "targets: backward ours/fla <= 0.33, forward + backward ours/fla <= 0.3"
GRADS = ("dq", "dk", "dv", "dg", "dbeta", "dh0")


def cells():
    return [c for c in fwd.cells() if c.kind == "prefill" and c.key != "16/64@1x2048"] + [
        fwd.Cell("prefill", 16, 32, FLASHQLA_VARLEN)]


def select(all_cells, tokens):
    return fwd.select(all_cells, "prefill", tokens)


def attributes():
    return dict(scale=D ** -0.5, use_qk_l2norm=True)


def declare_bwd(opgraph, g, c, tensors):
    """Our gdn_bwd node over the cell's operands (tensor_like of tensors[name] when given, else by dims)."""
    bf16, f32 = opgraph.data_type.BFLOAT16, opgraph.data_type.FLOAT
    spec = [("q", [c.t, c.hq, D], bf16), ("k", [c.t, c.hq, D], bf16), ("v", [c.t, c.hv, D], bf16),
            ("g", [c.t, c.hv], f32), ("beta", [c.t, c.hv], f32), ("cu_seqlens", [c.n + 1], opgraph.data_type.INT64),
            ("initial_state", [c.n, c.hv, D, D], f32), ("dO", [c.t, c.hv, D], bf16),
            ("d_final_state", [c.n, c.hv, D, D], f32)]
    ports = {}
    for name, dims, dt in spec:
        x = tensors.get(name) if tensors else None
        ports[name] = g.tensor_like(x, name=name) if x is not None else g.tensor(dim=dims, data_type=dt, name=name)
    outs = g.gdn_bwd(**ports, **attributes())
    named = dict(zip(("dq", "dk", "dv", "dg", "dbeta", "dh0"), outs[:6]))
    for name, t in named.items():
        t.set_output(True).set_data_type(bf16 if name in ("dq", "dk", "dv") else f32)
    return ports, named


def mapping(c):
    shape = ("q, k as [%d, %d, %d, %d], v as [%d, %d, %d, %d], g, beta as [%d, %d, %d] (views of ours)" % (
        c.n, c.lengths[0], c.hq, D, c.n, c.lengths[0], c.hv, D, c.n, c.lengths[0], c.hv) if c.equal else
        "q, k, v, g, beta as [1, T, ...] views of ours, cu_seqlens = ours, chunk_indices prepared once")
    return {
        "ours": "gdn_bwd, THD varlen: q, k bf16[%d, %d, %d], v bf16[%d, %d, %d], g, beta f32[%d, %d], cu_seqlens "
                "i64[%d], initial_state f32[%d, %d, %d, %d] (V-major), dO bf16[%d, %d, %d], d_final_state f32 "
                "(as initial_state); dQ, dK, dV bf16, dG, dBeta, d_initial_state f32; scale=d^-1/2, "
                "use_qk_l2norm=True; fwdbwd adds our gdn forward's first plan (O bf16, final_state f32)" % (
                    c.t, c.hq, D, c.t, c.hv, D, c.t, c.hv, c.n + 1, c.n, c.hv, D, D, c.t, c.hv, D),
        "fla": "chunk_gated_delta_rule(%s; leaf copies with requires_grad; g log space, beta = ours, "
               "initial_state = ours with state_v_first=True, output_final_state=True, "
               "use_qk_l2norm_in_kernel=True, scale=d^-1/2); bwd: torch.autograd.grad((o, final_state), "
               "(q, k, v, g, beta, h0), (dO, d_final_state), retain_graph=True) after one forward outside the "
               "timed region; fwdbwd: the forward and that grad per call" % shape,
    }


def dry_run(args, sel):
    print("# compare.py gdn-bwd --dry-run: the cells, each side's declaration, our plans for an sm_90 target "
          "with 132 SMs (deviceless planning); no torch, no GPU")
    fwd.peer_site_dirs()
    for mod in ("torch", "opgraph", "fla"):
        where = fwd.find(mod)
        print("import %-10s %s" % (mod, where if where else "NOT FOUND (needed on the device)"))
    try:
        import opgraph
    except ImportError as exc:
        print("opgraph not importable (%s): declarations not checked" % exc)
        opgraph = None
    bad = 0
    for c in sel:
        print()
        print("CELL %s N=%d T=%d HQ=HK=%d HV=%d D=%d" % (c.key, c.n, c.t, c.hq, c.hv, D))
        for side, line in mapping(c).items():
            print("  MAP %-5s %s" % (side, line))
        if c.key in ANCHORS:
            print("  ANCHOR (2026-12-01, not same-run) fla backward %.3f ms, fla forward + backward %.3f ms%s" % (
                ANCHORS[c.key] + ((", FlashQLA backward %.3f ms (published)" % PUBLISHED[c.key])
                                  if c.key in PUBLISHED else "",)))
        elif c.key in PUBLISHED:
            print("  PUBLISHED FlashQLA backward %.3f ms (H200, its gates; not same-run)" % PUBLISHED[c.key])
        if opgraph is None:
            continue
        try:
            g = opgraph.pygraph(io_data_type=opgraph.data_type.BFLOAT16, intermediate_data_type=opgraph.data_type.FLOAT,
                                compute_data_type=opgraph.data_type.FLOAT, sm_version=90, sm_count=132)
            _, named = declare_bwd(opgraph, g, c, None)
            g.validate()
            g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
            names = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
            ours = [n for n in names if n.startswith("linear_attention")]
            print("  DECLARED dq %s dg %s dh0 %s; our plans (sm_90, 132 SMs): %s" % (
                named["dq"].dims, named["dg"].dims, named["dh0"].dims, ", ".join(ours) or "NONE"))
            if not ours:
                bad += 1
                print("  NO PLAN OF OURS: %s" % ", ".join(names))
        except Exception as exc:  # noqa: BLE001 - a declaration error is reported per cell
            bad += 1
            print("  DECLARATION FAILED: %s: %s" % (type(exc).__name__, exc))
    print()
    print("%d cells, %d declaration failures" % (len(sel), bad))
    print(PUBLISHED_NOTE)
    return 1 if bad else 0


# ---------------------------------------------------------------------------- the device run

def _ours(c, torch, opgraph, t, failed):
    """(run_bwd, run_fwdbwd, outputs, poison): our gdn_bwd graph and our gdn forward, each built once."""
    handle = opgraph.create_handle()
    opgraph.set_stream(handle, torch.cuda.current_stream())
    mk = lambda: opgraph.pygraph(handle=handle, io_data_type=torch.bfloat16,  # noqa: E731
                                 intermediate_data_type=torch.float32, compute_data_type=torch.float32)
    gb = mk()
    ports, named = declare_bwd(opgraph, gb, c, t)
    gb.validate()
    gb.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    name = gb.get_plan_name_at_index(0)
    if not name.startswith("linear_attention"):
        failed.append("%s: our gdn_bwd's first plan is %s, not the linear_attention engine" % (c.key, name))
    gb.check_support()
    gb.build_plans()
    outs = {"dq": torch.empty_like(t["q"]), "dk": torch.empty_like(t["k"]), "dv": torch.empty_like(t["v"]),
            "dg": torch.empty_like(t["g"]), "dbeta": torch.empty_like(t["beta"]),
            "dh0": torch.empty_like(t["initial_state"])}
    pack = {ports[n]: t[n] for n in ports}
    pack.update({named[n]: outs[n] for n in named})
    wb = torch.empty(max(gb.get_workspace_size(), 1), device="cuda", dtype=torch.uint8)

    gf = mk()
    fports, o, fs = fwd.declare(opgraph, gf, c, {"q": t["q"], "k": t["k"], "v": t["v"], "g": t["g"],
                                                 "beta": t["beta"], "cu_seqlens": t["cu_seqlens"],
                                                 "h0": t["initial_state"]})
    gf.validate()
    gf.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    gf.check_support()
    gf.build_plans()
    o_buf, fs_buf = torch.empty_like(t["dO"]), torch.empty_like(t["initial_state"])
    names = {"q": "q", "k": "k", "v": "v", "g": "g", "beta": "beta", "cu_seqlens": "cu_seqlens",
             "initial_state": "initial_state"}
    fpack = {fports[p]: t[names[p]] for p in names}
    fpack[o], fpack[fs] = o_buf, fs_buf
    wf = torch.empty(max(gf.get_workspace_size(), 1), device="cuda", dtype=torch.uint8)
    print("  ours: gdn_bwd %s (workspace %.2f GB); forward %s (workspace %.2f GB)" % (
        name, wb.numel() / 1e9, gf.get_plan_name_at_index(gf.get_selected_plan_index()), wf.numel() / 1e9))

    def run_bwd():
        gb.execute(pack, wb)

    def run_fwdbwd():
        gf.execute(fpack, wf)
        gb.execute(pack, wb)

    def poison():
        for x in outs.values():
            x.fill_(float("nan"))
    return run_bwd, run_fwdbwd, outs, poison, (lambda s: opgraph.set_stream(handle, s)), (gb, gf)


def _fla(c, torch, fla_gdn, prepare_chunk_indices, t):
    """(run_bwd, run_fwdbwd, grads): fla on leaf copies of the cell's tensors (views in fla's layout)."""
    if c.equal:
        b, L = c.n, c.lengths[0]
        view = {"q": (b, L, c.hq, D), "k": (b, L, c.hq, D), "v": (b, L, c.hv, D), "g": (b, L, c.hv),
                "beta": (b, L, c.hv), "dO": (b, L, c.hv, D)}
        extra = {}
    else:
        view = {n: (1,) + tuple(t[n].shape) for n in ("q", "k", "v", "g", "beta", "dO")}
        extra = {"cu_seqlens": t["cu_seqlens"], "chunk_indices": prepare_chunk_indices(t["cu_seqlens"], fwd.CHUNK)}
    leaf = {n: t[n].detach().reshape(view[n]).clone().requires_grad_(True) for n in ("q", "k", "v", "g", "beta")}
    leaf["h0"] = t["initial_state"].detach().clone().requires_grad_(True)
    ins = [leaf[n] for n in ("q", "k", "v", "g", "beta", "h0")]
    d_o, d_s = t["dO"].reshape(view["dO"]), t["d_final_state"]
    scale = D ** -0.5

    def forward():
        return fla_gdn(leaf["q"], leaf["k"], leaf["v"], leaf["g"], leaf["beta"], scale=scale, initial_state=leaf["h0"],
                       output_final_state=True, use_qk_l2norm_in_kernel=True, state_v_first=True, **extra)
    held = {"out": forward(), "grads": None}

    def run_bwd():
        o, s = held["out"]
        held["grads"] = torch.autograd.grad((o, s), ins, (d_o, d_s), retain_graph=True)

    def run_fwdbwd():
        o, s = forward()
        held["grads"] = torch.autograd.grad((o, s), ins, (d_o, d_s))

    def grads():
        gq, gk, gv, gg, gb, gh = held["grads"]
        return {"dq": gq.reshape(c.t, c.hq, D), "dk": gk.reshape(c.t, c.hq, D), "dv": gv.reshape(c.t, c.hv, D),
                "dg": gg.reshape(c.t, c.hv), "dbeta": gb.reshape(c.t, c.hv), "dh0": gh}
    return run_bwd, run_fwdbwd, grads


def cell_run(c, args, fla_peer, torch, opgraph, timing, failed):
    # A generator of the cell's own: a peer whose CUDA-graph capture failed (fla's backward) leaves the
    # default generator mid-capture, and the next cell's torch.randn on it would raise.
    gen = torch.Generator(device="cuda")
    gen.manual_seed(20261204 + c.t + 7 * c.hv + c.n)
    dev = "cuda"
    t = {"q": torch.randn(c.t, c.hq, D, device=dev, generator=gen, dtype=torch.bfloat16),
         "k": torch.randn(c.t, c.hq, D, device=dev, generator=gen, dtype=torch.bfloat16),
         "v": torch.randn(c.t, c.hv, D, device=dev, generator=gen, dtype=torch.bfloat16),
         "g": torch.nn.functional.logsigmoid(torch.randn(c.t, c.hv, device=dev, generator=gen, dtype=torch.float32)),
         "beta": torch.sigmoid(torch.randn(c.t, c.hv, device=dev, generator=gen, dtype=torch.float32)),
         "cu_seqlens": torch.tensor([0] + list(fwd._cumsum(c.lengths)), device=dev, dtype=torch.int64),
         "initial_state": 0.1 * torch.randn(c.n, c.hv, D, D, device=dev, generator=gen, dtype=torch.float32),
         "dO": torch.randn(c.t, c.hv, D, device=dev, generator=gen, dtype=torch.bfloat16),
         "d_final_state": 0.1 * torch.randn(c.n, c.hv, D, D, device=dev, generator=gen, dtype=torch.float32)}
    run_b, run_fb, outs, poison, on_stream, _keep = _ours(c, torch, opgraph, t, failed)
    poison()
    torch.cuda.synchronize()
    run_b()
    torch.cuda.synchronize()
    ours = {n: x.float().clone() for n, x in outs.items()}
    if not all(bool(torch.isfinite(x).all().item()) for x in ours.values()):
        failed.append("%s: ours wrote non-finite gradients (an output left poisoned?)" % c.key)
    sides = {"bwd": [timing.Side("ours", run_b, lambda: [], on_stream=on_stream)],
             "fwdbwd": [timing.Side("ours", run_fb, lambda: [], on_stream=on_stream)]}
    checks = {}
    if fla_peer is not None:
        f_b, f_fb, f_grads = _fla(c, torch, *fla_peer, t)
        f_b()
        torch.cuda.synchronize()
        got = f_grads()
        for n in GRADS:
            r = fwd.rms_ratio(got[n], ours[n])
            checks[n] = r
            if not r <= TOL[n]:
                failed.append("%s: fla's %s differs from ours (RMS ratio %.2e > %.0e)" % (c.key, n, r, TOL[n]))
        print("  CHECK fla vs ours (RMS ratio): " + " ".join("%s %.2e%s" % (n, checks[n], "" if checks[n] <= TOL[n]
                                                                                else " BAD") for n in GRADS),
              flush=True)
        sides["bwd"].append(timing.Side("fla", f_b, lambda: []))
        sides["fwdbwd"].append(timing.Side("fla", f_fb, lambda: []))
    del ours
    row = {"cell": c, "checks": checks}
    for mode in (("bwd", "fwdbwd") if args.mode == "both" else (args.mode,)):
        res = timing.compare(sides[mode], rounds=args.rounds, log=lambda m: print("  " + m))
        method = next(iter(res.values())).method
        row[mode] = ({n: r.ms for n, r in res.items()}, method)
        print("  TIME %s %s method=%s %s" % (c.key, mode, method, " ".join(
            "%s=%.3f(spread %.2f)" % (n, r.ms, r.spread()) for n, r in res.items())), flush=True)
    return row


def lift_fla_hopper_guard():
    """fla 0.6.0 refuses its gated backward (chunk_bwd_dqkwg) on Hopper with Triton >= 3.4 and < 3.7.1 (the
    GPU machine's torch brings Triton 3.6), naming a miscompile of that Triton; the issue's anchors were
    measured with the guard lifted after checking fla's gradients against an fp32 recurrence. Lift it the
    same way (the module flag the guard reads); every cell still checks fla's gradients against ours
    before timing, so a wrong fla gradient fails the run instead of being timed silently."""
    import fla.ops.common.chunk_o as chunk_o
    if getattr(chunk_o, "IS_NVIDIA_HOPPER", False) and getattr(chunk_o, "TRITON_ABOVE_3_4_0", False) \
            and not getattr(chunk_o, "TRITON_ABOVE_3_7_1", True):
        chunk_o.TRITON_ABOVE_3_7_1 = True
        print("fla: its Triton-version guard for Hopper (chunk_bwd_dqkwg, Triton 3.4..3.7.1) lifted; "
              "its gradients are checked against ours below")


def run_cells(args, sel):
    import torch

    import opgraph
    import timing

    fwd.peer_site_dirs()
    fla_peer, failed = None, []
    try:
        import fla
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule as fla_gdn
        from fla.ops.utils import prepare_chunk_indices
        fla_peer = (fla_gdn, prepare_chunk_indices)
        lift_fla_hopper_guard()
        print("fla %s (%s)" % (getattr(fla, "__version__", "?"), os.path.dirname(fla.__file__)))
    except Exception as exc:  # noqa: BLE001 - named; the cells run ours alone
        failed.append("peer missing: fla (fla-core 0.6.0): %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:200]))
        print("PEER MISSING " + failed[-1])
    rows = []
    signal.signal(signal.SIGTERM, fwd._on_term)
    try:
        for c in sel:
            print()
            print("CELL %s" % c.key, flush=True)
            for side, line in mapping(c).items():
                print("  MAP %-5s %s" % (side, line))
            try:
                rows.append(cell_run(c, args, fla_peer, torch, opgraph, timing, failed))
            except fwd.Stopped:
                raise
            except Exception as exc:  # noqa: BLE001 - one cell's failure is reported, the others run
                failed.append("%s: %s: %s" % (c.key, type(exc).__name__, str(exc).splitlines()[0][:300]))
                print("CELL FAILED " + failed[-1], flush=True)
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
    except fwd.Stopped as exc:
        failed.append("stopped (%s) after %d of %d cells" % (exc, len(rows), len(sel)))
        print("STOPPED " + failed[-1], flush=True)
    if args.row_json:  # a child of --process-per-cell: the parent prints the table
        with open(args.row_json, "w") as fh:
            json.dump({"rows": [row_to_json(r) for r in rows], "failed": failed}, fh)
        return 1 if failed else 0
    print_table(rows, failed)
    return 1 if failed else 0


def print_table(rows, failed):
    print()
    print("GDN backward, bf16 q/k/v/dO, d = 128, fp32 g / beta / states, use_qk_l2norm, initial state and "
          "d_final_state in; kernel time, ms (graph replays interleaved, or profiler device time where marked). "
          "bwd = backward alone (fla: torch.autograd.grad after one forward); fwdbwd = forward + backward. "
          "Anchors: the issue's fla figures of 2026-12-01 on this H200, NOT same-run; FlashQLA: published.")
    print(TARGETS)
    print("%-20s %8s %8s %8s %14s %11s | %8s %8s %8s %14s | %s" % (
        "cell HQ/HV@BxT", "bwd ours", "fla", "ours/fla", "fla (anchor)", "FlashQLA", "f+b ours", "fla",
        "ours/fla", "fla (anchor)", "RMS fla vs ours " + "/".join(GRADS)))
    for r in rows:
        c = r["cell"]
        an = ANCHORS.get(c.key, (None, None))
        b, mb = r.get("bwd", ({}, "graph"))
        fb, mfb = r.get("fwdbwd", ({}, "graph"))
        print("%-20s %8s %8s %8s %14s %11s | %8s %8s %8s %14s | %s%s" % (
            c.key, fwd._fmt(b.get("ours")), fwd._fmt(b.get("fla")), fwd._fmt(fwd._ratio(b.get("ours"), b.get("fla"))),
            fwd._anchor(an[0]), ("%.3f (pub.)" % PUBLISHED[c.key]) if c.key in PUBLISHED else "-",
            fwd._fmt(fb.get("ours")), fwd._fmt(fb.get("fla")), fwd._fmt(fwd._ratio(fb.get("ours"), fb.get("fla"))),
            fwd._anchor(an[1]), " ".join("%.1e" % r["checks"][n] for n in GRADS) if r["checks"] else "-",
            "" if (mb, mfb) == ("graph", "graph") else " (profiler device time)"))
    print(PUBLISHED_NOTE)
    for line in failed:
        print("FAILED " + line)


def parse(argv):
    ap = argparse.ArgumentParser(prog="compare.py gdn-bwd", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--cells", default=os.environ.get("OPGRAPH_GDN_CELLS", ""),
                    help="comma-separated substrings of cell keys (e.g. 4x8192,varlen), default every cell")
    ap.add_argument("--mode", choices=("bwd", "fwdbwd", "both"), default="both")
    ap.add_argument("--dry-run", action="store_true",
                    help="no torch, no GPU: print the cells, each side's declaration and our plans (deviceless)")
    ap.add_argument("--process-per-cell", action="store_true",
                    default=os.environ.get("OPGRAPH_GDN_BWD_PROCESS_PER_CELL", "") == "1",
                    help="each cell in a child process of its own (a fresh device context a cell)")
    ap.add_argument("--row-json", default="", help=argparse.SUPPRESS)  # a child's rows and failures, to the parent
    return ap.parse_args(argv)


def row_to_json(row):
    """A cell's row without its Cell object: the key stands for it (rows_from_json maps it back)."""
    return {k: (v.key if k == "cell" else v) for k, v in row.items()}


def rows_from_json(data, all_cells):
    """The rows and failures a child wrote (row_to_json), each row's cell looked up by key in `all_cells`."""
    by_key = {c.key: c for c in all_cells}
    rows = []
    for r in data.get("rows", []):
        row = dict(r)
        row["cell"] = by_key[r["cell"]]
        for mode in ("bwd", "fwdbwd"):
            if mode in row:
                row[mode] = (row[mode][0], row[mode][1])
        rows.append(row)
    return rows, list(data.get("failed", []))


def child_command(args, c, row_json):
    """The child process that runs cell `c` alone (--process-per-cell): this script, the parent's options."""
    return [sys.executable, os.path.abspath(__file__), "--cells", c.key, "--rounds", str(args.rounds),
            "--mode", args.mode, "--row-json", row_json]


def run_cells_isolated(args, sel):
    """--process-per-cell: each cell of `sel` in a child (child_command), its output passed through as it runs;
    the table of every row the children handed back, and every failure, last. A child that dies or is stopped
    is a failure of its cell; SIGTERM stops the child running and tables the cells done."""
    rows, failed = [], []
    signal.signal(signal.SIGTERM, fwd._on_term)
    child = None
    try:
        for c in sel:
            fd, path = tempfile.mkstemp(prefix="gdn-bwd-row-", suffix=".json")
            os.close(fd)
            try:
                sys.stdout.flush()
                child = subprocess.Popen(child_command(args, c, path))
                rc = child.wait()
                child = None
                data = {}
                try:
                    with open(path) as fh:
                        data = json.load(fh)
                except (OSError, ValueError):
                    pass
                got, why = rows_from_json(data, cells())
                rows += got
                failed += why
                if rc != 0 and not why:
                    failed.append("%s: its process exited with %d and reported nothing" % (c.key, rc))
            finally:
                os.unlink(path)
    except fwd.Stopped as exc:
        if child is not None:
            child.terminate()
            child.wait()
        failed.append("stopped (%s) after %d of %d cells" % (exc, len(rows), len(sel)))
        print("STOPPED " + failed[-1], flush=True)
    print_table(rows, failed)
    return 1 if failed else 0


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    sel = select(cells(), args.cells)
    if not sel:
        print("compare.py gdn-bwd: no cell matches --cells %r" % args.cells, file=sys.stderr)
        return 2
    if args.dry_run:
        return dry_run(args, sel)
    if not fwd.runtime_ready("compare.py gdn-bwd"):
        return 2
    if args.process_per_cell and not args.row_json:
        print("# compare.py gdn-bwd: %d cells, a process each (--process-per-cell)" % len(sel), flush=True)
        return run_cells_isolated(args, sel)
    import torch
    print("# compare.py gdn-bwd: %s (%d SMs); torch %s; %d cells, %d rounds, mode %s" % (
        torch.cuda.get_device_name(), torch.cuda.get_device_properties(0).multi_processor_count, torch.__version__,
        len(sel), args.rounds, args.mode), flush=True)
    return run_cells(args, sel)


if __name__ == "__main__":
    sys.exit(main())
