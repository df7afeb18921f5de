// tools/cli_cache.cpp — the `opgraph cache` subcommands:
//
//   opgraph cache stats  [--arch ARCH]   location, switches, size, environments
//   opgraph cache list   [--arch ARCH]   every environment and its entries
//   opgraph cache prune  [--arch ARCH]   retire dead environments above the cap
//   opgraph cache clear                  remove every environment opgraph wrote
//   opgraph cache warm --all [--family F] [--limit N] [--jobs J] [--arch ARCH]
//                                        compile every kernel the manifest's engines declare
//   opgraph cache warm GRAPH.json [--modes A,FALLBACK] [--jobs J] [--arch ARCH]
//                                        compile what the graph's plans need
//
// ARCH (e.g. sm_90a) names the target without a GPU (DeviceProperties::for_arch);
// without it the tool reads device 0, which loads libcuda. Kernels compile for
// the target's arch() (sm_90 -> sm_90a), as the engines do at build. The
// cache's environment variables apply (OPGRAPH_COMPILED_CACHE, ...). prune and
// clear touch only what opgraph wrote (opgraph/kernel_cache.h) and say what
// they kept. warm names its kernels through Engine::declared_kernels (--all:
// every slot of every manifest family, then the runtime's smoke kernels) or
// Engine::plan_kernels (GRAPH.json: the plans `opgraph plan` lists for the
// target), compiles each distinct one once
// and prints one line per kernel on stderr (compiled / already cached /
// failed); it goes on past a failed kernel and exits 1 when any failed or was
// left unstored, or when the kernels cannot be stored at all (a root that
// cannot be written, or one others can write). Exit status: 0 on success, 1 on
// a failure (printed to stderr), 2 on a usage error.
#include "cli_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "opgraph/device.h"
#include "opgraph/device_properties.h"
#include "opgraph/graph.h"
#include "opgraph/kernel_cache.h"

using namespace opgraph;

namespace {

struct Args {
  std::string sub;
  std::optional<std::string> arch;
  bool all = false;
  std::optional<std::string> family;  // warm --all: one family only
  std::optional<std::size_t> limit;   // warm --all: the first N kernels only
  unsigned jobs = 0;                  // warm: compile threads (0: the hardware threads)
  std::optional<std::string> modes;   // warm GRAPH.json: the heuristic modes planned
  std::vector<std::string> positional;
};

int usage(const char* why) {
  std::fprintf(stderr,
               "opgraph cache: %s\n"
               "usage: opgraph cache stats|list|prune|clear [--arch ARCH]\n"
               "       opgraph cache warm --all [--family F] [--limit N] [--jobs J] [--arch ARCH]\n"
               "       opgraph cache warm GRAPH.json [--modes A,FALLBACK] [--jobs J] [--arch ARCH]\n",
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
      "  warm --all [--arch ARCH]         compile every kernel the manifest's engines declare\n"
      "       [--family F] [--limit N]    only family F's; only the first N kernels\n"
      "  warm GRAPH.json [--arch ARCH]    compile the kernels of the graph's plans\n"
      "       [--modes A,FALLBACK]        the heuristic modes planned (as `opgraph plan`)\n"
      "  warm ... [--jobs J]              J compile threads (default: the machine's hardware threads)\n"
      "warm prints a line per kernel (compiled / already cached / failed) and exits 1 if any failed.\n"
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
  auto dev = read_device(0);
  if (dev.is_bad()) {
    return Status(dev.status().code(), "no --arch given and device 0 cannot be read (" + dev.status().message() +
                                           "); pass --arch sm_90a to work without a GPU");
  }
  return dev;
}

// "[#####.....] 3/40 gemm/v2_bf_bf_tt_...: compiled in 4.2 s": one line per kernel.
void progress(std::size_t done, std::size_t total, const std::string& what) {
  constexpr int kWidth = 30;
  const int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kWidth - filled), '.');
  std::fprintf(stderr, "[%s] %zu/%zu %s\n", bar.c_str(), done, total, what.c_str());
}

// Compiles every pending kernel into the cache, one progress line each; goes on
// past a failure. 0 when every kernel is stored, 1 (after the failures' count) otherwise.
int warm(KernelCache& cache, unsigned jobs) {
  const KernelCacheSettings settings = cache.settings();
  auto summary = cache.warm([](const WarmStep& step) {
    std::string what = step.kernel->name + ": ";
    char took[32];
    std::snprintf(took, sizeof(took), " in %.1f s", step.seconds);
    switch (step.outcome) {
      case WarmOutcome::FAILED: what += "failed: " + step.error.to_string(); break;
      case WarmOutcome::ALREADY_CACHED: what += "already cached"; break;
      case WarmOutcome::COMPILED:
        what += (step.shared_compile ? "stored from the same build's compile" : "compiled") + std::string(took);
        if (step.replaced_invalid) what += " (replaced an invalid entry)";
        if (step.not_stored) what += ", NOT stored";
        break;
    }
    progress(step.done, step.total, what);
  }, jobs);
  if (summary.is_bad()) return fail(summary.status());
  const WarmSummary& s = *summary;
  std::printf("warmed %zu kernels for %s in %s: %zu compiled, %zu already cached, %llu invalid replaced, "
              "%zu failed (%zu NVRTC compiles: %zu entries took the cubin of their build's compile)\n",
              s.kernels - s.failed, cache.arch().c_str(), settings.environment_dir.c_str(), s.compiled,
              s.already_cached, static_cast<unsigned long long>(s.invalid_replaced), s.failed,
              s.compiled - s.shared_compiles, s.shared_compiles);
  if (s.failed > 0) {
    return fail(Status(ErrorCode::NVRTC_COMPILATION_FAILED,
                       std::to_string(s.failed) + " of " + std::to_string(s.kernels) +
                           " kernels failed (each is named above)"));
  }
  if (s.not_stored > 0) {
    return fail(Status(ErrorCode::IO_ERROR, std::to_string(s.not_stored) + " of " + std::to_string(s.kernels) +
                                                " kernels compiled but not stored in " +
                                                settings.environment_dir.string() + " (the reason is logged above)"));
  }
  return 0;
}

int cmd_stats(const KernelCache& cache) {
  const KernelCacheSettings o = cache.settings();
  auto envs = cache.list();
  std::uint64_t bytes = 0, entries = 0;
  for (const auto& e : envs) bytes += e.bytes, entries += e.entries.size();
  std::printf("root:          %s\n", o.root.empty() ? "(none: no HOME)" : o.root.c_str());
  std::printf("enabled:       %s\n", o.enabled ? "yes" : "no (OPGRAPH_DISABLE_COMPILED_CACHE)");
  std::printf("require hit:   %s\n", o.require_hit ? "yes" : "no");
  std::printf("size cap:      %s\n", o.max_bytes ? human_bytes(o.max_bytes).c_str() : "none (0)");
  std::printf("marker:        %s\n", o.marked ? "yes" : "no (prune and clear leave this root alone)");
  std::printf("trusted:       %s\n", o.trust.is_good() ? "yes" : ("no: " + o.trust.message()).c_str());
  std::printf("size:          %s in %zu environment(s), %llu entries\n", human_bytes(bytes).c_str(), envs.size(),
              static_cast<unsigned long long>(entries));
  std::printf("current:       %s\n", o.environment_dir.c_str());
  for (const auto& [k, v] : o.environment) std::printf("  %-22s %s\n", k.c_str(), v.c_str());
  return 0;
}

int cmd_list(const KernelCache& cache) {
  for (const auto& e : cache.list()) {
    std::printf("%s/%s%s  %s, %zu entries\n", e.schema.c_str(), e.hash.c_str(), e.current ? " (current)" : "",
                human_bytes(e.bytes).c_str(), e.entries.size());
    for (const auto& name : e.entries) std::printf("  %s\n", name.c_str());
  }
  return 0;
}

// warm --all: every kernel every engine of the manifest declares, then the
// runtime's self-test kernels (engines/smoke/: not an engine, but what the
// runtime's cold/warm and REQUIRE_HIT checks load, bench/runtime_h200.sh); or
// one family's (`--family smoke`: the self-test kernels alone); the first --limit of them.
int cmd_warm_all(KernelCache& cache, const Args& a) {
  if (Status s = cache.add_declared(a.family.value_or("")); s.is_bad()) return fail(s);
  if (a.limit) cache.keep_first(*a.limit);
  std::fprintf(stderr, "warming %zu kernel(s) declared by %s for %s\n", cache.pending().size(),
               a.family ? ("family " + *a.family).c_str() : "every family of the manifest", cache.arch().c_str());
  return warm(cache, a.jobs);
}

// warm GRAPH.json: plans the graph for the target (as `opgraph plan` does:
// without a GPU under --arch) and compiles what each of our plans would
// compile at build. A plan its engine declines names no kernel (it says why).
int cmd_warm_graph(KernelCache& cache, const DeviceProperties& target, const std::string& path, const Args& a) {
  const std::string cmd = "cache warm";
  auto modes = cli::parse_modes(cmd, a.modes);
  if (!modes) return 2;
  auto g = cli::load_graph(cmd, path);
  if (!g) return 1;
  g->set_device_properties(target);
  if (Status s = g->create_execution_plans(*modes); s.code() == ErrorCode::GRAPH_NOT_SUPPORTED) {
    // No plan for this target: nothing any build would compile.
    std::printf("%s: no plan for %s, nothing to warm (%s)\n", path.c_str(), target.arch().c_str(),
                s.message().c_str());
    return 0;
  } else if (s.is_bad()) {
    return cli::fail(cmd, "'" + cli::clip(path) + "': " + s.to_string());
  }
  const std::int64_t n = g->get_execution_plan_count();
  for (std::int64_t i = 0; i < n; ++i) {
    const std::string name = g->get_plan_name_at_index(i).value();
    auto named = cache.add_plan(*g, i);
    if (named.status().code() == ErrorCode::GRAPH_NOT_SUPPORTED) {
      std::fprintf(stderr, "plan %lld %s: declined, no kernel: %s\n", static_cast<long long>(i), name.c_str(),
                   named.status().message().c_str());
      continue;
    }
    if (named.is_bad()) return cli::fail(cmd, name + ": " + named.status().to_string());
    std::fprintf(stderr, "plan %lld %s: %zu kernel(s)\n", static_cast<long long>(i), name.c_str(), *named);
  }
  if (cache.pending().empty()) {
    std::printf("%s: none of its %lld plan(s) compiles kernels (the reference and cuDNN compile none); "
                "nothing to warm\n",
                path.c_str(), static_cast<long long>(n));
    return 0;
  }
  return warm(cache, a.jobs);
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
    } else if (s == "--family" || s == "--modes") {
      if (++i >= argc) return usage((s + " needs a value").c_str());
      (s == "--family" ? a.family : a.modes) = argv[i];
    } else if (s == "--jobs" || s == "--limit") {
      // A count of at most 4 (--jobs) or 9 (--limit) digits.
      if (++i >= argc) return usage((s + " needs a count").c_str());
      const std::string v = argv[i];
      if (v.empty() || v.size() > (s == "--jobs" ? 4u : 9u) || v.find_first_not_of("0123456789") != std::string::npos)
        return usage((s + " takes a count, not '" + v.substr(0, 40) + "'").c_str());
      if (s == "--jobs") a.jobs = static_cast<unsigned>(std::stoul(v));
      else a.limit = static_cast<std::size_t>(std::stoul(v));
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
  if (a.sub != "warm" && (a.family || a.limit || a.modes || a.all))
    return usage("--all, --family, --limit and --modes belong to warm");
  if (a.sub == "clear") {
    KernelCache cache = KernelCache::open_root();
    const std::filesystem::path root = cache.settings().root;
    if (root.empty()) return fail(Status(ErrorCode::INVALID_VALUE, "no cache location"));
    auto report = cache.clear();
    if (report.is_bad()) return fail(report.status());
    std::printf("cleared %s: removed %llu environment folder(s)\n", root.c_str(),
                static_cast<unsigned long long>(report->environments_removed));
    if (!report->kept.empty()) {
      std::printf("kept %zu item(s) opgraph did not write:", report->kept.size());
      for (const auto& k : report->kept) std::printf(" %s", k.c_str());
      std::printf("\n");
    }
    return 0;
  }
  if (a.sub == "warm") {
    if (a.all == !a.positional.empty() || a.positional.size() > 1)
      return usage("warm takes --all or one GRAPH.json");
    if (a.all && a.modes) return usage("--modes belongs to warm GRAPH.json");
    if (!a.all && (a.family || a.limit)) return usage("--family and --limit belong to warm --all");
    auto target = target_of(a);
    if (target.is_bad()) return fail(target.status());
    KernelCache cache = KernelCache::open(*target);
    if (a.all) return cmd_warm_all(cache, a);
    return cmd_warm_graph(cache, *target, a.positional[0], a);
  }
  if (!a.positional.empty()) return usage(("unexpected argument '" + a.positional[0] + "'").c_str());
  auto target = target_of(a);
  if (target.is_bad()) return fail(target.status());
  KernelCache cache = KernelCache::open(*target);
  if (a.sub == "stats") return cmd_stats(cache);
  if (a.sub == "list") return cmd_list(cache);
  if (a.sub == "prune") {
    auto n = cache.prune();
    if (n.is_bad()) return fail(n.status());
    const KernelCacheSettings o = cache.settings();
    std::error_code ec;
    if (std::filesystem::exists(o.root, ec) && !o.marked) {
      std::printf("nothing pruned: %s carries no %s naming opgraph (opgraph prunes only a root it created)\n",
                  o.root.c_str(), o.marker_file.c_str());
      return 0;
    }
    std::printf("pruned %llu environment(s)\n", static_cast<unsigned long long>(*n));
    return 0;
  }
  return usage(("unknown subcommand '" + a.sub + "'").c_str());
}
