// The runtime on a GPU (built with -DOPGRAPH_GPU_TESTS=ON; run by
// bench/run.sh runtime on the H200, never on CI): device properties read
// through the driver API, smoke kernels compiled, cached, loaded and launched
// through the runtime layer give the host's result, and a second process-like
// runtime is served from the cache with cuModuleLoadData as the check.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "gpu_buffer.h"

using namespace opgraph;
using namespace opgraph::runtime;

namespace {

std::filesystem::path fresh_dir(const char* tag) {
  auto p = std::filesystem::temp_directory_path() / ("opgraph_gpu_" + std::string(tag) + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  return p;
}

}  // namespace

TEST(RuntimeGpu, DevicePropertiesFromTheDriver) {
  auto p = read_device_properties(0);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  std::printf("device 0: %s\n", p->to_json().c_str());
  EXPECT_GT(p->major, 0);
  EXPECT_GT(p->sm_count, 0);
  EXPECT_GT(p->l2_bytes, 0);
  EXPECT_GT(p->smem_per_block_optin, 48 * 1024);
  EXPECT_FALSE(p->name.empty());
  if (p->major == 9 && p->minor == 0) {
    EXPECT_EQ(p->arch(), "sm_90a");
    auto aot = DeviceProperties::for_arch("sm_90a");
    std::printf("for_arch(sm_90a) defaults %s the device (%s)\n", *aot == *p ? "match" : "DIFFER from",
                aot->to_json().c_str());
  }
  auto back = DeviceProperties::from_json(p->to_json());
  ASSERT_TRUE(back.is_good());
  EXPECT_EQ(*back, *p);
}

TEST(RuntimeGpu, SmokeKernelsGiveTheHostResultColdThenWarm) {
  CacheOptions o;
  o.root = fresh_dir("smoke");
  std::mt19937 rng(std::random_device{}());
  auto params = smoke::declared_params();
  params.push_back({std::uniform_int_distribution<int>(-64, 64)(rng) / 8.0, 0.375, smoke::SmokeType::F32});
  for (int pass = 0; pass < 2; ++pass) {
    auto rt = KernelRuntime::open(0, o);
    ASSERT_TRUE(rt.is_good()) << rt.status().message();
    CUstream stream = nullptr;
    ASSERT_EQ((*rt)->api().stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    for (const auto& p : params) {
      auto k = (*rt)->get(smoke::affine_request(p));
      ASSERT_TRUE(k.is_good()) << k.status().message();
      // An odd size, so the tail of the grid-stride loop is exercised.
      const std::int64_t n = std::uniform_int_distribution<std::int64_t>(1 << 16, 1 << 21)(rng) | 1;
      auto bad = gpu_testing::run_smoke_and_check(**rt, **k, p, n, stream, rng);
      ASSERT_TRUE(bad.is_good()) << bad.status().message();
      EXPECT_EQ(*bad, 0u) << (*k)->name << " n=" << n;
    }
    const auto& s = (*rt)->cache().stats();
    if (pass == 0) EXPECT_EQ(s.misses, params.size());
    else EXPECT_EQ(s.hits, params.size());
    EXPECT_EQ(s.invalid, 0u);
    (*rt)->api().stream_destroy(stream);
  }
  std::filesystem::remove_all(o.root);
}

TEST(RuntimeGpu, TruncatedEntryIsRebuiltAndRuns) {
  CacheOptions o;
  o.root = fresh_dir("trunc");
  const smoke::AffineParams p{1.25, -0.5, smoke::SmokeType::F32};
  {
    auto rt = KernelRuntime::open(0, o);
    ASSERT_TRUE(rt.is_good()) << rt.status().message();
    ASSERT_TRUE((*rt)->get(smoke::affine_request(p)).is_good());
  }
  for (const auto& e : std::filesystem::directory_iterator(o.root / "v1")) {
    for (const auto& f : std::filesystem::directory_iterator(e.path())) {
      if (f.path().extension() == ".cubin") std::filesystem::resize_file(f.path(), 100);
    }
  }
  auto rt = KernelRuntime::open(0, o);
  ASSERT_TRUE(rt.is_good());
  auto k = (*rt)->get(smoke::affine_request(p));
  ASSERT_TRUE(k.is_good()) << k.status().message();
  EXPECT_EQ((*rt)->cache().stats().invalid, 1u);
  std::mt19937 rng(std::random_device{}());
  auto bad = gpu_testing::run_smoke_and_check(**rt, **k, p, 100003, nullptr, rng);
  ASSERT_TRUE(bad.is_good()) << bad.status().message();
  EXPECT_EQ(*bad, 0u);
  std::filesystem::remove_all(o.root);
}
