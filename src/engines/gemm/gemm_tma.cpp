// engines/gemm/gemm_tma.cpp — tensor-map encoding and caching (see gemm_tma.h
// for the map layout).
#include "engines/gemm/gemm_tma.h"

#include <algorithm>
#include <cstring>

namespace opgraph::gemm {
namespace {

static_assert(sizeof(CUtensorMap) == sizeof(TmaMap), "GemmV2Params' tensor maps hold a CUtensorMap byte for byte");

std::int64_t round16(std::int64_t b) { return (std::max<std::int64_t>(b, 16) + 15) / 16 * 16; }

// Key: ptr, dtype code, inner extent, outer extent, outer stride, b1 extent,
// b1 stride, b0 extent, b0 stride, box outer, unused.
TmaKey key_of(std::uint64_t ptr, DataType dt, std::int64_t inner, std::int64_t outer, std::int64_t outer_stride,
              std::int64_t b1, std::int64_t s1, std::int64_t b0, std::int64_t s0, int box_outer, std::int64_t* flag1,
              std::int64_t* flag0) {
  const bool has1 = b1 > 1 && s1 != 0, has0 = b0 > 1 && s0 != 0;
  *flag1 = has1 ? 1 : 0;
  *flag0 = has0 ? 1 : 0;
  return {static_cast<std::int64_t>(ptr), dt == DataType::HALF ? 1 : 0, inner, outer, outer_stride,
          has1 ? b1 : 1, has1 ? s1 : 0, has0 ? b0 : 1, has0 ? s0 : 0, box_outer, 0};
}

}  // namespace

Status TmaCache::one(const runtime::CudaDriverApi& api, const TmaKey& k, CUtensorMap* out) {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (it->first == k) {
      *out = it->second;
      return Status::ok();
    }
  if (!api.tensor_map_encode_tiled)
    return {ErrorCode::GRAPH_NOT_SUPPORTED, "engine gemm v2: the driver has no cuTensorMapEncodeTiled"};
  // Bytes; an axis of extent 1 gets the packed stride of the axes inside it.
  cuuint64_t dims[4] = {static_cast<cuuint64_t>(k[2]), static_cast<cuuint64_t>(k[3]), static_cast<cuuint64_t>(k[5]),
                        static_cast<cuuint64_t>(k[7])};
  std::int64_t s[3] = {k[4] * 2, k[6] * 2, k[8] * 2};
  std::int64_t span = k[2] * 2;
  const std::int64_t ext[3] = {k[3], k[5], k[7]};
  for (int i = 0; i < 3; ++i) {
    if (ext[i] == 1 || s[i] <= 0) s[i] = round16(span);
    span = std::max(span, s[i] * ext[i]);
  }
  cuuint64_t strides[3] = {static_cast<cuuint64_t>(s[0]), static_cast<cuuint64_t>(s[1]), static_cast<cuuint64_t>(s[2])};
  cuuint32_t box[4] = {64, static_cast<cuuint32_t>(k[9]), 1, 1};
  cuuint32_t estr[4] = {1, 1, 1, 1};
  CUtensorMap m;
  CUresult r = api.tensor_map_encode_tiled(
      &m, k[1] ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4,
      reinterpret_cast<void*>(static_cast<std::uintptr_t>(k[0])), dims, strides, box, estr,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return runtime::cuda_check(api, r,
                               "engine gemm v2: cuTensorMapEncodeTiled (extents " + std::to_string(k[2]) + " x " +
                                   std::to_string(k[3]) + ", stride " + std::to_string(k[4]) + " elements)");
  if (entries_.size() >= 16) entries_.erase(entries_.begin());
  entries_.emplace_back(k, m);
  *out = m;
  return Status::ok();
}

Status TmaCache::maps(const runtime::CudaDriverApi& api, const GemmProblem& kp, const GemmConfig& c, bool c_map,
                      GemmV2Params& g) {
  std::int64_t fa1, fa0, fb1, fb0;
  const std::uint64_t a_ptr = g.problem.a.ptr, b_ptr = g.problem.b.ptr;
  // A: r = m, c = k. B: r = k, c = n.
  const TmaKey ka = kp.a_kmajor ? key_of(a_ptr, kp.in, kp.k, kp.m, kp.a.sr, kp.batch1, kp.a.s1, kp.batch0, kp.a.s0,
                                         c.tile_m, &fa1, &fa0)
                                : key_of(a_ptr, kp.in, kp.m, kp.k, kp.a.sc, kp.batch1, kp.a.s1, kp.batch0, kp.a.s0,
                                         64, &fa1, &fa0);
  // A K-major B's box: the CTA's columns in one box of at most 256 rows (320: two of 160; gemm_v2_config.cuh kBBox).
  const int b_box = c.tile_n / c.cluster_m > 256 ? c.tile_n / c.cluster_m / 2 : c.tile_n / c.cluster_m;
  const TmaKey kb = kp.b_kmajor ? key_of(b_ptr, kp.in, kp.k, kp.n, kp.b.sc, kp.batch1, kp.b.s1, kp.batch0, kp.b.s0,
                                         b_box, &fb1, &fb0)
                                : key_of(b_ptr, kp.in, kp.n, kp.k, kp.b.sr, kp.batch1, kp.b.s1, kp.batch0, kp.b.s0,
                                         64, &fb1, &fb0);
  g.flags |= (fa1 ? opgraph_gemm::kFlagA1 : 0) | (fa0 ? opgraph_gemm::kFlagA0 : 0) |
             (fb1 ? opgraph_gemm::kFlagB1 : 0) | (fb0 ? opgraph_gemm::kFlagB0 : 0);
  std::lock_guard<std::mutex> lock(mu_);
  CUtensorMap m;
  OPGRAPH_CHECK(one(api, ka, &m));
  std::memcpy(&g.a_map, &m, sizeof m);
  OPGRAPH_CHECK(one(api, kb, &m));
  std::memcpy(&g.b_map, &m, sizeof m);
  if (!c_map) return Status::ok();
  std::int64_t flags = g.flags;
  OPGRAPH_CHECK(output_locked(api, kp, g.problem.c.ptr, &m, &flags));
  g.flags = flags;
  std::memcpy(&g.c_map, &m, sizeof m);
  return Status::ok();
}

Status TmaCache::output_map(const runtime::CudaDriverApi& api, const GemmProblem& kp, std::uint64_t c_ptr,
                            CUtensorMap* out, std::int64_t* flags) {
  std::lock_guard<std::mutex> lock(mu_);
  return output_locked(api, kp, c_ptr, out, flags);
}

Status TmaCache::output_locked(const runtime::CudaDriverApi& api, const GemmProblem& kp, std::uint64_t c_ptr,
                               CUtensorMap* out, std::int64_t* flags) {
  *out = CUtensorMap{};
  // A batch axis the map would fold away (stride 0) would clip every store
  // past batch 0: such an output stays on the staged epilogue, like a
  // misaligned one or a 32-bit one.
  auto aligned = [](std::int64_t elems) { return elems != 0 && (elems * 2) % 16 == 0; };
  if (kp.out == DataType::FLOAT || c_ptr % 16 != 0 || kp.c.sc != 1 || !aligned(kp.c.sr) ||
      (kp.batch1 > 1 && !aligned(kp.c.s1)) || (kp.batch0 > 1 && !aligned(kp.c.s0)))
    return Status::ok();
  std::int64_t f1, f0;
  const TmaKey kc = key_of(c_ptr, kp.out, kp.n, kp.m, kp.c.sr, kp.batch1, kp.c.s1, kp.batch0, kp.c.s0, 64, &f1, &f0);
  OPGRAPH_CHECK(one(api, kc, out));
  *flags |= opgraph_gemm::kFlagCTma;
  return Status::ok();
}

}  // namespace opgraph::gemm
