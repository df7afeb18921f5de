// api/plan_state.h — what planning hangs on a Graph: facts, engines, graph.plans.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "exec/declared_layout.h"
#include "opgraph/graph.h"
#include "plan/manifest.h"

namespace opgraph {

// One entry of graph.plans.
struct PlanRecord {
  PlanConfig config;
  const Engine* engine = nullptr;
  std::string name;                        // "engine[KNOB=v, ...]"
  std::unique_ptr<CompiledPlan> compiled;  // the build cache
  Status last;                             // the last decline/failure of check_support or build
  std::string deselected;                  // non-empty: the filter that removed it
};

struct GraphPlanState {
  PlanTarget target;
  bool planned = false;
  std::string family;
  std::unique_ptr<FactsCache> facts;
  std::unique_ptr<DeclaredLayout> layout;           // operand order + declared geometry, once per graph
  std::vector<std::unique_ptr<Engine>> engines;     // instances this graph owns
  std::shared_ptr<plan::BackendProvider> backend;   // kept alive for its engine
  std::vector<PlanRecord> plans;
  std::vector<std::string> notes;
  std::int64_t selected = 0;
  bool pinned = false;
  std::optional<std::int64_t> candidate;            // the built plan execute() runs
  std::int64_t workspace_limit = -1;                // -1: none
  mutable std::mutex mu;                            // guards building

  PlanContext ctx() const { return PlanContext{facts.get(), layout.get()}; }
};

// The manifest planning uses now (a test's override, else the shipped table).
const plan::Manifest& current_manifest();
// "plan index 7 is out of range: graph 'g' has 3 plan(s)" / planning not done.
Status check_index(const GraphPlanState& st, const OpGraph& g, std::int64_t index);

}  // namespace opgraph
