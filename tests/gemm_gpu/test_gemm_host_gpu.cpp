// The gemm engine's host side on the GPU (part of test_gemm_gpu; run on the
// H200 only): planning off the runtime's thread binds the runtime's context
// for the whole step and leaves the caller's as it was (none, or a context of
// the caller's own); the plan then executes from yet another thread; the v2
// split-K scratch stays within StreamScratch::kMaxSlots slots when every
// request comes on a fresh stream, in sequence and with more streams in
// flight at once than slots. Every output is checked against the reference
// engine (float64) on fresh random inputs, the output poisoned first;
// tolerances as gemm_gpu_util.h's count_bad.
#include <gtest/gtest.h>

#include <thread>

#include "engines/gemm/gemm_engine.h"
#include "engines/gemm/gemm_exec.h"
#include "gemm_gpu/gemm_gpu_fixture.h"
#include "gpu/second_context.h"

using namespace opgraph;
using namespace opgraph::gemm_testing;

namespace {

// One plan of `g` under `knobs`, built on the calling thread.
Result<std::unique_ptr<CompiledPlan>> build(const Engine& engine, const OpGraph& g, const Knobs& knobs) {
  FactsCache facts(g, PlanTarget{gpu().props});
  PlanContext ctx{&facts};
  OPGRAPH_CHECK(engine.check_support(g, ctx));
  return build_direct(engine, g, PlanConfig{engine.id(), knobs, {}, -1}, ctx);
}

// A bf16 [1, m, k] @ [1, k, n] (K-major B) + bias, relu case with random extents.
GemmCase random_case(std::mt19937& rng, DataType out = DataType::BFLOAT16) {
  return GemmCase{1, 8 * (16 + static_cast<std::int64_t>(rng() % 48)), 8 * (32 + static_cast<std::int64_t>(rng() % 32)),
                  8 * (64 + static_cast<std::int64_t>(rng() % 64)), false, true, DataType::BFLOAT16, out,
                  {"bias", "relu"}};
}

// v1, and on sm_90 a clustered v2 config (the occupancy query runs at
// planning) and a split-K one.
std::vector<Knobs> host_configs() {
  std::vector<Knobs> configs = {gemm::knobs_of(gemm::GemmConfig{})};
  if (gpu().props.major == 9) {
    configs.push_back(v2_knobs(128, 1, false, 1, 2));
    configs.push_back(v2_knobs(128, 3, false));
  }
  return configs;
}

class GemmGpuHost : public GemmGpuFixture {};

}  // namespace

// (a) Planned on a std::thread with no context current, executed from another
// such thread: both threads are left with nothing current; results correct.
// In a full test_gemm_gpu run the shared runtime is open by then, so this
// covers planning's ContextScope; the first open's ContextRestore is covered
// on CI (GemmHost.ContextRestorePutsBackTheCallersContext) and here when the
// test runs alone (--gtest_filter='GemmGpuHost.PlanOn*').
TEST_F(GemmGpuHost, PlanOnAThreadWithoutAContextExecuteOnAnother) {
  std::mt19937 rng(std::random_device{}());
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  for (const Knobs& knobs : host_configs()) {
    const GemmCase c = random_case(rng);
    OpGraph g = build_case(c);
    ASSERT_TRUE(g.validate().is_good());
    Result<std::unique_ptr<CompiledPlan>> plan = Status(ErrorCode::INTERNAL_ERROR, "not built");
    CUcontext before = reinterpret_cast<CUcontext>(1), after = reinterpret_cast<CUcontext>(1);
    std::thread planner([&] {
      gpu().api->ctx_get_current(&before);
      plan = build(*engine, g, knobs);
      gpu().api->ctx_get_current(&after);
    });
    planner.join();
    EXPECT_EQ(before, nullptr) << "a fresh thread had a context current; the test proves nothing";
    ASSERT_TRUE(plan.is_good()) << knobs_to_string(knobs) << ": " << plan.status().message();
    EXPECT_EQ(after, nullptr) << knobs_to_string(knobs) << ": planning left a context current";
    Operands o;
    ASSERT_TRUE(make_operands(*gpu().api, g, rng, o).is_good());
    const VariantPack pack = pack_of(o);
    const ExecutionContext ec = device_ec();
    Status ran = Status::ok();
    after = reinterpret_cast<CUcontext>(1);
    std::thread worker([&] {
      ran = (*plan)->execute(pack, ec);
      gpu().api->ctx_get_current(&after);
    });
    worker.join();
    EXPECT_TRUE(ran.is_good()) << knobs_to_string(knobs) << ": " << ran.message();
    EXPECT_EQ(after, nullptr);
    ASSERT_EQ(gpu().api->stream_synchronize(gpu().stream), CUDA_SUCCESS);
    EXPECT_EQ(bad_elements(c, reference_out(g, o), o), 0u) << knobs_to_string(knobs);
  }
}


// (b) A thread with a context of its own current (not the runtime's primary
// context) plans, executes and drops the plan: its context is current again
// after each call, and the results are correct.
TEST_F(GemmGpuHost, TheCallersContextIsUnchangedByPlanningAndExecuting) {
  std::string why;
  const CUcontext mine = gpu_testing::second_context(*gpu().api, &why);
  ASSERT_NE(mine, nullptr) << why;
  ASSERT_NE(mine, gpu().context->context()) << "the test's context must differ from the runtime's";
  std::mt19937 rng(std::random_device{}());
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  for (const Knobs& knobs : host_configs()) {
    const GemmCase c = random_case(rng);
    OpGraph g = build_case(c);
    ASSERT_TRUE(g.validate().is_good());
    Operands o;
    ASSERT_TRUE(make_operands(*gpu().api, g, rng, o).is_good());
    const VariantPack pack = pack_of(o);
    const ExecutionContext ec = device_ec();
    Status built = Status::ok(), ran = Status::ok();
    CUcontext after_plan = nullptr, after_execute = nullptr, after_drop = nullptr;
    std::thread caller([&] {
      if (gpu().api->ctx_set_current(mine) != CUDA_SUCCESS) return;
      auto plan = build(*engine, g, knobs);
      built = plan.status();
      gpu().api->ctx_get_current(&after_plan);
      if (plan.is_good()) {
        ran = (*plan)->execute(pack, ec);
        gpu().api->ctx_get_current(&after_execute);
        gpu().api->stream_synchronize(gpu().stream);
      }
      plan = Status(ErrorCode::INTERNAL_ERROR, "dropped");  // freed with `mine` current
      gpu().api->ctx_get_current(&after_drop);
      gpu().api->ctx_set_current(nullptr);
    });
    caller.join();
    ASSERT_TRUE(built.is_good()) << knobs_to_string(knobs) << ": " << built.message();
    EXPECT_EQ(after_plan, mine) << knobs_to_string(knobs) << ": planning changed the caller's context";
    EXPECT_TRUE(ran.is_good()) << knobs_to_string(knobs) << ": " << ran.message();
    EXPECT_EQ(after_execute, mine) << knobs_to_string(knobs) << ": execute changed the caller's context";
    EXPECT_EQ(after_drop, mine) << knobs_to_string(knobs) << ": dropping the plan changed the caller's context";
    EXPECT_EQ(bad_elements(c, reference_out(g, o), o), 0u) << knobs_to_string(knobs);
  }
}

// (c) One split-K plan, every request on a fresh stream: first in sequence
// (3 N + 1 streams, each created, used once, destroyed), then N + 2 streams
// in flight at once, 20 rounds each without a synchronisation between (slots
// change hands while their last launch may still run). The plan never holds
// more than N slots, and every output is right.
TEST_F(GemmGpuHost, FreshStreamsKeepTheSplitKScratchBounded) {
  if (gpu().props.major != 9) GTEST_SKIP() << "split K is v2 (sm_90)";
  constexpr std::size_t kN = gemm::StreamScratch::kMaxSlots;
  std::mt19937 rng(std::random_device{}());
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  // 2 x 2 tiles of 128 x 128, 4 splits of K: 16 units, so several streams' kernels fit at once.
  const GemmCase c{1, 256, 256, 8 * (256 + static_cast<std::int64_t>(rng() % 64)), false, true, DataType::BFLOAT16,
                   DataType::FLOAT, {"bias"}};
  OpGraph g = build_case(c);
  ASSERT_TRUE(g.validate().is_good());
  auto plan = build(*engine, g, v2_knobs(128, 4, false));
  ASSERT_TRUE(plan.is_good()) << plan.status().message();
  ExecutionContext ec;
  ec.device = &gpu().props;
  {
    Operands o;
    ASSERT_TRUE(make_operands(*gpu().api, g, rng, o).is_good());
    const std::vector<unsigned char> want = reference_out(g, o);
    const VariantPack pack = pack_of(o);
    for (std::size_t i = 0; i < 3 * kN + 1; ++i) {
      CUstream s = nullptr;
      ASSERT_EQ(gpu().api->stream_create(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
      poison(o);
      ec.stream = s;
      Status ran = (*plan)->execute(pack, ec);
      EXPECT_TRUE(ran.is_good()) << "request " << i << ": " << ran.message();
      ASSERT_EQ(gpu().api->stream_synchronize(s), CUDA_SUCCESS);
      EXPECT_EQ(gpu().api->stream_destroy(s), CUDA_SUCCESS);
      EXPECT_EQ(bad_elements(c, want, o), 0u) << "request " << i << " on a fresh stream";
      EXPECT_LE(gemm::split_k_slots(inner_plan(**plan)).value_or(999), kN) << "request " << i;
    }
    // (A driver that hands a destroyed stream's handle to the next one keeps
    // fewer: that stream's slot is found again.)
    EXPECT_GE(gemm::split_k_slots(inner_plan(**plan)).value_or(0), 1u);
  }
  constexpr std::size_t kStreams = kN + 2;
  constexpr int kRounds = 20;
  Operands o[kStreams];
  std::vector<VariantPack> packs;
  CUstream s[kStreams] = {};
  for (std::size_t i = 0; i < kStreams; ++i) {
    ASSERT_TRUE(make_operands(*gpu().api, g, rng, o[i]).is_good());
    packs.push_back(pack_of(o[i]));
    ASSERT_EQ(gpu().api->stream_create(&s[i], CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  for (int r = 0; r < kRounds; ++r)
    for (std::size_t i = 0; i < kStreams; ++i) {
      ec.stream = s[i];
      Status ran = (*plan)->execute(packs[i], ec);
      ASSERT_TRUE(ran.is_good()) << "round " << r << " stream " << i << ": " << ran.message();
    }
  EXPECT_EQ(gemm::split_k_slots(inner_plan(**plan)).value_or(999), kN) << kStreams << " live streams share exactly N slots";
  for (std::size_t i = 0; i < kStreams; ++i) {
    ASSERT_EQ(gpu().api->stream_synchronize(s[i]), CUDA_SUCCESS);
    EXPECT_EQ(bad_elements(c, reference_out(g, o[i]), o[i]), 0u) << "stream " << i << " of " << kStreams << " in flight";
  }
  plan = Status(ErrorCode::INTERNAL_ERROR, "dropped");
  for (CUstream st : s) gpu().api->stream_destroy(st);
}
