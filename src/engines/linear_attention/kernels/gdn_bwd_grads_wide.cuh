// linear_attention/kernels/gdn_bwd_grads_wide.cuh — GDN_BWD_GRADS_WIDE (d = 128, a trial; off by default): the
// grads kernel (gdn_bwd_grads: same argument, workspace, grid and outputs as gdn_bwd_grads.cu's form) with its
// four warpgroups on different products at once, each product full width (m64n128 or m64n64 a warpgroup), in
// place of every warpgroup taking a column quarter of the same product between CTA-wide barriers. It is the
// gradient side of the one-pass backward's pass 2 (docs/linear_attention.md, "The one-pass design") written
// against the workspace first, so that it can be checked and timed against the engine's kernel on its own
// (bench/gdn_bwd_ab.sh "-DGDN_BWD_GRADS_WIDE=1").
//
// Per (chunk, head) of the CTA's head group (the formulas: gdn_bwd_common.cuh), warpgroup
//   Q  dq += (scale e^gamma dO) S^T (A from registers, its rows scaled), then dq += M1 K;
//   K  dk += (e^(gamma_C - gamma) Vn) dS^T, dk += (beta e^gamma T^T) dW, dk += M1^T Q + M2 K + M2^T K;
//   W  dW = -dVn S^T (to shared memory), dW K^T and dVn V^T (dT, and the column sums that give k.dKb and
//      v.dVb without forming dKb: k_r.dKb_r = sum_s T_sr (dW K^T)_sr), dv = (beta T^T) dVn;
//   X  Q K^T and dO Vn^T (M1, E's dP . P part), K K^T, X = T^T dT, dL = -X T^T (M2, F, E's row and column sums).
// dq and dk stay in the Q and K warpgroups' accumulators over the head group; the row dots q.dQe and k.dKd each
// head needs are the dot with the accumulators after the product less the dot before it. The warpgroups meet at
// named barriers only where one reads what another wrote (dW, M1, dT, M2), and all of them at each head's start
// and end. Registers: one [16][4] accumulator array a thread serves every role (dq, dk, or the W and X
// warpgroups' products in its halves), so the roles' peaks do not add up.
// Measured (H100, bench/results/2026-12-06-gdn-bwd-grads-wide-h100.txt): gradients within the A/B bounds of the
// engine's kernel, 1.49x its time; of a head's ~40k cycles (GDN_BWD_WIDE_CLOCK) ~12.3k are warp 0's epilogue, which
// every other warp waits for, ~12-20k the head's loads and gates, each role's own work ~8-15k.
#pragma once

#include "linear_attention/kernels/gdn_wgmma_rs.cuh"

// GDN_BWD_WIDE_CLOCK=1 (a measuring aid, never in the engine; GDN_BWD_CLOCK's clocks, kernels/gdn_bwd_grads_tiles.cuh:
// the first thread of each warpgroup of one CTA adds its phases' cycles to a shared sum, gdn_bwd_clock[10 role +
// phase] at the end, which bench/gdn_bwd_ab.cu prints). Phases, per role: Q [start, rowdot + fragments, product,
// rowdot, M1 wait, M1 K, -, -, end barrier, warp 0's epilogue]; K [start, rowdot + fragments, product, rowdot + T^T
// fragments, dW wait, (beta e^gamma T^T) dW, M1 wait + M1^T Q, M2 wait + M2 products, end barrier]; W [start, dW,
// dW store + barrier, dW K^T + dVn V^T, column sums + dT, dv product, dv stores, -, end barrier]; X [start, Q K^T +
// dO Vn^T, M1 epilogue, K K^T issue + dT wait, X + its store, dL, M2 / F epilogue, E / F sums, end barrier]. "start":
// the head's loads and gates, from the barrier before them.

namespace opgraph_gdn {
namespace bwd {
namespace wide {

struct alignas(1024) WideSmem {
  u16 q[TCD::kElems];  // l2-normalised q rows (bf16), zero past the chunk
  u16 k[TCD::kElems];
  u16 v[TCD::kElems];
  u16 dob[TCD::kElems];  // dO (unscaled)
  u16 vn[TCD::kElems];
  u16 dvn[TCD::kElems];
  u16 dw[TCD::kElems];  // dW = -dVn S^T (the W warpgroup's)
  u16 st[TDD::kElems];  // S^T
  u16 dst[TDD::kElems];  // dS^T
  u16 t[TCC::kElems];   // T = (I + L)^-1 (the workspace's bf16 copy)
  u16 m1[TCC::kElems];  // M1 = tril_incl(scale dP . Gamma)
  u16 m2[TCC::kElems];  // M2 = dL beta_r Gamma
  u16 dt[TCC::kElems];  // dT
  u16 x[TCC::kElems];   // X = T^T dT
  float gam[C], bet[C];
  float rq[C], rk[C];    // the rows' inverse norms (1 without use_qk_l2norm)
  float pq[C], pkd[C];   // per row: scale e^gamma q.dQe, e^(gamma_C - gamma) k.dKd
  float re[C], rf[C];    // per row: the row sums of E and F
  float cb[4][C], cv[4][C], ec[4][C];  // per column, one partial a row band: k.dKb, v.dVb, E's column sums
  float red[16];         // <S^T, dS^T>'s partial sums (the reverse scan's)
#if GDN_BWD_CLOCK
  long long clk[40];     // the phase clocks (below), summed over the heads
#endif
};
static_assert(sizeof(WideSmem) + 1024 <= gdn_bwd_grads_smem_bytes(D), "WideSmem does not fit the allocation");

enum : int { kBarDw = 1, kBarM1 = 2, kBarDt = 3, kBarM2 = 4, kBarW = 5, kBarX = 6, kBarSt = 7, kBarRows = 8 };
__device__ __forceinline__ void bsync(int id, int n) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void barrive(int id, int n) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ float lo(u32 w) { return bf16_to_f32(static_cast<u16>(w)); }
__device__ __forceinline__ float hi(u32 w) { return bf16_to_f32(static_cast<u16>(w >> 16)); }
__device__ __forceinline__ u32 scale2(u32 w, float f) { return pack_bf16(lo(w) * f, hi(w) * f); }
// Shared memory by 32-bit address: a tile's offsets are immediates on one per-thread base.
__device__ __forceinline__ u32 lds_a(u32 a) {
  u32 v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(a) : "memory");
  return v;
}
__device__ __forceinline__ float lds_h(u32 a) {
  unsigned short v;
  asm volatile("ld.shared.b16 %0, [%1];\n" : "=h"(v) : "r"(a) : "memory");
  return bf16_to_f32(v);
}
__device__ __forceinline__ void sts_a(u32 a, u32 v) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(a), "r"(v) : "memory");
}
// The byte address of this thread's fragment pair (row ra, columns 8 j + 2 t, + 1) in a tile of R rows whose
// base is `tile`, from fx = the thread's offset at j = 0 (ra 128 + 16 g + 4 t, laundered each head so the
// addresses are not hoisted out of the head loop): the 16-byte piece index j % 8 XOR g; row rb = ra + 8 is
// 1024 bytes on (the same swizzle row).
template <int R>
__device__ __forceinline__ u32 fa_at(u32 tile, u32 fx, int j) {
  return tile + static_cast<u32>((j >> 3) * R * 128) + (fx ^ static_cast<u32>((j & 7) << 4));
}

// The dot of rows ra and rb of an accumulator fragment ([NT][4]) with the same rows of a tile of R rows.
template <int NT, int R>
__device__ __forceinline__ void rowdot(const float (&c)[NT][4], u32 tile, u32 fx, float& da, float& db) {
  float a = 0.f, b = 0.f;
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    const u32 ad = fa_at<R>(tile, fx, j);
    const u32 wa = lds_a(ad), wb = lds_a(ad + 1024u);
    a += c[j][0] * lo(wa) + c[j][1] * hi(wa);
    b += c[j][2] * lo(wb) + c[j][3] * hi(wb);
  }
#pragma unroll
  for (int o = 1; o <= 2; o <<= 1) {
    a += __shfl_xor_sync(0xffffffffu, a, o);
    b += __shfl_xor_sync(0xffffffffu, b, o);
  }
  da = a;
  db = b;
}
// A fragment's pairs (rows ra, rb) as bf16 into a tile of R rows.
template <int NT, int R>
__device__ __forceinline__ void frag_store(const float (&c)[NT][4], u32 tile, u32 fx, float f) {
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    const u32 ad = fa_at<R>(tile, fx, j);
    sts_a(ad, pack_bf16(f * c[j][0], f * c[j][1]));
    sts_a(ad + 1024u, pack_bf16(f * c[j][2], f * c[j][3]));
  }
}
// Register-A fragments of k steps 0 .. KS of diag(f) X for a K-major tile of R rows (rows ra, rb scaled by fa,
// fb): k step kk's columns 16 kk + 2 t (+ 8) are the pairs of n-tiles 2 kk and 2 kk + 1.
template <int R, int KS>
__device__ __forceinline__ void frag_rows(u32 (&a)[8][4], u32 tile, u32 fx, float fa, float fb) {
#pragma unroll
  for (int kk = 0; kk < KS; ++kk) {
    const u32 a0 = fa_at<R>(tile, fx, 2 * kk), a1 = fa_at<R>(tile, fx, 2 * kk + 1);
    a[kk][0] = scale2(lds_a(a0), fa);
    a[kk][1] = scale2(lds_a(a0 + 1024u), fb);
    a[kk][2] = scale2(lds_a(a1), fa);
    a[kk][3] = scale2(lds_a(a1 + 1024u), fb);
  }
}
// Register-A fragments of diag(f) T^T (k steps 0 .. 3: C = 64) from the [C][C] tile at `t`: A[m][k] = f_m T[k][m].
// tx[e][h]: the byte offset of T[2 t + e][row h's column] (ra, rb): (2 t + e) 128 + ((column / 8) XOR (2 t + e))
// 16 + 2 g; rows 8 and 16 kk further on are 1024 and 2048 kk bytes on (the same swizzle row).
__device__ __forceinline__ void frag_trans(u32 (&a)[8][4], u32 t, const u32 (&tx)[2][2], float fa, float fb) {
#pragma unroll
  for (int kk = 0; kk < C / 16; ++kk) {
    const u32 o = t + 2048u * kk;
    a[kk][0] = pack_bf16(fa * lds_h(o + tx[0][0]), fa * lds_h(o + tx[1][0]));
    a[kk][1] = pack_bf16(fb * lds_h(o + tx[0][1]), fb * lds_h(o + tx[1][1]));
    a[kk][2] = pack_bf16(fa * lds_h(o + 1024u + tx[0][0]), fa * lds_h(o + 1024u + tx[1][0]));
    a[kk][3] = pack_bf16(fb * lds_h(o + 1024u + tx[0][1]), fb * lds_h(o + 1024u + tx[1][1]));
  }
}
// c += A . B over k steps 0 .. KS, A from registers, B a tile of layout TB read K-major or (BKN) MN-major.
template <int N, int KS, bool BKN, class TB>
__device__ __forceinline__ void prod_rs(float (&c)[N / 8][4], const u32 (&a)[8][4], const u16* B) {
  opgraph_gemm::wgmma_fence();
  const u32 b0 = BKN ? mnmajor_lo(B, TB::kPanelBytes, 0) : kmajor_lo(B, 0);
#pragma unroll
  for (int kk = 0; kk < KS; ++kk) {
    const u32 sb = BKN ? mnmajor_step(kk) : kmajor_step(kk, TB::kPanelBytes);
    WgmmaRS<N, BKN ? 1 : 0>::mma(&c[0][0], a[kk], desc_lo(b0 + sb), 1);
  }
  opgraph_gemm::wgmma_commit();
  opgraph_gemm::wgmma_wait<0>();
  pin_acc(c);
}
// Column sums over a warp's 16 rows (lanes of one t4), every lane ending with them.
__device__ __forceinline__ float col_sum(float x) {
#pragma unroll
  for (int o = 4; o <= 16; o <<= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}
__device__ __forceinline__ float row_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

}  // namespace wide
}  // namespace bwd
}  // namespace opgraph_gdn

extern "C" __global__ void __launch_bounds__(kGdnBwdGradsThreads, 1) gdn_bwd_grads(const GdnBwdParams p) {
  using namespace opgraph_gdn::bwd::wide;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  WideSmem& sm = *reinterpret_cast<WideSmem*>(
      smem_raw + ((1024u - (static_cast<u32>(__cvta_generic_to_shared(smem_raw)) & 1023u)) & 1023u));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wg = __shfl_sync(0xffffffffu, warp >> 2, 0), wi = warp & 3;  // the role: warp-uniform
  const int g8 = lane >> 2, t4 = lane & 3;
  const int ra = 16 * wi + g8, rb = ra + 8;  // this thread's rows of every m64 fragment
#if GDN_BWD_CLOCK
  const bool clk_on = (tid & 127) == 0 && blockIdx.x == gridDim.x / 2 && blockIdx.y == 0;
  long long clk_t = clock64();
  if (clk_on)
    for (int i = 0; i < 10; ++i) sm.clk[10 * wg + i] = 0;
#endif
  const u32 sa = static_cast<u32>(__cvta_generic_to_shared(&sm));
  // A tile's shared address (a constant offset from sa).
  auto off = [&](const u16* f) {
    const auto* b = reinterpret_cast<const unsigned char*>(&sm);
    return sa + static_cast<u32>(reinterpret_cast<const unsigned char*>(f) - b);
  };
  const i64 slot = blockIdx.x;
  if (p.n_seq <= 0) return;
  i64 bos = 0, c0 = 0;
  int n = 0;
  if (!slot_chunk(p, slot, lane, bos, c0, n)) return;
  const bool direct_qk = (p.flags & kBwdFlagQkDirect) != 0;
  const i64 G = direct_qk ? p.grads_group : 1, h0 = static_cast<i64>(blockIdx.y) * G;
  const i64 hq = h0 / (p.ho / p.hq), hk = h0 / (p.ho / p.hk);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  const float scale = static_cast<float>(p.scale);
  constexpr int RPW = C / kGW;  // rows a warp in the row loads: 4
  constexpr bool kRawV = GDN_IO == 0;
  const bool raw_do = p.do_type == kTypeBf16;
  // cp.async of head h's tiles (this thread's share), one commit group.
  // pre: S^T, dS^T, Vn and (raw) dO already requested during the head before (GDN_BWD_WIDE_PREFETCH).
  auto issue_tiles = [&](i64 h, bool pre) {
    const i64 sh = slot * p.ho + h, hv = h / (p.ho / p.hv);
    if (!pre) {
      copy_tile_rows<TCD, C, D>(sm.vn, ws16(p, p.ws_vn) + sh * C * D, tid);
      copy_tile_rows<TDD, D, D>(sm.st, ws16(p, p.ws_st) + sh * D * D, tid);
      copy_tile_rows<TDD, D, D>(sm.dst, ws16(p, p.ws_dst) + sh * D * D, tid);
    }
    copy_tile_rows<TCD, C, D>(sm.dvn, ws16(p, p.ws_dvn) + sh * C * D, tid);
    copy_tile_rows<TCC, C, C>(sm.t, ws16(p, p.ws_blocks) + sh * kBlockElems + kOffT, tid);
    const int r0 = tid >> 4, c = (tid & 15) * 8;
    const u16* vb = reinterpret_cast<const u16*>(p.v) + (bos + c0) * p.v_ts + hv * p.v_hs + c;
    const u16* ob = reinterpret_cast<const u16*>(p.d_o) + ((bos + c0) * p.ho + h) * D + c;
    const int at = TCD::at(r0, c);
#pragma unroll
    for (int it = 0; it < 2; ++it) {
      const int r = r0 + 32 * it;
      const bool in = r < n;
      const i64 rr = in ? r : 0;
      if (kRawV) cp_async16(&sm.v[at + it * 32 * 64], vb + rr * p.v_ts, in ? 16 : 0);
      if (raw_do && !pre) cp_async16(&sm.dob[at + it * 32 * 64], ob + rr * (p.ho * D), in ? 16 : 0);
    }
    cp_async_commit();
  };
  // The X warpgroup's request of head h's raw dO rows (rows past the chunk zero-filled) during the head before.
  auto issue_dob_wg = [&](i64 h) {
    const int t = tid & 127, r0 = t >> 4, c = (t & 15) * 8;
    const u16* ob = reinterpret_cast<const u16*>(p.d_o) + ((bos + c0) * p.ho + h) * D + c;
    const int at = TCD::at(r0, c);
#pragma unroll
    for (int it = 0; it < C / 8; ++it) {
      const int r = r0 + 8 * it;
      const bool in = r < n;
      cp_async16(&sm.dob[at + it * 8 * 64], ob + (in ? r : 0) * (p.ho * D), in ? 16 : 0);
    }
  };
  issue_tiles(h0, false);
  {  // q and k rows once (l2-normalised, bf16) and their inverse norms
    const u16* qg = reinterpret_cast<const u16*>(p.q);
    const u16* kg = reinterpret_cast<const u16*>(p.k);
#pragma unroll
    for (int i = 0; i < RPW; ++i) {
      const int r = warp + kGW * i;
      RowRaw wq = 0, wk = 0;
      if (r < n) {
        const i64 tok = bos + c0 + r;
        wq = load_row_raw(qg + tok * p.q_ts + hq * p.q_hs + lane * EL);
        wk = load_row_raw(kg + tok * p.k_ts + hk * p.k_hs + lane * EL);
      }
      float xq[EL], xk[EL];
      unpack_row(wq, xq);
      unpack_row(wk, xk);
      float iq = 1.f, ik = 1.f;
      if (l2) {
        float sq = 0.f, sk = 0.f;
#pragma unroll
        for (int e = 0; e < EL; ++e) sq += xq[e] * xq[e], sk += xk[e] * xk[e];
        iq = rsqrtf(warp_sum(sq) + 1e-6f);
        ik = rsqrtf(warp_sum(sk) + 1e-6f);
#pragma unroll
        for (int e = 0; e < EL; ++e) xq[e] *= iq, xk[e] *= ik;
      }
      if (lane == 0) sm.rq[r] = iq, sm.rk[r] = ik;
      st_row(&sm.q[TCD::at(r, lane * EL)], xq);
      st_row(&sm.k[TCD::at(r, lane * EL)], xk);
    }
  }

  float acc[16][4];  // Q: dq; K: dk (both over the head group); W, X: their products
  float xa[8][4];    // X: X, then dL
  u32 af[8][4];      // register-A fragments
  zero(acc);
#pragma unroll 1
  for (i64 g = 0; g < G; ++g) {
    const i64 h = h0 + g, hv = h / (p.ho / p.hv), sh = slot * p.ho + h;
    if (g) {
      __syncthreads();  // the previous head's tiles, sums and gates all read
      issue_tiles(h, GDN_BWD_WIDE_PREFETCH != 0);
    }
    // Head h + 1's S^T, dS^T, Vn and dO requested as their last readers here finish with them.
    const bool pre = GDN_BWD_WIDE_PREFETCH && g + 1 < G;
    if (!kRawV || !raw_do) {
      const u16* vg = reinterpret_cast<const u16*>(p.v);
#pragma unroll
      for (int i = 0; i < RPW; ++i) {
        const int r = warp + kGW * i;
        const i64 tok = bos + c0 + r;
        float x[EL];
        if (!kRawV) {
          if (r < n) load_row_share(vg + tok * p.v_ts + hv * p.v_hs + lane * EL, x);
          else
#pragma unroll
            for (int e = 0; e < EL; ++e) x[e] = 0.f;
          st_row(&sm.v[TCD::at(r, lane * EL)], x);
        }
        if (!raw_do) {
#pragma unroll
          for (int e = 0; e < EL; e += 2) {
            x[e] = x[e + 1] = 0.f;
            if (r < n) load_any2(p.d_o, (tok * p.ho + h) * D + lane * EL + e, p.do_type, x[e], x[e + 1]);
          }
          st_row(&sm.dob[TCD::at(r, lane * EL)], x);
        }
      }
    }
    if (tid < C) {
      float gl = 0.f, b = 0.f;
      if (tid < n) gate_beta(p, bos + c0 + tid, h, gl, b);
      sm.gam[tid] = gl;
      sm.bet[tid] = b;
    }
    if (tid < 8 * (D / BV)) sm.red[tid] = ws32(p, p.ws_sds)[sh * 16 + tid];
    __syncthreads();
    if (warp == 0) chunk_gate_cumsum(sm.gam, lane);
    cp_async_wait_all();
    tiles_fence();
    __syncthreads();
    GCLK(0);
    const float gc = sm.gam[C - 1];
    const float ega = exp2f(sm.gam[ra]), egb = exp2f(sm.gam[rb]);
    const float ba = sm.bet[ra], bb = sm.bet[rb];
    // This thread's fragment offsets, laundered each head (recomputed here, not hoisted and held across it).
    u32 fx = static_cast<u32>(ra * 128 + (g8 << 4) + 4 * t4), wx = static_cast<u32>(wi);
    asm volatile("" : "+r"(fx), "+r"(wx));
    u32 tx[2][2];
#pragma unroll
    for (int e = 0; e < 2; ++e)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh)
        tx[e][hh] = static_cast<u32>((2 * t4 + e) * 128) + ((((2 * wx + hh) ^ static_cast<u32>(2 * t4 + e))) << 4) +
                    static_cast<u32>(2 * g8);

    if (wg == 0) {
      // ---- Q: dq += (scale e^gamma dO) S^T (pq: the rows' dot with q), then dq += M1 K ----
      float d0a, d0b, d1a, d1b;
      rowdot<16, C>(acc, off(sm.q), fx, d0a, d0b);
      frag_rows<C, 8>(af, off(sm.dob), fx, scale * ega, scale * egb);
      if (pre) barrive(kBarRows, 384);
      GCLK(1);
      prod_rs<128, 8, true, TDD>(acc, af, sm.st);
      if (pre) barrive(kBarSt, 256);
      GCLK(2);
      rowdot<16, C>(acc, off(sm.q), fx, d1a, d1b);
      if (t4 == 0) sm.pq[ra] = d1a - d0a, sm.pq[rb] = d1b - d0b;
      GCLK(3);
      bsync(kBarM1, 384);
      GCLK(4);
      prod<16, C, false, true, TCC, TCD>(acc, sm.m1, 0, sm.k, 0, lane);
      GCLK(5);
    } else if (wg == 1) {
      // ---- K: dk += (e^(gamma_C - gamma) Vn) dS^T (pkd), += (beta e^gamma T^T) dW, += M1^T Q + M2 K + M2^T K ----
      float d0a, d0b, d1a, d1b;
      rowdot<16, C>(acc, off(sm.k), fx, d0a, d0b);
      frag_rows<C, 8>(af, off(sm.vn), fx, exp2f(gc - sm.gam[ra]), exp2f(gc - sm.gam[rb]));
      if (pre) barrive(kBarRows, 384);
      GCLK(1);
      prod_rs<128, 8, true, TDD>(acc, af, sm.dst);
      if (pre) {
        copy_tile_rows<TDD, D, D, 128>(sm.dst, ws16(p, p.ws_dst) + (sh + 1) * D * D, tid & 127);
        cp_async_commit();
      }
      GCLK(2);
      rowdot<16, C>(acc, off(sm.k), fx, d1a, d1b);
      if (t4 == 0) sm.pkd[ra] = d1a - d0a, sm.pkd[rb] = d1b - d0b;
      frag_trans(af, off(sm.t), tx, ba * ega, bb * egb);
      GCLK(3);
      bsync(kBarDw, 256);
      GCLK(4);
      prod_rs<128, C / 16, true, TCD>(acc, af, sm.dw);
      GCLK(5);
      bsync(kBarM1, 384);
      prod<16, C, true, true, TCC, TCD>(acc, sm.m1, 0, sm.q, 0, lane);
      GCLK(6);
      bsync(kBarM2, 256);
      prod<16, C, false, true, TCC, TCD, false>(acc, sm.m2, 0, sm.k, 0, lane);
      prod<16, C, true, true, TCC, TCD>(acc, sm.m2, 0, sm.k, 0, lane);
      GCLK(7);
    } else if (wg == 2) {
      // ---- W: dW = -dVn S^T; dT = dW K^T diag(beta e^gamma) + dVn V^T diag(beta) with k.dKb, v.dVb;
      // dv = (beta T^T) dVn ----
      zero(acc);
      prod<16, D, false, true, TCD, TDD>(acc, sm.dvn, 0, sm.st, 0, lane);
      GCLK(1);
      if (pre) {
        bsync(kBarSt, 256);  // the Q warpgroup's product with S^T done too
        copy_tile_rows<TDD, D, D, 128>(sm.st, ws16(p, p.ws_st) + (sh + 1) * D * D, tid & 127);
        cp_async_commit();
      }
      frag_store<16, C>(acc, off(sm.dw), fx, -1.f);
      tiles_fence();
      barrive(kBarDw, 256);
      bsync(kBarW, 128);
      GCLK(2);
      float(&a1)[8][4] = *reinterpret_cast<float(*)[8][4]>(&acc[0][0]);
      float(&a2)[8][4] = *reinterpret_cast<float(*)[8][4]>(&acc[8][0]);
      zero(acc);
      prod<8, D, false, false, TCD, TCD, false>(a1, sm.dw, 0, sm.k, 0, lane);
      prod<8, D, false, false, TCD, TCD, false>(a2, sm.dvn, 0, sm.v, 0, lane);
      prod_join(a1, a2);
      GCLK(3);
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int s0 = 8 * j + 2 * t4;
        const u32 ad = fa_at<C>(off(sm.t), fx, j);
        const u32 ta = lds_a(ad), tb = lds_a(ad + 1024u);
        float x[2][2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float tae = e ? hi(ta) : lo(ta), tbe = e ? hi(tb) : lo(tb);
          const float kb = col_sum(tae * a1[j][e] + tbe * a1[j][2 + e]);
          const float vb = col_sum(tae * a2[j][e] + tbe * a2[j][2 + e]);
          if (g8 == 0) sm.cb[wi][s0 + e] = kb, sm.cv[wi][s0 + e] = vb;
          const float bs = sm.bet[s0 + e], bgs = bs * exp2f(sm.gam[s0 + e]);
          x[0][e] = bgs * a1[j][e] + bs * a2[j][e];
          x[1][e] = bgs * a1[j][2 + e] + bs * a2[j][2 + e];
        }
        const u32 dd = fa_at<C>(off(sm.dt), fx, j);
        sts_a(dd, pack_bf16(x[0][0], x[0][1]));
        sts_a(dd + 1024u, pack_bf16(x[1][0], x[1][1]));
      }
      tiles_fence();
      barrive(kBarDt, 256);
      GCLK(4);
      frag_trans(af, off(sm.t), tx, ba, bb);
      zero(acc);
      prod_rs<128, C / 16, true, TCD>(acc, af, sm.dvn);
      GCLK(5);
      // Every v head its own output head (HV = HO): dV in its type to the output; else fp32 to the staging.
      const bool direct = p.hv == p.ho;
      float* sv_ = ws32(p, p.ws_dv);
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int r = hh ? rb : ra;
        if (r >= n) continue;
        const i64 row = ((bos + c0 + r) * p.ho + h) * D;
#pragma unroll
        for (int j = 0; j < 16; ++j) {
          const i64 at = row + 8 * j + 2 * t4;
          if (direct) store_any2(p.dv, at, p.dv_type, acc[j][2 * hh], acc[j][2 * hh + 1]);
          else store_f2(sv_ + at, acc[j][2 * hh], acc[j][2 * hh + 1]);
        }
      }
      GCLK(6);
    } else {
      // ---- X: Q K^T, dP = dO Vn^T -> M1, E = dP . P; K K^T; X = T^T dT; dL = -X T^T -> M2, F, E ----
      float(&qk)[8][4] = *reinterpret_cast<float(*)[8][4]>(&acc[0][0]);
      float(&dp)[8][4] = *reinterpret_cast<float(*)[8][4]>(&acc[8][0]);
      zero(acc);
      prod<8, D, false, false, TCD, TCD, false>(qk, sm.q, 0, sm.k, 0, lane);
      prod<8, D, false, false, TCD, TCD, false>(dp, sm.dob, 0, sm.vn, 0, lane);
      prod_join(qk, dp);
      GCLK(1);
      if (pre) {
        bsync(kBarRows, 384);  // the Q and K warpgroups' dO and Vn fragments read too
        copy_tile_rows<TCD, C, D, 128>(sm.vn, ws16(p, p.ws_vn) + (sh + 1) * C * D, tid & 127);
        if (raw_do) issue_dob_wg(h + 1);
        cp_async_commit();
      }
      const float gra = sm.gam[ra], grb = sm.gam[rb];
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = hh ? rb : ra, s0 = 8 * j + 2 * t4;
          const float gr = hh ? grb : gra;
          float m1[2];
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int s = s0 + e;
            const float gam_rs = s <= r ? exp2f(gr - sm.gam[s]) : 0.f;
            m1[e] = scale * dp[j][2 * hh + e] * gam_rs;
            qk[j][2 * hh + e] *= m1[e];  // E's dP . P part, in qk's place
          }
          sts_a(fa_at<C>(off(sm.m1), fx, j) + 1024u * hh, pack_bf16(m1[0], m1[1]));
        }
      tiles_fence();
      barrive(kBarM1, 384);
      GCLK(2);
      float(&ef)[8][4] = qk;
      float(&kk)[8][4] = dp;
      zero(dp);
      prod<8, D, false, false, TCD, TCD, false>(kk, sm.k, 0, sm.k, 0, lane);
      bsync(kBarDt, 256);
      GCLK(3);
      zero(xa);
      prod<8, C, true, true, TCC, TCC, false>(xa, sm.t, 0, sm.dt, 0, lane);
      prod_join(kk, xa);
      frag_store<8, C>(xa, off(sm.x), fx, 1.f);
      tiles_fence();
      bsync(kBarX, 128);
      GCLK(4);
      zero(xa);
      prod<8, C, false, false, TCC, TCC>(xa, sm.x, 0, sm.t, 0, lane);
      GCLK(5);
      float fr[2] = {0.f, 0.f};
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = hh ? rb : ra, s0 = 8 * j + 2 * t4;
          const float gr = hh ? grb : gra, br = hh ? bb : ba;
          float m2[2];
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int s = s0 + e;
            const float gam_rs = s < r ? exp2f(gr - sm.gam[s]) : 0.f;
            const float d = -xa[j][2 * hh + e];
            const float f = d * kk[j][2 * hh + e] * gam_rs;
            fr[hh] += f;
            ef[j][2 * hh + e] += br * f;
            m2[e] = d * br * gam_rs;
          }
          sts_a(fa_at<C>(off(sm.m2), fx, j) + 1024u * hh, pack_bf16(m2[0], m2[1]));
        }
      tiles_fence();
      barrive(kBarM2, 256);
      GCLK(6);
      float ea = 0.f, eb = 0.f;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        ea += ef[j][0] + ef[j][1];
        eb += ef[j][2] + ef[j][3];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float cs = col_sum(ef[j][e] + ef[j][2 + e]);
          if (g8 == 0) sm.ec[wi][8 * j + 2 * t4 + e] = cs;
        }
      }
      ea = row_sum(ea), eb = row_sum(eb);
      const float fa = row_sum(fr[0]), fb = row_sum(fr[1]);
      if (t4 == 0) sm.re[ra] = ea, sm.re[rb] = eb, sm.rf[ra] = fa, sm.rf[rb] = fb;
      GCLK(7);
    }
    __syncthreads();
    GCLK(8);

    // ---- warp 0, rows 2 lane and 2 lane + 1: dgamma, dbeta, dgamma_C, the chunk's reverse cumsum, the
    // gate / beta transforms (gdn_bwd_grads.cu's, from this form's sums) ----
    if (warp == 0) {
      float dgam[2], dbet[2], kd[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int r = 2 * lane + i;
        float kb = 0.f, vb = 0.f, es = 0.f;
#pragma unroll
        for (int w = 0; w < 4; ++w) kb += sm.cb[w][r], vb += sm.cv[w][r], es += sm.ec[w][r];
        const float eg = exp2f(sm.gam[r]);
        const bool in = r < n;
        dgam[i] = in ? sm.pq[r] - sm.pkd[r] + sm.bet[r] * eg * kb + sm.re[r] - es : 0.f;
        dbet[i] = in ? eg * kb + vb + sm.rf[r] : 0.f;
        kd[i] = in ? sm.pkd[r] : 0.f;
      }
      const float sum_kd = warp_sum(kd[0] + kd[1]);
      const float red = warp_sum(lane < 8 * (D / BV) ? sm.red[lane] : 0.f);
      const float dgc = sum_kd + exp2f(gc) * red;
      gate_scan_store(p, h, bos + c0, n, dgc, dgam, dbet, lane);
      GCLK(9);
    }
  }
#if GDN_BWD_CLOCK
  if (clk_on)
    for (int i = 0; i < 10; ++i) gdn_bwd_clock[10 * wg + i] = sm.clk[10 * wg + i] / G;
#endif
  if (wg > 1) return;
  // ---- dq (Q) or dk (K) of the group's sums: one head a CTA (HQ != HK) to the fp32 staging; else through the
  // l2norm Jacobian dx = r (dy - r x <r x, dy>) (the raw rows read again) in the output's type ----
  const bool isq = wg == 0;
  if (!direct_qk) {
    float* st_ = ws32(p, isq ? p.ws_dq : p.ws_dk);
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int r = hh ? rb : ra;
      if (r >= n) continue;
      const i64 row = ((bos + c0 + r) * p.ho + h0) * D;
#pragma unroll
      for (int j = 0; j < 16; ++j) store_f2(st_ + row + 8 * j + 2 * t4, acc[j][2 * hh], acc[j][2 * hh + 1]);
    }
    return;
  }
  const u16* raw = reinterpret_cast<const u16*>(isq ? p.q : p.k);
  const i64 ts = isq ? p.q_ts : p.k_ts, hs = isq ? p.q_hs : p.k_hs, head = isq ? hq : hk;
  const i64 heads = isq ? p.hq : p.hk;
  const u64 out = isq ? p.dq : p.dk;
  const long long otype = isq ? p.dq_type : p.dk_type;
  const float* rinv = isq ? sm.rq : sm.rk;
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int r = hh ? rb : ra;
    const i64 tok = bos + c0 + (r < n ? r : 0);
    const u16* xr = raw + tok * ts + head * hs;
    float s = 1.f, dot = 0.f;
    if (l2) {
      float a = 0.f;
#pragma unroll
      for (int j = 0; j < 16; ++j) {
        const u32 w = r < n ? lds32(xr + 8 * j + 2 * t4) : 0u;
        a += acc[j][2 * hh] * io_to_f32(static_cast<u16>(w)) +
             acc[j][2 * hh + 1] * io_to_f32(static_cast<u16>(w >> 16));
      }
      a = row_sum(a);
      s = rinv[r];
      dot = s * s * a;  // r <r x, dy> = r^2 <x, dy>
    }
    if (r >= n) continue;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int col = 8 * j + 2 * t4;
      float x0 = 0.f, x1 = 0.f;
      if (l2) {
        const u32 w = lds32(xr + col);
        x0 = io_to_f32(static_cast<u16>(w)), x1 = io_to_f32(static_cast<u16>(w >> 16));
      }
      store_any2(out, (tok * heads + head) * D + col, otype, s * (acc[j][2 * hh] - x0 * dot),
                 s * (acc[j][2 * hh + 1] - x1 * dot));
    }
  }
}
