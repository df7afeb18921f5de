// tests/plan/test_plan_records.cpp — Graph::serialize_plan_at_index /
// deserialize_plan: the record's fields, replay of (engine_id, knobs) with the
// notes into a fresh graph, the backend blob loaded instead of a build, a
// refused blob falling back to a rebuild with a planning note, a backend that
// will not serialise, and the refusals (graph key, malformed, unbuilt, planned).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fakes.h"

namespace opgraph {
namespace {

using namespace testing_fakes;
using json = nlohmann::json;

// gemm family with one engine "a0" (TILE_M in {64, 128}, notes {TENSOR_CORE});
// the backend lists eng7 {TILE_N=32} with serialised form `blob` (see FakeSpec::blob).
struct World {
  std::shared_ptr<FakeLog> log = std::make_shared<FakeLog>();
  plan::Manifest m;
  std::int64_t a0 = plan::encode_engine_id(1, 0);
  explicit World(int blob) {
    m.universal = fake_family("universal", 0, {});
    auto f = fake_family("gemm", 1, {"matmul"});
    FakeSpec s;
    s.knobs = {KnobDomain{KnobType::TILE_M, {64, 128}}};
    s.notes.add(NumericalNote::TENSOR_CORE);
    s.workspace = 16;
    f.slots.push_back(fake_slot("a0", s, log));
    m.families.push_back(std::move(f));
    auto b = std::make_shared<FakeBackend>(log, blob);
    PlanConfig c{7, {{KnobType::TILE_N, 32}}};
    c.notes.add(BehaviorNote::RUNTIME_COMPILATION);
    b->per_mode = {{HeurMode::A, c}};
    m.backend = b;
  }
};

// Plans a matmul graph, builds plan `index` and returns its record.
std::string record_of(Graph& g, std::int64_t index) {
  build_matmul(g);
  EXPECT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_TRUE(g.build_plan_at_index(index).is_good());
  auto r = g.serialize_plan_at_index(index);
  EXPECT_TRUE(r.is_good()) << r.status().to_string();
  return r.is_good() ? r.value() : std::string();
}

std::int64_t index_of(const Graph& g, const std::string& prefix) {
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i)
    if (g.get_plan_name_at_index(i).value().rfind(prefix, 0) == 0) return i;
  return -1;
}

// Runs the built plan 0 of `g`; returns the engine id the stand-in wrote.
std::int64_t run(Graph& g) {
  std::int64_t out = -1;
  std::vector<unsigned char> ws(64);
  VariantPack pack;
  pack.set(1, &out);
  Status s = g.execute(pack, Workspace{ws.data(), static_cast<std::int64_t>(ws.size())});
  EXPECT_TRUE(s.is_good()) << s.to_string();
  return out;
}

TEST(PlanRecords, ARecordNamesGraphEngineKnobsAndNotesAndReplaysIntoAFreshGraph) {
  World w(0);
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  const std::int64_t i = index_of(g, "a0");
  ASSERT_GE(i, 0);
  ASSERT_TRUE(g.build_plan_at_index(i).is_good());
  auto text = g.serialize_plan_at_index(i);
  ASSERT_TRUE(text.is_good()) << text.status().to_string();
  json j = json::parse(text.value());
  EXPECT_EQ(j["format"], "opgraph.plan");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["graph"], "mm");
  EXPECT_EQ(j["graph_key"].get<std::string>().size(), 16u);
  EXPECT_EQ(j["engine_id"], w.a0);
  EXPECT_EQ(j["engine"], "a0");
  EXPECT_EQ(j["knobs"], json({{"TILE_M", 64}}));
  EXPECT_EQ(j["numerical_notes"], json({"TENSOR_CORE"}));
  EXPECT_FALSE(j.contains("backend_plan"));  // the engine has no serialised form
  EXPECT_FALSE(j.contains("backend_refused"));

  Graph fresh;
  build_matmul(fresh);
  Status ds = fresh.deserialize_plan(text.value());
  ASSERT_TRUE(ds.is_good()) << ds.to_string();
  ASSERT_EQ(fresh.get_execution_plan_count(), 1);
  EXPECT_EQ(fresh.get_plan_name_at_index(0).value(), g.get_plan_name_at_index(i).value());
  EXPECT_EQ(fresh.get_plan_notes_at_index(0).value(), g.get_plan_notes_at_index(i).value());
  const std::size_t built = w.log->built.size();
  ASSERT_TRUE(fresh.build_plans().is_good());
  EXPECT_EQ(w.log->built.size(), built + 1);  // rebuilt from (engine_id, knobs)
  EXPECT_EQ(w.log->built.back().second, (Knobs{{KnobType::TILE_M, 64}}));
  EXPECT_EQ(run(fresh), w.a0);
  EXPECT_TRUE(w.log->loaded.empty());
}

TEST(PlanRecords, AValidBackendBlobIsLoadedInsteadOfABuild) {
  World w(1);
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  const std::int64_t i = index_of(g, "cudnn_eng7");
  ASSERT_GE(i, 0);
  ASSERT_TRUE(g.build_plan_at_index(i).is_good());
  const std::string text = g.serialize_plan_at_index(i).value();
  EXPECT_EQ(json::parse(text)["backend_plan"], "fake-plan:7");
  EXPECT_EQ(json::parse(text)["behavior_notes"], json({"RUNTIME_COMPILATION"}));

  const std::size_t built = w.log->built.size();
  Graph fresh;
  build_matmul(fresh);
  ASSERT_TRUE(fresh.deserialize_plan(text).is_good());
  EXPECT_EQ(w.log->loaded, (std::vector<std::int64_t>{7}));
  EXPECT_TRUE(fresh.get_workspace_size_plan_at_index(0).is_good());  // built on return
  ASSERT_TRUE(fresh.build_plans().is_good());
  EXPECT_EQ(w.log->built.size(), built);  // nothing rebuilt
  EXPECT_EQ(run(fresh), 7);
  EXPECT_TRUE(fresh.planning_notes().empty());
  EXPECT_TRUE(fresh.get_plan_notes_at_index(0).value().has(BehaviorNote::RUNTIME_COMPILATION));
}

TEST(PlanRecords, ARefusedBlobFallsBackToARebuildWithANote) {
  World w(1);
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  const std::int64_t i = index_of(g, "cudnn_eng7");
  ASSERT_TRUE(g.build_plan_at_index(i).is_good());
  json j = json::parse(g.serialize_plan_at_index(i).value());
  j["backend_plan"] = "fake-plan:999";  // e.g. written by another library version
  const std::size_t built = w.log->built.size();
  Graph fresh;
  build_matmul(fresh);
  ASSERT_TRUE(fresh.deserialize_plan(j.dump()).is_good());
  EXPECT_TRUE(w.log->loaded.empty());
  ASSERT_EQ(fresh.planning_notes().size(), 1u);
  const std::string& note = fresh.planning_notes()[0];
  EXPECT_NE(note.find("cudnn_eng7: the record's backend plan was refused"), std::string::npos) << note;
  EXPECT_NE(note.find("'fake-plan:999' is not a plan of this engine"), std::string::npos) << note;
  EXPECT_TRUE(fresh.get_workspace_size_plan_at_index(0).is_bad());  // not built yet
  ASSERT_TRUE(fresh.build_plans().is_good());
  EXPECT_EQ(w.log->built.size(), built + 1);
  EXPECT_EQ(w.log->built.back(), (std::pair<std::int64_t, Knobs>{7, {{KnobType::TILE_N, 32}}}));
  EXPECT_EQ(run(fresh), 7);
}

TEST(PlanRecords, ABackendThatWillNotSerialiseLeavesThePortableForm) {
  World w(2);
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  const std::string text = record_of(g, 1);  // ours first, then the backend's eng7
  ASSERT_EQ(g.get_plan_name_at_index(1).value().rfind("cudnn_eng7", 0), 0u);
  json j = json::parse(text);
  EXPECT_FALSE(j.contains("backend_plan"));
  EXPECT_NE(j["backend_refused"].get<std::string>().find("no serialised form"), std::string::npos);
  Graph fresh;
  build_matmul(fresh);
  ASSERT_TRUE(fresh.deserialize_plan(text).is_good());
  ASSERT_TRUE(fresh.build_plans().is_good());
  EXPECT_EQ(run(fresh), 7);
}

TEST(PlanRecords, Refusals) {
  World w(0);
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(g.serialize_plan_at_index(0).status().code(), ErrorCode::INVALID_VALUE);  // not built
  EXPECT_EQ(g.serialize_plan().status().code(), ErrorCode::INVALID_VALUE);           // nothing selected
  ASSERT_TRUE(g.build_plans().is_good());
  const std::string text = g.serialize_plan().value();
  EXPECT_EQ(g.deserialize_plan(text).code(), ErrorCode::INVALID_VALUE);  // planning is one-shot

  Graph other;  // another graph: its key differs
  build_relu(other);
  Status s = other.deserialize_plan(text);
  EXPECT_EQ(s.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(s.message().find(json::parse(text)["graph_key"].get<std::string>()), std::string::npos) << s.message();
  EXPECT_FALSE(other.is_planned());

  auto refuse = [](const std::string& rec, const std::string& names) {
    Graph f;
    build_matmul(f);
    Status r = f.deserialize_plan(rec);
    EXPECT_EQ(r.code(), ErrorCode::UNSUPPORTED_GRAPH_FORMAT) << rec;
    EXPECT_NE(r.message().find(names), std::string::npos) << r.message();
  };
  refuse("not json", "not a JSON object");
  refuse("{}", "'format'");
  json j = json::parse(text);
  j["version"] = 2;
  refuse(j.dump(), "'version'");
  j = json::parse(text);
  j["knobs"] = {{"TILE_Q", 1}};
  refuse(j.dump(), "knobs.TILE_Q: unknown knob type");
  j = json::parse(text);
  j["numerical_notes"] = {"TENSOR_CORES"};
  refuse(j.dump(), "unknown note 'TENSOR_CORES'");
  j = json::parse(text);
  j.erase("engine_id");
  refuse(j.dump(), "'engine_id'");
}

}  // namespace
}  // namespace opgraph
