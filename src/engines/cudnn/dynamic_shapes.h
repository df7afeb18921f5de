// engines/cudnn/dynamic_shapes.h — what a cuDNN plan needs to run an
// execute-time shape override (docs/dynamic_shapes.md, docs/cudnn.md): the
// pieces that need no library, so CI tests them without a GPU.
//
// The plan (cudnn_engine.cpp) serves a call whose pack overrides extents or
// strides with an execution plan finalised for those extents: the graph is
// re-lowered at them (graph_at_extents, then lower() with
// LoweringOptions::dynamic_shapes), the new lowering must differ from the built
// one in tensor extents and strides only (lowering_difference: anything else,
// e.g. a constant computed from an extent, declines), and its operation graph,
// with the built plan's engine config (engine index + knobs) and a kernel cache
// the plan owns, is finalised once per shape and kept in a ShapeCache keyed by
// the overridden slots' extents and strides. A graph that holds attention is
// the exception (override_policy): each of its shapes gets a kernel cache of
// its own.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engines/cudnn/lowering.h"
#include "exec/declared_layout.h"

namespace opgraph::engines::cudnn {

// Why the loaded cuDNN (cudnnGetVersion form; 0: unknown) cannot serve
// overrides: "" when it can (>= kDynamicShapesMinVersion).
std::string dynamic_shapes_unavailable(std::int64_t cudnn_version);

// The lowering options the cuDNN engine plans a graph with (check_support, the
// heuristics query, a plan's notes, its build, and what an override re-lowers
// from): the loaded cuDNN's version, the target's compute capability
// (major * 10 + minor), include_unverified from OPGRAPH_CUDNN_INCLUDE_UNVERIFIED=1
// (read, but it gates nothing in the engine since 2026-12-02), and dynamic_shapes = `planned_dynamic` (PlanContext::dynamic_shapes, set by
// Graph::set_dynamic_shapes): a graph planned dynamic is lowered with cuDNN's
// dynamic-shape flag at every step, a static one exactly as before.
LoweringOptions planning_options(std::int64_t cudnn_version, int sm_version, bool planned_dynamic);

// Whether `lp`'s operation graph record carries the dynamic-shape flag: a plan
// built from it gets the plan's kernel cache at build.
bool lowered_dynamic(const LoweringPlan& lp) noexcept;

// Where `lp` holds attention, "" where it does not: an operation of an SDPA op
// (sdpa, sdpa_backward, their fp8 / mxfp8 forms: native or composite, the
// lowering labels each of their records with the op), named "op 'sdpa' (node
// 'n')"; or the flexible-SDPA composite the Python package writes out of IR ops
// (sdpa(score_mod=fn)): a matmul whose result reaches, through virtual tensors
// only, a pointwise EXP whose result reaches, through virtual tensors only, an
// operand of another matmul (Q K^T -> softmax -> P V; the backward's P^T dO),
// named "the matmul of op 'matmul' (node 'a') through the exp of ... into the
// matmul of ...".
std::string sdpa_pattern(const LoweringPlan& lp);

// How a plan built from the lowering `built` takes execute-time shape
// overrides. Measured on the H200 with cuDNN 9.19 (2026-12-02): an SDPA graph's
// per-shape execution plans that shared the plan's kernel cache, and so could
// reuse a kernel it had compiled for another sequence length, gave wrong O and
// Stats (the first shape finalised, with nothing to reuse, was right; matmuls
// were right at every shape); finalised each with a kernel cache of its own, the
// same overrides (b=3 s=256, b=4 s=64, planned static and planned dynamic) gave
// the right O and Stats. So a lowering that holds attention (sdpa_pattern,
// `attention` names where) has every shape's execution plan finalised with a
// fresh kernel cache (`fresh_kernel_cache`: nothing reused across shapes),
// whatever OPGRAPH_CUDNN_INCLUDE_UNVERIFIED says. Any other lowering: one
// kernel cache shared by its shapes.
struct OverridePolicy {
  std::string attention;
  bool fresh_kernel_cache = false;
};
OverridePolicy override_policy(const LoweringPlan& built);

// The key of a call's shape: for each slot of `ops` (the normalised pack's
// operands, in the layout's position order) that an override wrote: its
// position, the rank, the extents, the strides. Slots not overridden contribute
// nothing (they keep their declaration). `out` is cleared first.
void shape_key(std::span<const OperandBuffer> ops, std::vector<std::int64_t>& out);
// Whether `key` (a shape_key) is the call's, compared in place (no allocation).
bool same_shape(std::span<const std::int64_t> key, std::span<const OperandBuffer> ops) noexcept;

// The per-shape entries of one plan, the most recent `capacity` shapes (the
// oldest is dropped first). Not thread-safe: the plan guards it with its mutex.
template <class T>
class ShapeCache {
 public:
  explicit ShapeCache(std::size_t capacity) : capacity_(capacity) {}
  // The entry of the call's shape, or null.
  std::shared_ptr<T> find(std::span<const OperandBuffer> ops) const noexcept {
    for (const auto& e : entries_)
      if (same_shape(e.first, ops)) return e.second;
    return nullptr;
  }
  // Adds `value` under `key` (a shape_key), dropping the oldest entry at capacity.
  void insert(std::vector<std::int64_t> key, std::shared_ptr<T> value) {
    if (capacity_ == 0) return;
    while (entries_.size() >= capacity_) entries_.pop_front();
    entries_.emplace_back(std::move(key), std::move(value));
  }
  std::size_t size() const noexcept { return entries_.size(); }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  std::size_t capacity_;
  std::deque<std::pair<std::vector<std::int64_t>, std::shared_ptr<T>>> entries_;
};

// How many shapes a plan keeps finalised (each holds an execution plan).
inline constexpr std::size_t kShapePlansPerPlan = 8;

// The graph at the call's extents: `json` (the frozen graph's canonical JSON)
// parsed, each overridden operand's extents and strides set from `ops` (the
// normalised pack's operands, one per slot of `layout`), validated again (shape
// inference re-derives the virtual tensors), and every operand's extents at the
// new shape checked against its buffer's (its override, else its declaration).
// GRAPH_NOT_SUPPORTED for an fp4 operand (its slots are not its elements);
// INVALID_VARIANT_PACK naming the operand when the graph does not validate or an
// operand's extents change without its override ("override it to [..]").
Result<OpGraph> graph_at_extents(std::string_view json, const DeclaredLayout& layout,
                                 std::span<const OperandBuffer> ops);

// Where `shaped` (the graph lowered at a call's extents) differs from `built`
// (the lowering the plan was built from) other than in its tensors' extents and
// strides and the dynamic-shape flag of its operation graph: the descriptor and
// what differs, e.g. "descriptor 'tensor 'alibi_slopes' ...': its constant
// bytes differ". "" when only extents and strides differ (the built engine
// config may then serve it).
std::string lowering_difference(const LoweringPlan& built, const LoweringPlan& shaped);

// A plan's workspace: the engine's own bytes, then (256-aligned) the
// lowering's scratch tensors. The built plan and each per-shape plan alike.
struct WorkspaceLayout {
  std::int64_t scratch_at = 0;  // where the scratch tensors start
  std::int64_t total = 0;       // bytes the caller's workspace must hold
};
WorkspaceLayout workspace_layout(std::int64_t engine_bytes, const LoweringPlan& lp);

// The refusal of a call's override: GRAPH_NOT_SUPPORTED "engine cudnn:
// execute-time shape override of operand 'A' (uid 1, input 'A' of node 'mm')
// to [1, 48, 64] (strides [3072, 64, 1]) declined: <why>; nothing was launched",
// naming the first overridden operand of `ops` (all of them, with "+N more").
Status override_declined(const DeclaredLayout& layout, std::span<const OperandBuffer> ops, std::string_view why);

}  // namespace opgraph::engines::cudnn
