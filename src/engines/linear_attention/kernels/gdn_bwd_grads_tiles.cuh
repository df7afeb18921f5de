// linear_attention/kernels/gdn_bwd_grads_tiles.cuh — gdn_bwd_grads's tile layouts and matrix products
// (kernels/gdn_bwd_grads.cu includes it once): the bf16 tiles' element offsets, the product of a warp tile
// (mma.sync, or under GDN_BWD_GRADS_WG wgmma a warpgroup), the fence before wgmma reads what threads stored,
// the cp.async copy of a tile into its layout, and the epilogues' fragment helpers (row dots, row stores, the
// row and column sums of a [C][C] fragment pair).
#pragma once

#include "linear_attention/kernels/gdn_bwd_common.cuh"

// GDN_BWD_GRADS_WG (the engine's build at D = 128; D = 64 keeps mma.sync): gdn_bwd_grads's matrix
// products on wgmma, each warpgroup (warps 4 q .. 4 q + 3, the warps sharing a column quarter q) one
// m64nNk16 product over the four row bands, its accumulators in the fragment layout mma.sync gives each
// warp (rows 16 (w % 4) + g, + 8; columns 8 j + 2 t, + 1), so every epilogue stays as it is. The bf16
// tiles are stored 128-byte swizzled in 64-column panels (wgmma's canonical layouts; no padding) and
// read as K-major or MN-major operands by shared-memory descriptors; the products' operands need no
// ldmatrix. The mma.sync form at D = 128 (-DGDN_BWD_GRADS_WG=0) stays for A/B runs: on the H200 the
// wgmma form took the grads kernel 5.64 -> 4.70 ms (k steps two a loop) at 16/64, 4 x 8192 with bitwise equal
// gradients (bench/results/2026-12-04-gdn-bwd-grads-wg-h200.txt).
#ifndef GDN_BWD_GRADS_WG
#define GDN_BWD_GRADS_WG (GDN_D == 128)
#endif
#ifndef GDN_BWD_WG_UNROLL
// The k steps of a product four a loop iteration (a K = 64 product whole): few descriptors live at a time
// (108 B of spill stores). On the H200 the grads kernel took 4.57 ms at 16/64, 4 x 8192 with 4, 4.68 with 2,
// 5.40 fully unrolled (8: 316 B of spills, though ptxas injects a wgmma fence in 2 places instead of every
// loop's); bench/results/2026-12-04-gdn-bwd-grads-wg-h200.txt and -gdn-bwd-suite-dbb34d1-h200.txt.
#define GDN_BWD_WG_UNROLL 4
#endif
#ifndef GDN_BWD_EARLY_LOADS
// 1 (a trial): gdn_bwd_grads requests the next head of its group's Vn, S^T and dO once the dP phase has read this
// head's, and its dVn, T and v right after the head's last products, before warp 0's epilogue (same tiles, same
// order of every product: the gradients bitwise the same). 2 (a trial): every tile of the next head requested right
// after the head's last products, before warp 0's epilogue. 0: the engine's build (every tile at the head's start).
#define GDN_BWD_EARLY_LOADS 0
#endif
#ifndef GDN_BWD_DV_STAGE
// 1 (a trial, written 2026-12-06, not yet run): gdn_bwd_grads stages a 16-bit dV written straight to the output in
// its Vn tile (free by the dVb phase) and stores it as whole 16-byte row pieces after the head's barrier, in place of
// each thread's 4-byte pairs (2 x 8 a thread a head, 8 rows x 16 bytes a warp store) right before warp 0's epilogue;
// the same bits. 0: the engine's build.
#define GDN_BWD_DV_STAGE 0
#endif
#ifndef GDN_BWD_EPI_SPREAD
// 1 (a trial): gdn_bwd_grads' per-token epilogue (dgamma's cumsum, the gate / beta transforms, dG and dBeta's
// stores) on warps 0 and 1, a row a thread (kernels/gdn_bwd_grads_epi.cuh), in place of two rows a lane of warp 0;
// dG may differ in its last bits (another summation order). 0: the engine's build.
#define GDN_BWD_EPI_SPREAD 0
#endif
#ifndef GDN_BWD_GATES_AHEAD
// 1 (a trial): gdn_bwd_grads reads the next head's gates, betas (raw, as stored) and <S^T, dS^T> partials into warp 0's
// and warp 1's registers right after the head's tiles are waited for, and at the next head's start warp 0 takes them
// through the gate / beta transforms and the chunk's cumsum in registers (the same operations, so the same bits): the
// head's start no longer waits on those loads, and one barrier of it goes. 0: the engine's build (read at the
// head's start, the cumsum after a barrier).
#define GDN_BWD_GATES_AHEAD 0
#endif
#ifndef GDN_BWD_EPI_DEFER
// 1 (a trial): gdn_bwd_grads drops the barrier at each head's start after the first, so warp 0's per-token epilogue of
// a head runs while the other warps start the next one (its tile requests, gates) instead of every warp waiting for
// it there (the same operations on the same values: the same bits). 0: the engine's build.
#define GDN_BWD_EPI_DEFER 0
#endif
#if GDN_BWD_EPI_DEFER && (GDN_BWD_EPI_SPREAD || GDN_BWD_DV_STAGE || GDN_BWD_EARLY_LOADS)
#error "GDN_BWD_EPI_DEFER: warp 0's epilogue only, and no tile read or request after the head's last barrier"
#endif
#if GDN_BWD_SDS_IN_GRADS && (GDN_BWD_GATES_AHEAD || GDN_BWD_GRADS_WIDE || !GDN_BWD_GRADS_WG)
#error "GDN_BWD_SDS_IN_GRADS (gdn_bwd_params.cuh): the engine's wgmma form without GDN_BWD_GATES_AHEAD"
#endif
#if defined(GDN_BWD_WIDE_CLOCK) && GDN_BWD_WIDE_CLOCK && !defined(GDN_BWD_CLOCK)
#define GDN_BWD_CLOCK 1  // the wide form's name for the same clocks (kernels/gdn_bwd_grads_wide.cuh: its phases)
#endif
#ifndef GDN_BWD_CLOCK
// 1 (a measuring aid, never in the engine): in gdn_bwd_grads (either form), the first thread of each warpgroup of one CTA (slot
// gridDim.x / 2, head group 0) adds its phases' cycles to a shared sum (gdn_bwd_clock[10 warpgroup + phase] at the
// end: a head's mean), which bench/gdn_bwd_ab.cu prints. Phases: [the head's first barrier (the previous head's
// epilogue), its loads and gates, dQe + dW, dT, dKd + X, dL / M2 / F, dP / M1 / E, dq + dk + dKb, dVb + dv stores +
// the row partials, warp 0's epilogue].
#define GDN_BWD_CLOCK 0
#endif
#if GDN_BWD_CLOCK
extern "C" __device__ long long gdn_bwd_clock[40] = {};
#define GCLK(i)                                      \
  do {                                               \
    if (clk_on) {                                    \
      const long long t_ = clock64();                \
      sm.clk[10 * (tid >> 7) + (i)] += t_ - clk_t;   \
      clk_t = t_;                                    \
    }                                                \
  } while (0)
#else
#define GCLK(i) \
  do {          \
  } while (0)
#endif
#if GDN_BWD_DV_STAGE && GDN_BWD_EARLY_LOADS
#error "GDN_BWD_DV_STAGE stages dV in the Vn tile, which GDN_BWD_EARLY_LOADS refills early"
#endif
#ifndef GDN_BWD_GRADS_WIDE
// 1 (a trial, d = 128): the grads kernel of kernels/gdn_bwd_grads_wide.cuh, its warpgroups on different
// full-width products at once. 0: the engine's build (this file's column-quarter form).
#define GDN_BWD_GRADS_WIDE 0
#endif
#ifndef GDN_BWD_WIDE_PREFETCH
// Under GDN_BWD_GRADS_WIDE, 1: the next head's S^T, dS^T, Vn and dO requested by the warpgroups that last read them,
// during the head before (the form's loads otherwise all wait at each head's start). 0: at the head's start.
#define GDN_BWD_WIDE_PREFETCH 0
#endif
#if GDN_BWD_GRADS_WIDE && !GDN_BWD_GRADS_WG
#error "GDN_BWD_GRADS_WIDE is written for the wgmma form at D = 128"
#endif
#if GDN_BWD_GRADS_WG
#if GDN_D != 128
#error "GDN_BWD_GRADS_WG is written for D = 128"
#endif
#include "gemm/kernels/gemm_sm90.cuh"
#include "gemm/kernels/gemm_wgmma.cuh"
#endif

namespace opgraph_gdn {
namespace bwd {
constexpr int kGT = kGdnBwdGradsThreads;  // 512
constexpr int kGW = kGT / 32;             // 16 warps
// The bf16 tiles' element offsets: [C][D] (q, k, v, dob, vn, dvn, dw), [D][D] (st), [C][C] (t, c1,
// c2). Padded rows (LDD, LDC) for mma.sync; under GDN_BWD_GRADS_WG 64-column panels of `rows` rows
// of 128 bytes, each row's 16-byte pieces XOR-swizzled by the row's index mod 8.
template <int kRows, int kLd>
struct Tile {
  static constexpr int kLdPad = kLd;
  static constexpr int kElems = GDN_BWD_GRADS_WG ? kRows * (kLd - 8) : kRows * kLd;
  static constexpr unsigned kPanelBytes = kRows * 128u;
  static __device__ __forceinline__ int at(int r, int c) {
#if GDN_BWD_GRADS_WG
    return (c >> 6) * (kRows * 64) + r * 64 + ((((c & 63) >> 3) ^ (r & 7)) << 3) + (c & 7);
#else
    return r * kLd + c;
#endif
  }
};
using TCD = Tile<C, LDD>;
using TDD = Tile<D, LDD>;
using TCC = Tile<C, LDC>;
#ifndef GDN_BWD_WG_ADDR
// 1 (the engine's since 2026-12-05: the kernel 4.544 -> 3.826 ms at 16/64, 4 x 8192 on the H200, gradients bitwise
// equal, bench/results/2026-12-05-gdn-trials-h200.txt): the grads kernel's per-thread address arithmetic cut down (Nsight Compute
// had it issue-bound on IMAD / LEA / LOP3, bench/results/2026-12-05-gdn-bwd-fused-profile-h200.txt). The
// warpgroup's column quarter made warp-uniform (a broadcast from lane 0), so the operands' descriptors are
// uniform-datapath values; each product's two descriptors formed once and advanced by constants each k step
// (kmajor_lo / mnmajor_lo + _step) instead of rebuilt from generic addresses; the epilogues' swizzled fragment
// offsets an XOR for the n-tile and an add for the second row from one offset (Frag); the tiles' cp.async pieces
// at compile-time counts, a thread's pieces one column and rows a fixed step apart (copy_tile_rows), and the v /
// dO rows from one base a head. Every address, descriptor and product is the one the engine's build forms, so
// the gradients are bitwise the same. 0: the form before (an A/B form).
#define GDN_BWD_WG_ADDR 1
#endif

// A thread's fragment elements in the tiles: rows ra = m0 + g (hh = 0) and ra + 8 (hh = 1), columns nd0 + 8 j + 2 t
// of a [C][D] tile (cd, j < 4, nd0 = (D / 4) quarter) and n0 + 8 j + 2 t of a [C][C] one (cc, j < 2, n0 = 16
// quarter). Under GDN_BWD_WG_ADDR the swizzled offsets are formed once: a row's piece index is ((col & 63) >> 3)
// XOR (r & 7), both rows share r & 7 = g, and the quarter's first piece has its low bits clear, so n-tile j is the
// first offset XOR (j << 3) and the second row the first plus 8 rows (scripts/emulate_bwd_grads_addr.py checks
// both forms against Tile::at for every thread).
struct Frag {
  int m0, g, t, quarter;
  __device__ __forceinline__ Frag(int m0_, int quarter_, int lane)
      : m0(m0_), g(lane >> 2), t(lane & 3), quarter(quarter_) {}
  __device__ __forceinline__ int cd(int hh, int j) const {
#if GDN_BWD_GRADS_WG && GDN_BWD_WG_ADDR
    // (m0 + g, (D / 4) quarter + 2 t), then the n-tile and the row.
    const int f = ((quarter >> 1) << 12) + (m0 + g) * 64 + ((((quarter & 1) << 2) ^ g) << 3) + 2 * t;
    return (f ^ (j << 3)) + hh * 512;
#else
    return TCD::at(m0 + g + 8 * hh, (D / 4) * quarter + 8 * j + 2 * t);
#endif
  }
  __device__ __forceinline__ int cc(int hh, int j) const {
#if GDN_BWD_GRADS_WG && GDN_BWD_WG_ADDR
    const int f = (m0 + g) * 64 + (((quarter << 1) ^ g) << 3) + 2 * t;  // (m0 + g, 16 quarter + 2 t)
    return (f ^ (j << 3)) + hh * 512;
#else
    return TCC::at(m0 + g + 8 * hh, 16 * quarter + 8 * j + 2 * t);
#endif
  }
};

// c[j] += A[16 x KD] . B[KD x 8j .. 8j+8] over this warp's tile (prod's A: rows m0 .. of a tile stored [m][k],
// or with AT [k][m]; B: columns n0 .. of a tile stored [n][k], or with BKN [k][n]); warp_mma's contract.
// Under GDN_BWD_GRADS_WG the warpgroup (the warps of one column quarter, every row band) forms the
// m64n(8 NT) product of all 64 rows at once on wgmma, each warp's accumulators its own band's fragments.
#if GDN_BWD_GRADS_WG
// Descriptors (128-byte swizzle, SBO 1024: the high word is the same for every tile, so each is built
// from its low word: the start address >> 4 and the LBO >> 4).
__device__ __forceinline__ unsigned long long desc_lo(u32 lo) {
  constexpr u32 kHi = static_cast<u32>(opgraph_gemm::desc(0, 0, 1024) >> 32);
  unsigned long long d;
  asm("mov.b64 %0, {%1, %2};" : "=l"(d) : "r"(lo), "r"(kHi));
  return d;
}
__device__ __forceinline__ unsigned long long kmajor(const u16* tile, int kk, unsigned panel, int row0) {
  const u32 a = static_cast<u32>(__cvta_generic_to_shared(tile)) + static_cast<u32>(kk >> 2) * panel +
                static_cast<u32>(kk & 3) * 32u + static_cast<u32>(row0) * 128u;
  return desc_lo(((a & 0x3FFFFu) >> 4) | ((16u >> 4) << 16));
}
__device__ __forceinline__ unsigned long long mnmajor(const u16* tile, int kk, unsigned panel, int col0) {
  const u32 a = static_cast<u32>(__cvta_generic_to_shared(tile)) + static_cast<u32>(kk) * 2048u +
                static_cast<u32>(col0 >> 6) * panel + static_cast<u32>(col0 & 63) * 2u;
  return desc_lo(((a & 0x3FFFFu) >> 4) | ((panel >> 4) << 16));
}
// A descriptor's low word for a K-major tile (rows row0 .., LBO 16) or an MN-major one (columns col0 .., LBO one
// panel) at k step 0; k step kk adds kmajor_step / mnmajor_step (16-byte units). Shared addresses stay below
// 0x40000, so the 14-bit start field takes the sum without a carry (GDN_BWD_WG_ADDR).
__device__ __forceinline__ u32 kmajor_lo(const u16* tile, int row0) {
  const u32 a = static_cast<u32>(__cvta_generic_to_shared(tile)) + static_cast<u32>(row0) * 128u;
  return ((a & 0x3FFFFu) >> 4) | ((16u >> 4) << 16);
}
__device__ __forceinline__ u32 mnmajor_lo(const u16* tile, unsigned panel, int col0) {
  const u32 a = static_cast<u32>(__cvta_generic_to_shared(tile)) + static_cast<u32>(col0 >> 6) * panel +
                static_cast<u32>(col0 & 63) * 2u;
  return ((a & 0x3FFFFu) >> 4) | ((panel >> 4) << 16);
}
__device__ __forceinline__ u32 kmajor_step(int kk, unsigned panel) {
  return (static_cast<u32>(kk >> 2) * panel + static_cast<u32>(kk & 3) * 32u) >> 4;
}
__device__ __forceinline__ u32 mnmajor_step(int kk) { return static_cast<u32>(kk) * (2048u >> 4); }
template <int NT>
__device__ __forceinline__ void pin_acc(float (&c)[NT][4]) {
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(c[j][e])::"memory");
}
#endif
#if GDN_BWD_GRADS_WG
// The unroll factor as a constant expression: nvcc, unlike NVRTC, does not expand a macro in `#pragma unroll`.
enum : int { kWgUnroll = GDN_BWD_WG_UNROLL };
#endif
#ifndef GDN_BWD_WG_PAIRS
// 1 (an A/B form: 0.997-1.004x on the H200, bench/results/2026-12-05-gdn-trials-h200.txt): two independent
// products of the grads kernel (dT's two, dL's with K K^T, dP's
// with Q K^T) issued as one commit group and waited for once (prod<..., false> then prod_join), instead of a full
// wait after each. 0: the engine's build.
#define GDN_BWD_WG_PAIRS 0
#endif
// kJoin false (wgmma only): the product's wgmma issued and left in flight; prod_join commits and waits for it and
// the next one.
template <int NT, int KD, bool AT, bool BKN, class TA, class TB, bool kJoin = true>
__device__ __forceinline__ void prod(float (&c)[NT][4], const u16* A, int m0, const u16* B, int n0, int lane) {
#if GDN_BWD_GRADS_WG
  opgraph_gemm::wgmma_fence();
#if GDN_BWD_WG_ADDR
  const u32 a0 = AT ? mnmajor_lo(A, TA::kPanelBytes, 0) : kmajor_lo(A, 0);
  const u32 b0 = BKN ? mnmajor_lo(B, TB::kPanelBytes, n0) : kmajor_lo(B, n0);
#pragma unroll kWgUnroll
  for (int kk = 0; kk < KD / 16; ++kk) {
    const u32 sa = AT ? mnmajor_step(kk) : kmajor_step(kk, TA::kPanelBytes);
    const u32 sb = BKN ? mnmajor_step(kk) : kmajor_step(kk, TB::kPanelBytes);
    opgraph_gemm::Wgmma<8 * NT, 0, AT ? 1 : 0, BKN ? 1 : 0>::mma(&c[0][0], desc_lo(a0 + sa), desc_lo(b0 + sb), 1);
  }
#else
#pragma unroll kWgUnroll
  for (int kk = 0; kk < KD / 16; ++kk) {
    const unsigned long long da = AT ? mnmajor(A, kk, TA::kPanelBytes, 0) : kmajor(A, kk, TA::kPanelBytes, 0);
    const unsigned long long db = BKN ? mnmajor(B, kk, TB::kPanelBytes, n0) : kmajor(B, kk, TB::kPanelBytes, n0);
    opgraph_gemm::Wgmma<8 * NT, 0, AT ? 1 : 0, BKN ? 1 : 0>::mma(&c[0][0], da, db, 1);
  }
#endif
  if constexpr (kJoin) {
    opgraph_gemm::wgmma_commit();
    opgraph_gemm::wgmma_wait<0>();
    pin_acc(c);
  }
  (void)m0;
  (void)lane;
#else
  warp_mma<NT, KD, AT, BKN>(c, AT ? A + m0 : A + m0 * TA::kLdPad, TA::kLdPad, BKN ? B + n0 : B + n0 * TB::kLdPad,
                            TB::kLdPad, lane);
#endif
}
// The products issued with kJoin false, then b's (issued with kJoin true or false): one commit group, one wait.
template <int NA, int NB>
__device__ __forceinline__ void prod_join(float (&a)[NA][4], float (&b)[NB][4]) {
#if GDN_BWD_GRADS_WG
  opgraph_gemm::wgmma_commit();
  opgraph_gemm::wgmma_wait<0>();
  pin_acc(a);
  pin_acc(b);
#else
  (void)a;
  (void)b;
#endif
}
// Generic stores into the tiles reach wgmma's reads (the async proxy) once fenced, before the barrier.
__device__ __forceinline__ void tiles_fence() {
#if GDN_BWD_GRADS_WG
  opgraph_gemm::fence_async_shared();
#endif
}
#if GDN_BWD_GRADS_WG
// This thread's pieces of a contiguous [ROWS][COLS] bf16 tile, copied into T's layout by cp.async among NTHR threads
// (pieces tid, tid + NTHR, ...: COLS / 8 pieces a row, so a thread's pieces keep their column and lie RP rows apart,
// a multiple of 8 rows, where T::at repeats its swizzle). The caller commits and waits.
template <class T, int ROWS, int COLS, int NTHR = kGT>
__device__ __forceinline__ void copy_tile_rows(u16* dst, const u16* src, int tid) {
  constexpr int P = COLS / 8, RP = NTHR / P, N = ROWS * P / NTHR;
  static_assert(RP % 8 == 0 && (ROWS * P) % NTHR == 0, "copy_tile_rows: a thread's pieces share their swizzle");
  const int r0 = tid / P, c = (tid % P) * 8;
  u16* d = dst + T::at(r0, c);
  const u16* s = src + r0 * COLS + c;
#pragma unroll
  for (int it = 0; it < N; ++it) cp_async16(d + it * RP * 64, s + it * RP * COLS, 16);
}
#endif
// Copies a rows x cols bf16 tile (global row stride gs) into tile type T's layout, 16-byte pieces by
// cp.async shared among the CTA's threads; the caller commits and waits.
template <class T>
__device__ __forceinline__ void copy_tile_to(u16* dst, const u16* src, i64 gs, int rows, int cols, int tid) {
#if GDN_BWD_GRADS_WG
  const int pieces = cols / 8;
  for (int i = tid; i < rows * pieces; i += kGT) {
    const int r = i / pieces, c = (i % pieces) * 8;
    cp_async16(dst + T::at(r, c), src + r * gs + c, 16);
  }
#else
  copy_tile<kGT>(dst, T::kLdPad, src, gs, rows, cols, tid);
#endif
}

constexpr int NTD = D / 32;  // n-tiles of a warp's [16 x D/4] piece of a [C][D] product

// Per row of a warp's [16 x D/4] fragment f, the dot product with the same
// piece of the bf16 tile x ([C][D]): r0 for row m0 + g8, r1 for m0 + g8 + 8
// (summed over the four lanes of a row).
__device__ __forceinline__ void row_dot(const float (&f)[NTD][4], const u16* x, const Frag& fr, float& r0, float& r1) {
  float a0 = 0.f, a1 = 0.f;
#pragma unroll
  for (int j = 0; j < NTD; ++j) {
    const u32 w0 = lds32(&x[fr.cd(0, j)]), w1 = lds32(&x[fr.cd(1, j)]);
    a0 += f[j][0] * bf16_to_f32(static_cast<u16>(w0)) + f[j][1] * bf16_to_f32(static_cast<u16>(w0 >> 16));
    a1 += f[j][2] * bf16_to_f32(static_cast<u16>(w1)) + f[j][3] * bf16_to_f32(static_cast<u16>(w1 >> 16));
  }
  a0 += __shfl_xor_sync(0xffffffffu, a0, 1);
  a0 += __shfl_xor_sync(0xffffffffu, a0, 2);
  a1 += __shfl_xor_sync(0xffffffffu, a1, 1);
  a1 += __shfl_xor_sync(0xffffffffu, a1, 2);
  r0 = a0;
  r1 = a1;
}
// A lane's EL consecutive elements of a row as bf16 at a: one 64-bit store at
// EL = 4 (the warp's 32 stores then fill distinct banks), 32-bit pairs otherwise.
__device__ __forceinline__ void st_row(u16* a, const float (&x)[EL]) {
  if constexpr (EL == 4) {
    uint2 w;
    w.x = pack_bf16(x[0], x[1]);
    w.y = pack_bf16(x[2], x[3]);
    *reinterpret_cast<uint2*>(a) = w;
  } else {
#pragma unroll
    for (int e = 0; e < EL; e += 2) st_bf2(a + e, x[e], x[e + 1]);
  }
}
template <int NT>
__device__ __forceinline__ void zero(float (&f)[NT][4]) {
#pragma unroll
  for (int j = 0; j < NT; ++j) f[j][0] = f[j][1] = f[j][2] = f[j][3] = 0.f;
}
// A 16 x 16 fragment pair's (j = 0, 1) row sums (over this warp's 16 columns: rows
// g8, g8 + 8) and column sums (over its 16 rows: columns 8j + 2 t4 + e), by shuffles;
// every lane ends with the sums of its rows and columns.
__device__ __forceinline__ void frag_sums(const float (&x)[2][4], float (&row)[2], float (&col)[2][2]) {
  row[0] = x[0][0] + x[0][1] + x[1][0] + x[1][1];
  row[1] = x[0][2] + x[0][3] + x[1][2] + x[1][3];
#pragma unroll
  for (int o = 1; o <= 2; o <<= 1) {
    row[0] += __shfl_xor_sync(0xffffffffu, row[0], o);
    row[1] += __shfl_xor_sync(0xffffffffu, row[1], o);
  }
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      float c = x[j][e] + x[j][2 + e];
#pragma unroll
      for (int o = 4; o <= 16; o <<= 1) c += __shfl_xor_sync(0xffffffffu, c, o);
      col[j][e] = c;
    }
}
// The dL phase's epilogue (gdn_bwd_onepass's; gdn_bwd_grads forms the same inline: routed through this and the two
// helpers below its machine code changed, scripts/gdn_sass_same.sh, 2026-12-07, so that waits for a device A/B): from
// this warp's fragments of dl = (T^T dT) T^T and kk = K K^T (rows m0 + g8 (+ 8), columns n0 + 8 j + 2 t4 (+ 1)),
// with d = -dl below the diagonal: M2 = d beta_r Gamma_rs to the c1 tile, F = d (K K^T) Gamma (its row sums to rf, a
// column quarter's partials), and E = beta_r F into ef (the dP phase adds dP . P).
__device__ __forceinline__ void dl_epilogue(const float (&dl)[2][4], const float (&kk)[2][4], const float* gam,
                                            const float* bet, const Frag& fr, int n0, u16* c1, float* rf,
                                            float (&ef)[2][4]) {
  const int g8 = fr.g, t4 = fr.t;
  float f[2][4];
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int r = fr.m0 + g8 + 8 * hh, s0 = n0 + 8 * j + 2 * t4;
      float m2[2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int s = s0 + e;
        const float gam_rs = s < r ? exp2f(gam[r] - gam[s]) : 0.f;
        const float d = -dl[j][2 * hh + e];
        f[j][2 * hh + e] = d * kk[j][2 * hh + e] * gam_rs;
        ef[j][2 * hh + e] = bet[r] * f[j][2 * hh + e];
        m2[e] = d * bet[r] * gam_rs;
      }
      st_bf2(&c1[fr.cc(hh, j)], m2[0], m2[1]);
    }
  float row[2], col[2][2];
  frag_sums(f, row, col);
  if (t4 == 0) rf[fr.m0 + g8] = row[0], rf[fr.m0 + g8 + 8] = row[1];
}
// The dP phase's epilogue: from dp = dO Vn^T (unscaled) and qk = Q K^T, M1 = scale dp Gamma_rs (s <= r) to the c2
// tile, E += M1 . (Q K^T) (= dP . P), then E's row sums to re (a column quarter's partials) and its column sums over
// the warp's 16 rows to ec (the band's partials).
__device__ __forceinline__ void dp_epilogue(const float (&dp)[2][4], const float (&qk)[2][4], const float* gam,
                                            float scale, const Frag& fr, int n0, u16* c2, float* re, float* ec,
                                            float (&ef)[2][4]) {
  const int g8 = fr.g, t4 = fr.t;
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int r = fr.m0 + g8 + 8 * hh, s0 = n0 + 8 * j + 2 * t4;
      float m1[2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int s = s0 + e;
        const float gam_rs = s <= r ? exp2f(gam[r] - gam[s]) : 0.f;
        m1[e] = scale * dp[j][2 * hh + e] * gam_rs;  // dO's scale
        ef[j][2 * hh + e] += m1[e] * qk[j][2 * hh + e];
      }
      st_bf2(&c2[fr.cc(hh, j)], m1[0], m1[1]);
    }
  float row[2], col[2][2];
  frag_sums(ef, row, col);
  if (t4 == 0) re[fr.m0 + g8] = row[0], re[fr.m0 + g8 + 8] = row[1];
  if (g8 == 0)
#pragma unroll
    for (int j = 0; j < 2; ++j) store_f2(&ec[n0 + 8 * j + 2 * t4], col[j][0], col[j][1]);
}
// Rows 2 lane and 2 lane + 1 of a chunk (one warp): dg_r = dgamma_C (dgc) + sum_{s >= r} dgamma_s, the lanes' pair
// sums scanned from the last lane down, then each token's dG and dBeta through store_gate_grads (rows below n,
// tokens tok0 ..). gate_grads_epilogue's tail, and the one-pass trials'.
__device__ __forceinline__ void gate_scan_store(const GdnBwdParams& p, i64 h, i64 tok0, int n, float dgc,
                                                const float (&dgam)[2], const float (&dbet)[2], int lane) {
  float suffix = dgam[0] + dgam[1];
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const float y = __shfl_down_sync(0xffffffffu, suffix, o);
    if (lane + o < 32) suffix += y;
  }
  const float after = suffix - dgam[0] - dgam[1];  // the lanes above this one
  const float dgr[2] = {dgc + after + dgam[1] + dgam[0], dgc + after + dgam[1]};
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int r = 2 * lane + i;
    if (r >= n) continue;
    store_gate_grads(p, h, tok0 + r, dgr[i], dbet[i]);
  }
}
// Warp 0's per-token epilogue of a chunk (gdn_bwd_onepass's; gdn_bwd_grads keeps its own inline form), rows 2 lane
// and 2 lane + 1: dgamma's and dbeta's row sums over the four column quarters' partials (rg, re less ec; rb, rf),
// dgamma_C = sum_r e^(gamma_C - gamma_r) k_r . dKd_r (rkd) + e^gamma_C <S, dS> (the nred partials in red), the
// chunk's reverse cumsum of dgamma plus dgamma_C, then each token's dG and dBeta through store_gate_grads (rows below
// n, tokens tok0 ..).
__device__ __forceinline__ void gate_grads_epilogue(const GdnBwdParams& p, i64 h, i64 tok0, int n, float gc,
                                                    const float (*rg)[C], const float (*rb)[C],
                                                    const float (*rkd)[C], const float (*re)[C],
                                                    const float (*rf)[C], const float (*ec)[C], const float* red,
                                                    int nred, int lane) {
  float dgam[2], dbet[2], kd[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int r = 2 * lane + i;
    float gs = 0.f, bs = 0.f, x = 0.f;
#pragma unroll
    for (int q4 = 0; q4 < 4; ++q4) {
      gs += rg[q4][r] + re[q4][r] - ec[q4][r];
      bs += rb[q4][r] + rf[q4][r];
      x += rkd[q4][r];
    }
    const bool in = r < n;
    dgam[i] = in ? gs : 0.f;
    dbet[i] = in ? bs : 0.f;
    kd[i] = in ? x : 0.f;
  }
  const float sum_kd = warp_sum(kd[0] + kd[1]);
  const float sds = warp_sum(lane < nred ? red[lane] : 0.f);
  const float dgc = sum_kd + exp2f(gc) * sds;
  gate_scan_store(p, h, tok0, n, dgc, dgam, dbet, lane);
}
}  // namespace bwd
}  // namespace opgraph_gdn
