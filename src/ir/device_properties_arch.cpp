// ir/device_properties_arch.cpp — DeviceProperties for a target architecture,
// without a device. Kept in the IR layer (JSON is in plan/device_properties.cpp)
// so the runtime, which links only opgraph_ir, can name its NVRTC target.
// Nothing here loads a library.
#include <charconv>

#include "opgraph/device_properties.h"

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

}  // namespace opgraph
