// gemm_bench — TFLOP/s of the gemm engine's kernels on the H200, one line per
// (shape, kernel config):
//
//   gemm_bench [--quick]
//
// Shapes: 4096^3, 8192^3, and M in {16, 128, 1024, 4096} x (N, K) in
// {(4096, 4096), (14336, 4096)}; A row-major [1, M, K], B column-major
// [1, K, N] (a Linear weight stored (N, K)), bf16 in and out; plus
// matmul+bias+gelu at M = 4096, (4096, 4096). For each shape: the heuristic's
// config ("pick") and the best of every proposable config ("best"). Timing:
// 3 warm-up launches, then back-to-back launches on one stream for >= 200 ms,
// wall time / launches (host launch cost included: it matters at M = 16).
// Prints: RESULT shape=MxNxK chain=.. version=1 pick_tflops=.. best_tflops=.. best=<label>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "engines/gemm/gemm_engine.h"
#include "gemm_gpu/gemm_gpu_util.h"

using namespace opgraph;
using namespace opgraph::gemm_testing;
using Clock = std::chrono::steady_clock;

namespace {

struct Bench {
  const runtime::CudaDriverApi* api;
  DeviceProperties props;
  CUstream stream;
};

// Seconds per launch of `plan` (NaN on failure).
double time_plan(Bench& b, const CompiledPlan& plan, const VariantPack& pack) {
  ExecutionContext ec;
  ec.stream = b.stream;
  ec.device = &b.props;
  for (int i = 0; i < 3; ++i)
    if (plan.execute(pack, ec).is_bad()) return NAN;
  b.api->stream_synchronize(b.stream);
  long n = 0;
  const auto t0 = Clock::now();
  double el = 0;
  while (el < 0.2) {
    for (int i = 0; i < 10; ++i)
      if (plan.execute(pack, ec).is_bad()) return NAN;
    n += 10;
    b.api->stream_synchronize(b.stream);
    el = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  return el / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  Bench b{};
  auto props = runtime::read_device_properties(0);
  auto api = runtime::cuda_driver();
  if (props.is_bad() || api.is_bad()) {
    std::fprintf(stderr, "no GPU: %s\n", props.status().message().c_str());
    return 1;
  }
  b.props = *props;
  b.api = *api;
  // Retains device 0's primary context and makes it current (allocations and the stream need it).
  auto context = runtime::KernelRuntime::open(0, runtime::CacheOptions{});
  if (context.is_bad()) {
    std::fprintf(stderr, "%s\n", context.status().message().c_str());
    return 1;
  }
  if (b.api->stream_create(&b.stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) return 1;
  std::vector<GemmCase> cases;
  auto add = [&](std::int64_t m, std::int64_t n, std::int64_t k, std::vector<std::string> chain = {}) {
    cases.push_back(GemmCase{1, m, n, k, false, true, DataType::BFLOAT16, DataType::BFLOAT16, std::move(chain)});
  };
  add(4096, 4096, 4096);
  add(8192, 8192, 8192);
  for (std::int64_t m : {16, 128, 1024, 4096})
    for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{4096, 4096}, {14336, 4096}}) add(m, n, k);
  add(4096, 4096, 4096, {"bias", "gelu"});
  std::mt19937 rng(1234);
  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  bool ok = true;
  for (const auto& c : cases) {
    OpGraph g = build_case(c);
    if (g.validate().is_bad()) return 1;
    FactsCache facts(g, PlanTarget{b.props});
    PlanContext ctx{&facts};
    Operands o;
    if (Status s = make_operands(*b.api, g, rng, o); s.is_bad()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
    VariantPack pack;
    for (auto& [uid, d] : o.dev) pack.set(uid, reinterpret_cast<void*>(d->ptr()));
    auto prop = gemm::heuristics(HeurMode::A, ctx, {engine.get()});
    Knobs pick;
    for (const auto& p : *prop)
      if (!p.backend_marker) pick = p.config.knobs;
    std::vector<Knobs> configs{pick};
    if (!quick)
      for (const auto& cfg : gemm::proposable_configs()) configs.push_back(gemm::knobs_of(cfg));
    double pick_s = NAN, best_s = INFINITY;
    std::string best;
    for (std::size_t i = 0; i < configs.size(); ++i) {
      auto plan = engine->build_plan(g, PlanConfig{engine->id(), configs[i], {}, -1}, ctx);
      if (plan.is_bad()) {
        std::fprintf(stderr, "build failed: %s\n", plan.status().message().c_str());
        ok = false;
        continue;
      }
      const double s = time_plan(b, **plan, pack);
      if (i == 0) pick_s = s;
      if (s < best_s) best_s = s, best = engine->label(PlanConfig{engine->id(), configs[i], {}, -1});
    }
    const double flops = 2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k);
    std::string chain = c.chain.empty() ? "none" : "";
    for (const auto& e : c.chain) chain += (chain.empty() ? "" : "+") + e;
    std::printf("RESULT shape=%ldx%ldx%ld chain=%s version=1 pick_tflops=%.1f best_tflops=%.1f best=%s pick_us=%.1f\n",
                static_cast<long>(c.m), static_cast<long>(c.n), static_cast<long>(c.k), chain.c_str(),
                flops / pick_s * 1e-12, flops / best_s * 1e-12, best.c_str(), pick_s * 1e6);
    std::fflush(stdout);
  }
  return ok ? 0 : 1;
}
