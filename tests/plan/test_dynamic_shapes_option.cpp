// tests/plan/test_dynamic_shapes_option.cpp — Graph::set_dynamic_shapes: the
// option round-trips (default off, kept by a move, frozen by planning), the
// planner hands it to engines in PlanContext, and a dynamic graph's ranked list
// and recorded choice are keyed apart from the static graph's (plan cache,
// plan-choice file).
#include <gtest/gtest.h>

#include "api/plan_cache.h"
#include "api/plan_choices.h"
#include "api/plan_state.h"
#include "fakes.h"
#include "opgraph/graph.h"

namespace opgraph {
namespace {

using namespace testing_fakes;

void build_mm(OpGraph& g, std::int64_t m, std::int64_t k, std::int64_t n) {
  g.set_name("mm").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
  auto a = g.tensor({1, m, k}, DataType::FLOAT, "A");
  auto b = g.tensor({1, k, n}, DataType::FLOAT, "B");
  g.matmul(a, b)->set_output(true).set_name("C");
}

// The gemm family with one stand-in; its heuristics hook counts its calls and
// keeps the PlanContext::dynamic_shapes it was asked with.
struct Seen {
  std::shared_ptr<FakeLog> log = std::make_shared<FakeLog>();
  std::shared_ptr<int> calls = std::make_shared<int>(0);
  std::shared_ptr<std::vector<bool>> dynamic = std::make_shared<std::vector<bool>>();
  plan::Manifest m;
  Seen() {
    m.universal = fake_family("universal", 0, {});
    auto f = fake_family("gemm", 1, {"matmul"});
    f.slots.push_back(fake_slot("p", FakeSpec{}, log));
    auto calls_ = calls;
    auto dynamic_ = dynamic;
    f.heuristics = [calls_, dynamic_](HeurMode, const PlanContext& ctx, const std::vector<const Engine*>& offered) {
      ++*calls_;
      dynamic_->push_back(ctx.dynamic_shapes);
      std::vector<plan::Proposal> p;
      for (const Engine* e : offered) p.push_back(plan::Proposal::plan(e->id()));
      return Result<std::vector<plan::Proposal>>(p);
    };
    m.families.push_back(std::move(f));
  }
};

TEST(DynamicShapesOption, OffByDefaultKeptByAMoveAndFrozenByPlanning) {
  Graph g;
  EXPECT_FALSE(g.dynamic_shapes());
  EXPECT_FALSE(PlanContext{}.dynamic_shapes);
  g.set_dynamic_shapes(true);
  EXPECT_TRUE(g.dynamic_shapes());
  g.set_dynamic_shapes(false);
  EXPECT_FALSE(g.dynamic_shapes());
  g.set_dynamic_shapes(true);
  build_mm(g, 4, 8, 4);
  Graph moved(std::move(g));
  EXPECT_TRUE(moved.dynamic_shapes());
  Graph assigned;
  assigned = std::move(moved);
  EXPECT_TRUE(assigned.dynamic_shapes());

  Seen w;
  plan::testing::ScopedManifest scope(w.m);
  ASSERT_TRUE(assigned.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_THROW(assigned.set_dynamic_shapes(false), FrozenError);
  EXPECT_TRUE(assigned.dynamic_shapes());
}

TEST(DynamicShapesOption, ThePlannerHandsItToEnginesInThePlanContext) {
  Seen w;
  plan::testing::ScopedManifest scope(w.m);
  Graph fixed;
  build_mm(fixed, 4, 8, 4);
  ASSERT_TRUE(fixed.create_execution_plans({HeurMode::A}).is_good());
  Graph dyn;
  build_mm(dyn, 4, 8, 4);
  dyn.set_dynamic_shapes(true);
  ASSERT_TRUE(dyn.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(*w.dynamic, (std::vector<bool>{false, true}));
  // The option changes what engines are told, not what runs: the dynamic graph builds and executes alike.
  ASSERT_TRUE(dyn.build_plans().is_good());
  std::vector<float> a(4 * 8), b(8 * 4), c(4 * 4);
  VariantPack pack;
  for (const auto& t : dyn.tensors()) {
    if (t->get_name() == "A") pack.set(t->get_uid(), a.data());
    if (t->get_name() == "B") pack.set(t->get_uid(), b.data());
    if (t->get_name() == "C") pack.set(t->get_uid(), c.data());
  }
  EXPECT_TRUE(dyn.execute(pack).is_good());
}

TEST(DynamicShapesOption, ThePlanCacheKeysADynamicGraphApart) {
  Graph g;
  build_mm(g, 4, 8, 4);
  ASSERT_TRUE(g.validate().is_good());
  PlanTarget host;
  auto fixed = plan_cache::key_for(g, host, {HeurMode::A});
  auto fixed2 = plan_cache::key_for(g, host, {HeurMode::A}, false);
  auto dyn = plan_cache::key_for(g, host, {HeurMode::A}, true);
  ASSERT_TRUE(fixed.is_good() && fixed2.is_good() && dyn.is_good());
  EXPECT_EQ(fixed.value(), fixed2.value());
  EXPECT_NE(fixed.value(), dyn.value());

  // Through the API: a static graph's cached list does not serve a dynamic graph
  // of the class (it ranks, with the flag), and a second dynamic graph reuses the dynamic one's.
  Seen w;
  plan::testing::ScopedManifest scope(w.m);
  clear_plan_cache();
  Graph first;
  build_mm(first, 4, 8, 4);
  first.set_plan_cache(true);
  ASSERT_TRUE(first.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_EQ(*w.calls, 1);
  Graph dynamic;
  build_mm(dynamic, 16, 8, 4);
  dynamic.set_plan_cache(true).set_dynamic_shapes(true);
  ASSERT_TRUE(dynamic.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(*w.calls, 2);
  EXPECT_EQ(w.dynamic->back(), true);
  Graph dynamic2;
  build_mm(dynamic2, 32, 8, 4);
  dynamic2.set_plan_cache(true).set_dynamic_shapes(true);
  ASSERT_TRUE(dynamic2.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(*w.calls, 2);  // the dynamic list, reused
  Graph static2;
  build_mm(static2, 64, 8, 4);
  static2.set_plan_cache(true);
  ASSERT_TRUE(static2.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(*w.calls, 2);  // the static list, reused
  EXPECT_EQ(plan_cache_stats().entries, 2u);
  EXPECT_EQ(plan_cache_stats().hits, 2u);
  clear_plan_cache();
}

TEST(DynamicShapesOption, ThePlanChoiceKeyOfADynamicGraphIsAnother) {
  Graph g;
  build_mm(g, 4, 8, 4);
  ASSERT_TRUE(g.validate().is_good());
  GraphPlanState fixed, dyn;
  dyn.dynamic_shapes = true;
  auto graph_key = g.key();
  auto k_fixed = plan_choice_key(g, fixed);
  auto k_dyn = plan_choice_key(g, dyn);
  ASSERT_TRUE(graph_key.is_good() && k_fixed.is_good() && k_dyn.is_good());
  EXPECT_EQ(k_fixed.value(), graph_key.value());  // a static graph's records stay where they were
  EXPECT_NE(k_dyn.value(), graph_key.value());
  EXPECT_EQ(plan_choice_key(g, dyn).value(), k_dyn.value());  // stable
}

// A plan record says the graph was planned dynamic (a static graph's record is
// as before), and replaying it plans the fresh graph so, with a note when that
// changed the graph's setting.
TEST(DynamicShapesOption, APlanRecordCarriesItAndItsReplayPlansTheGraphSo) {
  Seen w;
  plan::testing::ScopedManifest scope(w.m);
  auto record_of = [](bool dynamic) {
    Graph g;
    build_mm(g, 4, 8, 4);
    g.set_dynamic_shapes(dynamic);
    EXPECT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
    EXPECT_TRUE(g.build_plans().is_good());
    auto r = g.serialize_plan();
    EXPECT_TRUE(r.is_good()) << r.status().to_string();
    return r.is_good() ? r.value() : std::string();
  };
  const std::string dyn = record_of(true), fixed = record_of(false);
  EXPECT_NE(dyn.find("\"dynamic_shapes\":true"), std::string::npos) << dyn;
  EXPECT_EQ(fixed.find("dynamic_shapes"), std::string::npos) << fixed;

  auto has_note = [](const Graph& g, const std::string& what) {
    for (const auto& n : g.planning_notes())
      if (n.find(what) != std::string::npos) return true;
    return false;
  };
  Graph plain;  // not set: the dynamic record plans it dynamic, and says so
  build_mm(plain, 4, 8, 4);
  ASSERT_TRUE(plain.deserialize_plan(dyn).is_good());
  EXPECT_TRUE(plain.dynamic_shapes());
  EXPECT_TRUE(has_note(plain, "the plan record was made for a graph planned dynamic"));
  EXPECT_TRUE(plain.build_plans().is_good());

  Graph set;  // set: a static record plans it static, and says so
  build_mm(set, 4, 8, 4);
  set.set_dynamic_shapes(true);
  ASSERT_TRUE(set.deserialize_plan(fixed).is_good());
  EXPECT_FALSE(set.dynamic_shapes());
  EXPECT_TRUE(has_note(set, "planned static"));

  Graph same;  // the same setting: no note
  build_mm(same, 4, 8, 4);
  same.set_dynamic_shapes(true);
  ASSERT_TRUE(same.deserialize_plan(dyn).is_good());
  EXPECT_TRUE(same.dynamic_shapes());
  EXPECT_FALSE(has_note(same, "the plan record was made"));

  Graph other;  // a refused record changes nothing
  build_mm(other, 16, 8, 4);
  Status s = other.deserialize_plan(dyn);
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VALUE) << s.to_string();
  EXPECT_FALSE(other.dynamic_shapes());

  std::string wrong = dyn;
  wrong.replace(wrong.find("\"dynamic_shapes\":true"), 21, "\"dynamic_shapes\":1");
  Graph bad;
  build_mm(bad, 4, 8, 4);
  Status b = bad.deserialize_plan(wrong);
  EXPECT_EQ(b.code(), ErrorCode::UNSUPPORTED_GRAPH_FORMAT) << b.to_string();
  EXPECT_NE(b.message().find("'dynamic_shapes' is not a boolean"), std::string::npos) << b.message();
}

}  // namespace
}  // namespace opgraph
