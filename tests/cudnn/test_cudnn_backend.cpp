// tests/cudnn/test_cudnn_backend.cpp — the cuDNN family without a GPU:
//  * the shipped manifest carries the provider; with no device (or a device
//    target but no GPU) the backend block is empty and the reference runs;
//  * planning for an arch (DeviceProperties::for_arch) never queries the backend;
//  * when libcudnn loads here, the lowering plan's tensor / pointwise / matmul /
//    reduction / norm descriptors finalize device-less, and a bad descriptor's
//    error carries cuDNN's status name, the step and the record's label.
#include <cstdio>
#include <random>

#include "cudnn/cudnn_test_util.h"
#include "engines/cudnn/backend.h"
#include "engines/manifest.h"
#include "runtime/loader.h"

namespace opgraph {
namespace {

using namespace cudnn_test;
namespace cu = engines::cudnn;

void build_mm_relu(Graph& g, TensorPtr& a, TensorPtr& b, TensorPtr& y, std::int64_t M, std::int64_t K, std::int64_t N) {
  g.set_name("mm_relu").set_compute_data_type(DataType::FLOAT);
  a = g.tensor({1, M, K}, DataType::FLOAT, "A");
  b = g.tensor({1, K, N}, DataType::FLOAT, "B");
  y = g.relu(g.matmul(a, b));
  y->set_output(true).set_name("Y").set_data_type(DataType::FLOAT);
}

TEST(CudnnProvider, ShippedManifestHasTheBackend) {
  const plan::Manifest& m = engines::default_manifest();
  ASSERT_NE(m.backend, nullptr);
  EXPECT_EQ(m.backend->engine().name(), "cudnn");
  PlanConfig c;
  c.engine_id = 42;
  EXPECT_EQ(m.backend->engine().label(c), "cudnn_eng42");
  // Frontend-band knobs never reach the backend.
  EXPECT_TRUE(m.backend->engine().knobs_from_public({{KnobType::SPLIT_KV, 2}}).is_bad());
  EXPECT_TRUE(m.backend->engine().knobs_from_public({{KnobType::TILE_M, 128}}).is_good());
}

TEST(CudnnProvider, NoDeviceNoEntriesAndTheReferenceRuns) {
  const std::int64_t M = 3, K = 4, N = 5;
  Graph g;
  TensorPtr a, b, y;
  build_mm_relu(g, a, b, y, M, K, N);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A, HeurMode::B, HeurMode::FALLBACK}).is_good());
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i)
    EXPECT_EQ(g.get_plan_name_at_index(i).value().rfind("cudnn", 0), std::string::npos) << g.get_plan_name_at_index(i).value();
  ASSERT_TRUE(g.build_plans().is_good());
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> av(M * K), bv(K * N), yv(M * N, -7.f);
  for (auto& x : av) x = d(rng);
  for (auto& x : bv) x = d(rng);
  VariantPack pack;
  pack.set(a->get_uid(), av.data()).set(b->get_uid(), bv.data()).set(y->get_uid(), yv.data());
  ASSERT_TRUE(g.execute(pack).is_good());
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (std::int64_t k = 0; k < K; ++k) s += double(av[i * K + k]) * bv[k * N + j];
      EXPECT_NEAR(yv[i * N + j], s > 0 ? s : 0.0, 1e-5);
    }
}

TEST(CudnnProvider, ArchTargetNeverQueriesTheBackend) {
  if (runtime::library_loaded(runtime::Library::CUDA_DRIVER))
    GTEST_SKIP() << "libcuda already loaded in this process: not an arch-only planning process";
  Graph g;
  TensorPtr a, b, y;
  build_mm_relu(g, a, b, y, 2, 3, 4);
  g.set_device_properties(DeviceProperties::for_arch("sm_90a").value());
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  const plan::Manifest& m = engines::default_manifest();
  FactsCache facts(g, g.plan_target());
  PlanContext ctx{&facts};
  auto why = m.backend->engine().mismatch(ctx);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("arch"), std::string::npos) << *why;
  auto e = m.backend->entries(g, HeurMode::A, ctx);
  EXPECT_TRUE(e.is_bad() ? e.status().code() == ErrorCode::GRAPH_NOT_SUPPORTED : e.value().empty());
  EXPECT_FALSE(runtime::library_loaded(runtime::Library::CUDNN));  // never opened for arch planning
}

TEST(CudnnProvider, NamedDeviceWithoutAGpuGivesAnEmptyBlock) {
  Graph g;
  TensorPtr a, b, y;
  build_mm_relu(g, a, b, y, 2, 3, 4);
  DeviceProperties p = DeviceProperties::for_arch("sm_90a").value();
  p.name = "NVIDIA H200";  // as the runtime's device reader would name it
  g.set_device_properties(p);
  Status s = g.create_execution_plans({HeurMode::A, HeurMode::FALLBACK});
  ASSERT_TRUE(s.is_good()) << s.to_string();  // the reference still plans
  bool any_backend = false;
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i)
    any_backend |= g.get_plan_name_at_index(i).value().rfind("cudnn", 0) == 0;
  // Without a GPU cudnnCreate fails: the backend block must be empty.
  if (runtime::cuda_driver().is_bad()) {
    EXPECT_FALSE(any_backend);
  }
}

// --- device-less finalize through the real library (skipped only if it cannot load) ---

const runtime::CudnnApi* api_or_skip() {
  auto api = runtime::cudnn();
  if (api.is_bad()) {
    std::printf("libcudnn cannot be loaded here, device-less finalize not tested: %s\n",
                api.status().to_string().c_str());
    return nullptr;
  }
  std::printf("libcudnn %zu from %s\n", api.value()->version, api.value()->path.c_str());
  return api.value();
}

TEST(CudnnDeviceless, LoweredDescriptorsFinalizeWithoutADevice) {
  const runtime::CudnnApi* api = api_or_skip();
  if (!api) GTEST_SKIP() << "libcudnn not loadable";
  Graph g;
  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  auto a = g.tensor({2, 8, 16}, DataType::HALF, "A");
  auto b = g.tensor({2, 16, 32}, DataType::HALF, "B");
  auto bias = g.tensor({1, 1, 32}, DataType::HALF, "bias");
  auto c = g.add(g.matmul(a, b), bias);
  auto r = g.reduction(c, Attributes().set("mode", "ADD"));
  r->set_output(true).set_dim({2, 8, 1}).set_data_type(DataType::FLOAT);
  ASSERT_TRUE(g.validate().is_good()) << g.validate().to_string();
  auto p = cu::lower(g);
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  auto m = cu::materialise(*api, p.value(), nullptr);
  ASSERT_TRUE(m.is_good()) << m.status().to_string();
  EXPECT_EQ(m->records.size(), p->records.size());
  // A tensor descriptor reads back what the plan set.
  const auto* ta = p->tensor(a->get_uid());
  auto uid = m->records[static_cast<std::size_t>(ta->record)].get_int64(CUDNN_ATTR_TENSOR_UNIQUE_ID, cu::Step::FINALIZE, "A");
  ASSERT_TRUE(uid.is_good()) << uid.status().to_string();
  EXPECT_EQ(uid.value(), a->get_uid());
}

TEST(CudnnDeviceless, LayernormDescriptorsFinalizeWithoutADevice) {
  const runtime::CudnnApi* api = api_or_skip();
  if (!api) GTEST_SKIP() << "libcudnn not loadable";
  Graph g;
  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  auto x = g.tensor({4, 32, 1, 1}, DataType::FLOAT, "X");
  auto s = g.tensor({1, 32, 1, 1}, DataType::FLOAT, "scale");
  auto bi = g.tensor({1, 32, 1, 1}, DataType::FLOAT, "bias");
  auto eps = g.tensor_scalar(1e-5, DataType::FLOAT);
  auto [y, mean, inv] = g.layernorm(x, s, bi, eps, Attributes().set("forward_phase", "TRAINING"));
  y->set_output(true);
  mean->set_output(true);
  inv->set_output(true);
  ASSERT_TRUE(g.validate().is_good()) << g.validate().to_string();
  auto p = cu::lower(g);
  ASSERT_TRUE(p.is_good()) << p.status().to_string();
  auto m = cu::materialise(*api, p.value(), nullptr);
  ASSERT_TRUE(m.is_good()) << m.status().to_string();
}

TEST(CudnnDeviceless, BadDescriptorErrorNamesStatusStepAndRecord) {
  const runtime::CudnnApi* api = api_or_skip();
  if (!api) GTEST_SKIP() << "libcudnn not loadable";
  Graph g;
  auto x = g.tensor({2, 4}, DataType::FLOAT, "x");
  auto y = g.relu(x);
  y->set_output(true);
  ASSERT_TRUE(g.validate().is_good());
  auto p = cu::lower(g);
  ASSERT_TRUE(p.is_good());
  // Corrupt x's dimensions: cuDNN refuses the tensor at finalize.
  auto& rec = p.value().records[static_cast<std::size_t>(p->tensor(x->get_uid())->record)];
  for (auto& a : rec.attrs)
    if (a.name == CUDNN_ATTR_TENSOR_DIMENSIONS) a.ints = {2, -4};
  auto m = cu::materialise(*api, p.value(), nullptr);
  ASSERT_TRUE(m.is_bad());
  const std::string msg = m.status().message();
  EXPECT_NE(msg.find("CUDNN_STATUS_"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cudnn finalize"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tensor 'x'"), std::string::npos) << msg;
}

// A runtime-compiled kernel of one engine config that does not compile (cuDNN's
// INTERNAL_ERROR_COMPILATION_FAILED when the execution plan is built) declines that
// plan, so the next ranked plan is tried, as cudnn-frontend's build_plans skips a plan
// that fails to build (test_mhas's d_v = 520 plan on the H200). Other internal
// errors, and the same status at execute, stay failures.
TEST(CudnnStatus, AKernelThatDoesNotCompileDeclinesItsPlan) {
  const runtime::CudnnApi api{};  // no error-string functions: the status is named by number
  Status s = cu::check(api, CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED, cu::Step::BUILD,
                       "engine 1: execution plan: finalize");
  EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED) << s.to_string();
  for (const char* part : {"cudnn build", "engine 1", "4001", "did not compile"})
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " in " << s.message();
  EXPECT_EQ(cu::check(api, CUDNN_STATUS_INTERNAL_ERROR, cu::Step::BUILD, "x").code(),
            ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED);
  EXPECT_EQ(cu::check(api, CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED, cu::Step::EXECUTE, "x").code(),
            ErrorCode::GRAPH_EXECUTION_FAILED);
  EXPECT_EQ(cu::check(api, CUDNN_STATUS_NOT_SUPPORTED, cu::Step::BUILD, "x").code(), ErrorCode::GRAPH_NOT_SUPPORTED);
}

}  // namespace
}  // namespace opgraph
