// runtime/compiled_cache.h — the on-disk cache of compiled kernels (cubins).
//
// Layout: <root>/v<kCacheSchema>/<environment hash>/ holds environment.json
// (the facts the hash covers, for people) and, per kernel specialisation, an
// entry named readably <name> = family_kernel_arch_<12 hex of the key hash>:
//   <name>.json               the record: schema, environment hash, the FULL
//                             key, the lowered symbol, the cubin's file name,
//                             size and FNV-1a digest;
//   <name>.<digest>.cubin     the ELF NVRTC produced, named by its digest
//                             (NVRTC output differs byte-wise between
//                             processes, so two racing writers never overwrite
//                             each other's binary).
//
// The rules (the seed's "compiled-plan cache", for cubins):
// - Identity is the whole environment, hashed (cache_environment.h).
// - An entry is reused only under its own embedded key: the record is compared
//   with the request's full key on every load. The cubin is written first and
//   the record after it (the commit marker), each to a temp file then
//   rename(2), so a crash or a concurrent writer never leaves a loadable entry
//   without its key; the record names its cubin by digest and size.
// - Anything doubtful is a miss, never an error: a missing, malformed,
//   mismatched or truncated entry, or one `check` refuses (on a GPU,
//   cuModuleLoadData; without one, validate_cubin). Such entries count as
//   `invalid` (and as misses) and are overwritten.
// - A miss compiles, writes, and RELOADS from disk through the same path a hit
//   takes, so a bad artifact fails at build time, not at the next start-up.
// - Dead environments are retired: a process's first write prunes whole
//   environment directories (never single entries), dead schema roots first,
//   then oldest first (by the directory's mtime, refreshed on each process's
//   first hit or write), until the root is under max_bytes; the current
//   environment is never a candidate.
// - Location: OPGRAPH_COMPILED_CACHE, else $XDG_CACHE_HOME/opgraph/compiled,
//   else $HOME/.cache/opgraph/compiled. OPGRAPH_DISABLE_COMPILED_CACHE=1 turns
//   it off (every request compiles: "bypassed"). OPGRAPH_COMPILED_CACHE_MAX_BYTES
//   caps the root (default 4 GiB; 0 disables pruning).
//   OPGRAPH_COMPILED_CACHE_REQUIRE_HIT=1 makes any miss an error (warm CI).
// - Without a GPU the cache works for compile-only use: the environment comes
//   from a DeviceProperties target and the reload check is validate_cubin.
//
// A CompiledCache is thread-compatible (one per thread, or guard it); any
// number of processes may share one root.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "opgraph/status.h"
#include "runtime/cache_environment.h"
#include "runtime/nvrtc_compiler.h"

namespace opgraph::runtime {

inline constexpr int kCacheSchema = 1;
inline constexpr std::uint64_t kDefaultCacheMaxBytes = 4ull << 30;

struct CacheOptions {
  std::filesystem::path root;  // empty: no location, every request is bypassed
  bool disabled = false;
  bool require_hit = false;
  std::uint64_t max_bytes = kDefaultCacheMaxBytes;  // 0: never prune

  // From the environment variables in the file comment.
  static CacheOptions from_env();
};

// Per CompiledCache object (a process normally has one per device).
struct CacheStats {
  std::uint64_t hits = 0;      // served from disk
  std::uint64_t misses = 0;    // compiled and written (includes invalid entries replaced)
  std::uint64_t bypassed = 0;  // compiled with the cache off
  std::uint64_t invalid = 0;   // doubtful entries found (each also a miss)
  std::uint64_t pruned = 0;    // environment directories removed
};

struct CacheEnvironmentInfo {
  std::filesystem::path path;
  std::string schema;  // "v1"
  std::string hash;    // directory name
  bool current = false;
  std::uint64_t bytes = 0;
  std::vector<std::string> entries;  // committed entry names (records present)
};

class CompiledCache {
 public:
  // Validates a cubin before it is served (see the rules). Returning a bad
  // Status makes the entry a miss (on load) or the build fail (on reload).
  using Check = std::function<Status(const CompiledKernel&)>;

  CompiledCache(CacheOptions options, CacheEnvironment environment);

  // The cubin for `request` on `arch`: a hit reads it; a miss compiles with
  // NVRTC, writes, reloads and checks. Errors: those of compile_kernel; a
  // miss under require_hit (GRAPH_EXECUTION_PLAN_CREATION_FAILED naming the
  // entry); IO_ERROR / the check's error when the written entry does not
  // reload. A failed write (read-only disk) is logged and the compiled cubin
  // served from memory after the check.
  Result<CompiledKernel> get(const KernelRequest& request, std::string_view arch, const Check& check);

  const CacheStats& stats() const noexcept { return stats_; }
  const CacheOptions& options() const noexcept { return options_; }
  const CacheEnvironment& environment() const noexcept { return env_; }
  bool enabled() const noexcept { return !options_.disabled && !options_.root.empty(); }
  // <root>/v<schema>/<hash>
  std::filesystem::path environment_dir() const;
  // "v<kCacheSchema>"
  static std::string schema_dir_name();
  // family_kernel_arch_<12 hex>
  static std::string entry_name(const KernelRequest& request, std::string_view arch);

  // Removes whole dead environments (see the rules) until the root is under
  // max_bytes; returns how many were removed. Never errors on a race with
  // another process; IO_ERROR only if the root cannot be read.
  Result<std::uint64_t> prune();
  // Every environment under every schema root, current marked.
  std::vector<CacheEnvironmentInfo> list() const;
  // Removes every schema root (v<N>) under the root; other files are kept.
  Status clear();

 private:
  enum class Lookup { HIT, MISSING, INVALID };
  Lookup load(const std::string& name, const std::string& key, CompiledKernel& out, std::string& why) const;
  Status store(const std::string& name, const std::string& key, const CompiledKernel& kernel);
  void touch_environment();

  CacheOptions options_;
  CacheEnvironment env_;
  std::string env_hash_;
  CacheStats stats_;
  bool pruned_once_ = false;
  bool touched_ = false;
};

}  // namespace opgraph::runtime
