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
//   `invalid` (and as misses) and are overwritten; the replacement removes the
//   entry's old binaries and temp files (a doubtful binary, one left by a
//   crash, one a racing writer lost with).
// - A miss compiles, then, holding the environment's lock (cache_files.h),
//   checks again (another process may have stored it meanwhile), writes,
//   removes the entry's stale files and RELOADS from disk through the same
//   path a hit takes, so a bad artifact fails at build time, not at the next
//   start-up.
// - The cache touches only its own (cache_files.h): the root carries the
//   marker OPGRAPH_CACHE.txt, written on the first store; prune and clear act
//   only in a marked root, on environment folders and files opgraph wrote;
//   foreign files and folders are never removed nor counted toward the cap.
// - Trust: the root, v<schema>/ and the environment folder must belong to
//   this user (or root) and be writable by no one else, else nothing is
//   loaded from or stored there (each request compiles in memory: a miss,
//   counted in `untrusted`, logged once per folder per process).
// - Dead environments are retired: a process's first write prunes whole
//   environment directories (never single entries), dead schema roots first,
//   then oldest first (by the directory's mtime, refreshed on each process's
//   first hit or write), until opgraph's files under the root are under
//   max_bytes; the current environment, and any environment another process
//   holds locked, is never a candidate.
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
  std::uint64_t hits = 0;       // served from disk
  std::uint64_t misses = 0;     // compiled (includes invalid, untrusted and unwritten)
  std::uint64_t bypassed = 0;   // compiled with the cache off
  std::uint64_t invalid = 0;    // doubtful entries found (each also a miss)
  std::uint64_t untrusted = 0;  // misses because a folder is not private (nothing read or written)
  std::uint64_t unwritten = 0;  // compiled but not stored (the write failed; served from memory)
  std::uint64_t pruned = 0;     // environment directories removed
};

// What clear() did: the environment folders it removed, and what it left
// because opgraph did not write it (paths relative to the root).
struct CacheClearReport {
  std::uint64_t environments_removed = 0;
  std::vector<std::filesystem::path> kept;
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
  // How a miss is compiled; compile_kernel when empty (KernelCache::warm hands an entry the cubin of an
  // earlier compile of the same source and defines that already holds it).
  using Compile = std::function<Result<CompiledKernel>(const KernelRequest&, std::string_view arch)>;

  CompiledCache(CacheOptions options, CacheEnvironment environment);

  // The cubin for `request` on `arch`: a hit reads it; a miss compiles with
  // NVRTC, writes, reloads and checks. Errors: those of compile_kernel; a
  // miss under require_hit (GRAPH_EXECUTION_PLAN_CREATION_FAILED naming the
  // entry); IO_ERROR / the check's error when the written entry does not
  // reload. A failed write (read-only disk) or an untrusted folder is logged
  // once and the compiled cubin served from memory after the check
  // (stats().unwritten / untrusted say so). `compile` replaces compile_kernel.
  Result<CompiledKernel> get(const KernelRequest& request, std::string_view arch, const Check& check,
                             const Compile& compile = {});

  // Makes the current environment folder ready to store into: creates the
  // root, v<schema>/ and the environment folder (mode 0755), writes the
  // root's marker and environment.json, checks all three folders are private
  // and writable. IO_ERROR naming the folder and the rule otherwise;
  // INVALID_VALUE when the cache is off or has no location. get() calls it
  // before each write; `cache warm` calls it first to fail before compiling.
  Status prepare();
  // OK when every existing folder from the root to the current environment
  // is private (cache_files.h); the first folder that is not, otherwise.
  Status trust() const;
  // The root carries opgraph's marker (prune and clear act only then).
  bool marked() const;

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
  // Whether the current environment holds a record for `request` (present, not checked: get() checks it).
  bool has_record(const KernelRequest& request, std::string_view arch) const;

  // Removes whole dead environments (see the rules) until opgraph's files
  // under the root are under max_bytes; returns how many were removed. An
  // unmarked or untrusted root is left alone (0, logged at level 1). Never
  // errors on a race with another process.
  Result<std::uint64_t> prune();
  // Every environment folder opgraph wrote under every schema root, current
  // marked; bytes count opgraph's files only.
  std::vector<CacheEnvironmentInfo> list() const;
  // Removes every environment folder opgraph wrote (its files, then the
  // folder and an emptied schema root) and reports what it kept. Errors:
  // INVALID_VALUE without a location; IO_ERROR for a root without the marker
  // or one that is not private (nothing is removed) or a file that cannot be
  // removed. A root that does not exist is cleared already.
  Result<CacheClearReport> clear();

 private:
  enum class Lookup { HIT, MISSING, INVALID };
  // `cubin_file`, when given, receives the binary's file name the record names.
  Lookup load(const std::string& name, const std::string& key, CompiledKernel& out, std::string& why,
              std::string* cubin_file = nullptr) const;
  // Under the environment lock: a second lookup (a valid entry another
  // process stored meanwhile, other than `refused_file`, is served), the
  // write, the removal of the entry's stale files, and the reload + check.
  // `written` is set once the entry was committed (errors after it are the
  // reload's, not the write's).
  Result<CompiledKernel> commit(const std::string& name, const std::string& key, const CompiledKernel& kernel,
                                const std::string& refused_file, const Check& check, bool& written);
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
