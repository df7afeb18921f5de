// engines/gemm/gemm_engine.h — the gemm family's engine and hooks for the manifest.
//
// Engine "gemm": one matmul with a fused pointwise epilogue chain (rules in
// gemm_problem.h), compiled from kernels/gemm_v<PIPELINE_ARCH>.cu through the
// runtime's compiled cache, executed on device buffers. Opt-in (off by default)
// until the H200 numerics and bench/gemm_h200.sh results say otherwise.
#pragma once

#include <memory>

#include "engines/gemm/gemm_kernel.h"
#include "runtime/device.h"
#include "plan/manifest.h"

namespace opgraph::gemm {

std::unique_ptr<Engine> make_gemm_engine(EngineIdentity identity);

// The process's gemm KernelRuntime (device 0), or nullptr before the first
// build_plan opened it. For tests and the benchmark (cache statistics).
runtime::KernelRuntime* shared_runtime_if_open();

// The family's analyzer: a GemmFacts record (the problem, or why none).
struct GemmFacts : FactsRecord {
  Result<GemmProblem> problem = Status(ErrorCode::GRAPH_NOT_SUPPORTED, "not analysed");
};
std::shared_ptr<const FactsRecord> analyze_facts(const OpGraph& graph, const PlanTarget& target);

// The family's heuristics: from facts only, one concrete config of engine
// "gemm" per mode, with the BACKEND marker FIRST in A and B: our kernel has not
// been measured faster than cuDNN's yet (bench/gemm_h200.sh decides; move the
// marker per shape class when bench/results shows ours ahead). FALLBACK: ours
// with the portable 64x64 config, then the backend.
Result<std::vector<plan::Proposal>> heuristics(HeurMode mode, const PlanContext& ctx,
                                               const std::vector<const Engine*>& offered);

}  // namespace opgraph::gemm
