// runtime/context_scope.cpp — ContextScope and ContextRestore (contracts in context_scope.h).
#include "runtime/context_scope.h"

namespace opgraph::runtime {

ContextScope::ContextScope(const CudaDriverApi& api, CUcontext ctx) : api_(&api) {
  status_ = cuda_check(api, api.ctx_get_current(&previous_), "cuCtxGetCurrent (before binding the plan's context)");
  if (status_.is_bad() || previous_ == ctx) return;
  status_ = cuda_check(api, api.ctx_set_current(ctx), "cuCtxSetCurrent (the plan's context)");
  switched_ = status_.is_good();
}

ContextScope::~ContextScope() {
  if (switched_) api_->ctx_set_current(previous_);
}

ContextRestore::ContextRestore(const CudaDriverApi& api) : api_(&api) {
  const CUresult r = api.ctx_get_current(&previous_);
  if (r == CUDA_ERROR_NOT_INITIALIZED) previous_ = nullptr;  // before cuInit nothing can be current
  known_ = r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_INITIALIZED;
}

ContextRestore::~ContextRestore() {
  if (!known_) return;
  CUcontext now = nullptr;
  if (api_->ctx_get_current(&now) != CUDA_SUCCESS || now == previous_) return;
  api_->ctx_set_current(previous_);
}

}  // namespace opgraph::runtime
