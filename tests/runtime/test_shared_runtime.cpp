// The per-device shared KernelRuntime (runtime/shared_runtimes.h) without a GPU:
// the fake two-device driver (tests/runtime/fake_libcuda: device 0 sm_90,
// device 1 sm_80; its stderr lines say which device each call touched) loaded
// through OPGRAPH_LIBCUDA by runtime_probe fake-shared-runtime in a fresh process.
//  * a device that does not exist (2, -1) is refused with INVALID_CUDA_DEVICE
//    naming it, before the driver is asked for any context, and opens nothing;
//  * the first lease of a device opens it (one retain of its primary context)
//    and puts the caller's current context back (none, or another device's);
//    later leases get the same runtime without touching the driver;
//  * a lease holds the device's lock: a second lease of that device waits until
//    it ends, a lease of another device does not;
//  * the gemm engine builds on the same runtime: building for device 1 after a
//    lease opened it retains nothing again.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "runtime/runtime_test_util.h"

using opgraph::testing::has;
using opgraph::testing::run_process;
using opgraph::testing::span;

namespace {



std::size_t count(const std::string& out, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = out.find(what); at != std::string::npos; at = out.find(what, at + 1)) ++n;
  return n;
}

class SharedRuntime : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    opgraph::testing::TempDir root;
    auto r = run_process({OPGRAPH_RUNTIME_PROBE, "fake-shared-runtime"},
                         {std::string("OPGRAPH_LIBCUDA=") + OPGRAPH_FAKE_LIBCUDA,
                          "OPGRAPH_COMPILED_CACHE=" + root.path().string(), "OPGRAPH_COMPILED_CACHE_REQUIRE_HIT=1",
                          "OPGRAPH_DISABLE_COMPILED_CACHE=", "OPGRAPH_ENABLE_ENGINES="});
    exit_code_ = r.exit_code;
    out_ = r.output;
  }
  void SetUp() override { ASSERT_EQ(exit_code_, 0) << out_; }
  static int exit_code_;
  static std::string out_;
};
int SharedRuntime::exit_code_ = -1;
std::string SharedRuntime::out_;

}  // namespace

TEST_F(SharedRuntime, AMissingDeviceIsRefusedNamingItAndOpensNothing) {
  EXPECT_TRUE(has(out_, "open at start: 0 no, 1 no")) << out_;
  for (const char* n : {"2", "-1"}) {
    const std::string lease =
        span(out_, std::string("lease ") + n + " begins", std::string("runtime ") + n + " open: ");
    EXPECT_TRUE(has(lease, std::string("lease ") + n + ": INVALID_CUDA_DEVICE: device " + n +
                               " does not exist (2 visible)"))
        << lease;
    EXPECT_TRUE(has(lease, std::string("runtime ") + n + " open: no")) << lease;
    EXPECT_FALSE(has(lease, "fake-cuda: ")) << lease;  // no context retained or made current
  }
}

TEST_F(SharedRuntime, TheFirstLeaseOpensTheDeviceAndPutsBackNoContext) {
  const std::string first = span(out_, "lease 1 begins", "current in lease 1: ");
  // Opened: device 1's primary context retained and made current, then none again.
  EXPECT_TRUE(has(first, "fake-cuda: cuDevicePrimaryCtxRetain device 1\nfake-cuda: cuCtxSetCurrent device 1\n"
                         "fake-cuda: cuCtxSetCurrent none\n"))
      << first;
  EXPECT_TRUE(has(first, "lease 1: ordinal 1 Fake GPU 1")) << first;
  EXPECT_TRUE(has(first, "current in lease 1: none")) << first;
  EXPECT_TRUE(has(out_, "runtime 1 open: yes (the leased one)")) << out_;
  EXPECT_TRUE(has(out_, "runtime 0 open: no")) << out_;
  EXPECT_FALSE(has(out_.substr(0, out_.find("lease 0 from device 1 begins")), "device 0\n")) << out_;
}

TEST_F(SharedRuntime, ALaterLeaseGetsTheSameRuntimeWithoutTheDriver) {
  const std::string again = span(out_, "lease 1 again begins", "lease 1 again: ");
  EXPECT_TRUE(has(again, "lease 1 again: the same runtime")) << again;
  EXPECT_FALSE(has(again, "fake-cuda: ")) << again;
}

TEST_F(SharedRuntime, TheFirstLeasePutsBackTheCallersContext) {
  const std::string open0 = span(out_, "lease 0 from device 1 begins", "current in lease 0: ");
  EXPECT_TRUE(has(open0, "fake-cuda: cuDevicePrimaryCtxRetain device 0\nfake-cuda: cuCtxSetCurrent device 0\n"
                         "fake-cuda: cuCtxSetCurrent device 1\n"))
      << open0;
  EXPECT_TRUE(has(open0, "lease 0: ordinal 0")) << open0;
  EXPECT_TRUE(has(open0, "current in lease 0: device 1")) << open0;
  EXPECT_TRUE(has(out_, "current after lease 0: device 1")) << out_;
  // Each device's primary context retained once by the registry (device 1's a
  // second time by the probe itself, to make it the caller's).
  EXPECT_EQ(count(out_, "fake-cuda: cuDevicePrimaryCtxRetain device 0"), 1u) << out_;
  EXPECT_EQ(count(out_, "fake-cuda: cuDevicePrimaryCtxRetain device 1"), 2u) << out_;
}

TEST_F(SharedRuntime, ALeaseHoldsItsDeviceOnly) {
  EXPECT_TRUE(has(out_, "lease 0 while device 1 is held: taken")) << out_;
  EXPECT_TRUE(has(out_, "second lease 1 while device 1 is held: waits")) << out_;
  EXPECT_TRUE(has(out_, "second lease 1 after the first ended: taken")) << out_;
}

TEST_F(SharedRuntime, TheGemmEngineBuildsOnTheSharedRuntime) {
  EXPECT_TRUE(has(out_, "gemm runtime 1: the shared one")) << out_;
  const std::string build = span(out_, "gemm build for device 1 begins", "gemm build for device 1: ");
  EXPECT_FALSE(has(build, "cuDevicePrimaryCtxRetain")) << build;
  // It reached the compile (REQUIRE_HIT names the entry) for device 1's arch,
  // with device 1's context bound for the step and none (the caller's) after.
  EXPECT_TRUE(has(build, "compiled cache miss for gemm_")) << build;
  EXPECT_TRUE(has(build, "_sm_80_")) << build;
  EXPECT_TRUE(has(build, "fake-cuda: cuCtxSetCurrent device 1\n")) << build;
  EXPECT_TRUE(has(out_, "current after the gemm build: none")) << out_;
}
