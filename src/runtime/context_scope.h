// runtime/context_scope.h — ContextScope: a plan's CUDA context made current on
// the calling thread for one call, and the caller's put back after. Shared by
// the engines that execute on a context recorded at build (gemm, cudnn).
// ContextRestore: the caller's context put back after a step that changes it
// (KernelRuntime::open; runtime/shared_runtimes.h opens through it).
//
// It takes the driver table by reference, so CI tests drive it with a table of
// fake entry points (no GPU there); the engines pass the loader's table.
#pragma once

#include "runtime/loader.h"

namespace opgraph::runtime {

// Makes `ctx` current on the calling thread for the scope's lifetime and puts
// back whatever was current before (nothing, or another context), so execute
// works from any thread (a Python thread, a serving pool) and leaves the
// caller's thread state as it found it. When `ctx` is already current (the
// steady state) it costs one cuCtxGetCurrent and sets nothing.
class ContextScope {
 public:
  ContextScope(const CudaDriverApi& api, CUcontext ctx);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
  // CUDA_API_FAILED naming cuCtxGetCurrent / cuCtxSetCurrent when the driver
  // refused; the scope then changed nothing.
  const Status& status() const noexcept { return status_; }

 private:
  const CudaDriverApi* api_;
  CUcontext previous_ = nullptr;
  bool switched_ = false;
  Status status_;
};

// Puts back, at scope exit, the context that was current on the calling
// thread at construction (or none), whatever ran in between: around
// KernelRuntime::open, which makes its context current and leaves it. Before
// cuInit (CUDA_ERROR_NOT_INITIALIZED) nothing is current, and nothing is put
// back (a context made current inside is unset). Best effort: a refused
// cuCtxSetCurrent at exit is not reported. Nothing changed inside: no set call.
class ContextRestore {
 public:
  explicit ContextRestore(const CudaDriverApi& api);
  ~ContextRestore();
  ContextRestore(const ContextRestore&) = delete;
  ContextRestore& operator=(const ContextRestore&) = delete;

 private:
  const CudaDriverApi* api_;
  CUcontext previous_ = nullptr;
  bool known_ = false;  // previous_ was read (false before cuInit or on a refused read)
};

}  // namespace opgraph::runtime
