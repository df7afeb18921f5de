// linear_attention/kernels/gdn_fwd.cu — Gated DeltaNet forward on the GPU.
//
// Five entries, one source, specialised by two defines:
//   GDN_D   head dim, K = V = D in {64, 128}
//   GDN_IO  q/k/v element type: 0 bf16, 1 fp16
// Everything else (B, T, heads, cu_seqlens, gate/beta/state/O types, the
// attributes) is a run-time field of GdnParams (gdn_params.cuh): one kernel
// per layout class.
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
// gdn_prefill_prep + gdn_prefill_scan: the same prefill in two passes (the
//   engine's PIPELINE_ARCH knob 1): every state-free piece of every chunk at
//   once into a workspace, then a sequential pass of state products only
//   (below, at their definitions).
// gdn_span_summary + gdn_span_fixup + gdn_span_scan: the two-pass prefill's
//   sequential pass split into spans of a sequence's chunks computed in
//   parallel (chain splitting, the knob CHAIN_SPLIT), below at their
//   definitions.
// gdn_decode: the token recurrence (§1.2) for short sequences (decode and
//   speculative verify): one CTA of 4 warps per (32-row V-slice, head,
//   sequence); each warp keeps 8 state rows in registers, reads and writes
//   the state once.
// gdn_state_copy: copies the state pool from initial_state to a distinct
//   final_state buffer ahead of the launch, so rows no sequence addresses keep
//   their value (state_indices with distinct buffers).
//
// Conventions: the state tensors are V-major ([.., V, K], holding S^T).
// Output head h reads q head h / (HO / HQ), k head h / (HO / HK), v head
// h / (HO / HV). A state_indices entry outside [0, state_rows) reads a zero
// state and writes nothing (the reference refuses it; a kernel cannot).
#include "linear_attention/kernels/gdn_params.cuh"
#include "opgraph/kernel_common.cuh"

#ifndef GDN_D
#error "GDN_D (head dim) must be defined"
#endif
#ifndef GDN_IO
#error "GDN_IO (q/k/v type: 0 bf16, 1 fp16) must be defined"
#endif

namespace opgraph_gdn {

using opgraph_kernels::i64;
using opgraph_kernels::u32;
using opgraph_kernels::u64;
using u16 = unsigned short;

constexpr int D = GDN_D;
static_assert(D == 64 || D == 128, "GDN_D must be 64 or 128");
constexpr int C = 64;         // chunk (tokens)
constexpr int BV = 64;        // value columns per prefill CTA
constexpr int kThreads = 256; // 8 warps
constexpr int LDD = D + 8;    // bf16 row stride of [*][D] tiles (16-byte pad: conflict-free fragments)
constexpr int LDC = C + 8;    // bf16 row stride of [*][C] tiles
constexpr int LDB = BV + 8;   // bf16 row stride of [*][BV] tiles
constexpr int LDF = C + 1;    // fp32 row stride of [C][C] tiles
constexpr int EL = D / 32;    // elements of a D-row per lane
constexpr float kLog2e = 1.4426950408889634f;

template <bool Wide> struct opgraph_kernels_select { using type = u32; };
template <> struct opgraph_kernels_select<true> { using type = u64; };

// ---- element conversions (the compile is hermetic: no cuda_bf16.h) ----
__device__ __forceinline__ float bf16_to_f32(u16 h) { return __uint_as_float(static_cast<u32>(h) << 16); }
// Round to nearest even (the hardware conversion: one instruction; NaN stays NaN).
__device__ __forceinline__ u16 f32_to_bf16(float f) {
  u16 h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ float f16_to_f32(u16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ u16 f32_to_f16(float f) {
  u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ float io_to_f32(u16 h) { return GDN_IO == 0 ? bf16_to_f32(h) : f16_to_f32(h); }
// Two values as one bf16 pair (lo in the low half), one instruction.
__device__ __forceinline__ u32 pack_bf16(float lo, float hi) {
  u32 w;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
  return w;
}

// A run-time typed element (code kTypeBf16 / kTypeF16 / kTypeF32).
__device__ __forceinline__ float load_any(u64 base, i64 off, long long type) {
  if (type == kTypeF32) return reinterpret_cast<const float*>(base)[off];
  const u16 h = reinterpret_cast<const u16*>(base)[off];
  return type == kTypeBf16 ? bf16_to_f32(h) : f16_to_f32(h);
}
__device__ __forceinline__ void store_any(u64 base, i64 off, long long type, float x) {
  if (type == kTypeF32) {
    reinterpret_cast<float*>(base)[off] = x;
  } else {
    reinterpret_cast<u16*>(base)[off] = type == kTypeBf16 ? f32_to_bf16(x) : f32_to_f16(x);
  }
}
// Two adjacent elements (off even; 8-byte aligned for fp32).
__device__ __forceinline__ void load_any2(u64 base, i64 off, long long type, float& a, float& b) {
  if (type == kTypeF32) {
    const u64 w = *reinterpret_cast<const u64*>(reinterpret_cast<const float*>(base) + off);
    a = __uint_as_float(static_cast<u32>(w));
    b = __uint_as_float(static_cast<u32>(w >> 32));
  } else {
    const u32 w = *reinterpret_cast<const u32*>(reinterpret_cast<const u16*>(base) + off);
    const u16 lo = static_cast<u16>(w), hi = static_cast<u16>(w >> 16);
    a = type == kTypeBf16 ? bf16_to_f32(lo) : f16_to_f32(lo);
    b = type == kTypeBf16 ? bf16_to_f32(hi) : f16_to_f32(hi);
  }
}
__device__ __forceinline__ void store_any2(u64 base, i64 off, long long type, float a, float b) {
  if (type == kTypeF32) {
    const u64 w = static_cast<u64>(__float_as_uint(a)) | (static_cast<u64>(__float_as_uint(b)) << 32);
    *reinterpret_cast<u64*>(reinterpret_cast<float*>(base) + off) = w;
  } else {
    const u16 lo = type == kTypeBf16 ? f32_to_bf16(a) : f32_to_f16(a);
    const u16 hi = type == kTypeBf16 ? f32_to_bf16(b) : f32_to_f16(b);
    *reinterpret_cast<u32*>(reinterpret_cast<u16*>(base) + off) = static_cast<u32>(lo) | (static_cast<u32>(hi) << 16);
  }
}

// A lane's share of a D-row (EL consecutive io elements), raw, and as floats.
using RowRaw = typename opgraph_kernels_select<EL == 4>::type;
__device__ __forceinline__ RowRaw load_row_raw(const u16* p) { return *reinterpret_cast<const RowRaw*>(p); }
__device__ __forceinline__ void unpack_row(RowRaw w, float (&x)[EL]) {
#pragma unroll
  for (int i = 0; i < EL; ++i) x[i] = io_to_f32(static_cast<u16>(w >> (16 * i)));
}
// EL consecutive io elements of a D-row (lane's share), as floats.
__device__ __forceinline__ void load_row_share(const u16* p, float (&x)[EL]) {
  if constexpr (EL == 4) {
    const u64 w = *reinterpret_cast<const u64*>(p);
#pragma unroll
    for (int i = 0; i < 4; ++i) x[i] = io_to_f32(static_cast<u16>(w >> (16 * i)));
  } else {
    const u32 w = *reinterpret_cast<const u32*>(p);
    x[0] = io_to_f32(static_cast<u16>(w));
    x[1] = io_to_f32(static_cast<u16>(w >> 16));
  }
}

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

__device__ __forceinline__ float sigmoidf_(float x) { return 1.f / (1.f + __expf(-x)); }
__device__ __forceinline__ float softplusf_(float x) { return fmaxf(x, 0.f) + log1pf(__expf(-fabsf(x))); }

// The natural-log gate and the beta of raw inputs x (g) and b (beta), head h.
__device__ __forceinline__ void gate_beta_of(const GdnParams& p, float x, float b, i64 h, float& gl, float& beta) {
  if (p.flags & kFlagSafeGate) {
    const float alog = (p.flags & kFlagHasALog) ? load_any(p.a_log, h, p.a_log_type) : 0.f;
    const float dt = (p.flags & kFlagHasDtBias) ? load_any(p.dt_bias, h, p.dt_bias_type) : 0.f;
    gl = -expf(alog) * softplusf_(x + dt);
  } else if (p.flags & kFlagLinearGate) {
    gl = x > 0.f ? fmaxf(logf(x), -200.f) : -200.f;  // alpha < e^-200 is 0 in fp32 anyway
  } else {
    gl = x;
  }
  beta = (p.flags & kFlagBetaSigmoid) ? ((p.flags & kFlagNegEig) ? 2.f : 1.f) * sigmoidf_(b) : b;
}
// The same from token `tok`'s inputs.
__device__ __forceinline__ void gate_beta(const GdnParams& p, i64 tok, i64 h, float& gl, float& beta) {
  const i64 off = tok * p.ho + h;
  gate_beta_of(p, load_any(p.g, off, p.g_type), load_any(p.beta, off, p.beta_type), h, gl, beta);
}

// cu_seqlens[i] clamped to [lo, T]: offsets are caller data, and a bad table
// must not send a CTA outside the tensors (the reference refuses it by name).
__device__ __forceinline__ i64 cu_at(const GdnParams& p, i64 i, i64 lo) {
  const i64 x = (p.flags & kFlagCu64) ? reinterpret_cast<const long long*>(p.cu_seqlens)[i]
                                      : static_cast<i64>(reinterpret_cast<const int*>(p.cu_seqlens)[i]);
  return x < lo ? lo : (x > p.t ? p.t : x);
}

// The state row of sequence `seq` (-1: none to read or write).
__device__ __forceinline__ i64 state_row(const GdnParams& p, i64 seq) {
  if (!(p.flags & kFlagPool)) return seq;
  const i64 r = reinterpret_cast<const int*>(p.state_indices)[seq];
  return (r >= 0 && r < p.state_rows) ? r : -1;
}

// ---- tensor-core tile product (mma.sync m16n8k16, bf16 in, fp32 accumulate) ----
__device__ __forceinline__ u32 lds32(const u16* p) { return *reinterpret_cast<const u32*>(p); }

// 16 bytes global -> shared, asynchronously; src_bytes 0 zero-fills.
__device__ __forceinline__ void cp_async16(u16* dst, const u16* src, int src_bytes) {
  const u32 d = static_cast<u32>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::); }

__device__ __forceinline__ void mma_bf16(float (&c)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Four 8 x 8 bf16 matrices from shared memory (ldmatrix): lane l names row
// l % 8 of matrix l / 8; TRANS transposes each. Rows are 16 bytes, 16-byte
// aligned; the padded strides (LDD, LDC) put the 8 rows of a matrix in
// distinct banks.
template <bool TRANS>
__device__ __forceinline__ void ldsm4(u32 (&r)[4], const u16* row) {
  const u32 a = static_cast<u32>(__cvta_generic_to_shared(row));
  if constexpr (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}

// c[j] += A[16 x KD] . B[KD x 8j .. 8j+8] for j < NT (NT even), bf16 tiles in
// shared memory already offset to the warp's tile, fp32 accumulators.
// A is stored row-major [m][k] (lda), or with AT as [k][m] (A transposed);
// B is stored as [n][k] (ldb), or with BKN as [k][n] (row-major K x N).
// Fragment j: c[j][0..1] at (row g, cols 8j + 2t, +1), c[j][2..3] at row g + 8
// (g = lane / 4, t = lane % 4).
template <int NT, int KD, bool AT = false, bool BKN = false>
__device__ __forceinline__ void warp_mma(float (&c)[NT][4], const u16* A, int lda, const u16* B, int ldb,
                                         int lane) {
  static_assert(NT % 2 == 0, "warp_mma loads B two n-tiles at a time");
  const int mi = lane >> 3, mr = lane & 7;  // the matrix and row this lane addresses
#pragma unroll
  for (int k0 = 0; k0 < KD; k0 += 16) {
    u32 a[4];
    // a0 (m 0-7, k 0-7), a1 (m 8-15, k 0-7), a2 (m 0-7, k 8-15), a3 (m 8-15, k 8-15).
    if constexpr (AT) ldsm4<true>(a, A + (k0 + 8 * (mi >> 1) + mr) * lda + 8 * (mi & 1));
    else ldsm4<false>(a, A + (8 * (mi & 1) + mr) * lda + k0 + 8 * (mi >> 1));
#pragma unroll
    for (int j = 0; j < NT; j += 2) {
      u32 b[4];
      // b[0], b[1]: n-tile j (k 0-7, 8-15); b[2], b[3]: n-tile j + 1.
      if constexpr (BKN) ldsm4<true>(b, B + (k0 + 8 * (mi & 1) + mr) * ldb + 8 * j + 8 * (mi >> 1));
      else ldsm4<false>(b, B + (8 * j + 8 * (mi >> 1) + mr) * ldb + k0 + 8 * (mi & 1));
      mma_bf16(c[j], a[0], a[1], a[2], a[3], b[0], b[1]);
      mma_bf16(c[j + 1], a[0], a[1], a[2], a[3], b[2], b[3]);
    }
  }
}

// T = (I + L)^-1 for the strictly lower triangular fp32 L [C][C] (row stride
// LDF), in fp32 by 16 x 16 blocks, into tf, then its bf16 copy t (row stride
// LDC; zero above the diagonal blocks). Every thread of the CTA calls it; it
// begins and ends at a barrier's far side (L written, t readable).
//  1. the diagonal blocks T_bb = (I + L_bb)^-1 by forward substitution, one
//     column per 4 threads: T[r][j] = -sum_{s<r} L[r][s] T[s][j] (r > j), 1
//     (r = j), 0 (r < j); thread part pp sums s = pp mod 4 and owns those rows;
//  2. the blocks below, one block diagonal at a time:
//     T_ij = -T_ii sum_{m=j}^{i-1} L_im T_mj, one element per thread per block,
//     each sum in four independent partial sums (a short dependent chain).
__device__ __forceinline__ void triangular_inverse(const float* lf, float* tf, u16* t, int tid) {
  {
    const int task = tid >> 2, pp = tid & 3;
    const int b16 = (task >> 4) * 16, j = b16 + (task & 15);
#pragma unroll
    for (int rr = 0; rr < 16; ++rr) {
      const int r = b16 + rr;
      float acc = 0.f;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int s2 = b16 + pp + 4 * q;
        if (s2 < r) acc += lf[r * LDF + s2] * tf[s2 * LDF + j];
      }
      acc += __shfl_xor_sync(0xffffffffu, acc, 1);
      acc += __shfl_xor_sync(0xffffffffu, acc, 2);
      if ((rr & 3) == pp) tf[r * LDF + j] = r == j ? 1.f : (r > j ? -acc : 0.f);
    }
  }
  __syncthreads();
  {
    const int rr = tid >> 4, cc = tid & 15;
#pragma unroll
    for (int lv = 1; lv < 4; ++lv) {
      float x[3];
#pragma unroll
      for (int bi = lv; bi < 4; ++bi) {
        const int bj = bi - lv;
        float a[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int s2 = 16 * bj; s2 < 16 * bi; ++s2)
          a[s2 & 3] += lf[(16 * bi + rr) * LDF + s2] * tf[s2 * LDF + 16 * bj + cc];
        x[bi - lv] = (a[0] + a[1]) + (a[2] + a[3]);
      }
      // The (i, j) slots are read by no one at this level: park X there.
#pragma unroll
      for (int bi = lv; bi < 4; ++bi) tf[(16 * bi + rr) * LDF + 16 * (bi - lv) + cc] = x[bi - lv];
      __syncthreads();
#pragma unroll
      for (int bi = lv; bi < 4; ++bi) {
        const int bj = bi - lv;
        float a[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int m = 0; m < 16; ++m)
          a[m & 3] += tf[(16 * bi + rr) * LDF + 16 * bi + m] * tf[(16 * bi + m) * LDF + 16 * bj + cc];
        x[bi - lv] = -((a[0] + a[1]) + (a[2] + a[3]));
      }
      __syncthreads();
#pragma unroll
      for (int bi = lv; bi < 4; ++bi) tf[(16 * bi + rr) * LDF + 16 * (bi - lv) + cc] = x[bi - lv];
      __syncthreads();
    }
  }
  for (int i2 = tid; i2 < C * C; i2 += kThreads) {
    const int r = i2 / C, jj = i2 % C;
    t[r * LDC + jj] = f32_to_bf16((r >> 4) >= (jj >> 4) ? tf[r * LDF + jj] : 0.f);
  }
  __syncthreads();
}

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
        if (l2) {
          float sq = 0.f, sk = 0.f;
#pragma unroll
          for (int e = 0; e < EL; ++e) sq += xq[e] * xq[e], sk += xk[e] * xk[e];
          const float iq = rsqrtf(warp_sum(sq) + 1e-6f), ik = rsqrtf(warp_sum(sk) + 1e-6f);
#pragma unroll
          for (int e = 0; e < EL; ++e) xq[e] *= iq, xk[e] *= ik;
        }
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
    if (warp == 0) {
      const float x0 = sm.gam[2 * lane], x1 = sm.gam[2 * lane + 1];
      float s = x0 + x1;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const float y = __shfl_up_sync(0xffffffffu, s, o);
        if (lane >= o) s += y;
      }
      sm.gam[2 * lane] = (s - x1) * kLog2e;
      sm.gam[2 * lane + 1] = s * kLog2e;
    }
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
    triangular_inverse(sm.lf, sm.tf, sm.t, tid);

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

// ---- the two-pass prefill ----
// gdn_prefill_prep: one CTA of 8 warps per (chunk slot, output head): every
// state-free piece of one 64-token chunk (the cumulative gate, l2norm, L, T,
// W, U, P, the decayed K), written to the workspace block of (slot, head)
// (gdn_params.cuh names the tiles). All chunks of all sequences at once.
// gdn_prefill_scan: one CTA per (V-slice, head, sequence) as gdn_prefill; per
// chunk only the state products, from the block of the chunk:
//   Vn = U + Wn S;  O = scale (Qe S + P Vn);  S = exp(gamma_C) S + Vn^T Kd
// with the next chunk's tiles fetched (cp.async) while this one computes.

namespace opgraph_gdn {

// q and k are dead once L and P are formed: the inverse's fp32 tiles reuse
// their space (two CTAs a SM at D = 128).
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
static_assert(sizeof(PrepSmem) == gdn_prep_smem_bytes(D), "gdn_prep_smem_bytes disagrees with PrepSmem");

struct ScanStage {
  u16 qe[C * LDD];
  u16 wn[C * LDD];
  u16 p[C * LDC];
  u16 kd[C * LDD];
};
struct ScanSmem {
  ScanStage st[2];
  u16 s[BV * LDD];   // S^T slice at the chunk start (bf16 copy of the registers)
  u16 vn[C * LDB];   // Vn [C][BV]
};
static_assert(sizeof(ScanSmem) == gdn_scan_smem_bytes(D), "gdn_scan_smem_bytes disagrees with ScanSmem");

constexpr i64 kBlockElems = gdn_ws_block_elems(D);
constexpr i64 kBlockBytes = gdn_ws_block_bytes(D);
constexpr i64 kOffQe = 0, kOffWn = C * D, kOffKd = 2 * C * D, kOffU = 3 * C * D, kOffP = 4 * C * D;

}  // namespace opgraph_gdn

extern "C" __global__ void __launch_bounds__(kThreads, 2) gdn_prefill_prep(const GdnParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  PrepSmem& sm = *reinterpret_cast<PrepSmem*>(smem_raw);
  u16* const sq = sm.u.in.q;
  u16* const sk = sm.u.in.k;
  float* const lf = sm.u.inv.lf;
  float* const tf = sm.u.inv.tf;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  const i64 slot = blockIdx.x, h = blockIdx.y;
  if (p.n_seq <= 0) return;
  // The sequence owning this slot: the last s with cu[s] / C + s <= slot, that
  // is the count of s in [1, n_seq) with it (strictly increasing in s), each
  // warp's lanes loading the table side by side (independent loads, not the
  // dependent chain of a binary search).
  unsigned below = 0;
  for (i64 s2 = 1 + lane; s2 < p.n_seq; s2 += 32) below += cu_at(p, s2, 0) / C + s2 <= slot ? 1u : 0u;
  const i64 seq = __reduce_add_sync(0xffffffffu, below);
  const i64 bos = cu_at(p, seq, 0), len = cu_at(p, seq + 1, bos) - bos;
  const i64 first = bos / C + seq;
  if (first > slot) return;
  const i64 c0 = (slot - first) * C;
  if (c0 >= len) return;  // a slot no chunk uses
  const int n = static_cast<int>(len - c0 < C ? len - c0 : C);
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  u16* blk = reinterpret_cast<u16*>(p.ws) + (slot * p.ho + h) * kBlockElems;

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
      rv[i] = load_row_raw(vg + tok * p.v_ts + hv * p.v_hs + lane * EL);
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
  if (warp == 0) {
    const float x0 = sm.gam[2 * lane], x1 = sm.gam[2 * lane + 1];
    float s = x0 + x1;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const float y = __shfl_up_sync(0xffffffffu, s, o);
      if (lane >= o) s += y;
    }
    sm.gam[2 * lane] = (s - x1) * kLog2e;
    sm.gam[2 * lane + 1] = s * kLog2e;
  }
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
      if (l2) {
        float nq = 0.f, nk = 0.f;
#pragma unroll
        for (int e = 0; e < EL; ++e) nq += xq[e] * xq[e], nk += xk[e] * xk[e];
        const float iq = rsqrtf(warp_sum(nq) + 1e-6f), ik = rsqrtf(warp_sum(nk) + 1e-6f);
#pragma unroll
        for (int e = 0; e < EL; ++e) xq[e] *= iq, xk[e] *= ik;
      }
    } else {
#pragma unroll
      for (int e = 0; e < EL; ++e) xq[e] = 0.f, xk[e] = 0.f, xv[e] = 0.f;
    }
    const float eg = exp2f(sm.gam[r]), br = sm.bet[r], dk = exp2f(gc - sm.gam[r]);
#pragma unroll
    for (int e = 0; e < EL; e += 2) {
      const int col = lane * EL + e;
      *reinterpret_cast<u32*>(&sq[r * LDD + col]) = pack_bf16(xq[e], xq[e + 1]);
      *reinterpret_cast<u32*>(&sk[r * LDD + col]) = pack_bf16(xk[e], xk[e + 1]);
      *reinterpret_cast<u32*>(&sm.kb[r * LDD + col]) = pack_bf16(br * eg * xk[e], br * eg * xk[e + 1]);
      *reinterpret_cast<u32*>(&sm.vb[r * LDD + col]) = pack_bf16(br * xv[e], br * xv[e + 1]);
      *reinterpret_cast<u32*>(&blk[kOffQe + r * D + col]) = pack_bf16(eg * xq[e], eg * xq[e + 1]);
      *reinterpret_cast<u32*>(&blk[kOffKd + r * D + col]) = pack_bf16(dk * xk[e], dk * xk[e + 1]);
    }
  }
  if (tid == 0) reinterpret_cast<float*>(p.ws + static_cast<u64>(p.n_slots * p.ho * kBlockBytes))[slot * p.ho + h] = exp2f(gc);
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
        *reinterpret_cast<u32*>(&blk[kOffP + r * C + s0]) = pack_bf16(pv[0], pv[1]);
      }
    }
  }
  __syncthreads();

  // T = (I + L)^-1 and its bf16 copy.
  triangular_inverse(lf, tf, sm.t, tid);

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
          *reinterpret_cast<u32*>(&dst[r * D + col]) = pack_bf16(sign * acc[j][2 * hh], sign * acc[j][2 * hh + 1]);
        }
    }
  }
}

// Two adjacent fp32 values (8-byte aligned).
__device__ __forceinline__ void load_f2(const float* p, float& a, float& b) {
  const u64 w = *reinterpret_cast<const u64*>(p);
  a = __uint_as_float(static_cast<u32>(w));
  b = __uint_as_float(static_cast<u32>(w >> 32));
}
__device__ __forceinline__ void store_f2(float* p, float a, float b) {
  *reinterpret_cast<u64*>(p) = static_cast<u64>(__float_as_uint(a)) | (static_cast<u64>(__float_as_uint(b)) << 32);
}

// The span summaries of a chain split (gdn_params.cuh): per (sequence, span,
// head) three fp32 [D][D] blocks, H (the span's end state from a zero seed,
// S^T rows), M (the span's transition, K x K) and the seed (the true state at
// the span's start, S^T rows), written by gdn_span_summary / gdn_span_fixup.
__device__ __forceinline__ float* span_block(const GdnParams& p, i64 seq, i64 span, i64 h, int which) {
  return reinterpret_cast<float*>(p.sum_ws) + ((((seq * p.n_spans + span) * p.ho + h) * 3 + which) * D) * D;
}
constexpr int kSumH = 0, kSumM = 1, kSumSeed = 2;

// The sequential pass, in three forms (PH):
//  0  gdn_prefill_scan: one CTA per (V-slice, head, sequence), the whole
//     sequence from initial_state; O and final_state.
//  1  gdn_span_summary: a chain split's first pass, one CTA per (slice, head,
//     sequence x span) over the span's chunks only: slices 0 .. D/BV-1 are
//     value rows from a zero seed (their end state is H), slices D/BV .. are
//     rows of the transition M from the identity with U = 0 (the state update
//     X <- X (e^gC I + Wn^T Kd) + U^T Kd, rows independent). No O. The last
//     span of a sequence seeds nothing: its CTAs exit.
//  2  gdn_span_scan: the scan of one span from its seed (span 0: initial_state),
//     O for the span's tokens; the last span writes final_state.
template <int PH>
__device__ __forceinline__ void scan_pass(const GdnParams& p, unsigned char* smem_raw) {
  ScanSmem& sm = *reinterpret_cast<ScanSmem*>(smem_raw);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  constexpr int kVSlices = D / BV;
  const bool mrows = PH == 1 && static_cast<int>(blockIdx.x) >= kVSlices;  // rows of M, not of S^T
  const i64 v0 = static_cast<i64>(mrows ? blockIdx.x - kVSlices : blockIdx.x) * BV;
  const i64 h = blockIdx.y;
  const i64 seq = PH == 0 ? static_cast<i64>(blockIdx.z) : static_cast<i64>(blockIdx.z) / p.n_spans;
  const i64 span = PH == 0 ? 0 : static_cast<i64>(blockIdx.z) % p.n_spans;
  const i64 bos = cu_at(p, seq, 0), len = cu_at(p, seq + 1, bos) - bos;
  const i64 first = bos / C + seq;
  // The tokens [tb, te) of this CTA's span (PH 0: the sequence).
  i64 tb = 0, te = len;
  bool last_span = true;
  if (PH != 0) {
    // An empty sequence has one (empty) span: it still writes its final state.
    const i64 nch = (len + C - 1) / C, nsp = nch > 0 ? (nch + p.span_chunks - 1) / p.span_chunks : 1;
    if (span >= nsp) return;
    last_span = span == nsp - 1;
    if (PH == 1 && last_span) return;
    tb = span * p.span_chunks * C;
    te = tb + p.span_chunks * C < len ? tb + p.span_chunks * C : len;
  }
  const i64 srow = state_row(p, seq);
  const float scale = static_cast<float>(p.scale);
  const u16* ws = reinterpret_cast<const u16*>(p.ws);
  const float* gcs = reinterpret_cast<const float*>(p.ws + static_cast<u64>(p.n_slots * p.ho * kBlockBytes));

  constexpr int NTS = D / 16;
  const int ms = 16 * (warp & 3), ns = (D / 2) * (warp >> 2);
  float st[NTS][4];
  {
    // The seed: initial_state (PH 0), the fix-up's seed (PH 2: span 0's is the
    // initial state, copied by the fix-up, so no CTA of this pass reads
    // initial_state while the last span writes final_state, which may be the
    // same buffer), zero (PH 1 value rows) or the identity (PH 1 M rows).
    const bool from_init = PH == 0 && (p.flags & kFlagHasInit) && srow >= 0;
    const bool from_seed = PH == 2;
    const i64 base = srow * p.state_row_stride + (h * D + v0) * D;
    const float* seed = from_seed ? span_block(p, seq, span, h, kSumSeed) + v0 * D : nullptr;
#pragma unroll
    for (int j = 0; j < NTS; ++j) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        float a = 0.f, b = 0.f;
        if (from_init) load_any2(p.initial_state, base + static_cast<i64>(v) * D + kk, p.state_type, a, b);
        if (from_seed) {
          load_f2(seed + static_cast<i64>(v) * D + kk, a, b);
        }
        if (mrows) {
          a = v0 + v == kk ? 1.f : 0.f;
          b = v0 + v == kk + 1 ? 1.f : 0.f;
        }
        st[j][2 * hh] = a;
        st[j][2 * hh + 1] = b;
        *reinterpret_cast<u32*>(&sm.s[v * LDD + kk]) = pack_bf16(a, b);
      }
    }
  }

  const int m0 = 16 * (warp & 3), n0 = 32 * (warp >> 2);
  auto block_of = [&](i64 c) { return ws + ((first + c / C) * p.ho + h) * kBlockElems; };
  auto prefetch = [&](i64 c, int buf) {
    const u16* b = block_of(c);
    ScanStage& sg = sm.st[buf];
    constexpr int PD = D / 8, PC = C / 8;  // 16-byte pieces per row
    for (int i = tid; i < C * PD; i += kThreads) {
      const int r = i / PD, piece = i % PD;
      if (PH != 1) cp_async16(&sg.qe[r * LDD + piece * 8], b + kOffQe + r * D + piece * 8, 16);
      cp_async16(&sg.wn[r * LDD + piece * 8], b + kOffWn + r * D + piece * 8, 16);
      cp_async16(&sg.kd[r * LDD + piece * 8], b + kOffKd + r * D + piece * 8, 16);
    }
    if (PH != 1)
      for (int i = tid; i < C * PC; i += kThreads) {
        const int r = i / PC, piece = i % PC;
        cp_async16(&sg.p[r * LDC + piece * 8], b + kOffP + r * C + piece * 8, 16);
      }
    cp_async_commit();
  };
  // U of the chunk as this thread's accumulator fragment, and exp(gamma_C), in registers.
  u32 un[4][2] = {};
  float gcn = 1.f;
  auto load_u = [&](i64 c) {
    const u16* b = block_of(c) + kOffU;
    if (!mrows) {
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
          un[j][hh] = *reinterpret_cast<const u32*>(&b[(m0 + g8 + 8 * hh) * D + v0 + n0 + 8 * j + 2 * t4]);
    }
    gcn = gcs[(first + c / C) * p.ho + h];
  };
  if (te > tb) {
    prefetch(tb, 0);
    load_u(tb);
  }

  int buf = 0;
  for (i64 c0 = tb; c0 < te; c0 += C, buf ^= 1) {
    const int n = static_cast<int>(te - c0 < C ? te - c0 : C);
    const bool more = c0 + C < te;
    cp_async_wait_all();
    __syncthreads();  // this chunk's tiles landed; the previous chunk's readers are done
    if (more) prefetch(c0 + C, buf ^ 1);
    const ScanStage& sg = sm.st[buf];
    float cv[4][4], co[4][4] = {};
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        cv[j][2 * hh] = bf16_to_f32(static_cast<u16>(un[j][hh]));
        cv[j][2 * hh + 1] = bf16_to_f32(static_cast<u16>(un[j][hh] >> 16));
      }
    const float ec = gcn;
    if (more) load_u(c0 + C);

    // Vn = U + Wn S; o = Qe S.
    warp_mma<4, D>(cv, sg.wn + m0 * LDD, LDD, sm.s + n0 * LDD, LDD, lane);
    if (PH != 1) warp_mma<4, D>(co, sg.qe + m0 * LDD, LDD, sm.s + n0 * LDD, LDD, lane);
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int r = m0 + g8 + 8 * hh;
#pragma unroll
      for (int j = 0; j < 4; ++j)
        *reinterpret_cast<u32*>(&sm.vn[r * LDB + n0 + 8 * j + 2 * t4]) = pack_bf16(cv[j][2 * hh], cv[j][2 * hh + 1]);
    }
    __syncthreads();

    if (PH != 1) {
      // O = scale (o + P Vn), rows of the chunk only.
      warp_mma<4, C, false, true>(co, sg.p + m0 * LDC, LDC, sm.vn + n0, LDB, lane);
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
    }

    // S^T = exp(gamma_C) S^T + Vn^T Kd (registers), and its bf16 copy.
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) st[j][e] *= ec;
    warp_mma<NTS, C, true, true>(st, sm.vn + ms, LDB, sg.kd + ns, LDD, lane);
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        *reinterpret_cast<u32*>(&sm.s[v * LDD + kk]) = pack_bf16(st[j][2 * hh], st[j][2 * hh + 1]);
      }
  }

  if (PH == 1) {
    float* dst = span_block(p, seq, span, h, mrows ? kSumM : kSumH) + v0 * D;
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        store_f2(dst + static_cast<i64>(v) * D + kk, st[j][2 * hh], st[j][2 * hh + 1]);
      }
  } else if (last_span && (p.flags & kFlagWriteFinal) && srow >= 0) {
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

extern "C" __global__ void __launch_bounds__(kThreads, 1) gdn_prefill_scan(const GdnParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  scan_pass<0>(p, smem_raw);
}
extern "C" __global__ void __launch_bounds__(kThreads, 1) gdn_span_summary(const GdnParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  scan_pass<1>(p, smem_raw);
}
extern "C" __global__ void __launch_bounds__(kThreads, 1) gdn_span_scan(const GdnParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  scan_pass<2>(p, smem_raw);
}

// gdn_span_fixup: a chain split's middle pass, one CTA of 8 warps per (V-slice,
// head, sequence): X = the initial state rows (or zero), span 0's seed; then
// for each span s but the last X <- X M_s + H_s (X as bf16 operand, M_s
// rounded to bf16 in shared memory, fp32 accumulation from H_s), written as
// span s + 1's seed.
struct FixupSmem {
  u16 x[BV * LDD];  // X (bf16), the A operand
  u16 m[D * LDD];   // M_s (bf16), [k][n]
};
static_assert(sizeof(FixupSmem) == gdn_fixup_smem_bytes(D), "gdn_fixup_smem_bytes disagrees with FixupSmem");
extern "C" __global__ void __launch_bounds__(kThreads, 1) gdn_span_fixup(const GdnParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  FixupSmem& sm = *reinterpret_cast<FixupSmem*>(smem_raw);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  const i64 v0 = static_cast<i64>(blockIdx.x) * BV;
  const i64 h = blockIdx.y, seq = blockIdx.z;
  const i64 bos = cu_at(p, seq, 0), len = cu_at(p, seq + 1, bos) - bos;
  const i64 nch = (len + C - 1) / C, nsp = nch > 0 ? (nch + p.span_chunks - 1) / p.span_chunks : 1;
  const i64 srow = state_row(p, seq);
  constexpr int NTS = D / 16;
  const int ms = 16 * (warp & 3), ns = (D / 2) * (warp >> 2);
  float x[NTS][4];
  {
    const bool load = (p.flags & kFlagHasInit) && srow >= 0;
    const i64 base = srow * p.state_row_stride + (h * D + v0) * D;
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        float a = 0.f, b = 0.f;
        if (load) load_any2(p.initial_state, base + static_cast<i64>(v) * D + kk, p.state_type, a, b);
        x[j][2 * hh] = a;
        x[j][2 * hh + 1] = b;
        store_f2(span_block(p, seq, 0, h, kSumSeed) + (v0 + v) * D + kk, a, b);
      }
  }
  for (i64 s = 0; s + 1 < nsp; ++s) {
    __syncthreads();  // the previous span's readers of x and m are done
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        *reinterpret_cast<u32*>(&sm.x[v * LDD + kk]) = pack_bf16(x[j][2 * hh], x[j][2 * hh + 1]);
      }
    const float* mg = span_block(p, seq, s, h, kSumM);
    for (int i = tid; i < D * D / 2; i += kThreads) {
      const int r = (2 * i) / D, c = (2 * i) % D;
      float a, b;
      load_f2(mg + 2 * i, a, b);
      *reinterpret_cast<u32*>(&sm.m[r * LDD + c]) = pack_bf16(a, b);
    }
    const float* hg = span_block(p, seq, s, h, kSumH) + v0 * D;
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        load_f2(hg + static_cast<i64>(v) * D + kk, x[j][2 * hh], x[j][2 * hh + 1]);
      }
    __syncthreads();
    warp_mma<NTS, D, false, true>(x, sm.x + ms * LDD, LDD, sm.m + ns, LDD, lane);
    float* seed = span_block(p, seq, s + 1, h, kSumSeed) + v0 * D;
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        store_f2(seed + static_cast<i64>(v) * D + kk, x[j][2 * hh], x[j][2 * hh + 1]);
      }
  }
}

// ---- decode: the token recurrence, state rows in registers ----
constexpr int kDecodeThreads = 128;  // 4 warps
constexpr int kDecodeRows = 32;      // value rows per CTA
constexpr int kRowsPerWarp = kDecodeRows / (kDecodeThreads / 32);

extern "C" __global__ void __launch_bounds__(kDecodeThreads) gdn_decode(const GdnParams p) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const i64 h = blockIdx.y, seq = blockIdx.z;
  const i64 vbase = static_cast<i64>(blockIdx.x) * kDecodeRows + warp * kRowsPerWarp;
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const i64 bos = cu_at(p, seq, 0), eos = cu_at(p, seq + 1, bos);
  const i64 srow = state_row(p, seq);
  const float scale = static_cast<float>(p.scale);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  const i64 sbase = srow * p.state_row_stride + (h * D + vbase) * D + lane * EL;

  float st[kRowsPerWarp][EL];
  const bool load = (p.flags & kFlagHasInit) && srow >= 0;
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i)
#pragma unroll
    for (int e = 0; e < EL; e += 2) {
      float a = 0.f, b = 0.f;
      if (load) load_any2(p.initial_state, sbase + static_cast<i64>(i) * D + e, p.state_type, a, b);
      st[i][e] = a;
      st[i][e + 1] = b;
    }

  const u16* qg = reinterpret_cast<const u16*>(p.q);
  const u16* kg = reinterpret_cast<const u16*>(p.k);
  const u16* vg = reinterpret_cast<const u16*>(p.v);
  for (i64 tok = bos; tok < eos; ++tok) {
    float xq[EL], xk[EL];
    load_row_share(qg + tok * p.q_ts + hq * p.q_hs + lane * EL, xq);
    load_row_share(kg + tok * p.k_ts + hk * p.k_hs + lane * EL, xk);
    if (l2) {
      float sq = 0.f, sk = 0.f;
#pragma unroll
      for (int e = 0; e < EL; ++e) sq += xq[e] * xq[e], sk += xk[e] * xk[e];
      const float iq = rsqrtf(warp_sum(sq) + 1e-6f), ik = rsqrtf(warp_sum(sk) + 1e-6f);
#pragma unroll
      for (int e = 0; e < EL; ++e) xq[e] *= iq, xk[e] *= ik;
    }
    float gl, beta;
    gate_beta(p, tok, h, gl, beta);
    const float a = expf(gl);
    // The lane's value of row i (lanes 0..7 hold rows 0..7), broadcast below.
    const float vmine = lane < kRowsPerWarp ? io_to_f32(vg[tok * p.v_ts + hv * p.v_hs + vbase + lane]) : 0.f;
    float kv[kRowsPerWarp];
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      float x = 0.f;
#pragma unroll
      for (int e = 0; e < EL; ++e) x += st[i][e] * xk[e];
      kv[i] = x;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i) kv[i] += __shfl_xor_sync(0xffffffffu, kv[i], o);
    float ov[kRowsPerWarp];
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      const float vi = __shfl_sync(0xffffffffu, vmine, i);
      const float u = beta * (vi - a * kv[i]);
      float x = 0.f;
#pragma unroll
      for (int e = 0; e < EL; ++e) {
        st[i][e] = a * st[i][e] + xk[e] * u;
        x += st[i][e] * xq[e];
      }
      ov[i] = x;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i) ov[i] += __shfl_xor_sync(0xffffffffu, ov[i], o);
    float mine = 0.f;
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i)
      if (lane == i) mine = ov[i];
    if (lane < kRowsPerWarp) store_any(p.o, (tok * p.ho + h) * D + vbase + lane, p.o_type, scale * mine);
  }

  if ((p.flags & kFlagWriteFinal) && srow >= 0) {
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i)
#pragma unroll
      for (int e = 0; e < EL; e += 2)
        store_any2(p.final_state, sbase + static_cast<i64>(i) * D + e, p.state_type, st[i][e], st[i][e + 1]);
  }
}

// ---- the pool copy: words [0, words) of initial_state to final_state ----
extern "C" __global__ void gdn_state_copy(const GdnParams p, long long words) {
  const u32* src = reinterpret_cast<const u32*>(p.initial_state);
  u32* dst = reinterpret_cast<u32*>(p.final_state);
  for (i64 i = opgraph_kernels::global_thread_index(); i < words; i += opgraph_kernels::grid_thread_count())
    dst[i] = src[i];
}
