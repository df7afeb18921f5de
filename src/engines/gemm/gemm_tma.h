// engines/gemm/gemm_tma.h — gemm_v2's host side: the TMA tensor maps for the
// kernel view's A and B (encoded per call from the pack's pointers and the
// problem's extents/strides, cached by those values so repeated calls do not
// re-encode). (The split-K scratch is gemm_exec.h's StreamScratch.)
//
// Maps are 4-D, innermost first: (contiguous axis, the other matrix axis,
// batch1, batch0), 16-bit elements, 128-byte swizzle, zero fill out of range.
// Box: 64 contiguous elements x `box_outer` (K-major A: 128 rows; K-major B:
// TILE_N / CLUSTER_M rows, one CTA's multicast share; an M/N-major operand:
// 64 K rows per 64-element chunk). A batch axis of extent 1 or stride 0
// (broadcast) becomes extent 1 in the map and its flag bit stays clear, so the
// kernel addresses it at 0.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <vector>

#include "engines/gemm/gemm_kernel.h"
#include "runtime/loader.h"

namespace opgraph::gemm {

// The values that decide one map (ELEMENTS except the pointer).
using TmaKey = std::array<std::int64_t, 11>;

class TmaCache {
 public:
  // The tensor maps of v2 argument `g` for kernel view `kp` under config
  // `c`, from the device pointers already in g.problem: A's and B's into
  // g.a_map and g.b_map, their batch-axis bits (kFlagA1 .. kFlagB0) ORed
  // into g.flags; with `c_map` (an EPI_TMA kernel) also the output's
  // (output_map's rule) into g.c_map, under the same lock. GRAPH_NOT_SUPPORTED
  // when the driver lacks cuTensorMapEncodeTiled; CUDA_API_FAILED naming the
  // operand when the driver refuses the map.
  Status maps(const runtime::CudaDriverApi& api, const GemmProblem& kp, const GemmConfig& c, bool c_map,
              GemmV2Params& g);
  // EPI_TMA: the output's map (boxes of 64 x 64, 128B swizzle) at `c_ptr`
  // when the output is 16-bit, N-contiguous, and its base and every other
  // stride are non-zero 16-byte multiples: sets kFlagCTma in `flags`.
  // Otherwise leaves `flags` alone (the kernel's staged epilogue runs) and
  // zero-fills `out`.
  Status output_map(const runtime::CudaDriverApi& api, const GemmProblem& kp, std::uint64_t c_ptr, CUtensorMap* out,
                    std::int64_t* flags);

 private:
  Status one(const runtime::CudaDriverApi& api, const TmaKey& key, CUtensorMap* out);
  // output_map with mu_ held.
  Status output_locked(const runtime::CudaDriverApi& api, const GemmProblem& kp, std::uint64_t c_ptr,
                       CUtensorMap* out, std::int64_t* flags);
  std::mutex mu_;
  std::vector<std::pair<TmaKey, CUtensorMap>> entries_;  // most recent last, at most 16
};

}  // namespace opgraph::gemm
