// runtime/compiled_cache.cpp — lookup, commit and reload of cache entries.
// Maintenance (prune, list, clear) is in cache_maintenance.cpp.
#include "runtime/compiled_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "runtime/cache_files.h"
#include "runtime/log.h"

namespace opgraph::runtime {

namespace fs = std::filesystem;

namespace {

std::string env_text(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool read_file(const fs::path& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

bool env_flag(const char* name) {
  std::string v = env_text(name);
  return !v.empty() && v != "0";
}

}  // namespace

CacheOptions CacheOptions::from_env() {
  CacheOptions o;
  if (auto dir = env_text("OPGRAPH_COMPILED_CACHE"); !dir.empty()) {
    o.root = dir;
  } else if (auto xdg = env_text("XDG_CACHE_HOME"); !xdg.empty()) {
    o.root = fs::path(xdg) / "opgraph" / "compiled";
  } else if (auto home = env_text("HOME"); !home.empty()) {
    o.root = fs::path(home) / ".cache" / "opgraph" / "compiled";
  }
  o.disabled = env_flag("OPGRAPH_DISABLE_COMPILED_CACHE");
  o.require_hit = env_flag("OPGRAPH_COMPILED_CACHE_REQUIRE_HIT");
  if (auto cap = env_text("OPGRAPH_COMPILED_CACHE_MAX_BYTES"); !cap.empty()) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(cap.c_str(), &end, 10);
    if (end && *end == '\0') o.max_bytes = v;
    else log(1, "ignoring OPGRAPH_COMPILED_CACHE_MAX_BYTES='" + cap + "' (not a byte count)");
  }
  return o;
}

CompiledCache::CompiledCache(CacheOptions options, CacheEnvironment environment)
    : options_(std::move(options)), env_(std::move(environment)), env_hash_(env_.hash()) {}

std::string CompiledCache::schema_dir_name() {
  std::string name = std::to_string(kCacheSchema);
  name.insert(name.begin(), 'v');
  return name;
}

fs::path CompiledCache::environment_dir() const { return options_.root / schema_dir_name() / env_hash_; }

std::string CompiledCache::entry_name(const KernelRequest& request, std::string_view arch) {
  return request.family + "_" + request.kernel + "_" + std::string(arch) + "_" +
         fnv1a64_hex(request.key(arch)).substr(0, 12);
}

bool CompiledCache::has_record(const KernelRequest& request, std::string_view arch) const {
  if (!enabled()) return false;
  std::error_code ec;
  return fs::exists(environment_dir() / (entry_name(request, arch) + ".json"), ec);
}

CompiledCache::Lookup CompiledCache::load(const std::string& name, const std::string& key, CompiledKernel& out,
                                          std::string& why, std::string* cubin_file) const {
  const fs::path dir = environment_dir();
  std::string record_text;
  if (!read_file(dir / (name + ".json"), record_text)) return Lookup::MISSING;
  if (Status s = cache_files::check_private(dir / (name + ".json"), false); s.is_bad()) {
    return why = s.message(), Lookup::INVALID;
  }
  auto record = nlohmann::json::parse(record_text, nullptr, /*allow_exceptions=*/false);
  auto str = [&](const char* k) -> std::string {
    auto it = record.find(k);
    return it != record.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (record.is_discarded() || !record.is_object()) return why = "record is not a JSON object", Lookup::INVALID;
  auto schema = record.find("schema");
  if (schema == record.end() || !schema->is_number_integer() || schema->get<int>() != kCacheSchema)
    return why = "record schema differs", Lookup::INVALID;
  if (str("environment") != env_hash_) return why = "record names another environment", Lookup::INVALID;
  if (str("key") != key) return why = "record carries another key", Lookup::INVALID;
  auto bytes = record.find("cubin_bytes");
  if (bytes == record.end() || !bytes->is_number_unsigned()) return why = "record lacks cubin_bytes", Lookup::INVALID;
  // The binary is named by its digest, so the record names exactly one.
  const std::string digest = str("cubin_fnv1a64");
  if (digest.size() != 16 || str("cubin_file") != name + "." + digest + ".cubin")
    return why = "record names no well-formed cubin file", Lookup::INVALID;
  if (cubin_file) *cubin_file = str("cubin_file");
  std::string cubin;
  if (!read_file(dir / str("cubin_file"), cubin)) return why = "record without its cubin", Lookup::INVALID;
  if (Status s = cache_files::check_private(dir / str("cubin_file"), false); s.is_bad()) {
    return why = s.message(), Lookup::INVALID;
  }
  if (cubin.size() != bytes->get<std::uint64_t>()) return why = "cubin size differs (truncated?)", Lookup::INVALID;
  if (fnv1a64_hex(cubin) != digest) return why = "cubin digest differs", Lookup::INVALID;
  out.lowered_name = str("lowered_name");
  out.arch = str("arch");
  if (Status s = validate_cubin(cubin, out.lowered_name); s.is_bad()) return why = s.message(), Lookup::INVALID;
  out.cubin = std::move(cubin);
  out.log.clear();
  return Lookup::HIT;
}

Status CompiledCache::trust() const {
  for (const fs::path& dir : {options_.root, options_.root / schema_dir_name(), environment_dir()}) {
    OPGRAPH_CHECK(cache_files::check_private(dir, /*missing_ok=*/true));
  }
  return Status::ok();
}

bool CompiledCache::marked() const { return !options_.root.empty() && cache_files::has_marker(options_.root); }

Status CompiledCache::prepare() {
  if (!enabled()) {
    return {ErrorCode::INVALID_VALUE, options_.root.empty()
                                          ? "the compiled cache has no location (set OPGRAPH_COMPILED_CACHE or HOME)"
                                          : "the compiled cache is off (OPGRAPH_DISABLE_COMPILED_CACHE)"};
  }
  const fs::path schema = options_.root / schema_dir_name();
  const fs::path dir = environment_dir();
  OPGRAPH_CHECK(cache_files::make_dirs(options_.root));
  OPGRAPH_CHECK(cache_files::check_private(options_.root, false));
  OPGRAPH_CHECK(cache_files::write_marker(options_.root));
  for (const fs::path& d : {schema, dir}) {
    OPGRAPH_CHECK(cache_files::make_dirs(d));
    OPGRAPH_CHECK(cache_files::check_private(d, false));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    return {ErrorCode::IO_ERROR, "cannot write into " + dir.string() + ": " + std::strerror(errno)};
  }
  std::error_code ec;
  if (!fs::exists(dir / cache_files::kEnvironmentFile, ec)) {
    OPGRAPH_CHECK(cache_files::write_atomic(dir / cache_files::kEnvironmentFile, env_.to_json() + "\n"));
  }
  return Status::ok();
}

Status CompiledCache::store(const std::string& name, const std::string& key, const CompiledKernel& kernel) {
  const fs::path dir = environment_dir();
  nlohmann::ordered_json record;
  record["schema"] = kCacheSchema;
  record["environment"] = env_hash_;
  record["key"] = key;
  record["arch"] = kernel.arch;
  record["lowered_name"] = kernel.lowered_name;
  const std::string digest = fnv1a64_hex(kernel.cubin);
  const std::string cubin_file = name + "." + digest + ".cubin";
  record["cubin_file"] = cubin_file;
  record["cubin_bytes"] = static_cast<std::uint64_t>(kernel.cubin.size());
  record["cubin_fnv1a64"] = digest;
  // The binary first, the record (the commit marker) after it. NVRTC output is
  // not byte-identical across processes, so each binary is named by its digest:
  // a concurrent writer's record always names a binary that writer completed.
  OPGRAPH_CHECK(cache_files::write_atomic(dir / cubin_file, kernel.cubin));
  return cache_files::write_atomic(dir / (name + ".json"), record.dump(2) + "\n");
}

Result<CompiledKernel> CompiledCache::commit(const std::string& name, const std::string& key,
                                             const CompiledKernel& kernel, const std::string& refused_file,
                                             const Check& check, bool& written) {
  written = false;
  OPGRAPH_CHECK(prepare());
  const fs::path dir = environment_dir();
  cache_files::EnvironmentLock lock(dir, /*wait=*/true);
  std::string why, file;
  if (lock.held()) {
    // The second check: another process may have stored this entry while we compiled.
    CompiledKernel theirs;
    if (load(name, key, theirs, why, &file) == Lookup::HIT && file != refused_file && check(theirs).is_good()) {
      return theirs;
    }
  } else {
    log(1, "compiled cache: cannot lock " + (dir / cache_files::kLockFile).string() +
               "; writing without removing stale files");
  }
  OPGRAPH_CHECK(store(name, key, kernel));
  written = true;
  if (lock.held()) {
    // Every other file of this entry is stale: a doubtful binary, one a crash
    // or a lost race left, a crashed writer's temp file. Writers hold the
    // lock, so none of them is in flight.
    const std::string ours = name + "." + fnv1a64_hex(kernel.cubin) + ".cubin";
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string f = it->path().filename().string();
      if (f == ours || f == name + ".json" || !cache_files::is_file_of_entry(f, name)) continue;
      std::error_code e2;
      if (fs::remove(it->path(), e2)) log(1, "compiled cache: removed stale " + it->path().string());
    }
  }
  // Reload through the hit path: a bad artifact fails here, at build time.
  CompiledKernel reloaded;
  if (load(name, key, reloaded, why) != Lookup::HIT) {
    return Status(ErrorCode::IO_ERROR, "compiled cache: " + name + " does not reload after writing it: " + why);
  }
  Status ok = check(reloaded);
  if (ok.is_bad()) {
    return Status(ok.code(), "compiled cache: " + name + " written but refused on reload: " + ok.message());
  }
  return reloaded;
}

void CompiledCache::touch_environment() {
  if (touched_) return;
  touched_ = true;
  std::error_code ec;
  fs::last_write_time(environment_dir(), fs::file_time_type::clock::now(), ec);
}

Result<CompiledKernel> CompiledCache::get(const KernelRequest& request, std::string_view arch, const Check& check,
                                          const Compile& compile_with) {
  auto compile = [&]() { return compile_with ? compile_with(request, arch) : compile_kernel(request, arch); };
  if (!enabled()) {
    auto compiled = compile();
    if (compiled.is_bad()) return compiled.status();
    OPGRAPH_CHECK(check(*compiled));
    ++stats_.bypassed;
    return compiled;
  }
  const std::string name = entry_name(request, arch);
  const std::string key = request.key(arch);
  std::string why;
  CompiledKernel kernel;
  std::string refused_file;  // the binary of a hit the check refused: never served again
  Lookup found = Lookup::MISSING;
  const Status trusted = trust();
  if (trusted.is_bad()) {
    // Neither read nor written: a folder someone else can write may hold a substituted kernel.
    ++stats_.untrusted;
    why = trusted.message();
    cache_files::log_once("untrusted " + why, 0,
                          "compiled cache: not loading from " + options_.root.string() + ": " + why +
                              "; kernels are compiled in memory");
  } else {
    found = load(name, key, kernel, why, &refused_file);
    if (found == Lookup::HIT) {
      Status ok = check(kernel);
      if (ok.is_good()) {
        ++stats_.hits;
        touch_environment();
        log(1, "compiled cache hit: " + name);
        return kernel;
      }
      found = Lookup::INVALID;
      why = ok.message();
    } else {
      refused_file.clear();
    }
  }
  if (found == Lookup::INVALID) {
    ++stats_.invalid;
    log(1, "compiled cache: doubtful entry " + name + " (" + why + "), treated as a miss");
  }
  ++stats_.misses;
  if (options_.require_hit) {
    return Status(ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED,
                  "compiled cache miss for " + name + " in " + environment_dir().string() +
                      " while OPGRAPH_COMPILED_CACHE_REQUIRE_HIT=1" + (why.empty() ? "" : " (" + why + ")"));
  }
  log(1, "compiled cache miss: " + name + ", compiling");
  auto compiled = compile();
  if (compiled.is_bad()) return compiled.status();
  if (trusted.is_bad()) {
    OPGRAPH_CHECK(check(*compiled));
    return compiled;
  }
  bool written = false;
  auto served = commit(name, key, *compiled, refused_file, check, written);
  if (served.is_bad() && !written) {
    ++stats_.unwritten;
    cache_files::log_once("unwritten " + environment_dir().string(), 0,
                          "compiled cache: cannot store into " + environment_dir().string() + " (" +
                              served.status().message() + "); kernels are served from memory");
    OPGRAPH_CHECK(check(*compiled));
    return compiled;
  }
  if (served.is_bad()) return served.status();
  touch_environment();
  if (!pruned_once_) {
    pruned_once_ = true;
    if (auto p = prune(); p.is_bad()) log(1, "compiled cache prune: " + p.status().message());
  }
  served->log = std::move(compiled->log);
  return served;
}

}  // namespace opgraph::runtime
