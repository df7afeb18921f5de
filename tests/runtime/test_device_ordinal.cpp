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
//  * the cuDNN engine makes the target device's primary context current before it
//    takes its cuDNN handle (heuristics and build), puts the caller's (none) back
//    after, and refuses a target naming a device that does not exist before
//    touching any. cudnnCreate itself cannot succeed without a GPU, so what it
//    builds, and the refusal at execute of a handle on another device, are in
//    the GPU suite (tests/cudnn_gpu/test_cudnn_gpu_device.cpp). Before the fix it
//    created its handle in whatever context was current (device 0's through
//    cudnnCreate when none was).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "runtime/loader.h"
#include "runtime/runtime_test_util.h"

using namespace opgraph;
using opgraph::testing::has;
using opgraph::testing::run_process;
using opgraph::testing::span;

namespace {


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


// No line of the fake driver's names device 0.
void expect_device_0_untouched(const std::string& out) {
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    EXPECT_FALSE(line.rfind("fake-cuda: ", 0) == 0 && has(line + "\n", " device 0\n")) << line;
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
  expect_device_0_untouched(out);
  // Each execute's driver lines lie between its two probe lines.
  auto between = [&](const std::string& who) {
    return span(out, "execute with a handle on " + who + "\n", "executed with a handle on " + who + ": ");
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

TEST(DeviceOrdinal, CudnnTakesItsHandleInTheContextOfTheDeviceItsTargetNames) {
  opgraph::testing::TempDir root;
  auto r = run_process({OPGRAPH_RUNTIME_PROBE, "fake-cudnn-device"}, fake_env(root.path().string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string& out = r.output;
  if (has(out, "no libcudnn")) GTEST_SKIP() << "libcudnn cannot be loaded: " << out;
  // A device that does not exist: declined (heuristics) and refused (build) naming
  // it, before the driver is asked for any context.
  const std::string ghost = span(out, "heuristics for device 2 begin", "current after device 2: ");
  EXPECT_TRUE(has(ghost, "heuristics for device 2: GRAPH_NOT_SUPPORTED: engine cudnn: device 2 does not exist (2 "
                         "visible)"))
      << ghost;
  EXPECT_TRUE(has(ghost, "build for device 2: INVALID_CUDA_DEVICE: device 2 does not exist (2 visible)")) << ghost;
  EXPECT_FALSE(has(ghost, "fake-cuda: ")) << ghost;
  EXPECT_TRUE(has(ghost, "current after device 2: none")) << ghost;
  // Device 1: its primary context retained (once) and made current before cudnnCreate,
  // the caller's (none) put back after, for the heuristics query and for the build.
  const std::string heur = span(out, "heuristics for device 1 begin", "heuristics for device 1: ");
  EXPECT_TRUE(has(heur, "fake-cuda: cuDevicePrimaryCtxRetain device 1\nfake-cuda: cuCtxSetCurrent device 1\n"))
      << heur;
  EXPECT_TRUE(has(heur, "fake-cuda: cuCtxSetCurrent none\n")) << heur;
  const std::string build = span(out, "build for device 1 begins", "build for device 1: ");
  EXPECT_TRUE(has(build, "fake-cuda: cuCtxSetCurrent device 1\nfake-cuda: cuCtxSetCurrent none\n")) << build;
  EXPECT_FALSE(has(build, "cuDevicePrimaryCtxRetain")) << build;  // retained once per process
  EXPECT_TRUE(has(out, "current after device 1: none")) << out;
  // Everything so far without device 0; then the caller makes device 0's current.
  const std::size_t before0 = out.find("the caller opens device 0");
  ASSERT_NE(before0, std::string::npos) << out;
  expect_device_0_untouched(out.substr(0, before0));
  const std::string from0 = span(out, "build for device 1 from device 0 begins", "build for device 1 from device 0: ");
  EXPECT_TRUE(has(from0, "fake-cuda: cuCtxSetCurrent device 1\nfake-cuda: cuCtxSetCurrent device 0\n")) << from0;
  EXPECT_TRUE(has(out, "current after the build from device 0: device 0")) << out;
}
