// runtime/device_buffer.h — the one owner of a device allocation outside the
// engines: the public opgraph::DeviceMemory (opgraph/device.h, which `opgraph run
// --device` and the Python tests use), the GPU test suites (tests/gpu,
// tests/gemm_gpu, tests/cudnn_gpu) and the GEMM benchmark allocate operand and
// workspace memory through it. It lives with the layer that owns the device.
//
// Header-only, over the loader's driver table (cuMemAlloc / cuMemFree /
// cuMemcpyHtoD / cuMemcpyDtoH). The allocation is made in, and freed in, the
// context current on the calling thread (the caller keeps one current, e.g.
// through KernelRuntime::open or opgraph::Device::open).
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "runtime/loader.h"

namespace opgraph {

class DeviceBuffer {
 public:
  // Empty: ptr() is 0, nothing to free.
  DeviceBuffer() = default;
  // `bytes` of device memory (uninitialised); 0 bytes allocates nothing. When
  // the driver refuses, ptr() is 0 and status() is CUDA_API_FAILED naming
  // cuMemAlloc and the size.
  DeviceBuffer(const runtime::CudaDriverApi& api, std::size_t bytes) : api_(&api) {
    if (bytes == 0) return;
    status_ = runtime::cuda_check(api, api.mem_alloc(&ptr_, bytes), "cuMemAlloc(" + std::to_string(bytes) + " bytes)");
    if (status_.is_good()) bytes_ = bytes;
    else ptr_ = 0;
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : api_(o.api_), ptr_(std::exchange(o.ptr_, 0)), bytes_(std::exchange(o.bytes_, 0)), status_(o.status_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      api_ = o.api_;
      ptr_ = std::exchange(o.ptr_, 0);
      bytes_ = std::exchange(o.bytes_, 0);
      status_ = o.status_;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr ptr() const noexcept { return ptr_; }
  void* data() const noexcept { return reinterpret_cast<void*>(ptr_); }
  std::size_t bytes() const noexcept { return bytes_; }
  const Status& status() const noexcept { return status_; }

  // Synchronous copies of the first `n` bytes (cuMemcpyHtoD / cuMemcpyDtoH).
  // INVALID_VALUE when n exceeds bytes(); CUDA_API_FAILED naming the call.
  Status upload(const void* src, std::size_t n) const {
    if (n == 0) return Status::ok();
    OPGRAPH_CHECK(fits(n, "upload"));
    return runtime::cuda_check(*api_, api_->memcpy_htod(ptr_, src, n), "cuMemcpyHtoD");
  }
  Status download(void* dst, std::size_t n) const {
    if (n == 0) return Status::ok();
    OPGRAPH_CHECK(fits(n, "download"));
    return runtime::cuda_check(*api_, api_->memcpy_dtoh(dst, ptr_, n), "cuMemcpyDtoH");
  }

  // Frees the allocation now (cuMemFree); the buffer is empty after.
  void reset() noexcept {
    if (ptr_) api_->mem_free(ptr_);
    ptr_ = 0;
    bytes_ = 0;
  }

 private:
  Status fits(std::size_t n, const char* what) const {
    if (n <= bytes_) return Status::ok();
    return {ErrorCode::INVALID_VALUE, std::string("device buffer ") + what + " of " + std::to_string(n) +
                                          " bytes into a buffer of " + std::to_string(bytes_)};
  }

  const runtime::CudaDriverApi* api_ = nullptr;
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
  Status status_;
};

}  // namespace opgraph
