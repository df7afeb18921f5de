// gemm/kernels/gemm_sched.cuh — gemm_v2's persistent schedule: which work
// piece (tile, K range, split) is item `it` of cluster c's list. Integer
// arithmetic only, with no includes, so the same text is compiled into the
// kernel (NVRTC) and into the host library (engines/gemm/gemm_kernel.cpp),
// where the tests walk every cluster's list on the CPU.
//
// Work tiles (tile pairs under CLUSTER_M = 2) [0, split_from) run whole,
// round robin: cluster c takes tiles c, c + R, ... (R clusters resident). The
// tiles from split_from on are split along K, one of two ways:
// - uniform (SPLIT_K_SLC, or the flag off): each tile in `splits` equal K
//   ranges, units round robin after the whole tiles;
// - stream-K (flag kFlagStreamK, gemm_params.cuh): split_from is a multiple
//   of R, so every cluster runs the same number of whole tiles; the
//   remaining T tiles' K blocks
//   (W = T x kblocks, in tile order, K order within a tile) are cut into R
//   contiguous ranges, [c W / R, (c + 1) W / R) for cluster c, and a cluster
//   runs its range as one piece per tile it touches. A tile's pieces are its
//   splits in K order: split = c - c0, where c0 is the cluster whose range holds
//   the tile's first K block.
// A split piece writes fp32 partials to workspace slot ws0 + split x wstep (in
// tile units; the kernel scales by CLUSTER_M and the CTA's rank); the piece
// that counts last on the tile's counter sums every split in split order.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define OPGRAPH_GEMM_SCHED_FN __host__ __device__ __forceinline__
#else
#define OPGRAPH_GEMM_SCHED_FN inline
#endif

namespace opgraph_gemm_sched {

using s64 = long long;

struct Sched {
  s64 tiles;       // work tiles (pairs), every batch
  s64 kblocks;     // K blocks of a whole tile
  s64 splits;      // uniform: ways each split tile is cut
  s64 split_from;  // tiles [0, split_from) run whole
  s64 clusters;    // R: clusters resident (the grid / CLUSTER_M)
  bool stream;     // stream-K split tiles
};

struct Piece {
  s64 tile;            // work tile (pair) index
  s64 split, nsplit;   // this piece's split of the tile, of nsplit (1: whole)
  s64 kb0, kb1;        // K blocks [kb0, kb1) of the tile
  s64 counter;         // the tile's arrival counter (split tiles)
  s64 ws0, wstep;      // workspace slot of split 0, and between splits
};

// Item `it` of cluster `c`'s list (0 <= c < clusters); false past its end.
OPGRAPH_GEMM_SCHED_FN bool piece_at(const Sched& s, s64 c, s64 it, Piece& w) {
  const s64 r = s.clusters, kb = s.kblocks;
  if (s.stream) {
    const s64 whole = c < s.split_from ? (s.split_from - c + r - 1) / r : 0;
    if (it < whole) {
      w.tile = c + it * r, w.split = 0, w.nsplit = 1, w.kb0 = 0, w.kb1 = kb;
      w.counter = 0, w.ws0 = 0, w.wstep = 1;
      return true;
    }
    const s64 total = (s.tiles - s.split_from) * kb;
    const s64 lo = c * total / r, hi = (c + 1) * total / r, j = it - whole;
    const s64 start = j == 0 ? lo : (lo / kb + j) * kb;
    if (start >= hi) return false;
    const s64 t = start / kb, end = hi < (t + 1) * kb ? hi : (t + 1) * kb;
    // The cluster whose range holds K block x: the last c' with c' W / R <= x.
    const s64 c0 = ((t * kb + 1) * r - 1) / total, c1 = ((t + 1) * kb * r - 1) / total;
    w.tile = s.split_from + t, w.split = c - c0, w.nsplit = c1 - c0 + 1;
    w.kb0 = start - t * kb, w.kb1 = end - t * kb;
    w.counter = t, w.ws0 = t + c0, w.wstep = 1;
    return true;
  }
  const s64 units = s.split_from + (s.tiles - s.split_from) * s.splits, u = c + it * r;
  if (u >= units) return false;
  if (u < s.split_from) {
    w.tile = u, w.split = 0, w.nsplit = 1, w.counter = 0, w.ws0 = 0;
  } else {
    const s64 v = u - s.split_from;
    w.tile = s.split_from + v / s.splits, w.split = v % s.splits, w.nsplit = s.splits;
    w.counter = w.tile - s.split_from, w.ws0 = w.counter * s.splits;
  }
  w.wstep = 1;
  w.kb0 = w.split * kb / w.nsplit;
  w.kb1 = (w.split + 1) * kb / w.nsplit;
  return true;
}

}  // namespace opgraph_gemm_sched
