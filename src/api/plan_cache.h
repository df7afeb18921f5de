// api/plan_cache.h — the process-wide plan cache by layout class: a new graph
// whose structure equals a planned one's except for extents gets that graph's
// ranked plan list without ranking again (docs/autotune.md, "A new shape of a
// known layout class").
//
// The layout class of a validated graph is its canonical JSON (OpGraph::serialize)
// with, in every tensor,
//   - each extent above 1 replaced by "*" (an extent of 1 stays: it decides
//     broadcasting, so [1, N] and [M, N] are different classes);
//   - the strides replaced by the axis order they pack (each axis of extent
//     above 1 gets its position, outermost first; an axis of extent 1 gets "-")
//     when they are the packed strides of the extents in some axis order (the
//     innermost such axis has stride 1, each outer one the product of the inner
//     extents); otherwise the tensor's extents and strides stay as written (a
//     padded or broadcast (stride 0) layout pins its extents).
// Everything else stays: names, uids, data types, attributes (a reshape's or a
// slice's numbers included), pass-by-value values, virtual flags, alignment.
// Two graphs are of one class when those texts are equal. The key is not computed
// from the text: a 128-bit hash of the same content is streamed from the graph's
// tensors, nodes and attributes (ir/graph_hash.h), and the cache is keyed by all
// 128 bits (layout_class_text stays the definition, for tests and diagnostics).
//
// The cache maps (layout class, device fingerprint (runtime/plan_choice.h),
// heuristic modes, the manifest in use and OPGRAPH_ENABLE_ENGINES) to the list
// create_execution_plans ranked for the first graph of the class: each plan's
// (engine_id, knobs, mode, notes); a backend entry is kept as a replay keeps
// it (backend_index -1). Thread-safe. Entries live for the process (about a
// hundred bytes per plan); clear_plan_cache() empties it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph_hash.h"
#include "opgraph/engine.h"
#include "opgraph/facts.h"
#include "opgraph/knobs.h"
#include "opgraph/op_graph.h"

namespace opgraph::plan_cache {

// The class as text (the definition; for diagnostics and tests: it serialises the
// graph), the class's 128-bit key (no text built) and the key folded to 64 bits
// (layout_class_key).
Result<std::string> layout_class_text(OpGraph& g);
Result<graph_hash::Hash128> layout_class128(OpGraph& g);
Result<std::uint64_t> layout_class(OpGraph& g);

struct Entry {
  std::vector<PlanConfig> plans;    // in rank order, before any recorded choice is applied
  std::vector<std::string> names;   // each plan's name (label and public knobs), in the same order
  std::vector<std::string> notes;   // the planning notes of the graph that ranked it
};

// The cache key of a graph planned for `target` with `modes` (layout class
// included), and planned for execute-time shape overrides or not
// (Graph::set_dynamic_shapes: a dynamic graph's list is another list).
// Errors: the graph's serialisation errors.
Result<std::string> key_for(OpGraph& g, const PlanTarget& target, const std::vector<HeurMode>& modes,
                            bool dynamic_shapes = false);

std::optional<Entry> find(const std::string& key);
void store(const std::string& key, Entry entry);

}  // namespace opgraph::plan_cache
