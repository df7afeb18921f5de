// runtime/device.h — a CUDA device through the driver API: its properties, its
// primary context, and the kernels loaded on it.
//
// Everything here loads libcuda (and libnvrtc on a cache miss); a missing
// library or a machine with no GPU is GRAPH_NOT_SUPPORTED / INVALID_CUDA_DEVICE
// naming the reason, so an engine that needs a device declines with it.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "opgraph/device_properties.h"
#include "runtime/compiled_cache.h"
#include "runtime/loader.h"

namespace opgraph::runtime {

// The number of visible devices (cuInit, cuDeviceGetCount). Errors:
// GRAPH_NOT_SUPPORTED (no libcuda), INVALID_CUDA_DEVICE (cuInit failed: no
// usable GPU), CUDA_API_FAILED.
Result<int> device_count();

// Device `ordinal` through the driver (cuInit, cuDeviceGet): the loaded table and
// the CUdevice. Errors as device_count, and INVALID_CUDA_DEVICE "device N does
// not exist (M visible)" for an ordinal outside [0, M).
struct DeviceRef {
  const CudaDriverApi* api = nullptr;
  CUdevice device = 0;
};
Result<DeviceRef> find_device(int ordinal);

// Reads device `ordinal` (cuDeviceGetAttribute, cuDeviceGetName); the result's
// `ordinal` is `ordinal`. Errors as find_device.
Result<DeviceProperties> read_device_properties(int ordinal);

// A kernel loaded into the device's context. Owned by its KernelRuntime.
struct LoadedKernel {
  std::string name;  // the cache entry name
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  // The dynamic shared memory limit raised on `function` so far (bytes; the
  // default 48 KiB until a launch needs more). Written under launch's check.
  mutable std::atomic<unsigned> shared_limit{48u * 1024};
};

// Launch geometry; shared memory in bytes; cluster = thread-block cluster
// shape (1 x 1 x 1: no cluster attribute is set).
struct LaunchDims {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
  unsigned cluster[3] = {1, 1, 1};
};

// One device's kernels: compiles through the compiled cache (check =
// cuModuleLoadData on the bytes read back) and memoises the CUfunction per
// key for the process. Not thread-safe; one per device per thread, or guard it.
class KernelRuntime {
 public:
  // Retains device `ordinal`'s primary context and makes it current on the
  // calling thread. Errors as read_device_properties.
  static Result<std::unique_ptr<KernelRuntime>> open(int ordinal, CacheOptions options);
  ~KernelRuntime();
  KernelRuntime(const KernelRuntime&) = delete;
  KernelRuntime& operator=(const KernelRuntime&) = delete;

  // The kernel for `request` on this device's arch; compiled, cached, loaded.
  Result<const LoadedKernel*> get(const KernelRequest& request);
  // cuLaunchKernelEx on `stream` (the handle's stream; nullptr is the legacy
  // default stream). `args` is the kernel's parameter pointer array. Raises
  // the kernel's dynamic shared memory limit the first time shared_bytes is
  // above it (once per kernel, not per launch); sets the cluster attribute
  // when dims.cluster is not 1 x 1 x 1.
  Status launch(const LoadedKernel& kernel, const LaunchDims& dims, CUstream stream, void** args) const;
  // How many clusters of dims.cluster with dims' block and shared memory can
  // be resident at once (cuOccupancyMaxActiveClusters); a persistent clustered
  // grid larger than this would run in two waves. GRAPH_NOT_SUPPORTED when
  // the driver lacks the call.
  Result<int> max_active_clusters(const LoadedKernel& kernel, const LaunchDims& dims) const;

  // The device's properties (device().ordinal: the ordinal it was opened with).
  const DeviceProperties& device() const noexcept { return device_; }
  const CudaDriverApi& api() const noexcept { return *api_; }
  // The retained primary context (current on the thread that opened the runtime).
  CUcontext context() const noexcept { return ctx_; }
  CompiledCache& cache() noexcept { return cache_; }

 private:
  KernelRuntime(const CudaDriverApi* api, CUdevice dev, CUcontext ctx, DeviceProperties props, CompiledCache cache);

  const CudaDriverApi* api_;
  CUdevice dev_;
  CUcontext ctx_;
  DeviceProperties device_;
  CompiledCache cache_;
  std::map<std::string, std::unique_ptr<LoadedKernel>> loaded_;  // by full key
};

}  // namespace opgraph::runtime
