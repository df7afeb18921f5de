// api/plan_choices.h — the plan-choice file as planning and autotuning use it
// (the file itself: runtime/plan_choice.h; the user's view: docs/autotune.md).
#pragma once

#include "api/plan_state.h"
#include "runtime/plan_choice.h"

namespace opgraph {

// The plan-choice store of a planning target: location and switch from the
// environment, read now; the target's device fingerprint.
runtime::PlanChoiceStore plan_choice_store(const PlanTarget& target);

// The key the plan-choice file records a graph's choice under: OpGraph::key(),
// and for a graph planned for execute-time shape overrides
// (Graph::set_dynamic_shapes) that key mixed with a fixed tag, so a dynamic
// graph's choice (among the plans of its dynamic-shape heuristics) is never
// the static graph's, nor the other way round. Errors: OpGraph::key()'s.
Result<std::uint64_t> plan_choice_key(OpGraph& g, const GraphPlanState& st);

// After ranking: when the plan-choice file holds a choice for this graph (its
// key) on this target, and that (engine_id, public knobs) is in st.plans, it is
// moved to position 0 (the others keep their order) and a planning note says so.
// A choice not in the list, a doubtful record, or no record leaves the list as
// it is (a note names a refused or unlisted choice). Never an error. Reads
// nothing (not even the graph key) when the store is off or the target's
// fingerprint folder does not exist.
void apply_recorded_choice(OpGraph& g, GraphPlanState& st);

}  // namespace opgraph
