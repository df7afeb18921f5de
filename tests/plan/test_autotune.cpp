// tests/plan/test_autotune.cpp — Graph::autotune and the plan-choice file: the
// fastest plan is selected and recorded, a new graph of the same key on the same
// device gets it first, and a doubtful record (corrupt, another graph's, another
// device's, untrusted) or the switch OPGRAPH_DISABLE_PLAN_CHOICES leaves the
// heuristics' order alone.
//
// The engines: the shipped reference (the manifest's universal row) and two
// stand-ins entered through testing::ScopedManifest whose execute takes a known
// time: "slow" sleeps 20 ms, "quick" returns at once. The heuristics rank slow
// first, so a correct autotune must move away from plan 0.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engines/manifest.h"
#include "fakes.h"
#include "opgraph/graph.h"
#include "runtime/plan_choice.h"

namespace opgraph {
namespace {

namespace fs = std::filesystem;
using namespace testing_fakes;

class TimedPlan final : public CompiledPlan {
 public:
  TimedPlan(std::chrono::microseconds delay, bool fails) : delay_(delay), fails_(fails) {}
  std::int64_t workspace_size() const override { return 0; }
  Status execute(const VariantPack&, const ExecutionContext&) const override {
    if (fails_) return {ErrorCode::GRAPH_EXECUTION_FAILED, "timed: this plan always fails at execute"};
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    return Status::ok();
  }

 private:
  std::chrono::microseconds delay_;
  bool fails_;
};

struct TimedSpec {
  std::chrono::microseconds delay{0};
  bool build_declines = false;
  bool execute_fails = false;
};

class TimedEngine final : public Engine {
 public:
  TimedEngine(EngineIdentity id, TimedSpec spec) : Engine(std::move(id)), spec_(spec) { caps_.needs_device = false; }
  const Capabilities& capabilities() const override { return caps_; }
  Status check_support(const OpGraph&, const PlanContext&) const override { return Status::ok(); }
  Result<std::unique_ptr<CompiledPlan>> build_plan(const OpGraph&, const PlanConfig&,
                                                   const PlanContext&) const override {
    if (spec_.build_declines) return decline("timed: no kernel for this shape");
    return std::unique_ptr<CompiledPlan>(std::make_unique<TimedPlan>(spec_.delay, spec_.execute_fails));
  }

 private:
  TimedSpec spec_;
  Capabilities caps_;
};

plan::EngineSlot timed_slot(std::string name, TimedSpec spec) {
  plan::EngineSlot s;
  s.name = std::move(name);
  s.factory = [spec](EngineIdentity id) { return std::make_unique<TimedEngine>(std::move(id), spec); };
  return s;
}

// The matmul family (block 1) with the given stand-ins, in slot order = rank
// order, then the shipped universal row (the reference).
plan::Manifest timed_manifest(std::vector<std::pair<std::string, TimedSpec>> slots) {
  plan::Manifest m;
  m.universal = engines::default_manifest().universal;
  auto f = fake_family("gemm", 1, {"matmul"});
  for (auto& s : slots) f.slots.push_back(timed_slot(s.first, s.second));
  m.families.push_back(std::move(f));
  return m;
}

plan::Manifest slow_quick() {
  return timed_manifest({{"slow", TimedSpec{std::chrono::milliseconds(20)}}, {"quick", TimedSpec{}}});
}

// A[1,32,32] @ B[1,32,32] -> C: real work for the reference.
void build_graph(OpGraph& g, const std::string& name = "tuned") {
  g.set_name(name).set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
  auto a = g.tensor({1, 32, 32}, DataType::FLOAT, "A");
  auto b = g.tensor({1, 32, 32}, DataType::FLOAT, "B");
  g.matmul(a, b)->set_output(true).set_name("C");
}

struct Buffers {
  std::vector<float> a = std::vector<float>(32 * 32, 0.5f), b = std::vector<float>(32 * 32, 0.25f),
                     c = std::vector<float>(32 * 32, 0.0f);
  VariantPack pack(const Graph& g) {
    VariantPack p;
    for (const auto& t : g.tensors()) {
      if (t->get_name() == "A") p.set(t->get_uid(), a.data());
      if (t->get_name() == "B") p.set(t->get_uid(), b.data());
      if (t->get_name() == "C") p.set(t->get_uid(), c.data());
    }
    return p;
  }
};

// A private temp root for the plan-choice file, and the switch unset, per test.
class Autotune : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/opgraph_plan_choices_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ::setenv("OPGRAPH_PLAN_CHOICES", root_.c_str(), 1);
    ::unsetenv("OPGRAPH_DISABLE_PLAN_CHOICES");
  }
  void TearDown() override {
    ::unsetenv("OPGRAPH_PLAN_CHOICES");
    ::unsetenv("OPGRAPH_DISABLE_PLAN_CHOICES");
    std::error_code ec;
    fs::permissions(root_, fs::perms::owner_all, ec);
    fs::remove_all(root_, ec);
  }

  // Plans a fresh graph; returns plan 0's name.
  std::string first_plan(Graph& g, const std::string& name = "tuned") {
    build_graph(g, name);
    EXPECT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
    auto n = g.get_plan_name_at_index(0);
    return n.is_good() ? n.value() : std::string("?");
  }

  // Autotunes a fresh graph (it must record); returns the record's path.
  std::string tune_and_record() {
    Graph g;
    build_graph(g);
    EXPECT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
    Buffers buf;
    AutotuneOptions o;
    o.top_k = 3;
    o.rounds = 3;
    auto r = g.autotune(buf.pack(g), {}, nullptr, o);
    EXPECT_TRUE(r.is_good()) << r.status().to_string();
    if (r.is_bad()) return "";
    EXPECT_TRUE(r->recorded) << r->record_note;
    return r->record_path;
  }

  static bool has_note(const Graph& g, const std::string& text) {
    for (const auto& n : g.planning_notes())
      if (n.find(text) != std::string::npos) return true;
    return false;
  }

  fs::path root_;
};

TEST_F(Autotune, PicksTheFastestPlanSelectsItAndRecordsIt) {
  plan::testing::ScopedManifest scope(slow_quick());
  Graph g;
  EXPECT_EQ(first_plan(g), "slow[]");
  ASSERT_EQ(g.get_execution_plan_count(), 3);  // slow, quick, reference
  Buffers buf;
  AutotuneOptions o;
  o.top_k = 3;
  o.rounds = 3;
  auto r = g.autotune(buf.pack(g), {}, nullptr, o);
  ASSERT_TRUE(r.is_good()) << r.status().to_string();
  ASSERT_EQ(r->entries.size(), 3u);
  EXPECT_EQ(r->entries[0].name, "slow[]");
  EXPECT_GE(r->entries[0].median_ms, 20.0);
  EXPECT_EQ(r->entries[0].rounds, 3);
  EXPECT_EQ(r->entries[0].timer, "host wall clock");
  EXPECT_EQ(r->entries[1].name, "quick[]");
  EXPECT_LT(r->entries[1].median_ms, r->entries[0].median_ms);
  EXPECT_EQ(r->selected, 1);
  EXPECT_EQ(g.get_selected_plan_index().value(), 1);
  // The reference really ran on the buffers: C = A @ B = 32 * 0.5 * 0.25.
  EXPECT_FLOAT_EQ(buf.c[0], 4.0f);
  ASSERT_TRUE(r->recorded) << r->record_note;
  EXPECT_TRUE(fs::exists(r->record_path));
  EXPECT_EQ(fs::path(r->record_path).parent_path().parent_path().parent_path(), root_);
  // A prepared pack is taken as it is.
  Graph gp;
  first_plan(gp);
  VariantPack prepared;
  ASSERT_TRUE(gp.prepare_variant_pack(buf.pack(gp), prepared).is_good());
  o.persist = false;
  auto rp = gp.autotune(prepared, {}, nullptr, o);
  ASSERT_TRUE(rp.is_good()) << rp.status().to_string();
  EXPECT_EQ(gp.get_plan_name_at_index(rp->selected).value(), "quick[]");  // first now: the record above
  // top_k limits the plans timed.
  Graph g2;
  first_plan(g2);
  o.top_k = 1;
  o.persist = false;
  auto r2 = g2.autotune(buf.pack(g2), {}, nullptr, o);
  ASSERT_TRUE(r2.is_good());
  EXPECT_EQ(r2->entries.size(), 1u);
  EXPECT_EQ(r2->selected, 0);
  EXPECT_FALSE(r2->recorded);
}

TEST_F(Autotune, ANewGraphOfTheSameKeyGetsTheRecordedChoiceFirst) {
  plan::testing::ScopedManifest scope(slow_quick());
  tune_and_record();
  Graph g;
  EXPECT_EQ(first_plan(g), "quick[]");
  EXPECT_EQ(g.get_execution_plan_count(), 3);
  EXPECT_EQ(g.get_plan_name_at_index(1).value(), "slow[]");  // the others keep their order
  EXPECT_TRUE(has_note(g, "plan choice: quick[] first"));
  ASSERT_TRUE(g.build_plans().is_good());
  EXPECT_EQ(g.get_selected_plan_index().value(), 0);
  // Another graph (another key) is untouched.
  Graph other;
  EXPECT_EQ(first_plan(other, "another"), "slow[]");
}

TEST_F(Autotune, ACorruptOrTruncatedRecordIsAMiss) {
  plan::testing::ScopedManifest scope(slow_quick());
  const std::string path = tune_and_record();
  for (const char* text : {"not json at all", "{\"schema\":1,\"environment\":", "{}", "[1,2]"}) {
    std::ofstream(path, std::ios::trunc) << text;
    Graph g;
    EXPECT_EQ(first_plan(g), "slow[]") << text;
    EXPECT_TRUE(has_note(g, "plan choice ignored")) << text;
  }
}

TEST_F(Autotune, AnotherGraphsRecordIsAMiss) {
  plan::testing::ScopedManifest scope(slow_quick());
  const std::string path = tune_and_record();
  // The record copied to the file of another graph's key.
  Graph other;
  build_graph(other, "another");
  ASSERT_TRUE(other.validate().is_good());
  const std::uint64_t key = other.key().value();
  const fs::path theirs = fs::path(path).parent_path() / (runtime::graph_key_hex(key) + ".json");
  fs::copy_file(path, theirs);
  Graph g;
  EXPECT_EQ(first_plan(g, "another"), "slow[]");
  EXPECT_TRUE(has_note(g, "another graph key"));
}

TEST_F(Autotune, AnotherDevicesRecordIsAMiss) {
  plan::testing::ScopedManifest scope(slow_quick());
  const std::string path = tune_and_record();  // recorded for the host
  Graph g;
  build_graph(g);
  g.set_device_properties(sm(9, 0));
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(g.get_plan_name_at_index(0).value(), "slow[]");  // another fingerprint folder: nothing there
  // The host's record copied into the device's folder names the host's fingerprint.
  runtime::PlanChoiceStore device_store(runtime::PlanChoiceOptions::from_env(),
                                        runtime::plan_choice_environment(sm(9, 0)));
  fs::create_directories(device_store.environment_dir());
  fs::permissions(device_store.environment_dir(), fs::perms::owner_all | fs::perms::group_read |
                                                      fs::perms::group_exec | fs::perms::others_read |
                                                      fs::perms::others_exec);
  fs::copy_file(path, device_store.environment_dir() / fs::path(path).filename());
  Graph g2;
  build_graph(g2);
  g2.set_device_properties(sm(9, 0));
  ASSERT_TRUE(g2.create_execution_plans({HeurMode::A}).is_good());
  EXPECT_EQ(g2.get_plan_name_at_index(0).value(), "slow[]");
  EXPECT_TRUE(has_note(g2, "another device fingerprint"));
  // The same device with another SM count is another fingerprint.
  DeviceProperties fewer = sm(9, 0);
  fewer.sm_count = 114;
  EXPECT_NE(runtime::plan_choice_environment(fewer).hash(), runtime::plan_choice_environment(sm(9, 0)).hash());
  EXPECT_NE(runtime::plan_choice_environment(std::nullopt).hash(), runtime::plan_choice_environment(sm(9, 0)).hash());
}

TEST_F(Autotune, AFolderOthersCanWriteIsNotTrusted) {
  plan::testing::ScopedManifest scope(slow_quick());
  const std::string path = tune_and_record();
  const fs::path env_dir = fs::path(path).parent_path();
  ::chmod(env_dir.c_str(), 0777);
  Graph g;
  EXPECT_EQ(first_plan(g), "slow[]");
  EXPECT_TRUE(has_note(g, "writable by others"));
  ::chmod(env_dir.c_str(), 0755);
  ::chmod(path.c_str(), 0666);
  Graph g2;
  EXPECT_EQ(first_plan(g2), "slow[]");
  ::chmod(path.c_str(), 0644);
  Graph g3;
  EXPECT_EQ(first_plan(g3), "quick[]");
}

TEST_F(Autotune, AChoiceNotInTheListIsIgnored) {
  plan::testing::ScopedManifest scope(slow_quick());
  tune_and_record();
  // Another manifest whose list lacks quick: the recorded choice names no plan of it.
  plan::testing::ScopedManifest without(timed_manifest({{"slow", TimedSpec{std::chrono::milliseconds(20)}}}));
  Graph g;
  EXPECT_EQ(first_plan(g), "slow[]");
  EXPECT_EQ(g.get_execution_plan_count(), 2);
  EXPECT_TRUE(has_note(g, "not in this graph's plan list"));
}

TEST_F(Autotune, TheSwitchTurnsReadingAndRecordingOff) {
  plan::testing::ScopedManifest scope(slow_quick());
  const std::string path = tune_and_record();
  ::setenv("OPGRAPH_DISABLE_PLAN_CHOICES", "1", 1);
  Graph g;
  EXPECT_EQ(first_plan(g), "slow[]");
  EXPECT_FALSE(has_note(g, "plan choice"));
  fs::remove(path);
  Buffers buf;
  AutotuneOptions o;
  o.rounds = 1;
  auto r = g.autotune(buf.pack(g), {}, nullptr, o);
  ASSERT_TRUE(r.is_good());
  EXPECT_EQ(r->selected, 1);  // still tunes and selects
  EXPECT_FALSE(r->recorded);
  EXPECT_NE(r->record_note.find("OPGRAPH_DISABLE_PLAN_CHOICES"), std::string::npos);
  EXPECT_FALSE(fs::exists(path));
  ::setenv("OPGRAPH_DISABLE_PLAN_CHOICES", "0", 1);  // "0" is on
  auto r2 = g.autotune(buf.pack(g), {}, nullptr, o);
  ASSERT_TRUE(r2.is_good());
  EXPECT_TRUE(r2->recorded) << r2->record_note;
}

TEST_F(Autotune, PlansThatFailToBuildOrExecuteAreSkippedWithTheirReason) {
  TimedSpec declines;
  declines.build_declines = true;
  TimedSpec fails;
  fails.execute_fails = true;
  plan::testing::ScopedManifest scope(timed_manifest({{"declines", declines}, {"fails", fails}, {"quick", {}}}));
  Graph g;
  first_plan(g);
  Buffers buf;
  AutotuneOptions unrecorded;
  unrecorded.persist = false;  // g2 below must keep the heuristics' order
  auto r = g.autotune(buf.pack(g), {}, nullptr, unrecorded);
  ASSERT_TRUE(r.is_good()) << r.status().to_string();
  ASSERT_GE(r->entries.size(), 3u);
  EXPECT_NE(r->entries[0].skipped.find("no kernel for this shape"), std::string::npos) << r->entries[0].skipped;
  EXPECT_EQ(r->entries[0].median_ms, -1);
  EXPECT_NE(r->entries[1].skipped.find("always fails at execute"), std::string::npos) << r->entries[1].skipped;
  EXPECT_EQ(r->entries[2].skipped, "");
  EXPECT_EQ(r->selected, 2);
  // Only failures: an error naming every reason.
  Graph g2;
  first_plan(g2);
  AutotuneOptions two;
  two.top_k = 2;
  auto r2 = g2.autotune(buf.pack(g2), {}, nullptr, two);
  ASSERT_TRUE(r2.is_bad());
  EXPECT_EQ(r2.status().code(), ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED);
  EXPECT_NE(r2.status().message().find("no kernel for this shape"), std::string::npos);
  EXPECT_NE(r2.status().message().find("always fails at execute"), std::string::npos);
}

TEST_F(Autotune, BadOptionsAndAnUnplannedGraphAreInvalidValue) {
  plan::testing::ScopedManifest scope(slow_quick());
  Graph g;
  build_graph(g);
  Buffers buf;
  EXPECT_EQ(g.autotune(VariantPack{}, {}).status().code(), ErrorCode::INVALID_VALUE);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  AutotuneOptions o;
  o.top_k = 0;
  EXPECT_EQ(g.autotune(buf.pack(g), {}, nullptr, o).status().code(), ErrorCode::INVALID_VALUE);
  o.top_k = 1;
  o.rounds = 0;
  EXPECT_EQ(g.autotune(buf.pack(g), {}, nullptr, o).status().code(), ErrorCode::INVALID_VALUE);
}

#ifdef OPGRAPH_TOOL_PATH
struct ToolRun {
  int exit_code = -1;
  std::string out, err;
};

ToolRun run_tool(const fs::path& dir, const std::string& args) {
  static int n = 0;
  const std::string base = (dir / ("tool_" + std::to_string(n++))).string();
  const std::string cmd = std::string(OPGRAPH_TOOL_PATH) + " " + args + " >" + base + ".out 2>" + base + ".err";
  const int rc = std::system(cmd.c_str());
  ToolRun r;
  r.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  std::ifstream o(base + ".out"), e(base + ".err");
  r.out.assign(std::istreambuf_iterator<char>(o), {});
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  return r;
}

// `opgraph autotune` on a real graph file (the host: the reference alone), then
// `opgraph plan` of the same file finds the record; bad input is one line.
TEST_F(Autotune, TheToolPrintsTheTableAndRecordsTheChoice) {
  const std::string graph = std::string(OPGRAPH_SOURCE_DIR) + "/examples/graphs/rmsnorm.json";
  ToolRun r = run_tool(root_, "autotune " + graph + " --top 2 --rounds 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("median_ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("selected plan 0 reference[]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("recorded in " + root_.string()), std::string::npos) << r.out;
  ToolRun p = run_tool(root_, "plan " + graph);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("plan choice: reference[] first"), std::string::npos) << p.out;
  ToolRun n = run_tool(root_, "autotune " + graph + " --no-record");
  ASSERT_EQ(n.exit_code, 0) << n.err;
  EXPECT_NE(n.out.find("not recorded: not asked to record"), std::string::npos) << n.out;
  for (const char* bad : {"--top 0", "--rounds 0", "--bogus 1"}) {
    ToolRun b = run_tool(root_, "autotune " + graph + " " + bad);
    EXPECT_EQ(b.exit_code, 2) << bad;
    EXPECT_EQ(b.err.find('\n'), b.err.size() - 1) << bad << ": " << b.err;
  }
  ToolRun missing = run_tool(root_, "autotune /nonexistent/graph.json");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("opgraph autotune: "), std::string::npos) << missing.err;
}
#endif

}  // namespace
}  // namespace opgraph
