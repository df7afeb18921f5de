// linear_attention/kernels/gdn_prep.cuh — the chunk prep the two-pass prefill
// (gdn_prefill_prep, gdn_two_pass.cu) and the backward (gdn_bwd_prep,
// gdn_bwd_states.cu) share: every state-free piece of one 64-token chunk of one
// output head (the cumulative gate, l2norm, L, T, Wn, U, P, Qe, the decayed K),
// written to the chunk's workspace block (gdn_params.cuh names the tiles; the
// backward's block has the same layout).
//
// One body over either params type P (GdnParams or GdnBwdParams); what differs
// is where the block and exp(gamma_C) go, two functions each params type has
// (found through the params' namespace):
//   u16*   prep_block(const P&, i64 slot, i64 h)  the block of (slot, head)
//   float* prep_egc(const P&)                     exp(gamma_C) per (slot, head)
// and the gate and beta readers (gate_beta) of each.
#pragma once

#include "linear_attention/kernels/gdn_common.cuh"

namespace opgraph_gdn {

// q and k are dead once L and P are formed: the inverse's fp32 tiles reuse
// their space (two CTAs a SM at D = 128 in the forward).
struct PrepRows {
  u16 q[C * LDD];    // l2-normalised q rows (bf16)
  u16 k[C * LDD];    // k rows
};
struct PrepInverse {
  float lf[C * LDF]; // L (fp32)
  float tf[C * LDF]; // T (fp32)
};
struct PrepSmem {
  union {
    PrepRows in;
    PrepInverse inv;
  } u;
  u16 kb[C * LDD];   // diag(beta exp(gamma)) K
  u16 vb[C * LDD];   // diag(beta) V
  u16 t[C * LDC];    // T = (I + L)^-1
  float gam[C];      // chunk-local cumulative gate, log2 units
  float bet[C];      // beta (0 past the chunk's last token)
};

// One CTA of 8 warps per (chunk slot, output head): blockIdx.x the slot,
// blockIdx.y the head; smem_raw holds a PrepSmem.
// kValueFirst: how each bf16 pair store is written, `*a = pack_bf16(x, y)` (the value
// computed before the address: the forward's) or st_bf2(a, x, y) (the address first:
// the backward's). The stores are the same; the order only places independent
// instructions, and each kernel keeps its own so that its PTX stays the one its
// device checks ran on.
// kStoreT: T's bf16 copy also goes to the block at kOffT (the backward's block has room).
template <bool kValueFirst, bool kStoreT = false, class P>
__device__ __forceinline__ void prep_chunk(const P& p, unsigned char* smem_raw) {
  PrepSmem& sm = *reinterpret_cast<PrepSmem*>(smem_raw);
  u16* const sq = sm.u.in.q;
  u16* const sk = sm.u.in.k;
  float* const lf = sm.u.inv.lf;
  float* const tf = sm.u.inv.tf;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  const i64 slot = blockIdx.x, h = blockIdx.y;
  if (p.n_seq <= 0) return;
  i64 bos = 0, c0 = 0;
  int n = 0;
  if (!slot_chunk(p, slot, lane, bos, c0, n)) return;  // a slot no chunk uses
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  u16* blk = prep_block(p, slot, h);

  const u16* qg = reinterpret_cast<const u16*>(p.q);
  const u16* kg = reinterpret_cast<const u16*>(p.k);
  const u16* vg = reinterpret_cast<const u16*>(p.v);
  // Every row's loads are issued before any is used (8 rows a warp in flight),
  // ahead of the gate's loads and barriers.
  constexpr int RPW = C / (kThreads / 32);
  RowRaw rq[RPW], rk[RPW], rv[RPW];
#pragma unroll
  for (int i = 0; i < RPW; ++i) {
    const int r = warp + (kThreads / 32) * i;
    rq[i] = rk[i] = rv[i] = 0;
    if (r < n) {
      const i64 tok = bos + c0 + r;
      rq[i] = load_row_raw(qg + tok * p.q_ts + hq * p.q_hs + lane * EL);
      rk[i] = load_row_raw(kg + tok * p.k_ts + hk * p.k_hs + lane * EL);
      if (has_values(p)) rv[i] = load_row_raw(vg + tok * p.v_ts + hv * p.v_hs + lane * EL);
    }
  }

  // Gate and beta, then the chunk-local inclusive cumsum (log2 units).
  if (tid < C) {
    float gl = 0.f, b = 0.f;
    if (tid < n) gate_beta(p, bos + c0 + tid, h, gl, b);
    sm.gam[tid] = gl;
    sm.bet[tid] = b;
  }
  __syncthreads();
  if (warp == 0) chunk_gate_cumsum(sm.gam, lane);
  __syncthreads();

  // q, k (l2-normalised), v rows, and their scaled copies.
  const float gc = sm.gam[C - 1];
#pragma unroll
  for (int i = 0; i < RPW; ++i) {
    const int r = warp + (kThreads / 32) * i;
    float xq[EL], xk[EL], xv[EL];
    unpack_row(rq[i], xq);
    unpack_row(rk[i], xk);
    unpack_row(rv[i], xv);
    if (r < n) {
      if (l2) l2norm_rows(xq, xk);
    } else {
#pragma unroll
      for (int e = 0; e < EL; ++e) xq[e] = 0.f, xk[e] = 0.f, xv[e] = 0.f;
    }
    const float eg = exp2f(sm.gam[r]), br = sm.bet[r], dk = exp2f(gc - sm.gam[r]);
#pragma unroll
    for (int e = 0; e < EL; e += 2) {
      const int col = lane * EL + e;
      if constexpr (kValueFirst) {
        *reinterpret_cast<u32*>(&sq[r * LDD + col]) = pack_bf16(xq[e], xq[e + 1]);
        *reinterpret_cast<u32*>(&sk[r * LDD + col]) = pack_bf16(xk[e], xk[e + 1]);
        *reinterpret_cast<u32*>(&sm.kb[r * LDD + col]) = pack_bf16(br * eg * xk[e], br * eg * xk[e + 1]);
        *reinterpret_cast<u32*>(&sm.vb[r * LDD + col]) = pack_bf16(br * xv[e], br * xv[e + 1]);
        *reinterpret_cast<u32*>(&blk[kOffQe + r * D + col]) = pack_bf16(eg * xq[e], eg * xq[e + 1]);
        *reinterpret_cast<u32*>(&blk[kOffKd + r * D + col]) = pack_bf16(dk * xk[e], dk * xk[e + 1]);
      } else {
        st_bf2(&sq[r * LDD + col], xq[e], xq[e + 1]);
        st_bf2(&sk[r * LDD + col], xk[e], xk[e + 1]);
        st_bf2(&sm.kb[r * LDD + col], br * eg * xk[e], br * eg * xk[e + 1]);
        st_bf2(&sm.vb[r * LDD + col], br * xv[e], br * xv[e + 1]);
        st_bf2(&blk[kOffQe + r * D + col], eg * xq[e], eg * xq[e + 1]);
        st_bf2(&blk[kOffKd + r * D + col], dk * xk[e], dk * xk[e + 1]);
      }
    }
  }
  if (tid == 0) prep_egc(p)[slot * p.ho + h] = exp2f(gc);
  __syncthreads();

  // L = strict_tril(diag(beta) (K K^T . Gamma)); P = tril_incl(Q K^T . Gamma) to the workspace.
  {
    const int m0 = 16 * (warp & 3), n0 = 32 * (warp >> 2);
    float ckk[4][4] = {}, cqk[4][4] = {};
    warp_mma<4, D>(ckk, sk + m0 * LDD, LDD, sk + n0 * LDD, LDD, lane);
    warp_mma<4, D>(cqk, sq + m0 * LDD, LDD, sk + n0 * LDD, LDD, lane);
    __syncthreads();  // every read of q, k done: lf (their space) may be written
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int r = m0 + g8 + 8 * hh, s0 = n0 + 8 * j + 2 * t4;
        const float gr = sm.gam[r], br = sm.bet[r];
        float pv[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int s = s0 + e;
          const float dec = s <= r ? exp2f(gr - sm.gam[s]) : 0.f;
          lf[r * LDF + s] = s < r ? br * ckk[j][2 * hh + e] * dec : 0.f;
          pv[e] = cqk[j][2 * hh + e] * dec;
        }
        if constexpr (kValueFirst) *reinterpret_cast<u32*>(&blk[kOffP + r * C + s0]) = pack_bf16(pv[0], pv[1]);
        else st_bf2(&blk[kOffP + r * C + s0], pv[0], pv[1]);
      }
    }
  }
  __syncthreads();

  // T = (I + L)^-1 and its bf16 copy.
  triangular_inverse(lf, tf, sm.t, tid);
  if constexpr (kStoreT) {
    for (int i = tid; i < C * C / 8; i += kThreads) {  // 16 bytes a thread a step
      const int r = i / (C / 8), c = 8 * (i % (C / 8));
      *reinterpret_cast<uint4*>(&blk[kOffT + r * C + c]) = *reinterpret_cast<const uint4*>(&sm.t[r * LDC + c]);
    }
  }

  // Wn = -T KB and U = T VB ([C x D]; warp tile 16 rows x D/2 columns).
  {
    constexpr int NT = D / 16;
    const int m0 = 16 * (warp & 3), nd0 = (D / 2) * (warp >> 2);
#pragma unroll
    for (int which = 0; which < 2; ++which) {  // Wn, then U: one accumulator set live
      float acc[NT][4] = {};
      warp_mma<NT, C, false, true>(acc, sm.t + m0 * LDC, LDC, (which == 0 ? sm.kb : sm.vb) + nd0, LDD, lane);
      const float sign = which == 0 ? -1.f : 1.f;
      u16* dst = blk + (which == 0 ? kOffWn : kOffU);
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = m0 + g8 + 8 * hh, col = nd0 + 8 * j + 2 * t4;
          if constexpr (kValueFirst)
            *reinterpret_cast<u32*>(&dst[r * D + col]) = pack_bf16(sign * acc[j][2 * hh], sign * acc[j][2 * hh + 1]);
          else
            st_bf2(&dst[r * D + col], sign * acc[j][2 * hh], sign * acc[j][2 * hh + 1]);
        }
    }
  }
}

}  // namespace opgraph_gdn
