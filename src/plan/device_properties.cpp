// plan/device_properties.cpp — DeviceProperties to and from JSON.
#include "opgraph/device_properties.h"

#include <nlohmann/json.hpp>

namespace opgraph {

std::string DeviceProperties::to_json() const {
  nlohmann::ordered_json j;
  j["major"] = major;
  j["minor"] = minor;
  j["sm_count"] = sm_count;
  j["l2_bytes"] = l2_bytes;
  j["smem_per_block_optin"] = smem_per_block_optin;
  j["name"] = name;
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
    else return bad("unknown key \"" + key + "\"");
  }
  for (const char* k : {"major", "minor", "sm_count", "l2_bytes", "smem_per_block_optin"})
    if (!j.contains(k)) return bad(std::string("missing \"") + k + "\"");
  return p;
}

}  // namespace opgraph
