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

// The names of the first two plans `g` lists under heuristics mode A on a device-less sm_90a target (empty where
// planning fails or lists fewer, with a failure recorded).
inline std::vector<std::string> first_two_plans(opgraph::OpGraph&& g) {
  auto sm90 = opgraph::DeviceProperties::for_arch("sm_90a");
  EXPECT_TRUE(sm90.is_good());
  if (sm90.is_bad()) return {};
  opgraph::Graph graph(std::move(g));
  graph.set_device_properties(*sm90);
  const opgraph::Status made = graph.create_execution_plans({opgraph::HeurMode::A});
  EXPECT_TRUE(made.is_good()) << made.to_string();
  auto n0 = graph.get_plan_name_at_index(0), n1 = graph.get_plan_name_at_index(1);
  EXPECT_TRUE(n0.is_good() && n1.is_good());
  if (made.is_bad() || n0.is_bad() || n1.is_bad()) return {};
  return {*n0, *n1};
}

// The names of the plans of ours (linear_attention) `g` lists under `mode` on a device-less sm_90a target (132
// multiprocessors), in order, and whether one of ours is first (empty, with a failure recorded, where planning fails).
struct OurPlans {
  std::vector<std::string> names;
  bool ours_first = false;
};
inline OurPlans plans_of_ours(opgraph::OpGraph&& g, opgraph::HeurMode mode = opgraph::HeurMode::A) {
  OurPlans out;
  auto sm90 = opgraph::DeviceProperties::for_arch("sm_90a");
  EXPECT_TRUE(sm90.is_good());
  if (sm90.is_bad()) return out;
  opgraph::Graph graph(std::move(g));
  graph.set_device_properties(*sm90);
  const opgraph::Status made = graph.create_execution_plans({mode});
  EXPECT_TRUE(made.is_good()) << made.to_string();
  if (made.is_bad()) return out;
  for (std::int64_t i = 0; i < graph.get_execution_plan_count(); ++i) {
    auto n = graph.get_plan_name_at_index(i);
    EXPECT_TRUE(n.is_good());
    if (n.is_bad() || n->rfind("linear_attention", 0) != 0) continue;
    if (i == 0) out.ours_first = true;
    out.names.push_back(*n);
  }
  return out;
}

// `g` planned under `mode` on a device-less sm_90a target lists `want` as its plans of ours, in that order, the
// first of them first.
inline void expect_our_plans(opgraph::OpGraph&& g, opgraph::HeurMode mode, const std::vector<std::string>& want) {
  const OurPlans got = plans_of_ours(std::move(g), mode);
  EXPECT_TRUE(got.ours_first);
  EXPECT_EQ(got.names, want);
}
inline const char* const kPlanUnsplit = "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=0]";
inline const char* const kPlanFusedRecompute = "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=2]";
inline const char* const kPlanFusedBoth = "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=3]";

}  // namespace la_bwd_test
