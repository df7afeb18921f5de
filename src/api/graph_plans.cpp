// api/graph_plans.cpp — the at-index API, filters, building and executing.
#include <algorithm>

#include "api/plan_state.h"
#include "opgraph/graph.h"

namespace opgraph {
namespace {

bool is_decline(const Status& s) { return s.code() == ErrorCode::GRAPH_NOT_SUPPORTED; }

// Why the heuristics pass over plan i (GraphPlanState::heuristics_may_take): the
// host fallback policy of graph.h.
std::string host_plan_withheld(const GraphPlanState& st, std::size_t i) {
  return st.plans[i].name + " runs host buffers only and the graph is planned for a device (sm_" +
         std::to_string(st.target.device->sm_version()) +
         "): set_host_fallback(true) or select_plan(host_plan_index()) to take the host reference";
}

// Builds plan i (cached). A decline, or a deselection, is returned as
// GRAPH_NOT_SUPPORTED and recorded; anything else is a bug and propagates.
Status build_one(GraphPlanState& st, const OpGraph& g, std::size_t i) {
  PlanRecord& p = st.plans[i];
  if (p.compiled) return Status::ok();
  if (!p.deselected.empty()) return {ErrorCode::GRAPH_NOT_SUPPORTED, p.name + " is deselected: " + p.deselected};
  PlanContext ctx = st.ctx();
  Status s = p.engine->check_support(g, ctx);
  if (s.is_good()) {
    auto built = p.engine->build_plan(g, p.config, ctx);
    if (built.is_good()) {
      std::int64_t ws = built.value()->workspace_size();
      if (st.workspace_limit >= 0 && ws > st.workspace_limit) {
        p.deselected = "needs " + std::to_string(ws) + " workspace bytes, above the limit of " +
                       std::to_string(st.workspace_limit);
        return {ErrorCode::GRAPH_NOT_SUPPORTED, p.name + " is deselected: " + p.deselected};
      }
      st.publish(p, std::move(built.value()));
      p.last = Status::ok();
      return Status::ok();
    }
    s = built.status();
  }
  if (is_decline(s)) {
    p.last = s;
    return s;
  }
  return {s.code(), p.name + " failed (not a decline): " + s.message()};
}

}  // namespace

std::int64_t Graph::get_execution_plan_count() const { return static_cast<std::int64_t>(st_->plans.size()); }

Result<std::string> Graph::get_plan_name_at_index(std::int64_t index) const {
  OPGRAPH_CHECK(check_index(*st_, *this, index));
  return st_->plans[static_cast<std::size_t>(index)].name;
}

Result<PlanConfig> Graph::get_engine_and_knobs_at_index(std::int64_t index) const {
  OPGRAPH_CHECK(check_index(*st_, *this, index));
  const PlanRecord& p = st_->plans[static_cast<std::size_t>(index)];
  PlanConfig c = p.config;
  c.knobs = p.engine->knobs_to_public(p.config.knobs);
  return c;
}

Result<std::string> Graph::get_plan_status_at_index(std::int64_t index) const {
  OPGRAPH_CHECK(check_index(*st_, *this, index));
  const PlanRecord& p = st_->plans[static_cast<std::size_t>(index)];
  if (!p.deselected.empty()) return "deselected: " + p.deselected;
  if (p.last.is_bad()) return "declined: " + p.last.message();
  return std::string();
}

Status Graph::build_plan_at_index(std::int64_t index) {
  OPGRAPH_CHECK(check_index(*st_, *this, index));
  std::lock_guard<std::mutex> lock(st_->mu);
  return build_one(*st_, *this, static_cast<std::size_t>(index));
}

Result<std::int64_t> Graph::get_workspace_size_plan_at_index(std::int64_t index) const {
  OPGRAPH_CHECK(check_index(*st_, *this, index));
  const PlanRecord& p = st_->plans[static_cast<std::size_t>(index)];
  const CompiledPlan* c = p.live.get();
  if (!c) return not_built(p, index);
  return c->workspace_size();
}

Status Graph::check_support() {
  OPGRAPH_CHECK(check_planned(*st_, *this));
  std::string why;
  for (std::size_t i = 0; i < st_->plans.size(); ++i) {
    PlanRecord& p = st_->plans[i];
    if (!p.deselected.empty()) continue;
    if (!st_->heuristics_may_take(i) && !(st_->pinned && st_->selected == static_cast<std::int64_t>(i))) {
      why += (why.empty() ? "" : "; ") + host_plan_withheld(*st_, i);
      continue;
    }
    Status s = p.engine->check_support(*this, st_->ctx());
    if (s.is_good()) return s;
    if (!is_decline(s)) return {s.code(), p.name + " failed check_support (not a decline): " + s.message()};
    p.last = s;
    why += (why.empty() ? "" : "; ") + s.message();
  }
  return {ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED, "No execution plans support the graph" +
                                                               (why.empty() ? std::string() : ": " + why)};
}

Status Graph::build_plans(BuildPlanPolicy policy) {
  OPGRAPH_CHECK(check_planned(*st_, *this));
  std::lock_guard<std::mutex> lock(st_->mu);
  GraphPlanState& st = *st_;
  const std::size_t n = st.plans.size();
  if (st.pinned) {
    auto i = static_cast<std::size_t>(st.selected);
    Status s = build_one(st, *this, i);
    if (is_decline(s))
      return {ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED,
              "pinned plan " + std::to_string(i) + " declined (select_plan pins; nothing else runs): " + s.message()};
    OPGRAPH_CHECK(s);
    st.candidate.store(st.selected, std::memory_order_release);
    if (policy == BuildPlanPolicy::HEURISTICS_CHOICE) return Status::ok();
  }
  std::string why;
  for (std::size_t i = static_cast<std::size_t>(st.selected); i < n; ++i) {
    if (!st.plans[i].deselected.empty() && !st.plans[i].compiled) {
      why += (why.empty() ? "" : "; ") + st.plans[i].name + " deselected";
      continue;
    }
    if (!st.heuristics_may_take(i)) {
      why += (why.empty() ? "" : "; ") + host_plan_withheld(st, i);
      continue;
    }
    Status s = build_one(st, *this, i);
    if (is_decline(s)) {
      why += (why.empty() ? "" : "; ") + s.message();
      continue;
    }
    OPGRAPH_CHECK(s);
    if (!st.has_candidate()) st.candidate.store(static_cast<std::int64_t>(i), std::memory_order_release);
    if (policy == BuildPlanPolicy::HEURISTICS_CHOICE) return Status::ok();
  }
  if (st.has_candidate()) return Status::ok();
  return {ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED,
          "No execution plans support the graph" + (why.empty() ? std::string() : ": " + why)};
}

Status Graph::select_plan(std::int64_t index) {
  OPGRAPH_CHECK(check_index(*st_, *this, index));
  std::lock_guard<std::mutex> lock(st_->mu);
  st_->selected = index;
  st_->pinned = true;
  st_->candidate.store(st_->plans[static_cast<std::size_t>(index)].compiled ? index : -1, std::memory_order_release);
  return Status::ok();
}

Result<std::int64_t> Graph::get_selected_plan_index() const {
  std::int64_t c = st_->candidate.load(std::memory_order_acquire);
  if (c < 0)
    return Status(ErrorCode::INVALID_VALUE, "graph '" + context().name + "' has no built plan: call build_plans first");
  return c;
}

Result<std::int64_t> Graph::get_workspace_size() const {
  auto i = get_selected_plan_index();
  if (i.is_bad()) return i.status();
  return get_workspace_size_plan_at_index(i.value());
}

Result<std::int64_t> Graph::get_workspace_size_plan_at_index(std::int64_t index, const VariantPack& pack) const {
  OPGRAPH_CHECK(check_index(*st_, *this, index));
  const PlanRecord& p = st_->plans[static_cast<std::size_t>(index)];
  const CompiledPlan* c = p.live.get();
  if (!c) return not_built(p, index);
  if (st_->layout->prepared(pack)) return c->workspace_size_for(pack);
  VariantPack normalized;
  OPGRAPH_CHECK(VariantPack::normalize(pack, *st_->layout, normalized));
  return c->workspace_size_for(normalized);
}

Result<std::int64_t> Graph::get_workspace_size(const VariantPack& pack) const {
  auto i = get_selected_plan_index();
  if (i.is_bad()) return i.status();
  return get_workspace_size_plan_at_index(i.value(), pack);
}

namespace {

// The pointer array a call normalises into: one per thread, reused, so its slot
// vector keeps its capacity and a steady-state execute allocates nothing. Each
// thread has its own, so concurrent executes never share one. A nested execute on
// the same thread (a plan whose execute runs another graph) finds it in use and
// normalises into a pack of its own instead.
struct ScratchPack {
  VariantPack pack;
  bool busy = false;
};

class ScratchLease {
 public:
  explicit ScratchLease(ScratchPack& s) : s_(s.busy ? nullptr : &s) {
    if (s_) s_->busy = true;
  }
  ~ScratchLease() {
    if (s_) s_->busy = false;
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  // The thread's scratch pack, or `own` when an outer call on this thread holds it.
  VariantPack& pack(VariantPack& own) { return s_ ? s_->pack : own; }

 private:
  ScratchPack* s_;
};

// Runs `plan` (the record's published pointer, read ONCE by the caller) on the
// caller's buffers, normalised once into this call's own pointer array.
Status run_plan(const GraphPlanState& st, const PlanRecord& p, const CompiledPlan& plan, const VariantPack& pack,
                Workspace workspace, const Handle* handle) {
  thread_local ScratchPack scratch;
  ScratchLease lease(scratch);
  VariantPack nested;  // used only by a nested call (empty: no allocation)
  const VariantPack* use = &pack;
  // A prepared pack is recognised by its layout's generation, never by the layout's
  // address (a destroyed graph's layout address may be reused by a later graph's).
  if (!st.layout->prepared(pack)) {
    if (pack.normalized())
      return {ErrorCode::INVALID_VARIANT_PACK,
              "variant pack: prepared (prepare_variant_pack) for another graph, one since destroyed or replaced; "
              "its layout generation " + std::to_string(pack.layout_generation()) + " is not this graph's " +
                  std::to_string(st.layout->generation()) + " (prepare it again on this graph)"};
    VariantPack& operands = lease.pack(nested);
    OPGRAPH_CHECK(VariantPack::normalize(pack, *st.layout, operands));
    use = &operands;
  }
  // With overrides, the call's extents decide (an engine whose scratch follows them),
  // asked with the call's stream (an engine may finalise work for the extents).
  if (use->has_overrides()) {
    auto ctx = ExecutionContext::make(handle, workspace);
    if (ctx.is_bad()) return ctx.status();
    auto w = plan.workspace_size_for_call(*use, ctx.value());
    if (w.is_bad()) return w.status();
    if (workspace.bytes < w.value())
      return {ErrorCode::INVALID_VALUE, "workspace too small for " + p.name + ": needs " + std::to_string(w.value()) +
                                            " bytes, got " + std::to_string(workspace.bytes)};
    return plan.execute(*use, ctx.value());
  }
  const std::int64_t need = plan.workspace_size();
  if (workspace.bytes < need)
    return {ErrorCode::INVALID_VALUE, "workspace too small for " + p.name + ": needs " + std::to_string(need) +
                                          " bytes, got " + std::to_string(workspace.bytes)};
  auto ctx = ExecutionContext::make(handle, workspace);
  if (ctx.is_bad()) return ctx.status();
  return plan.execute(*use, ctx.value());
}

}  // namespace

Status Graph::execute_plan_at_index(const VariantPack& pack, Workspace workspace, std::int64_t index,
                                    const Handle* handle) const {
  OPGRAPH_CHECK(check_index(*st_, *this, index));
  const PlanRecord& p = st_->plans[static_cast<std::size_t>(index)];
  const CompiledPlan* plan = p.live.get();  // no lock: see LivePlan
  if (!plan) return not_built(p, index);
  return run_plan(*st_, p, *plan, pack, workspace, handle);
}

Status Graph::execute(const VariantPack& pack, Workspace workspace, const Handle* handle) const {
  auto i = get_selected_plan_index();
  if (i.is_bad()) return i.status();
  const PlanRecord& p = st_->plans[static_cast<std::size_t>(i.value())];
  // A filter may withdraw the selected plan between the two loads: that is the
  // same outcome as finding no selected plan, and reads the same.
  const CompiledPlan* plan = p.live.get();
  if (!plan)
    return {ErrorCode::INVALID_VALUE, "graph '" + context().name + "' has no built plan: call build_plans first"};
  return run_plan(*st_, p, *plan, pack, workspace, handle);
}

Status Graph::prepare_variant_pack(const VariantPack& caller, VariantPack& out) const {
  OPGRAPH_CHECK(check_planned(*st_, *this));
  // Into a pack of its own: `caller` may be `out` (normalize clears its output first),
  // and a refused pack, half filled, must not reach `out` (execute hands a prepared pack
  // on unchecked).
  VariantPack made;
  Status s = VariantPack::normalize(caller, *st_->layout, made);
  out = s.is_good() ? std::move(made) : VariantPack();
  return s;
}

Status Graph::deselect_workspace_greater_than(std::int64_t bytes) {
  OPGRAPH_CHECK(check_planned(*st_, *this));
  if (bytes < 0) return {ErrorCode::INVALID_VALUE, "workspace limit must be >= 0 bytes, got " + std::to_string(bytes)};
  std::lock_guard<std::mutex> lock(st_->mu);
  st_->workspace_limit = bytes;
  for (auto& p : st_->plans) {
    if (!p.compiled || p.compiled->workspace_size() <= bytes) continue;
    p.deselected = "needs " + std::to_string(p.compiled->workspace_size()) + " workspace bytes, above the limit of " +
                   std::to_string(bytes);
    st_->withdraw(p);
  }
  st_->drop_withdrawn_candidate();
  return Status::ok();
}

Status Graph::deselect_engines(const std::vector<std::string>& substrings) {
  OPGRAPH_CHECK(check_planned(*st_, *this));
  std::lock_guard<std::mutex> lock(st_->mu);
  for (auto& p : st_->plans) {
    std::string label = p.engine->label(p.config);
    for (const auto& sub : substrings) {
      if (sub.empty() || label.find(sub) == std::string::npos) continue;
      p.deselected = "engine '" + label + "' matches the deny list entry '" + sub + "'";
      st_->withdraw(p);
      break;
    }
  }
  st_->drop_withdrawn_candidate();
  return Status::ok();
}

}  // namespace opgraph
