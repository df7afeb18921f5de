// python/src/handle.h — opgraph.handle: the object create_handle() returns.
//
// A handle carries a stream (a CUstream / cudaStream_t as an integer, 0 = the
// default stream) and, like cudnn.pygraph's, the CUDA device it was created on:
// create_handle() reads the current device's properties through the runtime
// (opgraph::read_device, which loads libcuda), and a pygraph built
// with that handle plans for that device, so GPU engines (the cudnn family) are
// ranked. No libcuda or no device: the handle is host-only (device() is null,
// device_error says why) and graphs made with it plan for the host.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common.h"
#include "opgraph/execution_context.h"

namespace opgraph::py {

class PyHandle : public Handle {
 public:
  Result<void*> stream() const override {
    if (destroyed) return Status(ErrorCode::HANDLE_ERROR, "the handle was destroyed by destroy_handle()");
    return reinterpret_cast<void*>(stream_value);
  }
  const DeviceProperties* device() const override { return device_props ? &*device_props : nullptr; }
  std::optional<DeviceProperties> device_props;  // read off device `ordinal`; empty: host-only
  std::uintptr_t stream_value = 0;
  bool destroyed = false;
  int ordinal = -1;          // the CUDA device ordinal, -1: host-only
  std::string device_error;  // why the handle is host-only ("" when it has a device)
};

// Device `ordinal`'s properties, read once per process and ordinal (bad: why there is none).
const Result<DeviceProperties>& device_properties_of(int ordinal);

}  // namespace opgraph::py
