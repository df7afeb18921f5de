// tests/cudnn_gpu/test_cudnn_gpu_records.cpp — cuDNN's engine notes and plan
// records on a GPU (built with -DOPGRAPH_GPU_TESTS=ON; never on CI).
//
//  * Notes: a bf16 matmul's cudnn plans carry the notes cuDNN reports per engine
//    config; at least one has TENSOR_CORE, and deselect_numeric_notes({TENSOR_CORE})
//    deselects exactly the plans having it (every other plan keeps an empty status).
//  * Records: the first cudnn plan that builds is serialised
//    (Graph::serialize_plan_at_index), a fresh graph built identically plans
//    from the record (deserialize_plan), builds, runs and matches the reference
//    (harness tolerances). Where the record carries cuDNN's execution-plan JSON,
//    cuDNN must take it back in this process (no refusal note, the plan is built
//    on return); a plan with RUNTIME_COMPILATION must carry the JSON (cuDNN
//    serialises runtime-fusion engines). The same (engine_id, knobs) named through
//    create_execution_plan carries the same notes (read off the engine).
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cudnn_gpu/gpu_harness.h"
#include "runtime/device.h"

using namespace opgraph;

namespace {

using namespace cudnn_gpu;
using json = nlohmann::json;

bool is_cudnn(const Graph& g, std::int64_t i) { return g.get_plan_name_at_index(i).value().rfind("cudnn_eng", 0) == 0; }

TEST(CudnnGpuNotes, Bf16MatmulHasTensorCorePlansAndTheFilterRemovesExactlyThem) {
  ASSERT_NE(driver(), nullptr) << "no CUDA device";
  auto props = runtime::read_device_properties(0);
  ASSERT_TRUE(props.is_good());
  Graph g;
  g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  auto a = g.tensor({1, 256, 128}, DataType::BFLOAT16, "A");
  auto b = g.tensor({1, 128, 192}, DataType::BFLOAT16, "B");
  out(g.matmul(a, b), "C", DataType::BFLOAT16);
  g.set_device_properties(props.value());
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A, HeurMode::FALLBACK}).is_good());
  std::vector<bool> tc;
  int cudnn_plans = 0, with_tc = 0;
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i) {
    PlanNotes n = g.get_plan_notes_at_index(i).value();
    tc.push_back(n.has(NumericalNote::TENSOR_CORE));
    if (!is_cudnn(g, i)) continue;
    ++cudnn_plans;
    with_tc += tc.back();
    std::printf("NOTES %-40s %s\n", g.get_plan_name_at_index(i).value().c_str(), notes_to_string(n).c_str());
  }
  ASSERT_GT(cudnn_plans, 0) << "no cudnn plan for a bf16 matmul";
  EXPECT_GT(with_tc, 0) << "no cudnn plan of a bf16 matmul reports TENSOR_CORE";
  ASSERT_TRUE(g.deselect_numeric_notes({NumericalNote::TENSOR_CORE}).is_good());
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i) {
    const std::string st = g.get_plan_status_at_index(i).value();
    if (tc[static_cast<std::size_t>(i)]) {
      EXPECT_NE(st.find("has numerical note TENSOR_CORE"), std::string::npos) << g.get_plan_name_at_index(i).value();
    } else {
      EXPECT_EQ(st, "") << g.get_plan_name_at_index(i).value();
    }
  }
}

// Serialise the first cudnn plan that builds, replay it into a fresh graph, run it.
void replay(const Case& c) {
  SCOPED_TRACE(c.name);
  ASSERT_NE(driver(), nullptr) << "no CUDA device";
  auto props = runtime::read_device_properties(0);
  ASSERT_TRUE(props.is_good());
  Graph g;
  c.build(g);
  g.set_device_properties(props.value());
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A, HeurMode::FALLBACK}).is_good());
  std::int64_t bi = -1;
  for (std::int64_t i = 0; i < g.get_execution_plan_count() && bi < 0; ++i)
    if (is_cudnn(g, i) && g.build_plan_at_index(i).is_good()) bi = i;
  ASSERT_GE(bi, 0) << "no cudnn plan built";
  auto record = g.serialize_plan_at_index(bi);
  ASSERT_TRUE(record.is_good()) << record.status().to_string();
  json j = json::parse(record.value());
  const PlanNotes notes = g.get_plan_notes_at_index(bi).value();
  const bool blob = j.contains("backend_plan");
  std::printf("RECORD %s: %s [%s] backend_plan %s\n", c.name.c_str(), g.get_plan_name_at_index(bi).value().c_str(),
              notes_to_string(notes).c_str(),
              blob ? (std::to_string(j["backend_plan"].get<std::string>().size()) + " bytes").c_str()
                   : ("absent: " + j.value("backend_refused", std::string("?"))).c_str());
  EXPECT_EQ(j["engine_id"].get<std::int64_t>(), g.get_engine_and_knobs_at_index(bi).value().engine_id);
  if (notes.has(BehaviorNote::RUNTIME_COMPILATION)) {
    EXPECT_TRUE(blob) << "a runtime-compiled plan has no JSON";
  }

  Graph fresh;
  Io io = c.build(fresh);
  fresh.set_device_properties(props.value());
  Status s = fresh.deserialize_plan(record.value());
  ASSERT_TRUE(s.is_good()) << s.to_string();
  ASSERT_EQ(fresh.get_execution_plan_count(), 1);
  EXPECT_EQ(fresh.get_plan_name_at_index(0).value(), g.get_plan_name_at_index(bi).value());
  EXPECT_EQ(fresh.get_plan_notes_at_index(0).value(), notes);
  for (const auto& n : fresh.planning_notes()) std::printf("RECORD %s note: %s\n", c.name.c_str(), n.c_str());
  if (blob) {
    EXPECT_TRUE(fresh.planning_notes().empty()) << "cuDNN refused its own plan JSON";
    EXPECT_TRUE(fresh.get_workspace_size_plan_at_index(0).is_good()) << "the loaded plan is built on return";
  }
  // The same plan named by (engine_id, knobs): cuDNN reports the same engine's notes.
  Graph named;
  c.build(named);
  named.set_device_properties(props.value());
  PlanConfig cfg = g.get_engine_and_knobs_at_index(bi).value();
  ASSERT_TRUE(named.create_execution_plan(cfg.engine_id, cfg.knobs).is_good());
  EXPECT_EQ(named.get_plan_notes_at_index(0).value(), notes) << notes_to_string(named.get_plan_notes_at_index(0).value());

  ASSERT_TRUE(fresh.build_plans().is_good());
  Outcome o = run_and_compare(c, fresh, io, 0);
  std::printf("RECORD %s replayed: %s\n", c.name.c_str(), o.what.c_str());
}

TEST(CudnnGpuRecords, PointwisePlanReplaysFromItsRecordAndMatchesTheReference) {
  Case c;
  c.name = "records_add_relu";
  c.build = [](Graph& g) {
    g.set_compute_data_type(DataType::FLOAT);
    auto x = g.tensor({2, 24, 40}, DataType::FLOAT, "x");
    auto y = g.tensor({2, 24, 40}, DataType::FLOAT, "y");
    auto z = out(g.relu(g.add(x, y)), "z");
    return Io{{x, y}, {z}};
  };
  replay(c);
}

TEST(CudnnGpuRecords, Bf16MatmulPlanReplaysFromItsRecordAndMatchesTheReference) {
  Case c;
  c.name = "records_matmul_bf16";
  c.atol = 2e-2;
  c.rtol = 1e-2;  // bf16 output: one bf16 ulp is 2^-8 relative
  c.build = [](Graph& g) {
    g.set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
    auto a = g.tensor({1, 64, 96}, DataType::BFLOAT16, "A");
    auto b = g.tensor({1, 96, 48}, DataType::BFLOAT16, "B");
    auto cc = out(g.matmul(a, b), "C", DataType::BFLOAT16);
    return Io{{a, b}, {cc}};
  };
  replay(c);
}

}  // namespace
