// tests/plan/test_notes.cpp — plan notes (opgraph/plan_notes.h) and the note
// filters on graph.plans: what each plan carries (its engine's declared notes,
// or the backend's per config), get_plan_notes_at_index, and
// select_/deselect_numeric_notes, select_/deselect_behavior_notes — exactly the
// plans having (lacking) the notes are deselected, built plans are withdrawn.
#include <gtest/gtest.h>

#include <map>

#include "fakes.h"

namespace opgraph {
namespace {

using namespace testing_fakes;
using NN = NumericalNote;
using BN = BehaviorNote;

PlanNotes notes(std::vector<NN> n, std::vector<BN> b) {
  PlanNotes p;
  for (auto x : n) p.add(x);
  for (auto x : b) p.add(x);
  return p;
}

// gemm family: a0 {TENSOR_CORE}, a1 {TENSOR_CORE, NONDETERMINISTIC | RUNTIME_COMPILATION},
// a2 {}; backend configs eng5 {TENSOR_CORE, DOWN_CONVERT_INPUTS} and eng6 {| SUPPORTS_CUDA_GRAPH_NATIVE_API}.
struct Noted {
  std::shared_ptr<FakeLog> log = std::make_shared<FakeLog>();
  plan::Manifest m;
  std::map<std::string, PlanNotes> want;  // plan label -> notes
  Noted() {
    m.universal = fake_family("universal", 0, {});
    auto f = fake_family("gemm", 1, {"matmul"});
    std::vector<PlanNotes> ours = {notes({NN::TENSOR_CORE}, {}),
                                   notes({NN::NONDETERMINISTIC, NN::TENSOR_CORE}, {BN::RUNTIME_COMPILATION}), {}};
    for (std::size_t i = 0; i < ours.size(); ++i) {
      FakeSpec s;
      s.notes = ours[i];
      f.slots.push_back(fake_slot("a" + std::to_string(i), s, log));
      want["a" + std::to_string(i)] = ours[i];
    }
    f.heuristics = [](HeurMode, const PlanContext&, const std::vector<const Engine*>& offered) {
      std::vector<plan::Proposal> p;
      for (const Engine* e : offered) p.push_back(plan::Proposal::plan(e->id(), e->default_knobs()));
      return Result<std::vector<plan::Proposal>>(p);
    };
    m.families.push_back(std::move(f));
    auto b = std::make_shared<FakeBackend>(log);
    PlanConfig c5{5, {{KnobType::TILE_M, 64}}};
    c5.notes = notes({NN::DOWN_CONVERT_INPUTS, NN::TENSOR_CORE}, {});
    PlanConfig c6{6, {}};
    c6.notes = notes({}, {BN::SUPPORTS_CUDA_GRAPH_NATIVE_API});
    b->per_mode = {{HeurMode::A, c5}, {HeurMode::A, c6}};
    want["cudnn_eng5"] = c5.notes;
    want["cudnn_eng6"] = c6.notes;
    m.backend = b;
  }
};

std::string label_at(const Graph& g, std::int64_t i) {
  std::string n = g.get_plan_name_at_index(i).value();
  return n.substr(0, n.find('['));
}

bool deselected(const Graph& g, std::int64_t i) {
  return g.get_plan_status_at_index(i).value().rfind("deselected: ", 0) == 0;
}

void plan(Graph& g) {
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  ASSERT_EQ(g.get_execution_plan_count(), 5);
}

TEST(Notes, NamesRoundTripAndTheBackendMappingIsARangeCheck) {
  for (int i = 0; i < kNumericalNoteCount; ++i) {
    auto n = static_cast<NN>(i);
    EXPECT_EQ(numerical_note_from_string(to_string(n)), n);
    EXPECT_EQ(numerical_note_from_backend(i), n);
  }
  for (int i = 0; i < kBehaviorNoteCount; ++i) {
    auto n = static_cast<BN>(i);
    EXPECT_EQ(behavior_note_from_string(to_string(n)), n);
    EXPECT_EQ(behavior_note_from_backend(i), n);
  }
  EXPECT_FALSE(numerical_note_from_backend(kNumericalNoteCount).has_value());
  EXPECT_FALSE(behavior_note_from_backend(-1).has_value());
  EXPECT_FALSE(numerical_note_from_string("tensor_core").has_value());  // exact names only
  EXPECT_EQ(to_string(NN::WINOGRAD_TILE_4x4), "WINOGRAD_TILE_4x4");
}

TEST(Notes, ANoteSetIsSortedUniqueAndNotPartOfPlanIdentity) {
  PlanNotes p;
  p.add(NN::STRICT_NAN_PROP);
  p.add(NN::TENSOR_CORE);
  p.add(NN::STRICT_NAN_PROP);
  p.add(BN::CUBLASLT_DEPENDENCY);
  EXPECT_EQ(p.numerical, (std::vector<NN>{NN::TENSOR_CORE, NN::STRICT_NAN_PROP}));
  EXPECT_EQ(notes_to_string(p), "TENSOR_CORE,STRICT_NAN_PROP,CUBLASLT_DEPENDENCY");
  PlanConfig a{7, {{KnobType::TILE_M, 64}}}, b = a;
  b.notes = p;
  EXPECT_TRUE(a.same_plan(b));
}

TEST(Notes, EveryPlanCarriesItsEnginesOrItsBackendConfigsNotes) {
  Noted w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  plan(g);
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i) {
    const std::string l = label_at(g, i);
    ASSERT_TRUE(w.want.count(l)) << l;
    EXPECT_EQ(g.get_plan_notes_at_index(i).value(), w.want[l]) << l;
    EXPECT_EQ(g.get_engine_and_knobs_at_index(i).value().notes, w.want[l]) << l;
  }
  EXPECT_EQ(g.get_plan_notes_at_index(5).status().code(), ErrorCode::INVALID_VALUE);
}

TEST(Notes, DeselectNumericNotesRemovesExactlyThePlansHavingAny) {
  Noted w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  plan(g);
  ASSERT_TRUE(g.deselect_numeric_notes({NN::TENSOR_CORE}).is_good());
  int removed = 0;
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i) {
    bool has = w.want[label_at(g, i)].has(NN::TENSOR_CORE);
    EXPECT_EQ(deselected(g, i), has) << label_at(g, i);
    if (has) {
      EXPECT_NE(g.get_plan_status_at_index(i).value().find("TENSOR_CORE"), std::string::npos);
    }
    removed += has;
  }
  EXPECT_EQ(removed, 3);  // a0, a1, cudnn_eng5
  ASSERT_TRUE(g.build_plans().is_good());
  EXPECT_EQ(label_at(g, g.get_selected_plan_index().value()), "a2");
  for (const auto& [id, k] : w.log->built) EXPECT_EQ(id, plan::encode_engine_id(1, 2));
}

TEST(Notes, SelectKeepsOnlyPlansHavingAllAndAnEmptyListKeepsAll) {
  Noted w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  plan(g);
  ASSERT_TRUE(g.select_numeric_notes({}).is_good());
  for (std::int64_t i = 0; i < 5; ++i) EXPECT_FALSE(deselected(g, i));
  ASSERT_TRUE(g.select_numeric_notes({NN::TENSOR_CORE, NN::NONDETERMINISTIC}).is_good());
  for (std::int64_t i = 0; i < 5; ++i) EXPECT_EQ(deselected(g, i), label_at(g, i) != "a1") << label_at(g, i);
  ASSERT_TRUE(g.build_plans().is_good());
  EXPECT_EQ(label_at(g, g.get_selected_plan_index().value()), "a1");
}

TEST(Notes, BehaviorFiltersReadBehaviorNotesOnly) {
  Noted w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g1;
  plan(g1);
  ASSERT_TRUE(g1.select_behavior_notes({BN::RUNTIME_COMPILATION}).is_good());
  for (std::int64_t i = 0; i < 5; ++i) EXPECT_EQ(deselected(g1, i), label_at(g1, i) != "a1") << label_at(g1, i);
  Graph g2;
  plan(g2);
  ASSERT_TRUE(g2.deselect_behavior_notes({BN::SUPPORTS_CUDA_GRAPH_NATIVE_API, BN::CUBLASLT_DEPENDENCY}).is_good());
  for (std::int64_t i = 0; i < 5; ++i) EXPECT_EQ(deselected(g2, i), label_at(g2, i) == "cudnn_eng6") << label_at(g2, i);
}

TEST(Notes, AFilterWithdrawsABuiltPlanAndTheNextBuildWalksOn) {
  Noted w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  plan(g);
  ASSERT_TRUE(g.build_plans().is_good());
  const std::int64_t first = g.get_selected_plan_index().value();
  ASSERT_TRUE(w.want[label_at(g, first)].has(NN::TENSOR_CORE)) << "the first plan should be a tensor-core one";
  std::int64_t out = 0;
  VariantPack pack;
  pack.set(1, &out);
  ASSERT_TRUE(g.execute(pack).is_good());
  ASSERT_TRUE(g.deselect_numeric_notes({NN::TENSOR_CORE}).is_good());
  EXPECT_TRUE(g.get_selected_plan_index().is_bad());
  EXPECT_TRUE(g.execute(pack).is_bad());  // refused, never the withdrawn plan
  EXPECT_EQ(g.execute_plan_at_index(pack, {}, first).code(), ErrorCode::INVALID_VALUE);
  ASSERT_TRUE(g.build_plans().is_good());
  const std::int64_t next = g.get_selected_plan_index().value();
  EXPECT_FALSE(w.want[label_at(g, next)].has(NN::TENSOR_CORE));
  out = -1;
  ASSERT_TRUE(g.execute(pack).is_good());
  EXPECT_EQ(out, g.get_engine_and_knobs_at_index(next).value().engine_id);
}

TEST(Notes, FiltersNeedPlans) {
  Noted w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  EXPECT_EQ(g.deselect_numeric_notes({NN::FFT}).code(), ErrorCode::INVALID_VALUE);
  EXPECT_EQ(g.select_behavior_notes({}).code(), ErrorCode::INVALID_VALUE);
}

TEST(Notes, ReplayTakesTheEnginesDeclaredNotes) {
  Noted w;
  plan::testing::ScopedManifest scope(w.m);
  Graph g;
  build_matmul(g);
  ASSERT_TRUE(g.create_execution_plan(plan::encode_engine_id(1, 1), {}).is_good());
  EXPECT_EQ(g.get_plan_notes_at_index(0).value(), w.want["a1"]);
}

}  // namespace
}  // namespace opgraph
