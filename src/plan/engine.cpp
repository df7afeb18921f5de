// plan/engine.cpp — the engine interface's default behaviour and the facts memo.
#include "opgraph/engine.h"

#include <algorithm>

#include "opgraph/op_graph.h"

namespace opgraph {

std::optional<std::string> Capabilities::arch_mismatch(const PlanTarget& target) const {
  if (!needs_device) return std::nullopt;
  if (!target.has_device()) return std::string("needs a GPU; the planning target has none");
  int sm = target.device->sm_version();
  if (sm < sm_lo || sm > sm_hi)
    return "serves sm" + std::to_string(sm_lo) + ".." + (sm_hi == INT_MAX ? std::string("") : "sm" + std::to_string(sm_hi)) +
           "; the target is sm" + std::to_string(sm);
  return std::nullopt;
}

Result<Knobs> Engine::knobs_from_public(const Knobs& knobs) const {
  const auto& domains = capabilities().knobs;
  for (const auto& kv : knobs) {
    const KnobType type = kv.first;  // named, not a structured binding: clang 14 cannot capture those
    const std::int64_t value = kv.second;
    auto d = std::find_if(domains.begin(), domains.end(), [&](const KnobDomain& k) { return k.type == type; });
    if (d == domains.end())
      return Status(ErrorCode::INVALID_VALUE, "engine " + name() + " has no knob " + to_string(type));
    if (std::find(d->values.begin(), d->values.end(), value) == d->values.end())
      return Status(ErrorCode::INVALID_VALUE, "engine " + name() + ": " + to_string(type) + "=" + std::to_string(value) +
                                                  " is outside its domain");
  }
  for (const auto& d : domains)
    if (!knobs.count(d.type))
      return Status(ErrorCode::INVALID_VALUE,
                    "engine " + name() + ": knob " + to_string(d.type) + " is missing (a plan names every axis)");
  return knobs;
}

Knobs Engine::default_knobs() const {
  Knobs k;
  for (const auto& d : capabilities().knobs)
    if (!d.values.empty()) k[d.type] = d.values.front();
  return k;
}

const FactsRecord& FactsCache::get(Analyzer analyzer) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = records_.find(analyzer);
  if (it != records_.end()) return *it->second;
  auto rec = analyzer(*graph_, target_);
  if (!rec) rec = std::make_shared<FactsRecord>();  // an analyzer describes; an empty record is a description
  ++runs_;
  return *records_.emplace(analyzer, std::move(rec)).first->second;
}

std::int64_t FactsCache::analyses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_;
}

Result<std::unique_ptr<CompiledPlan>> Engine::load_serialized(const OpGraph& graph, const PlanConfig& config,
                                                              std::string_view blob, const PlanContext& ctx) const {
  (void)graph;
  (void)config;
  (void)blob;
  (void)ctx;
  return Status{ErrorCode::GRAPH_NOT_SUPPORTED, "engine " + name() + " has no serialised plan form"};
}

}  // namespace opgraph
