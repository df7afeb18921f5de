// linear_attention/kernels/gdn_fused.cu — the fused Gated DeltaNet prefill on
// wgmma (the engine's PIPELINE_ARCH knob 2; sm_90a, D = 128 only).
//
// gdn_prefill_fused: one CTA of two warpgroups per (output head, sequence); the
//   CTA walks the sequence's 64-token chunks in order with nothing in global
//   memory between them (no workspace). Warpgroup w owns value columns
//   [64 w, 64 w + 64): its slice of the fp32 state S^T [64 x 128] lives in its
//   wgmma accumulators for the whole sequence. Per chunk (gdn_two_pass.cu names
//   the same pieces):
//     rows     q, k l2-normalised; Qn, Kn; Qe = diag(e^gamma) Q;
//              Kd = diag(e^(gamma_C - gamma)) K; KB = diag(beta e^gamma) K; VB = diag(beta) V
//     wg 0     L = strict_tril(diag(beta) (Kn Kn^T . Gamma))      (wgmma, fp32 to shared)
//     wg 1     P = tril_incl(Qn Kn^T . Gamma)                    (wgmma, bf16 to shared)
//     all      T = (I + L)^-1 (fp32, gdn_common.cuh), bf16 copy
//     wg w     Wn[:, w] = -T KB[:, w] (to shared: both halves are every warpgroup's A);
//              U[:, w] = T VB[:, w] (registers)
//     wg w     Vn = U + Wn S_w;  O = scale (Qe S_w + P Vn);  S_w^T = e^gamma_C S_w^T + Vn^T Kd
//   Every product is a wgmma from 128B-swizzled shared tiles (the canonical
//   K-major / MN-major layouts gemm_v2 documents); the transposes Vn^T and
//   the [k][n] operands KB, VB, Kd, Vn use wgmma's transpose bits, never a copy.
//   The next chunk's q, k, v rows and raw gate / beta are loaded into
//   registers while this chunk computes.
#include "gemm/kernels/gemm_sm90.cuh"
#include "gemm/kernels/gemm_wgmma.cuh"
#include "linear_attention/kernels/gdn_common.cuh"

// Written for D = 128 (the engine requests no other specialisation); any
// other GDN_D compiles to an empty translation unit.
#if GDN_D == 128
namespace opgraph_gdn {

using opgraph_gemm::desc;
using opgraph_gemm::fence_async_shared;
using opgraph_gemm::wgmma_commit;
using opgraph_gemm::wgmma_fence;
using opgraph_gemm::wgmma_wait;
template <int N>
using Mma = opgraph_gemm::Wgmma<N, 0, 0, 0>;  // A K-major, B K-major
template <int N>
using MmaBt = opgraph_gemm::Wgmma<N, 0, 0, 1>;  // A K-major, B MN-major
template <int N>
using MmaAtBt = opgraph_gemm::Wgmma<N, 0, 1, 1>;  // A MN-major, B MN-major

// Byte offsets of the shared tiles from a 1024-aligned base (gdn_params.cuh:
// gdn_fused_smem_bytes). [R][128] bf16 tiles are two panels of [R][64] (R x 128
// bytes each); [R][64] tiles one panel.
constexpr u32 kQn = 0;            // Qn [64][128]; Wn once L and P are formed
constexpr u32 kKn = 16384;        // Kn [64][128]; Vn [64 c][128 v] once L and P are formed
constexpr u32 kQe = 32768;        // Qe [64][128]
constexpr u32 kKd = 49152;        // Kd [64][128]
constexpr u32 kKB = 65536;        // KB [64][128]
constexpr u32 kVB = 81920;        // VB [64][128]
constexpr u32 kT = 98304;         // T [64][64]
constexpr u32 kP = 106496;        // P [64][64]
constexpr u32 kS = 114688;        // S^T [128 v][128 k] (two panels of 16384 bytes)
constexpr u32 kLf = 147456;       // L fp32 [64][LDF]
constexpr u32 kTf = kLf + 4 * C * LDF;  // T fp32 [64][LDF]
constexpr u32 kGam = kTf + 4 * C * LDF;
constexpr u32 kBet = kGam + 4 * C;
constexpr u32 kFusedBytes = kBet + 4 * C;
static_assert(kFusedBytes + 1024 == gdn_fused_smem_bytes(D), "gdn_fused_smem_bytes disagrees with the tile map");
constexpr u32 kPanel64 = 64 * 128;    // a panel of a 64-row tile
constexpr u32 kPanelS = 128 * 128;    // a panel of S^T

// Byte offset of element (r, c) in a 128B-swizzled tile whose panels are `panel` bytes.
__device__ __forceinline__ u32 swz(int r, int c, u32 panel) {
  return static_cast<u32>(c >> 6) * panel + static_cast<u32>(r) * 128u +
         ((static_cast<u32>((c & 63) >> 3) ^ static_cast<u32>(r & 7)) << 4) + (static_cast<u32>(c & 7) << 1);
}
// Descriptors: K-major (k16 step kk of a tile with `panel`-byte panels of 64
// K columns) and MN-major (k16 step kk: 16 rows of 128 bytes on; 64-wide MN
// blocks one 64-row panel apart).
__device__ __forceinline__ unsigned long long kdesc(u32 tile, int kk, u32 panel) {
  return desc(tile + static_cast<u32>(kk >> 2) * panel + static_cast<u32>(kk & 3) * 32u, 16, 1024);
}
__device__ __forceinline__ unsigned long long mdesc(u32 tile, int kk) {
  return desc(tile + static_cast<u32>(kk) * 2048u, kPanel64, 1024);
}

template <int N>
__device__ __forceinline__ void pin(float* acc) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}
// The 128 threads of warpgroup w (barrier 1 + w).
__device__ __forceinline__ void wg_sync(int w) { asm volatile("bar.sync %0, 128;\n" ::"r"(1 + w) : "memory"); }

}  // namespace opgraph_gdn

using namespace opgraph_gdn;

extern "C" __global__ void __launch_bounds__(kThreads, 1) gdn_prefill_fused(const GdnParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  unsigned char* base = reinterpret_cast<unsigned char*>((reinterpret_cast<unsigned long long>(smem_raw) + 1023) &
                                                         ~1023ull);
  const u32 sb = static_cast<u32>(__cvta_generic_to_shared(base));
  float* const lf = reinterpret_cast<float*>(base + kLf);
  float* const tf = reinterpret_cast<float*>(base + kTf);
  float* const gam = reinterpret_cast<float*>(base + kGam);
  float* const bet = reinterpret_cast<float*>(base + kBet);
  auto st32 = [&](u32 off, u32 w) { *reinterpret_cast<u32*>(base + off) = w; };

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wg = warp >> 2, wi = warp & 3;   // warpgroup, warp within it
  const int fr = 16 * wi + (lane >> 2);      // accumulator fragment row (and + 8)
  const int fc = 2 * (lane & 3);             // fragment column within an 8-column tile
  const i64 h = blockIdx.y, seq = blockIdx.z;
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const i64 bos = cu_at(p, seq, 0), len = cu_at(p, seq + 1, bos) - bos;
  const i64 srow = state_row(p, seq);
  const float scale = static_cast<float>(p.scale);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  const int v0 = 64 * wg;  // this warpgroup's value columns

  // The state slice S^T [v0 .. v0 + 64][0 .. 128) in m64n128 accumulator order, and its bf16 copy.
  float st[64];
  {
    const bool load = (p.flags & kFlagHasInit) && srow >= 0;
    const i64 sbase = srow * p.state_row_stride + (h * D + v0) * D;
#pragma unroll
    for (int j = 0; j < 64; j += 2) {
      const int r = fr + 8 * ((j & 3) >> 1), c = 8 * (j >> 2) + fc;
      float a = 0.f, b = 0.f;
      if (load) load_any2(p.initial_state, sbase + static_cast<i64>(r) * D + c, p.state_type, a, b);
      st[j] = a;
      st[j + 1] = b;
      st32(kS + swz(v0 + r, c, kPanelS), pack_bf16(a, b));
    }
  }

  const u16* qg = reinterpret_cast<const u16*>(p.q);
  const u16* kg = reinterpret_cast<const u16*>(p.k);
  const u16* vg = reinterpret_cast<const u16*>(p.v);
  constexpr int RPW = C / (kThreads / 32);  // rows a warp
  RowRaw rq[RPW], rk[RPW], rv[RPW];
  float g_raw = 0.f, b_raw = 0.f;
  auto prefetch = [&](i64 c) {
#pragma unroll
    for (int i = 0; i < RPW; ++i) {
      const int r = warp + (kThreads / 32) * i;
      rq[i] = rk[i] = rv[i] = 0;
      if (c + r < len) {
        const i64 tok = bos + c + r;
        rq[i] = load_row_raw(qg + tok * p.q_ts + hq * p.q_hs + lane * EL);
        rk[i] = load_row_raw(kg + tok * p.k_ts + hk * p.k_hs + lane * EL);
        rv[i] = load_row_raw(vg + tok * p.v_ts + hv * p.v_hs + lane * EL);
      }
    }
    if (tid < C && c + tid < len) {
      const i64 off = (bos + c + tid) * p.ho + h;
      g_raw = load_any(p.g, off, p.g_type);
      b_raw = load_any(p.beta, off, p.beta_type);
    }
  };
  if (len > 0) prefetch(0);

  for (i64 c0 = 0; c0 < len; c0 += C) {
    const int n = static_cast<int>(len - c0 < C ? len - c0 : C);
    // Gate and beta of the chunk, then its inclusive cumsum (log2 units). The
    // barrier also ends the previous chunk's reads of every tile.
    if (tid < C) {
      float gl = 0.f, b = 0.f;
      if (tid < n) gate_beta_of(p, g_raw, b_raw, h, gl, b);
      gam[tid] = gl;
      bet[tid] = b;
    }
    __syncthreads();
    if (warp == 0) chunk_gate_cumsum(gam, lane);
    __syncthreads();

    // The rows: Qn, Kn, Qe, Kd, KB, VB (a warp's rows, a lane's EL columns).
    const float gc = gam[C - 1];
#pragma unroll
    for (int i = 0; i < RPW; ++i) {
      const int r = warp + (kThreads / 32) * i;
      float xq[EL], xk[EL], xv[EL];
      unpack_row(rq[i], xq);
      unpack_row(rk[i], xk);
      unpack_row(rv[i], xv);
      if (r < n && l2) l2norm_rows(xq, xk);
      const float eg = exp2f(gam[r]), br = bet[r], dk = exp2f(gc - gam[r]);
#pragma unroll
      for (int e = 0; e < EL; e += 2) {
        const u32 o = swz(r, lane * EL + e, kPanel64);
        st32(kQn + o, pack_bf16(xq[e], xq[e + 1]));
        st32(kKn + o, pack_bf16(xk[e], xk[e + 1]));
        st32(kQe + o, pack_bf16(eg * xq[e], eg * xq[e + 1]));
        st32(kKd + o, pack_bf16(dk * xk[e], dk * xk[e + 1]));
        st32(kKB + o, pack_bf16(br * eg * xk[e], br * eg * xk[e + 1]));
        st32(kVB + o, pack_bf16(br * xv[e], br * xv[e + 1]));
      }
    }
    if (c0 + C < len) prefetch(c0 + C);  // the next chunk's loads fly over this chunk's products
    fence_async_shared();
    __syncthreads();

    // L (warpgroup 0) and P (warpgroup 1): Kn Kn^T and Qn Kn^T, m64n64k128.
    {
      float acc[32];
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        Mma<64>::mma(acc, kdesc(sb + (wg == 0 ? kKn : kQn), kk, kPanel64), kdesc(sb + kKn, kk, kPanel64), kk > 0);
      wgmma_commit();
      wgmma_wait<0>();
      pin<32>(acc);
#pragma unroll
      for (int j = 0; j < 32; j += 2) {
        const int r = fr + 8 * ((j & 3) >> 1), s0 = 8 * (j >> 2) + fc;
        const float gr = gam[r], br = bet[r];
        float x[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int s = s0 + e;
          const float dec = s <= r ? exp2f(gr - gam[s]) : 0.f;
          x[e] = wg == 0 ? (s < r ? br * acc[j + e] * dec : 0.f) : acc[j + e] * dec;
        }
        if (wg == 0) {
          lf[r * LDF + s0] = x[0];
          lf[r * LDF + s0 + 1] = x[1];
        } else {
          st32(kP + swz(r, s0, kPanel64), pack_bf16(x[0], x[1]));
        }
      }
    }
    __syncthreads();

    // T = (I + L)^-1, fp32, then its bf16 copy (zero above the diagonal blocks).
    triangular_inverse_f32(lf, tf, tid);
    for (int i2 = tid; i2 < C * C / 2; i2 += kThreads) {
      const int r = (2 * i2) / C, s = (2 * i2) % C;
      const bool in = (r >> 4) >= (s >> 4);
      st32(kT + swz(r, s, kPanel64), pack_bf16(in ? tf[r * LDF + s] : 0.f, in ? tf[r * LDF + s + 1] : 0.f));
    }
    fence_async_shared();
    __syncthreads();

    // Wn[:, v0 ..] = -T KB[:, v0 ..] (to shared, over Qn) and U = T VB[:, v0 ..] (kept): m64n64k64.
    float u[32];
    {
      float w[32];
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < C / 16; ++kk) {
        MmaBt<64>::mma(w, kdesc(sb + kT, kk, kPanel64), mdesc(sb + kKB + wg * kPanel64, kk), kk > 0);
        MmaBt<64>::mma(u, kdesc(sb + kT, kk, kPanel64), mdesc(sb + kVB + wg * kPanel64, kk), kk > 0);
      }
      wgmma_commit();
      wgmma_wait<0>();
      pin<32>(w);
      pin<32>(u);
#pragma unroll
      for (int j = 0; j < 32; j += 2) {
        const int r = fr + 8 * ((j & 3) >> 1), cc = v0 + 8 * (j >> 2) + fc;
        st32(kQn + swz(r, cc, kPanel64), pack_bf16(-w[j], -w[j + 1]));
      }
    }
    fence_async_shared();
    __syncthreads();  // Wn complete (both halves)

    // Vn = U + Wn S_w and o = Qe S_w: m64n64k128 against this warpgroup's S^T rows.
    float o[32];
    {
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        const unsigned long long ds = kdesc(sb + kS + v0 * 128, kk, kPanelS);
        Mma<64>::mma(u, kdesc(sb + kQn, kk, kPanel64), ds, 1);
        Mma<64>::mma(o, kdesc(sb + kQe, kk, kPanel64), ds, kk > 0);
      }
      wgmma_commit();
      wgmma_wait<0>();
      pin<32>(u);
      pin<32>(o);
      // Vn (bf16) into this warpgroup's columns of the Vn tile (over Kn).
#pragma unroll
      for (int j = 0; j < 32; j += 2) {
        const int r = fr + 8 * ((j & 3) >> 1), cc = v0 + 8 * (j >> 2) + fc;
        st32(kKn + swz(r, cc, kPanel64), pack_bf16(u[j], u[j + 1]));
      }
    }
    fence_async_shared();
    wg_sync(wg);  // this warpgroup's Vn columns are complete; no one else reads them

    // O += P Vn (m64n64k64); S_w^T = e^gamma_C S_w^T + Vn_w^T Kd (m64n128k64).
    {
      const float ec = exp2f(gc);
#pragma unroll
      for (int j = 0; j < 64; ++j) st[j] *= ec;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < C / 16; ++kk) {
        MmaBt<64>::mma(o, kdesc(sb + kP, kk, kPanel64), mdesc(sb + kKn + wg * kPanel64, kk), 1);
        MmaAtBt<128>::mma(st, mdesc(sb + kKn + wg * kPanel64, kk), mdesc(sb + kKd, kk), 1);
      }
      wgmma_commit();
      wgmma_wait<0>();
      pin<32>(o);
      pin<64>(st);
    }
#pragma unroll
    for (int j = 0; j < 32; j += 2) {
      const int r = fr + 8 * ((j & 3) >> 1), cc = v0 + 8 * (j >> 2) + fc;
      if (r < n) store_any2(p.o, ((bos + c0 + r) * p.ho + h) * D + cc, p.o_type, scale * o[j], scale * o[j + 1]);
    }
    // The state's bf16 copy (this warpgroup's rows: only it reads them).
#pragma unroll
    for (int j = 0; j < 64; j += 2) {
      const int r = fr + 8 * ((j & 3) >> 1), c = 8 * (j >> 2) + fc;
      st32(kS + swz(v0 + r, c, kPanelS), pack_bf16(st[j], st[j + 1]));
    }
    fence_async_shared();
  }

  if ((p.flags & kFlagWriteFinal) && srow >= 0) {
    const i64 sbase = srow * p.state_row_stride + (h * D + v0) * D;
#pragma unroll
    for (int j = 0; j < 64; j += 2) {
      const int r = fr + 8 * ((j & 3) >> 1), c = 8 * (j >> 2) + fc;
      store_any2(p.final_state, sbase + static_cast<i64>(r) * D + c, p.state_type, st[j], st[j + 1]);
    }
  }
}
#endif  // GDN_D == 128
