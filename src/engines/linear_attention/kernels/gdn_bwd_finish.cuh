// linear_attention/kernels/gdn_bwd_finish.cuh — the gradient module's two small kernels after gdn_bwd_grads
// (kernels/gdn_bwd_grads.cu includes it once, last): gdn_bwd_finish (the head-group sums and the l2norm Jacobian)
// and gdn_bwd_gate_params (safe_gate's d_a_log, d_dt_bias).
#pragma once

// ---------------------------------------------------------------------------
// gdn_bwd_finish: one warp per token. dQ[t, i] = sum over the output heads h of
// q head i of the staged dq[t, h] (then, under use_qk_l2norm, x = q[t, i]:
// r = (|x|^2 + 1e-6)^-1/2, y = r x, dx = r (dy - y <y, dy>)); dK likewise; dV
// the sum over v head groups.
namespace opgraph_gdn {
namespace bwd {
__device__ __forceinline__ void finish_rows(const GdnBwdParams& p, i64 tok, int lane, const float* stage, i64 heads,
                                            u64 raw, i64 ts, i64 hs, bool l2, u64 out, long long out_type) {
#if GDN_BWD_ONEPASS_RED
  // gdn_bwd_onepass added each group's rows into [T][heads][D] itself (stage_heads = heads, one row a group); dV's
  // staging is still a row an output head.
  const bool summed = stage == ws32(p, p.ws_dq) || stage == ws32(p, p.ws_dk);
  const i64 stage_heads = summed ? heads : p.ho, group = summed ? 1 : p.ho / heads;
#else
  const i64 group = p.ho / heads;
#endif
  for (i64 i = 0; i < heads; ++i) {
    float dy[EL];
#pragma unroll
    for (int e = 0; e < EL; ++e) dy[e] = 0.f;
    for (i64 h = i * group; h < (i + 1) * group; ++h) {
#if GDN_BWD_ONEPASS_RED
      const float* s = stage + (tok * stage_heads + h) * D + lane * EL;
#else
      const float* s = stage + (tok * p.ho + h) * D + lane * EL;
#endif
#pragma unroll
      for (int e = 0; e < EL; ++e) dy[e] += s[e];
    }
    if (l2) {
      float x[EL];
      unpack_row(load_row_raw(reinterpret_cast<const u16*>(raw) + tok * ts + i * hs + lane * EL), x);
      float ss = 0.f;
#pragma unroll
      for (int e = 0; e < EL; ++e) ss += x[e] * x[e];
      const float r = rsqrtf(warp_sum(ss) + 1e-6f);
      float dot = 0.f;
#pragma unroll
      for (int e = 0; e < EL; ++e) dot += x[e] * r * dy[e];
      dot = warp_sum(dot);
#pragma unroll
      for (int e = 0; e < EL; ++e) dy[e] = r * (dy[e] - x[e] * r * dot);
    }
    const i64 o = (tok * heads + i) * D + lane * EL;
#pragma unroll
    for (int e = 0; e < EL; e += 2) store_any2(out, o + e, out_type, dy[e], dy[e + 1]);
  }
}
}  // namespace bwd
}  // namespace opgraph_gdn

extern "C" __global__ void __launch_bounds__(kThreads) gdn_bwd_finish(const GdnBwdParams p) {
  const int lane = threadIdx.x & 31;
  const i64 tok = static_cast<i64>(blockIdx.x) * (kThreads / 32) + (threadIdx.x >> 5);
  if (tok >= p.t) return;
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  if (!(p.flags & kBwdFlagQkDirect)) {  // else gdn_bwd_grads wrote dQ and dK
    finish_rows(p, tok, lane, ws32(p, p.ws_dq), p.hq, p.q, p.q_ts, p.q_hs, l2, p.dq, p.dq_type);
    finish_rows(p, tok, lane, ws32(p, p.ws_dk), p.hk, p.k, p.k_ts, p.k_hs, l2, p.dk, p.dk_type);
  }
  if (p.hv != p.ho) finish_rows(p, tok, lane, ws32(p, p.ws_dv), p.hv, p.v, p.v_ts, p.v_hs, false, p.dv, p.dv_type);
}

// gdn_bwd_gate_params (safe_gate only): one CTA per output head h, d_a_log[h] =
// sum over tokens of the staged dg . g and d_dt_bias[h] = sum of the staged dx,
// each thread summing tokens tid, tid + 256, ... in order, then the warps' sums in
// order (deterministic).
extern "C" __global__ void __launch_bounds__(kThreads) gdn_bwd_gate_params(const GdnBwdParams p) {
  __shared__ float red[2][kThreads / 32];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const i64 h = blockIdx.x;
  const float* ga = ws32(p, p.ws_ga) + h * p.t;
  const float* gd = ws32(p, p.ws_gd) + h * p.t;
  float sa = 0.f, sd = 0.f;
  for (i64 t = tid; t < p.t; t += kThreads) sa += ga[t], sd += gd[t];
  sa = warp_sum(sa);
  sd = warp_sum(sd);
  if (lane == 0) red[0][warp] = sa, red[1][warp] = sd;
  __syncthreads();
  if (tid == 0) {
    float a = 0.f, d = 0.f;
    for (int w = 0; w < kThreads / 32; ++w) a += red[0][w], d += red[1][w];
    if (p.flags & kBwdFlagWriteDALog) store_any(p.d_a_log, h, p.dalog_type, a);
    if (p.flags & kBwdFlagWriteDDt) store_any(p.d_dt_bias, h, p.ddt_type, d);
  }
}
