// plan/heuristics.h — assembling the ONE ranked plan list.
//
// For each requested mode, in order, a block:
//   A, B      the family hook's proposals for the mode, with its BACKEND marker
//             expanded into the backend's block for the mode (the delegating
//             entry, then the backend's entries tagged with the mode); no marker:
//             ours first, then the backend. Then the universal engines (the CPU
//             reference) — ranked last.
//   FALLBACK  as A, with the backend's FALLBACK block; the universal engines go
//             FIRST when the target has no GPU (they are what runs there), last otherwise.
//   OPENSOURCE the hook's proposals for the mode without the backend (markers
//             dropped), the universal engines, then only the backend's delegating entry.
// A family without a hook gets its accepting engines (check_support OK) in slot
// order, each with its default knobs, then the BACKEND marker.
// The blocks are concatenated and deduplicated by (engine_id, knobs): first
// position wins. The result is graph.plans, position for position.
#pragma once

#include <vector>

#include "plan/manifest.h"

namespace opgraph::plan {

struct RankedPlan {
  PlanConfig config;             // carries the mode of its first position
  const Engine* engine = nullptr;
};

struct RankInputs {
  const Family* family = nullptr;           // the graph's family (nullptr: none)
  std::vector<const Engine*> offered;       // the family's enabled engines without a capability mismatch
  std::vector<const Engine*> universal;     // the universal row's, same filter
  BackendProvider* backend = nullptr;       // nullptr: offers nothing
  std::vector<std::string>* notes = nullptr; // when set, gets "engine: reason" for each decline
};

// Errors: INVALID_VALUE for an empty mode list; a hook's error or an engine's
// non-decline error propagates; a hook proposing an engine it was not offered,
// or knobs outside the engine's domains, is INTERNAL_ERROR naming the family.
Result<std::vector<RankedPlan>> rank(const OpGraph& graph, const RankInputs& in, const std::vector<HeurMode>& modes,
                                     const PlanContext& ctx);

}  // namespace opgraph::plan
