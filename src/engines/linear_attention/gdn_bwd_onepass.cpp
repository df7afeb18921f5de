// engines/linear_attention/gdn_bwd_onepass.cpp — the one-pass form's TMA maps (gdn_bwd_onepass.h).
#include "engines/linear_attention/gdn_bwd_onepass.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace opgraph::linear_attention {

Status encode_onepass_maps(const runtime::CudaDriverApi& api, opgraph_gdn::GdnBwdParams& a, OnePassMaps& m) {
  auto enc = [&](CUtensorMap* out, CUtensorMapDataType type, unsigned long long base, std::int64_t d0,
                 std::int64_t d1, std::int64_t d2, std::int64_t s1, std::int64_t s2, unsigned box0, unsigned box1,
                 unsigned box2, bool swizzle, const char* what, bool promote = true) -> Status {
    cuuint64_t dims[4] = {static_cast<cuuint64_t>(d0), static_cast<cuuint64_t>(d1), static_cast<cuuint64_t>(d2), 1};
    const std::int64_t span = s2 * std::max<std::int64_t>(d2, 1);
    cuuint64_t strides[3] = {static_cast<cuuint64_t>(s1), static_cast<cuuint64_t>(s2), static_cast<cuuint64_t>(span)};
    cuuint32_t box[4] = {box0, box1, box2, 1}, es[4] = {1, 1, 1, 1};
    const CUresult r = api.tensor_map_encode_tiled(
        out, type, 4, reinterpret_cast<void*>(static_cast<std::uintptr_t>(base)), dims, strides, box, es,
        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
        swizzle && promote ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_NONE,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
      return runtime::cuda_check(api, r, std::string("engine linear_attention: gdn_bwd PIPELINE_ARCH 5: "
                                                     "cuTensorMapEncodeTiled (") + what + ")");
    return Status::ok();
  };
  const std::int64_t D = 128, T = std::max<std::int64_t>(a.t, 1);
  const auto bf16 = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  // q, k, v, dO as (D, heads, T) in bytes; a head or token stride of 0 (one head, one token) becomes the packed one.
  auto rows = [&](CUtensorMap* out, unsigned long long base, std::int64_t heads, std::int64_t hs, std::int64_t ts,
                  const char* what) {
    const std::int64_t hb = hs > 0 ? hs * 2 : D * 2, tb = ts > 0 ? ts * 2 : hb * heads;
    return enc(out, bf16, base, D, heads, T, hb, tb, 64, 1, 64, true, what);
  };
  OPGRAPH_CHECK(rows(&m.q, a.q, a.hq, a.q_hs, a.q_ts, "q"));
  OPGRAPH_CHECK(rows(&m.k, a.k, a.hk, a.k_hs, a.k_ts, "k"));
  OPGRAPH_CHECK(rows(&m.v, a.v, a.hv, a.v_hs, a.v_ts, "v"));
  OPGRAPH_CHECK(rows(&m.d_o, a.d_o, a.ho, D, a.ho * D, "dO"));
  // The workspace's S^T (bf16 [D][D] a (chunk slot, head)) and T (64, C, sh): unsplit the one-pass layout's T region
  // ([sh][C][C], gdn_bwd_fwd_st_fused's), under a chain split each block's T tile (gdn_bwd_fwd_span_fused's).
  const std::int64_t sh = a.n_slots * a.ho, blk = opgraph_gdn::gdn_bwd_block_elems(D);
  OPGRAPH_CHECK(enc(&m.st, bf16, a.ws + static_cast<unsigned long long>(a.ws_st), D, sh * D, 1, D * 2, sh * D * D * 2,
                    64, static_cast<unsigned>(D), 1, true, "S^T"));
  const bool split = a.span_chunks > 0;
  // (a block's T: after Qe, Wn, Kd, U [C][D] and P [C][C], gdn_common.cuh's kOffT)
  const std::int64_t t_at = a.ws_blocks + (split ? (4 * 64 * D + 64 * 64) * 2 : 0);
  const std::int64_t t_stride = split ? blk * 2 : 64 * 64 * 2;
  OPGRAPH_CHECK(enc(&m.t, bf16, a.ws + static_cast<unsigned long long>(t_at), 64, 64, sh, 128, t_stride, 64, 64, 1,
                    true, "T"));
  // dq / dk's fp32 sums (D, heads, T), box (32, 1, C): one warpgroup's column quarter of a chunk, added by TMA.
  const auto f32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  OPGRAPH_CHECK(enc(&m.dq, f32, a.ws + static_cast<unsigned long long>(a.ws_dq), D, a.hq, T, D * 4, a.hq * D * 4, 32, 1,
                    64, true, "dq sums", false));
  OPGRAPH_CHECK(enc(&m.dk, f32, a.ws + static_cast<unsigned long long>(a.ws_dk), D, a.hk, T, D * 4, a.hk * D * 4, 32, 1,
                    64, true, "dk sums", false));
  if ((a.flags & opgraph_gdn::kBwdFlagGatesTma) && (a.g % 16 != 0 || a.beta % 16 != 0))
    a.flags &= ~opgraph_gdn::kBwdFlagGatesTma;
  if (a.flags & opgraph_gdn::kBwdFlagGatesTma) {
    OPGRAPH_CHECK(enc(&m.g, f32, a.g, a.ho, T, 1, a.ho * 4, a.ho * 4 * T, 4, 64, 1, false, "g"));
    OPGRAPH_CHECK(enc(&m.beta, f32, a.beta, a.ho, T, 1, a.ho * 4, a.ho * 4 * T, 4, 64, 1, false, "beta"));
  }
  return Status::ok();
}

Status zero_onepass_sums(const runtime::CudaDriverApi& api, const opgraph_gdn::GdnBwdParams& a, CUstream stream) {
  if (a.ws_dk < a.ws_dq)
    return {ErrorCode::INTERNAL_ERROR, "engine linear_attention: gdn_bwd PIPELINE_ARCH 5: dk's sums before dq's"};
  const long long bytes = a.ws_dk + a.t * a.hk * 128 * 4 - a.ws_dq;  // (d = 128: rule B11)
  const auto at = static_cast<CUdeviceptr>(a.ws + static_cast<unsigned long long>(a.ws_dq));
  return runtime::cuda_check(api, api.memset_d32_async(at, 0, static_cast<std::size_t>(bytes / 4), stream),
                             "engine linear_attention: gdn_bwd PIPELINE_ARCH 5: cuMemsetD32Async (the dq / dk sums)");
}

OnePassMapCache::Key OnePassMapCache::key_of(const opgraph_gdn::GdnBwdParams& a) {
  auto i = [](unsigned long long x) { return static_cast<std::int64_t>(x); };
  return {i(a.q),    i(a.k),    i(a.v),         i(a.d_o),      i(a.g),        i(a.beta),  i(a.ws),     a.t,
          a.hq,      a.hk,      a.hv,           a.ho,          a.q_hs,        a.q_ts,     a.k_hs,      a.k_ts,
          a.v_hs,    a.v_ts,    a.n_slots,      a.ws_st,       a.ws_blocks,   a.ws_dq,    a.ws_dk,     a.span_chunks,
          a.flags & opgraph_gdn::kBwdFlagGatesTma};
}

Status OnePassMapCache::maps(const runtime::CudaDriverApi& api, opgraph_gdn::GdnBwdParams& a, OnePassMaps& m) {
  const Key key = key_of(a);
  std::lock_guard<std::mutex> lock(mu_);
  for (std::size_t i = entries_.size(); i-- > 0;)
    if (entries_[i].key == key) {
      m = entries_[i].maps;
      a.flags = (a.flags & ~opgraph_gdn::kBwdFlagGatesTma) | (entries_[i].flags & opgraph_gdn::kBwdFlagGatesTma);
      if (i + 1 != entries_.size()) std::rotate(entries_.begin() + static_cast<std::ptrdiff_t>(i),
                                                entries_.begin() + static_cast<std::ptrdiff_t>(i) + 1, entries_.end());
      return Status::ok();
    }
  opgraph_gdn::GdnBwdParams b = a;
  OnePassMaps fresh{};
  OPGRAPH_CHECK(encode_onepass_maps(api, b, fresh));
  if (entries_.size() >= kEntries) entries_.erase(entries_.begin());
  entries_.push_back(Entry{key, fresh, b.flags});
  m = fresh;
  a.flags = b.flags;
  return Status::ok();
}

}  // namespace opgraph::linear_attention
