// plan/backend_provider.h — how the cuDNN backend's plans enter the ranking.
//
// The backend's engine sets are never enumerated statically: they are
// discovered per graph at planning, one heuristic query per mode (never
// OPENSOURCE), and the planner tags every entry with the mode that produced it.
// The cuDNN family implements this (engines/cudnn/cudnn_engine.h,
// make_cudnn_provider, installed by the default manifest). The backend
// participates in the ranking but is never a hard dependency: without a device
// or a loadable libcudnn it declines every graph, and a manifest with no
// provider (as a test may install) behaves as a backend that offers nothing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "opgraph/engine.h"

namespace opgraph::plan {

class BackendProvider {
 public:
  virtual ~BackendProvider() = default;
  // The engine that builds and executes every backend id ([0, 10000)) and the
  // delegating entry, when the provider offers one. Lives as long as the provider.
  virtual const Engine& engine() const = 0;
  // The backend's plans for `mode` (never OPENSOURCE), each tagged with `mode`
  // and its backend_index. A graph the backend cannot lower, or a backend that is
  // not installed, gives an empty list or GRAPH_NOT_SUPPORTED; any other error is a bug.
  virtual Result<std::vector<PlanConfig>> entries(const OpGraph& graph, HeurMode mode, const PlanContext& ctx) = 0;
  // The untagged delegating entry (kBackendHeuristicEngineId), if the backend
  // has candidates it picks among itself; asked in every mode. The default (and
  // the cuDNN provider) offers none.
  virtual std::optional<PlanConfig> delegating_entry(const OpGraph& graph, const PlanContext& ctx) {
    (void)graph;
    (void)ctx;
    return std::nullopt;
  }
};

}  // namespace opgraph::plan
