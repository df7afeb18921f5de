// engines/cudnn/handles.h — the cuDNN handles of one thread, one per CUDA
// context, each with the stream last set on it.
//
// A cuDNN handle belongs to the context current at its cudnnCreate: a thread
// that drives two devices (or two contexts of one) needs one handle for each,
// and the "set the stream only when it changed" cache must be per handle, or a
// switch of context would skip a cudnnSetStream that the other handle needs.
// Every handle is created lazily, in its own context, and destroyed with that
// context current when the thread exits.
//
// ContextHandles takes the cuDNN and driver tables by reference, so CI tests
// drive it with tables of fake entry points (no GPU there); the engine uses
// the loader's tables through thread_handle / thread_handle_on.
#pragma once

#include <vector>

#include "engines/cudnn/backend.h"

namespace opgraph::engines::cudnn {

// A handle and the context it belongs to (nullptr only when no context was
// current even after cudnnCreate: the handle is then kept under "no context").
struct BoundHandle {
  cudnnHandle_t handle = nullptr;
  CUcontext context = nullptr;
};

// One thread's handles. Not thread-safe: each thread owns one (thread_handle).
class ContextHandles {
 public:
  ContextHandles(const CudnnApi& api, const runtime::CudaDriverApi& driver) : api_(&api), driver_(&driver) {}
  // Destroys every handle with its context current (runtime::ContextScope) and
  // puts the thread's current context back. A handle whose context can no
  // longer be made current (destroyed) is not destroyed: its memory went with
  // the context.
  ~ContextHandles();
  ContextHandles(const ContextHandles&) = delete;
  ContextHandles& operator=(const ContextHandles&) = delete;

  // The handle of the context current on this thread (cuCtxGetCurrent), created
  // there on first use. With no context current, cudnnCreate initialises the
  // CUDA runtime on its current device (device 0 on a fresh thread), whose
  // primary context it makes current; the handle is kept under the context
  // current after the call. Errors: CUDA_API_FAILED (cuCtxGetCurrent), or
  // cudnnCreate's status (CUDNN_BACKEND_API_FAILED / GRAPH_NOT_SUPPORTED).
  Result<BoundHandle> current();
  // current() with `stream` set on the handle: cudnnSetStream only when `stream`
  // differs from the last one set on THAT handle through here (nothing else in
  // opgraph sets a stream on these handles). A refused cudnnSetStream is
  // GRAPH_EXECUTION_FAILED and leaves the stream "unknown" (the next call sets it).
  // `bound`: when not null, the context the caller has just made current on
  // this thread (execute's ContextScope), so no cuCtxGetCurrent is needed.
  Result<BoundHandle> current_on(CUstream stream, CUcontext bound = nullptr);

  // Handles held (tests).
  std::size_t size() const noexcept { return entries_.size(); }

 private:
  struct Entry {
    CUcontext context = nullptr;
    cudnnHandle_t handle = nullptr;
    bool stream_set = false;  // `stream` was set on the handle by current_on
    CUstream stream = nullptr;
  };
  Result<Entry*> entry(CUcontext bound = nullptr);

  const CudnnApi* api_;
  const runtime::CudaDriverApi* driver_;
  std::vector<Entry> entries_;  // a handful at most (one per context this thread used)
};

// A device and its primary context.
struct DeviceContext {
  CUdevice device = 0;
  CUcontext primary = nullptr;
};

// Device `ordinal` and its primary context, retained on first use and kept for
// the process (as the runtimes of the NVRTC engines are). Makes nothing
// current. Errors: as runtime::find_device (GRAPH_NOT_SUPPORTED without
// libcuda, INVALID_CUDA_DEVICE "device N does not exist (M visible)"),
// CUDA_API_FAILED naming cuDevicePrimaryCtxRetain.
Result<DeviceContext> device_context(int ordinal);

// The context a cuDNN step for `dev` (planning, building) runs in: the one
// current on this thread when it belongs to dev.device — its primary context,
// or a caller's own context there (cuCtxGetDevice; a driver without it counts
// only the primary) — else dev.primary (none current, or another device's
// context current). CUDA_API_FAILED naming cuCtxGetCurrent.
Result<CUcontext> context_for(const runtime::CudaDriverApi& driver, const DeviceContext& dev);

// This thread's ContextHandles over the loader's driver table and `api`
// (created on first use, destroyed at thread exit): current() / current_on().
// GRAPH_NOT_SUPPORTED when libcuda is not loaded.
Result<BoundHandle> thread_handle(const CudnnApi& api);
Result<BoundHandle> thread_handle_on(const CudnnApi& api, CUstream stream, CUcontext bound = nullptr);

}  // namespace opgraph::engines::cudnn
