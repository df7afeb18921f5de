#!/usr/bin/env python3
"""bench/compare_gdn.py — gdn forward (Gated DeltaNet): ours against fla and FlashInfer in one process.

  python3 bench/compare.py gdn [--rounds 20] [--only prefill|decode] [--cells TOKEN,...] [--dry-run]
  (the same as python3 bench/compare_gdn.py ...; bench/run.sh gdn-peers runs it on the device)

Timing: bench/timing.py's method (kernel time against kernel time; each side's call captured into a
CUDA graph and replayed, interleaved round by round, median; where a side cannot be captured every side
of the cell is timed by profiler device time instead, and the table says so).

Cells (bf16 q/k/v/o, d = 128, fp32 g / beta / state, use_qk_l2norm in the kernel, scale d^-1/2):
  prefill: HQ = HK / HV and B x T: 16/64 4x8192, 16/64 1x32768, 16/32 4x8192, 16/32 1x32768,
    2/8 1x32768, 16/64 1x2048, and 16/32 varlen: 8 mixed lengths summing to 32768; initial state in,
    final state out (fp32, V-major [N, HV, V, K]).
  decode: T = 1 a sequence, B in {1, 64, 256, 1024} sequences at 16/32 and 16/64 heads; the fp32 state
    pool updated in place through state_indices (a permutation of the pool's rows); FlashInfer's
    gated_delta_rule_decode_pretranspose and a torch copy of the same state bytes (read + write).

Sides (the same input tensors for every side; the declarations are printed per cell, --dry-run prints
them without torch or a GPU):
  ours       opgraph's Python binding, a gdn graph declared over the cell's tensors; every plan of the
             linear_attention family the heuristics list (the first is "ours", the others are labelled
             by their knobs: 2p / 1p = PIPELINE_ARCH 1 / 0, split<J> = CHAIN_SPLIT J, fused-ws-h = 4: with beta
             given post-sigmoid its guarded form, first where the list's first plan is unsplit); each plan built
             once before timing, its workspace allocated once.
  ours-bsig  (prefill) the same cell declared with use_beta_sigmoid over beta's logits b (the peers and "ours"
             get beta = sigmoid(b), computed once outside the timed region; this side computes it in its
             kernel): the declaration under which the heuristics list PIPELINE_ARCH 4 (the fused prefill's
             inverse on fp16 tiles, rule f16_inverse_domain) first; its first plan only, labelled by its knobs.
  fla        fla-core's fla.ops.gated_delta_rule.chunk_gated_delta_rule (Triton; outputs allocated per
             call, as fla does).
  fi, fi-nocp FlashInfer's flashinfer.gdn_prefill.chunk_gated_delta_rule with output / output_state given,
             use_cp="auto" (fi) and, where its context-parallel heuristic picks CP, also use_cp=False.
  fi (decode) flashinfer.gdn_decode.gated_delta_rule_decode_pretranspose on its own copy of the pool.
  copy       (decode) torch's copy_ of B x HV x 128 x 128 fp32: the bytes the decode reads and writes.

Check: before timing each side runs once on fresh copies of the inputs with its outputs poisoned (NaN);
o, o's rows of each sequence's first chunk (where the initial state still shows) and the final state of
each peer (and of each of our other plans) are compared with ours by RMS ratio, rms(x - ours) / rms(ours),
printed; above --check-rms (1e-2: two bf16 implementations each within fla's
5e-3 of the exact result) is a failure (exit 1), timed and marked all the same.

The table comes last: per cell ours / fla and ours / FlashInfer, with the issue's anchors of 2026-12-01
(fla-core 0.6.0, FlashInfer 0.7.2.post1 on this H200; CUDA events around each call, not same-run) beside
them, marked as anchors. Missing torch, opgraph, fla or FlashInfer is named; a missing peer's columns are
empty and the run exits 1.
"""
import argparse
import importlib.util
import math
import os
import signal
import site
import sys

D = 128
CHUNK = 64
VARLEN = (3000, 12000, 1000, 4097, 2048, 7000, 1123, 2500)  # 8 sequences, 32768 tokens
CHECK_RMS = 1e-2

# The anchors (2026-12-01, this H200; not same-run): fla, FlashInfer, FlashInfer without CP (ms).
ANCHORS = {
    "16/64@4x8192": (3.218, 0.800, None),
    "16/64@1x32768": (3.885, 1.514, 1.434),
    "16/32@4x8192": (1.648, 0.397, None),
    "16/32@1x32768": (2.086, 0.781, 1.428),
    "2/8@1x32768": (0.981, 0.480, 1.409),
}
TARGETS = "targets: prefill ours/fla <= 0.3 and ours/FlashInfer <= 0.9; decode ours/FlashInfer <= 1.0 and, " \
          "for B >= 256, >= 85% of the copy bandwidth"


class Cell:
    def __init__(self, kind, hq, hv, lengths=None, batch=None):
        self.kind, self.hq, self.hv = kind, hq, hv
        if kind == "prefill":
            self.lengths = tuple(lengths)
            equal = len(set(self.lengths)) == 1
            shape = "%dx%d" % (len(self.lengths), self.lengths[0]) if equal else "varlen%dx%d" % (
                len(self.lengths), sum(self.lengths))
            self.key = "%d/%d@%s" % (hq, hv, shape)
        else:
            self.lengths = (1,) * batch
            self.key = "dec%d/%d@B%d" % (hq, hv, batch)
        self.n = len(self.lengths)
        self.t = sum(self.lengths)
        self.equal = len(set(self.lengths)) == 1

    def state_bytes(self):
        return self.n * self.hv * D * D * 4


def cells():
    out = [Cell("prefill", hq, hv, (L,) * b) for (hq, hv, b, L) in (
        (16, 64, 4, 8192), (16, 64, 1, 32768), (16, 32, 4, 8192), (16, 32, 1, 32768), (2, 8, 1, 32768),
        (16, 64, 1, 2048))]
    out.append(Cell("prefill", 16, 32, VARLEN))
    out += [Cell("decode", 16, hv, batch=b) for hv in (32, 64) for b in (1, 64, 256, 1024)]
    return out


def select(all_cells, only, tokens):
    want = [t for t in (tokens or "").split(",") if t]
    return [c for c in all_cells if (only in ("all", c.kind)) and (not want or any(t in c.key for t in want))]


# ---------------------------------------------------------------------------- declarations
# One operand list per cell: (port, name, dims, dtype). Ours binds every one; the peers get the same
# tensors (views) or, where their API says so, a stated transform of them (mapping()).

def operands(c):
    if c.kind == "prefill":
        return [("q", "q", [c.t, c.hq, D], "bf16"), ("k", "k", [c.t, c.hq, D], "bf16"),
                ("v", "v", [c.t, c.hv, D], "bf16"), ("g", "g", [c.t, c.hv], "f32"),
                ("beta", "beta", [c.t, c.hv], "f32"), ("cu_seqlens", "cu_seqlens", [c.n + 1], "i64"),
                ("initial_state", "h0", [c.n, c.hv, D, D], "f32")]
    return [("q", "q", [c.n, c.hq, D], "bf16"), ("k", "k", [c.n, c.hq, D], "bf16"),
            ("v", "v", [c.n, c.hv, D], "bf16"), ("g", "a", [c.n, c.hv], "bf16"),
            ("beta", "b", [c.n, c.hv], "bf16"), ("cu_seqlens", "cu_seqlens", [c.n + 1], "i64"),
            ("initial_state", "pool", [c.n, c.hv, D, D], "f32"), ("state_indices", "state_indices", [c.n], "i32"),
            ("a_log", "A_log", [c.hv], "f32"), ("dt_bias", "dt_bias", [c.hv], "f32")]


def attributes(c):
    attrs = dict(scale=D ** -0.5, use_qk_l2norm=True, output_final_state=True)
    if c.kind == "decode":
        attrs.update(safe_gate=True, use_beta_sigmoid=True, overwrite_initial_state=True)
    return attrs


def mapping(c):
    """{side: one line}: how the cell is declared to ours and handed to each peer."""
    ops = ", ".join("%s %s%s" % (name, dt, dims) for (_, name, dims, dt) in operands(c))
    attrs = ", ".join("%s=%s" % (k, ("%.6g" % v) if isinstance(v, float) else v) for k, v in attributes(c).items())
    m = {}
    if c.kind == "prefill":
        m["ours"] = ("gdn, THD varlen: %s; O bf16[%d, %d, %d], final_state f32[%d, %d, %d, %d] (V-major, holds S^T); "
                     "g in log space (gate_domain log), beta post-sigmoid; %s" % (
                         ops, c.t, c.hv, D, c.n, c.hv, D, D, attrs))
        if c.equal:
            shape = "q, k as [%d, %d, %d, %d], v as [%d, %d, %d, %d], g, beta as [%d, %d, %d] (views of ours, " \
                    "no cu_seqlens: fla's equal-length batch)" % (
                        c.n, c.lengths[0], c.hq, D, c.n, c.lengths[0], c.hv, D, c.n, c.lengths[0], c.hv)
        else:
            shape = "q, k, v, g, beta as [1, T, ...] views of ours, cu_seqlens = ours (int64), chunk_indices " \
                    "prepared once outside the timed region (fla.ops.utils.prepare_chunk_indices(cu_seqlens, 64))"
        m["ours-bsig"] = ("as ours, but beta f32%s holds the logits b (ours' beta = sigmoid(b)) and the declaration "
                          "adds use_beta_sigmoid=True (the sigmoid in our kernel); its first plan" % [c.t, c.hv])
        m["fla"] = ("fla.ops.gated_delta_rule.chunk_gated_delta_rule(%s; g = ours (log space), beta = ours; "
                    "initial_state = ours with state_v_first=True ([N, HV, V, K], no transpose); "
                    "output_final_state=True, use_qk_l2norm_in_kernel=True, scale=d^-1/2); o [B, T, HV, V] and "
                    "the fp32 final state allocated by fla per call" % shape)
        m["fi"] = ("flashinfer.gdn_prefill.chunk_gated_delta_rule(q, k, v = ours [T, H, D]; g = exp(ours' g) f32 "
                   "(FlashInfer's g is the linear alpha: its kernel takes log2(alpha + 1e-10)); beta = ours f32; "
                   "cu_seqlens = ours; initial_state = ours ([N, HV, V, K] V-major as ours, no transpose); "
                   "output_final_state=True, output= bf16[T, HV, D], output_state= f32[N, HV, V, K] given; "
                   "use_qk_l2norm_in_kernel=True (FlashInfer normalises q, k before its kernel); scale=d^-1/2; "
                   "max_seqlen=%d; use_cp='auto', and use_cp=False (fi-nocp) where its CP heuristic picks CP)"
                   % max(c.lengths))
    else:
        m["ours"] = ("gdn decode, T = %d tokens, one a sequence: %s; O bf16[%d, %d, %d]; final_state = the pool "
                     "(the same buffer: in place); g = a (logits) under safe_gate: g = -exp(A_log) softplus(a + "
                     "dt_bias); beta = sigmoid(b) (use_beta_sigmoid); state_indices a permutation of the pool's "
                     "rows; %s" % (c.t, ops, c.n, c.hv, D, attrs))
        m["fi"] = ("flashinfer.gdn_decode.gated_delta_rule_decode_pretranspose(q, k as [%d, 1, %d, %d], v as "
                   "[%d, 1, %d, %d] (views of ours), state=None, A_log = ours, a = ours as [%d, 1, %d], dt_bias = "
                   "ours, b = ours as [%d, 1, %d] (FlashInfer: g = -exp(A_log) softplus(a + dt_bias), softplus "
                   "threshold 20; beta = sigmoid(b)); initial_state = its own copy of ours' pool (f32 [B, HV, V, K], "
                   "V-major as ours: the float32 T = 1 path), initial_state_indices = ours, updated in place; "
                   "output= bf16[%d, 1, %d, %d] given; use_qk_l2norm=True, scale=d^-1/2)" % (
                       c.n, c.hq, D, c.n, c.hv, D, c.n, c.hv, c.n, c.hv, c.n, c.hv, D))
        m["copy"] = "torch: dst.copy_(src), %d fp32 elements (%d bytes read + %d written, as the decode moves)" % (
            c.state_bytes() // 4, c.state_bytes(), c.state_bytes())
        m["fla"] = "not run for decode (the issue compares decode with FlashInfer and the copy bandwidth)"
    return m


def declare(opgraph, g, c, tensors, io="bf16", **attr_overrides):
    """Our gdn node over the cell's operands: tensors[name] (torch or numpy) via tensor_like, else by dims and
    type. io="f32" declares the bf16 operands and O as FLOAT (the CPU test on the reference engine)."""
    dtype = {"bf16": opgraph.data_type.BFLOAT16 if io == "bf16" else opgraph.data_type.FLOAT,
             "f32": opgraph.data_type.FLOAT, "i32": opgraph.data_type.INT32, "i64": opgraph.data_type.INT64}
    ports = {}
    for (port, name, dims, dt) in operands(c):
        t = tensors.get(name) if tensors else None
        ports[port] = g.tensor_like(t, name=name) if t is not None else g.tensor(dim=dims, data_type=dtype[dt],
                                                                               name=name)
    o, fs, _ = g.gdn(**ports, **{**attributes(c), **attr_overrides})  # no checkpoint cadence: no checkpoints
    o.set_output(True).set_data_type(dtype["bf16"])
    fs.set_output(True).set_data_type(opgraph.data_type.FLOAT)
    return ports, o, fs


def plan_label(name, kind="prefill"):
    """'linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=1]' -> '2p' (PIPELINE_ARCH 0: '1p', 2: 'fused', 3: 'fused-ws',
    4: 'fused-ws-h'); CHAIN_SPLIT J > 0 -> 'split<J>' (two-pass), 'fused-split<J>', 'fused-ws-split<J>',
    'fused-ws-h-split<J>'; a decode cell's one plan runs
    the decode kernel under any knob value: 'decode'."""
    if kind == "decode":
        return "decode"
    knobs = {}
    if "[" in name:
        for kv in name[name.index("[") + 1:name.rindex("]")].split(","):
            if "=" in kv:
                k, v = kv.strip().split("=", 1)
                knobs[k] = v
    arch = knobs.get("PIPELINE_ARCH")
    if knobs.get("CHAIN_SPLIT", "0") != "0":
        return {"2": "fused-", "3": "fused-ws-", "4": "fused-ws-h-"}.get(arch, "") + "split%s" % knobs["CHAIN_SPLIT"]
    return {"1": "2p", "0": "1p", "2": "fused", "3": "fused-ws", "4": "fused-ws-h"}.get(arch, name)


def our_plans(opgraph, g):
    """[(index, name)] of the linear_attention plans in the heuristics' order, and every plan's name."""
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    names = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
    return [(i, n) for i, n in enumerate(names) if n.startswith("linear_attention")], names


# ---------------------------------------------------------------------------- what is importable

def peer_site_dirs():
    """Each PYTHONPATH entry as a site dir (CuTe DSL finds its `cutlass` package through a .pth file,
    which a plain PYTHONPATH entry does not run; ../shared/tools/peer_wheels.py)."""
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p and os.path.isdir(p):
            site.addsitedir(p)


def find(mod):
    try:
        spec = importlib.util.find_spec(mod)
    except (ImportError, ValueError):
        spec = None
    return spec.origin if spec is not None and spec.origin else None


def dry_run(args, sel):
    print("# compare.py gdn --dry-run: the cells, each side's declaration, our plans for an sm_90 target with "
          "132 SMs (deviceless planning); no torch, no GPU")
    peer_site_dirs()
    for mod in ("torch", "opgraph", "fla", "flashinfer"):
        where = find(mod)
        print("import %-10s %s" % (mod, where if where else "NOT FOUND (needed on the device)"))
    try:
        import opgraph
    except ImportError as exc:
        print("opgraph not importable (%s): declarations not checked; set PYTHONPATH to the built module "
              "(build-py)" % exc)
        opgraph = None
    bad = 0
    for c in sel:
        print()
        print("CELL %s %s N=%d T=%d HQ=HK=%d HV=%d D=%d%s" % (c.key, c.kind, c.n, c.t, c.hq, c.hv, D,
                                                           " lengths=%s" % ",".join(map(str, c.lengths))
                                                           if c.kind == "prefill" and not c.equal else ""))
        for side, line in mapping(c).items():
            print("  MAP %-5s %s" % (side, line))
        if c.key in ANCHORS:
            fla, fi, nocp = ANCHORS[c.key]
            print("  ANCHOR (2026-12-01, not same-run) fla %.3f ms, FlashInfer %.3f ms%s" % (
                fla, fi, ", FlashInfer without CP %.3f ms" % nocp if nocp else ""))
        if opgraph is None:
            continue
        def sm90_graph(**attr_overrides):  # the cell declared for an sm_90 target without a device, validated
            g = opgraph.pygraph(io_data_type=opgraph.data_type.BFLOAT16, intermediate_data_type=opgraph.data_type.FLOAT,
                                compute_data_type=opgraph.data_type.FLOAT, sm_version=90, sm_count=132)
            _, o, fs = declare(opgraph, g, c, None, **attr_overrides)
            g.validate()
            return g, o, fs

        try:
            g, o, fs = sm90_graph()
            ours, names = our_plans(opgraph, g)
            print("  DECLARED O %s final_state %s; our plans (sm_90, 132 SMs): %s" % (
                o.dims, fs.dims, ", ".join("%s=%s" % (plan_label(n, c.kind), n) for _, n in ours) or "NONE"))
            if not ours:
                bad += 1
                print("  NO PLAN OF OURS: %s" % ", ".join(names))
            if c.kind == "prefill":  # ours-bsig: the same cell under use_beta_sigmoid, its first plan
                first = our_plans(opgraph, sm90_graph(use_beta_sigmoid=True)[0])[0][:1]
                print("  BSIG first plan (sm_90, 132 SMs): %s" % (
                    ", ".join("%s=%s" % (plan_label(n, c.kind), n) for _, n in first) or "NONE"))
                if not first:
                    bad += 1
        except Exception as exc:  # noqa: BLE001 - a declaration error is reported per cell
            bad += 1
            print("  DECLARATION FAILED: %s: %s" % (type(exc).__name__, exc))
    print()
    print("%d cells, %d declaration failures" % (len(sel), bad))
    return 1 if bad else 0


# ---------------------------------------------------------------------------- the device run

class Stopped(Exception):
    pass


def _on_term(signum, frame):  # bench/run.sh's timeout: stop, print the table of the cells done
    raise Stopped("signal %d" % signum)


def rms_ratio(x, ref):
    import torch
    x, ref = x.float().reshape(-1), ref.float().reshape(-1)
    num = (x - ref).square().sum(dtype=torch.float64)
    den = ref.square().sum(dtype=torch.float64)
    if not torch.isfinite(num).item():
        return float("inf")
    return math.sqrt(num.item() / max(den.item(), 1e-300))


class GdnSide:
    """A side: run() enqueues one call; outputs() gives [o as (T, HV, D), final state as (N/pool, HV, V, K)];
    reset() restores in-place inputs and poisons the outputs before the check run."""

    def __init__(self, name, run, outputs, reset, on_stream=None, plan=None):
        self.name, self.run, self.outputs, self.reset, self.on_stream = name, run, outputs, reset, on_stream
        self.plan = plan


def run_cells(args, sel):
    import torch

    import opgraph
    import timing

    peer_site_dirs()
    peers, missing = {}, []
    try:
        import fla
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule as fla_gdn
        from fla.ops.utils import prepare_chunk_indices
        peers["fla"] = (fla_gdn, prepare_chunk_indices)
        print("fla %s (%s)" % (getattr(fla, "__version__", "?"), os.path.dirname(fla.__file__)))
    except Exception as exc:  # noqa: BLE001 - any import failure is named, the cells run without it
        missing.append("fla (fla-core 0.6.0): %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:200]))
    try:
        import flashinfer
        from flashinfer.gdn_decode import gated_delta_rule_decode_pretranspose as fi_decode
        from flashinfer.gdn_prefill import chunk_gated_delta_rule as fi_prefill
        try:
            from flashinfer.gdn_kernels.delta_rule_dsl.varlen_helper import should_use_cp_host
        except Exception:  # noqa: BLE001 - without it, fi-nocp runs in every prefill cell
            should_use_cp_host = None
        peers["fi"] = (fi_prefill, fi_decode, should_use_cp_host)
        print("flashinfer %s (%s)" % (getattr(flashinfer, "__version__", "?"), os.path.dirname(flashinfer.__file__)))
    except Exception as exc:  # noqa: BLE001
        missing.append("flashinfer (flashinfer-python 0.7.2.post1 + CuTe DSL): %s: %s" % (
            type(exc).__name__, str(exc).splitlines()[0][:200]))
    for line in missing:
        print("PEER MISSING %s; its columns stay empty (../shared/tools/peer_wheels.py, docs/linear_attention.md)"
              % line)

    prop = torch.cuda.get_device_properties(0)
    rows, failed = [], ["peer missing: " + m.split(":")[0] for m in missing]
    signal.signal(signal.SIGTERM, _on_term)
    try:
        for c in sel:
            print()
            print("CELL %s" % c.key, flush=True)
            for side, line in mapping(c).items():
                print("  MAP %-5s %s" % (side, line))
            try:
                row = (prefill_cell if c.kind == "prefill" else decode_cell)(
                    c, args, peers, prop, torch, opgraph, timing, failed)
            except Stopped:
                raise
            except Exception as exc:  # noqa: BLE001 - one cell's failure is reported, the others run
                failed.append("%s: %s: %s" % (c.key, type(exc).__name__, str(exc).splitlines()[0][:300]))
                print("CELL FAILED " + failed[-1], flush=True)
                row = None
            if row:
                rows.append(row)
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
    except Stopped as exc:
        failed.append("stopped (%s) after %d of %d cells" % (exc, len(rows), len(sel)))
        print("STOPPED " + failed[-1], flush=True)
    print_tables(rows, failed)
    return 1 if failed else 0


def _ours_sides(c, torch, opgraph, tensors, make_outputs, reset_outputs, failed, prefix="ours", first_only=False,
                **attr_overrides):
    """One side per linear_attention plan of the graph (the first: `prefix`, the others `prefix`-<knobs>; with
    first_only the first alone), each built once with its workspace allocated once, outside the timed region;
    attr_overrides change the declaration's attributes."""
    handle = opgraph.create_handle()
    opgraph.set_stream(handle, torch.cuda.current_stream())
    g = opgraph.pygraph(handle=handle, io_data_type=torch.bfloat16, intermediate_data_type=torch.float32,
                        compute_data_type=torch.float32)
    ports, O, FS = declare(opgraph, g, c, tensors, **attr_overrides)
    g.validate()
    plans, names = our_plans(opgraph, g)
    print("  plans listed: %s" % ", ".join(names))
    if not plans:
        failed.append("%s: no plan of ours (%s)" % (c.key, ", ".join(names)))
        return [], g, []
    sides, labels = [], []
    for rank, (i, name) in enumerate(plans[:1] if first_only else plans):
        label = prefix if rank == 0 else prefix + "-" + plan_label(name, c.kind)
        try:
            g.build_plan_at_index(i)
        except Exception as exc:  # noqa: BLE001
            failed.append("%s: %s (%s) did not build: %s" % (c.key, label, name, str(exc).splitlines()[0][:200]))
            print("  " + failed[-1])
            continue
        ws = torch.empty(max(g.get_workspace_size_plan_at_index(i), 1), device="cuda", dtype=torch.uint8)
        o, fs = make_outputs()
        pack = {ports[p]: tensors[n] for (p, n, _, _) in operands(c)}
        pack[O] = o
        pack[FS] = fs
        sides.append(GdnSide(label, (lambda pk=pack, w=ws, ix=i: g.execute_plan_at_index(pk, w, ix)),
                             (lambda o=o, fs=fs: [o, fs]), (lambda o=o, fs=fs: reset_outputs(o, fs)),
                             on_stream=lambda s: opgraph.set_stream(handle, s), plan=plan_label(name, c.kind)))
        labels.append("%s=%s ws %.1f MiB" % (label, name, ws.numel() / 2 ** 20))
    print("  ours: " + "; ".join(labels))
    return sides, g, handle


def prefill_cell(c, args, peers, prop, torch, opgraph, timing, failed):
    gen = torch.Generator(device="cuda")
    gen.manual_seed(20261202 + c.t + 7 * c.hv + c.n)
    dev = "cuda"
    q = torch.randn(c.t, c.hq, D, device=dev, generator=gen, dtype=torch.bfloat16)
    k = torch.randn(c.t, c.hq, D, device=dev, generator=gen, dtype=torch.bfloat16)
    v = torch.randn(c.t, c.hv, D, device=dev, generator=gen, dtype=torch.bfloat16)
    g_log = torch.nn.functional.logsigmoid(torch.randn(c.t, c.hv, device=dev, generator=gen, dtype=torch.float32))
    b_logit = torch.randn(c.t, c.hv, device=dev, generator=gen, dtype=torch.float32)
    beta = torch.sigmoid(b_logit)
    cu = torch.tensor([0] + list(_cumsum(c.lengths)), device=dev, dtype=torch.int64)
    h0 = 0.1 * torch.randn(c.n, c.hv, D, D, device=dev, generator=gen, dtype=torch.float32)
    tensors = {"q": q, "k": k, "v": v, "g": g_log, "beta": beta, "cu_seqlens": cu, "h0": h0}
    scale = D ** -0.5

    def make_outputs():
        return (torch.empty(c.t, c.hv, D, device=dev, dtype=torch.bfloat16),
                torch.empty(c.n, c.hv, D, D, device=dev, dtype=torch.float32))

    def poison(o, fs):
        o.fill_(float("nan"))
        fs.fill_(float("nan"))

    sides, _g, _handle = _ours_sides(c, torch, opgraph, tensors, make_outputs, poison, failed)
    # The same cell with beta's logits under use_beta_sigmoid (PIPELINE_ARCH 4's domain): its first plan.
    bsig, _gb, _hb = _ours_sides(c, torch, opgraph, dict(tensors, beta=b_logit), make_outputs, poison, failed,
                                 prefix="ours-bsig", first_only=True, use_beta_sigmoid=True)
    sides += bsig

    if "fla" in peers:
        fla_gdn, prepare_chunk_indices = peers["fla"]
        held = {}
        if c.equal:
            b, L = c.n, c.lengths[0]
            fq, fk, fv = q.view(b, L, c.hq, D), k.view(b, L, c.hq, D), v.view(b, L, c.hv, D)
            fg, fb = g_log.view(b, L, c.hv), beta.view(b, L, c.hv)
            extra = {}
        else:
            fq, fk, fv, fg, fb = (t.unsqueeze(0) for t in (q, k, v, g_log, beta))
            extra = {"cu_seqlens": cu, "chunk_indices": prepare_chunk_indices(cu, CHUNK)}

        def fla_run():
            held["o"], held["s"] = fla_gdn(fq, fk, fv, fg, fb, scale=scale, initial_state=h0, output_final_state=True,
                                           use_qk_l2norm_in_kernel=True, state_v_first=True, **extra)
        sides.append(GdnSide("fla", fla_run, lambda: [held["o"].reshape(c.t, c.hv, D), held["s"]], held.clear))

    if "fi" in peers:
        fi_prefill, _, cp_rule = peers["fi"]
        alpha = torch.exp(g_log)  # FlashInfer's g: the linear-domain alpha
        modes = ["auto"]
        cp = None
        if cp_rule is not None:
            try:
                cp = bool(cp_rule(c.n * c.hv, prop.multi_processor_count, prop.name,
                                  device_capability=(prop.major, prop.minor)))
            except Exception:  # noqa: BLE001
                cp = None
        if cp is not False:
            modes.append(False)
        print("  FlashInfer CP heuristic (should_use_cp_host(N x HV = %d)): %s" % (
            c.n * c.hv, {True: "CP", False: "no CP", None: "unknown: fi-nocp runs too"}[cp]))
        for mode in modes:
            o_fi, s_fi = make_outputs()

            def fi_run(o_fi=o_fi, s_fi=s_fi, mode=mode):
                fi_prefill(q, k, v, g=alpha, beta=beta, scale=scale, initial_state=h0, output_final_state=True,
                           cu_seqlens=cu, use_qk_l2norm_in_kernel=True, output=o_fi, output_state=s_fi,
                           use_cp=mode, max_seqlen=max(c.lengths))
            sides.append(GdnSide("fi" if mode == "auto" else "fi-nocp", fi_run, (lambda o=o_fi, s=s_fi: [o, s]),
                                 (lambda o=o_fi, s=s_fi: poison(o, s))))
    return measure(c, args, sides, timing, torch, failed)


def _cumsum(xs):
    s = 0
    for x in xs:
        s += x
        yield s


def decode_cell(c, args, peers, prop, torch, opgraph, timing, failed):
    gen = torch.Generator(device="cuda")
    gen.manual_seed(20261203 + c.n + 7 * c.hv)
    dev = "cuda"
    q = torch.randn(c.n, c.hq, D, device=dev, generator=gen, dtype=torch.bfloat16)
    k = torch.randn(c.n, c.hq, D, device=dev, generator=gen, dtype=torch.bfloat16)
    v = torch.randn(c.n, c.hv, D, device=dev, generator=gen, dtype=torch.bfloat16)
    a = torch.randn(c.n, c.hv, device=dev, generator=gen, dtype=torch.bfloat16)
    b = torch.randn(c.n, c.hv, device=dev, generator=gen, dtype=torch.bfloat16)
    a_log = torch.log(torch.empty(c.hv, device=dev, dtype=torch.float32).uniform_(1, 16, generator=gen))
    dt_bias = 0.5 * torch.randn(c.hv, device=dev, generator=gen, dtype=torch.float32)
    cu = torch.arange(c.n + 1, device=dev, dtype=torch.int64)
    idx = torch.randperm(c.n, device=dev).to(torch.int32)
    pool0 = 0.1 * torch.randn(c.n, c.hv, D, D, device=dev, generator=gen, dtype=torch.float32)
    scale = D ** -0.5

    pool_ours = pool0.clone()
    tensors = {"q": q, "k": k, "v": v, "a": a, "b": b, "cu_seqlens": cu, "pool": pool_ours, "state_indices": idx,
               "A_log": a_log, "dt_bias": dt_bias}

    def reset(o, pool):
        pool.copy_(pool0)
        o.fill_(float("nan"))

    # Our final_state is the pool itself (overwrite_initial_state: one buffer bound to both ports).
    sides, _g, _handle = _ours_sides(c, torch, opgraph, tensors,
                                     lambda: (torch.empty(c.n, c.hv, D, device=dev, dtype=torch.bfloat16), pool_ours),
                                     reset, failed)
    if len(sides) > 1:  # a decode-sized graph lists one plan; more would share the one pool
        del sides[1:]

    if "fi" in peers:
        fi_decode = peers["fi"][1]
        pool_fi = pool0.clone()
        o_fi = torch.empty(c.n, 1, c.hv, D, device=dev, dtype=torch.bfloat16)
        q4, k4, v4, a3, b3 = q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1), a.unsqueeze(1), b.unsqueeze(1)

        def fi_run():
            fi_decode(q4, k4, v4, None, a_log, a3, dt_bias, b3, scale=scale, output=o_fi, use_qk_l2norm=True,
                      initial_state=pool_fi, initial_state_indices=idx)
        sides.append(GdnSide("fi", fi_run, lambda: [o_fi.view(c.n, c.hv, D), pool_fi],
                             lambda: reset(o_fi, pool_fi)))

    src, dst = pool0, torch.empty_like(pool0)  # pool0 is only read
    sides.append(GdnSide("copy", lambda: dst.copy_(src), lambda: [], lambda: dst.fill_(float("nan"))))
    return measure(c, args, sides, timing, torch, failed)


def head_rows(c):
    """The token rows of each sequence's first chunk: where the initial state still shows in o (with the
    cells' decays it has faded from later rows and from the final state), so a misread initial state
    shows in their RMS ratio even when it hides in the whole o."""
    rows, start = [], 0
    for L in c.lengths:
        rows.extend(range(start, start + min(CHUNK, L)))
        start += L
    return rows


def measure(c, args, sides, timing, torch, failed):
    """Check (each side once, outputs poisoned, in-place inputs restored; RMS ratio against ours), then time
    every side that ran, interleaved. Returns the cell's row."""
    ours_out, checks, ran = None, {}, []
    head = torch.tensor(head_rows(c), device="cuda", dtype=torch.int64)
    for s in sides:
        try:
            s.reset()
            torch.cuda.synchronize()
            s.run()
            torch.cuda.synchronize()
            outs = s.outputs()
        except Exception as exc:  # noqa: BLE001 - a side that cannot run is reported, not timed
            failed.append("%s: %s raised %s: %s" % (c.key, s.name, type(exc).__name__,
                                                   str(exc).splitlines()[0][:300] if str(exc) else ""))
            print("  SIDE FAILED " + failed[-1], flush=True)
            continue
        ran.append(s)
        if s.name == "copy":
            continue
        if s.name == "ours":
            ours_out = [t.float().clone() for t in outs]  # a copy: later calls of ours write the same buffers
            finite = all(bool(torch.isfinite(t).all().item()) for t in ours_out)
            checks["ours"] = (0.0, 0.0, finite)
            if not finite:
                failed.append("%s: ours wrote non-finite values (an output left poisoned?)" % c.key)
                print("  CHECK FAILED " + failed[-1])
            continue
        if ours_out is None:
            continue
        ro, rs = rms_ratio(outs[0], ours_out[0]), rms_ratio(outs[1], ours_out[1])
        rh = rms_ratio(outs[0].index_select(0, head), ours_out[0].index_select(0, head))
        ok = max(ro, rs, rh) <= args.check_rms
        checks[s.name] = (ro, rs, ok)
        print("  CHECK %-12s vs ours: o RMS ratio %.2e (first chunk of each sequence %.2e), final state RMS "
              "ratio %.2e %s" % (s.name, ro, rh, rs, "ok" if ok else "MISMATCH (> %.0e)" % args.check_rms),
              flush=True)
        if not ok:
            failed.append("%s: %s differs from ours (o %.2e, first chunks %.2e, state %.2e)" % (
                c.key, s.name, ro, rh, rs))
        del outs
    del ours_out
    if not any(s.name == "ours" for s in ran):
        failed.append("%s: ours did not run" % c.key)
        return None
    tsides = [timing.Side(s.name, s.run, lambda: [], on_stream=s.on_stream) for s in ran]
    res = timing.compare(tsides, rounds=args.rounds, log=lambda m: print("  " + m))
    method = next(iter(res.values())).method
    ms = {name: r.ms for name, r in res.items()}
    print("  TIME %s method=%s calls=%d %s" % (c.key, method, next(iter(res.values())).calls, " ".join(
        "%s=%.4f(spread %.2f)" % (name, r.ms, r.spread()) for name, r in res.items())), flush=True)
    first = next(s.plan for s in ran if s.name == "ours")
    return (c, ms, checks, method, first)


def _fmt(v, f="%.3f"):
    return f % v if v is not None and v == v else "-"


def _ratio(a, b):
    return a / b if a and b else None


def print_tables(rows, failed):
    pre = [r for r in rows if r[0].kind == "prefill"]
    dec = [r for r in rows if r[0].kind == "decode"]
    print()
    print("GDN forward, bf16 q/k/v/o, d = 128, fp32 g / beta / state, use_qk_l2norm, initial state in, final state "
          "out; kernel time (CUDA-graph replays interleaved round by round, median), ms. fi = FlashInfer "
          "(use_cp auto), fi-nocp = use_cp=False. Anchors: the issue's figures of 2026-12-01 on this H200 "
          "(CUDA events around each call), NOT same-run. RMS: rms(peer - ours) / rms(ours), o / final state.")
    print(TARGETS)
    if pre:
        print("bsig: ours-bsig (beta's logits, use_beta_sigmoid: the sigmoid in our kernel, PIPELINE_ARCH 4's "
              "domain) against FlashInfer given sigmoid(b)")
        print("%-20s %7s %7s %7s %7s %7s %8s %7s %9s %8s | %-14s %-14s %-14s | %-17s %-17s | %s" % (
            "cell HQ/HV@BxT", "ours", "bsig", "fla", "fi", "fi-nocp", "ours/fla", "ours/fi", "ours/nocp", "bsig/fi",
            "fla", "fi", "fi-nocp", "RMS fla o/state", "RMS fi o/state", "each plan of ours, ms"))
        for (c, ms, checks, method, first) in pre:
            o, ob = ms.get("ours"), ms.get("ours-bsig")
            an = ANCHORS.get(c.key, (None, None, None))
            print("%-20s %7s %7s %7s %7s %7s %8s %7s %9s %8s | %-14s %-14s %-14s | %-17s %-17s | %s%s" % (
                c.key, _fmt(o), _fmt(ob), _fmt(ms.get("fla")), _fmt(ms.get("fi")), _fmt(ms.get("fi-nocp")),
                _fmt(_ratio(o, ms.get("fla"))), _fmt(_ratio(o, ms.get("fi"))), _fmt(_ratio(o, ms.get("fi-nocp"))),
                _fmt(_ratio(ob, ms.get("fi"))),
                _anchor(an[0]), _anchor(an[1]), _anchor(an[2]), _rms(checks.get("fla")), _rms(checks.get("fi")),
                " ".join("%s=%.3f" % ("ours[%s]" % first if k == "ours" else k, v) for k, v in ms.items()
                         if k.startswith("ours")),
                "" if method == "graph" else " (profiler device time)"))
    if dec:
        print()
        print("GDN decode (T = 1 a sequence, fp32 state pool in place through state_indices); state GB/s = 2 x "
              "state bytes (read + write) / time; copy = torch copy_ of the same bytes")
        print("%-16s %9s %9s %9s %8s %9s %9s %9s %10s | %-22s" % (
            "cell", "ours ms", "fi ms", "copy ms", "ours/fi", "ours GB/s", "fi GB/s", "copy GB/s", "ours %copy",
            "RMS fi (o / state)"))
        for (c, ms, checks, method, first) in dec:
            o, f, cp = ms.get("ours"), ms.get("fi"), ms.get("copy")
            gbs = lambda t: 2 * c.state_bytes() / (t * 1e-3) / 1e9 if t else None  # noqa: E731
            print("%-16s %9s %9s %9s %8s %9s %9s %9s %10s | %-22s%s" % (
                c.key, _fmt(o, "%.4f"), _fmt(f, "%.4f"), _fmt(cp, "%.4f"), _fmt(_ratio(o, f)), _fmt(gbs(o), "%.0f"),
                _fmt(gbs(f), "%.0f"), _fmt(gbs(cp), "%.0f"),
                _fmt(100.0 * cp / o if o and cp else None, "%.1f%%"), _rms(checks.get("fi")),
                "" if method == "graph" else " (profiler device time)"))
    for line in failed:
        print("FAILED " + line)


def _anchor(v):
    return "%.3f (anchor)" % v if v else "-"


def _rms(chk):
    if not chk:
        return "-"
    return "%.1e / %.1e%s" % (chk[0], chk[1], "" if chk[2] else " BAD")


# ---------------------------------------------------------------------------- entry

def parse(argv):
    ap = argparse.ArgumentParser(prog="compare.py gdn", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--only", choices=("all", "prefill", "decode"), default="all")
    ap.add_argument("--cells", default=os.environ.get("OPGRAPH_GDN_CELLS", ""),
                    help="comma-separated substrings of cell keys (e.g. 4x8192,dec16/64), default every cell")
    ap.add_argument("--check-rms", type=float, default=CHECK_RMS)
    ap.add_argument("--dry-run", action="store_true",
                    help="no torch, no GPU: print the cells, each side's declaration and our plans (deviceless)")
    return ap.parse_args(argv)


def runtime_ready(prog):
    """True where a device run can start: torch with a CUDA device, opgraph's module and bench/timing.py
    importable; else names what is missing on stderr."""
    need = []
    for mod, what in (("torch", "torch with CUDA"), ("opgraph", "opgraph's Python module (PYTHONPATH=build-py)"),
                      ("timing", "bench/timing.py (run from bench/ or with it on PYTHONPATH)")):
        try:
            __import__(mod)
        except ImportError as exc:
            need.append("%s: %s" % (what, exc))
    if need:
        print("%s: cannot run, missing: %s" % (prog, "; ".join(need)), file=sys.stderr)
        return False
    import torch
    if not torch.cuda.is_available():
        print("%s: cannot run, missing: a CUDA device (torch.cuda.is_available() is False)" % prog, file=sys.stderr)
        return False
    return True


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    sel = select(cells(), args.only, args.cells)
    if not sel:
        print("compare.py gdn: no cell matches --only %s --cells %r" % (args.only, args.cells), file=sys.stderr)
        return 2
    if args.dry_run:
        return dry_run(args, sel)
    if not runtime_ready("compare.py gdn"):
        return 2
    import torch
    print("# compare.py gdn: %s (%d SMs); torch %s (CUDA %s); %d cells, %d rounds" % (
        torch.cuda.get_device_name(), torch.cuda.get_device_properties(0).multi_processor_count, torch.__version__,
        torch.version.cuda, len(sel), args.rounds), flush=True)
    return run_cells(args, sel)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
