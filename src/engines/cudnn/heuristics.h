// engines/cudnn/heuristics.h — cuDNN's engine heuristics and engine configs as
// PlanConfigs, and back: the query per mode, the execution plan for one
// (engine_id, knobs), and the per-thread cuDNN handle.
#pragma once

#include <vector>

#include "engines/cudnn/backend.h"
#include "opgraph/engine.h"

namespace opgraph::engines::cudnn {

// This thread's cuDNN handle (created on first use on the current device,
// destroyed at thread exit). A failure (no device, no context) is the status.
Result<cudnnHandle_t> thread_handle(const CudnnApi& api);

// One ENGINEHEUR query for `mode` (A, B or FALLBACK) on a finalized operation
// graph: every returned config as PlanConfig{global index, knob choices, mode,
// position}. Configs whose knobs have no KnobType are skipped.
Result<std::vector<PlanConfig>> query_heuristics(const CudnnApi& api, const Descriptor& op_graph, HeurMode mode);

// ENGINE(global index) + KNOB_CHOICEs + ENGINECFG → finalized EXECUTION_PLAN.
Result<Descriptor> build_execution_plan(const CudnnApi& api, cudnnHandle_t handle, const Descriptor& op_graph,
                                        const PlanConfig& config);

}  // namespace opgraph::engines::cudnn
