// runtime_cold_warm — time to first result of a process that needs 10 kernels.
//
//   runtime_cold_warm --cache DIR --label LABEL [--kernels N]
//
// The process opens device 0 through the runtime (cuInit, primary context,
// device properties, cache environment), gets the N declared smoke
// specialisations through the compiled-kernel cache at DIR (a cold DIR
// compiles all N with NVRTC; a warm one reads and loads cubins), runs each on
// fresh random data with the output poisoned, checks every result against the
// host, and prints one line:
//   RESULT label=.. init_ms=.. kernels_ms=.. load_median_ms=.. load_max_ms=..
//          first_result_ms=.. hits=.. misses=.. bad=..
// init_ms: main() to a ready context; kernels_ms: acquiring all N kernels;
// load_*: per-kernel acquisition (cache read + cuModuleLoadData +
// cuModuleGetFunction on a hit); first_result_ms: main() to all N results
// checked on the host. Exit status 0 only if every result is right.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "gpu/gpu_buffer.h"
#include "timing.h"

using namespace opgraph;
using bench::Clock;
using bench::ms_since;

int main(int argc, char** argv) {
  const auto t0 = Clock::now();
  std::string cache_dir, label = "run";
  std::size_t kernels = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--cache")) cache_dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--label")) label = argv[i + 1];
    else if (!std::strcmp(argv[i], "--kernels")) kernels = std::stoul(argv[i + 1]);
  }
  if (cache_dir.empty()) {
    std::fprintf(stderr, "usage: runtime_cold_warm --cache DIR --label LABEL [--kernels N]\n");
    return 2;
  }
  runtime::CacheOptions options = runtime::CacheOptions::from_env();
  options.root = cache_dir;
  auto rt = runtime::KernelRuntime::open(0, options);
  if (rt.is_bad()) {
    std::fprintf(stderr, "open: %s\n", rt.status().to_string().c_str());
    return 1;
  }
  const double init_ms = ms_since(t0);

  auto params = smoke::declared_params();
  params.resize(std::min(kernels, params.size()));
  std::vector<const runtime::LoadedKernel*> loaded;
  std::vector<double> load_ms;
  const auto tk = Clock::now();
  for (const auto& p : params) {
    const auto t = Clock::now();
    auto k = (*rt)->get(smoke::affine_request(p));
    if (k.is_bad()) {
      std::fprintf(stderr, "get: %s\n", k.status().to_string().c_str());
      return 1;
    }
    load_ms.push_back(ms_since(t));
    loaded.push_back(*k);
  }
  const double kernels_ms = ms_since(tk);

  std::mt19937 rng(std::random_device{}());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto r = gpu_testing::run_smoke_and_check(**rt, *loaded[i], params[i], (1 << 20) + 37, nullptr, rng);
    if (r.is_bad()) {
      std::fprintf(stderr, "run: %s\n", r.status().to_string().c_str());
      return 1;
    }
    bad += *r;
  }
  const double first_result_ms = ms_since(t0);
  std::vector<double> sorted = load_ms;
  std::sort(sorted.begin(), sorted.end());
  const auto& s = (*rt)->cache().stats();
  std::printf("RESULT label=%s init_ms=%.2f kernels_ms=%.2f load_median_ms=%.3f load_max_ms=%.3f "
              "first_result_ms=%.2f hits=%llu misses=%llu bad=%zu\n",
              label.c_str(), init_ms, kernels_ms, sorted[sorted.size() / 2], sorted.back(), first_result_ms,
              static_cast<unsigned long long>(s.hits), static_cast<unsigned long long>(s.misses), bad);
  return bad == 0 ? 0 : 1;
}
