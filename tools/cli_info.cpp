// tools/cli_info.cpp — `opgraph info`: devices, libraries, families and engines.
//
// Libraries are found through the runtime's loader (the one search every engine
// uses: src/runtime/loader.h); devices are read through the driver API. Both
// load libcuda / libnvrtc / libcudnn: this command is the one that asks.
#include <cstdio>
#include <string>
#include <vector>

#include "cli_common.h"
#include "engines/manifest.h"
#include "runtime/device.h"
#include "runtime/loader.h"

namespace opgraph::cli {
namespace {

// One line per library: where the loader found it and its version, or why not.
template <class Api>
void probe(const char* what, const Result<const Api*>& api, const std::string& version_of_found) {
  if (api.is_good()) {
    std::printf("  %-8s %s (version %s)\n", what, api.value()->path.c_str(), version_of_found.c_str());
    return;
  }
  std::printf("  %-8s not available: %s\n", what, api.status().message().c_str());
}

void devices() {
  std::printf("devices:\n");
  auto api = runtime::cuda_driver();
  int count = 0;
  if (api.is_bad() || (*api)->init(0) != CUDA_SUCCESS || (*api)->device_get_count(&count) != CUDA_SUCCESS ||
      count == 0) {
    std::printf("  none (planning targets the host; pass --device DEV.json to plan for a GPU)\n");
    return;
  }
  for (int i = 0; i < count; ++i) {
    auto p = runtime::read_device_properties(i);
    if (p.is_bad()) {
      std::printf("  %d: %s\n", i, p.status().message().c_str());
      continue;
    }
    std::printf("  %d: %s, %s, %d SMs, L2 %lld bytes, smem opt-in %lld bytes\n", i, p->name.c_str(), p->arch().c_str(),
                p->sm_count, static_cast<long long>(p->l2_bytes), static_cast<long long>(p->smem_per_block_optin));
  }
}

void family_lines(const plan::Family& f, const PlanTarget& target, bool universal) {
  std::string anchors;
  for (const auto& a : f.anchors) anchors += (anchors.empty() ? "" : ", ") + a;
  std::printf("  %-17s block %-3d %s\n", f.name.c_str(), f.block,
              universal ? "(offered for every graph)" : ("anchors: " + anchors).c_str());
  if (f.slots.empty()) std::printf("      (no engines yet: graphs of this family go to the backend and the reference)\n");
  for (const auto& ref : plan::slots_of(f)) {
    std::string avail;
    if (!plan::slot_enabled(*ref.slot)) {
      avail = "off: opt-in (OPGRAPH_ENABLE_ENGINES=" + ref.slot->name + ")";
    } else if (auto e = plan::instantiate(ref); e.is_bad()) {
      avail = "broken: " + e.status().message();
    } else if (auto why = e.value()->capabilities().arch_mismatch(target)) {
      avail = "unavailable: " + *why;
    } else {
      avail = "available";
    }
    std::printf("      %-6lld %-18s %s\n", static_cast<long long>(ref.id), ref.slot->name.c_str(), avail.c_str());
  }
}

}  // namespace

int cmd_info(int argc, char** argv) {
  auto args = parse_args("info", argc, argv, {}, {});
  if (!args) return 2;
  devices();
  std::printf("libraries:\n");
  auto cuda = runtime::cuda_driver();
  probe("libcuda", cuda, cuda.is_good() ? std::to_string((*cuda)->driver_version) : "");
  auto nvrtc = runtime::nvrtc();
  probe("libnvrtc", nvrtc, nvrtc.is_good() ? std::to_string((*nvrtc)->version) : "");
  auto cudnn = runtime::cudnn();
  probe("libcudnn", cudnn, cudnn.is_good() ? std::to_string((*cudnn)->version) : "");
  const plan::Manifest& m = plan::active_manifest(engines::default_manifest());
  PlanTarget host;
  std::printf("families and engines (id, name, availability on this host):\n");
  family_lines(m.universal, host, true);
  for (const auto& f : m.families) family_lines(f, host, false);
  std::printf("backend:\n  %s\n", m.backend ? "cuDNN provider present" : "none in this build (the cuDNN family)");
  return 0;
}

}  // namespace opgraph::cli
