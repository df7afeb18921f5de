// opgraph/facts.h — one description of a graph, shared by the ranking and the engines.
//
// A family may name an Analyzer. Planning freezes the graph, then attaches a
// FactsCache to it; the ranking (which resolves the analyzer from the manifest)
// and an engine (which passes the analyzer function it already knows) reach ONE
// record, keyed by the analyzer function itself — no name to keep in sync.
//
// Rules (see the seed, "Facts"):
//  * attached after the freeze, so facts never describe a graph that can change;
//  * memoised per analyzer: each analyzer runs at most once per graph;
//  * facts DESCRIBE and never reject (an analyzer has no error path): "has a
//    bias" is a fact; an engine's capabilities decide whether that is a mismatch;
//  * framework-neutral vocabulary: opgraph's DataType and DeviceProperties only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "opgraph/device_properties.h"

namespace opgraph {

class OpGraph;

// What planning targets: the device, or none (host-only: the reference engine).
struct PlanTarget {
  std::optional<DeviceProperties> device;
  bool has_device() const noexcept { return device.has_value(); }
};

// A family's record derives from this; engines read it back with FactsCache::get<T>.
struct FactsRecord {
  virtual ~FactsRecord() = default;
};

// Pure: reads the frozen graph and the target, returns a description (never null).
using Analyzer = std::shared_ptr<const FactsRecord> (*)(const OpGraph& graph, const PlanTarget& target);

// The per-graph memo. Thread-safe; records live as long as the cache.
class FactsCache {
 public:
  // Precondition: `graph` is frozen and outlives the cache.
  FactsCache(const OpGraph& graph, PlanTarget target) : graph_(&graph), target_(std::move(target)) {}

  const PlanTarget& target() const noexcept { return target_; }
  const OpGraph& graph() const noexcept { return *graph_; }

  // The analyzer's record, running it on first use only.
  const FactsRecord& get(Analyzer analyzer) const;
  template <class T>
  const T& get_as(Analyzer analyzer) const {
    return dynamic_cast<const T&>(get(analyzer));
  }
  // How many analyzer runs this cache made (a test observable: one per analyzer).
  std::int64_t analyses() const;

 private:
  const OpGraph* graph_;
  PlanTarget target_;
  mutable std::mutex mu_;
  mutable std::map<Analyzer, std::shared_ptr<const FactsRecord>> records_;
  mutable std::int64_t runs_ = 0;
};

}  // namespace opgraph
