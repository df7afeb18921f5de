// engines/gemm/gemm_engine.h — the gemm family's engine and hooks for the manifest.
//
// Engine "gemm": one matmul with a fused pointwise epilogue chain (rules in
// gemm_problem.h), compiled from kernels/gemm_v<PIPELINE_ARCH>.cu through the
// runtime's compiled cache, executed on device buffers. On by default since
// the H200 numerics passed (bench/results/2026-11-30-gemm-v2-h200.txt).
#pragma once

#include <memory>
#include <optional>

#include "engines/gemm/gemm_kernel.h"
#include "runtime/device.h"
#include "plan/manifest.h"

namespace opgraph::gemm {

std::unique_ptr<Engine> make_gemm_engine(EngineIdentity identity);

// The process's KernelRuntime on device `ordinal` that this engine builds on
// (runtime::shared_kernel_runtime_if_open: one per device, shared with the other
// families that compile their kernels), or nullptr before a build for that
// device opened it. build_plan opens the device its
// planning target names (DeviceProperties::ordinal; device 0 for a target that
// names none); execute refuses a handle on another device (INVALID_CUDA_DEVICE).
// For tests and the benchmark (cache statistics).
runtime::KernelRuntime* shared_runtime_if_open(int ordinal = 0);

// The number of split-K scratch slots `plan` holds now (StreamScratch,
// gemm_exec.h: at most StreamScratch::kMaxSlots unless slots were pinned), or
// nullopt when `plan` is not this engine's. For tests.
std::optional<std::size_t> split_k_slots(const CompiledPlan& plan);

// One launch of a built gemm plan, as execute makes it: kernel, launch dims
// and the argument array (pointing into this object: use it in place).
struct RawLaunch {
  CUfunction function = nullptr;
  runtime::LaunchDims dims;
  GemmV2Params params{};  // the kernel's one argument (kernels/gemm_params.cuh); gemm_v1's is params.problem
  void* args[1] = {};
};
// For the host-overhead rows of bench/trust_gpu.cpp: what a built
// gemm `plan` launches for the normalised `pack`, so a raw cuLaunchKernelEx of
// the same kernel and arguments can be timed against execute. INVALID_VALUE:
// not this engine's plan; GRAPH_NOT_SUPPORTED: a plan that leases split-K
// scratch per call; the table's refusal for a pack it refuses.
Result<std::unique_ptr<RawLaunch>> raw_launch_of(const CompiledPlan& plan, const VariantPack& pack);

// The family's analyzer: a GemmFacts record (the problem, or why none).
struct GemmFacts : FactsRecord {
  Result<GemmProblem> problem = Status(ErrorCode::GRAPH_NOT_SUPPORTED, "not analysed");
};
std::shared_ptr<const FactsRecord> analyze_facts(const OpGraph& graph, const PlanTarget& target);

// The family's heuristics: from facts only, one concrete config of engine
// "gemm" per mode. A and B: the BACKEND marker first unless the pick is v2 and
// its shape class (shape_class, gemm_kernel.h) measured ahead of cuDNN on the
// H200 (ours_first, citing bench/results). FALLBACK: ours with the portable
// 64x64 v1 config, then the backend.
Result<std::vector<plan::Proposal>> heuristics(HeurMode mode, const PlanContext& ctx,
                                               const std::vector<const Engine*>& offered);

}  // namespace opgraph::gemm
