// runtime/stream_timer.cpp — StreamTimer (contract in stream_timer.h).
#include "runtime/stream_timer.h"

#include "runtime/context_scope.h"
#include "runtime/device.h"

namespace opgraph::runtime {

Result<std::unique_ptr<StreamTimer>> StreamTimer::open(int ordinal) {
  auto found = find_device(ordinal);
  if (found.is_bad()) return found.status();
  const CudaDriverApi& api = *found->api;
  if (!api.event_create || !api.event_record || !api.event_synchronize || !api.event_elapsed_time ||
      !api.event_destroy)
    return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                  "the loaded libcuda (" + api.path + ") lacks the event calls autotuning times a device plan with");
  CUcontext ctx = nullptr;
  OPGRAPH_CHECK(cuda_check(api, api.primary_ctx_retain(&ctx, found->device), "cuDevicePrimaryCtxRetain"));
  std::unique_ptr<StreamTimer> t(new StreamTimer(&api, found->device, ctx));
  const ContextScope bound(api, ctx);
  OPGRAPH_CHECK(bound.status());
  OPGRAPH_CHECK(cuda_check(api, api.event_create(&t->start_, CU_EVENT_DEFAULT), "cuEventCreate"));
  OPGRAPH_CHECK(cuda_check(api, api.event_create(&t->stop_, CU_EVENT_DEFAULT), "cuEventCreate"));
  return t;
}

StreamTimer::~StreamTimer() {
  {
    const ContextScope bound(*api_, context_);
    if (start_) api_->event_destroy(start_);
    if (stop_) api_->event_destroy(stop_);
  }
  api_->primary_ctx_release(device_);
}

Status StreamTimer::start(void* stream) {
  const ContextScope bound(*api_, context_);
  OPGRAPH_CHECK(bound.status());
  return cuda_check(*api_, api_->event_record(start_, static_cast<CUstream>(stream)), "cuEventRecord (start)");
}

Status StreamTimer::stop(void* stream) {
  const ContextScope bound(*api_, context_);
  OPGRAPH_CHECK(bound.status());
  return cuda_check(*api_, api_->event_record(stop_, static_cast<CUstream>(stream)), "cuEventRecord (stop)");
}

Result<double> StreamTimer::elapsed_ms() {
  const ContextScope bound(*api_, context_);
  OPGRAPH_CHECK(bound.status());
  OPGRAPH_CHECK(cuda_check(*api_, api_->event_synchronize(stop_), "cuEventSynchronize"));
  float ms = 0;
  OPGRAPH_CHECK(cuda_check(*api_, api_->event_elapsed_time(&ms, start_, stop_), "cuEventElapsedTime"));
  return static_cast<double>(ms);
}

}  // namespace opgraph::runtime
