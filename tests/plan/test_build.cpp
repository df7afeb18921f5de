// tests/plan/test_build.cpp — building and executing graph.plans: the walk, the
// pin, replay by (engine_id, knobs), filters, the at-index API, workspace and handle.
#include <gtest/gtest.h>

#include "fakes.h"

namespace opgraph {
namespace {

using namespace testing_fakes;

// gemm (block 1): a0, a1, a2 with per-test specs; no universal, no backend.
struct Three {
  std::shared_ptr<FakeLog> log = std::make_shared<FakeLog>();
  plan::Manifest m;
  std::int64_t id(int slot) const { return plan::encode_engine_id(1, slot); }
  explicit Three(std::vector<FakeSpec> specs) {
    m.universal = fake_family("universal", 0, {});
    auto f = fake_family("gemm", 1, {"matmul"});
    for (std::size_t i = 0; i < specs.size(); ++i) f.slots.push_back(fake_slot("a" + std::to_string(i), specs[i], log));
    f.heuristics = [this, n = specs.size()](HeurMode, const PlanContext&, const std::vector<const Engine*>& offered) {
      std::vector<plan::Proposal> p;
      for (const Engine* e : offered) p.push_back(plan::Proposal::plan(e->id(), e->default_knobs()));
      (void)n;
      return Result<std::vector<plan::Proposal>>(p);
    };
    m.families.push_back(std::move(f));
  }
};

FakeSpec builds_not() {
  FakeSpec s;
  s.build = decline("no kernel for this shape");
  return s;
}

TEST(Build, HeuristicsChoiceTakesFirstThatBuildsAndADeclineAdvances) {
  Three w({builds_not(), FakeSpec{}, FakeSpec{}});
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());
  EXPECT_EQ(g.get_selected_plan_index().value(), 1);
  ASSERT_EQ(w.log->built.size(), 1u);  // plan 2 was never built
  EXPECT_EQ(w.log->built[0].first, w.id(1));
  EXPECT_NE(g.get_plan_status_at_index(0).value().find("no kernel for this shape"), std::string::npos);
  EXPECT_EQ(g.get_plan_status_at_index(1).value(), "");
}

TEST(Build, WalkStartsAtTheSelectedIndexAndAllBuildsEveryPlan) {
  Three w({FakeSpec{}, FakeSpec{}, FakeSpec{}});
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(g.build_plans(BuildPlanPolicy::ALL).is_good());
  EXPECT_EQ(w.log->built.size(), 3u);
  EXPECT_EQ(g.get_selected_plan_index().value(), 0);
  ASSERT_TRUE(g.select_plan(2).is_good());
  ASSERT_TRUE(g.build_plans().is_good());
  EXPECT_EQ(w.log->built.size(), 3u);  // cached on the graph: no rebuild
  EXPECT_EQ(g.get_selected_plan_index().value(), 2);
}

TEST(Build, PinnedDeclineIsAnErrorNotAFallThrough) {
  Three w({builds_not(), FakeSpec{}});
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(g.select_plan(0).is_good());
  Status s = g.build_plans();
  EXPECT_EQ(s.code(), ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED);
  EXPECT_NE(s.message().find("pinned"), std::string::npos);
  EXPECT_TRUE(w.log->built.empty());
  EXPECT_TRUE(g.get_selected_plan_index().is_bad());
}

TEST(Build, ABuildErrorThatIsNotADeclinePropagatesAndStopsTheWalk) {
  FakeSpec bug;
  bug.build = Status(ErrorCode::NVRTC_COMPILATION_FAILED, "kernel source does not compile");
  Three w({bug, FakeSpec{}});
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  Status s = g.build_plans();
  EXPECT_EQ(s.code(), ErrorCode::NVRTC_COMPILATION_FAILED);
  EXPECT_TRUE(w.log->built.empty());
}

TEST(Build, NothingBuildsGivesEveryReason) {
  FakeSpec a = builds_not(), b;
  b.support = decline("dtype unsupported");
  Three w({a, b});
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  Status s = g.build_plans();
  EXPECT_EQ(s.code(), ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED);
  EXPECT_NE(s.message().find("no kernel for this shape"), std::string::npos);
  EXPECT_NE(s.message().find("dtype unsupported"), std::string::npos);
  // check_support asks engines only: a0 accepts there (it declines at build).
  EXPECT_TRUE(g.check_support().is_good());
}

TEST(Build, CheckSupportFailsOnlyWhenEveryEngineDeclines) {
  FakeSpec a, b;
  a.support = decline("layout unsupported");
  b.support = decline("dtype unsupported");
  Three w({a, b});
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  Status s = g.check_support();
  EXPECT_EQ(s.code(), ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED);
  EXPECT_NE(s.message().find("layout unsupported"), std::string::npos);
  EXPECT_NE(s.message().find("dtype unsupported"), std::string::npos);
}

TEST(Build, AtIndexApiAddressesExactlyGraphPlans) {
  FakeSpec tiles;
  tiles.knobs = {{KnobType::TILE_M, {64, 128}}, {KnobType::SPLIT_KV, {1, 2}}};
  tiles.workspace = 256;
  FakeSpec plain;
  plain.workspace = 16;
  Three w({plain, tiles});
  w.m.families[0].heuristics = [&](HeurMode, const PlanContext&, const std::vector<const Engine*>&) {
    using plan::Proposal;
    return Result<std::vector<Proposal>>(std::vector<Proposal>{
        Proposal::plan(w.id(1), {{KnobType::TILE_M, 128}, {KnobType::SPLIT_KV, 2}}), Proposal::plan(w.id(0)),
        Proposal::plan(w.id(1), {{KnobType::TILE_M, 64}, {KnobType::SPLIT_KV, 1}})});
  };
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_EQ(g.get_execution_plan_count(), 3);
  EXPECT_EQ(g.get_plan_name_at_index(0).value(), "a1[SPLIT_KV=2, TILE_M=128]");  // sorted by knob name
  for (std::int64_t i = 0; i < 3; ++i) {
    auto c = g.get_engine_and_knobs_at_index(i).value();
    ASSERT_TRUE(g.build_plan_at_index(i).is_good());
    std::int64_t out = -1;
    VariantPack pack;
    pack.set(1, &out);
    std::vector<char> scratch(512);
    ASSERT_TRUE(g.execute_plan_at_index(pack, {scratch.data(), 512}, i).is_good());
    EXPECT_EQ(out, c.engine_id);
    ASSERT_FALSE(w.log->executed.empty());
    EXPECT_EQ(w.log->executed.back(), std::make_pair(c.engine_id, c.knobs)) << "index " << i;
    EXPECT_EQ(g.get_workspace_size_plan_at_index(i).value(), c.engine_id == w.id(1) ? 256 : 16);
  }
  EXPECT_EQ(g.get_plan_name_at_index(3).status().code(), ErrorCode::INVALID_VALUE);
  EXPECT_EQ(g.get_engine_and_knobs_at_index(-1).status().code(), ErrorCode::INVALID_VALUE);
  EXPECT_EQ(g.build_plan_at_index(3).code(), ErrorCode::INVALID_VALUE);
}

TEST(Build, ReplayByIdAndKnobsRunsThatPlan) {
  FakeSpec tiles;
  tiles.knobs = {{KnobType::TILE_M, {64, 128}}};
  Three w({FakeSpec{}, tiles});
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plan(w.id(1), {{KnobType::TILE_M, 64}}).is_good());
  ASSERT_EQ(g.get_execution_plan_count(), 1);
  EXPECT_EQ(g.get_plan_name_at_index(0).value(), "a1[TILE_M=64]");
  ASSERT_TRUE(g.build_plans().is_good());
  std::int64_t out = -1;
  VariantPack pack;
  pack.set(1, &out);
  ASSERT_TRUE(g.execute(pack).is_good());
  EXPECT_EQ(out, w.id(1));
  EXPECT_EQ(w.log->built.back().second, (Knobs{{KnobType::TILE_M, 64}}));
}

TEST(Build, ReplayRefusesWhatIsNotAPlan) {
  FakeSpec tiles;
  tiles.knobs = {{KnobType::TILE_M, {64, 128}}};
  Three w({FakeSpec{}, tiles});
  plan::testing::ScopedManifest scope(w.m);
  auto replay = [&](std::int64_t id, Knobs k) {
    Graph g;
    build_matmul(g);
    return g.create_execution_plan(id, k);
  };
  EXPECT_EQ(replay(w.id(1), {{KnobType::TILE_M, 96}}).code(), ErrorCode::INVALID_VALUE);       // outside domain
  EXPECT_EQ(replay(w.id(1), {}).code(), ErrorCode::INVALID_VALUE);                             // axis missing
  EXPECT_EQ(replay(w.id(0), {{KnobType::SPLIT_KV, 2}}).code(), ErrorCode::INVALID_VALUE);      // no such axis
  EXPECT_EQ(replay(w.id(7), {}).code(), ErrorCode::INVALID_VALUE);                             // empty slot
  EXPECT_EQ(replay(plan::encode_engine_id(42, 0), {}).code(), ErrorCode::INVALID_VALUE);       // no family
  EXPECT_EQ(replay(12, {}).code(), ErrorCode::GRAPH_NOT_SUPPORTED);                            // backend id, no backend
  EXPECT_EQ(replay(w.id(0), {}).code(), ErrorCode::OK);
}

TEST(Build, FiltersDeselectWithoutRenumbering) {
  FakeSpec big;
  big.workspace = 1 << 20;
  Three w({big, FakeSpec{}, FakeSpec{}});
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(g.deselect_workspace_greater_than(1024).is_good());
  ASSERT_TRUE(g.deselect_engines({"a1"}).is_good());
  EXPECT_EQ(g.get_execution_plan_count(), 3);
  ASSERT_TRUE(g.build_plans().is_good());
  EXPECT_EQ(g.get_selected_plan_index().value(), 2);
  EXPECT_NE(g.get_plan_status_at_index(0).value().find("workspace"), std::string::npos);
  EXPECT_NE(g.get_plan_status_at_index(1).value().find("deny list"), std::string::npos);
  EXPECT_EQ(g.build_plan_at_index(1).code(), ErrorCode::GRAPH_NOT_SUPPORTED);
}

TEST(Build, WorkspaceFilterAfterBuildDropsTheBuiltPlan) {
  FakeSpec big;
  big.workspace = 4096;
  Three w({big, FakeSpec{}});
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(g.build_plans().is_good());
  EXPECT_EQ(g.get_selected_plan_index().value(), 0);
  ASSERT_TRUE(g.deselect_workspace_greater_than(100).is_good());
  EXPECT_TRUE(g.get_selected_plan_index().is_bad());
  ASSERT_TRUE(g.build_plans().is_good());
  EXPECT_EQ(g.get_selected_plan_index().value(), 1);
}

class BrokenHandle final : public Handle {
 public:
  Result<void*> stream() const override { return Status(ErrorCode::CUDA_API_FAILED, "context destroyed"); }
  const DeviceProperties* device() const override { return nullptr; }
};

TEST(Build, ExecuteChecksWorkspaceAndNeverFallsBackFromABrokenHandle) {
  FakeSpec ws;
  ws.workspace = 64;
  Three w({ws});
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  std::int64_t out = -1;
  VariantPack pack;
  pack.set(1, &out);
  EXPECT_EQ(g.execute(pack).code(), ErrorCode::INVALID_VALUE);  // nothing built yet
  ASSERT_TRUE(g.build_plans().is_good());
  std::vector<char> scratch(64);
  Status small = g.execute(pack, {scratch.data(), 63});
  EXPECT_EQ(small.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(small.message().find("needs 64 bytes, got 63"), std::string::npos);
  BrokenHandle h;
  Status s = g.execute(pack, {scratch.data(), 64}, &h);
  EXPECT_EQ(s.code(), ErrorCode::HANDLE_ERROR);
  EXPECT_NE(s.message().find("context destroyed"), std::string::npos);
  EXPECT_TRUE(w.log->executed.empty());
  ASSERT_TRUE(g.execute(pack, {scratch.data(), 64}).is_good());
  EXPECT_EQ(out, w.id(0));
}

}  // namespace
}  // namespace opgraph
