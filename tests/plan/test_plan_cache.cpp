// tests/plan/test_plan_cache.cpp — layout classes and the process-wide plan
// cache: a graph of a known class (same structure, other extents) takes the
// cached ranked list without the planner running; anything else ranks.
#include <gtest/gtest.h>

#include "api/plan_cache.h"
#include "fakes.h"
#include "opgraph/graph.h"

namespace opgraph {
namespace {

using namespace testing_fakes;

// A[b,m,k] @ B[b,k,n] -> C, B's strides as given (empty: packed row-major).
void build_mm(OpGraph& g, std::int64_t b, std::int64_t m, std::int64_t k, std::int64_t n,
              DataType t = DataType::FLOAT, std::vector<std::int64_t> b_stride = {}) {
  g.set_name("mm").set_io_data_type(t).set_compute_data_type(DataType::FLOAT);
  auto a = g.tensor({b, m, k}, t, "A");
  auto bb = g.tensor({b, k, n}, t, "B", std::move(b_stride));
  g.matmul(a, bb)->set_output(true).set_name("C");
}

std::uint64_t cls(OpGraph& g) {
  EXPECT_TRUE(g.validate().is_good());
  return layout_class_key(g).value();
}

TEST(LayoutClass, ExtentsAboveOneAndThePackedStridesTheyImplyAreLeftOut) {
  Graph a, b, c;
  build_mm(a, 1, 4, 8, 4);
  build_mm(b, 1, 64, 128, 32);
  build_mm(c, 1, 4, 8, 4);
  EXPECT_EQ(cls(a), cls(b));
  EXPECT_EQ(cls(a), cls(c));
}

TEST(LayoutClass, StructureDtypeAxisOrderBroadcastAndPaddingAreKept) {
  Graph base;
  build_mm(base, 1, 4, 8, 4);
  const std::uint64_t k = cls(base);
  Graph half;  // another data type
  build_mm(half, 1, 4, 8, 4, DataType::HALF);
  EXPECT_NE(cls(half), k);
  Graph batch;  // an extent of 1 becomes 2: broadcasting may differ
  build_mm(batch, 2, 4, 8, 4);
  EXPECT_NE(cls(batch), k);
  Graph colmajor;  // B packed column-major: another axis order
  build_mm(colmajor, 1, 4, 8, 4, DataType::FLOAT, {32, 1, 8});
  EXPECT_NE(cls(colmajor), k);
  Graph colmajor2;  // ... which is one class across extents
  build_mm(colmajor2, 1, 16, 64, 8, DataType::FLOAT, {512, 1, 64});
  EXPECT_EQ(cls(colmajor2), cls(colmajor));
  Graph padded, padded2;  // a padded row (stride 8 over 4 columns): the extents stay
  build_mm(padded, 1, 4, 8, 4, DataType::FLOAT, {64, 8, 1});
  build_mm(padded2, 1, 4, 16, 4, DataType::FLOAT, {128, 8, 1});
  EXPECT_NE(cls(padded), k);
  EXPECT_NE(cls(padded), cls(padded2));
  Graph renamed;
  build_mm(renamed, 1, 4, 8, 4);
  renamed.set_name("other");
  EXPECT_NE(cls(renamed), k);
}

TEST(LayoutClass, TheTextNamesWhatIsLeftOutAndAQuotedNameDoesNotConfuseIt) {
  Graph g;
  build_mm(g, 1, 4, 8, 4, DataType::FLOAT, {64, 8, 1});  // B padded: its extents stay
  ASSERT_TRUE(g.validate().is_good());
  const std::string text = plan_cache::layout_class_text(g).value();
  EXPECT_NE(text.find("\"dim\":[1,\"*\",\"*\"]"), std::string::npos) << text;        // A, C
  EXPECT_NE(text.find("\"stride\":[\"-\",0,1]"), std::string::npos) << text;           // row-major
  EXPECT_NE(text.find("\"dim\":[1,8,4]"), std::string::npos) << text;                   // B as written
  EXPECT_NE(text.find("\"stride\":[64,8,1]"), std::string::npos) << text;
  // Names that spell the JSON the pass looks for change nothing but the names.
  Graph odd, odd2;
  for (Graph* x : {&odd, &odd2}) {
    const std::int64_t m = x == &odd ? 4 : 16;
    x->set_name("mm").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
    auto a = x->tensor({1, m, 8}, DataType::FLOAT, "\"dim\":[7,7],\"stride\":[1,1]");
    auto b = x->tensor({1, 8, 4}, DataType::FLOAT, "dim");
    x->matmul(a, b)->set_output(true).set_name("\"stride\":[");
  }
  EXPECT_EQ(cls(odd), cls(odd2));
  EXPECT_NE(plan_cache::layout_class_text(odd).value().find("[7,7]"), std::string::npos);  // inside the name, kept
}

// The gemm family (block 1) with two stand-ins and a heuristics hook that counts its calls.
struct Counted {
  std::shared_ptr<FakeLog> log = std::make_shared<FakeLog>();
  std::shared_ptr<int> calls = std::make_shared<int>(0);
  plan::Manifest m;
  Counted() {
    m.universal = fake_family("universal", 0, {});
    auto f = fake_family("gemm", 1, {"matmul"});
    f.slots.push_back(fake_slot("p", FakeSpec{}, log));
    f.slots.push_back(fake_slot("q", FakeSpec{}, log));
    auto calls_ = calls;
    f.heuristics = [calls_](HeurMode, const PlanContext&, const std::vector<const Engine*>& offered) {
      ++*calls_;
      std::vector<plan::Proposal> p;
      for (auto it = offered.rbegin(); it != offered.rend(); ++it) p.push_back(plan::Proposal::plan((*it)->id()));
      return Result<std::vector<plan::Proposal>>(p);
    };
    m.families.push_back(std::move(f));
  }
};

std::vector<std::string> names(const Graph& g) {
  std::vector<std::string> out;
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i) out.push_back(g.get_plan_name_at_index(i).value());
  return out;
}

TEST(PlanCache, ANewShapeOfAKnownClassTakesTheListWithoutThePlanner) {
  Counted w;
  plan::testing::ScopedManifest scope(w.m);
  clear_plan_cache();
  Graph first;
  build_mm(first, 1, 4, 8, 4);
  first.set_plan_cache(true);
  ASSERT_TRUE(first.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(*w.calls, 1);
  EXPECT_EQ(plan_cache_stats().misses, 1u);
  EXPECT_EQ(plan_cache_stats().entries, 1u);
  EXPECT_EQ(names(first), (std::vector<std::string>{"q[]", "p[]"}));

  Graph second;  // another shape, the same class
  build_mm(second, 1, 64, 128, 32);
  second.set_plan_cache(true);
  ASSERT_TRUE(second.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(*w.calls, 1);  // the planner did not run
  EXPECT_EQ(plan_cache_stats().hits, 1u);
  EXPECT_EQ(names(second), names(first));
  EXPECT_TRUE(second.is_planned());
  // The reused list builds and runs on the new graph like a ranked one.
  ASSERT_TRUE(second.build_plans().is_good());
  EXPECT_EQ(second.get_selected_plan_index().value(), 0);
  std::vector<float> a(64 * 128), b(128 * 32), c(64 * 32);
  VariantPack pack;
  for (const auto& t : second.tensors()) {
    if (t->get_name() == "A") pack.set(t->get_uid(), a.data());
    if (t->get_name() == "B") pack.set(t->get_uid(), b.data());
    if (t->get_name() == "C") pack.set(t->get_uid(), c.data());
  }
  ASSERT_TRUE(second.execute(pack).is_good());
  ASSERT_FALSE(w.log->executed.empty());
  EXPECT_EQ(w.log->executed.back().first, plan::encode_engine_id(1, 1));  // q
}

TEST(PlanCache, OffByDefaultAndAnotherClassDeviceOrModeRanks) {
  Counted w;
  plan::testing::ScopedManifest scope(w.m);
  clear_plan_cache();
  Graph first;
  build_mm(first, 1, 4, 8, 4);
  first.set_plan_cache(true);
  ASSERT_TRUE(first.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_EQ(*w.calls, 1);

  Graph off;  // not opted in
  build_mm(off, 1, 16, 8, 4);
  ASSERT_TRUE(off.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(*w.calls, 2);

  Graph half;  // another class
  build_mm(half, 1, 16, 8, 4, DataType::HALF);
  half.set_plan_cache(true);
  ASSERT_TRUE(half.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(*w.calls, 3);

  Graph device;  // another device fingerprint
  build_mm(device, 1, 16, 8, 4);
  device.set_device_properties(sm(9, 0)).set_plan_cache(true);
  ASSERT_TRUE(device.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(*w.calls, 4);

  Graph modes;  // other modes
  build_mm(modes, 1, 16, 8, 4);
  modes.set_plan_cache(true);
  ASSERT_TRUE(modes.create_execution_plans({HeurMode::A, HeurMode::FALLBACK}).is_good());
  EXPECT_EQ(*w.calls, 6);  // the hook runs once per mode

  EXPECT_EQ(plan_cache_stats().hits, 0u);
  EXPECT_EQ(plan_cache_stats().entries, 4u);
  clear_plan_cache();
  EXPECT_EQ(plan_cache_stats().entries, 0u);
  Graph after;
  build_mm(after, 1, 4, 8, 4);
  after.set_plan_cache(true);
  ASSERT_TRUE(after.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(*w.calls, 7);
  EXPECT_THROW(after.set_plan_cache(false), FrozenError);
}

}  // namespace
}  // namespace opgraph
