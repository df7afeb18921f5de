// gemm/kernels/gemm_v2.cu — version 2 of the gemm family, the Hopper kernel
// (sm_90a): TMA loads into a STAGES-deep ring of 128B-swizzled shared tiles on
// mbarriers, wgmma from warp-specialised warpgroups, a persistent grid, and the
// graph's pointwise epilogue applied on the way out (accumulators staged through
// shared memory 16 columns at a time, the chain in a rolled loop, 16-byte stores).
//
//   C[b, m, n] = epilogue(sum_k A[b, m, k] * B[b, k, n])   fp32 accumulation
//
// CTA = 3 warpgroups (384 threads). Warpgroup 0 is the producer: one thread
// issues cp.async.bulk.tensor for A (128 x 64) and B (TILE_N x 64) per K block
// into stage s, completing on full[s]; it waits on empty[s] before reusing a
// stage. Warpgroups 1 and 2 are consumers: each owns 64 rows of the 128-row
// tile and runs wgmma.m64n<TILE_N>k16 (4 per K block), releasing a stage (one
// arrival per consumer warp on empty[s]) once the wgmma group that read it has
// retired (wait_group 1 keeps one group in flight). Registers are rebalanced
// with setmaxnreg (producer 40, consumers 232).
//
// PINGPONG = 1 (TILE_M x TILE_N <= 128 x 128): the consumer warpgroups take
// whole tiles in turn instead of halves of each (TILE_M / 64 m64 wgmmas per
// k16 step, TILE_M x TILE_N accumulators per warpgroup; TILE_M = 64 with
// TILE_N = 256 issues one m64n256 wgmma per k16 step, half the instructions
// of 128 x 128 for the same work). The producer fills the ring in unit order, so
// one warpgroup's mainloop follows the other's on the tensor cores while the
// other runs its epilogue (mostly hidden: 4096^3 + bias + gelu costs 3-10%
// against the plain product); a pair of named barriers hands the mainloop over
// (see the consumer loop). One warpgroup alone keeps the tensor cores fed, so
// its loop between wgmmas is kept short (descriptors by offset, below).
//
// Work: each CTA (cluster) walks its own list of pieces (batch, tile, K
// range), gemm_sched.cuh: whole tiles round robin (grid = min(units, SMs)),
// then the split tiles, cut either uniformly (SPLIT_K_SLC: every tile) or
// stream-K (the tiles past the last whole wave: their K blocks in one even
// range per CTA, so no SM idles through a partial wave). Tiles are rastered in
// bands of 8 tiles along M (RASTER 0) or N (RASTER 1) so co-resident CTAs share
// panels in L2. A split piece writes fp32 partials (fragment order, its own
// workspace slot) to the workspace; the piece that counts last on the tile's
// counter sums every split in split order (deterministic), applies the
// epilogue, stores, and resets the counter to 0 for the next launch.
//
// Layouts: A K-major (box 64 K x 128 M) or M-major (two 64 M x 64 K boxes); B
// K-major (box 64 K x TILE_N) or N-major (TILE_N / 64 boxes of 64 N x 64 K,
// so TILE_N >= 64). wgmma's transpose bits select the major-ness; descriptors
// use the 128B-swizzle canonical layouts (K-major: rows of 128 B, 8-row groups
// 1024 B apart; MN-major: 64-element rows per K, 8-K groups 1024 B apart,
// 64-element MN blocks 8192 B apart). Out-of-range rows/columns/K are
// zero-filled by TMA; stores are guarded, so any M, N, K works. Extents,
// batch, strides and the split count are run-time arguments.
//
// Specialisation (prelude #defines, engines/gemm/gemm_kernel.cpp):
//   OPGRAPH_GEMM_IN (0 bf16, 1 fp16), OPGRAPH_GEMM_OUT (0 bf16, 1 fp16, 2 fp32),
//   OPGRAPH_GEMM_A_KMAJOR, OPGRAPH_GEMM_B_KMAJOR, OPGRAPH_GEMM_TILE_N (16..256 powers of two; 176; 320),
//   OPGRAPH_GEMM_STAGES, OPGRAPH_GEMM_RASTER, OPGRAPH_GEMM_EPILOGUE_BODY,
//   OPGRAPH_GEMM_CLUSTER_M (1, or 2: see below; 1 when not defined),
//   OPGRAPH_GEMM_PINGPONG (0 cooperative, 1 ping-pong; 0 when not defined),
//   OPGRAPH_GEMM_TILE_M (128; 64 with ping-pong; 256 cooperative with TILE_N <= 128; 128 when not defined),
//   OPGRAPH_GEMM_EPI_TMA (the TMA-store epilogue below, through GemmV2Params::c_map: the number of
//   64-column boxes its copy of the tile holds, 1..TILE_N / 64 rounded up; 0, or not defined: off).
//
// CLUSTER_M = 2: the grid runs in clusters of two CTAs stacked along M; the
// pair works on tiles (2 pm, tn) and (2 pm + 1, tn) together, so they share
// B's tile. Each CTA loads its own A and one half of B (TILE_N / 2 rows of a
// K-major B; every other 64-wide box of an N-major B) and multicasts that half
// to both CTAs, which halves B's L2 traffic. A stage is refilled only when the
// consumers of BOTH CTAs released it (empty[s] counts 16 arrivals, 8 of them
// remote). A pair whose second tile lies past M still loads (TMA zero-fills)
// and skips its stores. Cluster barriers order the barrier set-up before any
// remote access and keep each CTA alive until its peer is done with it.
//
// Stages (one __device__ function each, below; the kernel is their sequence):
//   carve_smem         the dynamic shared memory: the ring, the epilogue's region, the barriers
//   work_list          this CTA's list of pieces (gemm_sched.cuh) and its rank in the cluster
//   init_barriers      the ring's full[] / empty[] mbarriers, visible to the cluster
//   produce            warpgroup 0: TMA loads of every piece's K blocks into the ring
//   consume            warpgroups 1 and 2, per piece of the list:
//     mainloop_issue     wgmma over the piece's K blocks, stages released behind
//     mainloop_retire    the last wgmma groups retired, their stages released
//     reduce_splits      a split tile's partials out; the last piece sums them
//     store_tile_tma     EPI_TMA: the chain in registers, a 16-bit copy, TMA stores
//     store_tile_staged  otherwise: the chain and the stores through per-warp staging rows
//   finish             outstanding TMA stores; the pair's last cluster barrier
// The launch contract is ONE argument, GemmV2Params (gemm_params.cuh, the
// header the host fills it from): the problem (GemmParams), the tensor maps
// of A, B and (EPI_TMA) C, the split-K scratch and the schedule's run-time
// fields. Dynamic shared memory: gemm_v2_smem_bytes. The Hopper instructions
// are gemm_sm90.cuh's wrappers; the wgmma shapes gemm_wgmma.cuh's.
#include "gemm/kernels/gemm_common.cuh"
#include "gemm/kernels/gemm_sched.cuh"
#include "gemm/kernels/gemm_sm90.cuh"
#include "gemm/kernels/gemm_wgmma.cuh"

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

// Ping-pong order: barrier 3 + w lets warpgroup w start its next mainloop; the
// other warpgroup arrives (128 threads) once it has issued its own, w syncs.
constexpr int kOrderBar = 3;
__device__ __forceinline__ void order_wait(int cw) { named_sync<256>(kOrderBar + cw); }
__device__ __forceinline__ void order_pass(int cw) { named_arrive<256>(kOrderBar + (cw ^ 1)); }

struct Unit {
  i64 b0, b1, m0, n0, slot, ws0, wstep, split, nsplit, kb0, kb1;
};

// Item `it` of this cluster's list (CLUSTER_M = 1: of this CTA), false past
// its end (the pieces: gemm_sched.cuh); `rank` picks the CTA's tile of the
// pair. Tiles are counted in pairs of kPairM rows.
__device__ __forceinline__ bool decode(const GemmParams& p, const opgraph_gemm_sched::Sched& sc, i64 cluster, i64 it,
                                       int rank, Unit& w) {
  opgraph_gemm_sched::Piece pc;
  if (!opgraph_gemm_sched::piece_at(sc, cluster, it, pc)) return false;
  const i64 tiles_m = (p.m + kPairM - 1) / kPairM, tiles_n = (p.n + kBN - 1) / kBN, tiles = tiles_m * tiles_n;
  w.split = pc.split, w.nsplit = pc.nsplit, w.kb0 = pc.kb0, w.kb1 = pc.kb1;
  // Counters and workspace slots per CTA tile: a pair's two tiles side by side.
  w.slot = pc.counter * kCluster + rank, w.ws0 = pc.ws0 * kCluster + rank, w.wstep = pc.wstep * kCluster;
  const i64 pair = pc.tile;
  const i64 bt = pair / tiles, t = pair % tiles;
  w.b0 = bt / p.batch1;
  w.b1 = bt % p.batch1;
#if OPGRAPH_GEMM_RASTER == 0
  const i64 band = t / (kGroup * tiles_n), first = band * kGroup;
  const i64 width = tiles_m - first < kGroup ? tiles_m - first : kGroup;
  const i64 in = t % (kGroup * tiles_n);
  const i64 tm = first + in % width, tn = in / width;
#else
  const i64 band = t / (kGroup * tiles_m), first = band * kGroup;
  const i64 width = tiles_n - first < kGroup ? tiles_n - first : kGroup;
  const i64 in = t % (kGroup * tiles_m);
  const i64 tn = first + in % width, tm = in / width;
#endif
  // The CTA's own tile: row block kCluster * tm + rank.
  w.m0 = tm * kPairM + rank * kBM;
  w.n0 = tn * kBN;
  return true;
}

// Eight adjacent outputs from `x` at element offset `off` (16-byte aligned):
// one 16-byte store (two for fp32); 16-bit outputs round to nearest even.
__device__ __forceinline__ void store8(const GemmParams& p, i64 off, const float* x) {
#if OPGRAPH_GEMM_OUT == 2
  float4* d = reinterpret_cast<float4*>(reinterpret_cast<float*>(p.c.ptr) + off);
  d[0] = make_float4(x[0], x[1], x[2], x[3]);
  d[1] = make_float4(x[4], x[5], x[6], x[7]);
#else
  u32 v[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
#if OPGRAPH_GEMM_OUT == 0
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(v[j]) : "f"(x[2 * j + 1]), "f"(x[2 * j]));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(v[j]) : "f"(x[2 * j + 1]), "f"(x[2 * j]));
#endif
  }
  *reinterpret_cast<uint4*>(reinterpret_cast<unsigned short*>(p.c.ptr) + off) = make_uint4(v[0], v[1], v[2], v[3]);
#endif
}

template <bool B>
struct Flag {
  static constexpr bool value = B;
};

// Column chunk c (kStgCols wide) of a consumer warp's accumulators into its
// own staging rows (row mi * 16 + r holds the warp's row r of 64-row block
// mi). A chain of compile-time cases: register indices must be constants,
// and the caller's chunk loop stays rolled.
template <int C>
__device__ __forceinline__ void stage_chunk(int c, const float* acc, float* buf, int lane) {
  if (c == C) {
#pragma unroll
    for (int mi = 0; mi < kMW; ++mi)
#pragma unroll
      for (int jj = 0; jj < kStgCols / 8; ++jj)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int jb = C * (kStgCols / 8) + jj;
          const int r = mi * 16 + lane / 4 + 8 * h;
          *reinterpret_cast<float2*>(buf + r * kStgLd + jj * 8 + 2 * (lane % 4)) =
              make_float2(acc[mi * kFrag + jb * 4 + 2 * h], acc[mi * kFrag + jb * 4 + 2 * h + 1]);
        }
    return;
  }
  if constexpr (C + 1 < kBN / kStgCols) stage_chunk<C + 1>(c, acc, buf, lane);
}


// --- stage: shared memory ----------------------------------------------------

// The dynamic shared memory, from a 1024-byte aligned base (the swizzled
// tiles need it): the ring (kStages A tiles, then kStages B tiles), the
// epilogue region (kEpiBytes: EPI_TMA's copy, kCHeld boxes of kBM x 64, or
// the staged epilogue's rows), then the mbarriers full[kStages] and
// empty[kStages], 8 bytes each. gemm_v2_smem_bytes is its size.
struct Smem {
  u32 sa, sb;     // stage s of A at sa + s * kABytes, of B at sb + s * kBBytes
  u32 cst;        // the epilogue region (shared address)
  u32 bars;       // the barriers
  float* stg;     // the epilogue region (generic pointer: the staged epilogue's rows)
  __device__ __forceinline__ u32 full(int s) const { return bars + 8u * static_cast<u32>(s); }
  __device__ __forceinline__ u32 empty(int s) const { return bars + 8u * static_cast<u32>(kStages + s); }
};

__device__ __forceinline__ Smem carve_smem(unsigned char* smem_raw) {
  const u32 raw = smem_u32(smem_raw);
  const u32 base = (raw + 1023u) & ~1023u;
  Smem m;
  m.sa = base;
  m.sb = base + kStages * kABytes;
  m.cst = m.sb + kStages * kBBytes;
  m.bars = m.cst + kEpiBytes;
  m.stg = reinterpret_cast<float*>(smem_raw + (m.cst - raw));
  return m;
}

// A position in the ring: stage s, and the parity of its current phase.
struct RingPos {
  int s = 0;
  u32 ph = 0;
  __device__ __forceinline__ void next() {
    if (++s == kStages) s = 0, ph ^= 1u;
  }
  // Past n stages (those of the other ping-pong warpgroup's unit).
  __device__ __forceinline__ void skip(i64 n) {
    const i64 at = s + n;
    s = static_cast<int>(at % kStages);
    ph ^= static_cast<u32>((at / kStages) & 1);
  }
};

// --- stage: the work list and the barriers ----------------------------------

// This CTA's work: the list of cluster `first` = blockIdx.x / CLUSTER_M of
// gridDim.x / CLUSTER_M resident clusters (gemm_sched.cuh), and the CTA's
// rank in its cluster (0 without clusters), which picks its tile of a pair.
struct WorkList {
  opgraph_gemm_sched::Sched sched;
  i64 first;
  int rank;
};

__device__ __forceinline__ WorkList work_list(const GemmV2Params& g) {
  const GemmParams& p = g.problem;
  WorkList wl;
  wl.rank = kCluster == 1 ? 0 : static_cast<int>(cta_rank());
  wl.first = blockIdx.x / kCluster;
  wl.sched = opgraph_gemm_sched::Sched{((p.m + kPairM - 1) / kPairM) * ((p.n + kBN - 1) / kBN) * p.batch0 * p.batch1,
                                       (p.k + kBK - 1) / kBK,
                                       g.splits,
                                       g.split_from,
                                       gridDim.x / kCluster,
                                       (g.flags & kFlagStreamK) != 0};
  return wl;
}

// full[s] completes when stage s holds its A and B boxes (one arrival, the
// producer's, plus the bytes); empty[s] when every consumer warp of every
// CTA that reads stage s released it. Set up by thread 0, visible to the
// cluster before any thread of it goes on.
__device__ __forceinline__ void init_barriers(const Smem& sm) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      bar_init(sm.full(s), 1);
      bar_init(sm.empty(s), kReaders * kCluster);  // one arrival per consumer warp of every CTA reading the stage
    }
    bar_init_fence();
  }
  if constexpr (kCluster == 1) __syncthreads();
  else cluster_sync();
}

// --- stage: the producer -----------------------------------------------------

// Warpgroup 0 (registers down to 40); one thread issues every load. For
// each piece of the list, for each of its K blocks: wait until stage s is
// empty, expect its bytes on full[s], load A's box(es) and B's (CTA pairs:
// this CTA's half of B, multicast to both) into stage s.
__device__ __forceinline__ void produce(const GemmV2Params& g, const Smem& sm, const WorkList& wl) {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
  if (threadIdx.x != 0) return;
  tma_prefetch(&g.a_map);
  tma_prefetch(&g.b_map);
  RingPos r;
  for (i64 it = 0;; ++it) {
    Unit w;
    // Opaque per piece: what the walk derives from the list (this cluster's
    // stream-K range, the uniform schedule's unit count) is recomputed per
    // piece instead of being held across the K loop in the producer's 40
    // registers, where it spilled (8-56 bytes a kernel; none now, but 24 in
    // one CTA-pair kernel: scripts/gemm_kernel_resources.py).
    i64 first = wl.first;
    opgraph_gemm_sched::Sched sc = wl.sched;
    asm volatile("" : "+l"(first), "+l"(sc.tiles), "+l"(sc.split_from), "+l"(sc.splits));
    if (!decode(g.problem, sc, first, it, wl.rank, w)) break;
    const int ca1 = (g.flags & kFlagA1) ? static_cast<int>(w.b1) : 0,
              ca0 = (g.flags & kFlagA0) ? static_cast<int>(w.b0) : 0;
    const int cb1 = (g.flags & kFlagB1) ? static_cast<int>(w.b1) : 0,
              cb0 = (g.flags & kFlagB0) ? static_cast<int>(w.b0) : 0;
    const int m0 = static_cast<int>(w.m0), n0 = static_cast<int>(w.n0);
    for (i64 kb = w.kb0; kb < w.kb1; ++kb) {
      const int s = r.s;
      bar_wait(sm.empty(s), r.ph ^ 1u);
      bar_expect_tx(sm.full(s), kABytes + kBBytes);
      const int k0 = static_cast<int>(kb * kBK);
      const u32 da = sm.sa + static_cast<u32>(s) * kABytes, db = sm.sb + static_cast<u32>(s) * kBBytes;
      if constexpr (kAK) {
        tma_load(da, &g.a_map, k0, m0, ca1, ca0, sm.full(s));
      } else {
#pragma unroll
        for (int c = 0; c < kBM / 64; ++c) tma_load(da + c * 8192u, &g.a_map, m0 + 64 * c, k0, ca1, ca0, sm.full(s));
      }
      if constexpr (kCluster == 1) {
        if constexpr (kBKm) {
#pragma unroll
          for (int c = 0; c < kBN / kBBox; ++c)
            tma_load(db + c * kBBox * 128u, &g.b_map, k0, n0 + c * kBBox, cb1, cb0, sm.full(s));
        } else {
#pragma unroll
          for (int c = 0; c < kBN / 64; ++c) tma_load(db + c * 8192u, &g.b_map, n0 + 64 * c, k0, cb1, cb0, sm.full(s));
        }
      } else {
        // This CTA's half of B, to both CTAs of the pair.
        if constexpr (kBKm) {
          tma_load_mc(db + static_cast<u32>(wl.rank) * (kBBytes / 2), &g.b_map, k0, n0 + wl.rank * (kBN / 2), cb1, cb0,
                      sm.full(s), 0x3);
        } else {
#pragma unroll
          for (int c = 0; c < kBN / 64; c += 2)
            tma_load_mc(db + (c + wl.rank) * 8192u, &g.b_map, n0 + 64 * (c + wl.rank), k0, cb1, cb0, sm.full(s), 0x3);
        }
      }
      r.next();
    }
  }
}

// --- stage: the consumer mainloop ----------------------------------------------

// One consumer thread: warpgroup cw (0 or 1) of the two consumers, thread t
// of its 128, lane and warp of t.
struct ConsumerThread {
  int cw, t, lane, warp;
};

// The 64-row block of the tile that accumulator block mi holds.
__device__ __forceinline__ int row_block(int mi, int cw) { return kPing ? mi : cw * kMW + mi; }

// A consumer warp's release of stage s: its own CTA's empty[s], and the
// peer's when the peer's producer multicast into this CTA.
__device__ __forceinline__ void release_stage(const Smem& sm, int s, int rank) {
  if constexpr (kCluster == 1) {
    bar_arrive(sm.empty(s));
  } else {
    bar_arrive(sm.empty(s));
    bar_arrive_remote(peer_addr(sm.empty(s), static_cast<u32>(rank ^ 1)));
  }
}

// acc := the wgmma products of the piece's nki K blocks, from ring position
// r on (left one past the piece's last stage). kDepth wgmma groups stay in
// flight: a stage is released (by lane 0 of each warp) once the group
// kDepth back, the one that read it, has retired; mainloop_retire retires
// the rest. a_lo0 / b_lo0: the low words of stage 0's descriptors (address
// >> 4, leading byte offset >> 4 << 16); a stage, K step or row block adds
// its byte offset >> 4 (shared addresses stay below 2^18: the 14-bit field
// never carries). The high word is the same for every descriptor (desc_of).
// A ping-pong warpgroup issues the tensor cores' whole stream alone, so the
// instructions between its wgmmas count: building each descriptor from the
// address (mask, shift, or) made ping-pong 8-12% slower (run S5-8).
__device__ __forceinline__ void mainloop_issue(const Smem& sm, RingPos& r, float (&acc)[kAcc], int nki,
                                               const ConsumerThread& ct, int rank, u32 a_lo0, u32 b_lo0) {
  // Zero also for a piece without K blocks (K = 0).
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;
  for (int i = 0; i < nki; ++i) {
    const int s = r.s;
    bar_wait(sm.full(s), r.ph);
    const u32 a_lo = a_lo0 + static_cast<u32>(s) * (kABytes >> 4), b_lo = b_lo0 + static_cast<u32>(s) * (kBBytes >> 4);
    wgmma_fence();
    fence_acc<kAcc>(acc);
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk) {
      const u64 db = desc_of(b_lo + (kBKm ? kk * 2 : kk * 128));
#pragma unroll
      for (int mi = 0; mi < kMW; ++mi) {
        const int rb = row_block(mi, ct.cw);
        const u64 da = desc_of(a_lo + static_cast<u32>(kAK ? rb * 512 + kk * 2 : rb * 512 + kk * 128));
        Wgmma<kBN0, OPGRAPH_GEMM_IN, kAK ? 0 : 1, kBKm ? 0 : 1>::mma(acc + mi * kFrag, da, db,
                                                                   (i > 0 || kk > 0) ? 1 : 0);
        if constexpr (kBN1 > 0) {
          // B's columns kBN0.. : kBN0 rows (K-major) or kBN0 / 64 boxes of 8192 B (N-major) further on.
          const u64 db1 = desc_of(b_lo + (kBKm ? kk * 2 + kBN0 * 8 : kk * 128 + kBN0 / 64 * 512));
          // (kBN1 : 16: the name must exist where kBN1 is 0, though never called.)
          Wgmma<(kBN1 > 0 ? kBN1 : 16), OPGRAPH_GEMM_IN, kAK ? 0 : 1, kBKm ? 0 : 1>::mma(
              acc + mi * kFrag + kBN0 / 2, da, db1, (i > 0 || kk > 0) ? 1 : 0);
        }
      }
    }
    wgmma_commit();
    fence_acc<kAcc>(acc);
    if (i >= kDepth) {
      wgmma_wait<kDepth>();
      if (ct.lane == 0) release_stage(sm, s >= kDepth ? s - kDepth : s + kStages - kDepth, rank);
    }
    r.next();
  }
}

// Every wgmma group of the piece retired (acc is final), and the stages of
// the last min(nki, kDepth) groups released (r.s is one past the last).
__device__ __forceinline__ void mainloop_retire(const Smem& sm, const RingPos& r, float (&acc)[kAcc], int nki,
                                                const ConsumerThread& ct, int rank) {
  wgmma_wait<0>();
  fence_acc<kAcc>(acc);
  const int s = r.s;
  if (ct.lane == 0)
    for (int j = nki < kDepth ? nki : kDepth; j >= 1; --j) release_stage(sm, s >= j ? s - j : s + kStages - j, rank);
}

// --- stage: split-K / stream-K reduction -------------------------------------

// A piece of a split tile (w.nsplit > 1): writes its partials in fragment
// order to its workspace slot (thread t's float4 j of 64-row block rb at
// [j][t]) and counts itself on the tile's counter, one per (tile, consumer
// warpgroup) (cooperative) or per tile (ping-pong: counter 0 of the pair).
// The piece that counts last resets the counter to 0 (for the next launch),
// sums every split's partials in split order into acc (deterministic) and
// returns true: it stores the tile. The others return false.
__device__ __forceinline__ bool reduce_splits(const GemmV2Params& g, const Unit& w, float (&acc)[kAcc],
                                              const ConsumerThread& ct, int* last_flag) {
  float* ws = reinterpret_cast<float*>(g.workspace);
  const i64 per = static_cast<i64>(kFrag) * 128;
  auto slot = [&](i64 sp, int rb) { return ((w.ws0 + sp * w.wstep) * kSlotBlocks + rb) * per; };
#pragma unroll
  for (int mi = 0; mi < kMW; ++mi) {
    float4* mine = reinterpret_cast<float4*>(ws + slot(w.split, row_block(mi, ct.cw)));
    const float* a = acc + mi * kFrag;
#pragma unroll
    for (int j = 0; j < kFrag / 4; ++j)
      mine[j * 128 + ct.t] = make_float4(a[4 * j], a[4 * j + 1], a[4 * j + 2], a[4 * j + 3]);
  }
  __threadfence();
  named_sync<128>(1 + ct.cw);
  if (ct.t == 0) {
    unsigned int* cnt = reinterpret_cast<unsigned int*>(g.counters) + w.slot * 2 + (kPing ? 0 : ct.cw);
    const unsigned int old = atomicAdd(cnt, 1u);
    const bool last = old == static_cast<unsigned int>(w.nsplit - 1);
    if (last) *cnt = 0u;
    last_flag[ct.cw] = last ? 1 : 0;
  }
  named_sync<128>(1 + ct.cw);
  if (!last_flag[ct.cw]) return false;
  __threadfence();
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;
  for (i64 sp = 0; sp < w.nsplit; ++sp) {
#pragma unroll
    for (int mi = 0; mi < kMW; ++mi) {
      const float4* part = reinterpret_cast<const float4*>(ws + slot(sp, row_block(mi, ct.cw)));
      float* a = acc + mi * kFrag;
#pragma unroll
      for (int j = 0; j < kFrag / 4; ++j) {
        const float4 v = __ldcg(part + j * 128 + ct.t);
        a[4 * j] += v.x;
        a[4 * j + 1] += v.y;
        a[4 * j + 2] += v.z;
        a[4 * j + 3] += v.w;
      }
    }
  }
  return true;
}

// --- stage: the epilogue, through TMA stores (EPI_TMA) -----------------------

// The tile's outputs (this warpgroup's 64 rows), the graph's pointwise chain
// applied in registers, leave through TMA stores of a 16-bit copy in shared
// memory at cst. Per pass of kCHeld boxes, per group of kPack boxes: the
// chain runs on the group's fragments (interior tiles unguarded, edge tiles
// per element: an operand is never read past M or N), packed into 16-bit
// pairs, and every thread writes its pairs into this warpgroup's 64 rows of
// each box (128B swizzle: 16-byte chunk c of row r sits at c ^ (r & 7)); then
// thread 0 stores the pass's boxes. A pass writes the copy once the stores
// issued from it before (thread 0 of this warpgroup issued them) have read
// it; its first group's chain (and operand loads) runs before that wait. TMA
// clips rows and columns past the output. The stores complete in the
// background: the next pass or tile waits for their reads, finish() for them.
__device__ __forceinline__ void store_tile_tma(const GemmV2Params& g, const Unit& w, const float (&acc)[kAcc], u32 cst,
                                               const ConsumerThread& ct) {
  const GemmParams& p = g.problem;
  const int cw = ct.cw, warp = ct.warp, lane = ct.lane, t = ct.t;
  const bool interior = w.m0 + kBM <= p.m && w.n0 + kBN <= p.n;
  u32 pk[kPack][8][2];
  auto pack = [&](int box0, auto guarded) {
    const i64 b0 = w.b0, b1 = w.b1;
#pragma unroll
    for (int gi = 0; gi < kPack; ++gi) {
      if (box0 + gi >= kCBoxes) break;
#pragma unroll
      for (int chunk = 0; chunk < 8; ++chunk)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int jb = box_col(box0 + gi) / 8 + chunk;
          const int row = cw * 64 + warp * 16 + lane / 4 + 8 * h;
          float y[2];
#pragma unroll
          for (int q = 0; q < 2; ++q) {
            const i64 m = w.m0 + row, n = w.n0 + jb * 8 + (lane % 4) * 2 + q;
            float x = acc[jb * 4 + 2 * h + q];
            if (!decltype(guarded)::value || (m < p.m && n < p.n)) {
              OPGRAPH_GEMM_EPILOGUE_BODY
            }
            y[q] = x;
          }
#if OPGRAPH_GEMM_OUT == 0
          asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(pk[gi][chunk][h]) : "f"(y[1]), "f"(y[0]));
#else
          asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(pk[gi][chunk][h]) : "f"(y[1]), "f"(y[0]));
#endif
        }
    }
    (void)b0;
    (void)b1;
  };
  // The group of kPack boxes from box0 into the copy's slots sl0, sl0 + 1, ..
  auto write = [&](int box0, int sl0) {
#pragma unroll
    for (int gi = 0; gi < kPack; ++gi) {
      if (box0 + gi >= kCBoxes) break;
#pragma unroll
      for (int chunk = 0; chunk < 8; ++chunk)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const u32 row = static_cast<u32>(cw * 64 + warp * 16 + lane / 4 + 8 * h);
          const u32 addr = cst + static_cast<u32>(sl0 + gi) * (kBM * 128) + row * 128 +
                           ((static_cast<u32>(chunk) ^ (row & 7u)) << 4) + static_cast<u32>(lane % 4) * 4;
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(pk[gi][chunk][h]) : "memory");
        }
    }
  };
#pragma unroll
  for (int pass = 0; pass < kCPasses; ++pass) {
#pragma unroll
    for (int sl = 0; sl < kCHeld; sl += kPack) {
      const int box = pass * kCHeld + sl;
      if (box >= kCBoxes) break;
      if (interior) pack(box, Flag<false>{});
      else pack(box, Flag<true>{});
      if (sl == 0) {
        if (t == 0) tma_store_wait_read();
        named_sync<128>(1 + cw);
      }
      write(box, sl);
    }
    fence_async_shared();
    named_sync<128>(1 + cw);
    if (t == 0) {
      const int b1 = static_cast<int>(w.b1), b0 = static_cast<int>(w.b0);
#pragma unroll
      for (int sl = 0; sl < kCHeld; ++sl) {
        const int box = pass * kCHeld + sl;
        if (box >= kCBoxes) break;
        tma_store(&g.c_map, static_cast<int>(w.n0) + box_col(box), static_cast<int>(w.m0) + cw * 64, b1, b0,
                  cst + static_cast<u32>(sl) * (kBM * 128) + static_cast<u32>(cw) * 64 * 128);
      }
      tma_store_commit();
    }
  }
}

// --- stage: the epilogue, staged through shared memory -----------------------

// The tile's outputs, 16 columns at a time: each warp passes its fragments
// to its own staging rows at buf (stage_chunk), then each lane applies the
// graph's pointwise chain to 8 adjacent outputs of one row of each 64-row
// block and stores them (16 bytes when vec_ok and inside N), in a rolled
// chunk loop. The loop's code is small, so it stays in the instruction
// cache beside the other warpgroup's mainloop (the unrolled chain did not:
// measured 'no instruction' stalls and 20-27% lost with gelu), and the
// exchange is warp-local: __syncwarp only (against the warpgroup barriers it
// had before: +1-4%, 4096^3 + bias + gelu 558 vs 542 TFLOP/s,
// bench/results/2026-11-30-gemm-s5-h200.txt, run S5-8).
__device__ __forceinline__ void store_tile_staged(const GemmV2Params& g, const Unit& w, const float (&acc)[kAcc],
                                                  float* stg, const ConsumerThread& ct, bool vec_ok) {
  const GemmParams& p = g.problem;
  const int cw = ct.cw, warp = ct.warp, lane = ct.lane;
  const i64 cbase = w.b0 * p.c.s0 + w.b1 * p.c.s1;
  // First tile row of this warp's 16-row slab in 64-row block 0.
  const i64 rbase = w.m0 + (kPing ? 0 : cw * 64 * kMW) + warp * 16;
  const bool interior = w.m0 + kBM <= p.m && w.n0 + kBN <= p.n;
  float* const buf = stg + (cw * 4 + warp) * (kRowsWarp * kStgLd);
  const int seg = lane / 16, rr = lane % 16;
#pragma unroll 1
  for (int c = 0; c < kBN / kStgCols; ++c) {
    __syncwarp();  // every lane is done reading the previous chunk
    stage_chunk<0>(c, acc, buf, lane);
    __syncwarp();
    // Lane: 8 adjacent columns (segment lane / 16) of row lane % 16 of
    // each 64-row block, all chained before any store, so a broadcast
    // operand's load is shared by the rows and the loads issue together.
    const i64 n0 = w.n0 + c * kStgCols + seg * 8;
    float y[kMW][8];
#pragma unroll
    for (int i = 0; i < kMW; ++i) {
      const int r = i * 16 + rr;
      const float4 lo = *reinterpret_cast<const float4*>(buf + r * kStgLd + seg * 8);
      const float4 hi = *reinterpret_cast<const float4*>(buf + r * kStgLd + seg * 8 + 4);
      y[i][0] = lo.x, y[i][1] = lo.y, y[i][2] = lo.z, y[i][3] = lo.w;
      y[i][4] = hi.x, y[i][5] = hi.y, y[i][6] = hi.z, y[i][7] = hi.w;
    }
    // Interior tiles run the chain unguarded (one load of a broadcast
    // operand serves every row); edge tiles guard each element.
    auto chain = [&](auto guarded) {
      const i64 b0 = w.b0, b1 = w.b1;
#pragma unroll
      for (int i = 0; i < kMW; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const i64 m = rbase + 64 * i + rr, n = n0 + j;
          float x = y[i][j];
          if (!decltype(guarded)::value || (m < p.m && n < p.n)) {
            OPGRAPH_GEMM_EPILOGUE_BODY
          }
          y[i][j] = x;
        }
      (void)b0;
      (void)b1;
    };
    if (interior) chain(Flag<false>{});
    else chain(Flag<true>{});
#pragma unroll
    for (int i = 0; i < kMW; ++i) {
      const i64 m = rbase + 64 * i + rr;
      if (m >= p.m) continue;
      const i64 off = cbase + m * p.c.sr + n0 * p.c.sc;
      if (vec_ok && n0 + 8 <= p.n) {
        store8(p, off, y[i]);
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j)
          if (n0 + j < p.n) store_elem<OPGRAPH_GEMM_OUT>(p.c.ptr, off + j * p.c.sc, y[i][j]);
      }
    }
  }
}

// --- stage: the consumers ------------------------------------------------------

// Warpgroups 1 and 2 (registers up to 232). Cooperative: each takes 64 rows
// (kMW 64-row blocks) of every tile. PINGPONG: each takes whole tiles,
// alternately (units 0, 2, .. of this CTA's list to warpgroup 1, units 1,
// 3, .. to warpgroup 2); their mainloops take turns on the tensor cores, so
// one's epilogue runs under the other's mainloop. The ring is shared: a
// warpgroup steps over the other's stages, and starts its mainloop only
// once the other has issued its previous one (order_wait), so its first
// full[] wait is never a whole ring phase ahead of the stage's last fill.
// Per piece: mainloop, reduction (split tiles), epilogue. cw: this
// thread's consumer warpgroup (0 or 1: warpgroup cw + 1).
__device__ __forceinline__ void consume(const GemmV2Params& g, const Smem& sm, const WorkList& wl, int cw,
                                        int* last_flag) {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
  const GemmParams& p = g.problem;
  ConsumerThread ct;
  ct.cw = cw;
  ct.t = static_cast<int>(threadIdx.x % 128);
  ct.lane = ct.t % 32;
  ct.warp = ct.t / 32;
  // 16-byte stores of 8 adjacent outputs: unit column stride, row and
  // batch strides in whole 8-element groups, a 16-byte aligned base.
  const bool vec_ok = p.c.sc == 1 && (p.c.sr % 8) == 0 && (p.c.s0 % 8) == 0 && (p.c.s1 % 8) == 0 &&
                      (p.c.ptr % 16) == 0;
  RingPos r;
  const u32 a_lo0 = static_cast<u32>(desc(sm.sa, kAK ? 16 : 8192, 1024));
  const u32 b_lo0 = static_cast<u32>(desc(sm.sb, kBKm ? 16 : 8192, 1024));
  for (i64 idx = 0;; ++idx) {  // idx: position in this CTA's list
    // The piece's K range now; its tile and split after the mainloop
    // (decoded again there, so none of it is held across the mainloop
    // beside the accumulators).
    opgraph_gemm_sched::Piece pc;
    if (!opgraph_gemm_sched::piece_at(wl.sched, wl.first, idx, pc)) break;
    const i64 nk = pc.kb1 - pc.kb0;
    if constexpr (kPing) {
      if (static_cast<int>(idx & 1) != cw) {
        r.skip(nk);  // the other warpgroup's unit: its stages pass by in ring order
        continue;
      }
      if (idx > 0) order_wait(cw);
    }
    // Per piece (dead between pieces, so the walk's arithmetic has the registers).
    float acc[kAcc];
    const int nki = static_cast<int>(nk);
    mainloop_issue(sm, r, acc, nki, ct, wl.rank, a_lo0, b_lo0);
    // Every full[] wait of this unit is behind: the other warpgroup may
    // start its next unit's mainloop (when there is one).
    if constexpr (kPing) {
      if (opgraph_gemm_sched::piece_at(wl.sched, wl.first, idx + 1, pc)) order_pass(cw);
    }
    mainloop_retire(sm, r, acc, nki, ct, wl.rank);
    Unit w;
    {
      i64 again = idx;
      asm volatile("" : "+l"(again));  // opaque: the decode is not hoisted above the mainloop
      decode(p, wl.sched, wl.first, again, wl.rank, w);
    }
    if (w.nsplit > 1 && !reduce_splits(g, w, acc, ct, last_flag)) continue;
    if (w.m0 >= p.m) continue;  // the phantom second tile of a pair past M
#if OPGRAPH_GEMM_EPI_TMA
    if (g.flags & kFlagCTma) {
      store_tile_tma(g, w, acc, sm.cst, ct);
      continue;
    }
#endif
    store_tile_staged(g, w, acc, sm.stg, ct, vec_ok);
  }
}

// --- stage: the end ------------------------------------------------------------

// EPI_TMA: the last tile's stores complete before the CTA leaves. Neither
// CTA of a pair leaves while the other may still arrive on its barriers or
// multicast into its shared memory.
__device__ __forceinline__ void finish() {
  if constexpr (kEpiTma) {
    if (threadIdx.x % 128 == 0) tma_store_wait();
  }
  if constexpr (kCluster == 2) cluster_sync();
}

}  // namespace

constexpr int gemm_v2_smem_bytes = kStages * (kABytes + kBBytes) + kEpiBytes + 1024 + 256;

// The kernel: its stages in order. Launch: GemmV2Params by value (the one
// argument), CLUSTER_M x resident clusters of 384 threads (grid_of,
// engines/gemm/gemm_kernel.cpp), gemm_v2_smem_bytes of dynamic shared memory.
extern "C" __global__ void __launch_bounds__(384, 1) gemm_v2(const __grid_constant__ GemmV2Params g) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ int last_flag[2];  // reduce_splits: this tile's last split, per consumer warpgroup
  const Smem sm = carve_smem(smem_raw);
  const WorkList wl = work_list(g);
  init_barriers(sm);
  // The warpgroup, computed once: consume's cw derives from the same value
  // (a second threadIdx.x test here cost the 128 x 256 EPI_TMA consumers
  // 12 spill instructions a tile: scripts/gemm_kernel_resources.py).
  const int wg = static_cast<int>(threadIdx.x / 128);
  if (wg == 0) produce(g, sm, wl);
  else consume(g, sm, wl, wg - 1, last_flag);
  finish();
}
