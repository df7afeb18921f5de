// Device ordinals without a GPU: a fake two-device driver (tests/runtime/fake_libcuda:
// device 0 sm_90, device 1 sm_80; its own stderr lines say which device each call
// touched) loaded through OPGRAPH_LIBCUDA by runtime_probe in a fresh process.
//  * the public device API (opgraph/device.h) counts, reads and opens devices by
//    ordinal; a device that does not exist is INVALID_CUDA_DEVICE naming it;
//    memory on device 1 is allocated, copied and freed in device 1's context;
//  * the gemm engine builds on the device its planning target names: a graph
//    planned for device 1 opens device 1 (never device 0) and compiles for
//    device 1's arch. Before the fix it opened device 0 whatever the target said.
#include <gtest/gtest.h>

#include <string>

#include "runtime/runtime_test_util.h"

using namespace opgraph;
using opgraph::testing::run_process;

namespace {

bool has(const std::string& out, const std::string& what) { return out.find(what) != std::string::npos; }

std::vector<std::string> fake_env(const std::string& cache_root) {
  return {std::string("OPGRAPH_LIBCUDA=") + OPGRAPH_FAKE_LIBCUDA, "OPGRAPH_COMPILED_CACHE=" + cache_root,
          "OPGRAPH_COMPILED_CACHE_REQUIRE_HIT=1", "OPGRAPH_DISABLE_COMPILED_CACHE=", "OPGRAPH_ENABLE_ENGINES="};
}

}  // namespace

TEST(DeviceOrdinal, PublicDeviceApiReadsOpensAndAllocatesByOrdinal) {
  opgraph::testing::TempDir root;
  auto r = run_process({OPGRAPH_RUNTIME_PROBE, "fake-device"}, fake_env(root.path().string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string& out = r.output;
  EXPECT_TRUE(has(out, "count 2")) << out;
  EXPECT_TRUE(has(out, "read 0: ordinal 0 Fake GPU 0 sm_90a 132 SMs")) << out;
  EXPECT_TRUE(has(out, "read 1: ordinal 1 Fake GPU 1 sm_80 108 SMs")) << out;
  EXPECT_TRUE(has(out, "read 2: INVALID_CUDA_DEVICE: device 2 does not exist (2 visible)")) << out;
  EXPECT_TRUE(has(out, "open -1: INVALID_CUDA_DEVICE: device -1 does not exist (2 visible)")) << out;
  EXPECT_TRUE(has(out, "opened ordinal 1 Fake GPU 1")) << out;
  EXPECT_TRUE(has(out, "round trip equal")) << out;
  EXPECT_TRUE(has(out, "upload past the end: INVALID_VALUE")) << out;
  // Every step in device 1's context; device 0 never touched.
  EXPECT_TRUE(has(out, "fake-cuda: cuDevicePrimaryCtxRetain device 1")) << out;
  EXPECT_TRUE(has(out, "fake-cuda: cuMemAlloc device 1")) << out;
  EXPECT_TRUE(has(out, "fake-cuda: cuMemFree device 1")) << out;
  EXPECT_TRUE(has(out, "fake-cuda: cuCtxSynchronize device 1")) << out;
  EXPECT_TRUE(has(out, "fake-cuda: cuDevicePrimaryCtxRelease device 1")) << out;
  EXPECT_FALSE(has(out, "device 0\n")) << out;
}

TEST(DeviceOrdinal, GemmBuildsOnTheDeviceItsTargetNames) {
  opgraph::testing::TempDir root;
  auto r = run_process({OPGRAPH_RUNTIME_PROBE, "fake-gemm-device"}, fake_env(root.path().string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string& out = r.output;
  // The engine opened device 1, the target's, and never device 0.
  EXPECT_TRUE(has(out, "fake-cuda: cuDevicePrimaryCtxRetain device 1")) << out;
  EXPECT_FALSE(has(out, "fake-cuda: cuDevicePrimaryCtxRetain device 0")) << out;
  // Its kernel is device 1's (sm_80): the empty cache under REQUIRE_HIT names the
  // entry it would have compiled, arch included.
  const std::size_t at = out.find("build_plans: ");
  ASSERT_NE(at, std::string::npos) << out;
  const std::string gemm_line = out.substr(at, out.find('\n', at) - at);
  EXPECT_TRUE(has(gemm_line, "compiled cache miss for gemm_")) << gemm_line;
  EXPECT_TRUE(has(gemm_line, "_sm_80_")) << gemm_line;
  EXPECT_FALSE(has(gemm_line, "sm_90")) << gemm_line;
}
