// runtime/cache_environment.h — the identity of a compiled-kernel environment.
//
// Every fact that can change what a cubin is, or whether it runs: the opgraph
// version, the digest of all embedded kernel sources and shared headers, the
// NVRTC version, the CUDA driver version, and the device's name, compute
// capability, SM count and L2 size (kernels may bake the last two in). The
// fields are hashed together to name the environment directory
// `<root>/v<schema>/<hash>/`; any change lands in another directory. A field
// that cannot be read is hashed as "unknown", never skipped, so a process that
// could not read it never shares a directory with one that could.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opgraph/device_properties.h"

namespace opgraph::runtime {

// FNV-1a 64 of `text` as 16 lower-case hex digits.
std::string fnv1a64_hex(std::string_view text);

struct CacheEnvironment {
  // (field, value) in a fixed order: opgraph_version, kernel_sources_digest,
  // nvrtc_version, driver_version, device_name, compute_capability, sm_count,
  // l2_bytes.
  std::vector<std::pair<std::string, std::string>> fields;

  // 16 hex digits naming the environment directory.
  std::string hash() const;
  // The fields as a JSON object (written beside the entries for `cache list`).
  std::string to_json() const;

  // From explicit facts; an empty name, a zero count or std::nullopt becomes
  // "unknown". Versions use the libraries' encodings (e.g. 13000).
  static CacheEnvironment make(const DeviceProperties& device, std::optional<int> nvrtc_version,
                               std::optional<int> driver_version);
  // For this process: the NVRTC version from the loader; the driver version
  // from libcuda when `probe_driver` and it can be loaded ("unknown" otherwise).
  static CacheEnvironment current(const DeviceProperties& device, bool probe_driver);
};

}  // namespace opgraph::runtime
