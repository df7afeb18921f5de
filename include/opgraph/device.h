// opgraph/device.h — CUDA devices as a caller of the public API sees them: how
// many there are, what each one is (DeviceProperties), an open device (its
// primary context), device memory, and a Handle that drives an open device.
//
// For tools, bindings and tests that put buffers on a GPU; engines open their
// devices themselves (each opens the device its planning target names,
// DeviceProperties::ordinal). Implemented by the runtime layer
// (src/runtime/device_api.cpp), through its one loader: the first call loads
// libcuda. Nothing here crashes on a machine without a GPU; every failure is a
// status:
//   GRAPH_NOT_SUPPORTED   no usable libcuda (the message names every place searched)
//   INVALID_CUDA_DEVICE   cuInit failed (no GPU), or the ordinal does not exist
//                         ("device 1 does not exist (1 visible)")
//   CUDA_API_FAILED       a driver call refused, named with its CUDA error
#pragma once

#include <cstddef>
#include <memory>

#include "opgraph/device_properties.h"
#include "opgraph/execution_context.h"
#include "opgraph/status.h"

namespace opgraph {

// The number of visible CUDA devices (errors as above).
Result<int> device_count();

// Device `ordinal`'s properties, with DeviceProperties::ordinal = ordinal: a
// graph planned for them plans for, and builds on, that device.
Result<DeviceProperties> read_device(int ordinal);

// An open device: its primary context, retained while the object (or memory
// allocated on it) lives, and made current on the thread that opened it.
// Copies share the one retained context. Thread-safe to use from any thread:
// every call below binds the device's context for its duration and puts the
// caller's back.
class Device {
 public:
  // Errors as above.
  static Result<Device> open(int ordinal);

  int ordinal() const noexcept;
  const DeviceProperties& properties() const noexcept;
  // Makes the device's context current on the calling thread (and leaves it).
  Status make_current() const;
  // Waits for every piece of work submitted to the device's context (cuCtxSynchronize).
  Status synchronize() const;

  struct State;  // the retained context (src/runtime/device_api.cpp)

 private:
  explicit Device(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;
  friend class DeviceMemory;
};

// `bytes` of memory on an open device (uninitialised), freed in the device's
// context when the object is destroyed; it keeps the device's context retained.
// Move-only. Sizes are in BYTES.
class DeviceMemory {
 public:
  DeviceMemory() noexcept;  // empty: data() is null, nothing to free
  // 0 bytes allocates nothing (an empty object). CUDA_API_FAILED naming cuMemAlloc
  // and the size when the driver refuses.
  static Result<DeviceMemory> allocate(const Device& device, std::size_t bytes);
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&&) noexcept;
  DeviceMemory& operator=(DeviceMemory&&) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  void* data() const noexcept;  // the device address
  std::size_t bytes() const noexcept;
  // Synchronous copies of the first `n` bytes: INVALID_VALUE when n exceeds
  // bytes(); CUDA_API_FAILED naming the driver call.
  Status upload(const void* host, std::size_t n) const;
  Status download(void* host, std::size_t n) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The Handle of a call that runs on an open device: its properties (so execute
// knows the device, and the graph's routing can check it is the one the graph was
// planned for) and a stream (a CUstream / cudaStream_t of that device; nullptr:
// the default stream). The device must outlive the handle.
class DeviceHandle final : public Handle {
 public:
  explicit DeviceHandle(const Device& device, void* stream = nullptr) : device_(&device), stream_(stream) {}
  Result<void*> stream() const override { return stream_; }
  const DeviceProperties* device() const override { return &device_->properties(); }

 private:
  const Device* device_;
  void* stream_;
};

}  // namespace opgraph
