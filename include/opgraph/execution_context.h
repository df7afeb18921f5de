// opgraph/execution_context.h — handle, stream, workspace: explicit, never ambient.
//
// Three separate things (seed, "Handle, stream, and device"):
//  * Handle — what carries the stream (and, on a GPU, the device). The runtime
//    layer implements it over a CUDA context; tests implement it directly.
//  * Stream — read from the handle. No handle: nullptr, the default stream. A
//    SUPPLIED handle whose stream cannot be read is an error, never a silent
//    fallback to another stream (running on the wrong stream is a correctness bug).
//  * Workspace — the caller's scratch allocation and its size in BYTES.
#pragma once

#include <cstdint>

#include "opgraph/device_properties.h"
#include "opgraph/status.h"

namespace opgraph {

class Handle {
 public:
  virtual ~Handle() = default;
  // The stream work is enqueued on (a CUstream / cudaStream_t, nullptr = default).
  virtual Result<void*> stream() const = 0;
  // The device this handle drives (nullptr: none, e.g. a host-only test handle).
  virtual const DeviceProperties* device() const = 0;
};

struct Workspace {
  void* data = nullptr;
  std::int64_t bytes = 0;
};

struct ExecutionContext {
  const Handle* handle = nullptr;          // nullptr: no handle
  void* stream = nullptr;                  // resolved from the handle once, at the top of execute
  Workspace workspace;
  const DeviceProperties* device = nullptr;  // nullptr: host execution (buffers are host memory)

  // Resolves the stream from `handle` (a supplied handle whose stream cannot be
  // read is HANDLE_ERROR naming the cause), and records the workspace.
  static Result<ExecutionContext> make(const Handle* handle, Workspace workspace);
};

}  // namespace opgraph
