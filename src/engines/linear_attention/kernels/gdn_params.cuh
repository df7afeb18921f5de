// linear_attention/kernels/gdn_params.cuh — the launch contract of the gdn
// kernels (gdn_prefill.cu, gdn_two_pass.cu, gdn_decode.cu): the one argument each kernel takes, defined once. The
// kernels (NVRTC) and the host (engines/linear_attention/gdn_engine.cpp fills
// it) include this same text. Plain aggregate of 8-byte fields, no includes
// and no CUDA keywords: the same layout under both compilers (LP64).
#pragma once

namespace opgraph_gdn {

// Element type codes of the run-time typed operands (gates, beta, state, O).
enum : long long { kTypeBf16 = 0, kTypeF16 = 1, kTypeF32 = 2 };

// GdnParams::flags bits.
enum : long long {
  kFlagL2Norm = 1,        // use_qk_l2norm: q, k <- x / sqrt(sum x^2 + 1e-6)
  kFlagSafeGate = 2,      // g holds logits: g' = -exp(a_log) softplus(g + dt_bias)
  kFlagLinearGate = 4,    // gate_domain "linear": g is alpha itself
  kFlagBetaSigmoid = 8,   // beta holds logits: s * sigmoid(beta)
  kFlagNegEig = 16,       // s = 2 (allow_neg_eigval)
  kFlagHasInit = 32,      // initial_state bound
  kFlagWriteFinal = 64,   // final_state produced
  kFlagPool = 128,        // state_indices bound: state rows are pool rows
  kFlagHasALog = 256,     // a_log bound (safe_gate)
  kFlagHasDtBias = 512,   // dt_bias bound (safe_gate)
  kFlagCu64 = 1024,       // cu_seqlens is INT64 (else INT32)
  kFlagGuardRedo = 2048   // GDN_BETA_GUARD builds: run only the (sequence, head) pairs `guard` marks (the fallback)
};

// Every extent in ELEMENTS; q [T, HQ, D], k [T, HK, D], v [T, HV, D] have the
// head dim contiguous and token / head strides q_ts, q_hs, ... (multiples of 8
// elements: views of a fused projection); the other tensors are dense row-major
// in their declared shapes (g and beta [T, HO], O [T, HO, D], states
// [rows, HO, D, D] with row stride state_row_stride).
struct GdnParams {
  unsigned long long q, k, v, g, beta, cu_seqlens, initial_state, final_state, a_log, dt_bias, state_indices, o;
  long long t;                 // T (tokens); cu_seqlens offsets are clamped to [0, T]
  long long n_seq;             // N (sequences: cu_seqlens has N + 1 entries)
  long long hq, hk, hv, ho;    // head counts; HO = max(HQ, HV), each divides HO
  long long state_rows;        // rows of initial_state / final_state (N, or N_pool)
  long long state_row_stride;  // elements between state rows (>= HO * D * D)
  long long g_type, beta_type, state_type, o_type, a_log_type, dt_bias_type;
  long long flags;
  double scale;                // o = scale * S^T q
  // The two-pass prefill (gdn_prefill_prep, then gdn_prefill_scan): the
  // workspace and its chunk slots (sequence s's chunk j is slot
  // cu_seqlens[s] / 64 + s + j; ceil(T / 64) + N slots in all).
  unsigned long long ws;
  long long n_slots;
  long long q_ts, q_hs, k_ts, k_hs, v_ts, v_hs;  // token and head strides of q, k, v
  // A chain split of the two-pass prefill's sequential pass (gdn_span_*):
  // spans of span_chunks 64-token chunks; n_spans spans per sequence at most
  // (the grid's z is N x n_spans); sum_ws the span summaries, after the
  // workspace's chunk blocks (gdn_split_ws_offset).
  long long span_chunks, n_spans;
  unsigned long long sum_ws;
  // state_checkpoints (0: not written; the fused prefill's GDN_CKPT builds write them): every ckpt_every tokens
  // of a sequence its state, [ckpt_rows, HO, D, D] in ckpt_type (dense), sequence s's first row at the sum of
  // floor(L / ckpt_every) over the sequences before it; a row at or past ckpt_rows is not written. Last in the
  // struct, so builds without them read the fields above unchanged.
  unsigned long long ckpt;
  long long ckpt_type, ckpt_every, ckpt_rows;
  // gdn_bwd's forward recompute (gdn_bwd_fwd_fused: the fused build's form 4, the backward's PIPELINE_ARCH 2, 3): the
  // gdn_bwd workspace and the byte offsets of the regions it writes (gdn_bwd_params.cuh: the chunk blocks' qe, wn,
  // kd, p, T tiles; e^gamma_C; S^T at each chunk's start; Vn), per (chunk slot, output head) as gdn_bwd_prep and
  // gdn_bwd_fwd_scan write them. Last, as the checkpoints' fields.
  unsigned long long bwd_ws;
  long long bwd_blocks, bwd_egc, bwd_st, bwd_vn;
  // gdn_bwd's fused forms under a chain split (gdn_bwd_fwd_summary_fused, gdn_bwd_fwd_span_fused; span_chunks and
  // n_spans above are the backward's): the byte offset from bwd_ws of its span blocks (gdn_bwd_params.cuh's kSpanH ..
  // kSpanRSeed, per (sequence, span, output head)). Last, as the fields above.
  long long bwd_span;
  // GDN_BETA_GUARD builds (the engine's PIPELINE_ARCH 4 without use_beta_sigmoid; kernels/gdn_fused_ws3.cuh): one
  // word a (sequence, output head), [N][HO] in the plan's workspace: 1 where a beta of the pair leaves [0, 2] (the
  // fp16 inverse's domain), written by the fp16 build's CTAs, read by the fp32 fallback's (kFlagGuardRedo). Last.
  unsigned long long guard;
  // The fused prefill's chain split under GDN_SPLIT_ADAPT (below): a sequence of at most split_min_chunks chunks
  // runs as one span (0: every sequence longer than a span splits, the split's rule without it); span_table the
  // span scan's (sequence, span) a grid row z, int2 [gdn_split_grid_spans] in the plan's workspace, written by the
  // span summaries' CTA (0, 0, 0) ((-1, -1): no span). Last.
  long long split_min_chunks;
  unsigned long long span_table;
};

}  // namespace opgraph_gdn

namespace opgraph_gdn {

// The decode kernels' CTA shapes (gdn_decode.cu instantiates them, the engine launches them):
// gdn_decode covers kDecodeRows value rows a CTA of kDecodeThreads threads, gdn_decode_small
// kDecodeSmallRows of kDecodeSmallThreads, and serves plans of at most kDecodeSmallPairs
// (sequence, head) pairs (la_engine.h decode_small).
// gdn_decode_small: 4 rows a CTA of one warp since 2026-12-07 (8 of 2 warps before; H100, bench/gdn_decode_sweep.sh,
// bench/results/2026-12-07-gdn-onepass-pass1-h100.txt: 0.93 / 0.95x its time at B = 1, 16/32 / 16/64, 0.995-1.000x
// from B = 64 to 256).
constexpr int kDecodeRows = 32, kDecodeThreads = 128, kDecodeSmallRows = 4, kDecodeSmallThreads = 32;
constexpr long long kDecodeSmallPairs = 8192;

}  // namespace opgraph_gdn

namespace opgraph_gdn {

// Dynamic shared memory of gdn_prefill at head dim d (its PrefillSmem: bf16
// staging xq, xk [64 x d], xv [64 x 64]; bf16 tiles q, k, s [64 x (d + 8)],
// t, p [64 x 72], r, vn, vd [64 x 72]; fp32 lf, tf [64 x 65], gam, bet [64]).
// The kernel asserts it.
constexpr long long gdn_prefill_smem_bytes(long long d) {
  return 2 * (2 * 64 * d + 64 * 64 + 3 * 64 * (d + 8) + 5 * 64 * 72) + 4 * (2 * 64 * 65 + 2 * 64);
}

}  // namespace opgraph_gdn

namespace opgraph_gdn {

// The two-pass prefill's workspace: per (chunk slot, output head) one block of
// bf16 tiles, at element offsets (C = 64 tokens, d the head dim)
//   qe  [C][d]   diag(exp(gamma)) Q
//   wn  [C][d]   -T diag(beta exp(gamma)) K
//   kd  [C][d]   diag(exp(gamma_C - gamma)) K
//   u   [C][d]   T diag(beta) V
//   p   [C][C]   tril_incl(Q K^T . Gamma)
// then, after all blocks, one fp32 exp(gamma_C) per (slot, head).
constexpr long long gdn_ws_block_elems(long long d) { return 4 * 64 * d + 64 * 64; }
constexpr long long gdn_ws_block_bytes(long long d) { return 2 * gdn_ws_block_elems(d); }
constexpr long long gdn_ws_slots(long long t, long long n_seq) { return (t + 63) / 64 + n_seq; }
constexpr long long gdn_ws_bytes(long long d, long long t, long long n_seq, long long ho) {
  return gdn_ws_slots(t, n_seq) * ho * (gdn_ws_block_bytes(d) + 4);
}
// A chain split (spans of `span_chunks` chunks, at most n_spans a sequence):
// after the chunk blocks (gdn_ws_bytes, rounded up to 256 bytes), per
// (sequence, span, head) three fp32 [d][d] blocks: H, M and the seed.
constexpr long long gdn_split_spans(long long t, long long span_chunks) {
  if (span_chunks <= 0) return 0;
  const long long spans = ((t + 63) / 64 + span_chunks - 1) / span_chunks;
  return spans > 0 ? spans : 1;
}
constexpr long long gdn_split_ws_offset(long long d, long long t, long long n_seq, long long ho) {
  return (gdn_ws_bytes(d, t, n_seq, ho) + 255) / 256 * 256;
}
constexpr long long gdn_split_ws_bytes(long long d, long long t, long long n_seq, long long ho, long long span_chunks) {
  return gdn_split_ws_offset(d, t, n_seq, ho) + n_seq * gdn_split_spans(t, span_chunks) * ho * 3 * d * d * 4;
}
// The fused prefill's chain split: the span blocks alone (no chunk blocks).
constexpr long long gdn_fused_split_ws_bytes(long long d, long long t, long long n_seq, long long ho,
                                             long long span_chunks) {
  return n_seq * gdn_split_spans(t, span_chunks) * ho * 3 * d * d * 4;
}
// Dynamic shared memory of gdn_span_fixup (FixupSmem, gdn_common.cuh: three stages of bf16 m
// [d x (d + 8)] and fp32 h [64 x (d + 8)]; bf16 x [64 x (d + 8)]).
constexpr long long gdn_fixup_smem_bytes(long long d) { return (d + 8) * (3 * 2 * d + 3 * 4 * 64 + 2 * 64); }
// Dynamic shared memory of gdn_prefill_prep (PrepSmem: bf16 q, k [64 x (d + 8)]
// sharing their space with fp32 lf, tf [64 x 65]; bf16 kb, vb [64 x (d + 8)],
// t [64 x 72]; fp32 gam, bet [64]).
constexpr long long gdn_prep_smem_bytes(long long d) {
  return (2 * 2 * 64 * (d + 8) > 4 * 2 * 64 * 65 ? 2 * 2 * 64 * (d + 8) : 4 * 2 * 64 * 65) +
         2 * (2 * 64 * (d + 8) + 64 * 72) + 4 * 2 * 64;
}
// Dynamic shared memory of gdn_prefill_scan (ScanSmem: two stages of bf16 qe, wn,
// kd [64 x (d + 8)], p [64 x 72]; s [64 x (d + 8)], vn [64 x 72]).
constexpr long long gdn_scan_smem_bytes(long long d) {
  return 2 * (2 * (3 * 64 * (d + 8) + 64 * 72) + 64 * (d + 8) + 64 * 72);
}
// The fused entries (gdn_fused.cu, d = 128 only): the eight-warp form (fused_pass;
// GDN_FUSED_WS = 0, PIPELINE_ARCH 2), two warpgroups, and the warp-specialised one (3).
constexpr unsigned kGdnFusedThreads = 256;
constexpr unsigned kGdnFusedWsThreads = 384;
// Its dynamic shared memory: bf16 128B-swizzled tiles q, k, v [64 x d] in two stages,
// Wn [64 x d], T_v, T_k, P [64 x 64]; fp32 lf, tf [64 x 65], seven token factors [64];
// 1024 bytes to align the base. (The state stays in registers: no tile of it.)
constexpr long long gdn_fused_smem_bytes(long long d) {
  return 2 * (7 * 64 * d + 3 * 64 * 64) + 4 * (2 * 64 * 65 + 7 * 64) + 1024;
}
// The two-stage warp-specialised form (ws::ws_pass; GDN_FUSED_WS = 1 with GDN_WS_R3 = 0, PIPELINE_ARCH
// 3 before 0b900ea), kGdnFusedWsThreads threads: two stages, each bf16 tiles q, k, v, Wn
// [64 x d] and T_v, P [64 x 64], three token factors (1 KiB, keeping the tiles
// 1024-aligned); then the auxiliary warpgroup's T_k [64 x 64] bf16, fp32 lf, tf
// [64 x 65] and five token factors [64]; 1024 bytes to align the base.
// Under GDN_WS_R3 (ws::ws3_pass, the engine's PIPELINE_ARCH 3; its default lives here so the engine's launch and
// the kernel agree: one line turns it on for both): three row stages (q, k, v [64 x d] bf16, 1 KiB for
// the rows' norms and the stage's mbarrier), two product stages (T_v, P [64 x 64] bf16, 1 KiB of
// factors); fp32 lf, tf [64 x 65], two chunks' gamma and beta [64], one chunk's beta e^gamma ik [64] (the backward's
// T_k); 1024 bytes to align the base.
#ifndef GDN_WS_R3
#define GDN_WS_R3 1
#endif
// GDN_WS3_LD (R3; 68, the engine's since 2026-12-04, 65 before): the row stride, in floats, of its fp32
// [64 x 64] tiles L and T (gdn_common.cuh's LDF in that build). 65 (odd) makes the inverse's tensor-core
// fragment loads and the L / P epilogue's stores 2- to 4-way bank conflicts (bank g + t, g + 2 q); 68 makes the
// fragments' banks 4 g + t (distinct), the stores' 2-way, the rows 16-byte aligned, and the diagonal blocks'
// broadcast reads of two blocks land in different banks. H200: 0.921-0.931x against 65, outputs bitwise equal
// (bench/results/2026-12-04-gdn-ws3-trials-h200.txt).
#ifndef GDN_WS3_LD
#define GDN_WS3_LD 68
#endif
constexpr long long gdn_fused_ws_smem_bytes(long long d) {
  return GDN_WS_R3 ? 3 * (3 * 64 * d * 2 + 1024) + 2 * (2 * 64 * 64 * 2 + 1024) + 4 * (2 * 64 * GDN_WS3_LD + 5 * 64) +
                         1024
                   : 2 * (2 * (4 * 64 * d + 2 * 64 * 64) + 1024) + 2 * 64 * 64 + 4 * (2 * 64 * 65 + 5 * 64) + 1024;
}

// GDN_BWD_FWD_STAGE 1 (the engine's since 2026-12-05: the backward 0.845-0.925x on the H200, gradients bitwise
// equal, bench/results/2026-12-05-gdn-trials-h200.txt): gdn_bwd_fwd_fused stores S^T and Wn through a 4 KiB staging
// panel a state warpgroup (stmatrix, then 16-byte stores a row's 64 bytes by four threads) instead of 4-byte stores
// from the wgmma fragments (Nsight Compute had the kernel stalled on those stores:
// bench/results/2026-12-05-gdn-bwd-fused-profile-h200.txt). The panels sit past the forward's map, so the form's
// launch takes 8 KiB more; set here, where the host's launch and the kernel both read it. 0: 4-byte stores (A/B).
#ifndef GDN_BWD_FWD_STAGE
#define GDN_BWD_FWD_STAGE 1
#endif
// GDN_SPLIT_ADAPT 1 (the engine's since 2026-12-06; 0 the A/B form, the default map below): the fused prefill's chain
// split for batches of several sequences. H100 (bench/results/2026-12-06-gdn-split-adapt-h100.txt): the issue's 16/32
// varlen batch at spans of 32 0.89-0.90x its unsplit time (the default map's best split 1.00x), a batch of equal
// lengths that fills the device 1.06x (nothing splits: the summaries' idle CTAs and the two extra launches). Its span
// summaries and span scan (ws::ws3_pass PH 2, 3; the eight-warp fused_pass too) take blockIdx.z as an index over the
// spans that run, not as sequence x n_spans + span. The summaries run the F "full" spans (every span of a split
// sequence but its last, span_chunks chunks each) at z = their index in sequence order, found by a warp scan of
// cu_seqlens (full_span_at, gdn_fused_span_io.cuh); their CTA (0, 0, 0) writes the span scan's map to
// GdnParams::span_table, which the span scan reads a row a CTA (the scan in that kernel spilled 188 bytes): each
// sequence's last span (or the whole sequence) at z = s, then the full spans at N + their index, so the longest CTAs
// start first. GdnParams::split_min_chunks leaves sequences no longer than it whole. The grids need
// gdn_split_grid_spans(T, N, span_chunks) rows in z (about T / 64 / span_chunks + N) instead of N x gdn_split_spans(T,
// span_chunks) (the issue's varlen batch of 8 sequences at spans of 32: 24 against 128, the rest 227 KiB CTAs returning
// at once). Every span computes what it computes under the default map (scripts/emulate_split_compact.py checks the
// maps). The host's launch reads the define here too (grids, the table's workspace, split_min_chunks).
#ifndef GDN_SPLIT_ADAPT
#define GDN_SPLIT_ADAPT 1
#endif
// GDN_SPLIT_ADAPT's grid rows: the full spans (span_chunks chunks each, so at most (ceil(T / 64) + N) / span_chunks of
// them: a batch's chunks number below T / 64 + N) and one last span a sequence.
constexpr long long gdn_split_full_bound(long long t, long long n_seq, long long span_chunks) {
  return span_chunks > 0 ? ((t + 63) / 64 + n_seq) / span_chunks : 0;
}
constexpr long long gdn_split_grid_spans(long long t, long long n_seq, long long span_chunks) {
  return gdn_split_full_bound(t, n_seq, span_chunks) + n_seq;
}
// The fused split's workspace under GDN_SPLIT_ADAPT: the span blocks, then (256-byte aligned) the span table.
constexpr long long gdn_split_table_offset(long long d, long long t, long long n_seq, long long ho,
                                           long long span_chunks) {
  return (gdn_fused_split_ws_bytes(d, t, n_seq, ho, span_chunks) + 255) / 256 * 256;
}
constexpr long long gdn_fused_split_adapt_ws_bytes(long long d, long long t, long long n_seq, long long ho,
                                                   long long span_chunks) {
  return gdn_split_table_offset(d, t, n_seq, ho, span_chunks) + gdn_split_grid_spans(t, n_seq, span_chunks) * 8;
}

constexpr long long gdn_bwd_fwd_fused_smem_bytes(long long d) {
  return gdn_fused_ws_smem_bytes(d) + (GDN_BWD_FWD_STAGE ? 2 * 4096 : 0);
}

}  // namespace opgraph_gdn
