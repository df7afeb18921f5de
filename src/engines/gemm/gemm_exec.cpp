// engines/gemm/gemm_exec.cpp — ContextScope (contract in gemm_exec.h).
#include "engines/gemm/gemm_exec.h"

namespace opgraph::gemm {

ContextScope::ContextScope(const runtime::CudaDriverApi& api, CUcontext ctx) : api_(&api) {
  status_ = runtime::cuda_check(api, api.ctx_get_current(&previous_), "engine gemm: cuCtxGetCurrent");
  if (status_.is_bad() || previous_ == ctx) return;
  status_ = runtime::cuda_check(api, api.ctx_set_current(ctx), "engine gemm: cuCtxSetCurrent (the runtime's context)");
  switched_ = status_.is_good();
}

ContextScope::~ContextScope() {
  if (switched_) api_->ctx_set_current(previous_);
}

}  // namespace opgraph::gemm
