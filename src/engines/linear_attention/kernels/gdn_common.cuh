// linear_attention/kernels/gdn_common.cuh — what the gdn kernels share
// (gdn_prefill.cu, gdn_two_pass.cu, gdn_decode.cu, gdn_fused.cu and the backward's
// gdn_bwd_states.cu, gdn_bwd_grads.cu): the tile constants, element
// conversions, run-time typed loads and stores, the gate and beta of a token,
// the ldmatrix + mma.sync tile product, and the blocked triangular inverse.
//
// Every kernel source is specialised by two defines:
//   GDN_D   head dim, K = V = D in {64, 128}
//   GDN_IO  q/k/v element type: 0 bf16, 1 fp16
// Everything else (B, T, heads, cu_seqlens, gate/beta/state/O types, the
// attributes) is a run-time field of GdnParams (gdn_params.cuh): one kernel
// per layout class.
//
// Conventions: the state tensors are V-major ([.., V, K], holding S^T).
// Output head h reads q head h / (HO / HQ), k head h / (HO / HK), v head
// h / (HO / HV). A state_indices entry outside [0, state_rows) reads a zero
// state and writes nothing (the reference refuses it; a kernel cannot).
#pragma once

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

// Named barriers (bar.sync / bar.arrive of n threads at barrier id) and setmaxnreg, for the warp-specialised kernels
// (the forward's fused forms, the backward's reverse scan and its one-pass trial by roles).
__device__ __forceinline__ void nb_sync(int id, int n) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void nb_arrive(int id, int n) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

constexpr int D = GDN_D;
static_assert(D == 64 || D == 128, "GDN_D must be 64 or 128");
constexpr int C = 64;         // chunk (tokens)
constexpr int BV = 64;        // value columns per prefill CTA
constexpr int kThreads = 256; // 8 warps
constexpr int LDD = D + 8;    // bf16 row stride of [*][D] tiles (16-byte pad: conflict-free fragments)
constexpr int LDC = C + 8;    // bf16 row stride of [*][C] tiles
constexpr int LDB = BV + 8;   // bf16 row stride of [*][BV] tiles
#if defined(GDN_FUSED_WS) && GDN_FUSED_WS && GDN_WS_R3
constexpr int LDF = GDN_WS3_LD;  // the warp-specialised fused build's (gdn_params.cuh)
#else
constexpr int LDF = C + 1;    // fp32 row stride of [C][C] tiles
#endif
constexpr int EL = D / 32;    // elements of a D-row per lane
constexpr float kLog2e = 1.4426950408889634f;
// A chunk's workspace block (the two-pass prefill's and the backward's,
// gdn_params.cuh): element offsets of Qe, Wn, Kd, U ([C][D] each), then P [C][C];
// the backward's block also holds T [C][C] (bf16, zero above the diagonal blocks)
// after P, for its gradient kernel (gdn_bwd_params.cuh).
constexpr i64 kOffQe = 0, kOffWn = C * D, kOffKd = 2 * C * D, kOffU = 3 * C * D, kOffP = 4 * C * D,
              kOffT = 4 * C * D + C * C;

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
// x, y as a bf16 pair at a (4-byte aligned).
__device__ __forceinline__ void st_bf2(u16* a, float x, float y) { *reinterpret_cast<u32*>(a) = pack_bf16(x, y); }

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

// Four adjacent fp32 elements, 16-byte aligned: one 128-bit access. The state is read
// once and written once per launch (decode): the load bypasses L1, the store streams.
__device__ __forceinline__ void load_f4_stream(const float* p, float& a, float& b, float& c, float& d) {
  asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(a), "=f"(b), "=f"(c), "=f"(d)
               : "l"(p));
}
__device__ __forceinline__ void store_f4_stream(float* p, float a, float b, float c, float d) {
  asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
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

// safe_gate's parameters of head h as stored (a_log: 0 without it; dt_bias: 0 without it). P: GdnParams or the
// backward's GdnBwdParams (their flags and a_log / dt_bias fields).
template <class P>
__device__ __forceinline__ void safe_gate_params(const P& p, i64 h, float& alog, float& dt) {
  alog = (p.flags & kFlagHasALog) ? load_any(p.a_log, h, p.a_log_type) : 0.f;
  dt = (p.flags & kFlagHasDtBias) ? load_any(p.dt_bias, h, p.dt_bias_type) : 0.f;
}
// The natural-log gate and the beta of raw inputs x (g) and b (beta), with safe_gate's
// parameters already read (safe_gate_params; unused otherwise).
template <class P>
__device__ __forceinline__ void gate_beta_with(const P& p, float x, float b, float alog, float dt, float& gl,
                                               float& beta) {
  if (p.flags & kFlagSafeGate) {
    gl = -expf(alog) * softplusf_(x + dt);
  } else if (p.flags & kFlagLinearGate) {
    gl = x > 0.f ? fmaxf(logf(x), -200.f) : -200.f;  // alpha < e^-200 is 0 in fp32 anyway
  } else {
    gl = x;
  }
  beta = (p.flags & kFlagBetaSigmoid) ? ((p.flags & kFlagNegEig) ? 2.f : 1.f) * sigmoidf_(b) : b;
}
// The same, reading head h's safe_gate parameters here (the prefill kernels' form: written out
// rather than through gate_beta_with, which changes their SASS).
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
// An extern "C" kernel `name` (param type P, at most kThreads threads, at least `min_blocks` CTAs a
// multiprocessor) that runs form PH of a pass template `pass<PH>(p, smem)` on its dynamic shared memory:
// the one-line entries of the scans' forms (gdn_two_pass.cu, gdn_bwd_states.cu).
#define GDN_PASS_ENTRY(name, P, min_blocks, pass, PH)                                      \
  extern "C" __global__ void __launch_bounds__(kThreads, min_blocks) name(const P p) {      \
    extern __shared__ __align__(16) unsigned char smem_raw[];                               \
    pass<PH>(p, smem_raw);                                                                  \
  }
// Whether the chunk prep (gdn_prep.cuh) reads v rows: always in the forward (the backward's
// overload in gdn_bwd_common.cuh: not under gdn_summary_bwd, which has no v).
__device__ __forceinline__ constexpr bool has_values(const GdnParams&) { return true; }
// gate_beta_of from token `tok`'s inputs.
__device__ __forceinline__ void gate_beta(const GdnParams& p, i64 tok, i64 h, float& gl, float& beta) {
  const i64 off = tok * p.ho + h;
  gate_beta_of(p, load_any(p.g, off, p.g_type), load_any(p.beta, off, p.beta_type), h, gl, beta);
}

// cu_seqlens[i] clamped to [lo, T]: offsets are caller data, and a bad table
// must not send a CTA outside the tensors (the reference refuses it by name).
// P: GdnParams or the backward's GdnBwdParams (flags, cu_seqlens, t).
template <class P>
__device__ __forceinline__ i64 cu_at(const P& p, i64 i, i64 lo) {
  const i64 x = (p.flags & kFlagCu64) ? reinterpret_cast<const long long*>(p.cu_seqlens)[i]
                                      : static_cast<i64>(reinterpret_cast<const int*>(p.cu_seqlens)[i]);
  return x < lo ? lo : (x > p.t ? p.t : x);
}

// A chain split's spans of a sequence of nch chunks: span_chunks chunks a span, the last shorter; one (empty) span
// for an empty sequence; under GDN_SPLIT_ADAPT one span (the whole sequence) where nch <= split_min_chunks.
__device__ __forceinline__ i64 seq_spans(const GdnParams& p, i64 nch) {
  if (nch <= 0) return 1;
  if (GDN_SPLIT_ADAPT && nch <= p.split_min_chunks) return 1;
  return (nch + p.span_chunks - 1) / p.span_chunks;
}

// state_checkpoints: the row of sequence `seq`'s first checkpoint at a cadence of `every` tokens (the sum of
// floor(L / every) over the sequences before it: O(seq) reads of cu_seqlens, once a CTA, only where checkpoints
// are written or read). P as cu_at's.
template <class P>
__device__ __forceinline__ i64 checkpoint_row0(const P& p, i64 seq, i64 every) {
  i64 row = 0, prev = cu_at(p, 0, 0);
  for (i64 s = 0; s < seq; ++s) {
    const i64 next = cu_at(p, s + 1, prev);
    row += (next - prev) / every;
    prev = next;
  }
  return row;
}

// The chunk of chunk slot `slot` (the workspace's slots: sequence s's chunks at
// cu[s] / C + s ..): its sequence is the last s with cu[s] / C + s <= slot, that is
// the count of s in [1, n_seq) with it (strictly increasing in s), each warp's
// lanes loading the table side by side (independent loads, not the dependent
// chain of a binary search). Returns false for a slot no chunk uses; else bos
// (the sequence's first token), the chunk's first token offset c0 within the
// sequence, and its length n. P as cu_at's.
template <class P>
__device__ __forceinline__ bool slot_chunk(const P& p, i64 slot, int lane, i64& bos, i64& c0, int& n) {
  unsigned below = 0;
  for (i64 s2 = 1 + lane; s2 < p.n_seq; s2 += 32) below += cu_at(p, s2, 0) / C + s2 <= slot ? 1u : 0u;
  const i64 seq = __reduce_add_sync(0xffffffffu, below);
  bos = cu_at(p, seq, 0);
  const i64 len = cu_at(p, seq + 1, bos) - bos;
  const i64 first = bos / C + seq;
  if (first > slot) return false;
  c0 = (slot - first) * C;
  if (c0 >= len) return false;
  n = static_cast<int>(len - c0 < C ? len - c0 : C);
  return true;
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
// All but the newest N commit groups of this thread's cp.async landed.
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

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

// use_qk_l2norm on a warp's q and k rows (each lane holds EL elements of each):
// x <- x / sqrt(sum x^2 + 1e-6).
__device__ __forceinline__ void l2norm_rows(float (&xq)[EL], float (&xk)[EL]) {
  float sq = 0.f, sk = 0.f;
#pragma unroll
  for (int e = 0; e < EL; ++e) sq += xq[e] * xq[e], sk += xk[e] * xk[e];
  const float iq = rsqrtf(warp_sum(sq) + 1e-6f), ik = rsqrtf(warp_sum(sk) + 1e-6f);
#pragma unroll
  for (int e = 0; e < EL; ++e) xq[e] *= iq, xk[e] *= ik;
}

// The chunk-local inclusive cumsum of the natural-log gates gam[0 .. C), in
// place, in log2 units; called by one warp (two tokens a lane).
__device__ __forceinline__ void chunk_gate_cumsum(float* gam, int lane) {
  const float x0 = gam[2 * lane], x1 = gam[2 * lane + 1];
  float s = x0 + x1;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const float y = __shfl_up_sync(0xffffffffu, s, o);
    if (lane >= o) s += y;
  }
  gam[2 * lane] = (s - x1) * kLog2e;
  gam[2 * lane + 1] = s * kLog2e;
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
// Step 1 of both inverses: the four 16 x 16 diagonal blocks of T by forward
// substitution (fp32; four lanes a column, each row's sum over the lanes), into tf.
__device__ __forceinline__ void inverse_diagonal_blocks(const float* lf, float* tf, int tid) {
  // Lane pp of column j keeps the entries it computes (rows b16 + pp + 4 q) in x[q]: the
  // recurrence reads no shared memory. L's entries are loaded four rows ahead, so their
  // loads never wait behind the recurrence's stores. Sums run in the order they always
  // did (the masked terms, all after the live ones, add zeros): the same bits as before.
  const int task = tid >> 2, pp = tid & 3;
  const int b16 = (task >> 4) * 16, j = b16 + (task & 15);
  float x[4] = {0.f, 0.f, 0.f, 0.f};
  float lcur[4][4], lnxt[4][4];
  auto load_rows = [&](int g, float (&l)[4][4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int rr = 4 * g + i;
        l[i][q] = pp + 4 * q < rr ? lf[(b16 + rr) * LDF + b16 + pp + 4 * q] : 0.f;
      }
  };
  load_rows(0, lcur);
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    if (g < 3) load_rows(g + 1, lnxt);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int rr = 4 * g + i, r = b16 + rr;
      float acc = 0.f;
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (4 * q < rr) acc += lcur[i][q] * x[q];
      acc += __shfl_xor_sync(0xffffffffu, acc, 1);
      acc += __shfl_xor_sync(0xffffffffu, acc, 2);
      const float val = r == j ? 1.f : (r > j ? -acc : 0.f);
      if ((rr & 3) == pp) {
        x[rr >> 2] = val;
        tf[r * LDF + j] = val;
      }
    }
    if (g < 3) {
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int q = 0; q < 4; ++q) lcur[i][q] = lnxt[i][q];
    }
  }
}

// Step 1 by columns, one thread a column (threads 0-63; the caller's barrier follows): thread
// j of diagonal block b = j / 16 keeps the block's 16 partial row sums and, once entry s of
// its column is final (x_s = 1 on the diagonal, -sum_s below it, 0 above), adds
// L[16 b + i][16 b + s] x_s to every later row i. The dependent chain is one FMA a step (the
// row form: a 4-term sum and two shuffles a step); the sixteen columns of a block read the
// same L entries (broadcast reads). Sums run in ascending s: other bits than the row form.
// N (16, or 8: R3's GDN_WS3_DIAG8, threads 0-63 then cover eight 8 x 8 blocks): the blocks' size.
template <int N = 16>
__device__ __forceinline__ void inverse_diagonal_blocks_col(const float* lf, float* tf, int tid) {
  static_assert(N == 8 || N == 16, "inverse_diagonal_blocks_col: 8 x 8 or 16 x 16 blocks");
  const int b0 = tid & ~(N - 1), jj = tid & (N - 1), j = b0 + jj;
  float acc[N];
#pragma unroll
  for (int i = 0; i < N; ++i) acc[i] = 0.f;
#pragma unroll
  for (int s = 0; s < N; ++s) {
    const float xs = s == jj ? 1.f : (s > jj ? -acc[s] : 0.f);
    acc[s] = xs;  // row s is final: keep its entry in its slot
#pragma unroll
    for (int i = s + 1; i < N; ++i) acc[i] += lf[(b0 + i) * LDF + b0 + s] * xs;
  }
#pragma unroll
  for (int i = 0; i < N; ++i) tf[(b0 + i) * LDF + j] = acc[i];
}

// triangular_inverse_f32: steps 1 and 2 only (T in tf, readable by every thread on return).
__device__ __forceinline__ void triangular_inverse_f32(const float* lf, float* tf, int tid) {
  inverse_diagonal_blocks(lf, tf, tid);
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
// S^T rows), M (the span's transition, K x K; stored as bf16 in the block's first
// half, span_m16) and the seed (the true state at the span's start, S^T rows),
// written by gdn_span_summary / gdn_span_fixup (or the fused kernel's span forms,
// gdn_fused.cu).
__device__ __forceinline__ float* span_block(const GdnParams& p, i64 seq, i64 span, i64 h, int which) {
  return reinterpret_cast<float*>(p.sum_ws) + ((((seq * p.n_spans + span) * p.ho + h) * 3 + which) * D) * D;
}
constexpr int kSumH = 0, kSumM = 1, kSumSeed = 2;
// A span's M as the span summaries store it for the walk (fixup_walk): bf16 [k][n], rows of D, in
// the first half of its fp32 block.
__device__ __forceinline__ u16* span_m16(const GdnParams& p, i64 seq, i64 span, i64 h) {
  return reinterpret_cast<u16*>(span_block(p, seq, span, h, kSumM));
}
// GDN_WALK_SKIP (1, the engine's since 2026-12-06, measured with GDN_SPAN_TAIL:
// bench/results/2026-12-06-gdn-split-tail-h100.txt; 0: the writers store zeros as M and write no word): the word after
// a span's bf16 M in its fp32 block (whose second half holds nothing else) says whether the span summaries stored M
// (0) or found the span's transition vanishing (1: span_transition_vanishes, kernels/gdn_fused_ws3.cuh) and stored
// nothing; the walk then sets x <- H_i without the product (x M_i with M_i = 0 adds +0: the seeds are the zero-M
// walk's, but for a -0 of H_i, which stays -0). Every writer of M writes the word (the thread that stores M's element
// (0, 0)), so a word left from an earlier execute is never read.
#ifndef GDN_WALK_SKIP
#define GDN_WALK_SKIP 1
#endif
__device__ __forceinline__ void put_span_m_flag(u16* m, unsigned v) { *reinterpret_cast<unsigned*>(m + D * D) = v; }
__device__ __forceinline__ unsigned span_m_flag(const u16* m) {
  return __ldg(reinterpret_cast<const unsigned*>(m + D * D));
}

// ---- the chain split's fix-up walk (gdn_span_fixup; the backward's gdn_bwd_span_fixup) ----
// One CTA of 8 warps walks one (V slice, head, sequence)'s spans in order: x (this CTA's 64 state
// rows, fp32 mma fragments) enters as the first seed; step i sets x <- x M_i + H_i (kTrans:
// x M_i^T + H_i, the reverse pass's adjoint) and stores it at seed(i). mat(i) is M_i as the span
// summaries store it, bf16 [k][n] with rows of D (span_m16); add(i) and seed(i) this CTA's rows of H_i
// and of the seed (fp32). X enters the product as bf16, fp32 accumulation from H_i. M_i lands by
// cp.async straight into its operand tile, H_i beside it, both two steps ahead (three stages); per step
// one wait, the product, then X for the next step. (Until 2026-12-05 the summaries stored M as fp32 and
// the walk rounded it to bf16 in shared memory by the same cvt.rn: the seeds are bitwise that walk's.)
struct FixupSmem {
  u16 m[3][D * LDD];     // M_i (bf16), [k][n]
  float h[3][BV * LDD];  // H_i, this CTA's rows (fp32, row stride LDD: conflict-free fragment reads)
  u16 x[BV * LDD];       // X (bf16), the A operand
};
template <bool kTrans, class Mat, class Add, class Seed>
__device__ __forceinline__ void fixup_walk(FixupSmem& sm, float (&x)[D / 16][4], i64 steps, Mat mat, Add add,
                                           Seed seed) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g8 = lane >> 2, t4 = lane & 3;
  constexpr int NTS = D / 16;
  const int ms = 16 * (warp & 3), ns = (D / 2) * (warp >> 2);
  auto request = [&](i64 i, int stage) {
    if (i < steps) {
      const u16* mg = mat(i);
      for (int e = tid; e < D * D / 8; e += kThreads) {
        const int r = e / (D / 8), c = 8 * (e % (D / 8));
        cp_async16(&sm.m[stage][r * LDD + c], mg + r * D + c, 16);
      }
      const float* hg = add(i);
      for (int e = tid; e < BV * D / 4; e += kThreads) {
        const int r = e / (D / 4), c = 4 * (e % (D / 4));
        cp_async16(reinterpret_cast<u16*>(&sm.h[stage][r * LDD + c]), reinterpret_cast<const u16*>(hg + r * D + c),
                   16);
      }
    }
    cp_async_commit();  // empty past the last step: the wait below counts groups
  };
  auto put_x = [&] {
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        st_bf2(&sm.x[v * LDD + kk], x[j][2 * hh], x[j][2 * hh + 1]);
      }
  };
  put_x();
  request(0, 0);
  request(1, 1);
  // GDN_WALK_SKIP: step i's word, loaded a step ahead (uniform: one address for the CTA).
  unsigned vanish_next = GDN_WALK_SKIP && steps > 0 ? span_m_flag(mat(0)) : 0u;
  int st = 0;
  for (i64 i = 0; i < steps; ++i) {
    const unsigned vanish = vanish_next;
    if (GDN_WALK_SKIP && i + 1 < steps) vanish_next = span_m_flag(mat(i + 1));
    cp_async_wait_group<1>();
    __syncthreads();  // M_i and H_i landed (every thread's pieces) and X written; step i - 1 read stage (i + 2) % 3
    request(i + 2, st == 0 ? 2 : st - 1);
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        const float2 f = *reinterpret_cast<const float2*>(&sm.h[st][v * LDD + kk]);
        x[j][2 * hh] = f.x;
        x[j][2 * hh + 1] = f.y;
      }
    // Forward: B = M as stored ([k][n]); kTrans: B = M^T, i.e. M's rows as [n][k].
    if (!GDN_WALK_SKIP || vanish == 0u) {
      if constexpr (kTrans) warp_mma<NTS, D>(x, sm.x + ms * LDD, LDD, sm.m[st] + ns * LDD, LDD, lane);
      else warp_mma<NTS, D, false, true>(x, sm.x + ms * LDD, LDD, sm.m[st] + ns, LDD, lane);
    }
    __syncthreads();  // every warp's reads of X done
    put_x();
    float* sg = seed(i);
#pragma unroll
    for (int j = 0; j < NTS; ++j)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int v = ms + g8 + 8 * hh, kk = ns + 8 * j + 2 * t4;
        store_f2(sg + static_cast<i64>(v) * D + kk, x[j][2 * hh], x[j][2 * hh + 1]);
      }
    st = st == 2 ? 0 : st + 1;
  }
  cp_async_wait_all();  // no copy outlives the walk (the groups past the last step are empty)
}

// ---- the inverse's block merges on tensor cores (3xTF32: fp32-accurate products) ----
// mma.sync m16n8k8 with tf32 operands and fp32 accumulation. Fragments (g = lane / 4,
// t = lane % 4): A 16 x 8 row-major, a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3
// (g + 8, t + 4); B 8 x 8, b0 (k t, n g), b1 (k t + 4, n g); C 16 x 8, c0 (g, 2t),
// c1 (g, 2t + 1), c2 (g + 8, 2t), c3 (g + 8, 2t + 1).
__device__ __forceinline__ u32 tf32_of(float x) {
  u32 r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ void mma_tf32(float (&c)[4], const u32 (&a)[4], const u32 (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// c += A[16 x K] B[K x 8] over k in [k0, k1) (multiples of 8), fp32 tiles in shared memory
// (row stride LDF) at A (row 0, col 0) and B (row 0 = k 0, col 0). kPasses 3: each product
// as hi*hi + hi*lo + lo*hi of the operands' tf32 splits (x = hi + lo): close to fp32.
// kPasses 1: hi*hi alone (tf32 operands, 11 significant bits: finer than the bf16 the
// fused prefill rounds T to before using it).
// kRaw (one pass only): the fp32 bits given to the mma as they are, which reads their tf32 part (the low
// 13 mantissa bits dropped: rounding toward zero) instead of cvt.rna's round-to-nearest.
template <int kPasses = 3, bool kRaw = false>
__device__ __forceinline__ void warp_mma_3xtf32(float (&c)[4], const float* A, const float* B, int k0, int k1,
                                                int lane) {
  static_assert(!kRaw || kPasses == 1, "warp_mma_3xtf32: raw operands in one pass only");
  static_assert(kPasses == 1 || kPasses == 3, "warp_mma_3xtf32: one pass or three");
  const int g = lane >> 2, t = lane & 3;
  for (int k = k0; k < k1; k += 8) {
    const float av[4] = {A[g * LDF + k + t], A[(g + 8) * LDF + k + t], A[g * LDF + k + t + 4],
                         A[(g + 8) * LDF + k + t + 4]};
    const float bv[2] = {B[(k + t) * LDF + g], B[(k + t + 4) * LDF + g]};
    u32 ah[4], al[4], bh[2], bl[2];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      ah[i] = kRaw ? __float_as_uint(av[i]) : tf32_of(av[i]);
      if (kPasses == 3) al[i] = tf32_of(av[i] - __uint_as_float(ah[i]));
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      bh[i] = kRaw ? __float_as_uint(bv[i]) : tf32_of(bv[i]);
      if (kPasses == 3) bl[i] = tf32_of(bv[i] - __uint_as_float(bh[i]));
    }
    if (kPasses == 3) {
      mma_tf32(c, al, bh);
      mma_tf32(c, ah, bl);
    }
    mma_tf32(c, ah, bh);
  }
}
// The negated accumulator tile to shared memory at D (row 0, col 0; row stride LDF).
__device__ __forceinline__ void store_neg_tile(float* D, const float (&c)[4], int lane) {
  const int g = lane >> 2, t = lane & 3;
  D[g * LDF + 2 * t] = -c[0];
  D[g * LDF + 2 * t + 1] = -c[1];
  D[(g + 8) * LDF + 2 * t] = -c[2];
  D[(g + 8) * LDF + 2 * t + 1] = -c[3];
}
__device__ __forceinline__ void store_tile(float* D, const float (&c)[4], int lane) {
  const int g = lane >> 2, t = lane & 3;
  D[g * LDF + 2 * t] = c[0];
  D[g * LDF + 2 * t + 1] = c[1];
  D[(g + 8) * LDF + 2 * t] = c[2];
  D[(g + 8) * LDF + 2 * t + 1] = c[3];
}

// T = (I + L)^-1 as triangular_inverse_f32, its off-diagonal blocks by two levels
// of block merges on tensor cores (every thread of the CTA calls it; 8 warps):
//   [[a, 0], [l, b]]^-1 = [[a^-1, 0], [-b^-1 l a^-1, b^-1]]
// step 1 as triangular_inverse_f32's (the 16 x 16 diagonal blocks, fp32); level 1
// merges blocks (0, 1) and (2, 3) into 32 x 32 inverses (X = l a, then -b X; warps
// 0-3, one 16 x 8 tile each), level 2 the two halves (X = L21 A, then -B X; eight
// 16 x 8 tiles of the 32 x 32 result a level, one a warp). The X of each level is
// parked in a block above the diagonal (read by no product: the k ranges skip the
// zero upper blocks of the lower-triangular operands); the bf16 copy masks those.
// kPasses: the merges' products in 3xTF32 (default) or one TF32 pass (warp_mma_3xtf32).
// kColDiag: step 1 by inverse_diagonal_blocks_col (threads 0-63) instead of the row form.
template <int kPasses = 3, bool kColDiag = false>
__device__ __forceinline__ void triangular_inverse_tc(const float* lf, float* tf, int tid) {
  if (kColDiag) {
    if (tid < 64) inverse_diagonal_blocks_col(lf, tf, tid);
  } else {
    inverse_diagonal_blocks(lf, tf, tid);
  }
  __syncthreads();
  const int lane = tid & 31, warp = tid >> 5;
  // Level 1, merge p (rows / cols 32 p ..), n-tile nt: X = L[32p+16.., 32p..] a -> parked at
  // (32 p, 32 p + 16); then T[32p+16.., 32p..] = -b X.
  const int p = (warp >> 1) & 1, nt = warp & 1, o = 32 * p;
  if (warp < 4) {
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    warp_mma_3xtf32<kPasses>(c, lf + (o + 16) * LDF + o, tf + o * LDF + o + 8 * nt, 0, 16, lane);
    store_tile(tf + o * LDF + o + 16 + 8 * nt, c, lane);
  }
  __syncthreads();
  if (warp < 4) {
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    warp_mma_3xtf32<kPasses>(c, tf + (o + 16) * LDF + o + 16, tf + o * LDF + o + 16 + 8 * nt, 0, 16, lane);
    store_neg_tile(tf + (o + 16) * LDF + o + 8 * nt, c, lane);
  }
  __syncthreads();
  // Level 2, tile (mi, nj) of the 32 x 32 result: X2 = L[32.., 0..32) A (A's block (0, 1)
  // is zero: n-tiles 2, 3 sum k from 16) -> parked at (0, 32); then T[32.., 0..32) = -B X2
  // (B's block (0, 1) is zero: m-tile 0 sums k below 16).
  const int mi = warp >> 2, nj = warp & 3;
  {
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    warp_mma_3xtf32<kPasses>(c, lf + (32 + 16 * mi) * LDF, tf + 8 * nj, nj >= 2 ? 16 : 0, 32, lane);
    store_tile(tf + 16 * mi * LDF + 32 + 8 * nj, c, lane);
  }
  __syncthreads();
  {
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    warp_mma_3xtf32<kPasses>(c, tf + (32 + 16 * mi) * LDF + 32, tf + 32 + 8 * nj, 0, mi == 0 ? 16 : 32, lane);
    store_neg_tile(tf + (32 + 16 * mi) * LDF + 8 * nj, c, lane);
  }
  __syncthreads();
}

// triangular_inverse_f32 or (TC) triangular_inverse_tc, then T's bf16 copy into t (the
// upper blocks zero); ends at a barrier. The one-pass prefill keeps the fp32 form (at
// 255 registers the tensor-core merges spill there).
template <bool TC = true>
__device__ __forceinline__ void triangular_inverse(const float* lf, float* tf, u16* t, int tid) {
  if constexpr (TC) triangular_inverse_tc(lf, tf, tid);
  else triangular_inverse_f32(lf, tf, tid);
  for (int i2 = tid; i2 < C * C; i2 += kThreads) {
    const int r = i2 / C, jj = i2 % C;
    t[r * LDC + jj] = f32_to_bf16((r >> 4) >= (jj >> 4) ? tf[r * LDF + jj] : 0.f);
  }
  __syncthreads();
}

}  // namespace opgraph_gdn
