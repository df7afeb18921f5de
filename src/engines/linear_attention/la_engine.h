// engines/linear_attention/la_engine.h — the linear_attention family's engine.
//
// Engine "linear_attention": the gdn forward op (rules in gdn_problem.h) on
// NVRTC kernels compiled from kernels/gdn_fwd.cu through the runtime's
// compiled cache: a chunked tensor-core prefill kernel and a token-recurrent
// decode kernel (T <= 8 N), both one kernel per layout class (head dim and
// q/k/v type; B, T, heads, cu_seqlens and the attributes at run time).
#pragma once

#include <memory>
#include <vector>

#include "engines/linear_attention/gdn_problem.h"
#include "opgraph/engine.h"
#include "runtime/nvrtc_compiler.h"

namespace opgraph::runtime {
class KernelRuntime;
}

namespace opgraph::linear_attention {

std::unique_ptr<Engine> make_la_engine(EngineIdentity identity);

// The process's linear_attention KernelRuntime on device `ordinal`, or nullptr
// before the first build_plan for that device opened it. build_plan opens the
// device its planning target names (DeviceProperties::ordinal; device 0 for a
// target that names none; INVALID_CUDA_DEVICE for one that does not exist);
// execute refuses a handle on another device (INVALID_CUDA_DEVICE). For tests.
runtime::KernelRuntime* shared_runtime_if_open(int ordinal = 0);

// The kernel requests a plan of `p` compiles: the main kernel (prefill, or
// decode under use_decode), then the pool copy when state_indices is bound and
// final_state produced.
std::vector<runtime::KernelRequest> kernel_requests(const GdnProblem& p);

// Every specialisation the engine may compile (the CI compile set): prefill
// and decode for D in {64, 128} x q/k/v in {bf16, fp16}, and the pool copy.
std::vector<runtime::KernelRequest> declared_specialisations();

}  // namespace opgraph::linear_attention
