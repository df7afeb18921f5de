// linear_attention/kernels/gdn_bwd_common.cuh — what the Gated DeltaNet backward's
// kernel sources share (gdn_bwd_states.cu: gdn_bwd_prep and the two scans;
// gdn_bwd_grads.cu: gdn_bwd_grads, gdn_bwd_finish and gdn_bwd_gate_params): the
// workspace block's tile offsets, the cu_seqlens / gate / beta reads of
// GdnBwdParams, the chunk-slot lookup and the tile copies.
//
// The Gated DeltaNet backward (gdn_bwd), chunked (C = 64 tokens), five kernels
// launched in this order (gdn_bwd_params.cuh for the argument and the workspace):
//
//  gdn_bwd_prep      one CTA per (chunk slot, output head): the chunk's
//                    state-free tiles (the forward's prep: gamma, L, T =
//                    (I + L)^-1, Wn = -T diag(beta e^gamma) K, U = T diag(beta) V,
//                    Qe = diag(e^gamma) Q, Kd = diag(e^(gamma_C - gamma)) K,
//                    P = tril_incl(Q K^T . Gamma)) into the workspace.
//  gdn_bwd_fwd_scan  one CTA per (64-wide V slice, head, sequence): the state
//                    forward from initial_state, storing S^T at every chunk's
//                    start and Vn = U + Wn S (bf16).
//  gdn_bwd_rev_scan  the same grid, the chunks in reverse with dS (fp32 in
//                    registers) from d_final_state: stores dS^T (the gradient
//                    of the state after the chunk), then
//                      dVn = scale P^T dO + Kd dS
//                      dS <- e^gamma_C dS + scale Qe^T dO + Wn^T dVn
//                    and writes d_initial_state at the end.
//  gdn_bwd_grads     one CTA of 16 warps per (chunk slot, q / k head) taking its
//                    group of output heads in turn where HQ = HK (kBwdFlagQkDirect;
//                    else per (chunk slot, output head)): every token gradient of
//                    the chunk from S, dS, Vn, dVn (below); dq, dk summed over the
//                    group and written through the l2norm Jacobian (else staged in
//                    fp32 per output head), dV written (else staged where HV < HO),
//                    dG and dBeta final.
//  gdn_bwd_finish    one warp per token, only for what is staged: dq, dk, dv
//                    summed over each head group, through the l2norm Jacobian,
//                    in the outputs' types.
//  gdn_bwd_gate_params  (safe_gate only) one CTA per head: d_a_log and d_dt_bias,
//                    the sums over tokens of the per-token terms gdn_bwd_grads staged.
//
// gdn_bwd_grads, per chunk (s <= r lower triangle, Gamma_rs = e^(gamma_r - gamma_s)):
//   dQe = scale dO S^T    dKd = Vn dS^T    dW = -dVn S^T    dP = scale dO Vn^T
//   dT  = dW K^T diag(beta e^gamma) + dVn V^T diag(beta)
//   dL  = strict_tril(-T^T dT T^T);  M1 = tril_incl(dP . Gamma);  M2 = dL . beta_r Gamma
//   dKb = T^T dW;  dVb = T^T dVn
//   dq  = e^gamma dQe + M1 K
//   dk  = e^(gamma_C - gamma) dKd + beta e^gamma dKb + M1^T Q + M2 K + M2^T K
//   dv  = beta dVb
//   dbeta_r  = e^gamma_r k_r.dKb_r + v_r.dVb_r + sum_s F_rs      F = dL . (K K^T) . Gamma
//   dgamma_r = e^gamma_r q_r.dQe_r - e^(gamma_C - gamma_r) k_r.dKd_r + beta_r e^gamma_r k_r.dKb_r
//              + sum_s E_rs - sum_s E_sr                          E = dP . P + beta_r F
//   dgamma_C = sum_r e^(gamma_C - gamma_r) k_r.dKd_r + e^gamma_C <S, dS>, added at the last row;
//   dg = the chunk's reverse cumsum of dgamma; then the gate / beta transforms
//   (safe_gate: dx = dg (-e^a_log) sigmoid(x + dt_bias), and the per-token terms of
//   d_a_log = sum dg g and d_dt_bias = sum dx staged for gdn_bwd_gate_params).
// Matrix products on mma.sync (bf16 operands, fp32 accumulation), as the forward.
#pragma once

#include "linear_attention/kernels/gdn_bwd_params.cuh"
#include "linear_attention/kernels/gdn_common.cuh"

namespace opgraph_gdn {

// The backward's overloads of the forward's GdnParams readers (gdn_common.cuh),
// in the params' namespace: the templates both share (the chunk prep, gdn_prep.cuh)
// find them.

// safe_gate's parameters of head h: exp(a_log) (1 without a_log) and dt_bias (0 without).
__device__ __forceinline__ void gate_params(const GdnBwdParams& p, i64 h, float& ea, float& dt) {
  ea = (p.flags & kFlagHasALog) ? expf(load_any(p.a_log, h, p.a_log_type)) : 1.f;
  dt = (p.flags & kFlagHasDtBias) ? load_any(p.dt_bias, h, p.dt_bias_type) : 0.f;
}

// The natural-log gate and the beta of head h from the raw g and beta values x, b (as the forward's gate_beta_of).
__device__ __forceinline__ void gate_beta_from(const GdnBwdParams& p, i64 h, float x, float b, float& gl, float& beta) {
  if (p.flags & kFlagSafeGate) {
    float ea, dt;
    gate_params(p, h, ea, dt);
    gl = -ea * softplusf_(x + dt);
  } else if (p.flags & kFlagLinearGate) {
    gl = x > 0.f ? fmaxf(logf(x), -200.f) : -200.f;
  } else {
    gl = x;
  }
  beta = (p.flags & kFlagBetaSigmoid) ? ((p.flags & kFlagNegEig) ? 2.f : 1.f) * sigmoidf_(b) : b;
}
// The natural-log gate and the beta of token `tok`, head h.
__device__ __forceinline__ void gate_beta(const GdnBwdParams& p, i64 tok, i64 h, float& gl, float& beta) {
  const i64 off = tok * p.ho + h;
  gate_beta_from(p, h, load_any(p.g, off, p.g_type), load_any(p.beta, off, p.beta_type), gl, beta);
}

// gdn_summary_bwd has no v: the prep's U is formed from zero rows (no reader takes it).
__device__ __forceinline__ bool has_values(const GdnBwdParams& p) { return (p.flags & kBwdFlagSummary) == 0; }

namespace bwd {

constexpr i64 kBlockElems = gdn_bwd_block_elems(D);

__device__ __forceinline__ u16* ws16(const GdnBwdParams& p, long long off) {
  return reinterpret_cast<u16*>(p.ws + static_cast<u64>(off));
}
__device__ __forceinline__ float* ws32(const GdnBwdParams& p, long long off) {
  return reinterpret_cast<float*>(p.ws + static_cast<u64>(off));
}

// Under a chain split (gdn_bwd_states.cu's span kernels, gdn_bwd_onepass):
// The span block `which` (kSpanH .. kSpanRSeed, gdn_bwd_params.cuh) of (sequence, span, head).
__device__ __forceinline__ float* span_block(const GdnBwdParams& p, i64 seq, i64 span, i64 h, int which) {
  return ws32(p, p.ws_span) + gdn_bwd_span_block_at(seq, span, h, which, p.n_spans, p.ho, D);
}
// The chunks [cb, ce) of a sequence's span `span` of `chunks` chunks (p.span_chunks, or p.ckpt_chunks for
// gdn_bwd_states.cu's checkpoint-seeded forward spans; PH 0: the whole sequence; nch its chunks) and whether the
// span exists. An empty sequence has one (empty) span.
template <int PH>
__device__ __forceinline__ bool span_range(i64 chunks, i64 nch, i64 span, i64& cb, i64& ce, i64& nsp) {
  cb = 0;
  ce = nch;
  nsp = 1;
  if (PH == 0) return true;
  nsp = nch > 0 ? (nch + chunks - 1) / chunks : 1;
  if (span >= nsp) return false;
  cb = span * chunks;
  ce = cb + chunks < nch ? cb + chunks : nch;
  return true;
}

// Token tok's gradients of head h's log-domain gate (dg) and of its beta (db), taken back through the gate and beta
// transforms the flags name, then stored; under safe_gate (g' = -e^a_log softplus(x + dt): dx = dg' (-e^a_log)
// sigmoid(x + dt)) the token's terms of d_a_log (dg' g') and d_dt_bias (dx) go to the [HO][T] staging.
__device__ __forceinline__ void store_gate_grads(const GdnBwdParams& p, i64 h, i64 tok, float dg, float db) {
  const i64 off = tok * p.ho + h;
  if (p.flags & kFlagSafeGate) {
    float ea, dt;
    gate_params(p, h, ea, dt);
    const float z = load_any(p.g, off, p.g_type) + dt;
    const float gl = -ea * softplusf_(z), dx = -dg * ea * sigmoidf_(z);
    ws32(p, p.ws_ga)[h * p.t + tok] = dg * gl;
    ws32(p, p.ws_gd)[h * p.t + tok] = dx;
    dg = dx;
  } else if (p.flags & kFlagLinearGate) {
    const float a = load_any(p.g, off, p.g_type);
    dg = (a > 0.f && logf(a) > -200.f) ? dg / a : 0.f;
  }
  if (p.flags & kFlagBetaSigmoid) {
    const float sg = sigmoidf_(load_any(p.beta, off, p.beta_type));
    db *= ((p.flags & kFlagNegEig) ? 2.f : 1.f) * sg * (1.f - sg);
  }
  store_any(p.dg, off, p.dg_type, dg);
  store_any(p.dbeta, off, p.dbeta_type, db);
}

// Copies rows x cols bf16 (cols a multiple of 8) from global (row stride gs) to
// shared (row stride ls) with cp.async, the NTHR threads of the block sharing the
// pieces; the caller commits and waits.
template <int NTHR = kThreads>
__device__ __forceinline__ void copy_tile(u16* dst, int ls, const u16* src, i64 gs, int rows, int cols, int tid) {
  const int pieces = cols / 8;
  for (int i = tid; i < rows * pieces; i += NTHR) {
    const int r = i / pieces, c = (i % pieces) * 8;
    cp_async16(dst + r * ls + c, src + r * gs + c, 16);
  }
}

}  // namespace bwd
}  // namespace opgraph_gdn
