// runtime/cache_files.h — what the compiled cache owns under its root, and
// which folders it trusts.
//
// Ownership. The root carries a marker file, OPGRAPH_CACHE.txt, whose first
// line names opgraph; opgraph writes it when it first stores into the root and
// prunes or clears nothing in a root without it. Under a marked root, opgraph
// owns exactly:
//   - environment folders  <root>/v<digits>/<16 hex>/ that hold an
//     environment.json whose facts hash to the folder's name (the way
//     CacheEnvironment::hash names it), are real folders (not links) and
//     belong to this user;
//   - inside such a folder, the files it names: environment.json, the lock
//     file environment.lock, entry records <entry>.json, binaries
//     <entry>.<16 hex>.cubin (<entry> ends in _<12 hex>), and temp files
//     <one of those>.tmp.<pid>.<n>.
// Anything else (a user's file beside the schema roots, a v2/ folder without
// opgraph's environments, a note inside an environment folder) is foreign:
// never removed, never counted toward the size cap.
//
// Trust. A folder is private when it belongs to this process's effective
// user (or to root, who can replace any file anyway) and has neither the
// group- nor the other-write bit. The cache loads from and stores into an
// environment only when the root, the schema root and the environment folder
// (those that exist) are private: anyone who can write one of them could
// substitute a kernel. Files are checked the same way on load. Folders the
// cache creates are made 0755 whatever the umask.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "opgraph/status.h"

namespace opgraph::runtime::cache_files {

inline constexpr std::string_view kMarkerFile = "OPGRAPH_CACHE.txt";
inline constexpr std::string_view kLockFile = "environment.lock";
inline constexpr std::string_view kEnvironmentFile = "environment.json";

// --- trust -----------------------------------------------------------------

// OK when `path` is private (see above); IO_ERROR naming the path, its owner
// or mode, and the rule, otherwise (including when it cannot be stat'ed).
// A missing path is OK when `missing_ok`.
Status check_private(const std::filesystem::path& path, bool missing_ok);

// Creates `dir` and every missing parent with mode 0755 (the umask may only
// clear bits). Existing folders are left as they are. IO_ERROR on failure.
Status make_dirs(const std::filesystem::path& dir);

// Logs `text` at `level` the first time `key` is seen in this process.
void log_once(const std::string& key, int level, std::string_view text);

// --- the marker ------------------------------------------------------------

// True when <root>/OPGRAPH_CACHE.txt exists and its first line names opgraph.
bool has_marker(const std::filesystem::path& root);
// Writes the marker unless present. IO_ERROR when it cannot be written, or
// when a file of that name exists that does not name opgraph.
Status write_marker(const std::filesystem::path& root);

// --- names -----------------------------------------------------------------

// "v" followed by digits.
bool is_schema_dir_name(std::string_view name);
// <entry>.json for an entry name (<...>_<12 hex>, no dot).
bool is_record_file(std::string_view file_name);
// Any file the cache writes inside an environment folder (see above).
bool is_owned_file(std::string_view file_name);
// A file of entry `entry` (record, binary, or a temp of either).
bool is_file_of_entry(std::string_view file_name, std::string_view entry);
// An environment folder opgraph wrote (see above).
bool is_environment_dir(const std::filesystem::path& dir);

// Writes `bytes` to `path` through a temp file beside it and rename(2): readers see
// the old file or the whole new one, never a part. The temp is opened O_NOFOLLOW.
Status write_atomic(const std::filesystem::path& path, std::string_view bytes);

// --- the environment lock --------------------------------------------------

// flock(2) on <environment>/environment.lock: writers of one environment take
// it to write, replace and reload an entry, so no writer removes a binary
// another is about to commit; prune and clear take it before removing the
// folder. Where flock is unavailable held() is false and the caller proceeds
// without the cleanup that needs it.
class EnvironmentLock {
 public:
  // `wait`: block until held; otherwise give up at once when another holds it.
  EnvironmentLock(const std::filesystem::path& environment_dir, bool wait);
  ~EnvironmentLock();
  EnvironmentLock(const EnvironmentLock&) = delete;
  EnvironmentLock& operator=(const EnvironmentLock&) = delete;
  bool held() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace opgraph::runtime::cache_files
