// runtime/shared_runtimes.h — the process's KernelRuntime on each device, shared
// by every engine family that compiles its own kernels (gemm, linear_attention),
// opened lazily by the first build that targets the device and kept for the
// process.
//
// One runtime per device, not one per family. A KernelRuntime holds the device's
// properties, its primary context (retained; the driver has one primary context
// per device whoever retains it, so per-family runtimes already shared it), a
// CompiledCache over the one cache root (CacheOptions::from_env, the same for
// every family) and the modules loaded so far, keyed by KernelRequest::key,
// which names the kernel's source, so two families never meet on a key. Nothing
// in it belongs to a family: one per device means one retain, one cache
// environment probe, one set of cache statistics and one module table per
// device. What it is not is thread-safe (get() writes the cache and the module
// table), so each device's runtime has one lock, and a caller uses the runtime
// only while it holds a SharedRuntimeLease, which holds that lock. The cost of
// sharing: builds of different families on one device wait for each other, as
// builds of one family always did (compiles on a warm disk cache are loads).
// launch() and max_active_clusters() are const, touch no table, and are what a
// built plan calls at execute, outside any lease, as before.
//
// The registry is never destroyed (a KernelRuntime torn down at static
// destruction would call a driver already unloading); a failed open leaves no
// runtime, and the next lease of that device tries again.
#pragma once

#include <mutex>
#include <utility>

#include "runtime/device.h"

namespace opgraph::runtime {

// The device's shared runtime, held under the device's lock for one step (a
// build: kernels got, launches sized). Movable, not copyable; the lock is
// released when the lease ends. Never hold two leases of one device on one
// thread (the lock is not recursive); leases of different devices are
// independent.
class SharedRuntimeLease {
 public:
  KernelRuntime& operator*() const noexcept { return *rt_; }
  KernelRuntime* operator->() const noexcept { return rt_; }
  // Valid for the process, after the lease too (the plan keeps it for execute).
  KernelRuntime* get() const noexcept { return rt_; }

 private:
  friend Result<SharedRuntimeLease> shared_kernel_runtime(int ordinal);
  SharedRuntimeLease(std::unique_lock<std::mutex> lock, KernelRuntime* rt) : lock_(std::move(lock)), rt_(rt) {}

  std::unique_lock<std::mutex> lock_;
  KernelRuntime* rt_;
};

// Device `ordinal`'s shared runtime, leased: opened now (KernelRuntime::open
// with CacheOptions::from_env()) if no lease opened it before. The calling
// thread's current context is as it was at the call (the caller's, or none):
// open makes the device's context current and the lease puts the caller's
// back, so bind the runtime's context (ContextScope) for work that needs it.
// Errors as KernelRuntime::open: INVALID_CUDA_DEVICE "device N does not exist
// (M visible)" for an ordinal no device has (negative ones included), and no
// runtime is opened; GRAPH_NOT_SUPPORTED without libcuda.
Result<SharedRuntimeLease> shared_kernel_runtime(int ordinal);

// Device `ordinal`'s shared runtime if a lease opened it, else nullptr; takes no
// device lock (never waits for a build). For tests and benchmarks (the device's
// cache statistics); calling get() on it outside a lease races with builds.
KernelRuntime* shared_kernel_runtime_if_open(int ordinal);

}  // namespace opgraph::runtime
