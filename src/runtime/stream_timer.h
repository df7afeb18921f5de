// runtime/stream_timer.h — timing work on a device stream with CUDA events, for
// autotuning (src/api/graph_autotune.cpp). The API layer never names a driver
// symbol: this is its one door to cuEventRecord / cuEventElapsedTime.
//
// A StreamTimer retains device `ordinal`'s primary context (the context
// opgraph's engines and DeviceHandle use) and makes it current only for the
// duration of each call, putting the caller's back (ContextScope). Two events
// bracket the work: start(stream), the work, stop(stream), then elapsed_ms()
// waits for the stop event and returns the time between the two, in
// MILLISECONDS (the driver's resolution is about half a microsecond).
// Not thread-safe; one per timing thread.
#pragma once

#include <memory>

#include "opgraph/status.h"
#include "runtime/loader.h"

namespace opgraph::runtime {

class StreamTimer {
 public:
  // Errors: GRAPH_NOT_SUPPORTED without libcuda or when the driver lacks the
  // event calls; INVALID_CUDA_DEVICE for an ordinal that does not exist;
  // CUDA_API_FAILED naming the driver call that refused.
  static Result<std::unique_ptr<StreamTimer>> open(int ordinal);
  ~StreamTimer();
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;

  // Records the start / stop event on `stream` (a CUstream; nullptr: the default stream).
  Status start(void* stream);
  Status stop(void* stream);
  // Waits for the stop event; the time from start to stop in milliseconds.
  Result<double> elapsed_ms();

 private:
  StreamTimer(const CudaDriverApi* api, CUdevice device, CUcontext context)
      : api_(api), device_(device), context_(context) {}
  const CudaDriverApi* api_;
  CUdevice device_;
  CUcontext context_;
  CUevent start_ = nullptr;
  CUevent stop_ = nullptr;
};

}  // namespace opgraph::runtime
