// plan/heuristics.cpp — the mode blocks, marker expansion and dedup (see heuristics.h).
#include "plan/heuristics.h"

#include <algorithm>

namespace opgraph::plan {
namespace {

// Accepting engines in order, each with its default knobs. A decline drops the
// engine; any other error propagates (an engine bug).
Result<std::vector<RankedPlan>> accepting(const OpGraph& g, const std::vector<const Engine*>& engines,
                                          const PlanContext& ctx, std::vector<std::string>* notes) {
  std::vector<RankedPlan> out;
  for (const Engine* e : engines) {
    Status s = e->check_support(g, ctx);
    if (s.code() == ErrorCode::GRAPH_NOT_SUPPORTED) {
      if (notes) notes->push_back(e->name() + ": " + s.message());
      continue;
    }
    if (s.is_bad())
      return Status(s.code(), "engine " + e->name() + " failed check_support (not a decline): " + s.message());
    out.push_back({PlanConfig{e->id(), e->default_knobs()}, e});
  }
  return out;
}

struct BackendBlock {
  std::vector<RankedPlan> delegate;  // 0 or 1 entry
  std::vector<RankedPlan> entries;
};

Result<BackendBlock> backend_block(const OpGraph& g, BackendProvider* backend, HeurMode mode, const PlanContext& ctx,
                                   std::vector<std::string>* notes) {
  BackendBlock b;
  if (!backend) return b;
  const Engine* eng = &backend->engine();
  if (auto d = backend->delegating_entry(g, ctx)) {
    d->mode.reset();
    b.delegate.push_back({*d, eng});
  }
  if (mode == HeurMode::OPENSOURCE) return b;
  auto r = backend->entries(g, mode, ctx);
  if (r.is_bad()) {
    if (r.status().code() == ErrorCode::GRAPH_NOT_SUPPORTED) {  // the backend declines this graph
      if (notes) notes->push_back(eng->name() + ": " + r.status().message());
      return b;
    }
    return r.status();
  }
  for (auto& c : r.value()) {
    c.mode = mode;
    b.entries.push_back({c, eng});
  }
  return b;
}

// The family heuristics' proposals for `mode` (the caller handles a family without heuristics).
Result<std::vector<RankedPlan>> ours(const RankInputs& in, HeurMode mode, const PlanContext& ctx,
                                     bool& has_marker, std::size_t& marker_at) {
  has_marker = false;
  std::vector<RankedPlan> out;
  auto props = in.family->heuristics(mode, ctx, in.offered);
  if (props.is_bad())
    return Status(props.status().code(),
                  "heuristics of family '" + in.family->name + "' failed: " + props.status().message());
  for (const auto& p : props.value()) {
    if (p.backend_marker) {
      if (!has_marker) marker_at = out.size();
      has_marker = true;
      continue;
    }
    auto it = std::find_if(in.offered.begin(), in.offered.end(),
                           [&](const Engine* e) { return e->id() == p.config.engine_id; });
    if (it == in.offered.end())
      return Status(ErrorCode::INTERNAL_ERROR, "heuristics of family '" + in.family->name + "' proposed engine id " +
                                                   std::to_string(p.config.engine_id) + ", which it was not offered");
    auto k = (*it)->knobs_from_public(p.config.knobs);
    if (k.is_bad())
      return Status(ErrorCode::INTERNAL_ERROR,
                    "heuristics of family '" + in.family->name + "' proposed an incomplete plan: " + k.status().message());
    out.push_back({PlanConfig{p.config.engine_id, std::move(k.value())}, *it});
  }
  return out;
}

}  // namespace

Result<std::vector<RankedPlan>> rank(const OpGraph& g, const RankInputs& in, const std::vector<HeurMode>& modes,
                                     const PlanContext& ctx) {
  if (modes.empty()) return Status(ErrorCode::INVALID_VALUE, "create_execution_plans needs at least one heuristic mode");
  auto uni = accepting(g, in.universal, ctx, in.notes);
  if (uni.is_bad()) return uni.status();
  // Without family heuristics our block is the same in every mode: ask each engine once.
  const bool plain = !in.family || !in.family->heuristics;
  std::vector<RankedPlan> plain_block;
  if (plain) {
    auto acc = accepting(g, in.offered, ctx, in.notes);
    if (acc.is_bad()) return acc.status();
    plain_block = std::move(acc.value());
  }

  std::vector<RankedPlan> all;
  for (HeurMode mode : modes) {
    bool has_marker = false;
    std::size_t marker_at = 0;
    std::vector<RankedPlan> mine;
    if (plain) {
      mine = plain_block;
    } else {
      auto r = ours(in, mode, ctx, has_marker, marker_at);
      if (r.is_bad()) return r.status();
      mine = std::move(r.value());
    }
    auto bb = backend_block(g, in.backend, mode, ctx, in.notes);
    if (bb.is_bad()) return bb.status();
    std::vector<RankedPlan> block;
    auto append = [&block](const std::vector<RankedPlan>& v) { block.insert(block.end(), v.begin(), v.end()); };
    bool universal_first = mode == HeurMode::FALLBACK && !ctx.target().has_device();
    if (universal_first) append(uni.value());
    if (mode == HeurMode::OPENSOURCE) {
      append(mine);
      if (!universal_first) append(uni.value());
      append(bb.value().delegate);
    } else {
      std::size_t at = has_marker ? marker_at : mine.size();
      block.insert(block.end(), mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(at));
      append(bb.value().delegate);
      append(bb.value().entries);
      block.insert(block.end(), mine.begin() + static_cast<std::ptrdiff_t>(at), mine.end());
      if (!universal_first) append(uni.value());
    }
    for (auto& p : block) {
      if (!p.config.mode && p.config.engine_id != kBackendHeuristicEngineId) p.config.mode = mode;
      all.push_back(std::move(p));
    }
  }
  // Dedup by (engine_id, knobs); first position wins.
  std::vector<RankedPlan> out;
  for (auto& p : all) {
    bool seen = std::any_of(out.begin(), out.end(), [&](const RankedPlan& q) { return q.config.same_plan(p.config); });
    if (!seen) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace opgraph::plan
