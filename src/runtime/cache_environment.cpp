// runtime/cache_environment.cpp — collecting and hashing the environment facts.
#include "runtime/cache_environment.h"

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "runtime/kernel_sources.h"
#include "runtime/loader.h"

#ifndef OPGRAPH_VERSION_STRING
#error "OPGRAPH_VERSION_STRING is set by src/CMakeLists.txt"
#endif

namespace opgraph::runtime {

std::string fnv1a64_hex(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string CacheEnvironment::hash() const {
  std::string text;
  for (const auto& [k, v] : fields) text += k + "=" + v + "\n";
  return fnv1a64_hex(text);
}

std::string CacheEnvironment::to_json() const {
  nlohmann::ordered_json j;
  for (const auto& [k, v] : fields) j[k] = v;
  return j.dump(2);
}

CacheEnvironment CacheEnvironment::make(const DeviceProperties& device, std::optional<int> nvrtc_version,
                                        std::optional<int> driver_version) {
  const std::string unknown = "unknown";
  auto num = [&](auto v) { return v > 0 ? std::to_string(v) : unknown; };
  CacheEnvironment env;
  env.fields = {
      {"opgraph_version", OPGRAPH_VERSION_STRING},
      {"kernel_sources_digest", std::string(embedded_sources_digest())},
      {"nvrtc_version", nvrtc_version ? std::to_string(*nvrtc_version) : unknown},
      {"driver_version", driver_version ? std::to_string(*driver_version) : unknown},
      {"device_name", device.name.empty() ? unknown : device.name},
      {"compute_capability", device.major > 0 ? device.arch() : unknown},
      {"sm_count", num(device.sm_count)},
      {"l2_bytes", num(device.l2_bytes)},
  };
  return env;
}

CacheEnvironment CacheEnvironment::current(const DeviceProperties& device, bool probe_driver) {
  std::optional<int> nvrtc_version, driver_version;
  if (auto api = nvrtc(); api.is_good()) nvrtc_version = (*api)->version;
  if (probe_driver) {
    if (auto api = cuda_driver(); api.is_good()) driver_version = (*api)->driver_version;
  }
  return make(device, nvrtc_version, driver_version);
}

}  // namespace opgraph::runtime
