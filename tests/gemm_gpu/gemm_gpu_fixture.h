// gemm_gpu/gemm_gpu_fixture.h — what the gemm GPU suites share beyond
// gemm_gpu_util.h (which the bench also includes, without GoogleTest): the
// fixture (fails, never skips, without a GPU; one non-blocking stream) and the
// v2 knobs the tests name.
#pragma once

#include <gtest/gtest.h>

#include "engines/gemm/gemm_engine.h"
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

// v2 with TILE_N `tn` (stages as proposed), `split`, `swap`, `raster`,
// `cluster` CTAs along M, `stream_k`.
inline Knobs v2_knobs(int tn, int split, bool swap, int raster = 0, int cluster = 1, int stream_k = 0,
                      int pingpong = 0) {
  gemm::GemmConfig cfg;
  cfg.version = 2;
  cfg.tile_n = tn;
  cfg.stages = tn == 256 ? 4 : tn == 128 ? 6 : 8;
  cfg.split_k = split;
  cfg.swap_ab = swap;
  cfg.raster = raster;
  cfg.cluster_m = cluster;
  cfg.stream_k = stream_k;
  cfg.pingpong = pingpong;
  return gemm::knobs_of(cfg);
}

}  // namespace opgraph::gemm_testing
