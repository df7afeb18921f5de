// tests/cudnn_gpu/test_cudnn_gpu.cpp — the cuDNN engine family on a GPU (built
// with -DOPGRAPH_GPU_TESTS=ON; run by bench/run.sh cudnn, never on CI).
//
// The cases (cases_core.cpp: matmul, pointwise at ranks 2..5 and odd extents,
// reductions, the norms, convolutions one per graph; cases_ops.cpp: batchnorm
// blocks and tensor ops) run through the harness (gpu_harness.h): each either
// runs on its first cudnn plan and matches the reference, or — where cuDNN 9.14
// on the H200 has no engine or the lowering declines — must decline cleanly
// with the named reason. Also: a build error names cuDNN's status, the step,
// the engine and the operations; bf16 matmul timing (CudnnGpuBench.MatmulBf16,
// CUDA events, median of 20, "RESULT ..." lines).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "cudnn_gpu/gpu_harness.h"
#include "runtime/device.h"

using namespace opgraph;

namespace {

using namespace cudnn_gpu;

void run_all(const std::vector<Case>& cases, const char* title) {
  std::vector<Outcome> outcomes;
  for (const Case& c : cases) outcomes.push_back(run_case(c));
  std::printf("---- %s: %zu cases\n", title, outcomes.size());
  for (const auto& o : outcomes) std::printf("CASE %-34s %s\n", o.name.c_str(), o.what.substr(0, 240).c_str());
}

TEST(CudnnGpu, WhichLibcudnn) {
  auto api = runtime::cudnn();
  ASSERT_TRUE(api.is_good()) << api.status().to_string();
  std::printf("LIBCUDNN version %zu path %s\n", api.value()->version, api.value()->path.c_str());
}

TEST(CudnnGpu, CoreFamiliesMatchTheReferenceOrDecline) {
  ASSERT_NE(driver(), nullptr) << "no CUDA device";
  run_all(core_cases(), "core");
}

TEST(CudnnGpu, OpFamiliesMatchTheReferenceOrDecline) {
  ASSERT_NE(driver(), nullptr) << "no CUDA device";
  run_all(op_cases(), "ops");
}

// A config cuDNN never offered: building it fails at the BUILD step with cuDNN's
// status name and the engine in the message.
TEST(CudnnGpu, BuildErrorNamesStatusStepAndEngine) {
  ASSERT_NE(driver(), nullptr);
  auto props = runtime::read_device_properties(0);
  ASSERT_TRUE(props.is_good());
  Graph g;
  auto x = g.tensor({1, 8, 64}, DataType::FLOAT, "x");
  out(g.relu(x), "y");
  g.set_device_properties(props.value());
  ASSERT_TRUE(g.create_execution_plan(9999, {}).is_good());
  Status s = g.build_plan_at_index(0);
  ASSERT_TRUE(s.is_bad());
  const std::string m = s.message();
  std::printf("build error: %s\n", s.to_string().c_str());
  EXPECT_NE(m.find("CUDNN_STATUS_"), std::string::npos) << m;
  EXPECT_NE(m.find("cudnn build"), std::string::npos) << m;
  EXPECT_NE(m.find("engine 9999"), std::string::npos) << m;
  EXPECT_NE(m.find("op 'pointwise'"), std::string::npos) << m;  // the graph's operations
}

TEST(CudnnGpuBench, MatmulBf16) {
  const auto* d = driver();
  ASSERT_NE(d, nullptr);
  auto props = runtime::read_device_properties(0);
  ASSERT_TRUE(props.is_good());
  for (std::int64_t n : {4096, 8192}) {
    Graph g;
    g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    auto a = g.tensor({1, n, n}, DataType::BFLOAT16, "A");
    auto b = g.tensor({1, n, n}, DataType::BFLOAT16, "B");
    auto c = g.matmul(a, b);
    c->set_output(true).set_name("C").set_data_type(DataType::BFLOAT16);
    g.set_device_properties(props.value());
    ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
    std::int64_t bi = -1;
    for (std::int64_t i = 0; i < g.get_execution_plan_count() && bi < 0; ++i)
      if (g.get_plan_name_at_index(i).value().rfind("cudnn_eng", 0) == 0) bi = i;
    ASSERT_GE(bi, 0);
    ASSERT_TRUE(g.build_plan_at_index(bi).is_good());
    std::size_t bytes = static_cast<std::size_t>(n * n * 2);
    DevMem ma(bytes), mb(bytes), mc(bytes);
    d->memset_d32(ma.ptr(), 0x3F803F80u, bytes / 4);  // bf16 1.0 pairs
    d->memset_d32(mb.ptr(), 0x3F003F00u, bytes / 4);  // bf16 0.5 pairs
    std::int64_t ws = g.get_workspace_size_plan_at_index(bi).value();
    DevMem mw(static_cast<std::size_t>(ws));
    VariantPack p;
    p.set(a->get_uid(), ma.data()).set(b->get_uid(), mb.data()).set(c->get_uid(), mc.data());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(g.execute_plan_at_index(p, {mw.data(), ws}, bi, nullptr).is_good());
    ASSERT_EQ(d->ctx_synchronize(), CUDA_SUCCESS);
    // Every element of C is n * 0.5 (exact in bf16 for powers of two): the run computed the product.
    std::vector<std::uint16_t> hc(16);
    d->memcpy_dtoh(hc.data(), mc.ptr(), 32);
    float c0;
    std::uint32_t u = std::uint32_t{hc[0]} << 16;
    std::memcpy(&c0, &u, 4);
    EXPECT_EQ(c0, static_cast<float>(n) * 0.5f);
    std::vector<double> ms;
    ASSERT_TRUE(d->event_create && d->event_record && d->event_synchronize && d->event_elapsed_time)
        << "driver has no event functions";
    for (int it = 0; it < 20; ++it) {
      CUevent e0, e1;
      d->event_create(&e0, 0);
      d->event_create(&e1, 0);
      d->event_record(e0, nullptr);
      ASSERT_TRUE(g.execute_plan_at_index(p, {mw.data(), ws}, bi, nullptr).is_good());
      d->event_record(e1, nullptr);
      d->event_synchronize(e1);
      float t = 0;
      d->event_elapsed_time(&t, e0, e1);
      ms.push_back(t);
      d->event_destroy(e0);
      d->event_destroy(e1);
    }
    std::sort(ms.begin(), ms.end());
    double med = ms[ms.size() / 2];
    double tflops = 2.0 * double(n) * n * n / (med * 1e-3) / 1e12;
    std::printf("RESULT matmul_bf16 n=%lld plan=%s median_ms=%.4f tflops=%.1f\n", static_cast<long long>(n),
                g.get_plan_name_at_index(bi).value().c_str(), med, tflops);
  }
}

}  // namespace
