// runtime/cache_files.cpp — ownership and trust rules of the compiled cache.
#include "runtime/cache_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "runtime/cache_environment.h"
#include "runtime/log.h"

namespace opgraph::runtime::cache_files {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMarkerFirstLine = "opgraph compiled-kernel cache";

bool is_hex(std::string_view s, std::size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// <file>.tmp.<digits>.<digits> -> <file>; anything else unchanged.
std::string_view strip_temp(std::string_view name) {
  const auto at = name.rfind(".tmp.");
  if (at == std::string_view::npos) return name;
  std::string_view tail = name.substr(at + 5);
  const auto dot = tail.find('.');
  auto digits = [](std::string_view d) {
    return !d.empty() && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (dot == std::string_view::npos || !digits(tail.substr(0, dot)) || !digits(tail.substr(dot + 1))) return name;
  return name.substr(0, at);
}

// <...>_<12 hex>, no dot, no slash.
bool is_entry_name(std::string_view name) {
  if (name.size() < 14 || name.find_first_of("./") != std::string_view::npos) return false;
  return name[name.size() - 13] == '_' && is_hex(name.substr(name.size() - 12), 12);
}

// <entry>.<16 hex>.cubin
bool is_cubin_file(std::string_view name) {
  if (!ends_with(name, ".cubin") || name.size() < 6 + 17) return false;
  std::string_view stem = name.substr(0, name.size() - 6);
  return stem[stem.size() - 17] == '.' && is_hex(stem.substr(stem.size() - 16), 16) &&
         is_entry_name(stem.substr(0, stem.size() - 17));
}

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

}  // namespace

Status write_atomic(const fs::path& path, std::string_view bytes) {
  static std::atomic<unsigned> counter{0};
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return {ErrorCode::IO_ERROR, "cannot create " + tmp.string() + ": " + std::strerror(errno)};
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return {ErrorCode::IO_ERROR, "cannot write " + tmp.string() + ": " + why};
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return {ErrorCode::IO_ERROR, "cannot commit " + path.string() + ": " + why};
  }
  return Status::ok();
}

Status check_private(const fs::path& path, bool missing_ok) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if ((errno == ENOENT || errno == ENOTDIR) && missing_ok) return Status::ok();
    return {ErrorCode::IO_ERROR, "cannot stat " + path.string() + ": " + std::strerror(errno)};
  }
  const uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0) {
    return {ErrorCode::IO_ERROR,
            path.string() + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user (uid " +
                std::to_string(me) +
                ") nor root: the compiled cache uses only folders and files of its own user, since their owner "
                "could substitute a kernel"};
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    return {ErrorCode::IO_ERROR, path.string() + " is writable by " +
                                     ((st.st_mode & S_IWOTH) ? std::string("others") : std::string("its group")) +
                                     " (mode " + mode_text(st.st_mode) +
                                     "): the compiled cache uses only folders and files no one else can write, since "
                                     "anyone who can write there could substitute a kernel (chmod go-w fixes it)"};
  }
  return Status::ok();
}

Status make_dirs(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return Status::ok();
  const fs::path parent = dir.parent_path();
  if (!parent.empty() && parent != dir) OPGRAPH_CHECK(make_dirs(parent));
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return {ErrorCode::IO_ERROR, "cannot create " + dir.string() + ": " + std::strerror(errno)};
  }
  if (!fs::is_directory(dir, ec)) return {ErrorCode::IO_ERROR, "cannot create " + dir.string() + ": not a folder"};
  return Status::ok();
}

void log_once(const std::string& key, int level, std::string_view text) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!seen.insert(key).second) return;
  }
  log(level, text);
}

bool has_marker(const fs::path& root) {
  std::ifstream in(root / kMarkerFile);
  std::string first;
  return in && std::getline(in, first) && first.rfind(kMarkerFirstLine, 0) == 0;
}

Status write_marker(const fs::path& root) {
  const fs::path marker = root / kMarkerFile;
  std::error_code ec;
  if (fs::exists(marker, ec)) {
    if (has_marker(root)) return Status::ok();
    return {ErrorCode::IO_ERROR, marker.string() +
                                     " exists and does not name opgraph: the folder is not opgraph's compiled cache, "
                                     "so nothing is stored there (point OPGRAPH_COMPILED_CACHE elsewhere)"};
  }
  std::ostringstream text;
  text << kMarkerFirstLine << " (schema roots v<N>/)\n"
       << "opgraph stores NVRTC-compiled kernels here, one folder per environment: v<N>/<environment hash>/.\n"
       << "`opgraph cache prune` and `opgraph cache clear` remove only the environment folders and entry files\n"
       << "opgraph wrote; anything else in this folder is left alone and never counted toward the size cap.\n"
       << "Kernels are loaded only while this folder, v<N>/ and the environment folder belong to their user and\n"
       << "no one else can write them. The rules: docs/environment.md in the opgraph sources.\n";
  const fs::path tmp = marker.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text.str();
    if (!out.flush()) {
      fs::remove(tmp, ec);
      return {ErrorCode::IO_ERROR, "cannot write " + marker.string() + " (the cache root's marker)"};
    }
  }
  if (::rename(tmp.c_str(), marker.c_str()) != 0) {
    std::string why = std::strerror(errno);
    fs::remove(tmp, ec);
    return {ErrorCode::IO_ERROR, "cannot write " + marker.string() + " (the cache root's marker): " + why};
  }
  return Status::ok();
}

bool is_schema_dir_name(std::string_view name) {
  return name.size() > 1 && name[0] == 'v' &&
         std::all_of(name.begin() + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_record_file(std::string_view file_name) {
  return ends_with(file_name, ".json") && is_entry_name(file_name.substr(0, file_name.size() - 5));
}

bool is_owned_file(std::string_view file_name) {
  if (file_name == kLockFile) return true;
  std::string_view base = strip_temp(file_name);
  return base == kEnvironmentFile || is_record_file(base) || is_cubin_file(base);
}

bool is_file_of_entry(std::string_view file_name, std::string_view entry) {
  std::string_view base = strip_temp(file_name);
  if (base.size() <= entry.size() || base.substr(0, entry.size()) != entry || base[entry.size()] != '.') return false;
  return is_record_file(base) || is_cubin_file(base);
}

bool is_environment_dir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec)) || !is_hex(dir.filename().string(), 16)) return false;
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || st.st_uid != ::geteuid()) return false;
  std::ifstream in(dir / kEnvironmentFile, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  auto facts = nlohmann::ordered_json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (facts.is_discarded() || !facts.is_object() || facts.empty()) return false;
  CacheEnvironment env;
  for (const auto& [k, v] : facts.items()) {
    if (!v.is_string()) return false;
    env.fields.emplace_back(k, v.get<std::string>());
  }
  return env.hash() == dir.filename().string();
}

EnvironmentLock::EnvironmentLock(const fs::path& environment_dir, bool wait) {
  const fs::path path = environment_dir / kLockFile;
  // Prune or clear may unlink the lock file of a folder it removes: after
  // taking the lock, make sure it is still the file at that path.
  for (int attempt = 0; attempt < 8; ++attempt) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return;
    int rc;
    do rc = ::flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB));
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      ::close(fd);
      return;
    }
    struct stat held {}, now {};
    if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev) {
      fd_ = fd;
      return;
    }
    ::close(fd);
  }
}

EnvironmentLock::~EnvironmentLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace opgraph::runtime::cache_files
