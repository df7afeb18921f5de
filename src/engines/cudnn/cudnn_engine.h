// engines/cudnn/cudnn_engine.h — the cuDNN backend as an engine and a BackendProvider.
//
// The provider answers the planner's per-mode question (plan/backend_provider.h):
// lower the graph (lowering.h), materialise it, run ONE engine-heuristics query
// for the mode, and return each engine config as a PlanConfig tagged with the
// mode and its index in cuDNN's list; engine_id is cuDNN's engine global index
// ([0, 10000)), knobs are the config's knob choices in KnobType's backend band.
// Building re-creates exactly that config from (engine_id, knobs), so a recorded
// plan replays. No libcudnn, no device, a graph that does not lower, or a
// backend that refuses → an empty block (GRAPH_NOT_SUPPORTED), never an error.
//
// The backend is only asked when the target has a device AND this process has
// loaded libcuda through the runtime loader (the device was read, e.g.
// runtime::read_device_properties): planning for an arch
// (DeviceProperties::for_arch) never loads libcudnn.
//
// Every step that asks cuDNN (heuristics, notes, build, load) works on the
// device the planning target names (DeviceProperties::ordinal; device 0 for a
// target that names none; INVALID_CUDA_DEVICE for one that does not exist): in
// the caller's current context when it is on that device, else in the device's
// primary context, made current before this thread's handle is taken and the
// caller's put back after. So a plan belongs to the target's device whatever
// the caller had current (none, or another device's context). A plan refuses at
// execute a handle on another device (INVALID_CUDA_DEVICE).
#pragma once

#include <memory>

#include "exec/operand_table.h"
#include "plan/backend_provider.h"

namespace opgraph::engines {

namespace cudnn {
struct LoweringPlan;
}

// A cuDNN plan's operand table (built once per plan, checked on every execute):
// one row per caller tensor of `lp` (caller_uids order) at its position in the
// graph's `layout`, asking for the declared extents, strides, dtype, device
// memory and the byte alignment the tensor descriptor promised cuDNN. Pure (no
// library, no device): CI tests the refusals. INTERNAL_ERROR when `layout` is
// null or a caller tensor has no position in it.
Result<OperandTable> operand_table_of(const cudnn::LoweringPlan& lp, const DeclaredLayout* layout);

// Execute-time shape overrides served by cuDNN plans in this process, counted
// per look-up of a call's shape (Graph::execute with overrides looks it up
// twice: its workspace, then the run): `finalized` — an execution plan
// finalised for a new shape; `reused` — a shape's plan finalised before
// served it (nothing finalised); `declined` — a shape refused the first time
// (a refused shape is remembered: a later call is refused alike, uncounted).
// Tests read the difference around a call.
struct DynamicShapeCounts {
  std::int64_t finalized = 0;
  std::int64_t reused = 0;
  std::int64_t declined = 0;
};
DynamicShapeCounts dynamic_shape_counts() noexcept;

// The provider (and the engine it owns, named "cudnn").
std::shared_ptr<plan::BackendProvider> make_cudnn_provider();

}  // namespace opgraph::engines
