// engines/cudnn/heuristics.h — cuDNN's engine heuristics and engine configs as
// PlanConfigs, and back: the query per mode, the execution plan for one
// (engine_id, knobs). The handles they run on: handles.h.
#pragma once

#include <vector>

#include "engines/cudnn/backend.h"
#include "engines/cudnn/handles.h"
#include "opgraph/engine.h"

namespace opgraph::engines::cudnn {

// The numerical and behaviour notes of a finalized ENGINE descriptor. A note
// cuDNN will not report (an older library) or this build does not name is left
// out: notes never fail a query.
PlanNotes read_notes(const CudnnApi& api, cudnnBackendDescriptor_t engine);

// The notes of engine `engine_id` on a finalized operation graph (an ENGINE
// descriptor finalized for the graph and read by read_notes): what a replayed
// (engine_id, knobs) carries. cuDNN refusing the engine is the status.
Result<PlanNotes> engine_notes(const CudnnApi& api, const Descriptor& op_graph, std::int64_t engine_id);

// One ENGINEHEUR query for `mode` (A, B or FALLBACK) on a finalized operation
// graph: every returned config as PlanConfig{global index, knob choices, mode,
// position, notes}. Configs whose knobs have no KnobType are skipped.
Result<std::vector<PlanConfig>> query_heuristics(const CudnnApi& api, const Descriptor& op_graph, HeurMode mode);

// ENGINE(global index) + KNOB_CHOICEs + ENGINECFG → finalized EXECUTION_PLAN.
// `kernel_cache` (a finalized KERNEL_CACHE descriptor, or null): set as
// CUDNN_ATTR_EXECUTION_PLAN_KERNEL_CACHE, for a plan on a dynamic-shape
// operation graph (cuDNN >= 9.4); null sets nothing (the built plans).
Result<Descriptor> build_execution_plan(const CudnnApi& api, cudnnHandle_t handle, const Descriptor& op_graph,
                                        const PlanConfig& config, cudnnBackendDescriptor_t kernel_cache = nullptr);

// The finalized execution plan's JSON (CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION),
// exactly the bytes cuDNN reports. cuDNN refuses plans it cannot serialise
// (the status says why).
Result<std::string> execution_plan_json(const CudnnApi& api, const Descriptor& plan);

// An EXECUTION_PLAN descriptor deserialised from execution_plan_json output:
// HANDLE + JSON_REPRESENTATION, finalized. cuDNN refuses JSON from another
// version or device (the status says why).
Result<Descriptor> execution_plan_from_json(const CudnnApi& api, cudnnHandle_t handle, std::string_view json);

}  // namespace opgraph::engines::cudnn
