// tests/plan/test_ranking.cpp — the ranking contract: mode blocks, the BACKEND
// marker, dedup, universal placement, family hooks, one-shot planning.
#include <gtest/gtest.h>

#include "fakes.h"

namespace opgraph {
namespace {

using namespace testing_fakes;
using plan::Proposal;

struct Row {
  std::int64_t id;
  Knobs knobs;
  std::optional<HeurMode> mode;
  std::string name;
};

std::vector<Row> rows(const Graph& g) {
  std::vector<Row> out;
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i) {
    auto c = g.get_engine_and_knobs_at_index(i);
    EXPECT_TRUE(c.is_good());
    out.push_back({c->engine_id, c->knobs, c->mode, g.get_plan_name_at_index(i).value()});
  }
  return out;
}

std::vector<std::string> names(const Graph& g) {
  std::vector<std::string> out;
  for (auto& r : rows(g)) out.push_back(r.name);
  return out;
}

// gemm family (block 1): e0 accepts, e1 declines, e2 accepts with a TILE_M axis.
// Universal (block 0): ref. A backend with entries per mode and a delegate.
struct World {
  std::shared_ptr<FakeLog> log = std::make_shared<FakeLog>();
  std::shared_ptr<FakeBackend> backend = std::make_shared<FakeBackend>(log);
  plan::Manifest m;
  const std::int64_t e0 = plan::encode_engine_id(1, 0), e1 = plan::encode_engine_id(1, 1),
                     e2 = plan::encode_engine_id(1, 2), ref = plan::encode_engine_id(0, 0);
  World() {
    m.universal = fake_family("universal", 0, {});
    m.universal.slots.push_back(fake_slot("ref", {}, log));
    auto gemm = fake_family("gemm", 1, {"matmul"});
    gemm.slots.push_back(fake_slot("e0", {}, log));
    FakeSpec no;
    no.support = decline("e1 never serves");
    gemm.slots.push_back(fake_slot("e1", no, log));
    FakeSpec tiles;
    tiles.knobs = {{KnobType::TILE_M, {128, 64}}};
    gemm.slots.push_back(fake_slot("e2", tiles, log));
    m.families.push_back(std::move(gemm));
    m.backend = backend;
    backend->per_mode = {{HeurMode::A, PlanConfig{5, {}}},
                         {HeurMode::A, PlanConfig{7, {{KnobType::TILE_M, 1}}}},
                         {HeurMode::FALLBACK, PlanConfig{9, {}}},
                         {HeurMode::B, PlanConfig{5, {}}}};
  }
};

TEST(Ranking, FamilyWithoutHookListsAcceptingEnginesThenBackendThenUniversal) {
  World w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  auto r = rows(g);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0].id, w.e0);
  EXPECT_EQ(r[1].id, w.e2);
  EXPECT_EQ(r[1].knobs, (Knobs{{KnobType::TILE_M, 128}}));  // the axis's first value, listed
  EXPECT_EQ(r[2].id, 5);
  EXPECT_EQ(r[3].id, 7);
  EXPECT_EQ(r[4].id, w.ref);
  for (auto& x : r) EXPECT_EQ(x.mode, HeurMode::A);
  EXPECT_EQ(g.family_name(), "gemm");
  EXPECT_EQ(r[0].knobs, Knobs{});  // always a map, empty without axes
  EXPECT_EQ(names(g), (std::vector<std::string>{"e0[]", "e2[TILE_M=128]", "cudnn_eng5[]", "cudnn_eng7[TILE_M=1]", "ref[]"}));
}

TEST(Ranking, HookMarkerPlacesBackendBlockPerModeAndDedupKeepsFirst) {
  World w;
  w.backend->delegate = PlanConfig{plan::kBackendHeuristicEngineId, {}};
  w.m.families[0].heuristics = [&](HeurMode mode, const PlanContext&, const std::vector<const Engine*>& offered) {
    EXPECT_EQ(offered.size(), 3u);  // enabled slots without mismatch; e1's decline is for build time
    std::vector<Proposal> p;
    if (mode == HeurMode::A) p = {Proposal::plan(w.e0), Proposal::backend(), Proposal::plan(w.e2, {{KnobType::TILE_M, 64}})};
    if (mode == HeurMode::FALLBACK) p = {Proposal::plan(w.e2, {{KnobType::TILE_M, 128}}), Proposal::plan(w.e0)};
    return Result<std::vector<Proposal>>(p);
  };
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  g.set_device_properties(sm(9, 0));  // a GPU target: the universal row goes last in FALLBACK
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A, HeurMode::FALLBACK}).is_good());
  auto r = rows(g);
  std::vector<std::int64_t> ids;
  for (auto& x : r) ids.push_back(x.id);
  // A: e0 | delegate, 5, 7 | e2@64 | ref.  FALLBACK: e2@128 | (e0 dup) | (delegate dup), 9 | (ref dup).
  EXPECT_EQ(ids, (std::vector<std::int64_t>{w.e0, plan::kBackendHeuristicEngineId, 5, 7, w.e2, w.ref, w.e2, 9}));
  EXPECT_EQ(r[4].knobs, (Knobs{{KnobType::TILE_M, 64}}));
  EXPECT_EQ(r[6].knobs, (Knobs{{KnobType::TILE_M, 128}}));
  EXPECT_FALSE(r[1].mode.has_value());  // the delegating entry carries no mode
  EXPECT_EQ(r[2].mode, HeurMode::A);
  EXPECT_EQ(r[6].mode, HeurMode::FALLBACK);
  EXPECT_EQ(r[7].mode, HeurMode::FALLBACK);
}

TEST(Ranking, HookWithoutMarkerPutsOursFirst) {
  World w;
  w.m.families[0].heuristics = [&](HeurMode, const PlanContext&, const std::vector<const Engine*>&) {
    return Result<std::vector<Proposal>>(std::vector<Proposal>{Proposal::plan(w.e2, {{KnobType::TILE_M, 64}})});
  };
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(names(g), (std::vector<std::string>{"e2[TILE_M=64]", "cudnn_eng5[]", "cudnn_eng7[TILE_M=1]", "ref[]"}));
}

TEST(Ranking, RepeatedModeAddsNothing) {
  World w;
  plan::testing::ScopedManifest scope(w.m);
  Graph once, twice;
  build_matmul(once);
  build_matmul(twice);
  ASSERT_TRUE(once.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_TRUE(twice.create_execution_plans({HeurMode::A, HeurMode::A, HeurMode::B}).is_good());
  EXPECT_EQ(names(once), names(twice));  // B's only entry (5) duplicates A's
}

TEST(Ranking, FallbackWithoutDeviceRanksUniversalFirst) {
  World w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::FALLBACK, HeurMode::A}).is_good());
  EXPECT_EQ(names(g), (std::vector<std::string>{"ref[]", "e0[]", "e2[TILE_M=128]", "cudnn_eng9[]", "cudnn_eng5[]",
                                                "cudnn_eng7[TILE_M=1]"}));
}

TEST(Ranking, OpensourceDropsBackendEntriesButKeepsDelegateLast) {
  World w;
  w.backend->delegate = PlanConfig{plan::kBackendHeuristicEngineId, {}};
  w.m.families[0].heuristics = [&](HeurMode, const PlanContext&, const std::vector<const Engine*>&) {
    return Result<std::vector<Proposal>>(std::vector<Proposal>{Proposal::backend(), Proposal::plan(w.e0)});
  };
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::OPENSOURCE}).is_good());
  std::vector<std::int64_t> ids;
  for (auto& x : rows(g)) ids.push_back(x.id);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{w.e0, w.ref, plan::kBackendHeuristicEngineId}));
  EXPECT_EQ(w.backend->queries, 0);  // the backend's recommendation is never asked for
}

TEST(Ranking, GraphOfNoFamilyGetsBackendAndUniversalOnly) {
  World w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_relu(g);  // pointwise anchors nothing
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(g.family_name(), "");
  EXPECT_EQ(names(g), (std::vector<std::string>{"cudnn_eng5[]", "cudnn_eng7[TILE_M=1]", "ref[]"}));
}

TEST(Ranking, HookProposingAnEngineItWasNotOfferedIsABug) {
  World w;
  w.m.families[0].slots[2].opt_in = true;  // e2 not offered
  w.m.families[0].heuristics = [&](HeurMode, const PlanContext&, const std::vector<const Engine*>&) {
    return Result<std::vector<Proposal>>(std::vector<Proposal>{Proposal::plan(w.e2, {{KnobType::TILE_M, 64}})});
  };
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  Status s = g.create_execution_plans({HeurMode::A});
  EXPECT_EQ(s.code(), ErrorCode::INTERNAL_ERROR) << s.to_string();
  EXPECT_NE(s.message().find("not offered"), std::string::npos);
}

TEST(Ranking, HookProposalWithoutEveryAxisIsABug) {
  World w;
  w.m.families[0].heuristics = [&](HeurMode, const PlanContext&, const std::vector<const Engine*>&) {
    return Result<std::vector<Proposal>>(std::vector<Proposal>{Proposal::plan(w.e2)});  // TILE_M missing
  };
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  EXPECT_EQ(g.create_execution_plans({HeurMode::A}).code(), ErrorCode::INTERNAL_ERROR);
}

TEST(Ranking, CheckSupportErrorThatIsNotADeclinePropagates) {
  World w;
  FakeSpec bug;
  bug.support = Status(ErrorCode::INVALID_VALUE, "engine bug");
  w.m.families[0].slots[0] = fake_slot("e0", bug, w.log);
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  Status s = g.create_execution_plans({HeurMode::A});
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(s.message().find("engine bug"), std::string::npos);
}

TEST(Ranking, ArchMismatchIsNotOfferedAndSaysWhy) {
  World w;
  FakeSpec hopper;
  hopper.needs_device = true;
  hopper.sm_lo = 90;
  hopper.sm_hi = 99;
  w.m.families[0].slots[0] = fake_slot("e0", hopper, w.log);
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  g.set_device_properties(sm(8, 0));
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(names(g).front(), "e2[TILE_M=128]");
  bool noted = false;
  for (auto& n : g.planning_notes()) noted = noted || n.find("e0: serves sm90..sm99; the target is sm80") == 0;
  EXPECT_TRUE(noted);

  Graph h;  // the sm90 LINE: sm9x members that ship later are served
  build_matmul(h);
  h.set_device_properties(sm(9, 7));
  ASSERT_TRUE(h.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(names(h).front(), "e0[]");
}

TEST(Ranking, PlanningIsOneShotAndFreezesTheGraph) {
  World w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  const auto before = names(g);
  Status again = g.create_execution_plans({HeurMode::FALLBACK});
  EXPECT_EQ(again.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(again.message().find("one-shot"), std::string::npos);
  EXPECT_EQ(g.create_execution_plan(w.e0, {}).code(), ErrorCode::INVALID_VALUE);
  EXPECT_EQ(names(g), before);
  EXPECT_TRUE(g.is_frozen());
  EXPECT_THROW(g.tensor({1}, DataType::FLOAT, "late"), FrozenError);
}

TEST(Ranking, InvalidGraphFailsAtPlanningAndCanBeFixed) {
  World w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  g.set_name("bad");
  auto a = g.tensor({1, 4, 8}, DataType::FLOAT, "A");
  auto b = g.tensor({1, 9, 4}, DataType::FLOAT, "B");  // K mismatch
  g.matmul(a, b)->set_output(true);
  EXPECT_EQ(g.create_execution_plans({HeurMode::A}).code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_FALSE(g.is_planned());
  EXPECT_FALSE(g.is_frozen());
}

TEST(Ranking, EmptyModeListIsRefused) {
  World w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  EXPECT_EQ(g.create_execution_plans({}).code(), ErrorCode::INVALID_VALUE);
}

}  // namespace
}  // namespace opgraph
