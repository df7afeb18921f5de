// tests/plan/test_manifest.cpp — ids, classification, the opt-in gate, facts.
#include <gtest/gtest.h>

#include <cstdlib>

#include "fakes.h"

namespace opgraph {
namespace {

using namespace testing_fakes;

TEST(EngineIds, EncodeDecodeRoundTripWithNothingRegistered) {
  for (int block : {0, 1, 7, 123})
    for (int slot : {0, 1, 99}) {
      std::int64_t id = plan::encode_engine_id(block, slot);
      auto d = plan::decode_engine_id(id);
      EXPECT_EQ(d.band, plan::IdBand::OURS);
      EXPECT_EQ(d.block, block);
      EXPECT_EQ(d.slot, slot);
    }
  EXPECT_EQ(plan::encode_engine_id(0, 0), 20000);
  EXPECT_EQ(plan::encode_engine_id(3, 5), 20305);
  EXPECT_EQ(plan::decode_engine_id(0).band, plan::IdBand::BACKEND);
  EXPECT_EQ(plan::decode_engine_id(9999).band, plan::IdBand::BACKEND);
  EXPECT_EQ(plan::decode_engine_id(10000).band, plan::IdBand::RESERVED);
  EXPECT_EQ(plan::decode_engine_id(19999).band, plan::IdBand::RESERVED);
  EXPECT_EQ(plan::decode_engine_id(-1).band, plan::IdBand::INVALID);
}

plan::Manifest two_families(std::shared_ptr<FakeLog> log) {
  plan::Manifest m;
  m.universal = fake_family("universal", 0, {});
  m.universal.slots.push_back(fake_slot("ref", {}, log));
  auto a = fake_family("gemm", 1, {"matmul"});
  a.slots.push_back(fake_slot("g0", {}, log));
  a.slots.push_back(fake_slot("g1_experimental", {}, log, /*opt_in=*/true));
  auto b = fake_family("pw", 2, {"pointwise"});
  b.slots.push_back(fake_slot("p0", {}, log));
  m.families.push_back(std::move(a));
  m.families.push_back(std::move(b));
  return m;
}

TEST(Manifest, FamilyForIsAPureLookupAndTwoAnchorsBelongToNone) {
  auto log = std::make_shared<FakeLog>();
  plan::Manifest m = two_families(log);
  ASSERT_TRUE(plan::check_manifest(m).is_good());
  OpGraph mm, pw, both;
  build_matmul(mm);
  build_relu(pw);
  both.set_name("both");
  auto a = both.tensor({1, 4, 8}, DataType::FLOAT, "A");
  auto b = both.tensor({1, 8, 4}, DataType::FLOAT, "B");
  both.relu(both.matmul(a, b))->set_output(true);
  ASSERT_NE(plan::family_for(m, mm), nullptr);
  EXPECT_EQ(plan::family_for(m, mm)->name, "gemm");
  EXPECT_EQ(plan::family_for(m, pw)->name, "pw");
  EXPECT_EQ(plan::family_for(m, both), nullptr);
  // No environment, no device: the answer does not move with OPGRAPH_ENABLE_ENGINES.
  setenv("OPGRAPH_ENABLE_ENGINES", "all", 1);
  EXPECT_EQ(plan::family_for(m, mm)->name, "gemm");
  EXPECT_EQ(plan::family_for(m, both), nullptr);
  unsetenv("OPGRAPH_ENABLE_ENGINES");
  // Ops that anchor nothing are ignored: matmul + pointwise is a gemm graph once pointwise anchors nothing.
  m.families[1].anchors.clear();
  EXPECT_EQ(plan::family_for(m, both)->name, "gemm");
}

TEST(Manifest, OptInGateReadsTheEnvironment) {
  plan::EngineSlot s;
  s.name = "frost_gemm";
  s.opt_in = true;
  unsetenv("OPGRAPH_ENABLE_ENGINES");
  EXPECT_FALSE(plan::slot_enabled(s));
  setenv("OPGRAPH_ENABLE_ENGINES", "other, frost_gemm", 1);
  EXPECT_TRUE(plan::slot_enabled(s));
  setenv("OPGRAPH_ENABLE_ENGINES", "frost_gemm_v2,frost", 1);
  EXPECT_FALSE(plan::slot_enabled(s));  // names match whole, not by prefix
  setenv("OPGRAPH_ENABLE_ENGINES", "all", 1);
  EXPECT_TRUE(plan::slot_enabled(s));
  unsetenv("OPGRAPH_ENABLE_ENGINES");
  s.opt_in = false;
  EXPECT_TRUE(plan::slot_enabled(s));
}

TEST(Manifest, OptInSlotIsOfferedOnlyWhenEnabled) {
  auto log = std::make_shared<FakeLog>();
  auto count_g1 = [&]() {
    plan::testing::ScopedManifest scope(two_families(log));
    Graph g;
    build_matmul(g);
    EXPECT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
    int n = 0;
    for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i)
      n += g.get_plan_name_at_index(i).value() == "g1_experimental[]";
    return n;
  };
  unsetenv("OPGRAPH_ENABLE_ENGINES");
  EXPECT_EQ(count_g1(), 0);
  setenv("OPGRAPH_ENABLE_ENGINES", "g1_experimental", 1);
  EXPECT_EQ(count_g1(), 1);
  unsetenv("OPGRAPH_ENABLE_ENGINES");
  plan::testing::ScopedManifest scope(two_families(log));
  Graph g;
  build_matmul(g);
  Status s = g.create_execution_plan(plan::encode_engine_id(1, 1), {});
  EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(s.message().find("OPGRAPH_ENABLE_ENGINES=g1_experimental"), std::string::npos);
}

TEST(Manifest, SlotForIdResolvesAndExplains) {
  auto log = std::make_shared<FakeLog>();
  plan::Manifest m = two_families(log);
  auto r = plan::slot_for_id(m, 20201);
  EXPECT_EQ(r.status().code(), ErrorCode::INVALID_VALUE);  // pw has one slot
  EXPECT_NE(r.status().message().find("family 'pw'"), std::string::npos);
  auto ok = plan::slot_for_id(m, 20101);
  ASSERT_TRUE(ok.is_good());
  EXPECT_EQ(ok->slot->name, "g1_experimental");
  auto e = plan::instantiate(ok.value());
  ASSERT_TRUE(e.is_good());
  EXPECT_EQ(e.value()->id(), 20101);  // the manifest handed it its id
  EXPECT_EQ(plan::slot_for_id(m, 42).status().code(), ErrorCode::INVALID_VALUE);
}

TEST(Manifest, StructuralRulesAreChecked) {
  auto log = std::make_shared<FakeLog>();
  plan::Manifest m = two_families(log);
  m.families[1].block = 1;
  EXPECT_EQ(plan::check_manifest(m).code(), ErrorCode::INTERNAL_ERROR);
  m = two_families(log);
  m.families[1].anchors = {"matmul"};
  EXPECT_EQ(plan::check_manifest(m).code(), ErrorCode::INTERNAL_ERROR);
  m = two_families(log);
  m.families[1].slots[0].name = "g0";
  EXPECT_EQ(plan::check_manifest(m).code(), ErrorCode::INTERNAL_ERROR);
}

// --- facts ---

int g_analyzer_runs = 0;
bool g_saw_frozen = false;
struct CountFacts : FactsRecord {
  std::size_t nodes = 0;
  int sm = 0;
};
std::shared_ptr<const FactsRecord> count_analyzer(const OpGraph& g, const PlanTarget& t) {
  ++g_analyzer_runs;
  g_saw_frozen = g.is_frozen();
  auto f = std::make_shared<CountFacts>();
  f->nodes = g.nodes().size();
  f->sm = t.has_device() ? t.device->sm_version() : 0;
  return f;
}

TEST(Facts, OneAnalysisPerGraphAttachedAfterFreezeSharedByRankingAndEngines) {
  auto log = std::make_shared<FakeLog>();
  plan::Manifest m = two_families(log);
  FakeSpec reader;
  reader.reads = count_analyzer;
  m.families[0].analyzer = count_analyzer;
  m.families[0].slots[0] = fake_slot("g0", reader, log);
  m.families[0].slots.push_back(fake_slot("g2", reader, log));
  plan::testing::ScopedManifest scope(m);
  g_analyzer_runs = 0;
  Graph g;
  build_matmul(g);
  g.set_device_properties(sm(9, 0));
  g.set_host_fallback(true);  // the stand-ins need no device: on a device target they are the host fallback
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A, HeurMode::FALLBACK}).is_good());
  ASSERT_TRUE(g.build_plans(BuildPlanPolicy::ALL).is_good());
  EXPECT_EQ(g_analyzer_runs, 1);
  EXPECT_TRUE(g_saw_frozen);
  ASSERT_NE(g.facts(), nullptr);
  EXPECT_EQ(g.facts()->analyses(), 1);
  const auto& f = g.facts()->get_as<CountFacts>(count_analyzer);
  EXPECT_EQ(f.nodes, 1u);
  EXPECT_EQ(f.sm, 90);
  Graph h;  // another graph: its own analysis
  build_matmul(h);
  ASSERT_TRUE(h.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(g_analyzer_runs, 2);
}

}  // namespace
}  // namespace opgraph

namespace opgraph {
namespace {

using namespace testing_fakes;

TEST(Manifest, FamilyValidatorRunsOnlyWhenTheFamilyOffersAnEngine) {
  auto log = std::make_shared<FakeLog>();
  int runs = 0;
  auto make = [&](bool opt_in) {
    plan::Manifest m;
    m.universal = fake_family("universal", 0, {});
    auto f = fake_family("gemm", 1, {"matmul"});
    f.slots.push_back(fake_slot("g0", {}, log, opt_in));
    f.validator = [&runs](const OpGraph& g) {
      ++runs;
      return Status(ErrorCode::GRAPH_NOT_SUPPORTED, "gemm rule: graph '" + g.context().name + "' has K = 8");
    };
    m.families.push_back(std::move(f));
    return m;
  };
  unsetenv("OPGRAPH_ENABLE_ENGINES");
  {
    plan::testing::ScopedManifest scope(make(false));
    Graph g;
    build_matmul(g);
    Status s = g.create_execution_plans({HeurMode::A});
    EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
    EXPECT_NE(s.message().find("gemm rule"), std::string::npos);
    EXPECT_EQ(runs, 1);
  }
  {
    plan::testing::ScopedManifest scope(make(true));  // nothing offered: the validator is not asked
    Graph g;
    build_matmul(g);
    Status s = g.create_execution_plans({HeurMode::A});
    EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED);  // and no engine at all offers a plan
    EXPECT_EQ(s.message().find("gemm rule"), std::string::npos);
    EXPECT_EQ(runs, 1);
  }
}

}  // namespace
}  // namespace opgraph
