// runtime_test_util.h — helpers shared by the runtime tests: a temporary
// directory, a child process run with fork + exec (a fresh address space, so
// nothing this test process mapped leaks into it), and the smoke cache setup.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "engines/smoke/smoke_kernels.h"
#include "opgraph/device_properties.h"
#include "runtime/compiled_cache.h"
#include "runtime/loader.h"

namespace opgraph::testing {

// Reading a probe process's output (the fake driver's "fake-cuda: ..." lines and the probe's own).
inline bool has(const std::string& out, const std::string& what) { return out.find(what) != std::string::npos; }

// The text of `out` from the line starting `from` up to the end of the line
// starting `to` (empty, with a failure, when either is missing).
inline std::string span(const std::string& out, const std::string& from, const std::string& to) {
  const std::size_t a = out.find(from);
  const std::size_t b = a == std::string::npos ? a : out.find(to, a);
  EXPECT_NE(a, std::string::npos) << from << "\n" << out;
  EXPECT_NE(b, std::string::npos) << to << "\n" << out;
  if (a == std::string::npos || b == std::string::npos) return {};
  return out.substr(a, out.find('\n', b) - a);
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "opgraph_rt_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct ProcessResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs argv[0] with the given arguments; `env` entries "K=V" are set and "K="
// entries unset in the child only.
inline ProcessResult run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env = {}) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    for (const auto& e : env) {
      auto eq = e.find('=');
      std::string k = e.substr(0, eq), v = e.substr(eq + 1);
      if (v.empty()) ::unsetenv(k.c_str());
      else ::setenv(k.c_str(), v.c_str(), 1);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  ProcessResult r;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof(buf))) > 0) r.output.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A fresh random smoke specialisation (constants exact in float).
inline runtime::KernelRequest random_smoke_request(std::mt19937& rng) {
  std::uniform_int_distribution<int> d(-4000, 4000);
  return smoke::affine_request({d(rng) / 16.0, d(rng) / 32.0, smoke::SmokeType::F32});
}

inline runtime::CacheEnvironment test_environment(std::optional<int> driver = 13000) {
  auto props = DeviceProperties::for_arch("sm_90a");
  std::optional<int> nvrtc_version;
  if (auto api = runtime::nvrtc(); api.is_good()) nvrtc_version = (*api)->version;
  return runtime::CacheEnvironment::make(*props, nvrtc_version, driver);
}

// The compile-only check: the cubin read back is a complete CUDA ELF.
inline runtime::CompiledCache::Check elf_check() {
  return [](const runtime::CompiledKernel& k) { return runtime::validate_cubin(k.cubin, k.lowered_name); };
}

}  // namespace opgraph::testing
