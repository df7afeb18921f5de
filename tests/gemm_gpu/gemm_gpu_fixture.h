// gemm_gpu/gemm_gpu_fixture.h — what the gemm GPU suites share beyond
// gemm_gpu_util.h (which the bench also includes, without GoogleTest): the
// fixture (fails, never skips, without a GPU; one non-blocking stream), the
// v2 knobs the tests name, and the pack / reference / comparison steps of a
// plan's run.
#pragma once

#include <gtest/gtest.h>

#include <map>

#include "engines/gemm/gemm_engine.h"
#include "engines/reference/executor.h"
#include "gemm_gpu/gemm_gpu_util.h"

namespace opgraph::gemm_testing {

class GemmGpuFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu().context || !gpu().api || gpu().props.sm_count == 0) GTEST_FAIL() << "no GPU: these tests run on the H200 only";
    if (!gpu().stream) {
      ASSERT_EQ(gpu().api->stream_create(&gpu().stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    }
  }
};

// The knobs of `tile` (its version, tile, stages and schedule) run with
// `split` K splits, swap AB, the raster order and stream-K as given.
inline Knobs run_knobs(gemm::GemmConfig tile, int split, bool swap, int raster, int stream_k) {
  tile.split_k = split;
  tile.swap_ab = swap;
  tile.raster = raster;
  tile.stream_k = stream_k;
  return gemm::knobs_of(tile);
}

// v2 with TILE_N `tn` (stages as proposed), `split`, `swap`, `raster`,
// `cluster` CTAs along M, `stream_k`.
inline Knobs v2_knobs(int tn, int split, bool swap, int raster = 0, int cluster = 1, int stream_k = 0,
                      int pingpong = 0) {
  gemm::GemmConfig cfg;
  cfg.version = 2;
  cfg.tile_n = tn;
  cfg.stages = tn == 256 ? 4 : tn == 128 ? 6 : 8;
  cfg.cluster_m = cluster;
  cfg.pingpong = pingpong;
  return run_knobs(cfg, split, swap, raster, stream_k);
}

// An execute on `stream` (default: the fixture's) of the test GPU.
inline ExecutionContext device_ec(CUstream stream = nullptr) {
  ExecutionContext ec;
  ec.stream = stream ? stream : gpu().stream;
  ec.device = &gpu().props;
  return ec;
}

// The variant pack of o's device buffers.
inline VariantPack pack_of(const Operands& o) {
  VariantPack pack;
  for (const auto& [uid, d] : o.dev) pack.set(uid, reinterpret_cast<void*>(d->ptr()));
  return pack;
}

// The reference engine's output (float64 accumulation) for o's host inputs.
inline std::vector<unsigned char> reference_out(const OpGraph& g, Operands& o) {
  std::map<std::int64_t, reference::HostBuffer> host;
  for (auto& [uid, h] : o.host) host[uid] = reference::HostBuffer{h.data()};
  Status ref = reference::execute(g, host);
  EXPECT_TRUE(ref.is_good()) << ref.message();
  return o.host[o.out_uid];
}

// Bad elements of o's device output against `want` (synchronize its stream
// first); the worst one is reported, after the case and `what`.
inline std::size_t bad_elements(const GemmCase& c, const std::vector<unsigned char>& want, const Operands& o,
                                const std::string& what = "") {
  std::vector<unsigned char> got(want.size());
  EXPECT_EQ(gpu().api->memcpy_dtoh(got.data(), o.dev.at(o.out_uid)->ptr(), got.size()), CUDA_SUCCESS);
  std::size_t worst = 0;
  const std::size_t bad = count_bad(c, want, got, &worst);
  if (bad)
    ADD_FAILURE() << describe(c) << what << ": " << bad << "/" << c.batch * c.m * c.n << " bad; worst at " << worst
                  << ": got " << read_elem(got, c.out, worst) << " want " << read_elem(want, c.out, worst);
  return bad;
}

// o's device output set to all-ones bits (NaN for every output type) and the
// device synchronized, so a run that skips an element is caught.
inline void poison(const Operands& o) {
  const std::size_t bytes = o.host.at(o.out_uid).size();
  ASSERT_EQ(gpu().api->memset_d32(o.dev.at(o.out_uid)->ptr(), 0xFFFFFFFFu, bytes / 4), CUDA_SUCCESS);
  ASSERT_EQ(gpu().api->ctx_synchronize(), CUDA_SUCCESS);
}

}  // namespace opgraph::gemm_testing
