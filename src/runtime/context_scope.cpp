// runtime/context_scope.cpp — ContextScope (contract in context_scope.h).
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

}  // namespace opgraph::runtime
