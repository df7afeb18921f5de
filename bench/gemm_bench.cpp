// gemm_bench — TFLOP/s of the gemm engine's kernels and of the cudnn family's
// best plan on the same graph, same buffers, same process (bench/run.sh gemm-variants):
//
//   gemm_bench [--quick | --confirm | --study] [--device-json PATH] [--explain-backend GRAPH.json]
//
// --quick: no M = 16384 rows and no variants; --confirm: only 4096^3 plain and
// fused and 16x4096x4096 fused, picks only (a short re-check); --study: 4096^3
// with each epilogue (none, relu, bias, gelu, bias+gelu), 1024x14336x4096,
// 1024x4096x4096, 4096x14336x4096, 8192^3 and 4096x4096x16384, each at v2 cooperative
// 128x256 / 128x128 / 128x256 CTA pairs and ping-pong 128x128 (6, 5 stages, CTA
// pairs) / 128x64 / 64x256, cooperative 256x128 and 128x256 with 3 stages
// (EPI_TMA's whole-tile copy; 4 stages hold two boxes) (VARIANT lines only).
// (--study with OPGRAPH_GEMM_STUDY_ONLY="MxNxK/chain/label,..." times only those.)
// OPGRAPH_GEMM_SHAPES="MxNxK/chain,..." (chain "none" or e.g. "bias+gelu") keeps only
// those cases of the chosen mode (a short probe, e.g. under ncu); under --study
// it names the cases (any shape).
// --device-json writes device 0's DeviceProperties JSON to PATH (for
// `opgraph plan --device PATH` in the same run); --explain-backend prints what
// the cuDNN provider answers for a graph file (its plan count or its reason).
// Shapes (the gemm table): 8192^3, M in {16, 128, 1024, 4096, 16384} x (N, K)
// in {(4096, 4096), (14336, 4096), (4096, 14336), (28672, 8192), (8192, 28672)};
// A row-major [1, M, K], B column-major [1, K, N] (a Linear weight stored
// (N, K)), bf16 in and out; plus matmul+bias+gelu at 4096^3 and 16x4096x4096.
// Ours: the heuristic's pick ("pick") and the best of a few variants of it
// (raster, tile width, split count, STREAM_K, CLUSTER_M, WARP_SPEC_CFG: "best"); VARIANT lines give each
// variant's TFLOP/s. cuDNN: every cudnn_eng plan of the
// graph's plan list (at most 4 that build), best kept. Inputs: random bf16 in
// [-1, 1]. Timing: bench/timing.h's time_kernels: kernel time, every plan of the
// shape (ours and cuDNN's) captured into a CUDA graph on one stream and replayed,
// 10 rounds in which each takes one sample in an order shuffled each round; the
// median of each (a round-robin order once put a kernel 5-20% apart from itself:
// the H200's clock follows the power drawn just before). The peers outside this
// process (cuBLAS, cuBLASLt, torch.compile) are bench/compare.py's.
// Ours and cuDNN's outputs are compared on the first 1M elements (max |diff| /
// max |ref|).
// Prints: RESULT shape=MxNxK chain=.. pick=<label> pick_tflops=.. best=<label>
//         best_tflops=.. cudnn=<plan> cudnn_tflops=.. agree=<rel diff>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>

#include "engines/cudnn/cudnn_engine.h"
#include "engines/gemm/gemm_engine.h"
#include "engines/gemm/gemm_exec.h"
#include "runtime/device.h"
#include "runtime/device_buffer.h"
#include "gemm_gpu/gemm_gpu_util.h"
#include "gpu/stream_handle.h"
#include "opgraph/graph.h"
#include "timing.h"

using namespace opgraph;
using namespace opgraph::gemm_testing;

namespace {

const runtime::CudaDriverApi* g_api = nullptr;

// The `sep`-separated items of a value (an environment variable's: commas;
// a chain's: "bias+gelu").
std::vector<std::string> split_list(const std::string& v, char sep = ',') {
  std::vector<std::string> out;
  for (std::string rest = v; !rest.empty();) {
    const std::size_t at = rest.find(sep);
    out.push_back(rest.substr(0, at));
    rest = at == std::string::npos ? "" : rest.substr(at + 1);
  }
  return out;
}

// A case's chain as the keys and output lines spell it: "none" or "bias+gelu".
std::string chain_of(const GemmCase& c) {
  std::string chain = c.chain.empty() ? "none" : "";
  for (const auto& e : c.chain) chain += (chain.empty() ? "" : "+") + e;
  return chain;
}

// A case's key in OPGRAPH_GEMM_SHAPES: "MxNxK/chain".
std::string case_key(const GemmCase& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + "/" + chain_of(c);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, confirm = false, study = false;
  const char* device_json = nullptr;
  const char* explain = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strcmp(argv[i], "--confirm") == 0) confirm = quick = true;
    else if (std::strcmp(argv[i], "--study") == 0) study = true;
    else if (std::strcmp(argv[i], "--device-json") == 0 && i + 1 < argc) device_json = argv[++i];
    else if (std::strcmp(argv[i], "--explain-backend") == 0 && i + 1 < argc) explain = argv[++i];
  }
  auto props = runtime::read_device_properties(0);
  auto api = runtime::cuda_driver();
  if (props.is_bad() || api.is_bad()) {
    std::fprintf(stderr, "no GPU: %s\n", props.status().message().c_str());
    return 1;
  }
  g_api = *api;
  if (device_json) std::ofstream(device_json) << props->to_json();
  if (explain) {
    std::stringstream text;
    text << std::ifstream(explain).rdbuf();
    auto g = Graph::deserialize(text.str());
    if (g.is_bad()) return std::fprintf(stderr, "%s\n", g.status().message().c_str()), 1;
    if (Status v = g->validate(); v.is_bad()) return std::fprintf(stderr, "%s\n", v.message().c_str()), 1;
    FactsCache facts(*g, PlanTarget{*props});
    PlanContext ctx{&facts};
    auto e = engines::make_cudnn_provider()->entries(*g, HeurMode::A, ctx);
    std::printf("EXPLAIN cudnn provider on %s: %s\n", explain,
                e.is_good() ? (std::to_string(e->size()) + " plan(s)").c_str() : e.status().to_string().c_str());
    return 0;
  }
  if (!g_api->event_create) return std::fprintf(stderr, "driver lacks events\n"), 1;
  // Retains device 0's primary context and makes it current (allocations need it).
  auto context = runtime::KernelRuntime::open(0, runtime::CacheOptions{});
  if (context.is_bad()) return std::fprintf(stderr, "%s\n", context.status().message().c_str()), 1;
  // Every plan runs on one non-blocking stream (capturable; the legacy stream is not).
  CUstream stream = nullptr;
  if (g_api->stream_create(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
    return std::fprintf(stderr, "cuStreamCreate failed\n"), 1;
  const gpu_testing::StreamHandle stream_handle(stream, &*props);

  std::vector<GemmCase> cases;
  // bf16 in and out, A row-major, B column-major (the Linear layout).
  auto make = [](std::int64_t m, std::int64_t n, std::int64_t k, std::vector<std::string> chain) {
    return GemmCase{1, m, n, k, false, true, DataType::BFLOAT16, DataType::BFLOAT16, std::move(chain)};
  };
  auto add = [&](std::int64_t m, std::int64_t n, std::int64_t k, std::vector<std::string> chain = {}) {
    cases.push_back(make(m, n, k, std::move(chain)));
  };
  if (study) {
    for (std::vector<std::string> ch : std::vector<std::vector<std::string>>{{}, {"relu"}, {"bias"}, {"gelu"}, {"bias", "gelu"}})
      add(4096, 4096, 4096, ch);
    add(1024, 14336, 4096);
    add(1024, 4096, 4096);
    add(4096, 14336, 4096);
    add(8192, 8192, 8192);
    add(4096, 4096, 16384);
  }
  if (!confirm && !study) add(8192, 8192, 8192);  // 4096^3 is in the M sweep
  if (confirm) add(4096, 4096, 4096);
  for (std::int64_t m : {16, 128, 1024, 4096, 16384})
    for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{4096, 4096}, {14336, 4096}, {4096, 14336}, {28672, 8192},
                        {8192, 28672}})
      if (!confirm && !study && (!quick || m != 16384)) add(m, n, k);
  if (!study) {
    add(4096, 4096, 4096, {"bias", "gelu"});
    add(16, 4096, 4096, {"bias", "gelu"});
  }

  // One pool of random bf16 values in [-1, 1]; every input is a slice of it.
  std::mt19937 rng(1234);
  std::vector<unsigned char> pool;
  fill_random(pool, DataType::BFLOAT16, std::size_t{1} << 25, rng);
  auto fill = [&](const DeviceBuffer& b) {
    for (std::size_t off = 0; off < b.bytes(); off += pool.size())
      g_api->memcpy_htod(b.ptr() + off, pool.data(), std::min(pool.size(), b.bytes() - off));
  };

  auto engine = gemm::make_gemm_engine(EngineIdentity{20100, "gemm"});
  // --study under OPGRAPH_GEMM_STUDY_ONLY="MxNxK/chain/label[,...]" times only
  // those variants (one kernel to profile, e.g. under ncu).
  std::vector<std::string> only;
  if (const char* v = std::getenv("OPGRAPH_GEMM_STUDY_ONLY"); v && study) only = split_list(v);
  auto keep = [&](const GemmCase& c, const std::string& label) {
    return only.empty() || std::find(only.begin(), only.end(), case_key(c) + "/" + label) != only.end();
  };
  bool ok = true;
  if (const char* v = std::getenv("OPGRAPH_GEMM_SHAPES")) {
    const std::vector<std::string> want = split_list(v);
    std::vector<GemmCase> kept;
    if (study) {
      // --study takes any shape: each key is parsed into a case.
      for (const std::string& key : want) {
        long long m = 0, n = 0, k = 0;
        char chain[128] = {};
        if (std::sscanf(key.c_str(), "%lldx%lldx%lld/%127s", &m, &n, &k, chain) != 4 || m < 1 || n < 1 || k < 1) break;
        kept.push_back(make(m, n, k, std::string(chain) == "none" ? std::vector<std::string>{} : split_list(chain, '+')));
      }
    } else {
      for (const auto& c : cases)
        if (std::find(want.begin(), want.end(), case_key(c)) != want.end()) kept.push_back(c);
    }
    if (kept.size() != want.size())
      return std::fprintf(stderr, "OPGRAPH_GEMM_SHAPES=%s: %zu of %zu keys name no case of this mode (MxNxK/chain)\n", v,
                          want.size() - kept.size(), want.size()),
             2;
    cases = std::move(kept);
  }
  for (const auto& c : cases) {
    OpGraph og = build_case(c);
    if (og.validate().is_bad()) return 1;
    std::map<std::int64_t, std::unique_ptr<DeviceBuffer>> bufs;
    std::int64_t out_uid = -1;
    for (const auto& t : og.tensors()) {
      if (t->get_is_virtual() || t->get_is_pass_by_value()) continue;
      auto b = std::make_unique<DeviceBuffer>(*g_api, span_of(*t) * elem_bytes(t->get_data_type()));
      if (b->status().is_bad()) return std::fprintf(stderr, "cuMemAlloc failed\n"), 1;
      if (og.producer_of(t.get())) out_uid = t->get_uid();
      else fill(*b);
      bufs[t->get_uid()] = std::move(b);
    }
    VariantPack pack;
    for (auto& [uid, b] : bufs) pack.set(uid, b->data());
    const double flops = 2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k);
    const std::string chain = chain_of(c);

    // Ours: the pick, then variants of it.
    FactsCache facts(og, PlanTarget{*props});
    PlanContext ctx{&facts};
    auto prop = gemm::heuristics(HeurMode::A, ctx, {engine.get()});
    Knobs pick;
    for (const auto& p : *prop)
      if (!p.backend_marker) pick = p.config.knobs;
    std::vector<Knobs> configs{pick};
    auto pc = gemm::config_from_knobs(pick);
    auto problem = gemm::analyze_gemm(og);
    if (study) {
      // {TILE_N, STAGES, CLUSTER_M, WARP_SPEC_CFG}: cooperative 256 / 128 and
      // CTA pairs at 256, ping-pong 128 (6 and 5 stages, CTA pairs) and 64.
      configs.clear();
      // {TILE_N, STAGES, CLUSTER_M, WARP_SPEC_CFG, TILE_M, STREAM_K, SPLIT_K_SLC, RASTER_ORDER}
      std::vector<std::array<int, 8>> list{
          {256, 4, 1, 0, 128, 0, 1, 0}, {128, 6, 1, 0, 128, 0, 1, 0}, {256, 4, 2, 0, 128, 0, 1, 0},
          {128, 6, 1, 1, 128, 0, 1, 0}, {128, 5, 1, 1, 128, 0, 1, 0}, {128, 6, 2, 1, 128, 0, 1, 0},
          {64, 8, 1, 1, 128, 0, 1, 0},  {256, 5, 1, 1, 64, 0, 1, 0},  {128, 4, 1, 0, 256, 0, 1, 0},
          {256, 3, 1, 0, 128, 0, 1, 0}};
      // OPGRAPH_GEMM_STUDY_CONFIGS=
      // "TILE_N:STAGES:CLUSTER_M:WARP_SPEC_CFG[:TILE_M[:STREAM_K[:SPLIT_K_SLC[:RASTER_ORDER]]]],..." replaces the list.
      if (const char* xs = std::getenv("OPGRAPH_GEMM_STUDY_CONFIGS")) {
        list.clear();
        for (const std::string& item : split_list(xs)) {
          std::array<int, 8> a{0, 0, 0, 0, 128, 0, 1, 0};
          const int got = std::sscanf(item.c_str(), "%d:%d:%d:%d:%d:%d:%d:%d", &a[0], &a[1], &a[2], &a[3], &a[4],
                                      &a[5], &a[6], &a[7]);
          if (got < 4) {
            list.clear();
            break;
          }
          list.push_back(a);
        }
        if (list.empty())
          return std::fprintf(stderr,
                              "OPGRAPH_GEMM_STUDY_CONFIGS=%s: expected "
                              "TILE_N:STAGES:CLUSTER_M:WARP_SPEC_CFG[:TILE_M[:STREAM_K[:SPLIT_K_SLC[:RASTER_ORDER]]]],"
                              "...\n",
                              xs),
                 2;
      }
      for (auto [tn, st, cl, pp, tm, sk, splits, raster] : list) {
        gemm::GemmConfig v;
        v.version = 2;
        v.raster = raster;
        v.stream_k = sk;
        v.split_k = splits;
        v.tile_m = tm;
        v.tile_n = tn;
        v.stages = st;
        v.cluster_m = cl;
        v.pingpong = pp;
        configs.push_back(gemm::knobs_of(v));
      }
    } else if (!quick && pc.is_good() && problem.is_good()) {
      auto variant = [&](auto edit) {
        gemm::GemmConfig v = *pc;
        edit(v);
        if (gemm::config_from_knobs(gemm::knobs_of(v)).is_good() && gemm::config_takes(*problem, v) && !(v == *pc) &&
            std::find(configs.begin(), configs.end(), gemm::knobs_of(v)) == configs.end())
          configs.push_back(gemm::knobs_of(v));
      };
      variant([](gemm::GemmConfig& v) { v.raster ^= 1; });
      if (pc->version == 2 && (pc->tile_n == 128 || pc->tile_n == 256))
        variant([](gemm::GemmConfig& v) { v.tile_n = v.tile_n == 128 ? 256 : 128, v.stages = v.tile_n == 256 ? 4 : 6; });
      if (pc->version == 2)
        for (int s : {1, 2, 4})
          if (s != pc->split_k) variant([&](gemm::GemmConfig& v) { v.split_k = s; });
      if (pc->version == 2 && pc->split_k == 1) variant([](gemm::GemmConfig& v) { v.stream_k ^= 1; });
      // The other consumer schedule (ping-pong <-> cooperative), at 128 wide.
      if (pc->version == 2 && pc->tile_n >= 128)
        variant([](gemm::GemmConfig& v) { v.pingpong ^= 1, v.tile_n = 128, v.stages = 6; });
      // Ping-pong over 64 x 256 tiles (one m64n256 wgmma per k16 step).
      if (pc->version == 2 && pc->tile_n >= 128 && pc->split_k == 1)
        variant([](gemm::GemmConfig& v) { v.tile_m = 64, v.tile_n = 256, v.stages = 5, v.pingpong = 1, v.cluster_m = 1; });
      // Cooperative 128 x 256 with 3 stages: EPI_TMA's copy holds the whole tile (one pass).
      if (pc->version == 2 && pc->tile_n == 256 && pc->pingpong == 0 && pc->split_k == 1)
        variant([](gemm::GemmConfig& v) { v.stages = 3; });
      // The cooperative EPI_TMA tiles the width rule weighs: 128 x 176 (a
      // K-major B), 128 x 256 and 128 x 128.
      if (pc->version == 2 && pc->tile_n >= 128 && pc->split_k == 1)
        for (auto [tn, st] : {std::pair{176, 4}, std::pair{256, 3}, std::pair{128, 5}})
          variant([tn, st](gemm::GemmConfig& v) { v.tile_m = 128, v.tile_n = tn, v.stages = st, v.pingpong = 0, v.cluster_m = 1; });
      // Cooperative 256 x 128 (128 rows per warpgroup, cuBLASLt's tile at 4096^3).
      if (pc->version == 2 && pc->tile_n >= 128 && pc->split_k == 1)
        variant([](gemm::GemmConfig& v) { v.tile_m = 256, v.tile_n = 128, v.stages = 4, v.pingpong = 0, v.cluster_m = 1; });
      // CTA pairs sharing B (CLUSTER_M 2 <-> 1), at the pick's width and the other one.
      if (pc->version == 2 && pc->tile_n >= 128) {
        variant([](gemm::GemmConfig& v) { v.cluster_m = 3 - v.cluster_m; });
        variant([](gemm::GemmConfig& v) {
          v.cluster_m = 3 - v.cluster_m;
          v.tile_n = v.tile_n == 128 ? 256 : 128, v.stages = v.tile_n == 256 ? 4 : 6;
        });
      }
    }
    // Once: how many CTA pairs the device keeps resident for the clustered
    // variant of the first wide pick (the clustered grid's size).
    static bool probed = false;
    runtime::KernelRuntime* rt = gemm::shared_runtime_if_open();  // open once a plan was built
    if (!quick && !probed && rt && pc.is_good() && pc->version == 2 && pc->tile_n >= 128 && problem.is_good()) {
      probed = true;
      gemm::GemmConfig v = *pc;
      v.cluster_m = 2;
      auto k = rt->get(gemm::kernel_request(*problem, v));
      if (k.is_good()) {
        // The engine's own sizing (gemm_exec.h launch_plan): the driver's
        // answer (or OPGRAPH_GEMM_RESIDENT_CLUSTERS), and the grid without it.
        const gemm::GemmProblem kp = gemm::kernel_view(*problem, v);
        gemm::GemmConfig kc = v;
        kc.swap_ab = false;
        auto lp = gemm::launch_plan(kp, kc, *rt, **k);
        const gemm::LaunchPlan fallback = gemm::launch_plan_for(kp, kc, rt->device().sm_count, 0);
        std::printf("CLUSTERS tile_n=%d smem=%u resident_pairs=%s grid=%s default_grid=%u\n", v.tile_n,
                    fallback.dims.shared_bytes,
                    lp.is_good() ? std::to_string(lp->resident).c_str() : lp.status().message().c_str(),
                    lp.is_good() ? std::to_string(lp->dims.grid[0]).c_str() : "-", fallback.dims.grid[0]);
      }
    }
    ExecutionContext ec;
    ec.device = &*props;
    ec.stream = stream;
    // Ours: every config's plan; cuDNN: the graph's cudnn plans (at most 4
    // that build). All are timed together, interleaved.
    std::vector<std::unique_ptr<CompiledPlan>> plans;
    std::vector<std::string> labels;
    for (const Knobs& kn : configs) {
      const std::string label = engine->label(PlanConfig{engine->id(), kn, {}, -1});
      if (!keep(c, label)) continue;
      auto plan = gemm_testing::build_direct(*engine, og, PlanConfig{engine->id(), kn, {}, -1}, ctx);
      if (plan.is_bad()) {
        std::fprintf(stderr, "build failed (%s): %s\n", label.c_str(), plan.status().message().c_str());
        ok = false;
        continue;
      }
      plans.push_back(std::move(*plan));
      labels.push_back(label);
    }
    Graph g{build_case(c)};
    g.set_device_properties(*props);
    std::vector<std::int64_t> cudnn_index;
    std::vector<DeviceBuffer> cudnn_ws;
    if (!study && g.create_execution_plans({HeurMode::A}).is_good())
      for (std::int64_t i = 0; i < g.get_execution_plan_count() && cudnn_index.size() < 4; ++i) {
        if (g.get_plan_name_at_index(i).value().rfind("cudnn_eng", 0) != 0 || g.build_plan_at_index(i).is_bad()) continue;
        const std::int64_t ws = g.get_workspace_size_plan_at_index(i).value();
        DeviceBuffer w(*g_api, static_cast<std::size_t>(std::max<std::int64_t>(ws, 1)));
        if (w.status().is_bad()) continue;
        cudnn_index.push_back(i);
        cudnn_ws.push_back(std::move(w));
      }
    // The graph re-numbers nothing: build_case gives the same uids.
    auto run_cudnn = [&](std::size_t j) {
      const std::int64_t ws = g.get_workspace_size_plan_at_index(cudnn_index[j]).value();
      return g.execute_plan_at_index(pack, {cudnn_ws[j].data(), ws}, cudnn_index[j], &stream_handle).is_good();
    };
    std::vector<std::function<bool()>> runners;
    for (auto& plan : plans) runners.push_back([&, p = plan.get()] { return p->execute(pack, ec).is_good(); });
    for (std::size_t j = 0; j < cudnn_index.size(); ++j) runners.push_back([&, j] { return run_cudnn(j); });
    const bench::KernelTimes timed = bench::time_kernels(*g_api, stream, runners);
    const std::vector<double>& secs = timed.seconds;
    std::printf("TIMING shape=%ldx%ldx%ld chain=%s method=%s calls=%d\n", static_cast<long>(c.m),
                static_cast<long>(c.n), static_cast<long>(c.k), chain.c_str(), timed.method.c_str(), timed.calls);

    double pick_s = NAN, best_s = INFINITY;
    std::string pick_label, best;
    for (std::size_t i = 0; i < plans.size(); ++i) {
      const double s = secs[i];
      if (!quick)
        std::printf("VARIANT shape=%ldx%ldx%ld chain=%s config=%s tflops=%.1f\n", static_cast<long>(c.m),
                    static_cast<long>(c.n), static_cast<long>(c.k), chain.c_str(), labels[i].c_str(), flops / s * 1e-12);
      if (i == 0) pick_s = s, pick_label = labels[i];
      if (s < best_s) best_s = s, best = labels[i];
    }
    if (study) continue;
    double cudnn_s = INFINITY;
    std::string cudnn_name = "-";
    for (std::size_t j = 0; j < cudnn_index.size(); ++j) {
      if (!quick)
        std::printf("CUDNN shape=%ldx%ldx%ld chain=%s plan=%s tflops=%.1f\n", static_cast<long>(c.m),
                    static_cast<long>(c.n), static_cast<long>(c.k), chain.c_str(),
                    g.get_plan_name_at_index(cudnn_index[j]).value().c_str(), flops / secs[plans.size() + j] * 1e-12);
    }
    for (std::size_t j = 0; j < cudnn_index.size(); ++j)
      if (secs[plans.size() + j] < cudnn_s)
        cudnn_s = secs[plans.size() + j], cudnn_name = g.get_plan_name_at_index(cudnn_index[j]).value();

    // Our pick's output against cuDNN's first plan (first 1M elements).
    double agree = NAN;
    if (!plans.empty() && !cudnn_index.empty() && plans[0]->execute(pack, ec).is_good()) {
      std::vector<std::uint16_t> ours(std::min<std::size_t>(bufs[out_uid]->bytes() / 2, std::size_t{1} << 20));
      g_api->ctx_synchronize();
      g_api->memcpy_dtoh(ours.data(), bufs[out_uid]->ptr(), ours.size() * 2);
      if (run_cudnn(0)) {
        g_api->ctx_synchronize();
        std::vector<std::uint16_t> theirs(ours.size());
        g_api->memcpy_dtoh(theirs.data(), bufs[out_uid]->ptr(), theirs.size() * 2);
        double md = 0, mr = 0;
        for (std::size_t j = 0; j < ours.size(); ++j) {
          const double a = from_bf16(ours[j]), b = from_bf16(theirs[j]);
          md = std::max(md, std::fabs(a - b));
          mr = std::max(mr, std::fabs(b));
        }
        agree = mr > 0 ? md / mr : NAN;
      }
    }
    std::printf("RESULT shape=%ldx%ldx%ld chain=%s pick=%s pick_tflops=%.1f best=%s best_tflops=%.1f cudnn=%s "
                "cudnn_tflops=%.1f agree=%.2e pick_us=%.1f\n",
                static_cast<long>(c.m), static_cast<long>(c.n), static_cast<long>(c.k), chain.c_str(), pick_label.c_str(),
                flops / pick_s * 1e-12, best.c_str(), flops / best_s * 1e-12, cudnn_name.c_str(),
                std::isfinite(cudnn_s) ? flops / cudnn_s * 1e-12 : NAN, agree, pick_s * 1e6);
    std::fflush(stdout);
  }
  return ok ? 0 : 1;
}
