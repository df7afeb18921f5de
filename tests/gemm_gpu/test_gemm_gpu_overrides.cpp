// Execute-time shape overrides on the gemm engine (part of test_gemm_gpu; run on
// the H200 only; docs/dynamic_shapes.md): ONE plan, built for a declared shape,
// runs many shapes of its layout class through VariantPack::override_shape — the
// graph's M, N, K (and batch) overridden on A, B, the bias and C — with its one
// kernel: v1, v2, v2 with SWAP_AB, and a split-K v2 plan on shapes whose schedule
// fits the scratch sized at build and on larger ones (fewer splits). Every output against the reference engine
// (float64) run on a graph declared at the call's shape with the same fresh
// random inputs, the output poisoned first (tolerances: gemm_gpu_util.h's
// count_bad). Refused overrides (another kernel class, extents that disagree) launch
// nothing: the poisoned output stays.
// Also through Graph::execute_plan_at_index with a stream handle, shapes repeating
// (the plan keeps its last 8 overridden shapes' launches).
#include <gtest/gtest.h>

#include "engines/gemm/gemm_engine.h"
#include "gemm_gpu/gemm_gpu_fixture.h"
#include "gpu/stream_handle.h"
#include "opgraph/graph.h"

using namespace opgraph;
using namespace opgraph::gemm_testing;

namespace {

// A plan of `g` under `knobs` (an engine built directly; execute normalises as Graph does).
Result<std::unique_ptr<CompiledPlan>> build_plan_of(const Engine& engine, const OpGraph& g, const Knobs& knobs) {
  FactsCache facts(g, PlanTarget{gpu().props});
  PlanContext ctx{&facts};
  OPGRAPH_CHECK(engine.check_support(g, ctx));
  return build_direct(engine, g, PlanConfig{engine.id(), knobs, {}, -1}, ctx);
}

// The caller's pack for a graph declared at the call's shape (`gs`, operands `o`):
// its buffers, and an override of every operand with gs's extents and strides,
// keyed by the uids of the plan's graph `g` (same construction, so the same uids:
// checked by name).
VariantPack overridden_pack(const OpGraph& g, const OpGraph& gs, const Operands& o) {
  VariantPack pack = pack_of(o);
  for (const auto& t : gs.tensors()) {
    if (t->get_is_virtual() || t->get_is_pass_by_value()) continue;
    const TensorPtr same = g.tensor_by_uid(t->get_uid());
    EXPECT_TRUE(same && same->get_name() == t->get_name()) << "uid " << t->get_uid() << " is not '" << t->get_name()
                                                           << "' in the plan's graph";
    pack.override_shape(t->get_uid(), t->get_dim(), t->get_stride());
  }
  return pack;
}

// Runs `plan` (built for case `built`) on case `now` through overrides; returns the bad elements.
std::size_t run_overridden(const CompiledPlan& plan, const OpGraph& g, const GemmCase& now, std::mt19937& rng,
                           const std::string& what) {
  OpGraph gs = build_case(now);
  EXPECT_TRUE(gs.validate().is_good());
  Operands o;
  EXPECT_TRUE(make_operands(*gpu().api, gs, rng, o).is_good());  // the output poisoned
  const Status ran = plan.execute(overridden_pack(g, gs, o), device_ec());
  EXPECT_TRUE(ran.is_good()) << describe(now) << what << ": " << ran.to_string();
  if (ran.is_bad()) return 1;
  EXPECT_EQ(gpu().api->stream_synchronize(gpu().stream), CUDA_SUCCESS);
  return bad_elements(now, reference_out(gs, o), o, what);
}

// Whether o's device output still holds the poison (all bytes 0xFF).
bool untouched(const Operands& o) {
  std::vector<unsigned char> got(o.host.at(o.out_uid).size());
  EXPECT_EQ(gpu().api->ctx_synchronize(), CUDA_SUCCESS);
  EXPECT_EQ(gpu().api->memcpy_dtoh(got.data(), o.dev.at(o.out_uid)->ptr(), got.size()), CUDA_SUCCESS);
  return got == std::vector<unsigned char>(got.size(), 0xFF);
}

class GemmGpuOverrides : public GemmGpuFixture {};

}  // namespace

TEST_F(GemmGpuOverrides, OnePlanRunsManyShapesOfItsClass) {
  std::mt19937 rng(std::random_device{}());
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  std::vector<std::pair<std::string, Knobs>> configs = {{"v1 64x64", gemm::knobs_of(gemm::GemmConfig{1, 64, 64, 2})},
                                                        {"v1 128x128", gemm::knobs_of(gemm::GemmConfig{})}};
  if (gpu().props.major == 9) {
    configs.push_back({"v2 128x128", v2_knobs(128, 1, false)});
    configs.push_back({"v2 128x256 swap", v2_knobs(256, 1, true)});
    configs.push_back({"v2 128x128 cluster 2", v2_knobs(128, 1, false, 0, 2)});
  }
  std::uniform_int_distribution<std::int64_t> e8(1, 96);
  for (bool a_col : {false, true})
    for (bool b_col : {false, true}) {
      const GemmCase declared{2, 512, 384, 256, a_col, b_col, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "relu"}};
      OpGraph g = build_case(declared);
      ASSERT_TRUE(g.validate().is_good());
      for (const auto& [name, knobs] : configs) {
        auto plan = build_plan_of(*engine, g, knobs);
        ASSERT_TRUE(plan.is_good()) << name << ": " << plan.status().message();
        for (int i = 0; i < 4; ++i) {
          GemmCase now = declared;
          now.batch = 2 + static_cast<std::int64_t>(rng() % 3);
          now.m = 8 * e8(rng);
          now.n = 8 * e8(rng);
          now.k = 8 * e8(rng);
          EXPECT_EQ(run_overridden(**plan, g, now, rng, " (plan " + name + " built for " + describe(declared) + ")"),
                    0u);
        }
        // And the declared shape again, without overrides: the built launch is untouched.
        Operands o;
        ASSERT_TRUE(make_operands(*gpu().api, g, rng, o).is_good());
        ASSERT_TRUE((*plan)->execute(pack_of(o), device_ec()).is_good());
        ASSERT_EQ(gpu().api->stream_synchronize(gpu().stream), CUDA_SUCCESS);
        EXPECT_EQ(bad_elements(declared, reference_out(g, o), o, " " + name + " without overrides"), 0u);
      }
    }
}

TEST_F(GemmGpuOverrides, SplitKPlanRunsShapesWithinItsScratchAndPastItWithFewerSplits) {
  if (gpu().props.major != 9) GTEST_SKIP() << "v2 (split-K) runs on sm_90 only";
  std::mt19937 rng(std::random_device{}());
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  const GemmCase declared{1, 1024, 1024, 2048, false, true, DataType::BFLOAT16, DataType::FLOAT, {"bias"}};
  OpGraph g = build_case(declared);
  ASSERT_TRUE(g.validate().is_good());
  auto plan = build_plan_of(*engine, g, v2_knobs(128, 3, false));
  ASSERT_TRUE(plan.is_good()) << plan.status().message();
  for (auto [m, n, k] : {std::tuple{256, 512, 1024}, {1024, 1024, 512}, {64, 128, 2048}, {1000 / 8 * 8, 520, 776}}) {
    GemmCase now = declared;
    now.m = m, now.n = n, now.k = k;
    EXPECT_EQ(run_overridden(**plan, g, now, rng, " (split-K plan)"), 0u);
  }
  // Past the scratch: more tiles than the plan sized its partials for (64 tiles x 3 splits).
  // The built kernel runs with fewer splits (override_launch): 96 tiles at 2 splits fit
  // the 192 partial slots; 256 tiles at any split do not, so they run un-split.
  for (auto [m, n, k] : {std::tuple{1536, 1024, 512}, {2048, 2048, 256}}) {
    GemmCase now = declared;
    now.m = m, now.n = n, now.k = k;
    EXPECT_EQ(run_overridden(**plan, g, now, rng, " (split-K plan, past its scratch)"), 0u);
  }
}

TEST_F(GemmGpuOverrides, RefusedOverridesLaunchNothing) {
  std::mt19937 rng(std::random_device{}());
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  const GemmCase declared{1, 256, 256, 256, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "relu"}};
  OpGraph g = build_case(declared);
  ASSERT_TRUE(g.validate().is_good());
  auto plan = build_plan_of(*engine, g, gemm::knobs_of(gemm::GemmConfig{}));
  ASSERT_TRUE(plan.is_good()) << plan.status().message();
  // K = 100: the 16-byte class is left (another kernel).
  {
    GemmCase now = declared;
    now.k = 100;
    OpGraph gs = build_case(now);
    ASSERT_TRUE(gs.validate().is_good());
    Operands o;
    ASSERT_TRUE(make_operands(*gpu().api, gs, rng, o).is_good());
    const Status s = (*plan)->execute(overridden_pack(g, gs, o), device_ec());
    EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED) << s.to_string();
    EXPECT_NE(s.message().find("_vec1"), std::string::npos) << s.message();
    EXPECT_TRUE(untouched(o));
  }
  // C overridden to another M than A: G9.
  {
    GemmCase now = declared;
    now.m = 128;
    OpGraph gs = build_case(now);
    ASSERT_TRUE(gs.validate().is_good());
    Operands o;
    ASSERT_TRUE(make_operands(*gpu().api, gs, rng, o).is_good());
    VariantPack pack = overridden_pack(g, gs, o);
    pack.override_shape(o.out_uid, {1, 64, 256});  // C: M 64 against A's 128
    const Status s = (*plan)->execute(pack, device_ec());
    EXPECT_EQ(s.code(), ErrorCode::INVALID_VARIANT_PACK) << s.to_string();
    EXPECT_NE(s.message().find("G9"), std::string::npos) << s.message();
    EXPECT_TRUE(untouched(o));
  }
}

TEST_F(GemmGpuOverrides, ThroughTheGraphApiWithAStreamHandle) {
  std::mt19937 rng(std::random_device{}());
  const GemmCase declared{1, 384, 256, 512, false, true, DataType::BFLOAT16, DataType::BFLOAT16, {"bias", "gelu"}};
  Graph g(build_case(declared));
  g.set_device_properties(gpu().props);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::FALLBACK}).is_good());
  std::int64_t ours = -1;
  for (std::int64_t i = 0; i < g.get_execution_plan_count() && ours < 0; ++i)
    if (g.get_plan_name_at_index(i).value().rfind("gemm", 0) == 0) ours = i;
  ASSERT_GE(ours, 0) << "no gemm plan listed";
  ASSERT_TRUE(g.build_plan_at_index(ours).is_good());
  gpu_testing::StreamHandle handle(gpu().stream, &gpu().props);
  // Shapes repeat (a serving loop's pattern): the plan's recent-shape cache serves the repeats.
  for (auto [m, n, k] : {std::tuple{8, 64, 512}, {1000 / 8 * 8, 128, 64}, {384, 256, 512}, {640, 1024, 1024},
                         {8, 64, 512}, {1000 / 8 * 8, 128, 64}, {8, 64, 512}}) {
    GemmCase now = declared;
    now.m = m, now.n = n, now.k = k;
    OpGraph gs = build_case(now);
    ASSERT_TRUE(gs.validate().is_good());
    Operands o;
    ASSERT_TRUE(make_operands(*gpu().api, gs, rng, o).is_good());
    const Status s = g.execute_plan_at_index(overridden_pack(g, gs, o), {}, ours, &handle);
    ASSERT_TRUE(s.is_good()) << describe(now) << ": " << s.to_string();
    ASSERT_EQ(gpu().api->stream_synchronize(gpu().stream), CUDA_SUCCESS);
    EXPECT_EQ(bad_elements(now, reference_out(gs, o), o, " via Graph"), 0u);
  }
}
