// The gemm engine's execute off the planning thread and concurrently (part of
// test_gemm_gpu; run on the H200 only). Plans are built on the gtest main
// thread (where the runtime's context is current); executes run on fresh
// std::threads, which have no CUDA context current. Every output is checked against the reference engine (float64)
// on fresh random inputs, the output poisoned first; tolerances as
// gemm_gpu_util.h's count_bad.
#include <gtest/gtest.h>

#include <thread>

#include "engines/gemm/gemm_engine.h"
#include "engines/reference/executor.h"
#include "gemm_gpu/gemm_gpu_util.h"

using namespace opgraph;
using namespace opgraph::gemm_testing;

namespace {

// One plan of `c` under `knobs` (empty: the heuristic's pick), built here.
std::unique_ptr<CompiledPlan> build(const Engine& engine, const OpGraph& g, Knobs knobs) {
  FactsCache facts(g, PlanTarget{gpu().props});
  PlanContext ctx{&facts};
  EXPECT_TRUE(engine.check_support(g, ctx).is_good());
  if (knobs.empty()) {
    auto props = gemm::heuristics(HeurMode::A, ctx, {&engine});
    EXPECT_TRUE(props.is_good());
    for (const auto& pr : *props)
      if (!pr.backend_marker) knobs = pr.config.knobs;
  }
  auto plan = engine.build_plan(g, PlanConfig{engine.id(), knobs, {}, -1}, ctx);
  EXPECT_TRUE(plan.is_good()) << plan.status().message();
  return plan.is_good() ? std::move(*plan) : nullptr;
}

VariantPack pack_of(const Operands& o) {
  VariantPack pack;
  for (const auto& [uid, d] : o.dev) pack.set(uid, reinterpret_cast<void*>(d->ptr()));
  return pack;
}

// The device output of `o` against the reference on o's host inputs (after
// the streams are synchronized): bad elements.
std::size_t check(const GemmCase& c, const OpGraph& g, Operands& o) {
  std::map<std::int64_t, reference::HostBuffer> host;
  for (auto& [uid, h] : o.host) host[uid] = reference::HostBuffer{h.data()};
  Status ref = reference::execute(g, host);
  EXPECT_TRUE(ref.is_good()) << ref.message();
  const auto& want = o.host[o.out_uid];
  std::vector<unsigned char> got(want.size());
  EXPECT_EQ(gpu().api->memcpy_dtoh(got.data(), o.dev[o.out_uid]->ptr(), got.size()), CUDA_SUCCESS);
  std::size_t worst = 0;
  const std::size_t bad = count_bad(c, want, got, &worst);
  if (bad)
    ADD_FAILURE() << describe(c) << ": " << bad << " bad; worst at " << worst << ": got "
                  << read_elem(got, c.out, worst) << " want " << read_elem(want, c.out, worst);
  return bad;
}

Knobs v2_split_knobs(int split) {
  gemm::GemmConfig cfg;
  cfg.version = 2;
  cfg.tile_n = 128;
  cfg.stages = 6;
  cfg.split_k = split;
  return gemm::knobs_of(cfg);
}

class GemmGpuThreads : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu().context || !gpu().api || gpu().props.sm_count == 0) GTEST_FAIL() << "no GPU: these tests run on the H200 only";
    if (!gpu().stream) {
      ASSERT_EQ(gpu().api->stream_create(&gpu().stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    }
  }
};

}  // namespace

// A plan built on this thread, executed from a std::thread that has no
// context current: v1, the heuristic's pick and (sm_90) a v2 split-K config.
// The worker's thread state is as it found it afterwards (nothing current).
TEST_F(GemmGpuThreads, ExecuteFromAThreadWithoutAContext) {
  std::mt19937 rng(std::random_device{}());
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  std::vector<Knobs> configs = {gemm::knobs_of(gemm::GemmConfig{}), Knobs{}};
  if (gpu().props.major == 9) configs.push_back(v2_split_knobs(3));
  for (const Knobs& knobs : configs) {
    GemmCase c{1, 8 * (1 + static_cast<std::int64_t>(rng() % 40)), 264, 8 * (64 + static_cast<std::int64_t>(rng() % 64)),
               false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "relu"}};
    OpGraph g = build_case(c);
    ASSERT_TRUE(g.validate().is_good());
    auto plan = build(*engine, g, knobs);
    ASSERT_NE(plan, nullptr);
    Operands o;
    ASSERT_TRUE(make_operands(*gpu().api, g, rng, o).is_good());
    const VariantPack pack = pack_of(o);
    ExecutionContext ec;
    ec.stream = gpu().stream;
    ec.device = &gpu().props;
    Status ran = Status::ok();
    CUcontext before = reinterpret_cast<CUcontext>(1), after = reinterpret_cast<CUcontext>(1);
    std::thread worker([&] {
      gpu().api->ctx_get_current(&before);
      ran = plan->execute(pack, ec);
      gpu().api->ctx_get_current(&after);
    });
    worker.join();
    EXPECT_EQ(before, nullptr) << "a fresh thread had a context current; the test proves nothing";
    EXPECT_TRUE(ran.is_good()) << knobs_to_string(knobs) << ": " << ran.message();
    EXPECT_EQ(after, nullptr) << "execute left its context current on the caller's thread";
    ASSERT_EQ(gpu().api->stream_synchronize(gpu().stream), CUDA_SUCCESS);
    EXPECT_EQ(check(c, g, o), 0u) << knobs_to_string(knobs);
  }
}
