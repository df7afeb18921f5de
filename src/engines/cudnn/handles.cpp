// engines/cudnn/handles.cpp — ContextHandles and this thread's instance (see handles.h).
#include "engines/cudnn/handles.h"

#include <memory>

#include "runtime/context_scope.h"

namespace opgraph::engines::cudnn {

ContextHandles::~ContextHandles() {
  for (const Entry& e : entries_) {
    if (!e.context) {
      api_->destroy(e.handle);
      continue;
    }
    const runtime::ContextScope bound(*driver_, e.context);
    if (bound.status().is_good()) api_->destroy(e.handle);
  }
}

Result<ContextHandles::Entry*> ContextHandles::entry(CUcontext bound) {
  CUcontext ctx = bound;
  if (!ctx)
    OPGRAPH_CHECK(runtime::cuda_check(*driver_, driver_->ctx_get_current(&ctx), "cudnn handle: cuCtxGetCurrent"));
  for (Entry& e : entries_)
    if (e.context == ctx) return &e;
  cudnnHandle_t h = nullptr;
  OPGRAPH_CHECK(check(*api_, static_cast<cudnnStatus_t>(api_->create(&h)), Step::HEURISTICS, "cudnnCreate"));
  if (!ctx) {
    // cudnnCreate initialised the runtime: key the handle by the context it left current.
    CUresult r = driver_->ctx_get_current(&ctx);
    if (r != CUDA_SUCCESS) {
      api_->destroy(h);
      return runtime::cuda_check(*driver_, r, "cudnn handle: cuCtxGetCurrent after cudnnCreate");
    }
    for (Entry& e : entries_)
      if (e.context == ctx) {  // that context has a handle already: keep the one
        api_->destroy(h);
        return &e;
      }
  }
  entries_.push_back(Entry{ctx, h, false, nullptr});
  return &entries_.back();
}

Result<BoundHandle> ContextHandles::current() {
  auto e = entry();
  if (e.is_bad()) return e.status();
  return BoundHandle{e.value()->handle, e.value()->context};
}

Result<BoundHandle> ContextHandles::current_on(CUstream stream, CUcontext bound) {
  auto got = entry(bound);
  if (got.is_bad()) return got.status();
  Entry& e = *got.value();
  if (!e.stream_set || e.stream != stream) {
    e.stream_set = false;  // until cuDNN takes the new one
    OPGRAPH_CHECK(check(*api_, static_cast<cudnnStatus_t>(api_->set_stream(e.handle, stream)), Step::EXECUTE,
                        "cudnnSetStream"));
    e.stream = stream;
    e.stream_set = true;
  }
  return BoundHandle{e.handle, e.context};
}

namespace {

Result<ContextHandles*> this_thread(const CudnnApi& api) {
  thread_local std::unique_ptr<ContextHandles> handles;
  if (!handles) {
    auto drv = runtime::cuda_driver();
    if (drv.is_bad()) return drv.status();
    handles = std::make_unique<ContextHandles>(api, *drv.value());
  }
  return handles.get();
}

}  // namespace

Result<BoundHandle> thread_handle(const CudnnApi& api) {
  auto h = this_thread(api);
  if (h.is_bad()) return h.status();
  return h.value()->current();
}

Result<BoundHandle> thread_handle_on(const CudnnApi& api, CUstream stream, CUcontext bound) {
  auto h = this_thread(api);
  if (h.is_bad()) return h.status();
  return h.value()->current_on(stream, bound);
}

}  // namespace opgraph::engines::cudnn
