// ir/device_properties.cpp — DeviceProperties, the planning target as a value:
// the target architecture without a device (arch, for_arch) and its JSON form.
//
// The whole type lives in the IR layer, the lowest one: every layer that names a
// DeviceProperties links this file, so none finds a method of the struct missing
// at link time (the runtime, which links only opgraph_ir, names its NVRTC target
// with arch() and reads a device into the struct; planning and the CLI read and
// write its JSON). Reading a real device is the runtime's (runtime/device.h).
// Nothing here loads a library.
#include "opgraph/device_properties.h"

#include <charconv>

#include <nlohmann/json.hpp>

namespace opgraph {

namespace {

// An sm_90 target without a device is planned as an H200: the figures its CUDA
// device attributes report (multiprocessor count, L2 cache size, opt-in shared
// memory per block; bench/results/2026-11-30-runtime-h200.txt records the first two).
constexpr int kH200Sms = 132;
constexpr std::int64_t kH200L2Bytes = 60ll * 1024 * 1024;
constexpr std::int64_t kH200SmemOptin = 227ll * 1024;

}  // namespace

std::string DeviceProperties::arch() const {
  const bool arch_specific = (major == 9 && minor == 0) || major == 10;
  return "sm_" + std::to_string(major) + std::to_string(minor) + (arch_specific ? "a" : "");
}

Result<DeviceProperties> DeviceProperties::for_arch(std::string_view arch) {
  auto bad = [&] {
    return Status(ErrorCode::INVALID_VALUE, "target architecture '" + std::string(arch) +
                                                "': expected sm_XY or sm_XYa (e.g. sm_90a)");
  };
  if (arch.substr(0, 3) != "sm_") return bad();
  std::string_view digits = arch.substr(3);
  if (!digits.empty() && digits.back() == 'a') digits.remove_suffix(1);
  if (digits.size() < 2 || digits.size() > 3) return bad();
  int value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return bad();
  DeviceProperties p;
  p.major = value / 10;
  p.minor = value % 10;
  if (p.major < 3) return bad();
  if (p.major == 9 && p.minor == 0) {
    p.name = "NVIDIA H200";
    p.sm_count = kH200Sms;
    p.l2_bytes = kH200L2Bytes;
    p.smem_per_block_optin = kH200SmemOptin;
  }
  return p;
}

std::string DeviceProperties::to_json() const {
  nlohmann::ordered_json j;
  j["major"] = major;
  j["minor"] = minor;
  j["sm_count"] = sm_count;
  j["l2_bytes"] = l2_bytes;
  j["smem_per_block_optin"] = smem_per_block_optin;
  j["name"] = name;
  if (ordinal >= 0) j["ordinal"] = ordinal;
  return j.dump();
}

Result<DeviceProperties> DeviceProperties::from_json(std::string_view text) {
  auto bad = [](const std::string& why) {
    return Status(ErrorCode::UNSUPPORTED_GRAPH_FORMAT, "device properties JSON: " + why);
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad("not valid JSON");
  if (!j.is_object()) return bad("expected an object");
  DeviceProperties p;
  for (const auto& [key, v] : j.items()) {
    if (key == "name") {
      if (!v.is_string()) return bad("\"name\" must be a string");
      p.name = v.get<std::string>();
      continue;
    }
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0) return bad("\"" + key + "\" must be a non-negative integer");
    std::int64_t n = v.get<std::int64_t>();
    if (key == "major") p.major = static_cast<int>(n);
    else if (key == "minor") p.minor = static_cast<int>(n);
    else if (key == "sm_count") p.sm_count = static_cast<int>(n);
    else if (key == "l2_bytes") p.l2_bytes = n;
    else if (key == "smem_per_block_optin") p.smem_per_block_optin = n;
    else if (key == "ordinal") {
      if (n > kMaxDeviceOrdinal) return bad("\"ordinal\" " + std::to_string(n) + " is above " + std::to_string(kMaxDeviceOrdinal));
      p.ordinal = static_cast<int>(n);
    } else return bad("unknown key \"" + key + "\"");
  }
  for (const char* k : {"major", "minor", "sm_count", "l2_bytes", "smem_per_block_optin"})
    if (!j.contains(k)) return bad(std::string("missing \"") + k + "\"");
  return p;
}

}  // namespace opgraph
