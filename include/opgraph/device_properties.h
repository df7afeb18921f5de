// opgraph/device_properties.h — the planning target, as a plain value.
//
// Planning and analyzers read the device from this struct, never from ambient
// device state. It is built by hand, for a target architecture with no device
// (for_arch), parsed from JSON (deviceless planning and ahead-of-time cache
// warm-up: plan for sm_90 on a machine with no GPU), or read from a device
// (opgraph::read_device, opgraph/device.h). Keep it small: a field belongs here
// only if an analyzer, a kernel's specialisation or an engine's choice of device
// reads it. The whole type is implemented in the IR layer
// (src/ir/device_properties.cpp), so every layer that names it links it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "opgraph/status.h"

namespace opgraph {

// The largest device ordinal a DeviceProperties may name.
inline constexpr int kMaxDeviceOrdinal = 1 << 20;

struct DeviceProperties {
  int major = 0;                          // compute capability, e.g. 9 for an H100/H200
  int minor = 0;                          // e.g. 0 (sm_90)
  int sm_count = 0;                       // streaming multiprocessors
  std::int64_t l2_bytes = 0;              // L2 cache size, bytes
  std::int64_t smem_per_block_optin = 0;  // max dynamic shared memory per block (opt-in), bytes
  std::string name;                       // "NVIDIA H200", "" when made by hand
  // The CUDA device ordinal the properties were read from; -1 when none (made by
  // hand, for_arch, or JSON without "ordinal"). Engines that open a device open
  // this one (device 0 for -1), and a call whose handle drives another device is
  // refused (Graph::route), never run on a device it did not name.
  int ordinal = -1;

  // major*10 + minor: the number Capabilities' sm_lo/sm_hi ranges are written in.
  int sm_version() const noexcept { return major * 10 + minor; }
  bool operator==(const DeviceProperties&) const = default;

  // The NVRTC target our kernels are compiled for: the architecture-specific
  // "sm_90a" / "sm_100a" (wgmma, TMA multicast, setmaxnreg) for cc 9.0 and
  // 10.x, else "sm_XY". (src/ir/device_properties.cpp)
  std::string arch() const;
  // A device-less target: "sm_XY" or "sm_XYa" (XY may be three digits, e.g.
  // sm_100a); the suffix is accepted and arch() decides it. sm_90 / sm_90a get
  // the H200's figures (the GPU we run on): name "NVIDIA H200", 132 SMs,
  // l2_bytes 62914560 (60 MiB), smem_per_block_optin 232448 (227 KiB). Other
  // targets leave sm_count, l2_bytes, smem_per_block_optin 0 and name empty
  // (each "unknown" in a compiled-cache identity). INVALID_VALUE otherwise.
  static Result<DeviceProperties> for_arch(std::string_view arch);

  // {"major":9,"minor":0,"sm_count":132,"l2_bytes":...,"smem_per_block_optin":...,"name":"..."}
  // and "ordinal":N when ordinal >= 0.
  std::string to_json() const;
  // Every key above is required except "name" and "ordinal" (at most
  // kMaxDeviceOrdinal); unknown keys are refused.
  // UNSUPPORTED_GRAPH_FORMAT names the bad key or value.
  static Result<DeviceProperties> from_json(std::string_view text);
};

}  // namespace opgraph
