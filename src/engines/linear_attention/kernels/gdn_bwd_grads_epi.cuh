// linear_attention/kernels/gdn_bwd_grads_epi.cuh — trials of gdn_bwd_grads' head start and end
// (kernels/gdn_bwd_grads.cu includes it once, after GradSmem):
//  GDN_BWD_GATES_AHEAD's reads: a run-time typed element's raw bits read a head ahead.
//  GDN_BWD_SDS_IN_GRADS's <S^T, dS^T>: a thread's pieces of S^T read again, then dotted with dS^T's.
//  GDN_BWD_EPI_SPREAD's per-token epilogue: the head's 64 rows one a thread over warps 0 and 1 instead of two a lane
//  of warp 0. The same terms as the engine's form (dgamma from the partial sums with E's row and column sums, dbeta
//  with F's row sums, dgamma_C from the k.dKd terms and <S^T, dS^T>, the chunk's reverse cumsum, the gate / beta
//  transforms); the cumsum's and the warp sums' order differs, so dG may differ in its last bits.
#pragma once

namespace opgraph_gdn {
namespace bwd {
#if GDN_BWD_GATES_AHEAD
// An element of a run-time typed tensor as stored (fp32: its word; 16-bit: the half in the low bits), and as float.
__device__ __forceinline__ u32 raw_any(u64 base, i64 off, long long type) {
  return type == kTypeF32 ? reinterpret_cast<const u32*>(base)[off] : reinterpret_cast<const u16*>(base)[off];
}
__device__ __forceinline__ float raw_f32(u32 w, long long type) {
  const u16 x = static_cast<u16>(w);
  return type == kTypeF32 ? __uint_as_float(w) : type == kTypeBf16 ? bf16_to_f32(x) : f16_to_f32(x);
}
#endif
#if GDN_BWD_SDS_IN_GRADS
// Thread tid's four 16-byte pieces of the [D][D] tile at src (S^T, read again through L2).
__device__ __forceinline__ void sds_pieces(const u16* src, int tid, uint4 (&s_pc)[4]) {
#pragma unroll
  for (int k4 = 0; k4 < 4; ++k4) {
    const int i = tid + kGT * k4;
    s_pc[k4] = __ldg(reinterpret_cast<const uint4*>(src + (i >> 4) * D + (i & 15) * 8));
  }
}
// Their dot with the same pieces of dS^T in shared memory (st), summed over the warp: the warp's partial of
// <S^T, dS^T>.
__device__ __forceinline__ float sds_dot(const uint4 (&s_pc)[4], const u16* st, int tid) {
  float acc = 0.f;
#pragma unroll
  for (int k4 = 0; k4 < 4; ++k4) {
    const int i = tid + kGT * k4;
    const uint4 d4 = *reinterpret_cast<const uint4*>(&st[TDD::at(i >> 4, (i & 15) * 8)]);
    const u32 sw[4] = {s_pc[k4].x, s_pc[k4].y, s_pc[k4].z, s_pc[k4].w}, dw_[4] = {d4.x, d4.y, d4.z, d4.w};
#pragma unroll
    for (int e = 0; e < 4; ++e)
      acc += bf16_to_f32(static_cast<u16>(sw[e])) * bf16_to_f32(static_cast<u16>(dw_[e])) +
             bf16_to_f32(static_cast<u16>(sw[e] >> 16)) * bf16_to_f32(static_cast<u16>(dw_[e] >> 16));
  }
  return warp_sum(acc);
}
#endif
}  // namespace bwd
}  // namespace opgraph_gdn

#if GDN_BWD_EPI_SPREAD
namespace opgraph_gdn {
namespace bwd {
// Threads 0 .. 63 (warps 0 and 1, both call it): row r = tid of the chunk (tokens tok0 + r), output head h; gc the
// chunk's gamma_C. Meets the other warp at named barrier 1 (64 threads) once, each handing its k.dKd sum over (and
// warp 1 its dgamma total).
__device__ __forceinline__ void epilogue_rows(const GdnBwdParams& p, GradSmem& sm, int tid, int n, i64 tok0, i64 h,
                                              float gc) {
  const int r = tid, lane = tid & 31, w = tid >> 5;
  float gs, bs, x;
  row_partials(sm, r, gs, bs, x);
  const bool in = r < n;
  const float dgam = in ? gs : 0.f, dbet = in ? bs : 0.f;
  // This warp's suffix sums of dgamma (rows r .. its last) and its k.dKd sum; warp 1 hands both of its totals over.
  float suffix = dgam;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const float y = __shfl_down_sync(0xffffffffu, suffix, o);
    if (lane + o < 32) suffix += y;
  }
  const float kd = warp_sum(in ? x : 0.f);
  if (lane == 0) {
    if (w == 1) sm.xchg[0] = suffix;
    sm.xchg[1 + w] = kd;
  }
  asm volatile("bar.sync 1, 64;" ::: "memory");
  const float up = w == 0 ? sm.xchg[0] : 0.f;  // dgamma of the rows of warp 1 (rows 32 .. 63)
  const float sum_kd = sm.xchg[1] + sm.xchg[2];  // both warps' k.dKd sums, in one order
  const float red = warp_sum(lane < 8 * (D / BV) ? sm.red[lane] : 0.f);
  const float dgc = sum_kd + exp2f(gc) * red;
  if (!in) return;
  // dg_r = dgamma_C + sum_{s >= r} dgamma_s.
  store_gate_grads(p, h, tok0 + r, dgc + up + suffix, dbet);
}
}  // namespace bwd
}  // namespace opgraph_gdn
#endif
