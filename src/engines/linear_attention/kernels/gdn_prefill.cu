// linear_attention/kernels/gdn_prefill.cu — the one-pass Gated DeltaNet
// prefill (the engine's PIPELINE_ARCH knob 0; gdn_common.cuh for the shared parts).
//
// gdn_prefill: the chunked WY/UT form (research note linear_attention.md
//   §2.1) with 64-token chunks. One CTA of 8 warps per (V-slice of 64 value
//   columns, output head, sequence); the CTA walks its sequence's chunks in
//   order, carrying the fp32 state slice S^T [64 x D] in registers (mma
//   accumulator fragments) and a bf16 copy in shared memory for the products.
//   Per chunk, with gamma the chunk-local cumulative log gate, Gamma_rs =
//   exp(gamma_r - gamma_s) (r >= s), beta the per-token beta:
//     L  = strict_tril(diag(beta) (K K^T . Gamma));  T = (I + L)^-1
//     R  = diag(beta) (V - diag(exp(gamma)) K S)
//     Vn = T R                                        (the per-token deltas)
//     O  = scale [diag(exp(gamma)) Q S + tril_incl(Q K^T . Gamma) Vn]
//     S  = exp(gamma_C) S + K^T diag(exp(gamma_C - gamma)) Vn
//   Products run on tensor cores (mma.sync m16n8k16, bf16 operands, fp32
//   accumulation); T is computed in fp32 by 16 x 16 blocks (forward
//   substitution on the diagonal blocks, then one block diagonal at a time).
//   The next chunk's q, k, v rows are fetched into staging tiles (cp.async)
//   while the current one computes. The state slices of one head are
//   independent (the transition acts on the K side only), so V-slicing is
//   exact.
#include "linear_attention/kernels/gdn_common.cuh"

namespace opgraph_gdn {

struct PrefillSmem {
  u16 xq[C * D];     // staging: the next chunk's raw q rows (cp.async, zero past the sequence)
  u16 xk[C * D];     // staging: raw k rows
  u16 xv[C * BV];    // staging: raw v rows (this CTA's value columns)
  u16 q[C * LDD];    // l2-normalised q rows of the chunk (bf16)
  u16 k[C * LDD];    // k rows
  u16 s[BV * LDD];   // S^T slice at the chunk start (bf16 copy of the registers)
  u16 t[C * LDC];    // T = (I + L)^-1
  u16 p[C * LDC];    // tril_incl(Q K^T . Gamma)
  u16 r[C * LDB];    // R [C][BV]
  u16 vn[C * LDB];   // Vn
  u16 vd[C * LDB];   // diag(exp(gamma_C - gamma)) Vn
  float lf[C * LDF]; // L (fp32)
  float tf[C * LDF]; // T (fp32, the substitution's working copy)
  float gam[C];      // chunk-local cumulative gate, log2 units
  float bet[C];      // beta (0 past the chunk's last token)
};
static_assert(sizeof(PrefillSmem) == gdn_prefill_smem_bytes(D), "gdn_prefill_smem_bytes disagrees with PrefillSmem");

}  // namespace opgraph_gdn

using namespace opgraph_gdn;

extern "C" __global__ void __launch_bounds__(kThreads, 1) gdn_prefill(const GdnParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  PrefillSmem& sm = *reinterpret_cast<PrefillSmem*>(smem_raw);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  const i64 v0 = static_cast<i64>(blockIdx.x) * BV;
  const i64 h = blockIdx.y, seq = blockIdx.z;
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const i64 bos = cu_at(p, seq, 0), len = cu_at(p, seq + 1, bos) - bos;
  const i64 srow = state_row(p, seq);
  const float scale = static_cast<float>(p.scale);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;

  // State tile of this warp: S^T rows ms .. ms+16 (value), cols ns .. ns+D/2 (key).
  constexpr int NTS = D / 16;
  const int ms = 16 * (warp & 3), ns = (D / 2) * (warp >> 2);
  float st[NTS][4];
  {
    const bool load = (p.flags & kFlagHasInit) && srow >= 0;
    const i64 base = srow * p.state_row_stride + (h * D + v0) * D;
#pragma unroll
    for (int j = 0; j < NTS; ++j) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        float a = 0.f, b = 0.f;
        if (load) load_any2(p.initial_state, base + static_cast<i64>(v) * D + kk, p.state_type, a, b);
        st[j][2 * hh] = a;
        st[j][2 * hh + 1] = b;
        *reinterpret_cast<u32*>(&sm.s[v * LDD + kk]) = pack_bf16(a, b);
      }
    }
  }

  // Warp tile of the [C x 64] products: rows m0 .. m0+16, cols n0 .. n0+32.
  const int m0 = 16 * (warp & 3), n0 = 32 * (warp >> 2);
  const u16* qg = reinterpret_cast<const u16*>(p.q);
  const u16* kg = reinterpret_cast<const u16*>(p.k);
  const u16* vg = reinterpret_cast<const u16*>(p.v);

  // The next chunk's raw rows land in the staging tiles while this chunk
  // computes: q and k once phase A has read them, v once phase E has.
  auto prefetch_qk = [&](i64 c) {
    const i64 nn = len - c < C ? len - c : C;
    constexpr int CH = D / 8;  // 16-byte pieces per row
    for (int i = tid; i < C * CH; i += kThreads) {
      const int r = i / CH, piece = i % CH;
      const bool ok = r < nn;
      const i64 tok = bos + c + r;
      cp_async16(&sm.xq[r * D + piece * 8], ok ? qg + tok * p.q_ts + hq * p.q_hs + piece * 8 : qg, ok ? 16 : 0);
      cp_async16(&sm.xk[r * D + piece * 8], ok ? kg + tok * p.k_ts + hk * p.k_hs + piece * 8 : kg, ok ? 16 : 0);
    }
    cp_async_commit();
  };
  auto prefetch_v = [&](i64 c) {
    const i64 nn = len - c < C ? len - c : C;
    constexpr int CH = BV / 8;
    for (int i = tid; i < C * CH; i += kThreads) {
      const int r = i / CH, piece = i % CH;
      const bool ok = r < nn;
      const i64 tok = bos + c + r;
      cp_async16(&sm.xv[r * BV + piece * 8], ok ? vg + tok * p.v_ts + hv * p.v_hs + v0 + piece * 8 : vg, ok ? 16 : 0);
    }
    cp_async_commit();
  };
  // Raw gate and beta of the next chunk's token `tid`, in registers.
  float g_raw = 0.f, b_raw = 0.f;
  auto prefetch_gb = [&](i64 c) {
    if (tid < C && c + tid < len) {
      const i64 off = (bos + c + tid) * p.ho + h;
      g_raw = load_any(p.g, off, p.g_type);
      b_raw = load_any(p.beta, off, p.beta_type);
    }
  };
  if (len > 0) {
    prefetch_qk(0);
    prefetch_v(0);
    prefetch_gb(0);
  }

  for (i64 c0 = 0; c0 < len; c0 += C) {
    const int n = static_cast<int>(len - c0 < C ? len - c0 : C);
    const bool more = c0 + C < len;
    cp_async_wait_all();
    __syncthreads();  // the staging tiles hold this chunk; the previous chunk's readers are done

    // A. q, k rows (l2-normalised), gate and beta.
    for (int r = warp; r < C; r += kThreads / 32) {
      float xq[EL], xk[EL];
      if (r < n) {
        load_row_share(&sm.xq[r * D + lane * EL], xq);
        load_row_share(&sm.xk[r * D + lane * EL], xk);
        if (l2) l2norm_rows(xq, xk);
      } else {
#pragma unroll
        for (int e = 0; e < EL; ++e) xq[e] = 0.f, xk[e] = 0.f;
      }
#pragma unroll
      for (int e = 0; e < EL; e += 2) {
        *reinterpret_cast<u32*>(&sm.q[r * LDD + lane * EL + e]) = pack_bf16(xq[e], xq[e + 1]);
        *reinterpret_cast<u32*>(&sm.k[r * LDD + lane * EL + e]) = pack_bf16(xk[e], xk[e + 1]);
      }
    }
    if (tid < C) {
      float gl = 0.f, b = 0.f;
      if (tid < n) gate_beta_of(p, g_raw, b_raw, h, gl, b);
      sm.gam[tid] = gl;
      sm.bet[tid] = b;
    }
    if (more) prefetch_gb(c0 + C);
    __syncthreads();
    if (more) prefetch_qk(c0 + C);

    // B. chunk-local inclusive cumsum of the gate (log2 units).
    if (warp == 0) chunk_gate_cumsum(sm.gam, lane);
    __syncthreads();

    // C. L = strict_tril(diag(beta) (K K^T . Gamma)), P = tril_incl(Q K^T . Gamma).
    {
      float ckk[4][4] = {}, cqk[4][4] = {};
      warp_mma<4, D>(ckk, sm.k + m0 * LDD, LDD, sm.k + n0 * LDD, LDD, lane);
      warp_mma<4, D>(cqk, sm.q + m0 * LDD, LDD, sm.k + n0 * LDD, LDD, lane);
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
            sm.lf[r * LDF + s] = s < r ? br * ckk[j][2 * hh + e] * dec : 0.f;
            pv[e] = cqk[j][2 * hh + e] * dec;
          }
          *reinterpret_cast<u32*>(&sm.p[r * LDC + s0]) = pack_bf16(pv[0], pv[1]);
        }
      }
    }
    __syncthreads();

    // D. T = (I + L)^-1 and its bf16 copy (triangular_inverse).
    triangular_inverse<false>(sm.lf, sm.tf, sm.t, tid);

    // E. K S and Q S; R = diag(beta) (V - diag(exp(gamma)) K S); o = diag(exp(gamma)) Q S.
    float co[4][4] = {};
    {
      float cks[4][4] = {};
      warp_mma<4, D>(cks, sm.k + m0 * LDD, LDD, sm.s + n0 * LDD, LDD, lane);
      warp_mma<4, D>(co, sm.q + m0 * LDD, LDD, sm.s + n0 * LDD, LDD, lane);
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int r = m0 + g8 + 8 * hh;
        const float eg = exp2f(sm.gam[r]), br = sm.bet[r];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int col = n0 + 8 * j + 2 * t4;
          const u32 w = lds32(&sm.xv[r * BV + col]);  // zero past the sequence
          const float va = io_to_f32(static_cast<u16>(w)), vb = io_to_f32(static_cast<u16>(w >> 16));
          *reinterpret_cast<u32*>(&sm.r[r * LDB + col]) =
              pack_bf16(br * (va - eg * cks[j][2 * hh]), br * (vb - eg * cks[j][2 * hh + 1]));
          co[j][2 * hh] *= eg;
          co[j][2 * hh + 1] *= eg;
        }
      }
    }
    __syncthreads();
    if (more) prefetch_v(c0 + C);

    // F. Vn = T R; its decayed copy for the state update.
    {
      float cv[4][4] = {};
      warp_mma<4, C, false, true>(cv, sm.t + m0 * LDC, LDC, sm.r + n0, LDB, lane);
      const float gc = sm.gam[C - 1];
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int r = m0 + g8 + 8 * hh;
        const float dk = exp2f(gc - sm.gam[r]);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int col = n0 + 8 * j + 2 * t4;
          const float x0 = cv[j][2 * hh], x1 = cv[j][2 * hh + 1];
          *reinterpret_cast<u32*>(&sm.vn[r * LDB + col]) = pack_bf16(x0, x1);
          *reinterpret_cast<u32*>(&sm.vd[r * LDB + col]) = pack_bf16(x0 * dk, x1 * dk);
        }
      }
    }
    __syncthreads();

    // G. O = scale (o + P Vn), rows of the chunk only.
    warp_mma<4, C, false, true>(co, sm.p + m0 * LDC, LDC, sm.vn + n0, LDB, lane);
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int r = m0 + g8 + 8 * hh;
      if (r < n) {
        const i64 orow = ((bos + c0 + r) * p.ho + h) * D + v0;
#pragma unroll
        for (int j = 0; j < 4; ++j)
          store_any2(p.o, orow + n0 + 8 * j + 2 * t4, p.o_type, scale * co[j][2 * hh], scale * co[j][2 * hh + 1]);
      }
    }

    // H. S^T = exp(gamma_C) S^T + Vd^T K (registers), and its bf16 copy.
    {
      const float ec = exp2f(sm.gam[C - 1]);
#pragma unroll
      for (int j = 0; j < NTS; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) st[j][e] *= ec;
      warp_mma<NTS, C, true, true>(st, sm.vd + ms, LDB, sm.k + ns, LDD, lane);
#pragma unroll
      for (int j = 0; j < NTS; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
          *reinterpret_cast<u32*>(&sm.s[v * LDD + kk]) = pack_bf16(st[j][2 * hh], st[j][2 * hh + 1]);
        }
    }
  }

  if ((p.flags & kFlagWriteFinal) && srow >= 0) {
    const i64 base = srow * p.state_row_stride + (h * D + v0) * D;
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        store_any2(p.final_state, base + static_cast<i64>(v) * D + kk, p.state_type, st[j][2 * hh],
                   st[j][2 * hh + 1]);
      }
  }
}
