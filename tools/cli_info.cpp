// tools/cli_info.cpp — `opgraph info`: devices, libraries, families and engines.
//
// Libraries are found through the runtime's loader (the one search every engine
// uses; opgraph/engine_info.h probe_gpu_libraries); devices are read through the
// driver API (opgraph/device.h). Both load libcuda / libnvrtc / libcudnn: this
// command is the one that asks.
#include <cstdio>
#include <string>
#include <vector>

#include "cli_common.h"
#include "opgraph/device.h"
#include "opgraph/engine_info.h"

namespace opgraph::cli {
namespace {

void devices() {
  std::printf("devices:\n");
  auto count = device_count();
  if (count.is_bad() || *count == 0) {
    std::printf("  none (planning targets the host; pass --device DEV.json to plan for a GPU)\n");
    return;
  }
  for (int i = 0; i < *count; ++i) {
    auto p = read_device(i);
    if (p.is_bad()) {
      std::printf("  %d: %s\n", i, p.status().message().c_str());
      continue;
    }
    std::printf("  %d: %s, %s, %d SMs, L2 %lld bytes, smem opt-in %lld bytes\n", i, p->name.c_str(), p->arch().c_str(),
                p->sm_count, static_cast<long long>(p->l2_bytes), static_cast<long long>(p->smem_per_block_optin));
  }
}

void family_lines(const FamilyInfo& f) {
  std::string anchors;
  for (const auto& a : f.anchors) anchors += (anchors.empty() ? "" : ", ") + a;
  std::printf("  %-17s block %-3d %s\n", f.name.c_str(), f.block,
              f.universal ? "(offered for every graph)" : ("anchors: " + anchors).c_str());
  if (f.engines.empty()) std::printf("      (no engines yet: graphs of this family go to the backend and the reference)\n");
  for (const EngineInfo& e : f.engines) {
    std::string avail;
    switch (e.availability) {
      case EngineAvailability::AVAILABLE: avail = "available"; break;
      case EngineAvailability::OPT_IN_OFF: avail = "off: " + e.why; break;
      case EngineAvailability::BROKEN: avail = "broken: " + e.why; break;
      case EngineAvailability::UNAVAILABLE: avail = "unavailable: " + e.why; break;
    }
    std::printf("      %-6lld %-18s %s\n", static_cast<long long>(e.id), e.name.c_str(), avail.c_str());
  }
}

}  // namespace

int cmd_info(int argc, char** argv) {
  auto args = parse_args("info", argc, argv, {}, {});
  if (!args) return 2;
  devices();
  std::printf("libraries:\n");
  for (const LibraryInfo& l : probe_gpu_libraries()) {
    if (l.found)
      std::printf("  %-8s %s (version %lld)\n", l.name.c_str(), l.path.c_str(), static_cast<long long>(l.version));
    else
      std::printf("  %-8s not available: %s\n", l.name.c_str(), l.error.c_str());
  }
  const EngineListing listing = list_engines();
  std::printf("families and engines (id, name, availability on this host):\n");
  for (const FamilyInfo& f : listing.families) family_lines(f);
  std::printf("backend:\n  %s\n", listing.backend ? "cuDNN provider present" : "none in this build (the cuDNN family)");
  return 0;
}

}  // namespace opgraph::cli
