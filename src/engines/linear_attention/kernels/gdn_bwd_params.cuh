// linear_attention/kernels/gdn_bwd_params.cuh — the launch contract of the gdn
// backward kernels (gdn_bwd_states.cu, gdn_bwd_grads.cu): the one argument each
// takes, and the layout of the workspace they share. The kernels (NVRTC) and the
// host (engines/linear_attention/gdn_bwd.cpp fills it) include this same text. Plain
// aggregate of 8-byte fields, no includes and no CUDA keywords: the same layout
// under both compilers (LP64).
#pragma once

// A trial define both sides of the workspace's <S^T, dS^T> sums read (kernels/gdn_bwd_rev_ws.cuh, gdn_bwd_grads.cu).
#ifndef GDN_BWD_SDS_IN_GRADS
// 1 (a trial): gdn_bwd_rev_fused neither loads S^T (34 KiB of a chunk's ~107 KiB of requests, read only for this) nor
// sums <S^T, dS^T> into the workspace's sds; gdn_bwd_grads sums it from the S^T and dS^T it reads anyway (dS^T as the
// bf16 stored, not the fp32 registers: dG in its last bits). 0: the engine's build.
#define GDN_BWD_SDS_IN_GRADS 0
#endif
// The one-pass backward's two trial entries (docs/linear_attention.md, "The one-pass design"), both off in the engine's
// builds: gdn_bwd_fwd_st_fused, its first pass (kernels/gdn_fused.cu, ws3_pass PH 7), and gdn_bwd_onepass, its second
// (kernels/gdn_bwd_onepass.cuh, in gdn_bwd_grads.cu's cubin at d = 128).
#ifndef GDN_BWD_ONEPASS
#define GDN_BWD_ONEPASS 0
#endif
#ifndef GDN_BWD_ONEPASS_RED
// 1 (with GDN_BWD_ONEPASS): gdn_bwd_onepass adds its dq and dk (fp32 reductions in L2) into a zeroed staging of
// [T][HQ][D] / [T][HK][D] (the sums over each q / k head's output heads; the launcher zeroes it first) in place of a
// [T][HO][D] row a head, and gdn_bwd_finish reads those sums: a quarter of the staging's bytes at 16/64, but dq and dk
// no longer the same bits run to run (the adds' order). 0: the per-head staging.
#define GDN_BWD_ONEPASS_RED 0
#endif
#ifndef GDN_BWD_ONEPASS_BATCH
// 1 (with GDN_BWD_ONEPASS): gdn_bwd_onepass issues each phase's independent products back to back and waits once.
#define GDN_BWD_ONEPASS_BATCH 0
#endif
#ifndef GDN_BWD_ONEPASS_ROLES
// 1 (with GDN_BWD_ONEPASS and GDN_BWD_ONEPASS_RED; a trial): gdn_bwd_onepass by roles, every product full width on
// one warpgroup (kernels/gdn_bwd_onepass_roles.cuh) in place of the column-quarter form; 2: the same with one CTA
// barrier at each chunk's start (warp 0 forms the gates and their cumsum, aux T diag(beta)); 3: 1 with the dL chain
// (T^T dT, dL, K K^T: M2, F) on aux instead of grad. 0: the engine's build.
#define GDN_BWD_ONEPASS_ROLES 0
#endif
#ifndef GDN_BWD_ONEPASS_TMARED
// 1 (with GDN_BWD_ONEPASS_RED, the column-quarter form; PIPELINE_ARCH 5's build since 2026-12-07): dq and dk added
// into their [T][HQ] / [T][HK] sums by TMA reductions (cp.reduce.async.bulk.tensor .add, one a warpgroup's column
// quarter) from a 128-byte-swizzled fp32 tile staged in shared memory over the chunk's dead dS^T copy, in place of
// every thread's red.global; OnePassMaps then carries the sums' maps (dq, dk). 0: the red.global form.
#define GDN_BWD_ONEPASS_TMARED 0
#endif
#ifndef GDN_BWD_ONEPASS_TMADV
// 1 (with GDN_BWD_ONEPASS, the column-quarter form; a trial): a full chunk's bf16 dv (HV = HO) staged in the dead c1 /
// c2 tiles and stored by two TMA tile stores (a 64-column panel each) in place of every thread's 4-byte stores; a
// short last chunk stores as before. OnePassMaps then carries dv's map. 0: the engine's build.
#define GDN_BWD_ONEPASS_TMADV 0
#endif
#if GDN_BWD_ONEPASS_TMADV && (!GDN_BWD_ONEPASS || GDN_BWD_ONEPASS_ROLES)
#error "GDN_BWD_ONEPASS_TMADV is a form of GDN_BWD_ONEPASS's column-quarter pass 2"
#endif
#if GDN_BWD_ONEPASS_TMARED && (!GDN_BWD_ONEPASS_RED || GDN_BWD_ONEPASS_ROLES)
#error "GDN_BWD_ONEPASS_TMARED is a form of GDN_BWD_ONEPASS_RED's column-quarter pass 2"
#endif
#if (GDN_BWD_ONEPASS_RED || GDN_BWD_ONEPASS_BATCH || GDN_BWD_ONEPASS_ROLES) && !GDN_BWD_ONEPASS
#error "GDN_BWD_ONEPASS_RED, _BATCH and _ROLES are forms of GDN_BWD_ONEPASS's pass 2"
#endif

namespace opgraph_gdn {

// GdnBwdParams::flags bits beyond gdn_params.cuh's kFlag* (which the backward
// reads: kFlagL2Norm, kFlagSafeGate, kFlagLinearGate, kFlagBetaSigmoid,
// kFlagNegEig, kFlagHasInit, kFlagHasALog, kFlagHasDtBias, kFlagCu64).
enum : long long {
  kBwdFlagHasDFinal = 1LL << 20,   // d_final_state bound (else a zero outgoing gradient)
  kBwdFlagWriteDInit = 1LL << 21,  // d_initial_state produced
  kBwdFlagWriteDALog = 1LL << 22,  // d_a_log produced (safe_gate)
  kBwdFlagWriteDDt = 1LL << 23,    // d_dt_bias produced (safe_gate)
  // HQ = HK: gdn_bwd_grads's CTA takes the grads_group output heads of one q / k head,
  // sums dq (in shared memory) and dk (in registers) over them and writes dQ, dK itself
  // (through the l2norm Jacobian); gdn_bwd_finish then leaves them alone (no fp32 staging).
  kBwdFlagQkDirect = 1LL << 24,
  // gdn_summary_bwd: no v (gdn_bwd_prep's U stays zero); gdn_bwd_rev_summary runs every sequence whole from
  // a zero dS^T and writes dS^T at its start as G (through d_initial_state / dinit_type); gdn_bwd_fwd_summary
  // runs only the transition rows and writes M (the rows it forms are M^T) to `transition`.
  kBwdFlagSummary = 1LL << 25,
  // state_checkpoints bound (the forward's, every 64 ckpt_chunks tokens): gdn_bwd_fwd_span runs spans of
  // ckpt_chunks chunks, span j > 0 seeded by the sequence's checkpoint j - 1; gdn_bwd_fwd_summary's value rows
  // and gdn_bwd_span_fixup's forward direction (a split's) have nothing to do and exit.
  kBwdFlagCkpt = 1LL << 26,
  // gdn_bwd_onepass: fp32 g and beta come by TMA (the launcher encodes their maps: fp32,
  // HO a multiple of 4, 16-byte aligned); otherwise each row's thread reads them.
  kBwdFlagGatesTma = 1LL << 27
};

// gdn_bwd_onepass's dynamic shared memory at d = 128 (its OnePassSmem and the 1024 bytes of alignment slack;
// kernels/gdn_bwd_onepass.cuh asserts its layout fits) and its threads.
constexpr long long kGdnBwdOnePassSmemBytes = 231424;

// Every extent in ELEMENTS. q [T, HQ, D], k [T, HK, D], v [T, HV, D] have the
// head dim contiguous and token / head strides q_ts, q_hs, ... (multiples of 8
// elements); every other tensor is dense row-major in its declared shape:
// g, beta, dG, dBeta [T, HO]; dO [T, HO, D]; dQ [T, HQ, D], dK [T, HK, D],
// dV [T, HV, D]; initial_state, d_final_state, d_initial_state [N, HO, D, D]
// (V-major: rows v of K elements).
struct GdnBwdParams {
  unsigned long long q, k, v, g, beta, cu_seqlens, initial_state, d_o, d_final_state;
  unsigned long long dq, dk, dv, dg, dbeta, d_initial_state;
  unsigned long long a_log, dt_bias, d_a_log, d_dt_bias;  // safe_gate: [HO] each
  unsigned long long ws;       // the workspace (gdn_bwd_ws_* below), 256-byte aligned
  long long t;                 // T (tokens); cu_seqlens offsets are clamped to [0, T]
  long long n_seq;             // N (sequences)
  long long hq, hk, hv, ho;    // head counts; HO = max(HQ, HV), each divides HO
  long long n_slots;           // chunk slots: ceil(T / 64) + N (sequence s's chunk j is slot cu[s] / 64 + s + j)
  long long q_ts, q_hs, k_ts, k_hs, v_ts, v_hs;
  // Element type codes (kTypeBf16 / kTypeF16 / kTypeF32) of the run-time typed tensors.
  long long g_type, beta_type, init_type, do_type, dfin_type;
  long long dq_type, dk_type, dv_type, dg_type, dbeta_type, dinit_type;
  long long a_log_type, dt_bias_type, dalog_type, ddt_type;
  long long flags;
  double scale;                // o = scale * S^T q
  // Byte offsets from ws of the workspace's regions (gdn_bwd_ws below; the host fills them).
  long long ws_blocks, ws_egc, ws_st, ws_dst, ws_vn, ws_dvn, ws_dq, ws_dk, ws_dv, ws_ga, ws_gd, ws_sds;
  long long grads_group;       // under kBwdFlagQkDirect: HO / HQ (gdn_bwd_grads's grid y is HQ); else 1
  // A chain split of the two scans (the CHAIN_SPLIT knob; 0: none): spans of span_chunks chunks,
  // at most n_spans a sequence (the split kernels' grid z is N x n_spans); ws_span the span blocks.
  long long span_chunks, n_spans, ws_span;
  // gdn_summary_bwd (kBwdFlagSummary): the transition output [N, HO, K, K] (0: not produced) and its type.
  unsigned long long transition;
  long long trans_type;
  // Under kBwdFlagCkpt: state_checkpoints [ckpt_rows, HO, D, D] (ckpt_type; sequence i's j-th at row
  // sum_{s<i} floor(L_s / (64 ckpt_chunks)) + j - 1), the cadence in chunks and the forward spans a sequence
  // has at most (gdn_bwd_fwd_span's grid z is N x ckpt_spans).
  unsigned long long checkpoints;
  long long ckpt_type, ckpt_rows, ckpt_chunks, ckpt_spans;
};

// ---- the workspace (bytes from GdnBwdParams::ws; d the head dim, C = 64) ----
// Per (chunk slot, output head) sh = slot * HO + h, in regions one after the other
// (each starting on a 256-byte boundary):
//   blocks  bf16 [sh][4 C d + 2 C C]: the forward prep's tiles qe, wn, kd, u [C][d], p [C][C], then T [C][C]
//   egc     fp32 [sh]: exp(gamma_C)
//   sds     fp32 [sh][16]: <S^T, dS^T> over the chunk's state tile pair, in partial sums of
//           gdn_bwd_rev_scan's warps (8 a 64-row V slice; slot 8 s + w: slice s, warp w)
//   st      bf16 [sh][d][d]: S^T at the chunk's start (rows v)
//   dst     bf16 [sh][d][d]: dS^T, the gradient of the state after the chunk
//   vn      bf16 [sh][C][d]: V_new = U - W S
//   dvn     bf16 [sh][C][d]: its gradient
// then per token fp32 [T][HO][d] each: dq, dk, dv per output head (summed over
// head groups, and taken through l2norm, by gdn_bwd_finish; dq and dk only where
// HQ != HK, otherwise gdn_bwd_grads writes dQ and dK itself (kBwdFlagQkDirect); dv only
// where v heads are grouped, HV < HO: otherwise gdn_bwd_grads writes dV itself); then fp32 [HO][T]
// each, ga and gd: per token the terms of d_a_log (dg . g) and d_dt_bias (dx)
// under safe_gate (summed over tokens by gdn_bwd_gate_params).
// Under a chain split (span_chunks > 0), last, per (sequence, span, output head) five fp32 [d][d]
// blocks (kSpanH .. kSpanRSeed below): the forward scan's span summary H (the state at the span's
// end from a zero seed, S^T rows) and transition M (K x K), the span's true starting state (its
// seed), the reverse scan's span summary H' (dS^T at the span's start from a zero dS^T at its
// end) and the true dS^T at the span's end (the reverse pass's seed).
constexpr long long gdn_bwd_round256(long long x) { return (x + 255) / 256 * 256; }
constexpr long long gdn_bwd_slots(long long t, long long n_seq) { return (t + 63) / 64 + n_seq; }
constexpr long long gdn_bwd_block_elems(long long d) { return 4 * 64 * d + 2 * 64 * 64; }
struct GdnBwdWs {
  long long blocks, egc, sds, st, dst, vn, dvn, dq, dk, dv, ga, gd, span, total;
};
enum : int { kSpanH = 0, kSpanM = 1, kSpanSeed = 2, kSpanRH = 3, kSpanRSeed = 4, kSpanBlocks = 5 };
// The first element (fp32, from the span region) of the span block `which` of (sequence, span, output head), with
// n_spans spans a sequence and ho output heads; every kernel that reads or writes the blocks indexes them by this.
constexpr long long gdn_bwd_span_block_at(long long seq, long long span, long long h, int which, long long n_spans,
                                          long long ho, long long d) {
  return (((seq * n_spans + span) * ho + h) * kSpanBlocks + which) * d * d;
}
// Spans a sequence of a T-token batch has at most under a split of span_chunks chunks (0: no split).
constexpr long long gdn_bwd_spans(long long t, long long span_chunks) {
  if (span_chunks <= 0) return 0;
  const long long spans = ((t + 63) / 64 + span_chunks - 1) / span_chunks;
  return spans > 0 ? spans : 1;
}
// prep_only (gdn_summary_bwd: its summaries store nothing per chunk): the blocks and egc, every later region empty.
constexpr GdnBwdWs gdn_bwd_ws(long long d, long long t, long long n_seq, long long ho, bool qk_staged,
                              bool dv_staged, long long span_chunks = 0, bool prep_only = false) {
  const long long sh = gdn_bwd_slots(t, n_seq) * ho;
  GdnBwdWs w{};
  w.blocks = 0;
  w.egc = gdn_bwd_round256(w.blocks + sh * gdn_bwd_block_elems(d) * 2);
  w.sds = gdn_bwd_round256(w.egc + sh * 4);
  if (prep_only) {
    w.st = w.dst = w.vn = w.dvn = w.dq = w.dk = w.dv = w.ga = w.gd = w.span = w.total = w.sds;
    return w;
  }
  w.st = gdn_bwd_round256(w.sds + sh * 16 * 4);
  w.dst = gdn_bwd_round256(w.st + sh * d * d * 2);
  w.vn = gdn_bwd_round256(w.dst + sh * d * d * 2);
  w.dvn = gdn_bwd_round256(w.vn + sh * 64 * d * 2);
  w.dq = gdn_bwd_round256(w.dvn + sh * 64 * d * 2);
  w.dk = gdn_bwd_round256(w.dq + (qk_staged ? t * ho * d * 4 : 0));
  w.dv = gdn_bwd_round256(w.dk + (qk_staged ? t * ho * d * 4 : 0));
  w.ga = gdn_bwd_round256(w.dv + (dv_staged ? t * ho * d * 4 : 0));
  w.gd = gdn_bwd_round256(w.ga + t * ho * 4);
  w.span = gdn_bwd_round256(w.gd + t * ho * 4);
  w.total = gdn_bwd_round256(w.span + n_seq * gdn_bwd_spans(t, span_chunks) * ho * kSpanBlocks * d * d * 4);
  return w;
}

// The one-pass form's layout (PIPELINE_ARCH 5): the same regions, sized for what its kernels write. Unsplit,
// gdn_bwd_fwd_st_fused stores only S^T and T, so the block region holds T alone (bf16 [sh][C][C]); under a chain
// split (span_chunks > 0) its span recompute (gdn_bwd_fwd_span_fused of gdn_bwd_fwd_st_fused's build) writes every
// block tile (the reverse summaries read them) but no Vn. dS^T, Vn and dVn are empty. dq and dk are
// gdn_bwd_onepass's sums over the q / k head groups, fp32 [T][HQ][d] and [T][HK][d]; dV staged per output head where
// dv_staged.
constexpr GdnBwdWs gdn_bwd_ws_onepass(long long d, long long t, long long n_seq, long long hq, long long hk,
                                      long long ho, bool dv_staged, long long span_chunks = 0) {
  const long long sh = gdn_bwd_slots(t, n_seq) * ho;
  const bool split = span_chunks > 0;
  GdnBwdWs w{};
  w.blocks = 0;
  w.egc = gdn_bwd_round256(w.blocks + sh * (split ? gdn_bwd_block_elems(d) : 64 * 64) * 2);
  w.sds = gdn_bwd_round256(w.egc + sh * 4);
  w.st = gdn_bwd_round256(w.sds + sh * 16 * 4);
  w.dst = gdn_bwd_round256(w.st + sh * d * d * 2);
  w.vn = w.dvn = w.dq = w.dst;
  w.dk = gdn_bwd_round256(w.dq + t * hq * d * 4);
  w.dv = gdn_bwd_round256(w.dk + t * hk * d * 4);
  w.ga = gdn_bwd_round256(w.dv + (dv_staged ? t * ho * d * 4 : 0));
  w.gd = gdn_bwd_round256(w.ga + t * ho * 4);
  w.span = gdn_bwd_round256(w.gd + t * ho * 4);
  w.total = gdn_bwd_round256(w.span + n_seq * gdn_bwd_spans(t, span_chunks) * ho * kSpanBlocks * d * d * 4);
  return w;
}

// Dynamic shared memory of each kernel at head dim d (bf16 tiles [rows][d + 8],
// [rows][64 + 8]; fp32 [64][65]). The kernels assert them.
constexpr long long gdn_bwd_prep_smem_bytes(long long d) {
  return (2 * 2 * 64 * (d + 8) > 4 * 2 * 64 * 65 ? 2 * 2 * 64 * (d + 8) : 4 * 2 * 64 * 65) +
         2 * (2 * 64 * (d + 8) + 64 * 72) + 4 * 2 * 64;
}
// gdn_bwd_fwd_scan: two stages of wn, kd [C][d + 8] and u [C][72]; s [64][d + 8]; vn [C][72].
constexpr long long gdn_bwd_fwd_scan_smem_bytes(long long d) { return 2 * (5 * 64 * (d + 8) + 3 * 64 * 72); }
// gdn_bwd_rev_scan: two stages of qe, wn, kd [C][d + 8], p [C][72], dO's raw bytes [C][64] x 4 and the S^T
// slice [64][d + 8]; ds [64][d + 8]; dob, dvn [C][72].
constexpr long long gdn_bwd_rev_scan_smem_bytes(long long d) {
  return 2 * (7 * 64 * (d + 8) + 4 * 64 * 72) + 2 * 64 * 64 * 4 + 2 * 2 * 64 * (d + 8);
}
// gdn_bwd_grads: q, k, v, dob, vn, dvn, dw [C][d + 8]; st [d][d + 8]; t, c1, c2 [C][72];
// fp32 dq [C][d + 8], gam, bet, the rows' inverse norms [C], eight [4][C] partial-sum
// tables, 16 reduction floats.
constexpr long long gdn_bwd_grads_smem_bytes(long long d) {
  return 2 * (7 * 64 * (d + 8) + d * (d + 8) + 3 * 64 * 72) + 4 * (64 * (d + 8) + 4 * 64 + 8 * 4 * 64 + 16);
}
// gdn_bwd_span_fixup: the forward fix-up's FixupSmem (gdn_common.cuh): three stages of bf16 m [d][d + 8] and
// fp32 h [64][d + 8]; bf16 x [64][d + 8].
constexpr long long gdn_bwd_fixup_smem_bytes(long long d) { return (d + 8) * (3 * 2 * d + 3 * 4 * 64 + 2 * 64); }
// gdn_bwd_rev_fused (the backward's PIPELINE_ARCH 3, d = 128; kernels/gdn_bwd_rev_ws.cuh): two stages of Qe, Wn, Kd,
// dO [C][d], P [C][C] bf16, S^T [d][d] bf16 in 272-byte rows and e^gamma_C (107 KiB a stage); 1024 bytes to align.
// (GDN_BWD_SDS_IN_GRADS, a trial: three stages of 73 KiB, no S^T.)
constexpr long long gdn_bwd_rev_fused_smem_bytes(long long) {
  return GDN_BWD_SDS_IN_GRADS ? 3 * 74752 + 1024 : 2 * 109568 + 1024;
}
// Threads a CTA of gdn_bwd_grads (16 warps; gdn_bwd_rev_fused 384, as the fused forward recompute; every other
// backward kernel 256).
constexpr int kGdnBwdGradsThreads = 512;

}  // namespace opgraph_gdn
