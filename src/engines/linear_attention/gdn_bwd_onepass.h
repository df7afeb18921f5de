// engines/linear_attention/gdn_bwd_onepass.h — gdn_bwd's one-pass form (PIPELINE_ARCH 5, rule B11; gdn_bwd.cpp
// launches it): the TMA maps gdn_bwd_onepass takes as its second argument, encoded per execute from the call's
// pointers.
#pragma once

#include <cuda.h>

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

}  // namespace opgraph::linear_attention
