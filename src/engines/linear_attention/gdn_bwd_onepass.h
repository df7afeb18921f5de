// engines/linear_attention/gdn_bwd_onepass.h — gdn_bwd's one-pass form (PIPELINE_ARCH 5, rule B11; gdn_bwd.cpp
// launches it): the TMA maps gdn_bwd_onepass takes as its second argument, encoded per execute from the call's
// pointers.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "engines/linear_attention/kernels/gdn_bwd_params.cuh"
#include "opgraph/status.h"
#include "runtime/loader.h"

namespace opgraph::linear_attention {

// gdn_bwd_onepass's second argument (kernels/gdn_bwd_onepass.cuh, OnePassMaps): its TMA maps, in that order (dv: the
// GDN_BWD_ONEPASS_TMADV trial's, not encoded here).
struct OnePassMaps {
  CUtensorMap q, k, v, d_o, st, t, g, beta, dq, dk, dv;
};

// The maps for the call's pointers in `a` (bf16 128-byte swizzled boxes 64 wide; fp32 g and beta in boxes of 4
// heads where kBwdFlagGatesTma is set, which this clears where g or beta is not 16-byte aligned; the workspace's fp32
// dq / dk sums [T][HQ][D] / [T][HK][D] in 128-byte swizzled boxes of 32 columns and C rows, GDN_BWD_ONEPASS_TMARED's
// reductions).
Status encode_onepass_maps(const runtime::CudaDriverApi& api, opgraph_gdn::GdnBwdParams& a, OnePassMaps& m);

// Zeroes the dq / dk sums gdn_bwd_onepass adds into (fp32 [T][HQ][D] at ws_dq, [T][HK][D] at ws_dk, adjacent in
// gdn_bwd_ws_onepass's layout) on `stream`: one cuMemsetD32Async from the first to the end of the second, the
// alignment gap between them included.
Status zero_onepass_sums(const runtime::CudaDriverApi& api, const opgraph_gdn::GdnBwdParams& a, CUstream stream);

// A plan's maps of its last calls (at most kEntries, the most recent kept): a call whose pointers, extents and
// strides match one of them takes its maps (and its kBwdFlagGatesTma) without a driver call; any other encodes all
// ten (encode_onepass_maps) and replaces the least recent. Thread-safe (executes of one plan may run on several
// threads). A failed encode leaves the cache as it was.
class OnePassMapCache {
 public:
  static constexpr std::size_t kEntries = 8;
  Status maps(const runtime::CudaDriverApi& api, opgraph_gdn::GdnBwdParams& a, OnePassMaps& m);

 private:
  // Every GdnBwdParams field encode_onepass_maps reads.
  using Key = std::array<std::int64_t, 25>;
  static Key key_of(const opgraph_gdn::GdnBwdParams& a);
  struct Entry {
    Key key;
    OnePassMaps maps;
    long long flags;  // a.flags after the encode (kBwdFlagGatesTma cleared where g or beta is misaligned)
  };
  std::mutex mu_;
  std::vector<Entry> entries_;  // least recent first
};

}  // namespace opgraph::linear_attention
