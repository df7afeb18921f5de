// gemm/kernels/gemm_v2_config.cuh — the specialisation of gemm_v2 (gemm_v2.cu):
// the OPGRAPH_GEMM_* defines of the prelude (engines/gemm/gemm_kernel.cpp) as
// the kernel's constants (tile, ring, epilogue region), the static_asserts
// that bound them, and the two records the kernel's stages pass between them
// (Unit: one piece of the work list, decoded; ConsumerThread: a consumer
// thread's place in its warpgroup). Included by gemm_v2.cu and
// gemm_v2_epilogue.cuh; the defines must be set before it.
#pragma once

#include "gemm/kernels/gemm_common.cuh"

#if !defined(OPGRAPH_GEMM_IN) || !defined(OPGRAPH_GEMM_OUT) || !defined(OPGRAPH_GEMM_A_KMAJOR) || \
    !defined(OPGRAPH_GEMM_B_KMAJOR) || !defined(OPGRAPH_GEMM_TILE_N) || !defined(OPGRAPH_GEMM_STAGES) || \
    !defined(OPGRAPH_GEMM_RASTER) || !defined(OPGRAPH_GEMM_EPILOGUE_BODY)
#error "gemm_v2.cu: the specialisation prelude (engines/gemm/gemm_kernel.cpp) sets every OPGRAPH_GEMM_* define"
#endif
#ifndef OPGRAPH_GEMM_CLUSTER_M
#define OPGRAPH_GEMM_CLUSTER_M 1
#endif
#ifndef OPGRAPH_GEMM_PINGPONG
#define OPGRAPH_GEMM_PINGPONG 0
#endif
#ifndef OPGRAPH_GEMM_TILE_M
#define OPGRAPH_GEMM_TILE_M 128
#endif
#ifndef OPGRAPH_GEMM_EPI_TMA
#define OPGRAPH_GEMM_EPI_TMA 0
#endif

namespace {

using namespace opgraph_gemm;

constexpr int kBM = OPGRAPH_GEMM_TILE_M;  // 128; 64 with ping-pong; 256 cooperative (128 rows per warpgroup)
constexpr int kBN = OPGRAPH_GEMM_TILE_N;
constexpr int kBK = 64;  // one 128-byte swizzle row of 16-bit elements
constexpr int kStages = OPGRAPH_GEMM_STAGES;
constexpr bool kAK = OPGRAPH_GEMM_A_KMAJOR != 0;
constexpr bool kBKm = OPGRAPH_GEMM_B_KMAJOR != 0;
constexpr int kABytes = kBM * kBK * 2;
constexpr int kBBytes = kBN * kBK * 2;
constexpr int kFrag = kBN / 2;  // accumulators per thread of one 64-row block
// wgmma's N is at most 256: a 320-wide tile issues an n256 and an n64 wgmma
// per K step and row block (the second's accumulators follow the first's, so
// the fragment order is that of one n320 wgmma).
constexpr int kBN0 = kBN > 256 ? 256 : kBN, kBN1 = kBN - kBN0;
constexpr int kGroup = 8;       // raster band width (tiles)
constexpr int kCluster = OPGRAPH_GEMM_CLUSTER_M;
// A K-major B's TMA box (at most 256 rows): the tile (or a CTA pair's half)
// in one box, a 320-wide one in two of 160.
constexpr int kBBox = kBN / kCluster > 256 ? kBN / kCluster / 2 : kBN / kCluster;
constexpr int kPairM = kBM * kCluster;  // rows of one cluster's tile pair
constexpr bool kPing = OPGRAPH_GEMM_PINGPONG != 0;
constexpr int kMW = kPing ? kBM / 64 : kBM / 128;  // 64-row blocks one consumer warpgroup computes
constexpr int kAcc = kMW * kFrag;       // accumulators per consumer thread
constexpr int kReaders = kPing ? 4 : 8; // consumer warps that read one stage (per CTA)
// 64-row blocks of one split tile's partials in the workspace (at least 2).
constexpr int kSlotBlocks = kBM / 64 > 2 ? kBM / 64 : 2;
// Epilogue staging: each consumer warp passes its own accumulator rows (16
// of every 64-row block) through shared memory 16 columns at a time (fp32,
// rows padded to 24 floats: the fragment writes are bank-conflict free, the
// row reads at most 2-way), so the chain and the stores run in a rolled loop
// of compact code with 16-byte stores, and only __syncwarp orders the
// exchange (no warpgroup barrier in the epilogue).
constexpr int kRowsWarp = 16 * kMW;  // staging rows of one consumer warp
constexpr int kStgCols = 16, kStgLd = 24;
// wgmma groups (one K block each) a consumer keeps in flight (2 measured no
// faster than 1 in either schedule, bench/results/2026-11-30-gemm-s5-h200.txt, run S5-9).
constexpr int kDepth = 1;
static_assert(kDepth < kStages, "the ring holds the groups in flight and one stage to fill");
constexpr int kStgBytes = 8 * kRowsWarp * kStgLd * 4;  // the 8 consumer warps
// EPI_TMA (cooperative, 128-row tiles, 16-bit output): the tile, its
// pointwise chain applied in registers, leaves through TMA stores from a
// 128B-swizzled 16-bit copy in shared memory (boxes of 64 x 64), so the
// consumers go back to the mainloop after writing it instead of storing to
// global memory themselves; the run-time flag kFlagCTma says the output's
// map was encoded (16-byte aligned base and strides), else the staged
// epilogue below runs (its staging shares the copy's shared memory).
constexpr int kCHeld = OPGRAPH_GEMM_EPI_TMA;  // boxes the copy holds
constexpr bool kEpiTma = kCHeld > 0;
// The tile's 64-column boxes; a width that is not a multiple of 64 (176)
// ends on a box that overlaps the one before it (columns kBN - 64 .. kBN - 1:
// the shared columns are written to both, with the same values). A copy of
// fewer boxes than the tile has (a deeper ring beside it) is written and
// stored in passes of kCHeld boxes.
constexpr int kCBoxes = (kBN + 63) / 64;
constexpr int kCPasses = kEpiTma ? (kCBoxes + kCHeld - 1) / kCHeld : 0;
constexpr int kCBytes = kBM * kCHeld * 128;
// Boxes whose chain runs (and whose 16-bit pairs are live) together: a pass's
// (one group: the operand loads of the pass issue together), one at a time at
// 320 wide (its 160 accumulators leave no room for more: a pass of three
// spilled ~350 bytes a thread).
constexpr int kPack = kBN > 256 ? 1 : (kCHeld > 0 ? kCHeld : 1);
__host__ __device__ constexpr int box_col(int box) { return 64 * box + 64 <= kBN ? 64 * box : kBN - 64; }
static_assert(!kEpiTma || (!kPing && kBM == 128 && OPGRAPH_GEMM_OUT != 2 && kBN >= 64 && kCHeld <= kCBoxes),
              "EPI_TMA: cooperative 128-row tiles >= 64 wide, a 16-bit output, at most TILE_N / 64 boxes");
// The copy and the staged epilogue's rows share one region after the ring.
constexpr int kEpiBytes = kCBytes > kStgBytes ? kCBytes : kStgBytes;

static_assert(kBN == 16 || kBN == 32 || kBN == 64 || kBN == 128 || kBN == 176 || kBN == 256 || kBN == 320,
              "TILE_N is 16..256, a power of two, or 176 or 320");
static_assert(kBN <= 256 || (kBM == 128 && !kPing && kCluster == 1),
              "TILE_N = 320 runs 128-row cooperative tiles without CTA pairs");
static_assert(kBN < 64 || kBN % 64 == 0 || (kBKm && kCluster == 1),
              "TILE_N = 176 (not whole 64-wide boxes) takes a K-major B and no CTA pairs");
static_assert(kBKm || kBN >= 64, "an N-major B needs TILE_N >= 64 (64-element swizzle rows)");
static_assert(kStages >= 2 && kStages <= 8, "STAGES is 2..8");
static_assert(kCluster == 1 || kCluster == 2, "CLUSTER_M is 1 or 2");
static_assert(kCluster == 1 || kBKm || kBN >= 128, "a clustered N-major B splits its 64-wide boxes between the CTAs");
static_assert(kBM == 128 || (kBM == 64 && kPing) || (kBM == 256 && !kPing && kBN <= 128),
              "TILE_M is 128, 64 with ping-pong, or 256 cooperative with TILE_N <= 128");
static_assert(!kPing || kBM * kBN <= 128 * 128, "a ping-pong warpgroup holds a whole TILE_M x TILE_N tile: <= 128 x 128");
static_assert(kCluster == 1 || kBM == 128, "CTA pairs take 128-row tiles");
static_assert(kStages * (kABytes + kBBytes) + kEpiBytes + 1024 + 256 <= 232448, "shared memory over 227 KiB");

// One piece of the CTA's list, decoded (decode, gemm_v2.cu): the batch
// indices, the tile's first row and column, its counter slot, its first
// workspace slot and the step between splits' slots, the split of nsplit,
// and its K blocks kb0 .. kb1 - 1.
struct Unit {
  i64 b0, b1, m0, n0, slot, ws0, wstep, split, nsplit, kb0, kb1;
};

// One consumer thread: warpgroup cw (0 or 1) of the two consumers, thread t
// of its 128, lane and warp of t.
struct ConsumerThread {
  int cw, t, lane, warp;
};

// The 64-row block of the tile that accumulator block mi holds.
__device__ __forceinline__ int row_block(int mi, int cw) { return kPing ? mi : cw * kMW + mi; }

}  // namespace
