// bench/gdn_host_overhead_gpu.cpp — the host cost of executing a built gdn plan against a raw
// cuLaunchKernelEx of the kernel it launches (the linear-attention issue's host target: one
// execute within 1.2x of the raw launch). bench/run.sh host runs it on the device machine.
//
// Graphs planned through the public Graph API on the linear_attention engine: a decode step (B sequences of one
// token, fp32 state pool updated in place through state_indices; its first plan), a prefill (one sequence, the
// fused kernel: PIPELINE_ARCH 3's plan) and the same prefill on PIPELINE_ARCH 4's guarded form (beta given
// post-sigmoid: two kernels, the fp16 build checking beta, then the fp32 fallback, a workspace of verdicts). The raw
// side launches the same CUfunction(s) (the engine's runtime hands out the ones it loaded) with a GdnParams written
// here field by field and the same launch geometry. Method (bench/timing.h host_ns_per_call_pair):
// per burst size b, the minimum over 25 x 64 / b bursts, each from a drained stream, of burst host time /
// burst, the two sides interleaved burst by burst (until 2026-12-05 all raw bursts ran before all executes,
// 25 of each). The two sides' outputs (O and the pool rows) are then compared bitwise, from the same
// pool contents, outputs poisoned first: the raw launch is the same work, not a cheaper one.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "engines/linear_attention/gdn_problem.h"
#include "engines/linear_attention/kernels/gdn_params.cuh"
#include "engines/linear_attention/la_engine.h"
#include "gpu/stream_handle.h"
#include "opgraph/graph.h"
#include "runtime/device.h"
#include "runtime/device_buffer.h"
#include "timing.h"

namespace {

using namespace opgraph;
namespace gdn = opgraph_gdn;

constexpr int kReps = 25;  // bursts of 64 calls; shorter bursts get 64 / burst times as many

void* vp_of(const std::unique_ptr<DeviceBuffer>& b) { return reinterpret_cast<void*>(b->ptr()); }

int fail(const Status& s) {
  std::fprintf(stderr, "%s\n", s.to_string().c_str());
  return 1;
}

std::uint16_t to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

struct Cell {
  const char* name;
  std::int64_t n, len, hv;  // sequences, tokens each, value (= output) heads; q / k heads 16
  int arch = 3;             // a prefill's PIPELINE_ARCH: 3, or 4 (its guarded form here)
};

// One cell: plan, build, time execute vs raw launch, compare outputs. Returns failures.
int run_cell(const Cell& cell, runtime::KernelRuntime& R) {
  const runtime::CudaDriverApi& api = R.api();
  const std::int64_t D = 128, HQ = 16, HV = cell.hv, HO = HV, N = cell.n, T = N * cell.len;
  const bool decode = cell.len == 1;
  Graph g;
  g.set_name(cell.name).set_io_data_type(DataType::BFLOAT16).set_compute_data_type(DataType::FLOAT);
  g.set_device_properties(R.device());
  auto q = g.tensor({T, HQ, D}, DataType::BFLOAT16, "q");
  auto k = g.tensor({T, HQ, D}, DataType::BFLOAT16, "k");
  auto v = g.tensor({T, HV, D}, DataType::BFLOAT16, "v");
  auto gate = g.tensor({T, HO}, DataType::FLOAT, "g");
  auto beta = g.tensor({T, HO}, DataType::FLOAT, "beta");
  auto cu = g.tensor({N + 1}, DataType::INT32, "cu_seqlens");
  auto pool = g.tensor({N, HO, D, D}, DataType::FLOAT, "initial_state");
  auto idx = g.tensor({N}, DataType::INT32, "state_indices");
  Attributes a;
  a.set("use_qk_l2norm", true);
  a.set("output_final_state", true);
  a.set("overwrite_initial_state", true);
  a.set_name("gdn0");
  DeltaRuleOutputs out = g.gdn(DeltaRuleInputs{q, k, v, gate, beta, cu, pool, nullptr, nullptr, idx}, a);
  out.o->set_output(true).set_data_type(DataType::BFLOAT16).set_name("O");
  out.final_state->set_output(true).set_name("final_state");
  if (Status s = g.create_execution_plans({HeurMode::A}); s.is_bad()) return fail(s);
  // Decode: the first plan (the linear_attention engine's decode kernel, whatever its knobs); prefill:
  // the fused plan the list ranks first among the fused ones, the warp-specialised form (PIPELINE_ARCH 3)
  // without a chain split (one kernel), whatever the heuristics rank first here.
  const std::string want = decode ? "linear_attention["
                                   : "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=" + std::to_string(cell.arch) + "]";
  const bool guarded = !decode && cell.arch == linear_attention::kPrefillFusedWsH;
  std::int64_t at = -1;
  for (std::int64_t i = 0; i < g.get_execution_plan_count() && at < 0; ++i) {
    auto nm = g.get_plan_name_at_index(i);
    if (nm.is_good() && nm.value().rfind(want, 0) == 0) at = i;
  }
  if (at < 0 || (decode && at != 0)) {
    std::fprintf(stderr, "%s: no plan %s%s\n", cell.name, want.c_str(), decode ? " first" : "");
    return 1;
  }
  auto name = g.get_plan_name_at_index(at);
  if (Status s = g.select_plan(at); s.is_bad()) return fail(s);
  if (Status s = g.build_plans(); s.is_bad()) return fail(s);

  // The kernel the plan launches: its problem's requests (la_engine.h), from the engine's runtime.
  auto prob = linear_attention::analyze_gdn(g);
  if (prob.is_bad()) return fail(prob.status());
  const auto& p = prob.value();
  const bool small = decode && linear_attention::decode_small(p);
  const std::string entry = decode ? (small ? "gdn_decode_small" : "gdn_decode") : "gdn_prefill_fused";
  runtime::KernelRuntime* lr = linear_attention::shared_runtime_if_open(0);
  if (!lr) return fail({ErrorCode::INVALID_VALUE, "the linear_attention engine's runtime is not open"});
  // The plan's kernels in launch order (guarded: the fp16 build, then the fp32 fallback).
  std::vector<const runtime::LoadedKernel*> kerns;
  const int mode = guarded ? cell.arch : linear_attention::kPrefillFusedWs;
  for (const runtime::KernelRequest& r : linear_attention::kernel_requests(p, mode))
    if (r.entry == entry) {
      auto kk = lr->get(r);
      if (kk.is_bad()) return fail(kk.status());
      kerns.push_back(kk.value());
    }
  if (kerns.size() != (guarded ? 2u : 1u))
    return fail({ErrorCode::INVALID_VALUE, std::string("no request for ") + entry});

  // Inputs: q, k, v ~ N(0, 1), log gates logsigmoid(N(0, 1)), beta sigmoid(N(0, 1)), the pool
  // 0.1 N(0, 1), state_indices a permutation.
  std::mt19937_64 rng(20261203);
  std::normal_distribution<float> nd;
  auto bf = [&](std::int64_t count) {
    std::vector<std::uint16_t> x(static_cast<std::size_t>(count));
    for (auto& e : x) e = to_bf16(nd(rng));
    return x;
  };
  const auto hq = bf(T * HQ * D), hk = bf(T * HQ * D), hv = bf(T * HV * D);
  std::vector<float> hg(static_cast<std::size_t>(T * HO)), hb(hg.size()), hs(static_cast<std::size_t>(N * HO * D * D));
  for (auto& e : hg) e = -std::log1p(std::exp(-nd(rng)));
  for (auto& e : hb) e = 1.f / (1.f + std::exp(-nd(rng)));
  for (auto& e : hs) e = 0.1f * nd(rng);
  std::vector<int> hcu(static_cast<std::size_t>(N + 1)), hidx(static_cast<std::size_t>(N));
  for (std::int64_t i = 0; i <= N; ++i) hcu[static_cast<std::size_t>(i)] = static_cast<int>(i * cell.len);
  std::iota(hidx.begin(), hidx.end(), 0);
  std::shuffle(hidx.begin(), hidx.end(), rng);
  auto dev = [&](const void* h, std::size_t bytes) {
    auto b = std::make_unique<DeviceBuffer>(api, bytes);
    if (b->status().is_good() && h) (void)api.memcpy_htod(b->ptr(), h, bytes);
    return b;
  };
  auto dq = dev(hq.data(), hq.size() * 2), dk = dev(hk.data(), hk.size() * 2), dv = dev(hv.data(), hv.size() * 2);
  auto dg = dev(hg.data(), hg.size() * 4), db = dev(hb.data(), hb.size() * 4);
  auto dcu = dev(hcu.data(), hcu.size() * 4), didx = dev(hidx.data(), hidx.size() * 4);
  auto dpool = dev(hs.data(), hs.size() * 4);
  auto dout = dev(nullptr, static_cast<std::size_t>(T * HO * D) * 2);
  const std::int64_t ws_bytes = linear_attention::workspace_bytes(p, guarded ? cell.arch : 0);
  auto dws = dev(nullptr, static_cast<std::size_t>(std::max<std::int64_t>(ws_bytes, 4)));
  for (auto* b : {dq.get(), dk.get(), dv.get(), dg.get(), db.get(), dcu.get(), didx.get(), dpool.get(), dout.get(),
                  dws.get()})
    if (b->status().is_bad()) return fail(b->status());
  const Workspace workspace = ws_bytes > 0 ? Workspace{vp_of(dws), ws_bytes} : Workspace{};

  VariantPack pack;
  auto vp = [](const std::unique_ptr<DeviceBuffer>& b) { return reinterpret_cast<void*>(b->ptr()); };
  pack.set(q, vp(dq)).set(k, vp(dk)).set(v, vp(dv)).set(gate, vp(dg)).set(beta, vp(db)).set(cu, vp(dcu));
  pack.set(pool, vp(dpool)).set(idx, vp(didx)).set(out.o, vp(dout)).set(out.final_state, vp(dpool));

  // The raw side: the kernel's argument as the engine forms it (la_engine.cpp params_of).
  gdn::GdnParams prm{};
  prm.q = dq->ptr(), prm.k = dk->ptr(), prm.v = dv->ptr(), prm.g = dg->ptr(), prm.beta = db->ptr();
  prm.cu_seqlens = dcu->ptr(), prm.initial_state = prm.final_state = dpool->ptr(), prm.state_indices = didx->ptr();
  prm.o = dout->ptr();
  prm.t = T, prm.n_seq = N, prm.hq = prm.hk = HQ, prm.hv = HV, prm.ho = HO;
  prm.state_rows = N, prm.state_row_stride = HO * D * D;
  prm.g_type = prm.beta_type = prm.state_type = gdn::kTypeF32;
  prm.o_type = gdn::kTypeBf16;
  prm.a_log_type = prm.dt_bias_type = gdn::kTypeF32;
  prm.flags = gdn::kFlagL2Norm | gdn::kFlagHasInit | gdn::kFlagWriteFinal | gdn::kFlagPool;
  prm.scale = p.scale;
  prm.q_ts = HQ * D, prm.q_hs = D, prm.k_ts = HQ * D, prm.k_hs = D, prm.v_ts = HV * D, prm.v_hs = D;
  if (guarded) prm.ws = prm.guard = dws->ptr();
  gdn::GdnParams redo = prm;  // the guarded form's fallback launch
  redo.flags |= gdn::kFlagGuardRedo;
  CUlaunchConfig raw{};
  raw.gridDimX = static_cast<unsigned>(decode ? D / (small ? gdn::kDecodeSmallRows : gdn::kDecodeRows) : 1);
  raw.gridDimY = static_cast<unsigned>(HO);
  raw.gridDimZ = static_cast<unsigned>(N);
  raw.blockDimX = decode ? (small ? gdn::kDecodeSmallThreads : gdn::kDecodeThreads) : gdn::kGdnFusedWsThreads;
  raw.blockDimY = raw.blockDimZ = 1;
  raw.sharedMemBytes = decode ? 0u : static_cast<unsigned>(gdn::gdn_fused_ws_smem_bytes(D));
  void* args[] = {&prm};
  void* redo_args[] = {&redo};
  auto launch_raw = [&] {
    int bad = api.launch_kernel_ex(&raw, kerns[0]->function, args, nullptr) != CUDA_SUCCESS;
    if (guarded) bad += api.launch_kernel_ex(&raw, kerns[1]->function, redo_args, nullptr) != CUDA_SUCCESS;
    return bad;
  };

  CUstream stream = nullptr;
  if (Status s = runtime::cuda_check(api, api.stream_create(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
      s.is_bad())
    return fail(s);
  raw.hStream = stream;
  gpu_testing::StreamHandle h(stream, &R.device());
  int failures = 0;
  std::string first_error;
  auto execute = [&] {
    const Status s = g.execute(pack, workspace, &h);
    if (s.is_bad()) {
      if (first_error.empty()) first_error = s.to_string();
      ++failures;
    }
  };
  execute();  // warm (and raises the kernel's shared-memory limit)
  (void)api.stream_synchronize(stream);
  // OPGRAPH_HOST_PROFILE_LOOP=N: N more executes here, for a profiler (perf record) to sample execute's own host
  // path; with OPGRAPH_LIBCUDA pointing at the tests' fake driver it runs on a machine without a GPU.
  if (const char* n = std::getenv("OPGRAPH_HOST_PROFILE_LOOP"))
    for (long i = std::strtol(n, nullptr, 10); i > 0; --i) execute();

  std::printf("\n%s (%s; kernel %s%s, grid %u x %u x %u): host enqueue per call, ns\n", cell.name,
              name.value().c_str(), entry.c_str(), guarded ? " x 2 (the fp16 build, the fp32 fallback)" : "",
              raw.gridDimX, raw.gridDimY, raw.gridDimZ);
  std::printf("%-6s %14s %16s %8s\n", "burst", "raw_launch", "opgraph_execute", "ratio");
  // Single calls vary most from one to the next (~0.5 us on ~3 us): more bursts where they are short.
  double worst = 0.0;
  for (int burst : {1, 4, 16, 64}) {
    auto drain = [&] { (void)api.stream_synchronize(stream); };
    const auto [rl, ex] = bench::host_ns_per_call_pair(
        burst, kReps * 64 / burst, drain,
        [&] { failures += launch_raw(); }, execute);
    std::printf("%-6d %14.1f %16.1f %8.2f\n", burst, rl, ex, ex / rl);
    worst = std::max(worst, ex / rl);
  }
  (void)api.stream_synchronize(stream);

  // Same work: from the same pool contents, outputs poisoned, O and the pool bitwise equal.
  const std::size_t ob = static_cast<std::size_t>(T * HO * D) * 2, pb = hs.size() * 4;
  std::vector<unsigned char> o1(ob), o2(ob), s1(pb), s2(pb);
  auto one = [&](bool via_execute, std::vector<unsigned char>& o, std::vector<unsigned char>& s) {
    (void)api.memcpy_htod(dpool->ptr(), hs.data(), pb);
    (void)api.memset_d32(dout->ptr(), 0xFFFFFFFFu, ob / 4);  // NaN bf16
    (void)api.ctx_synchronize();
    if (via_execute) execute();
    else failures += launch_raw();
    (void)api.stream_synchronize(stream);
    (void)api.memcpy_dtoh(o.data(), dout->ptr(), ob);
    (void)api.memcpy_dtoh(s.data(), dpool->ptr(), pb);
  };
  one(true, o1, s1);
  one(false, o2, s2);
  const bool same = o1 == o2 && s1 == s2;
  std::int64_t poisoned = 0;
  for (std::size_t i = 0; i + 1 < ob; i += 2) poisoned += (o1[i] == 0xff && o1[i + 1] == 0xff);
  std::printf("worst ratio %.2f (target <= 1.2); outputs of execute and raw launch %s; O elements left poisoned: %lld\n",
              worst, same ? "bitwise equal" : "DIFFER", static_cast<long long>(poisoned));
  if (!first_error.empty()) std::printf("execute failed %d times; first: %s\n", failures, first_error.c_str());
  (void)api.stream_destroy(stream);
  return failures + (same ? 0 : 1) + (poisoned > 0 ? 1 : 0);
}

}  // namespace

int main() {
  auto rt = runtime::KernelRuntime::open(0, runtime::CacheOptions::from_env());
  if (rt.is_bad()) return fail(rt.status());
  int failures = 0;
  const Cell cells[] = {{"gdn decode 16/32 B=1", 1, 1, 32},
                        {"gdn decode 16/32 B=64", 64, 1, 32},
                        {"gdn prefill 16/32 1 x 2048 (fused)", 1, 2048, 32},
                        {"gdn prefill 16/32 1 x 2048 (fused, PIPELINE_ARCH 4 guarded)", 1, 2048, 32, 4}};
  for (const Cell& c : cells) failures += run_cell(c, *rt.value());
  std::printf("\nmethod: per burst size b, the minimum over 25 x 64 / b bursts from a drained stream of host time / "
              "burst, raw launch and execute interleaved burst by burst (bench/timing.h host_ns_per_call_pair); %s\n",
              failures ? "FAILURES above" : "no failures");
  return failures ? 1 : 0;
}
