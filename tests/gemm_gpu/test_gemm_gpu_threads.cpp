// The gemm engine's execute off the planning thread and concurrently (part of
// test_gemm_gpu; run on the H200 only). Plans are built on the gtest main
// thread (where the runtime's context is current); executes run on fresh
// std::threads, which have no CUDA context current, and on two streams at
// once for one split-K plan (each stream must get its own partials and tile
// counters). Every output is checked against the reference engine (float64)
// on fresh random inputs, the output poisoned first; tolerances as
// gemm_gpu_util.h's count_bad.
#include <gtest/gtest.h>

#include <thread>

#include "engines/gemm/gemm_engine.h"
#include "gemm_gpu/gemm_gpu_fixture.h"

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
  auto plan = build_direct(engine, g, PlanConfig{engine.id(), knobs, {}, -1}, ctx);
  EXPECT_TRUE(plan.is_good()) << plan.status().message();
  return plan.is_good() ? std::move(*plan) : nullptr;
}

// The device output of `o` against the reference on o's host inputs (after
// the streams are synchronized): bad elements.
std::size_t check(const GemmCase& c, const OpGraph& g, Operands& o) { return bad_elements(c, reference_out(g, o), o); }

class GemmGpuThreads : public GemmGpuFixture {};

}  // namespace

// A plan built on this thread, executed from a std::thread that has no
// context current: v1, the heuristic's pick and (sm_90) a v2 split-K config.
// The worker's thread state is as it found it afterwards (nothing current).
TEST_F(GemmGpuThreads, ExecuteFromAThreadWithoutAContext) {
  std::mt19937 rng(std::random_device{}());
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  std::vector<Knobs> configs = {gemm::knobs_of(gemm::GemmConfig{}), Knobs{}};
  if (gpu().props.major == 9) configs.push_back(v2_knobs(128, 3, false));
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
    const ExecutionContext ec = device_ec();
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

// One split-K plan executed over and over on two streams at once, from two
// threads, on different inputs: the kernels overlap, and each must use its
// own stream's partials and counters. Then once more on each stream from this
// thread (the slots are reused, counters back at zero).
TEST_F(GemmGpuThreads, SplitKPlanOnTwoStreamsAtOnce) {
  if (gpu().props.major != 9) GTEST_SKIP() << "split K is v2 (sm_90)";
  std::mt19937 rng(std::random_device{}());
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  // 2 x 2 tiles of 128 x 128, 4 splits of K: 16 units, far below one wave, so
  // both streams' kernels are resident together.
  GemmCase c{1, 256, 256, 8 * (256 + static_cast<std::int64_t>(rng() % 64)), false, true, DataType::BFLOAT16,
             DataType::FLOAT, {"bias"}};
  OpGraph g = build_case(c);
  ASSERT_TRUE(g.validate().is_good());
  auto plan = build(*engine, g, v2_knobs(128, 4, false));
  ASSERT_NE(plan, nullptr);
  Operands o[2];
  CUstream s[2] = {nullptr, nullptr};
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(make_operands(*gpu().api, g, rng, o[i]).is_good());
    ASSERT_EQ(gpu().api->stream_create(&s[i], CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  const VariantPack packs[2] = {pack_of(o[0]), pack_of(o[1])};
  ExecutionContext ec[2];
  for (int i = 0; i < 2; ++i) {
    ec[i].stream = s[i];
    ec[i].device = &gpu().props;
  }
  constexpr int kRounds = 200;
  Status ran[2] = {Status::ok(), Status::ok()};
  std::vector<std::thread> workers;
  for (int i = 0; i < 2; ++i)
    workers.emplace_back([&, i] {
      for (int r = 0; r < kRounds && ran[i].is_good(); ++r) ran[i] = plan->execute(packs[i], ec[i]);
    });
  for (auto& w : workers) w.join();
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(ran[i].is_good()) << ran[i].message();
    ASSERT_EQ(gpu().api->stream_synchronize(s[i]), CUDA_SUCCESS);
    EXPECT_EQ(check(c, g, o[i]), 0u) << "stream " << i << " after " << kRounds << " overlapping executes";
  }
  // Again from this thread, outputs poisoned: the counters the kernels left are zero.
  for (int i = 0; i < 2; ++i) {
    ASSERT_NO_FATAL_FAILURE(poison(o[i]));
    ASSERT_TRUE(plan->execute(packs[i], ec[i]).is_good());
    ASSERT_EQ(gpu().api->stream_synchronize(s[i]), CUDA_SUCCESS);
    EXPECT_EQ(check(c, g, o[i]), 0u) << "stream " << i << ", sequential";
  }
  plan.reset();
  for (CUstream st : s) gpu().api->stream_destroy(st);
}
