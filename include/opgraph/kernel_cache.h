// opgraph/kernel_cache.h — the on-disk cache of compiled kernels (NVRTC cubins),
// as `opgraph cache` inspects, prunes, clears and warms it.
//
// The cache's rules (where it lives, what identifies an environment, what opgraph
// owns under its root, when a folder is trusted, when environments are retired)
// are the runtime's (docs/environment.md lists its variables: OPGRAPH_COMPILED_CACHE,
// OPGRAPH_DISABLE_COMPILED_CACHE, OPGRAPH_COMPILED_CACHE_MAX_BYTES,
// OPGRAPH_COMPILED_CACHE_REQUIRE_HIT). This header is the maintenance view of it:
// one KernelCache is the root the environment variables name, seen from one
// TARGET (a DeviceProperties: read from a device, or DeviceProperties::for_arch
// without one), whose environment is the "current" one. Warming compiles for the
// target's arch() (sm_90 -> sm_90a), as the engines do at build, without a device.
// Implemented in src/api/kernel_cache.cpp. Not thread-safe: one per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opgraph/device_properties.h"
#include "opgraph/status.h"

namespace opgraph {

class Graph;  // opgraph/graph.h

struct KernelCacheSettings {
  std::filesystem::path root;   // empty: no location (no HOME): nothing is stored
  bool enabled = false;         // false: OPGRAPH_DISABLE_COMPILED_CACHE, or no location
  bool require_hit = false;     // OPGRAPH_COMPILED_CACHE_REQUIRE_HIT: any miss is an error
  std::uint64_t max_bytes = 0;  // the root's size cap in bytes; 0: never pruned
  bool marked = false;          // the root carries opgraph's marker: prune and clear act only then
  std::string marker_file;      // the marker's file name (OPGRAPH_CACHE.txt)
  Status trust;                 // OK, or the first folder from the root down that is not private
  std::filesystem::path environment_dir;  // <root>/v<schema>/<hash>: the target's environment
  std::vector<std::pair<std::string, std::string>> environment;  // the facts hashed into its name
};

// One environment folder opgraph wrote.
struct KernelCacheEnvironment {
  std::filesystem::path path;
  std::string schema;  // "v1"
  std::string hash;    // the folder's name
  bool current = false;  // the target's
  std::uint64_t bytes = 0;  // opgraph's files only
  std::vector<std::string> entries;  // committed entry names (family_kernel_arch_<12 hex>)
};

struct KernelCacheClearReport {
  std::uint64_t environments_removed = 0;
  std::vector<std::filesystem::path> kept;  // what opgraph did not write (relative to the root)
};

// One kernel a warm-up compiles.
struct WarmKernel {
  std::string owner;  // who names it: "gemm/gemm" (family/engine), a plan name, "smoke"
  std::string name;   // "family/kernel", e.g. "gemm/v2_bf_bf_tt_..."
};

enum class WarmOutcome : std::uint8_t { COMPILED, ALREADY_CACHED, FAILED };

// What warm() reports after each kernel.
struct WarmStep {
  std::size_t done = 0;   // kernels handled so far, this one included
  std::size_t total = 0;
  const WarmKernel* kernel = nullptr;
  WarmOutcome outcome = WarmOutcome::COMPILED;
  double seconds = 0;     // the lookup and, on a miss, the compile
  bool replaced_invalid = false;  // COMPILED over an entry the cache judged invalid
  bool not_stored = false;        // COMPILED but not stored (the reason is logged)
  // COMPILED without a compile of its own: an earlier kernel's compile of the same source and defines
  // holds this one's entry (an unmangled, extern "C" function) as a function symbol, and its cubin is stored.
  bool shared_compile = false;
  Status error;                   // FAILED: why
};

struct WarmSummary {
  std::size_t kernels = 0, compiled = 0, already_cached = 0, failed = 0;
  std::uint64_t invalid_replaced = 0;
  std::uint64_t not_stored = 0;  // compiled but not stored (an unwritable or untrusted folder)
  std::size_t shared_compiles = 0;  // of `compiled`, those served by an earlier kernel's compile (WarmStep)
};

class KernelCache {
 public:
  // The root the environment variables name, with `target`'s environment current.
  // Reads the NVRTC and driver versions when those libraries load (a fact of the
  // environment's identity; "unknown" otherwise). Never fails: a cache with no
  // location reports so in settings().
  static KernelCache open(const DeviceProperties& target);
  // The same root with no target (no environment is current): enough to clear() it.
  static KernelCache open_root();
  ~KernelCache();
  KernelCache(KernelCache&&) noexcept;
  KernelCache& operator=(KernelCache&&) noexcept;

  KernelCacheSettings settings() const;
  // Every environment folder opgraph wrote, under every schema root.
  std::vector<KernelCacheEnvironment> list() const;
  // Retires dead environments until opgraph's files are under the cap; how many.
  // An unmarked or untrusted root is left alone (0).
  Result<std::uint64_t> prune();
  // Removes every environment folder opgraph wrote. INVALID_VALUE without a
  // location; IO_ERROR for a root without the marker or one that is not private
  // (nothing removed) or a file that cannot be removed.
  Result<KernelCacheClearReport> clear();

  // --- warm-up: collect kernels, then compile them ---
  // The target's NVRTC arch ("sm_90a").
  std::string arch() const;
  // Adds every kernel the engines of the manifest declare, each distinct cache key
  // once: `family` "" = every family (opt-in engines included), then the runtime's
  // self-test kernels; a family's name = that family's; kSmokeFamily = the self-test
  // kernels alone. INVALID_VALUE naming the families for an unknown name.
  Status add_declared(std::string_view family);
  // Adds the kernels plan `index` of planned `graph` would compile at build for
  // the cache's target (compiling nothing, opening no device); returns how many
  // the plan names (duplicates of pending ones included). GRAPH_NOT_SUPPORTED
  // (the reason) when the plan's engine would decline it.
  Result<std::size_t> add_plan(const Graph& graph, std::int64_t index);
  const std::vector<WarmKernel>& pending() const;
  // Drops every pending kernel after the first `n`.
  void keep_first(std::size_t n);
  // Compiles every pending kernel into the cache (a hit compiles nothing), calling
  // `on_step` after each; goes on past a failure (counted in the summary). Fails
  // before compiling anything when the cache cannot store at all (INVALID_VALUE:
  // off or no location; IO_ERROR naming the folder and the rule).
  // `jobs` threads (0: the machine's hardware threads) compile the programs the missing entries need first, each
  // program once (a build's extern "C" entries share one compile); the steps then report in order.
  Result<WarmSummary> warm(const std::function<void(const WarmStep&)>& on_step, unsigned jobs = 0);

  // The runtime's self-test kernel family (y = a*x + b specialisations).
  static constexpr std::string_view kSmokeFamily = "smoke";

  struct Impl;

 private:
  explicit KernelCache(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace opgraph
