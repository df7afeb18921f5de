// linear_attention/kernels/gdn_bwd_roles_frag.cuh — gdn_bwd_onepass by roles' helpers (GDN_BWD_ONEPASS_ROLES,
// kernels/gdn_bwd_onepass_roles.cuh includes it; named barriers and setmaxnreg are gdn_common.cuh's): the phase
// clocks' volatile read, and a
// warp's full-width fragments (m64n128 / m64n64 a warpgroup: rows 16 band + g, + 8, every column) in the swizzled
// tiles: their offsets, row dots, row and column sums, and dq / dk's 16-byte L2 reductions.
#pragma once

namespace opgraph_gdn {
namespace bwd {
namespace roles {

// The phase clocks' reads as volatile asm, so no barrier's wait moves into the phase after it.
__device__ __forceinline__ long long clock_v() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}
__device__ __forceinline__ float blo(u32 w) { return bf16_to_f32(static_cast<u16>(w)); }
__device__ __forceinline__ float bhi(u32 w) { return bf16_to_f32(static_cast<u16>(w >> 16)); }

// A thread's full-width fragment (rows ra = 16 band + g, rb = ra + 8; columns 8 j + 2 t, + 1) in the swizzled tiles:
// f is (ra, 2 t)'s offset with the piece index g, so n-tile j's piece is f XOR ((j % 8) << 3) in panel j / 8.
struct FragW {
  int f;
  __device__ __forceinline__ explicit FragW(int band, int lane)
      : f((16 * band + (lane >> 2)) * 64 + ((lane >> 2) << 3) + 2 * (lane & 3)) {}
  __device__ __forceinline__ int cd(int hh, int j) const {
    return (j >> 3) * (C * 64) + ((f + 512 * hh) ^ ((j & 7) << 3));
  }
  __device__ __forceinline__ int cc(int hh, int j) const { return (f + 512 * hh) ^ (j << 3); }
  // a [D][D] tile's rows 64 b + ra (+ 8)
  __device__ __forceinline__ int dd(int b, int hh, int j) const {
    return (j >> 3) * (D * 64) + ((f + 4096 * b + 512 * hh) ^ ((j & 7) << 3));
  }
};
// Rows ra, rb of a full-width [C][D] fragment dotted with the same rows of a bf16 [C][D] tile.
__device__ __forceinline__ void row_dot_w(const float (&a)[16][4], const u16* x, const FragW& fr, float& r0,
                                          float& r1) {
  float s0 = 0.f, s1 = 0.f;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const u32 w0 = lds32(&x[fr.cd(0, j)]), w1 = lds32(&x[fr.cd(1, j)]);
    s0 += a[j][0] * blo(w0) + a[j][1] * bhi(w0);
    s1 += a[j][2] * blo(w1) + a[j][3] * bhi(w1);
  }
#pragma unroll
  for (int o = 1; o <= 2; o <<= 1) {
    s0 += __shfl_xor_sync(0xffffffffu, s0, o);
    s1 += __shfl_xor_sync(0xffffffffu, s1, o);
  }
  r0 = s0;
  r1 = s1;
}
// A [C][C] fragment's row sums (rows ra, rb over all 64 columns) and column sums over the warp's 16 rows (columns
// 8 j + 2 t + e), the latter stored by the lanes of g = 0 into ec.
__device__ __forceinline__ void sums_w(const float (&x)[8][4], float (&row)[2], float* ec, int lane) {
  row[0] = row[1] = 0.f;
#pragma unroll
  for (int j = 0; j < 8; ++j) row[0] += x[j][0] + x[j][1], row[1] += x[j][2] + x[j][3];
#pragma unroll
  for (int o = 1; o <= 2; o <<= 1) {
    row[0] += __shfl_xor_sync(0xffffffffu, row[0], o);
    row[1] += __shfl_xor_sync(0xffffffffu, row[1], o);
  }
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    float c0 = x[j][0] + x[j][2], c1 = x[j][1] + x[j][3];
#pragma unroll
    for (int o = 4; o <= 16; o <<= 1) {
      c0 += __shfl_xor_sync(0xffffffffu, c0, o);
      c1 += __shfl_xor_sync(0xffffffffu, c1, o);
    }
    if ((lane >> 2) == 0) store_f2(&ec[8 * j + 2 * (lane & 3)], c0, c1);
  }
}
// dq or dk's fragment added into its [T][H][D] fp32 sums (lanes t, t ^ 1 swap halves: 16-byte reductions of four
// adjacent columns of one row), rows below n only.
__device__ __forceinline__ void red_rows(float* base, const float (&a)[16][4], i64 tok0, i64 hs, i64 hidx, int ra,
                                         int n, int lane) {
  const int t4 = lane & 3;
  const bool odd_t = (t4 & 1) != 0;
  const int r = odd_t ? ra + 8 : ra, col = 2 * (t4 & 2);
  float* const row = base + ((tok0 + r) * hs + hidx) * D + col;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const float s0 = __shfl_xor_sync(0xffffffffu, odd_t ? a[j][0] : a[j][2], 1);
    const float s1 = __shfl_xor_sync(0xffffffffu, odd_t ? a[j][1] : a[j][3], 1);
    const float v[4] = {odd_t ? s0 : a[j][0], odd_t ? s1 : a[j][1], odd_t ? a[j][2] : s0, odd_t ? a[j][3] : s1};
    if (r < n) red_add_f4(row + 8 * j, v);
  }
}
}  // namespace roles
}  // namespace bwd
}  // namespace opgraph_gdn
