// python/src/handle.h — opgraph.handle: the object create_handle() returns.
//
// Host-only until the GPU runtime lands: it carries a stream (a CUstream /
// cudaStream_t as an integer, 0 = the default stream) and no device. With the
// planning layer it is an opgraph::Handle, passed to execute.
#pragma once

#include <cstdint>

#include "common.h"

#ifdef OPGRAPH_PY_HAS_PLANNING
#include "opgraph/execution_context.h"
#endif

namespace opgraph::py {

#ifdef OPGRAPH_PY_HAS_PLANNING
class PyHandle : public Handle {
 public:
  Result<void*> stream() const override {
    if (destroyed) return Status(ErrorCode::HANDLE_ERROR, "the handle was destroyed by destroy_handle()");
    return reinterpret_cast<void*>(stream_value);
  }
  const DeviceProperties* device() const override { return nullptr; }
#else
class PyHandle {
 public:
#endif
  std::uintptr_t stream_value = 0;
  bool destroyed = false;
};

}  // namespace opgraph::py
