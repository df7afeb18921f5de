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
// Stages (one __device__ function each, below or in gemm_v2_epilogue.cuh (*);
// the kernel is their sequence):
//   carve_smem         the dynamic shared memory: the ring, the epilogue's region, the barriers
//   work_list          this CTA's list of pieces (gemm_sched.cuh) and its rank in the cluster
//   init_barriers      the ring's full[] / empty[] mbarriers, visible to the cluster
//   produce            warpgroup 0: TMA loads of every piece's K blocks into the ring
//   consume            warpgroups 1 and 2, per piece of the list:
//     mainloop_issue     wgmma over the piece's K blocks, stages released behind
//     mainloop_retire    the last wgmma groups retired, their stages released
//     reduce_splits*     a split tile's partials out; the last piece sums them
//     store_tile_tma*    EPI_TMA: the chain in registers, a 16-bit copy, TMA stores
//     store_tile_staged* otherwise: the chain and the stores through per-warp staging rows
//   finish             outstanding TMA stores; the pair's last cluster barrier
// The launch contract is ONE argument, GemmV2Params (gemm_params.cuh, the
// header the host fills it from): the problem (GemmParams), the tensor maps
// of A, B and (EPI_TMA) C, the split-K scratch and the schedule's run-time
// fields. Dynamic shared memory: gemm_v2_smem_bytes. The Hopper instructions
// are gemm_sm90.cuh's wrappers; the wgmma shapes gemm_wgmma.cuh's. The
// constants the defines give (kBM, kBN, kStages, ..) and their bounds are
// gemm_v2_config.cuh's.
#include "gemm/kernels/gemm_common.cuh"
#include "gemm/kernels/gemm_sched.cuh"
#include "gemm/kernels/gemm_sm90.cuh"
#include "gemm/kernels/gemm_wgmma.cuh"

#include "gemm/kernels/gemm_v2_config.cuh"
#include "gemm/kernels/gemm_v2_epilogue.cuh"

namespace {

using namespace opgraph_gemm;

// Ping-pong order: barrier 3 + w lets warpgroup w start its next mainloop; the
// other warpgroup arrives (128 threads) once it has issued its own, w syncs.
constexpr int kOrderBar = 3;
__device__ __forceinline__ void order_wait(int cw) { named_sync<256>(kOrderBar + cw); }
__device__ __forceinline__ void order_pass(int cw) { named_arrive<256>(kOrderBar + (cw ^ 1)); }

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
