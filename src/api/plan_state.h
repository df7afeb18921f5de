// api/plan_state.h — what planning hangs on a Graph: facts, engines, graph.plans.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "exec/declared_layout.h"
#include "opgraph/graph.h"
#include "plan/manifest.h"

namespace opgraph {

// The built plan execute() may run, published once building finishes. Execute
// reads it without the lock (one acquire load); building and the deselect_*
// filters write it under GraphPlanState::mu. A deselected plan's object is
// retired, not destroyed, so a call already running on it finishes safely.
struct LivePlan {
  std::atomic<const CompiledPlan*> ptr{nullptr};
  LivePlan() = default;
  LivePlan(LivePlan&& o) noexcept : ptr(o.ptr.load(std::memory_order_relaxed)) {}
  LivePlan& operator=(LivePlan&& o) noexcept {
    ptr.store(o.ptr.load(std::memory_order_relaxed), std::memory_order_relaxed);
    return *this;
  }
  const CompiledPlan* get() const noexcept { return ptr.load(std::memory_order_acquire); }
};

// One entry of graph.plans.
struct PlanRecord {
  PlanConfig config;
  const Engine* engine = nullptr;
  std::string name;                        // "engine[KNOB=v, ...]"
  std::unique_ptr<CompiledPlan> compiled;  // the build cache (owner; under mu)
  LivePlan live;                           // == compiled.get() once published
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
  std::int64_t host_plan = -1;   // the first plan whose engine needs no device; set when the list is made
  bool host_fallback = false;    // Graph::set_host_fallback: heuristics may take the host plan on a device target
  bool plan_cache = false;       // Graph::set_plan_cache: reuse a ranked list of the layout class (api/plan_cache.h)
  bool dynamic_shapes = false;   // Graph::set_dynamic_shapes: engines plan for execute-time shape overrides
  std::atomic<std::int64_t> candidate{-1};          // the built plan execute() runs; -1: none
  std::int64_t workspace_limit = -1;                // -1: none
  std::vector<std::unique_ptr<CompiledPlan>> retired;  // deselected plans, kept alive (see LivePlan)
  mutable std::mutex mu;  // guards building, filters and selection; execute() takes no lock

  // Under mu: publish a freshly built plan / withdraw one (kept alive in `retired`).
  void publish(PlanRecord& p, std::unique_ptr<CompiledPlan> built) {
    p.compiled = std::move(built);
    p.live.ptr.store(p.compiled.get(), std::memory_order_release);
  }
  void withdraw(PlanRecord& p) {
    p.live.ptr.store(nullptr, std::memory_order_release);
    if (p.compiled) retired.push_back(std::move(p.compiled));
  }
  bool has_candidate() const { return candidate.load(std::memory_order_acquire) >= 0; }
  // Under mu, after a filter: execute() stops running a withdrawn plan.
  void drop_withdrawn_candidate() {
    std::int64_t c = candidate.load(std::memory_order_relaxed);
    if (c >= 0 && !plans[static_cast<std::size_t>(c)].compiled) candidate.store(-1, std::memory_order_release);
  }

  PlanContext ctx() const { return PlanContext{facts.get(), layout.get(), dynamic_shapes}; }

  // Records host_plan once the plan list is made (graph.cpp's two planning calls).
  void find_host_plan() {
    host_plan = -1;
    for (std::size_t i = 0; i < plans.size() && host_plan < 0; ++i)
      if (!plans[i].engine->capabilities().needs_device) host_plan = static_cast<std::int64_t>(i);
  }
  // Whether the heuristics (check_support, an unpinned build_plans) may take plan i:
  // on a device target, a host engine's plan from the heuristics only under the host
  // fallback policy (graph.h); a replayed plan (no heuristic mode) was asked for.
  bool heuristics_may_take(std::size_t i) const {
    const PlanRecord& p = plans[i];
    return host_fallback || !target.has_device() || p.engine->capabilities().needs_device || !p.config.mode;
  }
};

// The manifest planning uses now (a test's override, else the shipped table).
const plan::Manifest& current_manifest();
// "graph 'g' has no plans: call create_execution_plans first" until planning is done.
Status check_planned(const GraphPlanState& st, const OpGraph& g);
// "plan 3 (name) is not built: call build_plan_at_index first".
Status not_built(const PlanRecord& p, std::int64_t index);
// "plan index 7 is out of range: graph 'g' has 3 plan(s)" / planning not done.
Status check_index(const GraphPlanState& st, const OpGraph& g, std::int64_t index);

}  // namespace opgraph
