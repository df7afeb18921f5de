// tools/cli_info.cpp — `opgraph info`: devices, libraries, families and engines.
//
// Libraries are only probed with dlopen (and closed again); the runtime layer's
// loader replaces this probe when it lands. Devices are reported as none until
// the runtime can read them.
#include <dlfcn.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli_common.h"
#include "engines/manifest.h"

namespace opgraph::cli {
namespace {

void probe(const char* what, std::vector<const char*> names) {
  std::string tried;
  for (const char* n : names) {
    if (void* h = dlopen(n, RTLD_LAZY | RTLD_LOCAL)) {
      dlclose(h);
      std::printf("  %-8s found (%s)\n", what, n);
      return;
    }
    tried += (tried.empty() ? "" : ", ") + std::string(n);
  }
  std::printf("  %-8s not found (tried %s)\n", what, tried.c_str());
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
  std::printf("devices:\n  none (no device reader in this build: planning targets the host)\n");
  std::printf("libraries:\n");
  probe("libcuda", {"libcuda.so.1", "libcuda.so"});
  probe("libnvrtc", {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"});
  probe("libcudnn", {"libcudnn.so.9", "libcudnn.so"});
  const plan::Manifest& m = plan::active_manifest(engines::default_manifest());
  PlanTarget host;
  std::printf("families and engines (id, name, availability on this host):\n");
  family_lines(m.universal, host, true);
  for (const auto& f : m.families) family_lines(f, host, false);
  std::printf("backend:\n  %s\n", m.backend ? "cuDNN provider present" : "none in this build (the cuDNN family)");
  return 0;
}

}  // namespace opgraph::cli
