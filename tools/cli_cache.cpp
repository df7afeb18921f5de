// tools/cli_cache.cpp — the `opgraph cache` subcommands:
//
//   opgraph cache stats  [--arch ARCH]   location, switches, size, environments
//   opgraph cache list   [--arch ARCH]   every environment and its entries
//   opgraph cache prune  [--arch ARCH]   retire dead environments above the cap
//   opgraph cache clear                  remove every environment opgraph wrote
//   opgraph cache warm --all [--arch ARCH]       compile every declared kernel
//   opgraph cache warm GRAPH.json [--arch ARCH]  compile what the graph's plans need
//
// ARCH (e.g. sm_90a) names the target without a GPU (DeviceProperties::for_arch);
// without it the tool reads device 0, which loads libcuda. The cache's
// environment variables apply (OPGRAPH_COMPILED_CACHE, ...). prune and clear
// touch only what opgraph wrote (src/runtime/cache_files.h) and say what they
// kept; warm fails when the kernels cannot be stored (a root that cannot be
// written, or one others can write). Exit status: 0 on success, 1 on a
// failure (printed to stderr), 2 on a usage error.
#include "cli_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "engines/smoke/smoke_kernels.h"
#include "opgraph/device_properties.h"
#include "opgraph/op_graph.h"
#include "runtime/cache_files.h"
#include "runtime/compiled_cache.h"
#include "runtime/device.h"

using namespace opgraph;

namespace {

struct Args {
  std::string sub;
  std::optional<std::string> arch;
  bool all = false;
  std::vector<std::string> positional;
};

int usage(const char* why) {
  std::fprintf(stderr,
               "opgraph cache: %s\n"
               "usage: opgraph cache stats|list|prune|clear [--arch ARCH]\n"
               "       opgraph cache warm (--all | GRAPH.json) [--arch ARCH]\n",
               why);
  return 2;
}

// `opgraph cache --help`: the subcommands, on stdout (exit 0).
int help() {
  std::fputs(
      "usage: opgraph cache <subcommand> [--arch ARCH]\n"
      "  stats  [--arch ARCH]             location, switches, size, environments\n"
      "  list   [--arch ARCH]             every environment and its entries\n"
      "  prune  [--arch ARCH]             retire dead environments above the cap\n"
      "  clear                            remove every environment opgraph wrote\n"
      "  warm --all [--arch ARCH]         compile every declared kernel\n"
      "  warm GRAPH.json [--arch ARCH]    compile what the graph's plans need\n"
      "ARCH (e.g. sm_90a) names the target without a GPU; without it, device 0 is read.\n"
      "The cache's environment variables apply (OPGRAPH_COMPILED_CACHE, ...: docs/environment.md).\n",
      stdout);
  return 0;
}

int fail(const Status& s) {
  std::fprintf(stderr, "opgraph cache: %s\n", s.to_string().c_str());
  return 1;
}

std::string human_bytes(std::uint64_t b) {
  char buf[32];
  if (b >= (1ull << 30)) std::snprintf(buf, sizeof(buf), "%.2f GiB", b / double(1ull << 30));
  else if (b >= (1ull << 20)) std::snprintf(buf, sizeof(buf), "%.2f MiB", b / double(1ull << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof(buf), "%.1f KiB", b / 1024.0);
  else std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(b));
  return buf;
}

// The target: --arch without a device, else device 0.
Result<DeviceProperties> target_of(const Args& a) {
  if (a.arch) return DeviceProperties::for_arch(*a.arch);
  auto dev = runtime::read_device_properties(0);
  if (dev.is_bad()) {
    return Status(dev.status().code(), "no --arch given and device 0 cannot be read (" + dev.status().message() +
                                           "); pass --arch sm_90a to work without a GPU");
  }
  return dev;
}

Result<runtime::CompiledCache> open_cache(const Args& a) {
  auto props = target_of(a);
  if (props.is_bad()) return props.status();
  return runtime::CompiledCache(runtime::CacheOptions::from_env(),
                                runtime::CacheEnvironment::current(*props, /*probe_driver=*/true));
}

void progress(std::size_t done, std::size_t total, const std::string& what) {
  constexpr int kWidth = 30;
  const int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kWidth - filled), '.');
  if (::isatty(2)) std::fprintf(stderr, "\r[%s] %zu/%zu %-60.60s", bar.c_str(), done, total, what.c_str());
  else std::fprintf(stderr, "[%s] %zu/%zu %s\n", bar.c_str(), done, total, what.c_str());
  if (done == total && ::isatty(2)) std::fprintf(stderr, "\n");
}

int cmd_stats(runtime::CompiledCache& cache) {
  const auto& o = cache.options();
  auto envs = cache.list();
  std::uint64_t bytes = 0, entries = 0;
  for (const auto& e : envs) bytes += e.bytes, entries += e.entries.size();
  std::printf("root:          %s\n", o.root.empty() ? "(none: no HOME)" : o.root.c_str());
  std::printf("enabled:       %s\n", cache.enabled() ? "yes" : "no (OPGRAPH_DISABLE_COMPILED_CACHE)");
  std::printf("require hit:   %s\n", o.require_hit ? "yes" : "no");
  std::printf("size cap:      %s\n", o.max_bytes ? human_bytes(o.max_bytes).c_str() : "none (0)");
  std::printf("marker:        %s\n", cache.marked() ? "yes" : "no (prune and clear leave this root alone)");
  const Status trust = cache.trust();
  std::printf("trusted:       %s\n", trust.is_good() ? "yes" : ("no: " + trust.message()).c_str());
  std::printf("size:          %s in %zu environment(s), %llu entries\n", human_bytes(bytes).c_str(), envs.size(),
              static_cast<unsigned long long>(entries));
  std::printf("current:       %s\n", cache.environment_dir().c_str());
  for (const auto& [k, v] : cache.environment().fields) std::printf("  %-22s %s\n", k.c_str(), v.c_str());
  return 0;
}

int cmd_list(runtime::CompiledCache& cache) {
  for (const auto& e : cache.list()) {
    std::printf("%s/%s%s  %s, %zu entries\n", e.schema.c_str(), e.hash.c_str(), e.current ? " (current)" : "",
                human_bytes(e.bytes).c_str(), e.entries.size());
    for (const auto& name : e.entries) std::printf("  %s\n", name.c_str());
  }
  return 0;
}

int cmd_warm_all(runtime::CompiledCache& cache, const std::string& arch) {
  if (Status ready = cache.prepare(); ready.is_bad()) {
    return fail(Status(ready.code(), "cannot warm " + cache.options().root.string() + ": " + ready.message()));
  }
  auto requests = smoke::declared_specialisations();
  auto check = [](const runtime::CompiledKernel& k) { return runtime::validate_cubin(k.cubin, k.lowered_name); };
  for (std::size_t i = 0; i < requests.size(); ++i) {
    progress(i, requests.size(), requests[i].family + "/" + requests[i].kernel);
    auto k = cache.get(requests[i], arch, check);
    if (k.is_bad()) return fail(k.status());
  }
  progress(requests.size(), requests.size(), "done");
  const auto& s = cache.stats();
  if (s.unwritten + s.untrusted > 0) {
    const auto lost = std::to_string(s.unwritten + s.untrusted);
    return fail(Status(ErrorCode::IO_ERROR, lost + " of " + std::to_string(requests.size()) +
                                                " kernels compiled but not stored in " +
                                                cache.environment_dir().string() + " (the reason is logged above)"));
  }
  std::printf("warmed %zu kernels for %s in %s: %llu compiled, %llu already cached, %llu invalid replaced\n",
              requests.size(), arch.c_str(), cache.environment_dir().c_str(),
              static_cast<unsigned long long>(s.misses + s.bypassed), static_cast<unsigned long long>(s.hits),
              static_cast<unsigned long long>(s.invalid));
  return 0;
}

int cmd_warm_graph(const std::string& path) {
  std::ifstream in(path);
  if (!in) return fail(Status(ErrorCode::IO_ERROR, "cannot read " + path));
  std::stringstream ss;
  ss << in.rdbuf();
  auto g = OpGraph::deserialize(ss.str());
  if (g.is_bad()) return fail(g.status());
  if (Status s = g->validate(); s.is_bad()) return fail(s);
  std::printf("%s: %zu node(s) validated; no engine in this tree compiles NVRTC kernels for graph plans yet, "
              "so no kernel is needed (use `cache warm --all` for the declared kernels)\n",
              path.c_str(), g->nodes().size());
  return 0;
}

}  // namespace

int opgraph_cli_cache(int argc, char** argv) {
  Args a;
  for (int i = 0; i < argc; ++i) {  // argv starts after "cache"
    std::string s = argv[i];
    if (s == "--arch") {
      if (++i >= argc) return usage("--arch needs a value (e.g. sm_90a)");
      a.arch = argv[i];
    } else if (s == "--all") {
      a.all = true;
    } else if (s == "-h" || s == "--help") {
      return help();
    } else if (a.sub.empty()) {
      a.sub = s;
    } else {
      a.positional.push_back(s);
    }
  }
  if (a.sub.empty()) return usage("no subcommand");
  static constexpr std::string_view kSubcommands[] = {"stats", "list", "prune", "clear", "warm"};
  if (std::find(std::begin(kSubcommands), std::end(kSubcommands), a.sub) == std::end(kSubcommands)) {
    return usage(("unknown subcommand '" + a.sub + "'").c_str());
  }
  if (a.sub == "clear") {
    runtime::CompiledCache cache(runtime::CacheOptions::from_env(), runtime::CacheEnvironment{});
    if (cache.options().root.empty()) return fail(Status(ErrorCode::INVALID_VALUE, "no cache location"));
    auto report = cache.clear();
    if (report.is_bad()) return fail(report.status());
    std::printf("cleared %s: removed %llu environment folder(s)\n", cache.options().root.c_str(),
                static_cast<unsigned long long>(report->environments_removed));
    if (!report->kept.empty()) {
      std::printf("kept %zu item(s) opgraph did not write:", report->kept.size());
      for (const auto& k : report->kept) std::printf(" %s", k.c_str());
      std::printf("\n");
    }
    return 0;
  }
  if (a.sub == "warm" && !a.all) {
    if (a.positional.size() != 1) return usage("warm takes --all or one GRAPH.json");
    return cmd_warm_graph(a.positional[0]);
  }
  if (!a.positional.empty()) return usage(("unexpected argument '" + a.positional[0] + "'").c_str());
  auto cache = open_cache(a);
  if (cache.is_bad()) return fail(cache.status());
  if (a.sub == "stats") return cmd_stats(*cache);
  if (a.sub == "list") return cmd_list(*cache);
  if (a.sub == "prune") {
    auto n = cache->prune();
    if (n.is_bad()) return fail(n.status());
    std::error_code ec;
    if (std::filesystem::exists(cache->options().root, ec) && !cache->marked()) {
      std::printf("nothing pruned: %s carries no %s naming opgraph (opgraph prunes only a root it created)\n",
                  cache->options().root.c_str(), std::string(runtime::cache_files::kMarkerFile).c_str());
      return 0;
    }
    std::printf("pruned %llu environment(s)\n", static_cast<unsigned long long>(*n));
    return 0;
  }
  if (a.sub == "warm") {
    std::string arch = a.arch ? *a.arch : target_of(a).value().arch();
    return cmd_warm_all(*cache, arch);
  }
  return usage(("unknown subcommand '" + a.sub + "'").c_str());
}
