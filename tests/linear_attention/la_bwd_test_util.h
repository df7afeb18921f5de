// tests/linear_attention/la_bwd_test_util.h — what the CPU tests of the engine's backward ops
// (test_la_bwd.cpp: gdn_bwd; test_la_summary_bwd.cpp: gdn_summary_bwd) share: the engine, and a
// decline's check (GRAPH_NOT_SUPPORTED naming the rule and the op).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engines/linear_attention/gdn_bwd.h"
#include "engines/linear_attention/la_engine.h"
#include "exec/declared_layout.h"
#include "opgraph/graph.h"
#include "opgraph/op_graph.h"

namespace la_bwd_test {

inline const opgraph::Engine& engine() {
  static std::unique_ptr<opgraph::Engine> e =
      opgraph::linear_attention::make_la_engine(opgraph::EngineIdentity{20500, "linear_attention"});
  return *e;
}

// analyze_gdn_bwd declines `g` with GRAPH_NOT_SUPPORTED, naming `rule` and "engine linear_attention: <op>".
inline void expect_decline(const opgraph::OpGraph& g, const std::string& rule, const std::string& op) {
  auto p = opgraph::linear_attention::analyze_gdn_bwd(g);
  ASSERT_TRUE(p.is_bad()) << "accepted; expected a decline naming " << rule;
  EXPECT_EQ(p.status().code(), opgraph::ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(p.status().message().find(rule), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("engine linear_attention: " + op), std::string::npos) << p.status().message();
}

// The kernels engine().plan_kernels names for `g` (frozen) under `config` on a device-less sm_90a target;
// the call's status in *status.
inline std::vector<std::string> planned_kernels(const opgraph::OpGraph& g, const opgraph::PlanConfig& config,
                                                opgraph::Status* status) {
  std::vector<std::string> names;
  auto sm90 = opgraph::DeviceProperties::for_arch("sm_90a");
  if (sm90.is_bad()) {
    *status = sm90.status();
    return names;
  }
  opgraph::FactsCache facts(g, opgraph::PlanTarget{*sm90});
  opgraph::PlanContext ctx{&facts};
  *status = engine().plan_kernels(g, config, ctx, [&](const opgraph::runtime::KernelRequest& r) {
    names.push_back(r.kernel);
    return opgraph::Status::ok();
  });
  return names;
}

// The problem a call with `v`'s shape overrides runs (gdn_bwd_overridden_problem on the normalised pack);
// the pack must carry overrides.
inline opgraph::Result<opgraph::linear_attention::GdnBwdProblem> overridden(
    const opgraph::linear_attention::GdnBwdProblem& built, const opgraph::DeclaredLayout& layout,
    const opgraph::VariantPack& v) {
  opgraph::VariantPack n;
  OPGRAPH_CHECK(opgraph::VariantPack::normalize(v, layout, n));
  EXPECT_TRUE(n.has_overrides());
  return opgraph::linear_attention::gdn_bwd_overridden_problem(built, n, layout);
}

// The names of every plan `g` lists under `mode` on a device-less sm_90a target (132 multiprocessors), in order
// (empty, with a failure recorded, where planning fails).
inline std::vector<std::string> plan_names(opgraph::OpGraph&& g, opgraph::HeurMode mode = opgraph::HeurMode::A) {
  std::vector<std::string> names;
  auto sm90 = opgraph::DeviceProperties::for_arch("sm_90a");
  EXPECT_TRUE(sm90.is_good());
  if (sm90.is_bad()) return names;
  opgraph::Graph graph(std::move(g));
  graph.set_device_properties(*sm90);
  const opgraph::Status made = graph.create_execution_plans({mode});
  EXPECT_TRUE(made.is_good()) << made.to_string();
  if (made.is_bad()) return names;
  for (std::int64_t i = 0; i < graph.get_execution_plan_count(); ++i) {
    auto n = graph.get_plan_name_at_index(i);
    EXPECT_TRUE(n.is_good());
    if (n.is_bad()) return {};
    names.push_back(*n);
  }
  return names;
}

// The names of the first two plans `g` lists under heuristics mode A (empty where planning fails or lists fewer,
// with a failure recorded).
inline std::vector<std::string> first_two_plans(opgraph::OpGraph&& g) {
  std::vector<std::string> names = plan_names(std::move(g));
  EXPECT_GE(names.size(), 2u);
  if (names.size() < 2) return {};
  names.resize(2);
  return names;
}

// `g` planned under `mode` lists `want` as its plans of ours (linear_attention), in that order, the first of them
// first.
inline void expect_our_plans(opgraph::OpGraph&& g, opgraph::HeurMode mode, const std::vector<std::string>& want) {
  const std::vector<std::string> all = plan_names(std::move(g), mode);
  std::vector<std::string> ours;
  for (const auto& n : all)
    if (n.rfind("linear_attention", 0) == 0) ours.push_back(n);
  EXPECT_TRUE(!all.empty() && all[0].rfind("linear_attention", 0) == 0);
  EXPECT_EQ(ours, want);
}
inline const char* const kPlanUnsplit = "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=0]";
inline const char* const kPlanFusedRecompute = "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=2]";
inline const char* const kPlanFusedBoth = "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=3]";

}  // namespace la_bwd_test
