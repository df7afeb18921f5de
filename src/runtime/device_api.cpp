// runtime/device_api.cpp — the public device API (opgraph/device.h) over the
// runtime's loader: device count and properties, an open device's retained
// primary context, and device memory (runtime/device_buffer.h) freed in it.
#include "opgraph/device.h"

#include "runtime/context_scope.h"
#include "runtime/device.h"
#include "runtime/device_buffer.h"

namespace opgraph {

// The retained primary context of one device; released when the last Device
// copy and the last DeviceMemory on it are gone.
struct Device::State {
  const runtime::CudaDriverApi* api = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  DeviceProperties properties;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    if (context) api->primary_ctx_release(device);
  }
};

Result<int> device_count() { return runtime::device_count(); }

Result<DeviceProperties> read_device(int ordinal) { return runtime::read_device_properties(ordinal); }

Result<Device> Device::open(int ordinal) {
  auto props = runtime::read_device_properties(ordinal);
  if (props.is_bad()) return props.status();
  auto found = runtime::find_device(ordinal);
  if (found.is_bad()) return found.status();
  auto state = std::make_shared<State>();
  state->api = found->api;
  state->device = found->device;
  state->properties = std::move(*props);
  OPGRAPH_CHECK(runtime::cuda_check(*state->api, state->api->primary_ctx_retain(&state->context, state->device),
                                    "cuDevicePrimaryCtxRetain"));
  OPGRAPH_CHECK(runtime::cuda_check(*state->api, state->api->ctx_set_current(state->context), "cuCtxSetCurrent"));
  return Device(std::move(state));
}

int Device::ordinal() const noexcept { return state_->properties.ordinal; }

const DeviceProperties& Device::properties() const noexcept { return state_->properties; }

Status Device::make_current() const {
  return runtime::cuda_check(*state_->api, state_->api->ctx_set_current(state_->context), "cuCtxSetCurrent");
}

Status Device::synchronize() const {
  const runtime::ContextScope bound(*state_->api, state_->context);
  OPGRAPH_CHECK(bound.status());
  return runtime::cuda_check(*state_->api, state_->api->ctx_synchronize(), "cuCtxSynchronize");
}

// The allocation and the device whose context it was made in. Every driver call
// binds that context for its duration (the caller's thread may have none, or
// another device's current).
struct DeviceMemory::Impl {
  std::shared_ptr<const Device::State> device;
  DeviceBuffer buffer;

  ~Impl() {
    // Freed with the context bound (when the driver refuses to bind it, the free
    // is still tried: with unified addressing the pointer names its context).
    const runtime::ContextScope bound(*device->api, device->context);
    buffer.reset();
  }
};

DeviceMemory::DeviceMemory() noexcept = default;
DeviceMemory::~DeviceMemory() = default;
DeviceMemory::DeviceMemory(DeviceMemory&&) noexcept = default;
DeviceMemory& DeviceMemory::operator=(DeviceMemory&&) noexcept = default;

Result<DeviceMemory> DeviceMemory::allocate(const Device& device, std::size_t bytes) {
  DeviceMemory m;
  if (bytes == 0) return m;
  const Device::State& s = *device.state_;
  const runtime::ContextScope bound(*s.api, s.context);
  OPGRAPH_CHECK(bound.status());
  DeviceBuffer buffer(*s.api, bytes);
  OPGRAPH_CHECK(buffer.status());
  m.impl_ = std::make_unique<Impl>();
  m.impl_->device = device.state_;
  m.impl_->buffer = std::move(buffer);
  return m;
}

void* DeviceMemory::data() const noexcept { return impl_ ? impl_->buffer.data() : nullptr; }

std::size_t DeviceMemory::bytes() const noexcept { return impl_ ? impl_->buffer.bytes() : 0; }

Status DeviceMemory::upload(const void* host, std::size_t n) const {
  if (n == 0) return Status::ok();
  if (!impl_) return {ErrorCode::INVALID_VALUE, "device memory upload of " + std::to_string(n) + " bytes into empty memory"};
  const runtime::ContextScope bound(*impl_->device->api, impl_->device->context);
  OPGRAPH_CHECK(bound.status());
  return impl_->buffer.upload(host, n);
}

Status DeviceMemory::download(void* host, std::size_t n) const {
  if (n == 0) return Status::ok();
  if (!impl_) return {ErrorCode::INVALID_VALUE, "device memory download of " + std::to_string(n) + " bytes from empty memory"};
  const runtime::ContextScope bound(*impl_->device->api, impl_->device->context);
  OPGRAPH_CHECK(bound.status());
  return impl_->buffer.download(host, n);
}

}  // namespace opgraph
