// runtime/cache_maintenance.cpp — prune, list and clear of the compiled cache.
//
// They act only on what opgraph wrote (cache_files.h): environment folders
// recognised by their environment.json, and inside them the files opgraph
// names. Anything else under the root is never removed nor counted.
//
// Every file-system call takes an error_code: another process may be writing
// or pruning the same root, so a vanished file is normal, never an error.
#include <algorithm>
#include <cstdlib>

#include "runtime/cache_files.h"
#include "runtime/compiled_cache.h"
#include "runtime/log.h"

namespace opgraph::runtime {

namespace fs = std::filesystem;

namespace {

// Real folders (not links) directly under `dir`, sorted.
std::vector<fs::path> subdirs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_directory(e2) && !it->is_symlink(e2)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Schema roots v<N> under the root, each with the environment folders opgraph wrote in it.
std::vector<std::pair<fs::path, std::vector<fs::path>>> owned_environments(const fs::path& root) {
  std::vector<std::pair<fs::path, std::vector<fs::path>>> out;
  for (const auto& schema_dir : subdirs(root)) {
    if (!cache_files::is_schema_dir_name(schema_dir.filename().string())) continue;
    std::vector<fs::path> envs;
    for (const auto& env : subdirs(schema_dir)) {
      if (cache_files::is_environment_dir(env)) envs.push_back(env);
    }
    out.emplace_back(schema_dir, std::move(envs));
  }
  return out;
}

// Bytes of opgraph's files in an environment folder (foreign files do not count).
std::uint64_t owned_bytes(const fs::path& env) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(env, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (!it->is_regular_file(e2) || !cache_files::is_owned_file(it->path().filename().string())) continue;
    auto size = it->file_size(e2);
    if (!e2) total += size;
  }
  return total;
}

fs::file_time_type mtime(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  return ec ? fs::file_time_type::min() : t;
}

enum class Removal { REMOVED, BUSY, FAILED };

// Removes opgraph's files of `env`, then the folder if nothing foreign is
// left in it, then its schema root if that is left empty. `wait`: wait for a
// writer holding the environment's lock (clear) or skip the folder (prune).
// Foreign files left behind are appended to `kept`.
Removal remove_environment(const fs::path& env, bool wait, std::vector<fs::path>& kept, std::string& why) {
  cache_files::EnvironmentLock lock(env, wait);
  if (!lock.held() && !wait) return Removal::BUSY;
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(env, ec), end; !ec && it != end; it.increment(ec)) files.push_back(it->path());
  if (ec) return why = "cannot read " + env.string() + ": " + ec.message(), Removal::FAILED;
  // The record (the commit marker) before its binary, the lock file last.
  std::stable_sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
    auto rank = [](const fs::path& p) {
      const std::string f = p.filename().string();
      return f == cache_files::kLockFile ? 2 : cache_files::is_record_file(f) ? 0 : 1;
    };
    return rank(a) < rank(b);
  });
  for (const auto& f : files) {
    std::error_code e2;
    const bool regular = fs::is_regular_file(fs::symlink_status(f, e2));
    if (!regular || !cache_files::is_owned_file(f.filename().string())) {
      kept.push_back(f);
      continue;
    }
    fs::remove(f, e2);
    if (e2) return why = "cannot remove " + f.string() + ": " + e2.message(), Removal::FAILED;
  }
  fs::remove(env, ec);  // only an empty folder goes; one with foreign files stays
  fs::remove(env.parent_path(), ec);
  return Removal::REMOVED;
}

}  // namespace

Result<std::uint64_t> CompiledCache::prune() {
  if (options_.max_bytes == 0 || options_.root.empty()) return std::uint64_t{0};
  std::error_code ec;
  if (!fs::exists(options_.root, ec)) return std::uint64_t{0};
  if (!marked()) {
    log(1, "compiled cache prune: " + options_.root.string() + " carries no " + std::string(cache_files::kMarkerFile) +
               " naming opgraph; nothing pruned");
    return std::uint64_t{0};
  }
  if (Status s = cache_files::check_private(options_.root, false); s.is_bad()) {
    log(1, "compiled cache prune: " + s.message() + "; nothing pruned");
    return std::uint64_t{0};
  }

  struct Candidate {
    fs::path path;
    bool dead_schema;
    fs::file_time_type age;
    std::uint64_t bytes;
  };
  std::vector<Candidate> candidates;
  std::uint64_t total = 0;
  const std::string current_schema = CompiledCache::schema_dir_name();
  const fs::path current_env = environment_dir();
  for (const auto& [schema_dir, envs] : owned_environments(options_.root)) {
    for (const auto& env : envs) {
      const std::uint64_t bytes = owned_bytes(env);
      total += bytes;
      if (env == current_env) continue;  // never the current environment
      candidates.push_back({env, schema_dir.filename().string() != current_schema, mtime(env), bytes});
    }
  }
  if (total <= options_.max_bytes) return std::uint64_t{0};
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.dead_schema != b.dead_schema) return a.dead_schema;  // dead schema roots first
    return a.age < b.age;                                      // then oldest first
  });
  std::uint64_t removed = 0;
  for (const auto& c : candidates) {
    if (total <= options_.max_bytes) break;
    std::vector<fs::path> kept;
    std::string why;
    switch (remove_environment(c.path, /*wait=*/false, kept, why)) {
      case Removal::BUSY:
        log(1, "compiled cache prune: " + c.path.string() + " is in use by another process; kept");
        continue;
      case Removal::FAILED:
        log(1, "compiled cache prune: " + why);
        continue;
      case Removal::REMOVED:
        break;
    }
    log(1, "compiled cache prune: removed " + c.path.string() +
               (kept.empty() ? std::string() : " (" + std::to_string(kept.size()) + " foreign file(s) kept)"));
    total -= std::min(total, c.bytes);
    ++removed;
  }
  stats_.pruned += removed;
  return removed;
}

std::vector<CacheEnvironmentInfo> CompiledCache::list() const {
  std::vector<CacheEnvironmentInfo> out;
  const fs::path current_env = environment_dir();
  for (const auto& [schema_dir, envs] : owned_environments(options_.root)) {
    for (const auto& env : envs) {
      CacheEnvironmentInfo info;
      info.path = env;
      info.schema = schema_dir.filename().string();
      info.hash = env.filename().string();
      info.current = env == current_env;
      info.bytes = owned_bytes(env);
      std::error_code ec;
      for (fs::directory_iterator it(env, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string f = it->path().filename().string();
        if (cache_files::is_record_file(f)) info.entries.push_back(it->path().stem().string());
      }
      std::sort(info.entries.begin(), info.entries.end());
      out.push_back(std::move(info));
    }
  }
  return out;
}

Result<CacheClearReport> CompiledCache::clear() {
  if (options_.root.empty()) return Status(ErrorCode::INVALID_VALUE, "the compiled cache has no location");
  CacheClearReport report;
  std::error_code ec;
  if (!fs::exists(options_.root, ec)) return report;
  if (!marked()) {
    return Status(ErrorCode::IO_ERROR, options_.root.string() + " carries no " + std::string(cache_files::kMarkerFile) +
                                           " naming opgraph: opgraph clears only a cache root it created; nothing "
                                           "removed");
  }
  if (Status s = cache_files::check_private(options_.root, false); s.is_bad()) {
    return Status(s.code(), s.message() + "; nothing removed");
  }
  std::vector<fs::path> kept;  // foreign files inside environment folders
  std::vector<fs::path> touched;  // schema roots that held opgraph's environments
  for (const auto& [schema_dir, envs] : owned_environments(options_.root)) {
    if (!envs.empty()) touched.push_back(schema_dir);
    for (const auto& env : envs) {
      std::string why;
      if (remove_environment(env, /*wait=*/true, kept, why) == Removal::FAILED) return Status(ErrorCode::IO_ERROR, why);
      ++report.environments_removed;
      log(1, "compiled cache clear: removed " + env.string());
    }
  }
  // Everything else beside the marker was not opgraph's: name it, one level
  // down in a schema root opgraph used (its foreign neighbours), whole elsewhere.
  auto covered = [&](const fs::path& p) {
    return std::any_of(kept.begin(), kept.end(), [&](const fs::path& k) { return k == p || k.parent_path() == p; });
  };
  for (fs::directory_iterator it(options_.root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() == cache_files::kMarkerFile) continue;
    if (std::find(touched.begin(), touched.end(), it->path()) == touched.end()) {
      kept.push_back(it->path());
      continue;
    }
    std::error_code e2;
    for (fs::directory_iterator in(it->path(), e2), stop; !e2 && in != stop; in.increment(e2)) {
      if (!covered(in->path())) kept.push_back(in->path());
    }
  }
  std::sort(kept.begin(), kept.end());
  for (const auto& k : kept) report.kept.push_back(k.lexically_relative(options_.root));
  return report;
}

}  // namespace opgraph::runtime
