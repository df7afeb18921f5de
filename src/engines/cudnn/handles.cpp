// engines/cudnn/handles.cpp — ContextHandles and this thread's instance (see handles.h).
#include "engines/cudnn/handles.h"

#include <map>
#include <memory>
#include <mutex>

#include "runtime/context_scope.h"
#include "runtime/device.h"

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
  // A handle is made on the thread's first execute in a context (cudnnCreate
  // allocates): not while `stream` is being captured into a CUDA graph. Say
  // what to do instead of letting the driver invalidate the capture.
  if (bound && driver_->stream_is_capturing) {
    bool have = false;
    for (const Entry& e : entries_) have = have || e.context == bound;
    CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
    if (!have && driver_->stream_is_capturing(stream, &capturing) == CUDA_SUCCESS &&
        capturing != CU_STREAM_CAPTURE_STATUS_NONE)
      return Status(ErrorCode::INVALID_VALUE,
                    "engine cudnn: this thread's cuDNN handle for the plan's context is created on the thread's first "
                    "execute (cudnnCreate allocates), which cannot run under stream capture: execute the plan once on "
                    "this thread before capturing");
  }
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

Result<DeviceContext> device_context(int ordinal) {
  static std::mutex mu;
  static auto* retained = new std::map<int, DeviceContext>;  // by ordinal; never released
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = retained->find(ordinal); it != retained->end()) return it->second;
  auto found = runtime::find_device(ordinal);
  if (found.is_bad()) return found.status();
  DeviceContext dev{found->device, nullptr};
  OPGRAPH_CHECK(runtime::cuda_check(*found->api, found->api->primary_ctx_retain(&dev.primary, found->device),
                                    "cudnn: cuDevicePrimaryCtxRetain"));
  retained->emplace(ordinal, dev);
  return dev;
}

Result<CUcontext> context_for(const runtime::CudaDriverApi& driver, const DeviceContext& dev) {
  CUcontext current = nullptr;
  OPGRAPH_CHECK(runtime::cuda_check(driver, driver.ctx_get_current(&current), "cudnn: cuCtxGetCurrent"));
  if (!current || current == dev.primary) return dev.primary;
  CUdevice on = -1;
  if (driver.ctx_get_device && driver.ctx_get_device(&on) == CUDA_SUCCESS && on == dev.device) return current;
  return dev.primary;
}

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
