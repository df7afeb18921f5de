// opgraph/device_properties.h — the planning target, as a plain value.
//
// Planning and analyzers read the device from this struct, never from ambient
// device state. It is built by hand, parsed from JSON (deviceless planning and
// ahead-of-time cache warm-up: plan for sm_90 on a machine with no GPU), or — once
// the runtime layer lands — read from a device by the runtime. Keep it small: a
// field belongs here only if an analyzer or a kernel's specialisation reads it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "opgraph/status.h"

namespace opgraph {

struct DeviceProperties {
  int major = 0;                          // compute capability, e.g. 9 for an H100/H200
  int minor = 0;                          // e.g. 0 (sm_90)
  int sm_count = 0;                       // streaming multiprocessors
  std::int64_t l2_bytes = 0;              // L2 cache size, bytes
  std::int64_t smem_per_block_optin = 0;  // max dynamic shared memory per block (opt-in), bytes
  std::string name;                       // "NVIDIA H200", "" when made by hand

  // major*10 + minor: the number Capabilities' sm_lo/sm_hi ranges are written in.
  int sm_version() const noexcept { return major * 10 + minor; }
  bool operator==(const DeviceProperties&) const = default;

  // {"major":9,"minor":0,"sm_count":132,"l2_bytes":...,"smem_per_block_optin":...,"name":"..."}
  std::string to_json() const;
  // Every key above is required except "name"; unknown keys are refused.
  // UNSUPPORTED_GRAPH_FORMAT names the bad key or value.
  static Result<DeviceProperties> from_json(std::string_view text);
};

}  // namespace opgraph
