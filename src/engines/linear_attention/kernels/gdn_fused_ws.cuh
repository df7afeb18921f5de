// linear_attention/kernels/gdn_fused_ws.cuh — the warp-specialised forms of the fused Gated DeltaNet
// prefill (GDN_FUSED_WS = 1: the engine's PIPELINE_ARCH 3) and their entries' definition. A part of
// gdn_fused.cu, not a header of its own: gdn_fused.cu includes it (under GDN_FUSED_WS) once the pieces
// both forms share are defined (pass_range, pass_state_in / _out, chunk_gates, quarter_norms, t_copy,
// state_chunk, state_tail, store_o), and expands GDN_FUSED_ENTRY after it. The auxiliary side's inverse
// (inverse_aux) is in gdn_ws_inverse.cuh, the R3 form (ws3_pass) in gdn_fused_ws3.cuh, both included from here.
#pragma once
// ---- the warp-specialised forms (GDN_FUSED_WS = 1 builds every fused entry from them: 384
// threads, gdn_fused_ws_smem_bytes; the engine's PIPELINE_ARCH 3, la_engine.h) ----
//
// One CTA of three warpgroups per (output head, sequence) — or per span, or per (value or transition
// rows, ...) in fused_pass's other forms, whose grids and outputs it keeps (PH as fused_pass's):
//   warpgroups 0, 1  the state side: warpgroup w keeps S^T's value rows [64 w, 64 w + 64) in its
//                    accumulators and per chunk runs only the products that need the state
//                    (U^T + S^T Wn^T, S^T Q^T; P and the state update), then stores O.
//   warpgroup 2      the auxiliary side, a chunk ahead: it loads the rows (cp.async), forms the
//                    norms, the gate cumsum, L and P (wgmma), T = (I + L)^-1 (the diagonal blocks
//                    by columns, one-pass TF32 merges), T_k and T_v, Wn = -T_k K, and the token
//                    factors, all into the chunk's stage.
// Two stages, each holding what one chunk hands from the auxiliary side to the state side: the
// raw q, k, v tiles, Wn, T_v, P and the factors (e^gamma iq scale, ik e^(gamma_C - gamma), e^gamma_C).
// Named barriers hand stages over: FULL(s) (auxiliary arrives, the state side syncs) and
// EMPTY(s) (the state side arrives once done with the stage's chunk, the auxiliary side syncs
// before it loads the chunk after next into it). The auxiliary side loads chunk c + 1's rows in
// the middle of chunk c's work (after the inverse), so they land before it needs them.
// Registers: launched at 168 a thread (65536 / 384), setmaxnreg moves the auxiliary warpgroup to
// 120 and the state warpgroups to 192 (the CTA's pool balances: 2 x 128 x 24 = 128 x 48; up to
// 16 bytes of spill). The arithmetic is fused_pass's, step for step (the diagonal blocks as
// under GDN_FUSED_INV_COL); only who computes what, and when, differ.
// Where the time goes (GDN_WS_CLOCK, H200, 16/64 heads 4 x 8192; cycles a chunk): the auxiliary
// side is the critical path, busy about 11.6k (norms and the rows' wait 3.0k, L / P 2.6k, the
// inverse 3.1k, the prefetch 1.2k, T copies 0.95k, Wn 0.7k); the state side about 3.4k (its
// products 2.6k, store_o 0.7k) and waits the rest on FULL. (bar.sync is issued as DEFER_BLOCKING:
// a wait shows in the phase after the barrier, so FULL's wait reads as the S pack's.)
// GDN_WS_CLOCK (a measuring aid, never in the engine): thread 0 of the state side and of the
// auxiliary side add up clock64() spans a phase, CTA (0, 0, 0) stores them a chunk at its end
// into gdn_ws_clock (bench/gdn_fused_ab.cu prints them when the cubin has it):
//   bash bench/gdn_fused_ab.sh "-DGDN_FUSED_WS=1 -DGDN_WS_CLOCK=1"
#ifndef GDN_WS_CLOCK
#define GDN_WS_CLOCK 0
#endif
// GDN_WS_START_SYNC (default 1): every warp of the CTA meets once after its setmaxnreg, so no
// auxiliary warp exits (an empty sequence's CTA: no chunk) before the state warpgroups have taken
// the registers it released into the CTA's pool. A guard: both settings ran every A/B cell on the
// H200 within noise of each other (1.695 / 1.700 ms at 16/64 4 x 8192); 0 leaves it out.
#ifndef GDN_WS_START_SYNC
#define GDN_WS_START_SYNC 1
#endif
// GDN_WS_ROWS_AT (a variant under trial; OPGRAPH_AB_A_DEFS=-DGDN_FUSED_WS=1 bench/gdn_fused_ab.sh
// "-DGDN_FUSED_WS=1 -DGDN_WS_ROWS_AT=1"):
// where in chunk c the auxiliary side waits on EMPTY and requests chunk c + 1's rows. 0 (the
// engine's): after the inverse. 1: after the L / P epilogue, ~3k cycles earlier. 2: between
// issuing L / P and waiting on them (the requests' issue overlaps the wgmma). The clocks put
// "norms + rows' wait" at ~3.0k of the ~11.6k a chunk on the critical path; the state side is busy
// ~3.4k a chunk, so an earlier EMPTY wait should rarely block (2 may: the state side can still be
// on chunk c - 1 then). The hand-over order is the same in all three: EMPTY wait, rows, FULL arrive.
// H200 (bench/results/2026-12-03-gdn-ws-rows-at-h200.txt): 1 takes 0.966-0.994x the time of 0, outputs
// bitwise equal; 2 takes 1.00-1.07x (its EMPTY wait blocks). 1 becomes the engine's once test_la_gpu ran it.
#ifndef GDN_WS_ROWS_AT
#define GDN_WS_ROWS_AT 0
#endif
static_assert(GDN_WS_ROWS_AT >= 0 && GDN_WS_ROWS_AT <= 2, "GDN_WS_ROWS_AT takes 0, 1 or 2");
// GDN_WS_LOADS (a variant under trial): the state side requests the rows, not the auxiliary side.
// Once both state warpgroups are done with chunk c (a 256-thread named barrier), they load chunk
// c + 2's q, k, v into the stage they just left (12 cp.async a thread) and each arrives on the
// stage's mbarrier when its copies land (cp.async.mbarrier.arrive.noinc; 256 arrivals a phase);
// chunks 0 and 1 are requested before the state is read in. The auxiliary side waits on that
// mbarrier (phase c / 2 of stage c % 2) instead of its own cp.async group, and no longer waits on
// EMPTY (the rows' landing implies the state side has left the stage) nor issues row copies
// (~1.2k cycles a chunk of its critical path; GDN_WS_ROWS_AT then places only the g / beta loads).
#ifndef GDN_WS_LOADS
#define GDN_WS_LOADS 0
#endif
// GDN_WS_KE (a variant under trial): Vn^T = (V^T - S^T Ke^T) T_v^T with Ke = diag(e^gamma ik) K, as
// FlashInfer's state warpgroups form it, instead of U^T + S^T Wn^T with Wn = -T_k K: the auxiliary
// side writes -Ke (an elementwise scale of its K pieces) where Wn was and drops T_k and the Wn
// products (~1.1k cycles a chunk); the state side starts its accumulators from V^T (ldmatrix.trans
// of its V panel), adds S^T (-Ke)^T, packs X^T to bf16 and forms X^T T_v^T (one more wgmma group).
// The same product, rounded otherwise: X = V - Ke S is rounded to bf16 once, where the WY form
// rounded T_k K and T_v separately.
#ifndef GDN_WS_KE
#define GDN_WS_KE 0
#endif
// GDN_WS3_TF32RAW (on: 0.98x on the H200, O within 1.05e-4 of the cvt.rna form): the inverse's merges (inverse_aux) give the mma their fp32 operands' bits
// as they are (warp_mma_3xtf32's kRaw: tf32 by truncation) instead of converting each (cvt.rna).
#ifndef GDN_WS3_TF32RAW
#define GDN_WS3_TF32RAW 1
#endif
// GDN_WS_R3 (1: the engine's PIPELINE_ARCH 3, ws::ws3_pass below; 0: ws_pass): three row stages; the state side loads and
// normalises the rows, the auxiliary side keeps only the gates, L / P, the inverse and T_v. Its
// default is gdn_params.cuh's (the engine's launch sizes shared memory by it).
#if GDN_WS_CLOCK
extern "C" __device__ long long gdn_ws_clock[32] = {};  // [0, 8) the auxiliary side (warp 8), [8, 16) the state
// side; GDN_WS_R3: [16, 24) aux warp 10, [24, 32) aux warp 11 (the gates' warps; 11 with the longest epilogue)
#define WS_CLK_DECL long long clk_acc[8] = {0, 0, 0, 0, 0, 0, 0, 0}; long long clk_t = clock64();
#define WS_CLK(i) do { const long long t_ = clock64(); clk_acc[i] += t_ - clk_t; clk_t = t_; } while (0)
#define WS_CLK_PRINT(who, slot, nch)                                                              \
  do {                                                                                            \
    if ((who) && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && (nch) > 0)             \
      for (int i_ = 0; i_ < 8; ++i_) gdn_ws_clock[8 * (slot) + i_] = clk_acc[i_] / (nch);         \
  } while (0)
#else
// Statements either way (each use ends in ';'): 2026-12-03's hang was `if (a == 0)
// WS_CLK_PRINT(...)` with an empty expansion taking the next line (`return;`) as its body.
#define WS_CLK_DECL
#define WS_CLK(i) do { } while (0)
#define WS_CLK_PRINT(who, slot, nch) do { } while (0)
#endif
namespace opgraph_gdn {
namespace ws {

constexpr int kWsThreads = 384;
static_assert(kWsThreads == kGdnFusedWsThreads, "kGdnFusedWsThreads (the engine's launch) disagrees with the warpgroups");
// A stage (bytes from its base; stage s at s * kStageBytes).
constexpr u32 kSQ = 0, kSK = 16384, kSV = 32768;  // raw q, k, v [64][128]
constexpr u32 kSWn = 49152;                       // Wn [64][128]
constexpr u32 kSTv = 65536;                       // T_v [64][64]
constexpr u32 kSP = 73728;                        // P [64][64]
constexpr u32 kSEg = 81920;                       // scale iq e^gamma a token (O^T's column scale)
constexpr u32 kSKf = kSEg + 4 * C;                // ik e^(gamma_C - gamma) a token
constexpr u32 kSGc = kSKf + 4 * C;                // e^gamma_C (one float)
constexpr u32 kStageBytes = 82944;                // 81 KiB: the tiles stay 1024-aligned
constexpr u32 kSMbar = kStageBytes - 64;          // GDN_WS_LOADS: the stage's rows-landed mbarrier
static_assert(kSGc + 4 <= kSMbar, "stage overflow");
// The auxiliary side's scratch, after the two stages.
constexpr u32 kAT = 2 * kStageBytes;       // T_k [64][64]
constexpr u32 kALf = kAT + 8192;           // L fp32 [64][LDF]
constexpr u32 kATf = kALf + 4 * C * LDF;   // T fp32 [64][LDF]
constexpr u32 kAGam = kATf + 4 * C * LDF;  // gamma (log2 units)
constexpr u32 kABet = kAGam + 4 * C;       // beta
constexpr u32 kABe = kABet + 4 * C;        // beta e^gamma ik (T_k's column scale)
constexpr u32 kAIq = kABe + 4 * C;
constexpr u32 kAIk = kAIq + 4 * C;
constexpr u32 kWsBytes = kAIk + 4 * C;  // + 1024 to align the base: gdn_prefill_fused_smem_bytes
static_assert(GDN_WS_R3 || kWsBytes + 1024 == gdn_fused_ws_smem_bytes(D),
              "gdn_fused_ws_smem_bytes disagrees with the stages' map");

// Named barriers (0: __syncthreads; 1, 2: wg_sync of warpgroups 0, 1).
constexpr int kBarAux = 3, kBarFull = 4, kBarEmpty = 6;  // FULL(s) = 4 + s, EMPTY(s) = 6 + s
constexpr int kBarState = 6;  // GDN_WS_LOADS (no EMPTY then): the two state warpgroups, 256 threads
__device__ __forceinline__ void aux_sync() { nb_sync(kBarAux, 128); }  // nb_sync etc.: gdn_common.cuh

// L = K K^T and P = Q K^T (m64n64k128 each; the summary forms have no P), issued as one group.
template <bool kOut>
__device__ __forceinline__ void lp_issue(float (&accl)[32], float (&accp)[32], u32 sK, u32 sQ) {
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) Mma<64>::mma(accl, kdesc(sK, kk, kPanel64), kdesc(sK, kk, kPanel64), kk > 0);
  if (kOut) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) Mma<64>::mma(accp, kdesc(sQ, kk, kPanel64), kdesc(sK, kk, kPanel64), kk > 0);
  }
  wgmma_commit();
}
// Their epilogue once waited for: L's strict lower part (beta ik row, ik column, e^(gamma_r - gamma_s))
// into lf (fp32) and P's lower part (scale iq row, the same column factors) as bf16 into the swizzled
// [64][64] tile at pP (its generic address); gam, bet, ik_tok, iq_tok a token (gam, ik_tok read in pairs:
// 8-byte aligned, fc even). Plain stores, so the compiler may hoist the next elements' loads and ex2
// above them (an asm store's memory clobber held each element behind the previous one's store: 0.96x
// on the H200, bench/results/2026-12-03-gdn-ws3-aux-h200.txt); the caller's aux_sync and async-proxy
// fence order them for the readers.
// WI >= 0 (R3's GDN_WS3_EPIW: the warp's index in the warpgroup, a compile-time constant): rows 16 WI .. 16 WI + 15
// only. Columns past its diagonal block are above the diagonal for every row: nothing is written there (no reader
// takes lf's entries on or above the diagonal, and P's tile was zeroed once: ws3_pass); L goes out unmasked (its
// entries on and above the diagonal are never read, whatever their value), and P is masked only where the
// diagonal crosses its diagonal block, so the per-element masks (predicates the compiler kept as bit masks) go.
// kPG (R3's PH 4, gdn_bwd's forward recompute; WI -1): P, zeros above the diagonal included, goes to the dense
// bf16 [64][64] tile pg in global memory (the backward's chunk block) instead of the swizzled one at pP.
// GDN_WS3_F16INV (a trial, 0: off): the forward forms' inverse on fp16 tiles (gdn_ws_inverse.cuh, merges_h).
#ifndef GDN_WS3_F16INV
#define GDN_WS3_F16INV 0
#endif
constexpr int LH = 72;  // its L / T tiles' row stride (halves): 144-byte rows, an ldmatrix's 8 rows in distinct banks
// GDN_WS3_LSYM (a trial, 0: off; the fp16 build's per-warp L / P epilogue, WI >= 0): the warp of row band WI writes
// the 16 x 16 blocks of L below the diagonal of its own rows, so warp 3 formed three of the six and P's three besides
// (its L / P phase ~450 cycles over warp 2's: bench/results/2026-12-06-gdn-ws-clocks-f16inv-h100.txt). K K^T is
// symmetric before L's row and column factors (the accumulators of (r, s) and (s, r) sum the same products in the
// same order), so under 1 warp WI writes block (jb, WI) for jb in [lsym_first(WI), lsym_end(WI)) from its own
// accumulators' block (WI, jb), transposed by stmatrix.trans with row jb's factors: warp 0 blocks (1, 0) and (2, 0),
// warp 1 (2, 1) and (3, 1), warp 2 (3, 2); warp 3 keeps (3, 0) (the per-warp L + P blocks below the diagonal:
// 2, 3, 3, 4 in place of 0, 2, 4, 6). A / B: bench/gdn_ws_variants.sh with OPGRAPH_WS_BASE="-DGDN_FUSED_WS=1
// -DGDN_WS3_F16INV=1" and OPGRAPH_WS_VARIANTS="-DGDN_WS3_LSYM=1". Run on an H100 (2026-12-06,
// bench/results/2026-12-06-gdn-bwd-grads-wide-h100.txt, O and final state bitwise equal): 1.028 / 1.019x the time at
// 16/64 and 16/32, 4 x 8192, 0.980 / 0.973x on the two varlen batches; off.
#ifndef GDN_WS3_LSYM
#define GDN_WS3_LSYM 0
#endif
constexpr int lsym_first(int wi) { return wi + 1; }
constexpr int lsym_end(int wi) { return wi == 0 ? 3 : 4; }
constexpr bool lsym_direct(int wi, int jb) { return jb == wi || (wi == 3 && jb == 0); }  // blocks (wi, jb) it writes
// kH (GDN_WS3_F16INV): L as fp16 pairs, rows LH halves apart, in lf's space.
template <bool kOut, int WI = -1, bool kPG = false, bool kH = false>
__device__ __forceinline__ void lp_epilogue(const float (&accl)[32], const float (&accp)[32], const float* gam,
                                                 const float* bet, const float* ik_tok, const float* iq_tok, float scale,
                                                 float* lf, unsigned char* pP, int fr, int fc, u16* pg = nullptr) {
  static_assert(!kPG || (kOut && WI < 0), "P to global memory: the generic epilogue with P formed");
  u16* const lh = reinterpret_cast<u16*>(lf);
  const float gr[2] = {gam[fr], gam[fr + 8]};
  const float br[2] = {bet[fr] * ik_tok[fr], bet[fr + 8] * ik_tok[fr + 8]};
  const float qs[2] = {scale * iq_tok[fr], scale * iq_tok[fr + 8]};
  unsigned char* const prow = pP + fr * 128 + 2 * fc;
#pragma unroll
  for (int t = 0; t < 8; ++t) {
    if (WI >= 0 && t > 2 * WI + 1) continue;  // above the warp's diagonal block
    const int s0 = 8 * t + fc;
    const float2 g2 = *reinterpret_cast<const float2*>(gam + s0);
    const float2 k2 = *reinterpret_cast<const float2*>(ik_tok + s0);
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      if (WI >= 0 && t == 2 * WI + 1 && hh == 0) continue;  // the diagonal block's upper right quarter
      const int j = 4 * t + 2 * hh, r = fr + 8 * hh;
      const float f0 = k2.x * ex2_ftz(gr[hh] - g2.x);
      const float f1 = k2.y * ex2_ftz(gr[hh] - g2.y);
      if (WI >= 0) {
        if constexpr (kH) {
          if (!GDN_WS3_LSYM || lsym_direct(WI, t >> 1))
            *reinterpret_cast<u32*>(lh + r * LH + s0) = pack_f16(br[hh] * accl[j] * f0, br[hh] * accl[j + 1] * f1);
        } else {
          lf[r * LDF + s0] = br[hh] * accl[j] * f0;
          lf[r * LDF + s0 + 1] = br[hh] * accl[j + 1] * f1;
        }
        if (kOut) {
          const bool below = t < 2 * WI || (t == 2 * WI && hh == 1);  // every element at or below the diagonal
          const float x0 = below || s0 <= r ? qs[hh] * accp[j] * f0 : 0.f;
          const float x1 = below || s0 + 1 <= r ? qs[hh] * accp[j + 1] * f1 : 0.f;
          *reinterpret_cast<u32*>(prow + hh * 1024 + swz_chunk(r, s0)) = pack_bf16(x0, x1);
        }
        continue;
      }
      if constexpr (kH) {
        *reinterpret_cast<u32*>(lh + r * LH + s0) =
            pack_f16(s0 < r ? br[hh] * accl[j] * f0 : 0.f, s0 + 1 < r ? br[hh] * accl[j + 1] * f1 : 0.f);
      } else {
        lf[r * LDF + s0] = s0 < r ? br[hh] * accl[j] * f0 : 0.f;
        lf[r * LDF + s0 + 1] = s0 + 1 < r ? br[hh] * accl[j + 1] * f1 : 0.f;
      }
      if (kOut) {
        const float x0 = s0 <= r ? qs[hh] * accp[j] * f0 : 0.f;
        const float x1 = s0 + 1 <= r ? qs[hh] * accp[j + 1] * f1 : 0.f;
        if (kPG)
          *reinterpret_cast<u32*>(pg + r * C + s0) = pack_bf16(x0, x1);
        else
          *reinterpret_cast<u32*>(prow + hh * 1024 + swz_chunk(r, s0)) = pack_bf16(x0, x1);
      }
    }
  }
  if constexpr (kH && GDN_WS3_LSYM && WI >= 0) {
    // Blocks (jb, WI) of L from this warp's blocks (WI, jb): L[s][r] = beta_s ik_s ik_r e^(gamma_s - gamma_r)
    // (k_r . k_s) for its rows r and the block's tokens s > r. Register (hh, tt) of a block is stmatrix matrix
    // 2 tt + hh (rows 8 hh, columns 8 tt of the source block), stored transposed: lane l addresses row l % 8 of
    // matrix l / 8 in the destination (rows 8 ((l / 8) / 2), columns 8 ((l / 8) % 2)), as merges_h's stores.
    const int lane = static_cast<int>(threadIdx.x & 31), lq = lane >> 3;
    const int mr = 8 * (lq >> 1) + (lane & 7), mc = 8 * (lq & 1);
    const float ir[2] = {ik_tok[fr], ik_tok[fr + 8]};
#pragma unroll
    for (int jb = lsym_first(WI); jb < lsym_end(WI); ++jb) {
      u32 w[4];
#pragma unroll
      for (int tt = 0; tt < 2; ++tt) {
        const int t = 2 * jb + tt, s0 = 8 * t + fc;
        const float2 g2 = *reinterpret_cast<const float2*>(gam + s0);
        const float2 k2 = *reinterpret_cast<const float2*>(ik_tok + s0);
        const float c0 = bet[s0] * k2.x, c1 = bet[s0 + 1] * k2.y;  // the destination rows' factors
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int j = 4 * t + 2 * hh;
          const float x0 = c0 * accl[j] * (ir[hh] * ex2_ftz(g2.x - gr[hh]));
          const float x1 = c1 * accl[j + 1] * (ir[hh] * ex2_ftz(g2.y - gr[hh]));
          w[2 * tt + hh] = pack_f16(x0, x1);
        }
      }
      stmatrix_x4_trans(static_cast<u32>(__cvta_generic_to_shared(lh + (16 * jb + mr) * LH + 16 * WI + mc)), w[0],
                        w[1], w[2], w[3]);
    }
  }
}

}  // namespace ws
}  // namespace opgraph_gdn
#include "linear_attention/kernels/gdn_ws_inverse.cuh"
namespace opgraph_gdn {
namespace ws {

// The state side's row requests (GDN_WS_LOADS, GDN_WS_R3): thread (lr, lq) copies 16-byte pieces lq +
// 4 i of row lr of a [64][128] tile; piece[i] their swizzled offsets in a tile.
__device__ __forceinline__ void quarter_row_pieces(int lr, int lq, u32 (&piece)[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int col = 8 * lq + 32 * i;
    piece[i] = static_cast<u32>(col >> 6) * kPanel64 + static_cast<u32>(lr) * 128u + swz_chunk(lr, col);
  }
}
// Its pieces of token c0 + lr's q (kOut), k, v rows into the tiles at aq, ak, av (cp.async; a row past
// te is zero-filled, read from nowhere).
template <bool kOut>
__device__ __forceinline__ void request_quarter_row(const GdnParams& p, u32 aq, u32 ak, u32 av, const u32 (&piece)[4],
                                                    i64 bos, i64 c0, i64 te, int lr, int lq, i64 hq, i64 hk, i64 hv) {
  const bool in = c0 + lr < te;
  const i64 tok = bos + (in ? c0 + lr : 0);
  const u32 nb = in ? 16u : 0u;
  const u16* const qs = reinterpret_cast<const u16*>(p.q) + tok * p.q_ts + hq * p.q_hs + 8 * lq;
  const u16* const ks = reinterpret_cast<const u16*>(p.k) + tok * p.k_ts + hk * p.k_hs + 8 * lq;
  const u16* const vs = reinterpret_cast<const u16*>(p.v) + tok * p.v_ts + hv * p.v_hs + 8 * lq;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (kOut) cp_async16s(aq + piece[i], qs + 32 * i, nb);
    cp_async16s(ak + piece[i], ks + 32 * i, nb);
    cp_async16s(av + piece[i], vs + 32 * i, nb);
  }
}
// GDN_WS_LOADS: this thread's arrive on the mbarrier at `bar` once its cp.asyncs so far have landed.
__device__ __forceinline__ void cp_async_mbar_arrive(u32 bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ float bf16_lo(u32 w) { return bf16_to_f32(static_cast<u16>(w)); }
__device__ __forceinline__ float bf16_hi(u32 w) { return bf16_to_f32(static_cast<u16>(w >> 16)); }

// V^T's accumulator fragments (a warpgroup's m64n64 layout: vt[4 t + 2 hh + e] = V^T[16 wi + lane / 4 +
// 8 hh][8 t + 2 (lane % 4) + e]) from its V panel ([c][64 values], 128-byte rows swizzled by c % 8):
// ldmatrix.trans matrix i of step m is the 8 x 8 block (t = 2 m + i / 2, hh = i % 2), store_o's map
// (checked in float64 by scripts/emulate_fused_chunk.py). Raw bf16 pairs, r[m][i] (lo: e = 0).
__device__ __forceinline__ void v_panel_frags(u32 sVp, int wi, int lane, u32 (&r)[4][4]) {
  const int mi = lane >> 3, mk = lane & 7;
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    const int c = 8 * (2 * m + (mi >> 1)) + mk, vch = 2 * wi + (mi & 1);
    const u32 at = sVp + static_cast<u32>(c) * 128u + ((static_cast<u32>(vch) ^ static_cast<u32>(c & 7)) << 4);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[m][0]), "=r"(r[m][1]), "=r"(r[m][2]), "=r"(r[m][3])
                 : "r"(at));
  }
}

// The state side of a chunk in the X form (GDN_WS_KE, GDN_WS_R3; the arguments as state_chunk's):
//   X^T  = V^T - S^T Ke^T        Ke = diag(e^gamma ik) K   (the transition's rows: no V^T)
//   Vn^T = X^T T_v^T             (X^T packed to bf16 as a register A operand)
// then state_tail. kColScale false (GDN_WS_KE): sB is the stage's -Ke tile and the accumulators
// start from V^T. kColScale true (GDN_WS_R3): sB is K itself, and X^T = V^T - (S^T K^T) diag(ke)
// in the epilogue (ke_tok: e^gamma ik a token), so no Ke tile exists. wi, lane: the warp in the
// warpgroup.
// mid(): work of the caller's that runs while the first product group (S^T (.)^T, S^T Q^T) is in flight, between
// its commit and its wait (it must not touch st, o, or the group's operands; R3's GDN_WS3_NORMMID: the norms of the
// rows two chunks ahead).
struct NoMid {
  __device__ __forceinline__ void operator()() const {}
};
// vn_out(vt): handed Vn^T's accumulators once formed, before the state update (R3's PH 4, gdn_bwd's forward
// recompute, keeps them to store Vn).
struct NoVnOut {
  __device__ __forceinline__ void operator()(const float (&)[32]) const {}
};
template <bool kOut, bool kColScale, class Tick = NoTick, class Mid = NoMid, class VnOut = NoVnOut>
__device__ __forceinline__ void state_chunk_x(float (&st)[64], float (&o)[32], bool mrows, u32 sVp, u32 sTv, u32 sB,
                                              u32 sQ, u32 sP, u32 sK, const float* kf_tok, const float* eg_tok,
                                              const float* ke_tok, float ec, int fc, int wi, int lane, Tick tick = {},
                                              Mid mid = {}, VnOut vn_out = {}) {
  u32 sa[8][4];
#pragma unroll
  for (int kk = 0; kk < 8; ++kk)
#pragma unroll
    for (int q = 0; q < 4; ++q) sa[kk][q] = pack_bf16(st[8 * kk + 2 * q], st[8 * kk + 2 * q + 1]);
  float vt[32];
  if (!kColScale && !mrows) {
    u32 r[4][4];
    v_panel_frags(sVp, wi, lane, r);
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int j = 4 * (2 * m + (i >> 1)) + 2 * (i & 1);
        vt[j] = bf16_lo(r[m][i]);
        vt[j + 1] = bf16_hi(r[m][i]);
      }
  }
  tick(4);
  {
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      RS<64, 0>::mma(vt, sa[kk], kdesc(sB, kk, kPanel64), kColScale || mrows ? kk > 0 : 1);
      if (kOut) RS<64, 0>::mma(o, sa[kk], kdesc(sQ, kk, kPanel64), kk > 0);
    }
    wgmma_commit();
    mid();
    wgmma_wait<0>();
    pin<32>(vt);
    pin<32>(o);
  }
  if (kColScale) {
    u32 r[4][4];
    if (!mrows) v_panel_frags(sVp, wi, lane, r);
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int j = 4 * (2 * m + (i >> 1)) + 2 * (i & 1), c = 8 * (j >> 2) + fc;
        const float2 f = *reinterpret_cast<const float2*>(ke_tok + c);
        vt[j] = (mrows ? 0.f : bf16_lo(r[m][i])) - vt[j] * f.x;
        vt[j + 1] = (mrows ? 0.f : bf16_hi(r[m][i])) - vt[j + 1] * f.y;
      }
  }
  u32 xa[4][4];
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int q = 0; q < 4; ++q) xa[kk][q] = pack_bf16(vt[8 * kk + 2 * q], vt[8 * kk + 2 * q + 1]);
  {
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < C / 16; ++kk) RS<64, 0>::mma(vt, xa[kk], kdesc(sTv, kk, kPanel64), kk > 0);
    wgmma_commit();
    wgmma_wait<0>();
    pin<32>(vt);
  }
  tick(5);
  vn_out(vt);
  state_tail<kOut>(st, o, vt, sP, sK, kf_tok, eg_tok, ec, fc, tick);
}

// fused_pass's form PH (0 the forward, 1 gdn_summary, 2 span summaries, 3 span scans) on three
// warpgroups.
template <int PH>
__device__ __forceinline__ void ws_pass(const GdnParams& p, unsigned char* smem_raw) {
  constexpr bool kOut = PH == 0 || PH == 3;  // reads q, writes O
  constexpr bool kSum = PH == 1 || PH == 2;  // grid x = 2: value rows, then transition rows
  const u32 raw = static_cast<u32>(__cvta_generic_to_shared(smem_raw));
  unsigned char* base = smem_raw + ((1024u - (raw & 1023u)) & 1023u);
  const u32 sb = raw + ((1024u - (raw & 1023u)) & 1023u);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wg = warp >> 2, wi = warp & 3;
  const int fr = 16 * wi + (lane >> 2), fc = 2 * (lane & 3);
  auto frag = [&](int j) -> u32 {
    return static_cast<u32>((j & 3) >> 1) * 1024u + ((static_cast<u32>((j >> 2) & 7) ^ static_cast<u32>(fr & 7)) << 4);
  };
  const u32 frag0 = static_cast<u32>(fr) * 128u + (static_cast<u32>(fc) << 1);
  const i64 h = blockIdx.y;
  const PassRange rg = pass_range<PH>(p);
  if (!rg.run) return;
  const i64 seq = rg.seq, bos = rg.bos, tb = rg.tb, te = rg.te;
  const i64 hq = h / (p.ho / p.hq), hk = h / (p.ho / p.hk), hv = h / (p.ho / p.hv);
  const int nch = static_cast<int>((te - tb + C - 1) / C);  // chunk c: tokens tb + C c .. of the sequence
  const i64 srow = kOut ? state_row(p, seq) : seq;
  const bool mrows = kSum && blockIdx.x == 1;  // rows of M^T (uniform in the CTA)
  const float scale = static_cast<float>(p.scale);
  const bool l2 = (p.flags & kFlagL2Norm) != 0;
  auto stage_at = [&](int c) -> u32 { return sb + static_cast<u32>(c & 1) * kStageBytes; };
  auto stage_ptr = [&](int c) -> unsigned char* { return base + static_cast<u32>(c & 1) * kStageBytes; };
  const u16* const qg = reinterpret_cast<const u16*>(p.q);
  const u16* const kg = reinterpret_cast<const u16*>(p.k);
  const u16* const vg = reinterpret_cast<const u16*>(p.v);
#if GDN_WS_LOADS
  if (tid == 0) {
    opgraph_gemm::bar_init(sb + kSMbar, 256);
    opgraph_gemm::bar_init(sb + kStageBytes + kSMbar, 256);
    opgraph_gemm::bar_init_fence();
  }
  __syncthreads();
#endif

  if (wg == 2) {
    // ---------------- the auxiliary side ----------------
    setmaxnreg_dec<120>();
    if (GDN_WS_START_SYNC) __syncthreads();
    const int a = tid - 256;  // 0..127
    float* const lf = reinterpret_cast<float*>(base + kALf);
    float* const tf = reinterpret_cast<float*>(base + kATf);
    float* const gam = reinterpret_cast<float*>(base + kAGam);
    float* const bet = reinterpret_cast<float*>(base + kABet);
    float* const be_tok = reinterpret_cast<float*>(base + kABe);
    float* const iq_tok = reinterpret_cast<float*>(base + kAIq);
    float* const ik_tok = reinterpret_cast<float*>(base + kAIk);
    // Row quarters: thread a covers rows qr[0], qr[1] (virtual warps wi and wi + 4 of the
    // 8-warp layout: conflict-free swizzled pieces), pieces (lane % 4) + 4 i. The pieces and the
    // copies below are quarter_row_pieces' and request_quarter_row's work written out, as this form
    // was measured while it was the engine's PIPELINE_ARCH 3 (through the helpers it compiles to
    // other machine code); it is the A/B reference for R3 now (GDN_WS_R3=0).
    const int qm = lane >> 2, qc = 8 * (lane & 3);
    int qr[2];
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) qr[hh] = 8 * (wi + 4 * hh) + 4 * (qm & 1) + (qm >> 1);
    u32 piece_at[2][4];
#pragma unroll
    for (int hh = 0; hh < 2; ++hh)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int col = qc + 32 * i;
        piece_at[hh][i] =
            static_cast<u32>(col >> 6) * kPanel64 + static_cast<u32>(qr[hh]) * 128u + swz_chunk(qr[hh], col);
      }
    float g_raw[2] = {0.f, 0.f}, b_raw[2] = {0.f, 0.f};  // warp 8: tokens 2 lane, 2 lane + 1 of the next chunk
    auto prefetch = [&](int c) {
      const u32 at = stage_at(c);
      const i64 c0 = tb + static_cast<i64>(c) * C;
#pragma unroll
      for (int hh = 0; hh < 2 && !GDN_WS_LOADS; ++hh) {
        const bool in = c0 + qr[hh] < te;
        const i64 tok = bos + (in ? c0 + qr[hh] : 0);
        const u32 nb = in ? 16u : 0u;
        const u16* const qs = qg + tok * p.q_ts + hq * p.q_hs + qc;
        const u16* const ks = kg + tok * p.k_ts + hk * p.k_hs + qc;
        const u16* const vs = vg + tok * p.v_ts + hv * p.v_hs + qc;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          if (kOut) cp_async16s(at + kSQ + piece_at[hh][i], qs + 32 * i, nb);
          cp_async16s(at + kSK + piece_at[hh][i], ks + 32 * i, nb);
          cp_async16s(at + kSV + piece_at[hh][i], vs + 32 * i, nb);
        }
      }
      if (!GDN_WS_LOADS) cp_async_commit();
      if (wi == 0) load_gates(p, bos, c0, te, h, lane, g_raw, b_raw);
    };
    if (nch > 0) prefetch(0);
    WS_CLK_DECL
    for (int c = 0; c < nch; ++c) {
      const i64 c0 = tb + static_cast<i64>(c) * C;
      const int n = static_cast<int>(te - c0 < C ? te - c0 : C);
      const u32 st = stage_at(c);
      unsigned char* const sp = stage_ptr(c);
      float* const eg_tok = reinterpret_cast<float*>(sp + kSEg);
      float* const kf_tok = reinterpret_cast<float*>(sp + kSKf);
      const u32 sQ = st + kSQ, sK = st + kSK, sV = st + kSV;
      // Own pieces landed (GDN_WS_LOADS: the state side's, on the stage's mbarrier): fp16 inputs to
      // bf16 in place; the norms' inverses of rows qr[].
#if GDN_WS_LOADS
      opgraph_gemm::bar_wait(st + kSMbar, static_cast<u32>(c >> 1) & 1u);
#else
      cp_async_wait_all();
#endif
      float iq[2], ik[2];
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) quarter_norms(sQ, sK, sV, piece_at[hh], kOut, l2, iq[hh], ik[hh]);
      if (wi == 0) chunk_gates(p, g_raw, b_raw, n, h, lane, gam, bet);
      fence_async_shared();
      aux_sync();
      WS_CLK(0);
      const float gc = gam[C - 1];
      if ((lane & 3) == 0) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int r = qr[hh];
          const float gr = gam[r], eg = exp2f(gr);
          iq_tok[r] = iq[hh];
          ik_tok[r] = ik[hh];
          be_tok[r] = bet[r] * eg * ik[hh];
          eg_tok[r] = scale * eg * iq[hh];
          kf_tok[r] = ik[hh] * exp2f(gc - gr);
        }
      }
      if (a == 0) *reinterpret_cast<float*>(sp + kSGc) = exp2f(gc);
#if GDN_WS_KE
      // -Ke = -diag(e^gamma ik) K where Wn goes: this thread's pieces of rows qr[].
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const float f = -exp2f(gam[qr[hh]]) * ik[hh];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const uint4 w = lds128(sK + piece_at[hh][i]);
          sts128(st + kSWn + piece_at[hh][i], pack_bf16(f * bf16_lo(w.x), f * bf16_hi(w.x)),
                 pack_bf16(f * bf16_lo(w.y), f * bf16_hi(w.y)), pack_bf16(f * bf16_lo(w.z), f * bf16_hi(w.z)),
                 pack_bf16(f * bf16_lo(w.w), f * bf16_hi(w.w)));
        }
      }
#endif
      // The next chunk's rows into the other stage, once the state side is done with the chunk
      // before this one there (nothing to wait for before chunk 2); where: GDN_WS_ROWS_AT.
      auto next_rows = [&] {
        if (c + 1 < nch) {
          if (c >= 1 && !GDN_WS_LOADS) nb_sync(kBarEmpty + ((c + 1) & 1), kWsThreads);
          WS_CLK(3);
          prefetch(c + 1);
          WS_CLK(4);
        }
      };
      // L = K K^T and P = Q K^T, both here (m64n64k128 each; the summary forms have no P).
      float accl[32], accp[32];
      lp_issue<kOut>(accl, accp, sK, sQ);
      if (GDN_WS_ROWS_AT == 2) next_rows();
      aux_sync();  // the token factors
      wgmma_wait<0>();
      pin<32>(accl);
      if (kOut) pin<32>(accp);
      lp_epilogue<kOut>(accl, accp, gam, bet, ik_tok, iq_tok, scale, lf, stage_ptr(c) + kSP, fr, fc);
      aux_sync();
      WS_CLK(1);
      if (GDN_WS_ROWS_AT == 1) next_rows();
      inverse_aux(lf, tf, a);
      WS_CLK(2);
      if (GDN_WS_ROWS_AT == 0) next_rows();
      // T_k (scratch) and T_v (the stage): two tasks a thread.
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) t_copy<!GDN_WS_KE>(a + 128 * hh, tf, sb + kABe, sb + kABet, sb + kAT, st + kSTv);
      fence_async_shared();
      aux_sync();
      WS_CLK(5);
      // Wn = -T_k K, both 64-column halves (m64n64k64 each) into the stage (GDN_WS_KE: none).
#pragma unroll
      for (int half = 0; half < 2 && !GDN_WS_KE; ++half) {
        float w[32];
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < C / 16; ++kk)
          MmaBt<64>::mma(w, kdesc(sb + kAT, kk, kPanel64), mdesc(sK + static_cast<u32>(half) * kPanel64, kk), kk > 0);
        wgmma_commit();
        wgmma_wait<0>();
        pin<32>(w);
        const u32 wrow = st + kSWn + static_cast<u32>(half) * kPanel64 + frag0;
#pragma unroll
        for (int j = 0; j < 32; j += 2) sts32(wrow + frag(j), pack_bf16(-w[j], -w[j + 1]));
      }
      fence_async_shared();
      // The stage is the state side's (its writes published by the arrive).
      nb_arrive(kBarFull + (c & 1), kWsThreads);
      WS_CLK(6);
    }
    WS_CLK_PRINT(a == 0, 0, nch);  // ready + norms, L / P, inverse, EMPTY wait, prefetch, T copies, Wn
    return;
  }

  // ---------------- the state side (warpgroups 0 and 1) ----------------
  setmaxnreg_inc<192>();
  if (GDN_WS_START_SYNC) __syncthreads();
  const int v0 = 64 * wg;
#if GDN_WS_LOADS
  // Chunk c's q, k, v rows into its stage: thread tid takes row tid / 4, pieces (tid % 4) + 4 i (of
  // 16 bytes), then arrives on the stage's mbarrier when they land. Past the span's end: zeros.
  const int lr = tid >> 2, lq = tid & 3;
  u32 piece[4];
  quarter_row_pieces(lr, lq, piece);
  auto request_rows = [&](int c) {
    const u32 at = stage_at(c);
    request_quarter_row<kOut>(p, at + kSQ, at + kSK, at + kSV, piece, bos, tb + static_cast<i64>(c) * C, te, lr, lq, hq,
                              hk, hv);
    cp_async_mbar_arrive(at + kSMbar);
  };
  if (nch > 0) request_rows(0);
  if (nch > 1) request_rows(1);
#endif
  float st[64];
  pass_state_in<PH>(p, st, srow, seq, rg.span, h, v0, fr, fc, mrows);
  WS_CLK_DECL
  for (int c = 0; c < nch; ++c) {
    const i64 c0 = tb + static_cast<i64>(c) * C;
    const int n = static_cast<int>(te - c0 < C ? te - c0 : C);
    const u32 sg = stage_at(c);
    const unsigned char* const sp = stage_ptr(c);
    const float* const eg_tok = reinterpret_cast<const float*>(sp + kSEg);
    const float* const kf_tok = reinterpret_cast<const float*>(sp + kSKf);
    nb_sync(kBarFull + (c & 1), kWsThreads);
    WS_CLK(0);
    float o[32];
#if GDN_WS_KE
    state_chunk_x<kOut, false>(st, o, mrows, sg + kSV + static_cast<u32>(wg) * kPanel64, sg + kSTv, sg + kSWn, sg + kSQ,
                               sg + kSP, sg + kSK, kf_tok, eg_tok, nullptr, *reinterpret_cast<const float*>(sp + kSGc),
                               fc, wi, lane
#else
    state_chunk<kOut>(st, o, mrows, sg + kSV + static_cast<u32>(wg) * kPanel64, sg + kSTv, sg + kSWn, sg + kSQ, sg + kSP,
                      sg + kSK, kf_tok, eg_tok, *reinterpret_cast<const float*>(sp + kSGc), fc
#endif
#if GDN_WS_CLOCK
                      , [&](int i) { WS_CLK(i); }
#endif
    );
    WS_CLK(1);
    if (kOut) store_o(p, o, sg + kSV + static_cast<u32>(wg) * kPanel64, wg, wi, lane, tid, fr, fc, n, bos, c0, h, v0);
    WS_CLK(2);
    // Done with the stage: the auxiliary side may load the chunk after next into it (GDN_WS_LOADS:
    // once both state warpgroups are, this side loads it).
#if GDN_WS_LOADS
    if (c + 2 < nch) {
      nb_sync(kBarState, 256);
      request_rows(c + 2);
    }
#else
    if (c + 2 < nch) nb_arrive(kBarEmpty + (c & 1), kWsThreads);
#endif
  }
  WS_CLK_PRINT(tid == 0, 1, nch);  // FULL wait, state_chunk, store_o
  pass_state_out<PH>(p, st, srow, seq, rg.span, h, v0, fr, fc, mrows, rg.last_span);
}

}  // namespace ws
}  // namespace opgraph_gdn
#if GDN_WS_R3
#include "linear_attention/kernels/gdn_bwd_params.cuh"
#include "linear_attention/kernels/gdn_fused_ws3.cuh"
#include "linear_attention/kernels/gdn_bwd_rev_ws.cuh"
#define GDN_WS_PASS opgraph_gdn::ws::ws3_pass
extern "C" __device__ unsigned gdn_prefill_fused_smem_bytes = opgraph_gdn::ws::r3::kBytes + 1024;
#else
#define GDN_WS_PASS opgraph_gdn::ws::ws_pass
extern "C" __device__ unsigned gdn_prefill_fused_smem_bytes = opgraph_gdn::ws::kWsBytes + 1024;
#endif
#define GDN_FUSED_ENTRY(name, PH)                                                                   \
  extern "C" __global__ void __launch_bounds__(opgraph_gdn::ws::kWsThreads, 1) name(const GdnParams p) { \
    extern __shared__ __align__(16) unsigned char smem_raw[];                                       \
    GDN_WS_PASS<PH>(p, smem_raw);                                                                   \
  }
