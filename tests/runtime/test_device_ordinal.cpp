// Device ordinals without a GPU: a fake two-device driver (tests/runtime/fake_libcuda:
// device 0 sm_90, device 1 sm_80; its own stderr lines say which device each call
// touched) loaded through OPGRAPH_LIBCUDA by runtime_probe in a fresh process.
//  * the public device API (opgraph/device.h) counts, reads and opens devices by
//    ordinal; a device that does not exist is INVALID_CUDA_DEVICE naming it;
//    memory on device 1 is allocated, copied and freed in device 1's context;
//  * the gemm engine builds on the device its planning target names: a graph
//    planned for device 1 opens device 1 (never device 0) and compiles for
//    device 1's arch. Before the fix it opened device 0 whatever the target said.
//  * the linear_attention engine likewise (device 1 made an sm_90, the arch it
//    plans for): a target naming a device that does not exist is refused at build
//    and opens nothing; a target naming device 1 compiles (NVRTC, a fresh cache),
//    loads and launches on device 1 only; its plan refuses a handle on device 0
//    before launching, and runs with a handle on device 1 or one naming none.
//    Before the fix it built on device 0 and launched there whatever the handle.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "runtime/loader.h"
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

TEST(DeviceOrdinal, LinearAttentionBuildsAndRunsOnlyOnTheDeviceItsTargetNames) {
  if (runtime::nvrtc().is_bad()) GTEST_SKIP() << "no libnvrtc: the plan cannot be compiled";
  opgraph::testing::TempDir root;
  auto r = run_process({OPGRAPH_RUNTIME_PROBE, "fake-la-device"},
                       {std::string("OPGRAPH_LIBCUDA=") + OPGRAPH_FAKE_LIBCUDA, "OPGRAPH_FAKE_CUDA_DEVICE1_SM=90",
                        "OPGRAPH_COMPILED_CACHE=" + root.path().string(), "OPGRAPH_COMPILED_CACHE_REQUIRE_HIT=",
                        "OPGRAPH_DISABLE_COMPILED_CACHE="});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string& out = r.output;
  // A device that does not exist: refused naming it, nothing opened, never device 0.
  EXPECT_TRUE(has(out, "build for device 2: INVALID_CUDA_DEVICE: device 2 does not exist (2 visible)")) << out;
  EXPECT_TRUE(has(out, "runtime 2 open: no")) << out;
  // Device 1: its context retained, the module loaded there; device 0 never touched.
  EXPECT_TRUE(has(out, "build for device 1: built")) << out;
  EXPECT_TRUE(has(out, "runtime 1 ordinal: 1")) << out;
  EXPECT_TRUE(has(out, "runtime 0 open: no")) << out;
  EXPECT_TRUE(has(out, "fake-cuda: cuDevicePrimaryCtxRetain device 1")) << out;
  EXPECT_TRUE(has(out, "fake-cuda: cuModuleLoadData device 1")) << out;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    EXPECT_FALSE(line.rfind("fake-cuda: ", 0) == 0 && has(line + "\n", " device 0\n")) << line;
  // Each execute's driver lines lie between its two probe lines.
  auto between = [&](const std::string& who) {
    const std::size_t from = out.find("execute with a handle on " + who + "\n");
    const std::size_t to = out.find("executed with a handle on " + who + ": ");
    EXPECT_NE(from, std::string::npos) << out;
    EXPECT_NE(to, std::string::npos) << out;
    if (from == std::string::npos || to == std::string::npos || to < from) return std::string();
    return out.substr(from, out.find('\n', to) - from);
  };
  const std::string on0 = between("device 0");
  EXPECT_TRUE(has(on0, "executed with a handle on device 0: INVALID_CUDA_DEVICE: engine linear_attention: the plan "
                       "was built on device 1; this call's handle drives device 0"))
      << on0;
  EXPECT_FALSE(has(on0, "cuLaunchKernelEx")) << on0;
  const std::string on1 = between("device 1");
  EXPECT_TRUE(has(on1, "executed with a handle on device 1: OK")) << on1;
  EXPECT_TRUE(has(on1, "fake-cuda: cuLaunchKernelEx device 1")) << on1;
  const std::string unnamed = between("no ordinal");
  EXPECT_TRUE(has(unnamed, "executed with a handle on no ordinal: OK")) << unnamed;
  EXPECT_TRUE(has(unnamed, "fake-cuda: cuLaunchKernelEx device 1")) << unnamed;
}
