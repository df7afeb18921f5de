// linear_attention/kernels/gdn_fused.cu — the fused Gated DeltaNet prefill on
// wgmma (the engine's PIPELINE_ARCH knobs 2 and 3; sm_90a, D = 128 only).
//
// Two forms of every fused entry, the same arithmetic: the eight-warp form (fused_pass, below;
// PIPELINE_ARCH 2) and the warp-specialised one (GDN_FUSED_WS = 1, ws::ws_pass: two state
// warpgroups, an auxiliary one a chunk ahead; PIPELINE_ARCH 3, ranked first: 1.70 ms against
// 1.85 at 16/64 heads 4 x 8192 on the H200, bench/results/2026-12-03-gdn-fused-ws-h200.txt).
//
// gdn_prefill_fused (eight-warp form): one CTA of two warpgroups per (output head, sequence); the
//   CTA walks the sequence's 64-token chunks in order with nothing in global
//   memory between them (no workspace). Warpgroup w owns value columns
//   [64 w, 64 w + 64): its slice of the fp32 state S^T [64 x 128] lives in its
//   wgmma accumulators for the whole sequence. Per chunk (gdn_two_pass.cu names
//   the same pieces):
//     rows     q, k, v as loaded (raw bf16 tiles; the l2 norms' inverses iq, ik a token)
//     wg 0     L = strict_tril(diag(beta ik) (K K^T . Gamma) diag(ik))   (wgmma, fp32 to shared)
//     wg 1     P = tril_incl(diag(iq) (Q K^T . Gamma) diag(ik))          (wgmma, bf16 to shared)
//     all      T = (I + L)^-1 (gdn_common.cuh: fp32 diagonal blocks, the off-diagonal ones
//              by one-pass TF32 merges on tensor cores), bf16 copies T_k = T diag(beta e^gamma ik),
//              T_v = T diag(beta)
//     wg w     Wn[:, w] = -T_k K[:, w] (to shared: both halves are every warpgroup's B)
//     wg w     the state side transposed, S_w^T and Vn^T as register A operands:
//              Vn^T = V^T T_v^T + S_w^T Wn^T;  O^T = scale (S_w^T Q^T diag(iq e^gamma) + Vn^T P^T);
//              S_w^T = e^gamma_C S_w^T + (Vn^T diag(ik e^(gamma_C - gamma))) K
//   Every row scale (the l2 norms, the gates) lives in a product's other factor or its
//   epilogue, so q, k and v go from global to shared by cp.async untouched (fp16 inputs
//   are turned to bf16 in place by the thread that loaded them), two stages: the next
//   chunk's rows and raw gate / beta load while this chunk computes.
//   Every product is a wgmma from 128B-swizzled shared tiles (the canonical
//   K-major / MN-major layouts gemm_v2 documents); the transposes Vn^T and
//   the [k][n] operands K, V use wgmma's transpose bits, never a copy.
#include "gemm/kernels/gemm_sm90.cuh"
#include "gemm/kernels/gemm_wgmma.cuh"
#include "linear_attention/kernels/gdn_common.cuh"
#include "linear_attention/kernels/gdn_wgmma_rs.cuh"

// Written for D = 128 (the engine requests no other specialisation); any
// other GDN_D compiles to an empty translation unit.
#if GDN_D == 128
#ifndef GDN_FUSED_INV_COL
#define GDN_FUSED_INV_COL 0
#endif
#ifndef GDN_CKPT
// 1: the build that writes state_checkpoints (p.ckpt; the engine asks for it only where they are bound, so the
// other builds keep their registers: the checkpoint bookkeeping spills in the warp-specialised span scan).
#define GDN_CKPT 0
#endif
#ifndef GDN_FUSED_WS
#define GDN_FUSED_WS 0
#endif
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
template <int N>
using MmaAtB = opgraph_gemm::Wgmma<N, 0, 1, 0>;   // A MN-major, B K-major
template <int N, int TB>
using RS = WgmmaRS<N, TB>;                         // A from registers

// Byte offsets of the shared tiles from a 1024-aligned base (gdn_params.cuh:
// gdn_fused_smem_bytes). [R][128] bf16 tiles are two panels of [R][64] (R x 128
// bytes each); [R][64] tiles one panel.
// The row scales live in the products' other factors (the header), so the rows are
// stored as loaded: q, k, v in two stages (chunk j in stage j % 2).
constexpr u32 kQ = 0;             // q [64][128] (stage 0; stage 1 kStage on)
constexpr u32 kK = 16384;         // k [64][128]
constexpr u32 kV = 32768;         // v [64][128]; O staged in it once U is formed
constexpr u32 kStage = 49152;
constexpr u32 kWn = 98304;        // Wn [64][128]
constexpr u32 kTv = 114688;       // T_v [64][64]
constexpr u32 kT = 122880;        // T_k [64][64]
constexpr u32 kP = 131072;        // P [64][64]
constexpr u32 kLf = 139264;       // L fp32 [64][LDF]
constexpr u32 kTf = kLf + 4 * C * LDF;  // T fp32 [64][LDF]
constexpr u32 kGam = kTf + 4 * C * LDF;
constexpr u32 kBet = kGam + 4 * C;
constexpr u32 kBe = kBet + 4 * C;   // beta e^gamma ik a token (T_k's column scale)
constexpr u32 kEg = kBe + 4 * C;    // scale e^gamma iq a token (O^T's column scale)
constexpr u32 kIq = kEg + 4 * C;    // iq a token (P's rows)
constexpr u32 kIk = kIq + 4 * C;    // ik a token (L's rows and columns, P's columns)
constexpr u32 kKf = kIk + 4 * C;    // ik e^(gamma_C - gamma) a token (Vn^T's columns in the state update)
constexpr u32 kFusedBytes = kKf + 4 * C;
// (A warp-specialised build does not build this form, and its LDF may be GDN_WS3_LD: the map is checked in its own build.)
static_assert(GDN_FUSED_WS || kFusedBytes + 1024 == gdn_fused_smem_bytes(D), "gdn_fused_smem_bytes disagrees with the tile map");
constexpr u32 kPanel64 = 64 * 128;    // a panel of a 64-row tile

// Descriptors: K-major (k16 step kk of a tile with `panel`-byte panels of 64
// K columns) and MN-major (k16 step kk: 16 rows of 128 bytes on; 64-wide MN
// blocks one 64-row panel apart).
__device__ __forceinline__ unsigned long long kdesc(u32 tile, int kk, u32 panel) {
  return desc(tile + static_cast<u32>(kk >> 2) * panel + static_cast<u32>(kk & 3) * 32u, 16, 1024);
}
__device__ __forceinline__ unsigned long long mdesc(u32 tile, int kk) {
  return desc(tile + static_cast<u32>(kk) * 2048u, kPanel64, 1024);
}

// Shared-memory stores and loads by 32-bit shared address (st.shared / ld.shared:
// no generic-address resolution).
__device__ __forceinline__ void sts32(u32 a, u32 w) { asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(a), "r"(w) : "memory"); }
__device__ __forceinline__ void sts64(u32 a, u32 lo, u32 hi) {
  asm volatile("st.shared.v2.b32 [%0], {%1, %2};\n" ::"r"(a), "r"(lo), "r"(hi) : "memory");
}
__device__ __forceinline__ void sts128(u32 a, u32 x, u32 y, u32 z, u32 w) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(x), "r"(y), "r"(z), "r"(w) : "memory");
}
// Element e (0..7) of eight io values held as 16 bytes, as a float.
__device__ __forceinline__ float io_of(const uint4& w, int e) {
  const u32 word = e < 2 ? w.x : e < 4 ? w.y : e < 6 ? w.z : w.w;
  return io_to_f32(static_cast<u16>(word >> (16 * (e & 1))));
}
// The XOR term of swz for row r and the 16-byte chunk holding column c (c % 64 / 8).
__device__ __forceinline__ u32 swz_chunk(int r, int c) {
  return (static_cast<u32>((c & 63) >> 3) ^ static_cast<u32>(r & 7)) << 4;
}

template <int N>
__device__ __forceinline__ void pin(float* acc) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}
// Four 8 x 8 b16 matrices to shared memory, transposed (stmatrix .trans): lane l
// names row l % 8 of matrix l / 8; register i holds this lane's pair of matrix i
// (row l / 4, columns 2 (l % 4), + 1: an mma accumulator fragment packed to 16 bits).
__device__ __forceinline__ void stmatrix_x4_trans(u32 a, u32 r0, u32 r1, u32 r2, u32 r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}
// The same, not transposed: lane l's register i is its pair of matrix i's row l / 4, as stored.
__device__ __forceinline__ void stmatrix_x4(u32 a, u32 r0, u32 r1, u32 r2, u32 r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(r0), "r"(r1), "r"(r2),
               "r"(r3)
               : "memory");
}
__device__ __forceinline__ uint4 lds128(u32 a) {
  uint4 w;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n" : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w) : "r"(a) : "memory");
  return w;
}
__device__ __forceinline__ float4 lds128f(u32 a) {
  float4 w;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n" : "=f"(w.x), "=f"(w.y), "=f"(w.z), "=f"(w.w) : "r"(a) : "memory");
  return w;
}
// Two values as one fp16 pair (lo in the low half).
__device__ __forceinline__ u32 pack_f16(float lo, float hi) {
  u32 w;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
  return w;
}
// 2^x flushed to zero below 2^-126 (one MUFU; the gate products are at most 1 and
// their subnormal tails are zeros at bf16 precision anyway).
__device__ __forceinline__ float ex2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// 16 bytes global -> shared (by shared address), L2 only; bytes = 0 zero-fills.
__device__ __forceinline__ void cp_async16s(u32 dst, const void* src, u32 bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}

// The 128 threads of warpgroup w (barrier 1 + w).
__device__ __forceinline__ void wg_sync(int w) { asm volatile("bar.sync %0, 128;\n" ::"r"(1 + w) : "memory"); }

// ---- pieces of a chunk both forms of the fused pass run (fused_pass below; ws_pass, GDN_FUSED_WS) ----

// The chunk's natural-log gates and betas from one warp's raw inputs (two tokens a lane, the
// chunk's n tokens; the rest 0): gam = their inclusive cumsum in log2 units, bet = beta.
__device__ __forceinline__ void chunk_gates(const GdnParams& p, const float (&g_raw)[2], const float (&b_raw)[2], int n,
                                            i64 h, int lane, float* gam, float* bet) {
  float gl[2] = {0.f, 0.f}, bb[2] = {0.f, 0.f};
#pragma unroll
  for (int e = 0; e < 2; ++e)
    if (2 * lane + e < n) gate_beta_of(p, g_raw[e], b_raw[e], h, gl[e], bb[e]);
  float sum = gl[0] + gl[1];
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const float y = __shfl_up_sync(0xffffffffu, sum, o);
    if (lane >= o) sum += y;
  }
  gam[2 * lane] = (sum - gl[1]) * kLog2e;
  gam[2 * lane + 1] = sum * kLog2e;
  bet[2 * lane] = bb[0];
  bet[2 * lane + 1] = bb[1];
}

// The raw gates and betas of tokens c0 + 2 lane, c0 + 2 lane + 1 of head h (0 past te), into the
// registers chunk_gates takes (one warp loads a chunk's a chunk ahead).
__device__ __forceinline__ void load_gates(const GdnParams& p, i64 bos, i64 c0, i64 te, i64 h, int lane,
                                           float (&g_raw)[2], float (&b_raw)[2]) {
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    g_raw[e] = b_raw[e] = 0.f;
    if (c0 + 2 * lane + e < te) {
      const i64 off = (bos + c0 + 2 * lane + e) * p.ho + h;
      g_raw[e] = load_any(p.g, off, p.g_type);
      b_raw[e] = load_any(p.beta, off, p.beta_type);
    }
  }
}
// One row quarter's pieces (byte offsets pieces[0..3] within the q, k, v tiles at sQ, sK, sV, as
// this thread loaded them): fp16 inputs turned to bf16 in place, and under l2 the inverses of the
// q and k rows' norms (sums over the row's four lanes, which call this together); 1 otherwise.
// withq: the q tile is loaded (the summary forms have none).
__device__ __forceinline__ void quarter_norms(u32 sQ, u32 sK, u32 sV, const u32 (&pieces)[4], bool withq, bool l2,
                                              float& iq, float& ik) {
  iq = ik = 1.f;
  if (!l2 && GDN_IO == 0) return;
  float sq = 0.f, sk = 0.f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int t3 = 0; t3 < 3; ++t3) {
      if (t3 == 0 && !withq) continue;
      const u32 a = (t3 == 0 ? sQ : t3 == 1 ? sK : sV) + pieces[i];
      const uint4 w = lds128(a);
      float x[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) x[e] = io_of(w, e);
      if (t3 == 0)
#pragma unroll
        for (int e = 0; e < 8; ++e) sq += x[e] * x[e];
      if (t3 == 1)
#pragma unroll
        for (int e = 0; e < 8; ++e) sk += x[e] * x[e];
      if (GDN_IO != 0)
        sts128(a, pack_bf16(x[0], x[1]), pack_bf16(x[2], x[3]), pack_bf16(x[4], x[5]), pack_bf16(x[6], x[7]));
    }
  }
  if (l2) {
    sq += __shfl_xor_sync(0xffffffffu, sq, 1);
    sq += __shfl_xor_sync(0xffffffffu, sq, 2);
    sk += __shfl_xor_sync(0xffffffffu, sk, 1);
    sk += __shfl_xor_sync(0xffffffffu, sk, 2);
    iq = rsqrtf(sq + 1e-6f);
    ik = rsqrtf(sk + 1e-6f);
  }
}

// T's bf16 copies for task q (row q / 4, columns 16 (q % 4) .. + 16: one 16 x 16 block column,
// all in T's lower blocks or all above them, where it writes zeros): T_k = T diag(be) to the tile
// at tk, T_v = T diag(beta) to the tile at tv (two 16-byte swizzled chunks each); be and beta a
// token at be_at, bet_at (shared addresses). kTk false: T_v alone (GDN_WS_KE has no T_k). With 16-byte aligned
// rows (LDF % 4 == 0) T is read a float4 at a time: H200, R3's T_v copy, 0.979-0.990x, outputs bitwise equal
// (bench/results/2026-12-04-gdn-ws3-trials-h200.txt).
template <bool kTk = true>
__device__ __forceinline__ void t_copy(int q, const float* tf, u32 be_at, u32 bet_at, u32 tk, u32 tv) {
  const int r = q >> 2, g = q & 3, s = 16 * g;
  u32 wk[8], wv[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) wk[i] = wv[i] = 0u;
  if (g <= (r >> 4)) {
#pragma unroll
    for (int q4 = 0; q4 < 4; ++q4) {
      const float4 b4 = kTk ? lds128f(be_at + 4u * static_cast<u32>(s + 4 * q4)) : float4{0.f, 0.f, 0.f, 0.f};
      const float4 v4 = lds128f(bet_at + 4u * static_cast<u32>(s + 4 * q4));
      const float* tr = tf + r * LDF + s + 4 * q4;
      float t0, t1, t2, t3;
      if constexpr (LDF % 4 == 0) {  // rows 16-byte aligned (the R3 build's LDF 68): T four floats a load
        const float4 t4 = *reinterpret_cast<const float4*>(tr);
        t0 = t4.x, t1 = t4.y, t2 = t4.z, t3 = t4.w;
      } else {
        t0 = tr[0], t1 = tr[1], t2 = tr[2], t3 = tr[3];
      }
      wk[2 * q4] = pack_bf16(t0 * b4.x, t1 * b4.y);
      wk[2 * q4 + 1] = pack_bf16(t2 * b4.z, t3 * b4.w);
      wv[2 * q4] = pack_bf16(t0 * v4.x, t1 * v4.y);
      wv[2 * q4 + 1] = pack_bf16(t2 * v4.z, t3 * v4.w);
    }
  }
  const u32 o0 = static_cast<u32>(r) * 128u + swz_chunk(r, s), o1 = static_cast<u32>(r) * 128u + swz_chunk(r, s + 8);
  if (kTk) {
    sts128(tk + o0, wk[0], wk[1], wk[2], wk[3]);
    sts128(tk + o1, wk[4], wk[5], wk[6], wk[7]);
  }
  sts128(tv + o0, wv[0], wv[1], wv[2], wv[3]);
  sts128(tv + o1, wv[4], wv[5], wv[6], wv[7]);
}

// The state side of a chunk for one warpgroup (rows v of its slice, columns c of the chunk):
//   Vn^T = U^T + S^T Wn^T        U^T = V^T T_v^T (A = V's panel MN-major, B = T_v K-major)
//   O^T  = diag' (S^T Q^T) + Vn^T P^T      (diag': columns c scaled by eg_c = scale iq_c e^gamma_c)
//   S^T  = ec S^T + (Vn^T diag(kf)) K      (ec = e^gamma_C, kf_c = ik_c e^(gamma_C - gamma_c))
// S^T and Vn^T are register A operands (packed to bf16); Wn, Q, P are K-major B operands in
// their natural [c][k] layouts, K an N-major one. kOut: O is formed (else o is untouched);
// mrows: the transition's rows (no U).
// Tick: a measuring hook (GDN_WS_CLOCK: tick(i) adds the span since the last tick to phase i).
struct NoTick {
  __device__ __forceinline__ void operator()(int) const {}
};
// The rest of a chunk's state side once Vn^T is in vt (state_chunk; ws::state_chunk_x): O^T's
// column scale, O^T += Vn^T P^T, S^T = ec S^T + (Vn^T diag(kf)) K.
template <bool kOut, class Tick>
__device__ __forceinline__ void state_tail(float (&st)[64], float (&o)[32], const float (&vt)[32], u32 sP, u32 sK,
                                           const float* kf_tok, const float* eg_tok, float ec, int fc, Tick tick) {
  // Vn^T as bf16 A fragments (k16 steps over the chunk's 64 columns c): as it is (va, for
  // P) and with its columns scaled by kf (vk, for the state update). vt[4 t + 2 hh + e]
  // is column 8 t + fc + e.
  u32 va[4][4], vk[4][4];
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int j = 8 * kk + 2 * q, c = 8 * (j >> 2) + fc;
      const float2 f = *reinterpret_cast<const float2*>(kf_tok + c);
      va[kk][q] = pack_bf16(vt[j], vt[j + 1]);
      vk[kk][q] = pack_bf16(vt[j] * f.x, vt[j + 1] * f.y);
    }
  if (kOut) {  // O^T columns c scaled by eg_c: this thread's columns 8 t + fc (+ 1)
#pragma unroll
    for (int t = 0; t < 8; ++t) {
      const float e0 = eg_tok[8 * t + fc], e1 = eg_tok[8 * t + fc + 1];
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        o[4 * t + 2 * hh] *= e0;
        o[4 * t + 2 * hh + 1] *= e1;
      }
    }
  }
  {
#pragma unroll
    for (int j = 0; j < 64; ++j) st[j] *= ec;
    tick(6);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < C / 16; ++kk) {
      if (kOut) RS<64, 0>::mma(o, va[kk], kdesc(sP, kk, kPanel64), 1);
      RS<128, 1>::mma(st, vk[kk], mdesc(sK, kk), 1);
    }
    wgmma_commit();
    wgmma_wait<0>();
    pin<32>(o);
    pin<64>(st);
  }
  tick(7);
}
template <bool kOut, class Tick = NoTick>
__device__ __forceinline__ void state_chunk(float (&st)[64], float (&o)[32], bool mrows, u32 sVp, u32 sTv, u32 sWn,
                                            u32 sQ, u32 sP, u32 sK, const float* kf_tok, const float* eg_tok, float ec,
                                            int fc, Tick tick = {}) {
  u32 sa[8][4];  // S^T as bf16 A fragments, k16 step kk: columns 16 kk .. 16 kk + 15
#pragma unroll
  for (int kk = 0; kk < 8; ++kk)
#pragma unroll
    for (int q = 0; q < 4; ++q) sa[kk][q] = pack_bf16(st[8 * kk + 2 * q], st[8 * kk + 2 * q + 1]);
  tick(4);
  float vt[32];
  {
    wgmma_fence();
    if (!mrows) {
#pragma unroll
      for (int kk = 0; kk < C / 16; ++kk)  // U^T (the transition's rows carry none)
        MmaAtB<64>::mma(vt, mdesc(sVp, kk), kdesc(sTv, kk, kPanel64), kk > 0);
    }
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      RS<64, 0>::mma(vt, sa[kk], kdesc(sWn, kk, kPanel64), mrows ? kk > 0 : 1);
      if (kOut) RS<64, 0>::mma(o, sa[kk], kdesc(sQ, kk, kPanel64), kk > 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
    pin<32>(vt);
    pin<32>(o);
  }
  tick(5);
  state_tail<kOut>(st, o, vt, sP, sK, kf_tok, eg_tok, ec, fc, tick);
}

// The chunk's O (n tokens from token bos + c0; value columns v0 .. v0 + 64 of head h) from this
// warpgroup's O^T fragments. 16-bit O, 16-byte aligned: the fragments packed and stored
// transposed (stmatrix) into the warpgroup's panel `stage` (a panel no one else reads, dead
// once U^T is formed) as O[c][v0 .. v0 + 64), 128-byte rows, 16-byte chunks swizzled by c % 8;
// then 16-byte stores, coalesced by row. fp32 (or unaligned) O: element by element.
__device__ __forceinline__ void store_o(const GdnParams& p, const float (&o)[32], u32 stage, int wg, int wi, int lane,
                                        int tid, int fr, int fc, int n, i64 bos, i64 c0, i64 h, int v0) {
  if (p.o_type != kTypeF32 && (p.o & 15u) == 0) {
    const bool bf = p.o_type == kTypeBf16;
    const int mi = lane >> 3, mk = lane & 7;
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      u32 w4[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {  // matrix i: the 8 x 8 block (t = 2 m + i / 2, hh = i % 2)
        const int j = 4 * (2 * m + (i >> 1)) + 2 * (i & 1);
        w4[i] = bf ? pack_bf16(o[j], o[j + 1]) : pack_f16(o[j], o[j + 1]);
      }
      const int c = 8 * (2 * m + (mi >> 1)) + mk, vch = 2 * wi + (mi & 1);
      stmatrix_x4_trans(stage + static_cast<u32>(c) * 128u + ((static_cast<u32>(vch) ^ static_cast<u32>(c & 7)) << 4),
                        w4[0], w4[1], w4[2], w4[3]);
    }
    wg_sync(wg);
    const int tw = tid & 127;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int q = tw + 128 * k, c = q >> 3, ch = q & 7;
      if (c < n) {
        const uint4 w = lds128(stage + static_cast<u32>(c) * 128u + ((static_cast<u32>(ch) ^ static_cast<u32>(c & 7)) << 4));
        *reinterpret_cast<uint4*>(reinterpret_cast<u16*>(p.o) + (bos + c0 + c) * p.ho * D + h * D + v0 + 8 * ch) = w;
      }
    }
  } else {
    // O^T element (row v0 + fr (+ 8), column c = 8 t + fc (+ 1)) is O[token c][h][v].
    const i64 orow = (bos + c0) * p.ho * D + h * D + v0 + fr;  // token 0 of the chunk, value v0 + fr
    const i64 tok_stride = p.ho * D;
#pragma unroll
    for (int t = 0; t < 8; ++t)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int c = 8 * t + fc + e;
        if (c < n) {
          const i64 at = orow + c * tok_stride;
          store_any(p.o, at, p.o_type, o[4 * t + e]);
          store_any(p.o, at + 8, p.o_type, o[4 * t + 2 + e]);
        }
      }
  }
}

}  // namespace opgraph_gdn

// What a CTA of the fused pass covers and the state slices it starts from and ends with: pass_range,
// pass_state_in, pass_state_out, store_checkpoint.
#include "linear_attention/kernels/gdn_fused_span_io.cuh"

using namespace opgraph_gdn;

// The fused pass in two forms (PH):
//  0  gdn_prefill_fused: O and final_state of the gdn forward (grid (1, HO, N)).
//  2  gdn_span_summary_fused, 3 gdn_span_scan_fused: a chain split's span summaries
//     (H, M rows to the span blocks; the last span's CTAs exit) and span scans (from the
//     fix-up's seed; O, and final_state from the last span); z = N x n_spans.
//  1  gdn_summary_fused: the gdn_summary op (grid (2, HO, N)): CTA x = 0 runs the
//     value rows from a zero seed, whose end state is H ([N, HO, V, K], written
//     through p.o / p.o_type); x = 1 runs rows of the transition from the
//     identity with U = 0 (the update X <- X (e^gC I + Wn^T Kd), rows
//     independent), whose end is M^T ([N, HO, K, K], through p.final_state /
//     p.state_type), the reference's stored transpose. No q, no O; no pools.
template <int PH>
__device__ __forceinline__ void fused_pass(const GdnParams& p, unsigned char* smem_raw) {
  // The 1024-aligned base by pointer arithmetic on the shared array (the
  // compiler keeps these pointers in the shared window: ld/st.shared).
  const u32 raw = static_cast<u32>(__cvta_generic_to_shared(smem_raw));
  unsigned char* base = smem_raw + ((1024u - (raw & 1023u)) & 1023u);
  const u32 sb = raw + ((1024u - (raw & 1023u)) & 1023u);
  float* const lf = reinterpret_cast<float*>(base + kLf);
  float* const tf = reinterpret_cast<float*>(base + kTf);
  float* const gam = reinterpret_cast<float*>(base + kGam);
  float* const bet = reinterpret_cast<float*>(base + kBet);
  float* const be_tok = reinterpret_cast<float*>(base + kBe);
  float* const eg_tok = reinterpret_cast<float*>(base + kEg);
  float* const iq_tok = reinterpret_cast<float*>(base + kIq);
  float* const ik_tok = reinterpret_cast<float*>(base + kIk);
  float* const kf_tok = reinterpret_cast<float*>(base + kKf);

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wg = warp >> 2, wi = warp & 3;   // warpgroup, warp within it
  const int fr = 16 * wi + (lane >> 2);      // accumulator fragment row (and + 8)
  const int fc = 2 * (lane & 3);             // fragment column within an 8-column tile
  // Byte offset, within a 64-column panel, of accumulator pair j's element
  // (row fr + 8 hh, column 8 t + fc) less fr * 128 + 2 fc (fr % 8 = lane / 4).
  auto frag = [&](int j) -> u32 {
    return static_cast<u32>((j & 3) >> 1) * 1024u + ((static_cast<u32>((j >> 2) & 7) ^ static_cast<u32>(fr & 7)) << 4);
  };
  const u32 frag0 = static_cast<u32>(fr) * 128u + (static_cast<u32>(fc) << 1);
  constexpr bool kOut = PH == 0 || PH == 3;  // reads q, writes O
  constexpr bool kSum = PH == 1 || PH == 2;  // grid x = 2: value rows, then transition rows
  const i64 h = blockIdx.y;
  const PassRange rg = pass_range<PH>(p);
  if (!rg.run) return;
  const i64 seq = rg.seq, span = rg.span, bos = rg.bos, tb = rg.tb, te = rg.te;
  const bool last_span = rg.last_span;
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const i64 srow = kOut ? state_row(p, seq) : seq;
  const bool mrows = kSum && blockIdx.x == 1;  // rows of M^T (uniform in the CTA)
  const float scale = static_cast<float>(p.scale);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  const int v0 = 64 * wg;  // this warpgroup's value columns

  // The state slice S^T [v0 .. v0 + 64][0 .. 128) in m64n128 accumulator order: it never leaves
  // the registers (the products take it as wgmma's register A operand, packed to bf16).
  float st[64];
  pass_state_in<PH>(p, st, srow, seq, span, h, v0, fr, fc, mrows);

  const u16* qg = reinterpret_cast<const u16*>(p.q);
  const u16* kg = reinterpret_cast<const u16*>(p.k);
  const u16* vg = reinterpret_cast<const u16*>(p.v);
  // Row quarters: lane l of warp w loads one row of the chunk (below), the four 16-byte
  // pieces of q, k and v at columns 8 (l % 4) + 32 i (the row's four lanes side by side in
  // each 64-byte run: coalesced loads, to four distinct 16-byte chunks of a swizzled row),
  // and reads the same pieces back for the l2 norms (a sum over the four lanes): its own
  // cp.async data, so no barrier comes between.
  static_assert(D == 128 && kThreads == 256, "row quarters: 64 rows of 128 columns, 8 warps");
  // Row of lane group m = l / 4: 8 w + 4 (m % 2) + m / 2, so the two rows a quarter-warp
  // reaches (m = 2j, 2j + 1) differ in bit 2 and their swizzled chunks do not collide.
  const int qm = lane >> 2, qr = 8 * warp + 4 * (qm & 1) + (qm >> 1), qc = 8 * (lane & 3);
  // This thread's piece i of row qr within a tile (byte offsets, fixed for the CTA).
  u32 piece_at[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int col = qc + 32 * i;
    piece_at[i] = static_cast<u32>(col >> 6) * kPanel64 + static_cast<u32>(qr) * 128u + swz_chunk(qr, col);
  }
  // Row qr's first piece in q, k and v at the span's first chunk (chunk c: (c - tb) / C rows
  // of C further on), and at the sequence's first token (the address a zero-filled piece
  // names; none of it is read).
  const u16* const q_at = qg + (bos + tb + qr) * p.q_ts + hq * p.q_hs + qc;
  const u16* const k_at = kg + (bos + tb + qr) * p.k_ts + hk * p.k_hs + qc;
  const u16* const v_at = vg + (bos + tb + qr) * p.v_ts + hv * p.v_hs + qc;
  const u16* const q_safe = qg + bos * p.q_ts + hq * p.q_hs + qc;
  const u16* const k_safe = kg + bos * p.k_ts + hk * p.k_hs + qc;
  const u16* const v_safe = vg + bos * p.v_ts + hv * p.v_hs + qc;
  float g_raw[2] = {0.f, 0.f}, b_raw[2] = {0.f, 0.f};  // warp 0: tokens 2 lane, 2 lane + 1
  // Chunk c's rows into stage st (rows past the span zero-filled), its raw gate and beta
  // into registers.
  auto prefetch = [&](i64 c, int stg) {
    const bool in = c + qr < te;
    const i64 dc = c - tb;
    const u16* const qs = in ? q_at + dc * p.q_ts : q_safe;
    const u16* const ks = in ? k_at + dc * p.k_ts : k_safe;
    const u16* const vs = in ? v_at + dc * p.v_ts : v_safe;
    const u32 nb = in ? 16u : 0u, at = sb + static_cast<u32>(stg) * kStage;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if (kOut) cp_async16s(at + kQ + piece_at[i], qs + 32 * i, nb);
      cp_async16s(at + kK + piece_at[i], ks + 32 * i, nb);
      cp_async16s(at + kV + piece_at[i], vs + 32 * i, nb);
    }
    cp_async_commit();
    if (warp == 0) load_gates(p, bos, c, te, h, lane, g_raw, b_raw);
  };
  if (te > tb) prefetch(tb, 0);

  // state_checkpoints (the forward and the span scans' value rows): the sequence's first row.
  const bool ckpt = GDN_CKPT && kOut && p.ckpt != 0;
  const i64 ck_row0 = ckpt ? checkpoint_row0(p, seq, p.ckpt_every) : 0;
  for (i64 c0 = tb; c0 < te; c0 += C) {
    const int n = static_cast<int>(te - c0 < C ? te - c0 : C);
    const int stg = static_cast<int>(((c0 - tb) / C) & 1);
    const u32 sQ = sb + static_cast<u32>(stg) * kStage + kQ, sK = sQ - kQ + kK, sV = sQ - kQ + kV;
    // This thread's pieces of the chunk's rows have landed: fp16 inputs turned to bf16 in
    // place, the l2 norms' inverses of row qr (iq, ik: 1 without use_qk_l2norm).
    cp_async_wait_all();
    float iq, ik;
    quarter_norms(sQ, sK, sV, piece_at, kOut, l2, iq, ik);
    // Gate and beta of the chunk and the gate's inclusive cumsum (log2 units),
    // by warp 0 in registers (two tokens a lane). No one reads gam or bet after
    // the previous chunk's last barrier; this barrier also ends that chunk's
    // reads of every tile, and makes this chunk's rows visible to the tensor cores.
    if (warp == 0) chunk_gates(p, g_raw, b_raw, n, h, lane, gam, bet);
    fence_async_shared();
    __syncthreads();
    // The next chunk's rows go to the other stage (its last reader, the chunk before this
    // one, ended at the barrier above) and fly over this chunk's products.
    if (c0 + C < te) prefetch(c0 + C, stg ^ 1);

    // The token factors of row qr (one lane of its four).
    const float gc = gam[C - 1];
    if ((lane & 3) == 0) {
      const int r = qr;
      const float gr = gam[r], eg = exp2f(gr);
      iq_tok[r] = iq;
      ik_tok[r] = ik;
      be_tok[r] = bet[r] * eg * ik;
      eg_tok[r] = scale * eg * iq;  // O^T's column scale, the output scale folded in
      kf_tok[r] = ik * exp2f(gc - gr);
    }

    // L (warpgroup 0) and P (warpgroup 1): K K^T and Q K^T, m64n64k128 (the summary has
    // no P: warpgroup 1 waits); the barrier between issue and epilogue publishes the
    // token factors.
    float acc[32];
    if (kOut || wg == 0) {
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        Mma<64>::mma(acc, kdesc(wg == 0 ? sK : sQ, kk, kPanel64), kdesc(sK, kk, kPanel64), kk > 0);
      wgmma_commit();
    }
    __syncthreads();
    if (kOut || wg == 0) {
      wgmma_wait<0>();
      pin<32>(acc);
      // This thread's fragment rows fr, fr + 8 and columns 8 t + fc (+1).
      const float gr[2] = {gam[fr], gam[fr + 8]};
      if (wg == 0) {
        const float br[2] = {bet[fr] * ik_tok[fr], bet[fr + 8] * ik_tok[fr + 8]};
#pragma unroll
        for (int j = 0; j < 32; j += 2) {
          const int hh = (j & 3) >> 1, r = fr + 8 * hh, s0 = 8 * (j >> 2) + fc;
          const float x0 = s0 < r ? br[hh] * acc[j] * (ik_tok[s0] * ex2_ftz(gr[hh] - gam[s0])) : 0.f;
          const float x1 = s0 + 1 < r ? br[hh] * acc[j + 1] * (ik_tok[s0 + 1] * ex2_ftz(gr[hh] - gam[s0 + 1])) : 0.f;
          lf[r * LDF + s0] = x0;  // (LDF is odd: two 4-byte stores)
          lf[r * LDF + s0 + 1] = x1;
        }
      } else {
        const u32 prow = sb + kP + static_cast<u32>(fr) * 128u + (static_cast<u32>(fc) << 1);
        const float qs[2] = {scale * iq_tok[fr], scale * iq_tok[fr + 8]};
#pragma unroll
        for (int j = 0; j < 32; j += 2) {
          const int hh = (j & 3) >> 1, r = fr + 8 * hh, s0 = 8 * (j >> 2) + fc;
          // P carries the output scale (O^T = diag'(S^T Q^T) + Vn^T P^T, both terms scaled).
          const float x0 = s0 <= r ? qs[hh] * acc[j] * (ik_tok[s0] * ex2_ftz(gr[hh] - gam[s0])) : 0.f;
          const float x1 = s0 + 1 <= r ? qs[hh] * acc[j + 1] * (ik_tok[s0 + 1] * ex2_ftz(gr[hh] - gam[s0 + 1])) : 0.f;
          sts32(prow + static_cast<u32>(hh) * 1024u + swz_chunk(r, s0), pack_bf16(x0, x1));
        }
      }
    }
    __syncthreads();

    // T = (I + L)^-1, fp32, then its bf16 copy (zero above the diagonal blocks).
    // One TF32 pass: T is rounded to bf16 below. GDN_FUSED_INV_COL (a variant under trial, 2 %
    // faster on the H200 through bench/gdn_fused_ab.sh): the diagonal blocks by columns.
    triangular_inverse_tc<1, GDN_FUSED_INV_COL != 0>(lf, tf, tid);
    static_assert(kThreads == 4 * C, "T copies: four threads a row");
    t_copy(tid, tf, sb + kBe, sb + kBet, sb + kT, sb + kTv);
    fence_async_shared();
    __syncthreads();

    // Wn = -T_k K (m64n64k64, this warpgroup's 64 of Wn's 128 columns, to shared:
    // both halves are every warpgroup's B below).
    {
      float w[32];
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < C / 16; ++kk)
        MmaBt<64>::mma(w, kdesc(sb + kT, kk, kPanel64), mdesc(sK + wg * kPanel64, kk), kk > 0);
      wgmma_commit();
      wgmma_wait<0>();
      pin<32>(w);
      const u32 wrow = sb + kWn + static_cast<u32>(wg) * kPanel64 + frag0;
#pragma unroll
      for (int j = 0; j < 32; j += 2) sts32(wrow + frag(j), pack_bf16(-w[j], -w[j + 1]));
    }
    fence_async_shared();
    __syncthreads();  // Wn complete (both halves)

    // The state side (state_chunk).
    float o[32];
    state_chunk<kOut>(st, o, mrows, sV + static_cast<u32>(wg) * kPanel64, sb + kTv, sb + kWn, sQ, sb + kP, sK, kf_tok,
                      eg_tok, exp2f(gc), fc);
    // A full chunk ending on a multiple of the cadence (tokens from the sequence's start): its state is a checkpoint.
    if (ckpt && n == C && (c0 + C) % p.ckpt_every == 0)
      store_checkpoint(p, st, ck_row0 + (c0 + C) / p.ckpt_every - 1, h, v0, fr, fc);
    if (kOut) store_o(p, o, sV + static_cast<u32>(wg) * kPanel64, wg, wi, lane, tid, fr, fc, n, bos, c0, h, v0);
  }

  pass_state_out<PH>(p, st, srow, seq, span, h, v0, fr, fc, mrows, last_span);
}

#if GDN_FUSED_WS
#include "linear_attention/kernels/gdn_fused_ws.cuh"
#else
static_assert(kThreads == kGdnFusedThreads, "kGdnFusedThreads (the engine's launch) disagrees with the entries' block");
// The dynamic shared memory the entries need (bench/gdn_fused_ab.cu reads it from the cubin).
#define GDN_FUSED_ENTRY(name, PH)                                                      \
  extern "C" __global__ void __launch_bounds__(kThreads, 1) name(const GdnParams p) { \
    extern __shared__ __align__(16) unsigned char smem_raw[];                          \
    fused_pass<PH>(p, smem_raw);                                                       \
  }
extern "C" __device__ unsigned gdn_prefill_fused_smem_bytes = kFusedBytes + 1024;
#endif
GDN_FUSED_ENTRY(gdn_prefill_fused, 0)
GDN_FUSED_ENTRY(gdn_summary_fused, 1)
// A chain split on the fused pass (knob CHAIN_SPLIT with PIPELINE_ARCH 2): the span summaries
// (grid (2, HO, N x n_spans)), gdn_span_fixup (gdn_two_pass.cu), the span scan (grid (1, HO,
// N x n_spans)); the span blocks are the two-pass split's (gdn_common.cuh).
GDN_FUSED_ENTRY(gdn_span_summary_fused, 2)
GDN_FUSED_ENTRY(gdn_span_scan_fused, 3)
#if GDN_FUSED_WS && GDN_WS_R3 && !GDN_CKPT
// gdn_bwd's forward recompute (the backward's PIPELINE_ARCH 2 and 3; grid (1, HO, N)): the forward's chunks with
// no O, each chunk's tiles to the gdn_bwd workspace in place of gdn_bwd_prep and gdn_bwd_fwd_scan (ws3_pass, PH 4).
GDN_FUSED_ENTRY(gdn_bwd_fwd_fused, 4)
// Under a chain split (PIPELINE_ARCH 3 with CHAIN_SPLIT): the span summaries H, M to the backward's span blocks (grid
// (2, HO, N x n_spans)), then, after gdn_bwd_span_fixup's forward walk, the forward recompute of each span from its
// seed (grid (1, HO, N x n_spans)).
GDN_FUSED_ENTRY(gdn_bwd_fwd_summary_fused, 5)
GDN_FUSED_ENTRY(gdn_bwd_fwd_span_fused, 6)
// GDN_BWD_ONEPASS (gdn_bwd_params.cuh; a trial): the one-pass backward's first pass, gdn_bwd_fwd_st_fused (grid
// (1, HO, N), gdn_bwd_fwd_fused's shared memory): gdn_bwd_fwd_fused's chunk steps storing only S^T at each chunk's
// start and T (ws3_pass, PH 7) — no q rows, no P, no other tile; bench/gdn_bwd_ab.cu times it against
// gdn_bwd_fwd_fused and checks both bit for bit.
#if GDN_BWD_ONEPASS
GDN_FUSED_ENTRY(gdn_bwd_fwd_st_fused, 7)
#endif
// gdn_bwd's reverse scan on three warpgroups (the backward's PIPELINE_ARCH 3; grid (1, HO, N)): gdn_bwd_rev_ws.cuh.
#define GDN_BWD_REV_ENTRY(name, RM)                                                    \
  extern "C" __global__ void __launch_bounds__(opgraph_gdn::ws::kWsThreads, 1) name( \
      const opgraph_gdn::GdnBwdParams p) {                                           \
    extern __shared__ __align__(16) unsigned char smem_raw[];                        \
    opgraph_gdn::ws::gdn_bwd_rev_ws<RM>(p, smem_raw);                                \
  }
GDN_BWD_REV_ENTRY(gdn_bwd_rev_fused, 0)
// Under a chain split (grid (1, HO, N x n_spans)): the reverse span summaries H' (every span but the first), then,
// after gdn_bwd_span_fixup_rev's walk, the reverse scan of each span from its seed.
GDN_BWD_REV_ENTRY(gdn_bwd_rev_summary_fused, 1)
GDN_BWD_REV_ENTRY(gdn_bwd_rev_span_fused, 2)
#undef GDN_BWD_REV_ENTRY
#endif
#undef GDN_FUSED_ENTRY
#endif  // GDN_D == 128
