// runtime/cache_maintenance.cpp — prune, list and clear of the compiled cache.
//
// Every file-system call takes an error_code: another process may be writing
// or pruning the same root, so a vanished file is normal, never an error.
#include <algorithm>
#include <cstdlib>

#include "runtime/compiled_cache.h"
#include "runtime/log.h"

namespace opgraph::runtime {

namespace fs = std::filesystem;

namespace {

// "v" followed by digits: a schema root this cache owns.
bool is_schema_dir_name(const std::string& name) {
  return name.size() > 1 && name[0] == 'v' &&
         std::all_of(name.begin() + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::uint64_t tree_bytes(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) {
      auto size = it->file_size(e2);
      if (!e2) total += size;
    }
  }
  return total;
}

std::vector<fs::path> subdirs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_directory(e2)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

fs::file_time_type mtime(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  return ec ? fs::file_time_type::min() : t;
}

}  // namespace

Result<std::uint64_t> CompiledCache::prune() {
  if (options_.max_bytes == 0 || options_.root.empty()) return std::uint64_t{0};
  std::error_code ec;
  if (!fs::exists(options_.root, ec)) return std::uint64_t{0};
  std::uint64_t total = tree_bytes(options_.root);
  if (total <= options_.max_bytes) return std::uint64_t{0};

  struct Candidate {
    fs::path path;
    bool dead_schema;
    fs::file_time_type age;
  };
  std::vector<Candidate> candidates;
  const std::string current_schema = CompiledCache::schema_dir_name();
  const fs::path current_env = environment_dir();
  for (const auto& schema_dir : subdirs(options_.root)) {
    const std::string name = schema_dir.filename().string();
    if (!is_schema_dir_name(name)) continue;
    if (name != current_schema) {
      // A dead schema root: its age is its newest environment's.
      auto age = mtime(schema_dir);
      for (const auto& env : subdirs(schema_dir)) age = std::max(age, mtime(env));
      candidates.push_back({schema_dir, true, age});
      continue;
    }
    for (const auto& env : subdirs(schema_dir)) {
      if (env == current_env) continue;  // never the current environment
      candidates.push_back({env, false, mtime(env)});
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.dead_schema != b.dead_schema) return a.dead_schema;  // dead schema roots first
    return a.age < b.age;                                      // then oldest first
  });
  std::uint64_t removed = 0;
  for (const auto& c : candidates) {
    if (total <= options_.max_bytes) break;
    const std::uint64_t bytes = tree_bytes(c.path);
    fs::remove_all(c.path, ec);
    if (ec) {
      log(1, "compiled cache prune: cannot remove " + c.path.string() + ": " + ec.message());
      continue;
    }
    log(1, "compiled cache prune: removed " + c.path.string());
    total -= std::min(total, bytes);
    ++removed;
  }
  stats_.pruned += removed;
  return removed;
}

std::vector<CacheEnvironmentInfo> CompiledCache::list() const {
  std::vector<CacheEnvironmentInfo> out;
  const fs::path current_env = environment_dir();
  for (const auto& schema_dir : subdirs(options_.root)) {
    const std::string schema = schema_dir.filename().string();
    if (!is_schema_dir_name(schema)) continue;
    for (const auto& env : subdirs(schema_dir)) {
      CacheEnvironmentInfo info;
      info.path = env;
      info.schema = schema;
      info.hash = env.filename().string();
      info.current = env == current_env;
      info.bytes = tree_bytes(env);
      std::error_code ec;
      for (fs::directory_iterator it(env, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path p = it->path();
        if (p.extension() == ".json" && p.filename() != "environment.json") info.entries.push_back(p.stem().string());
      }
      std::sort(info.entries.begin(), info.entries.end());
      out.push_back(std::move(info));
    }
  }
  return out;
}

Status CompiledCache::clear() {
  for (const auto& schema_dir : subdirs(options_.root)) {
    if (!is_schema_dir_name(schema_dir.filename().string())) continue;
    std::error_code ec;
    fs::remove_all(schema_dir, ec);
    if (ec) return {ErrorCode::IO_ERROR, "cannot remove " + schema_dir.string() + ": " + ec.message()};
  }
  return Status::ok();
}

}  // namespace opgraph::runtime
