// tools/cli_cache.cpp — the `opgraph cache` subcommands:
//
//   opgraph cache stats  [--arch ARCH]   location, switches, size, environments
//   opgraph cache list   [--arch ARCH]   every environment and its entries
//   opgraph cache prune  [--arch ARCH]   retire dead environments above the cap
//   opgraph cache clear                  remove every environment opgraph wrote
//   opgraph cache warm --all [--family F] [--limit N] [--arch ARCH]
//                                        compile every kernel the manifest's engines declare
//   opgraph cache warm GRAPH.json [--modes A,FALLBACK] [--arch ARCH]
//                                        compile what the graph's plans need
//
// ARCH (e.g. sm_90a) names the target without a GPU (DeviceProperties::for_arch);
// without it the tool reads device 0, which loads libcuda. Kernels compile for
// the target's arch() (sm_90 -> sm_90a), as the engines do at build. The
// cache's environment variables apply (OPGRAPH_COMPILED_CACHE, ...). prune and
// clear touch only what opgraph wrote (src/runtime/cache_files.h) and say what
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
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli_common.h"
#include "engines/manifest.h"
#include "engines/smoke/smoke_kernels.h"
#include "opgraph/device_properties.h"
#include "opgraph/graph.h"
#include "plan/manifest.h"
#include "runtime/cache_files.h"
#include "runtime/compiled_cache.h"
#include "runtime/device.h"

using namespace opgraph;

namespace {

struct Args {
  std::string sub;
  std::optional<std::string> arch;
  bool all = false;
  std::optional<std::string> family;  // warm --all: one family only
  std::optional<std::size_t> limit;   // warm --all: the first N kernels only
  std::optional<std::string> modes;   // warm GRAPH.json: the heuristic modes planned
  std::vector<std::string> positional;
};

int usage(const char* why) {
  std::fprintf(stderr,
               "opgraph cache: %s\n"
               "usage: opgraph cache stats|list|prune|clear [--arch ARCH]\n"
               "       opgraph cache warm --all [--family F] [--limit N] [--arch ARCH]\n"
               "       opgraph cache warm GRAPH.json [--modes A,FALLBACK] [--arch ARCH]\n",
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

// "[#####.....] 3/40 gemm/v2_bf_bf_tt_...: compiled in 4.2 s": one line per kernel.
void progress(std::size_t done, std::size_t total, const std::string& what) {
  constexpr int kWidth = 30;
  const int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kWidth - filled), '.');
  std::fprintf(stderr, "[%s] %zu/%zu %s\n", bar.c_str(), done, total, what.c_str());
}

// One kernel to warm: the request and who names it ("gemm/gemm", or the plan).
struct Job {
  std::string owner;
  runtime::KernelRequest request;
};

// Adds `r` unless a job with the same cache key is there already.
void add_job(std::vector<Job>& jobs, std::set<std::string>& keys, const std::string& arch, std::string owner,
             const runtime::KernelRequest& r) {
  if (keys.insert(r.key(arch)).second) jobs.push_back({std::move(owner), r});
}

// Compiles every job into the cache, one progress line each; goes on past a
// failure. 0 when every kernel is stored, 1 (after the failures' count) otherwise.
int warm(runtime::CompiledCache& cache, const std::string& arch, const std::vector<Job>& jobs) {
  if (Status ready = cache.prepare(); ready.is_bad()) {
    return fail(Status(ready.code(), "cannot warm " + cache.options().root.string() + ": " + ready.message()));
  }
  auto check = [](const runtime::CompiledKernel& k) { return runtime::validate_cubin(k.cubin, k.lowered_name); };
  std::size_t failed = 0, compiled = 0, cached = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const runtime::KernelRequest& r = jobs[i].request;
    const runtime::CacheStats before = cache.stats();
    const auto t0 = std::chrono::steady_clock::now();
    auto k = cache.get(r, arch, check);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const runtime::CacheStats& after = cache.stats();
    std::string what = r.family + "/" + r.kernel + ": ";
    char took[32];
    std::snprintf(took, sizeof(took), " in %.1f s", secs);
    if (k.is_bad()) {
      ++failed;
      what += "failed: " + k.status().to_string();
    } else if (after.hits > before.hits) {
      ++cached;
      what += "already cached";
    } else {
      ++compiled;
      what += "compiled" + std::string(took);
      if (after.invalid > before.invalid) what += " (replaced an invalid entry)";
      if (after.unwritten + after.untrusted > before.unwritten + before.untrusted) what += ", NOT stored";
    }
    progress(i + 1, jobs.size(), what);
  }
  const auto& s = cache.stats();
  std::printf("warmed %zu kernels for %s in %s: %llu compiled, %llu already cached, %llu invalid replaced, "
              "%zu failed\n",
              jobs.size() - failed, arch.c_str(), cache.environment_dir().c_str(),
              static_cast<unsigned long long>(compiled), static_cast<unsigned long long>(cached),
              static_cast<unsigned long long>(s.invalid), failed);
  if (failed > 0) {
    return fail(Status(ErrorCode::NVRTC_COMPILATION_FAILED,
                       std::to_string(failed) + " of " + std::to_string(jobs.size()) +
                           " kernels failed (each is named above)"));
  }
  if (s.unwritten + s.untrusted > 0) {
    const auto lost = std::to_string(s.unwritten + s.untrusted);
    return fail(Status(ErrorCode::IO_ERROR, lost + " of " + std::to_string(jobs.size()) +
                                                " kernels compiled but not stored in " +
                                                cache.environment_dir().string() + " (the reason is logged above)"));
  }
  return 0;
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

// The runtime's self-test kernels (engines/smoke/), warmed after the
// manifest's: not an engine, but what the runtime's cold/warm and REQUIRE_HIT
// checks load (bench/runtime_h200.sh). `--family smoke` names them alone.
constexpr std::string_view kSmoke = "smoke";

// warm --all: every kernel every engine of the manifest declares, then the
// smoke kernels (or one family's; the first --limit of them).
int cmd_warm_all(runtime::CompiledCache& cache, const std::string& arch, const Args& a) {
  std::vector<Job> jobs;
  std::set<std::string> keys;
  const plan::Manifest& m = plan::active_manifest(engines::default_manifest());
  if (a.family != kSmoke) {
    Status walked = plan::declared_kernels(m, a.family.value_or(""), [&](const plan::SlotRef& slot,
                                                                         const runtime::KernelRequest& r) {
      add_job(jobs, keys, arch, slot.family->name + "/" + slot.slot->name, r);
      return Status::ok();
    });
    if (walked.code() == ErrorCode::INVALID_VALUE && a.family)
      return fail(Status(walked.code(), walked.message() + "; or smoke, the runtime's self-test kernels"));
    if (walked.is_bad()) return fail(walked);
  }
  if (!a.family || a.family == kSmoke)
    for (const auto& r : smoke::declared_specialisations()) add_job(jobs, keys, arch, std::string(kSmoke), r);
  if (a.limit && *a.limit < jobs.size()) jobs.resize(*a.limit);
  std::fprintf(stderr, "warming %zu kernel(s) declared by %s for %s\n", jobs.size(),
               a.family ? ("family " + *a.family).c_str() : "every family of the manifest", arch.c_str());
  return warm(cache, arch, jobs);
}

// warm GRAPH.json: plans the graph for the target (as `opgraph plan` does:
// without a GPU under --arch) and compiles what each of our plans would
// compile at build. A plan its engine declines names no kernel (it says why).
int cmd_warm_graph(runtime::CompiledCache& cache, const DeviceProperties& target, const std::string& path,
                   const Args& a) {
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
  const std::string arch = target.arch();
  const plan::Manifest& m = plan::active_manifest(engines::default_manifest());
  std::vector<Job> jobs;
  std::set<std::string> keys;
  const std::int64_t n = g->get_execution_plan_count();
  for (std::int64_t i = 0; i < n; ++i) {
    const PlanConfig c = g->get_engine_and_knobs_at_index(i).value();
    const std::string name = g->get_plan_name_at_index(i).value();
    std::size_t named = 0;
    auto collect = [&](const plan::SlotRef&, const runtime::KernelRequest& r) {
      ++named;
      add_job(jobs, keys, arch, name, r);
      return Status::ok();
    };
    Status s = plan::plan_kernels(m, *g, c, g->plan_target(), collect);
    if (s.code() == ErrorCode::GRAPH_NOT_SUPPORTED) {
      std::fprintf(stderr, "plan %lld %s: declined, no kernel: %s\n", static_cast<long long>(i), name.c_str(),
                   s.message().c_str());
      continue;
    }
    if (s.is_bad()) return cli::fail(cmd, name + ": " + s.to_string());
    std::fprintf(stderr, "plan %lld %s: %zu kernel(s)\n", static_cast<long long>(i), name.c_str(), named);
  }
  if (jobs.empty()) {
    std::printf("%s: none of its %lld plan(s) compiles kernels (the reference and cuDNN compile none); "
                "nothing to warm\n",
                path.c_str(), static_cast<long long>(n));
    return 0;
  }
  return warm(cache, arch, jobs);
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
    } else if (s == "--limit") {
      if (++i >= argc) return usage("--limit needs a count");
      const std::string v = argv[i];
      if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos)
        return usage(("--limit takes a count, not '" + v.substr(0, 40) + "'").c_str());
      a.limit = static_cast<std::size_t>(std::stoul(v));
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
  if (a.sub == "warm") {
    if (a.all == !a.positional.empty() || a.positional.size() > 1)
      return usage("warm takes --all or one GRAPH.json");
    if (a.all && a.modes) return usage("--modes belongs to warm GRAPH.json");
    if (!a.all && (a.family || a.limit)) return usage("--family and --limit belong to warm --all");
    auto target = target_of(a);
    if (target.is_bad()) return fail(target.status());
    runtime::CompiledCache cache(runtime::CacheOptions::from_env(),
                                 runtime::CacheEnvironment::current(*target, /*probe_driver=*/true));
    if (a.all) return cmd_warm_all(cache, target->arch(), a);
    return cmd_warm_graph(cache, *target, a.positional[0], a);
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
  return usage(("unknown subcommand '" + a.sub + "'").c_str());
}
