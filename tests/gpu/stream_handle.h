// stream_handle.h — the smallest opgraph::Handle for GPU benchmarks and tests:
// one CUstream and the DeviceProperties of its device (both borrowed: the
// caller keeps them alive while the handle is used).
#pragma once

#include "opgraph/execution_context.h"
#include "runtime/loader.h"

namespace opgraph::gpu_testing {

class StreamHandle final : public Handle {
 public:
  StreamHandle(CUstream s, const DeviceProperties* d) : s_(s), d_(d) {}
  Result<void*> stream() const override { return static_cast<void*>(s_); }
  const DeviceProperties* device() const override { return d_; }

 private:
  CUstream s_;
  const DeviceProperties* d_;
};

}  // namespace opgraph::gpu_testing
