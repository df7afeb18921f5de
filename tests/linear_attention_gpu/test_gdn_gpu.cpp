// tests/linear_attention_gpu/test_gdn_gpu.cpp — the linear_attention engine's gdn
// forward on the device against the float64 reference (bash bench/run.sh gdn).
//
// Every case draws fresh random inputs, poisons the outputs (all bits set: NaN
// in every type) before the run, and compares O and final_state with the
// reference by RMS ratio, ||got - ref|| / ||ref||, within fla's tolerance for
// 16-bit inputs (5e-3; any NaN fails). Inputs follow fla's tests: q, k
// unit-norm rows (or raw under use_qk_l2norm), v ~ N(0, 1), gates
// logsigmoid(N(0, 1)) or strong decay g in [-10, -5], beta in (0, 1), or logits
// (beta = sigmoid, or 2 sigmoid under allow_neg_eigval), initial state N(0, 1/4).
// Also: state pool rows no sequence addresses stay bitwise untouched, and under
// batch_invariant a sequence's O and final state are bitwise the same alone and
// packed with others. Device ordinals: a missing device refused at build, a
// handle on another device refused at execute. Every numerics case runs under
// both prefill modes (the engine's PIPELINE_ARCH knob: 0 one pass, 1 two passes
// with a workspace, poisoned too). GdnGpu.Timing* (run by the script, not a
// check, test_gdn_gpu_timing.cpp) time the prefill cells with CUDA events; the cases, plans
// and fixture both files use are in gdn_gpu_case.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engines/linear_attention/la_engine.h"
#include "engines/reference/executor.h"
#include "gemm_gpu/gemm_gpu_util.h"
#include "gpu/capture.h"
#include "linear_attention_gpu/gdn_gpu_case.h"
#include "linear_attention_gpu/la_gpu_util.h"
#include "opgraph/device.h"
#include "opgraph/op_graph.h"

namespace {

using namespace opgraph;
using namespace opgraph::la_testing;
using namespace opgraph::la_testing::gdn_fwd;
using gemm_testing::build_direct;
using gemm_testing::gpu;

// Device buffers of one run, by uid.
struct DeviceRun {
  std::map<std::int64_t, std::unique_ptr<DeviceBuffer>> dev;
  std::unique_ptr<CompiledPlan> plan;
};

struct Outcome {
  std::vector<unsigned char> o, fin, ck;  // device results (bytes; ck: state_checkpoints)
  std::vector<unsigned char> ref_o, ref_fin, ref_ck;
  double o_ratio = 0, fin_ratio = 0, ck_ratio = 0;
};

// PIPELINE_ARCH 4's guarded form: the verdicts its fp16 build must write, [N][HO] (1 where a beta of the (sequence,
// head) pair leaves [0, 2]), from the drawn betas (raw: no use_beta_sigmoid).
std::vector<unsigned> expected_verdicts(const Case& c, const std::vector<unsigned char>& beta_bytes) {
  const std::vector<double> b = decode(beta_bytes, c.beta_t);
  std::vector<unsigned> want(static_cast<std::size_t>(c.n() * c.ho()), 0u);
  std::int64_t bos = 0;
  for (std::int64_t s = 0; s < c.n(); ++s) {
    for (std::int64_t t = bos; t < bos + c.lens[static_cast<std::size_t>(s)]; ++t)
      for (std::int64_t h = 0; h < c.ho(); ++h) {
        const double x = b[static_cast<std::size_t>(t * c.ho() + h)];
        if (!(x >= 0.0 && x <= 2.0)) want[static_cast<std::size_t>(s * c.ho() + h)] = 1u;
      }
    bos += c.lens[static_cast<std::size_t>(s)];
  }
  return want;
}

// Builds, runs on the device (outputs poisoned) and on the reference.
Outcome run_case(const Case& c, std::mt19937& rng, std::vector<std::int64_t>* rows_used = nullptr,
                 const std::map<std::int64_t, std::vector<unsigned char>>* given = nullptr,
                 bool run_reference = true) {
  Outcome r;
  auto p = build(c);
  Status v = p->g.validate();
  EXPECT_TRUE(v.is_good()) << c.name << ": " << v.to_string();
  if (v.is_bad()) return r;
  FactsCache facts(p->g, PlanTarget{gpu().props});
  PlanContext ctx{&facts};
  Status sup = la_engine().check_support(p->g, ctx);
  EXPECT_TRUE(sup.is_good()) << c.name << ": " << sup.message();
  if (sup.is_bad()) return r;
  auto plan = build_direct(la_engine(), p->g, config_of(c.prefill), ctx);
  EXPECT_TRUE(plan.is_good()) << c.name << ": " << plan.status().message();
  if (plan.is_bad()) return r;
  auto host = given ? *given : draw(c, *p, rng, rows_used);
  const auto& api = *gpu().api;
  const std::int64_t o_uid = p->out.o->get_uid();
  const std::int64_t f_uid = p->out.final_state ? p->out.final_state->get_uid() : -1;
  const std::size_t o_bytes = static_cast<std::size_t>(p->out.o->element_count()) * width(c.o_t);
  const std::size_t f_bytes =
      f_uid >= 0 ? static_cast<std::size_t>(p->out.final_state->element_count()) * width(c.state_t) : 0;
  const TensorPtr& ckt = p->out.state_checkpoints;
  const std::int64_t c_uid = ckt ? ckt->get_uid() : -1;
  const std::size_t c_bytes = ckt ? static_cast<std::size_t>(ckt->element_count()) * width(c.state_t) : 0;
  DeviceRun d;
  VariantPack pack;
  upload_inputs(host, d.dev, pack);
  auto out_buf = [&](std::int64_t uid, std::size_t bytes) {
    auto b = poisoned_buffer(bytes);
    pack.set(uid, reinterpret_cast<void*>(b->ptr()));
    d.dev[uid] = std::move(b);
  };
  out_buf(o_uid, o_bytes);
  if (c_uid >= 0) out_buf(c_uid, c_bytes);
  if (f_uid >= 0) {
    if (c.overwrite) pack.set(f_uid, reinterpret_cast<void*>(d.dev.at(p->init->get_uid())->ptr()));
    else out_buf(f_uid, f_bytes);
  }
  // The workspace, poisoned as the outputs are: a read of anything not written fails.
  const std::int64_t ws_bytes = (*plan)->workspace_size();
  if (c.prefill != 0 && !is_fused_mode(c.prefill) && c.t() > 8 * c.n()) {
    EXPECT_GT(ws_bytes, 0) << c.name << ": the two-pass prefill declares its workspace";
  }
  if (is_fused_mode(c.prefill) && !guarded(c, c.prefill)) {
    EXPECT_EQ(ws_bytes, 0) << c.name << ": the fused prefill keeps everything on chip";
  }
  if (guarded(c, c.prefill)) {  // PIPELINE_ARCH 4's guarded form: a verdict word a (sequence, head)
    EXPECT_EQ(ws_bytes, (c.n() * c.ho() * 4 + 255) / 256 * 256) << c.name;
  }
  std::unique_ptr<DeviceBuffer> ws = poisoned_workspace(ws_bytes);
  EXPECT_EQ(api.ctx_synchronize(), CUDA_SUCCESS);
  ExecutionContext ec;
  ec.stream = gpu().stream;
  ec.device = &gpu().props;
  if (ws) ec.workspace = Workspace{reinterpret_cast<void*>(ws->ptr()), ws_bytes};
  Status ran = (*plan)->execute(pack, ec);
  EXPECT_TRUE(ran.is_good()) << c.name << ": " << ran.message();
  std::optional<gpu_testing::CapturedGraph> graph;
  if (c.capture) {
    // An execute captured into a CUDA graph (after the one above), then new
    // contents in the same buffers and the outputs poisoned again: the replay
    // must compute from the new inputs, checked below against the reference.
    EXPECT_EQ(api.stream_synchronize(gpu().stream), CUDA_SUCCESS) << c.name;
    graph.emplace();
    const Status cap = graph->capture(api, gpu().stream, [&] { return (*plan)->execute(pack, ec); });
    EXPECT_TRUE(cap.is_good()) << c.name << ": " << cap.to_string();
    if (cap.is_bad()) return r;
    host = draw(c, *p, rng, rows_used);
    for (auto& [uid, bytes] : host)
      if (!bytes.empty()) {
        EXPECT_EQ(api.memcpy_htod(d.dev.at(uid)->ptr(), bytes.data(), bytes.size()), CUDA_SUCCESS);
      }
    EXPECT_EQ(api.memset_d32(d.dev.at(o_uid)->ptr(), 0xFFFFFFFFu, std::max<std::size_t>(o_bytes, 4) / 4), CUDA_SUCCESS);
    if (f_uid >= 0 && !c.overwrite) {
      EXPECT_EQ(api.memset_d32(d.dev.at(f_uid)->ptr(), 0xFFFFFFFFu, std::max<std::size_t>(f_bytes, 4) / 4),
                CUDA_SUCCESS);
    }
    EXPECT_EQ(api.ctx_synchronize(), CUDA_SUCCESS);
    const Status replay = graph->launch(gpu().stream);
    EXPECT_TRUE(replay.is_good()) << c.name << ": " << replay.to_string();
  }
  EXPECT_EQ(api.stream_synchronize(gpu().stream), CUDA_SUCCESS) << c.name;
  if (guarded(c, c.prefill) && ws) {  // every pair's verdict written, 1 exactly where a beta leaves [0, 2]
    std::vector<unsigned> got(static_cast<std::size_t>(c.n() * c.ho()));
    EXPECT_EQ(api.memcpy_dtoh(got.data(), ws->ptr(), got.size() * 4), CUDA_SUCCESS);
    const std::vector<unsigned> want = expected_verdicts(c, host.at(p->beta->get_uid()));
    EXPECT_EQ(got, want) << c.name << ": the guard's verdicts";
    std::printf("[ gdn ] %s %-44s guard: %lld of %lld (sequence, head) pairs on the fp32 fallback\n",
                mode_name(c.prefill), c.name.c_str(),
                static_cast<long long>(std::count(want.begin(), want.end(), 1u)), static_cast<long long>(want.size()));
  }
  r.o.resize(o_bytes);
  if (o_bytes) {
    EXPECT_EQ(api.memcpy_dtoh(r.o.data(), d.dev.at(o_uid)->ptr(), o_bytes), CUDA_SUCCESS);
  }
  if (f_uid >= 0) {
    r.fin.resize(f_bytes);
    const CUdeviceptr src = c.overwrite ? d.dev.at(p->init->get_uid())->ptr() : d.dev.at(f_uid)->ptr();
    EXPECT_EQ(api.memcpy_dtoh(r.fin.data(), src, f_bytes), CUDA_SUCCESS);
  }
  r.ck.resize(c_bytes);
  if (c_bytes) {
    EXPECT_EQ(api.memcpy_dtoh(r.ck.data(), d.dev.at(c_uid)->ptr(), c_bytes), CUDA_SUCCESS);
  }
  if (!run_reference) return r;
  // The reference on the same inputs (its own output buffers).
  std::map<std::int64_t, reference::HostBuffer> hb;
  for (auto& [uid, bytes] : host) hb[uid] = reference::HostBuffer{bytes.data()};
  r.ref_o.assign(o_bytes, 0);
  hb[o_uid] = reference::HostBuffer{r.ref_o.data()};
  if (f_uid >= 0) {
    r.ref_fin.assign(f_bytes, 0);
    hb[f_uid] = reference::HostBuffer{r.ref_fin.data()};
  }
  r.ref_ck.assign(c_bytes, 0);
  if (c_uid >= 0) hb[c_uid] = reference::HostBuffer{r.ref_ck.data()};
  Status ref = reference::execute(p->g, hb);
  EXPECT_TRUE(ref.is_good()) << c.name << ": " << ref.message();
  double worst = 0;
  r.o_ratio = rms_ratio(decode(r.o, c.o_t), decode(r.ref_o, c.o_t), &worst);
  if (f_uid >= 0) r.fin_ratio = rms_ratio(decode(r.fin, c.state_t), decode(r.ref_fin, c.state_t));
  if (c_uid >= 0) r.ck_ratio = rms_ratio(decode(r.ck, c.state_t), decode(r.ref_ck, c.state_t));
  std::printf("[ gdn ] %s %-44s T=%-6lld N=%-3lld o %.2e  state %.2e  (o max abs err %.2e)", mode_name(c.prefill),
              c.name.c_str(), static_cast<long long>(c.t()), static_cast<long long>(c.n()), r.o_ratio, r.fin_ratio,
              worst);
  if (c_uid >= 0) std::printf("  checkpoints %.2e", r.ck_ratio);
  std::printf("\n");
  return r;
}

// Case c under both prefill modes and the split two-pass one, each on fresh inputs (bound checkpoints: the fused
// and two-pass modes write them, rule L8; not the one-pass prefill).
void check(const Case& c0, std::mt19937& rng) {
  for (int m : modes_for(c0.d, f16_modes(c0))) {
    if (c0.ckpt_every > 0 && arch_of(m) == 0) continue;
    Case c = c0;
    c.prefill = m;
    Outcome r = run_case(c, rng);
    const double tol = c.tol > 0 ? c.tol : kTol;
    EXPECT_LE(r.o_ratio, tol) << c.name << " (" << mode_name(m) << "): O";  // NaN (an unwritten element) fails too
    if (c.final_out) {
      EXPECT_LE(r.fin_ratio, tol) << c.name << " (" << mode_name(m) << "): final_state";
    }
    if (c.ckpt_every > 0) {
      EXPECT_LE(r.ck_ratio, tol) << c.name << " (" << mode_name(m) << "): state_checkpoints";
    }
  }
}

std::vector<std::int64_t> kVarlen = {1, 63, 0, 64, 65, 1000, 4097, 0};

TEST_F(GdnGpu, PrefillVarlenBothHeadDims) {
  std::mt19937 rng(1);
  for (std::int64_t d : {128, 64}) {
    Case c;
    c.name = "varlen d" + std::to_string(d);
    c.d = d;
    c.lens = kVarlen;
    c.hq = c.hk = 1;
    c.hv = 2;
    check(c, rng);
    if (d == 128) {  // the declaration PIPELINE_ARCH 4 serves split and not (f16_modes): under it too
      c.name += ", l2norm, beta sigmoid";
      c.l2 = c.beta_sig = true;
      check(c, rng);
    }
  }
  // state_checkpoints every 64 / 1024 tokens (fused, two-pass modes; d64: every 64 / 128), fp32 / bf16, init.
  for (std::int64_t every : {64, 1024}) {
    Case c;
    c.name = "checkpoints every " + std::to_string(every);
    c.lens = kVarlen;
    c.ckpt_every = every;
    c.init = true;
    c.state_t = every == 64 ? DataType::FLOAT : DataType::BFLOAT16;
    check(c, rng);
    Case h = c;  // PIPELINE_ARCH 4's checkpoint builds too
    h.name += ", l2norm, beta sigmoid";
    h.l2 = h.beta_sig = true;
    check(h, rng);
    c.name += ", d64";
    c.d = 64;
    c.ckpt_every = every == 64 ? 64 : 128;
    check(c, rng);
  }
}

TEST_F(GdnGpu, PrefillTypesAndGva) {
  std::mt19937 rng(2);
  Case c;
  c.lens = {300, 77, 129};
  c.name = "fp16 io, fp32 out, bf16 gates";
  c.io = DataType::HALF;
  c.o_t = DataType::FLOAT;
  c.gate_t = c.beta_t = DataType::BFLOAT16;
  c.d = 64;
  check(c, rng);
  // d = 128 (the fused prefill's head dim): its 16-bit O leaves through a shared-memory
  // transpose, fp32 O element by element; both, and fp16 O.
  c = Case{};
  c.lens = {300, 77, 129};
  c.name = "fp16 io and out, d 128";
  c.io = c.o_t = DataType::HALF;
  check(c, rng);
  c = Case{};
  c.lens = {300, 77, 129};
  c.name = "bf16 io, fp32 out, d 128";
  c.o_t = DataType::FLOAT;
  check(c, rng);
  c = Case{};
  c.lens = {300, 77, 129};
  c.name = "GQA q 4 heads, v 2 heads, int64 cu";
  c.hq = 4;
  c.hk = 1;
  c.hv = 2;
  c.cu64 = true;
  check(c, rng);
  c = Case{};
  c.lens = {200, 5};
  c.name = "bf16 state, no initial state";
  c.init = false;
  c.state_t = DataType::FLOAT;
  check(c, rng);
  c = Case{};
  c.lens = {200, 5};
  c.name = "bf16 state in and out";
  c.state_t = DataType::BFLOAT16;
  check(c, rng);
}

TEST_F(GdnGpu, PrefillAttributes) {
  std::mt19937 rng(3);
  auto base = [] {
    Case c;
    c.lens = {130, 64, 1, 257};
    return c;
  };
  Case c = base();
  c.name = "strong decay g in [-10, -5]";
  c.strong = true;
  check(c, rng);
  // Chain splits (spans of 8 chunks) where span transitions vanish (logsigmoid gates: a span's log-decay ~ -400;
  // strong decay) and where they do not (weak decay on heads 0..3), in one launch: the span summaries write the
  // vanishing ones as zeros without running their chunks (span_transition_vanishes, l2norm in kernel only).
  for (bool strong : {false, true}) {
    c = Case{};
    c.name = std::string("l2norm, heads 0-3 weak decay, 4-7 ") + (strong ? "strong decay" : "logsigmoid");
    c.lens = {4097, 0, 1300, 2500};
    c.l2 = c.weak_low_heads = true;
    c.strong = strong;
    check(c, rng);
  }
  // The fused split of a batch of several sequences (GDN_SPLIT_ADAPT): split_min_chunks (10 chunks on 132
  // multiprocessors: 8 heads over 122 chunks) leaves the 600-token sequence (10 chunks) whole although it is longer
  // than a span of 8, and splits the 4097- and 3000-token ones; the span scan's map puts the whole sequences first.
  c = Case{};
  c.name = "l2norm, beta sigmoid, a sequence longer than a span left whole";
  c.lens = {600, 4097, 64, 0, 3000};
  c.l2 = c.beta_sig = true;
  {
    auto p = build(c);
    ASSERT_TRUE(p->g.validate().is_good());  // the outputs' types inferred
    auto prob = linear_attention::analyze_gdn(p->g);
    ASSERT_TRUE(prob.is_good()) << prob.status().message();
    const long long whole = linear_attention::split_min_chunks(*prob, gpu().props.sm_count);
    EXPECT_GE(whole, 10) << "no sequence longer than a span is left whole on this device";
    EXPECT_LT(whole, 47) << "the 3000-token sequence is left whole on this device";
  }
  check(c, rng);
  c = base();
  c.name = "l2norm in kernel, scale 0.3";
  c.l2 = true;
  c.scale = 0.3;
  check(c, rng);
  // GDN_WS3_F16INV's domain (the inverse on fp16 tiles is bounded under l2norm with every beta of the chunk in
  // [0, 2]: scripts/check_f16_inverse_domain.py): every other 64-token block of the batch has betas up to 3, the
  // others not, in the same CTAs (the stable side of beta > 2: logsigmoid gates) — what a rule choosing that form
  // must still get right.
  c = base();
  c.name = "l2norm, beta up to 3 on every other block";
  c.l2 = c.beta_wide = true;
  c.lens = {300, 64, 1, 700};
  check(c, rng);
  c = base();
  c.name = "beta sigmoid";
  c.beta_sig = true;
  check(c, rng);
  // The declarations PIPELINE_ARCH 4 serves (rule f16_inverse_domain), under every mode and it: beta in (0, 1) and
  // (0, 2), strong and weak decay, the other gates, fp16 io.
  c = base();
  c.name = "l2norm, beta 2 sigmoid (allow_neg_eigval), strong decay";
  c.l2 = c.beta_sig = c.neg = c.strong = true;
  check(c, rng);
  c = base();
  c.name = "l2norm, beta 2 sigmoid, heads 0-3 weak decay";
  c.l2 = c.beta_sig = c.neg = c.weak_low_heads = true;
  c.lens = {4097, 0, 1300};
  // Past fla's 5e-3 for the two-pass forms: 4097 tokens of weak decay with beta up to 2 carry the bf16 roundings of
  // the two-pass workspace tiles furthest (H100, 2026-12-06, c482527: O 5.38e-3 two-pass and split8; one-pass
  // 4.92e-3, fused 4.19e-3, warp-specialised 4.50e-3 with either inverse; bench/results/
  // 2026-12-06-gdn-f16inv-plan-h100.txt). Stated here, 6e-3, rather than the case dropped.
  c.tol = 6e-3;
  check(c, rng);
  c = base();
  c.name = "l2norm, beta sigmoid, safe gate, fp16 io and out, scale 0.3";
  c.l2 = c.beta_sig = c.safe = c.a_log = c.dt = true;
  c.io = c.o_t = DataType::HALF;
  c.scale = 0.3;
  check(c, rng);
  c = base();
  c.name = "l2norm, beta sigmoid, linear gate, GQA, bf16 state";
  c.l2 = c.beta_sig = c.linear = true;
  c.hq = 4;
  c.hk = 1;
  c.hv = 2;
  c.state_t = DataType::BFLOAT16;
  check(c, rng);
  c = base();
  c.name = "beta 2 sigmoid (allow_neg_eigval)";
  c.beta_sig = c.neg = true;
  check(c, rng);
  c = base();
  c.name = "linear gate";
  c.linear = true;
  check(c, rng);
  c = base();
  c.name = "safe gate, a_log and dt_bias";
  c.safe = c.a_log = c.dt = true;
  check(c, rng);
  c = base();
  c.name = "safe gate, no a_log or dt_bias";
  c.safe = true;
  check(c, rng);
  c = base();
  c.name = "no final state";
  c.final_out = false;
  check(c, rng);
}

// The graphs FlashInfer 0.7.2 builds through cudnn.pygraph: its uids, linear-domain
// fp32 alpha, post-sigmoid fp32 beta, l2norm in kernel, fp32 or bf16 V-major state
// written to a separate buffer, int64 cu_seqlens.
TEST_F(GdnGpu, FlashInferShapedGraphs) {
  std::mt19937 rng(9);
  for (DataType st : {DataType::FLOAT, DataType::BFLOAT16}) {
    Case c;
    c.name = std::string("FlashInfer-shaped, state ") + std::string(to_string(st));
    c.flashinfer_uids = c.linear = c.l2 = c.cu64 = true;
    c.state_t = st;
    c.hq = c.hk = 2;
    c.hv = 4;
    c.lens = {100, 1, 700, 0};
    check(c, rng);
  }
  // Views of a fused qkv projection (FlashInfer's calls pass them): prefill at both
  // head dims, and decode (one token a sequence) reading v through its strides.
  for (std::int64_t d : {128, 64}) {
    Case c;
    c.name = "fused qkv views, d" + std::to_string(d);
    c.fused_qkv = c.flashinfer_uids = c.linear = c.l2 = true;
    c.d = d;
    c.hq = c.hk = 2;
    c.hv = 4;
    c.lens = {100, 1, 700, 0, 65};
    check(c, rng);
  }
  Case c;
  c.name = "fused qkv views, decode";
  c.fused_qkv = c.l2 = true;
  c.hq = c.hk = 2;
  c.hv = 4;
  c.lens.assign(24, 1);
  check(c, rng);
}

// Pool rows: read row state_indices[i], write it back; other rows untouched.
void check_pool_mode(const Case& c, std::mt19937& rng) {
  std::vector<std::int64_t> used;
  Outcome r = run_case(c, rng, &used);
  EXPECT_LE(r.o_ratio, kTol) << c.name << " (" << mode_name(c.prefill) << ")";
  EXPECT_LE(r.fin_ratio, kTol) << c.name << " (" << mode_name(c.prefill) << ")";
  // The untouched rows: bitwise equal to the reference's (its copy of the input).
  const std::size_t row_bytes = static_cast<std::size_t>(c.ho() * c.d * c.d) * width(c.state_t);
  std::size_t diff = 0;
  for (std::int64_t row = 0; row < c.n_pool; ++row) {
    if (std::find(used.begin(), used.end(), row) != used.end()) continue;
    if (std::memcmp(r.fin.data() + row * row_bytes, r.ref_fin.data() + row * row_bytes, row_bytes) != 0) ++diff;
  }
  EXPECT_EQ(diff, 0u) << c.name << " (" << mode_name(c.prefill) << "): pool rows no sequence addresses changed";
}
// A decode-sized case runs the decode kernel under every mode (LaKernels checks the requests on
// the CPU): one plain mode and the one with the most knobs, not all seven.
std::vector<int> decode_modes(std::int64_t d) { return {0, d == 128 ? kFusedWsSplit8 : kSplit8}; }
void check_pool(const Case& c, std::mt19937& rng, bool decode = false) {
  for (int m : decode ? decode_modes(c.d) : modes_for(c.d, f16_modes(c))) {
    Case x = c;
    x.prefill = m;
    check_pool_mode(x, rng);
  }
}

TEST_F(GdnGpu, StatePoolInPlaceAndDistinct) {
  std::mt19937 rng(4);
  for (bool overwrite : {true, false})
    for (bool decode : {false, true}) {
      Case c;
      c.pool = true;
      c.n_pool = 11;
      c.overwrite = overwrite;
      c.lens = decode ? std::vector<std::int64_t>{1, 3, 8, 0, 2} : std::vector<std::int64_t>{100, 65, 0, 7, 300};
      c.name = std::string("pool ") + (overwrite ? "in place" : "distinct") + (decode ? " decode" : " prefill");
      check_pool(c, rng);
      if (!decode) {  // and PIPELINE_ARCH 4 split and not (f16_modes)
        c.name += ", l2norm, beta sigmoid";
        c.l2 = c.beta_sig = true;
        check_pool(c, rng);
      }
    }
}

TEST_F(GdnGpu, DecodeOneToEightTokens) {
  std::mt19937 rng(5);
  for (std::int64_t t : {1, 2, 8}) {
    Case c;
    c.lens.assign(48, t);
    c.hq = c.hk = 2;
    c.hv = 4;
    c.pool = c.overwrite = true;
    c.n_pool = 64;
    c.l2 = true;
    c.name = "decode T=" + std::to_string(t) + " per sequence, l2norm";
    c.beta_sig = true;
    check_pool(c, rng, /*decode=*/true);
  }
  Case c;
  c.lens.assign(40, 1);
  c.d = 64;
  c.io = DataType::HALF;
  c.name = "decode d64 fp16";
  c.strong = true;
  check(c, rng);
  // Both decode kernels (la_engine.h decode_small): the cases above run gdn_decode_small
  // (at most kDecodeSmallPairs (sequence, head) pairs); these run gdn_decode, past it.
  for (std::int64_t t : {1, 3}) {
    Case big;
    big.hq = big.hk = 2;
    big.hv = 8;
    big.lens.assign(static_cast<std::size_t>(linear_attention::kDecodeSmallPairs / 8 + 7), t);
    big.pool = big.overwrite = true;
    big.n_pool = static_cast<std::int64_t>(big.lens.size()) + 3;
    big.l2 = true;
    big.name = "decode T=" + std::to_string(t) + " past the small CTA's pairs (gdn_decode)";
    check_pool(big, rng, /*decode=*/true);
  }
}

void batch_invariant_bitwise(int m);  // below

// CUDA-graph capture: an execute captured after a first one replays on new
// contents of the same buffers (both prefill modes, the workspace included; the
// decode kernel; a state pool in distinct buffers, which adds the pool copy).
TEST_F(GdnGpu, CapturedExecuteReplaysOnNewContents) {
  std::mt19937 rng(12);
  Case c;
  c.name = "captured, prefill";
  c.capture = c.l2 = true;
  c.lens = {300, 77, 0, 129};
  check(c, rng);
  c.name = "captured, decode";
  c.lens.assign(16, 1);
  check(c, rng);
  c = Case{};
  c.name = "captured, pool in distinct buffers";
  c.capture = c.pool = true;
  c.n_pool = 7;
  c.lens = {130, 64, 1};
  check(c, rng);
}

// Execute-time shape overrides: a plan built for one T and N runs another T and N
// of its layout class (its built kernels), checked against the reference run on a
// graph declared at the call's extents; every prefill mode.
TEST_F(GdnGpu, OverriddenShapesRunTheBuiltKernels) {
  std::mt19937 rng(14);
  const auto& api = *gpu().api;
  for (int m : modes_for(128, F16::kSplit)) {
    SCOPED_TRACE(mode_name(m));
    Case built;
    built.l2 = built.beta_sig = true;  // f16_modes: every mode
    built.lens = {300, 77, 129};
    Case call = built;
    call.name = "overridden T and N";
    call.lens = {500, 64, 2, 700, 3};
    auto pb = build(built);
    auto pc = build(call);
    ASSERT_TRUE(pb->g.validate().is_good());
    ASSERT_TRUE(pc->g.validate().is_good());
    FactsCache facts(pb->g, PlanTarget{gpu().props});
    PlanContext ctx{&facts};
    auto plan = build_direct(la_engine(), pb->g, config_of(m), ctx);
    ASSERT_TRUE(plan.is_good()) << plan.status().message();
    auto host = draw(call, *pc, rng, nullptr);
    // The call's tensors by port: (built graph's tensor, call graph's tensor).
    const std::pair<TensorPtr, TensorPtr> ports[] = {{pb->q, pc->q},       {pb->k, pc->k},
                                                     {pb->v, pc->v},       {pb->gate, pc->gate},
                                                     {pb->beta, pc->beta}, {pb->cu, pc->cu},
                                                     {pb->init, pc->init}, {pb->out.o, pc->out.o},
                                                     {pb->out.final_state, pc->out.final_state}};
    VariantPack pack;
    std::map<std::int64_t, std::unique_ptr<DeviceBuffer>> dev;  // by the call graph's uid
    for (const auto& [b, c] : ports) {
      if (!b || !c) continue;
      const std::size_t bytes = static_cast<std::size_t>(c->element_count()) * width(c->get_data_type());
      auto buf = std::make_unique<DeviceBuffer>(api, std::max<std::size_t>(bytes, 4));
      ASSERT_TRUE(buf->status().is_good());
      auto it = host.find(c->get_uid());
      if (it != host.end()) {
        ASSERT_EQ(api.memcpy_htod(buf->ptr(), it->second.data(), it->second.size()), CUDA_SUCCESS);
      } else {
        ASSERT_EQ(api.memset_d32(buf->ptr(), 0xFFFFFFFFu, std::max<std::size_t>(bytes, 4) / 4), CUDA_SUCCESS);
      }
      pack.set(b->get_uid(), reinterpret_cast<void*>(buf->ptr()));
      pack.override_shape(b->get_uid(), c->get_dim());
      dev[c->get_uid()] = std::move(buf);
    }
    auto prob = linear_attention::analyze_gdn(pc->g);
    ASSERT_TRUE(prob.is_good()) << prob.status().message();
    const std::int64_t ws_bytes = linear_attention::workspace_bytes(*prob, arch_of(m), split_of(m));
    std::unique_ptr<DeviceBuffer> ws;
    ExecutionContext ec;
    ec.stream = gpu().stream;
    ec.device = &gpu().props;
    if (ws_bytes > 0) {
      // One byte short is refused, naming the size the call's extents need.
      ws = std::make_unique<DeviceBuffer>(api, static_cast<std::size_t>(ws_bytes));
      ASSERT_TRUE(ws->status().is_good());
      ec.workspace = Workspace{reinterpret_cast<void*>(ws->ptr()), ws_bytes - 1};
      const Status short_ws = (*plan)->execute(pack, ec);
      EXPECT_EQ(short_ws.code(), ErrorCode::INVALID_VALUE) << short_ws.to_string();
      EXPECT_NE(short_ws.message().find(std::to_string(ws_bytes)), std::string::npos) << short_ws.message();
      ec.workspace = Workspace{reinterpret_cast<void*>(ws->ptr()), ws_bytes};
    }
    const Status ran = (*plan)->execute(pack, ec);
    ASSERT_TRUE(ran.is_good()) << ran.to_string();
    ASSERT_EQ(api.stream_synchronize(gpu().stream), CUDA_SUCCESS);
    std::map<std::int64_t, reference::HostBuffer> hb;
    for (auto& [uid, bytes] : host) hb[uid] = reference::HostBuffer{bytes.data()};
    const TensorPtr o = pc->out.o, fin = pc->out.final_state;
    const std::size_t o_bytes = static_cast<std::size_t>(o->element_count()) * width(call.o_t);
    const std::size_t f_bytes = static_cast<std::size_t>(fin->element_count()) * width(call.state_t);
    std::vector<unsigned char> want_o(o_bytes), want_f(f_bytes), got_o(o_bytes), got_f(f_bytes);
    hb[o->get_uid()] = reference::HostBuffer{want_o.data()};
    hb[fin->get_uid()] = reference::HostBuffer{want_f.data()};
    const Status ref = reference::execute(pc->g, hb);
    ASSERT_TRUE(ref.is_good()) << ref.message();
    ASSERT_EQ(api.memcpy_dtoh(got_o.data(), dev.at(o->get_uid())->ptr(), o_bytes), CUDA_SUCCESS);
    ASSERT_EQ(api.memcpy_dtoh(got_f.data(), dev.at(fin->get_uid())->ptr(), f_bytes), CUDA_SUCCESS);
    const double ro = rms_ratio(decode(got_o, call.o_t), decode(want_o, call.o_t));
    const double rf = rms_ratio(decode(got_f, call.state_t), decode(want_f, call.state_t));
    std::printf("[ gdn ] %s %-44s T=%-6lld N=%-3lld o %.2e  state %.2e  (plan built for T=%lld N=%lld)\n", mode_name(m),
                call.name.c_str(), static_cast<long long>(call.t()), static_cast<long long>(call.n()), ro, rf,
                static_cast<long long>(built.t()), static_cast<long long>(built.n()));
    EXPECT_LE(ro, kTol);
    EXPECT_LE(rf, kTol);
  }
}

TEST_F(GdnGpu, BatchInvariantBitwise) {
  for (int m : modes_for(128, F16::kSplit)) {
    SCOPED_TRACE(mode_name(m));
    batch_invariant_bitwise(m);
  }
}

void batch_invariant_bitwise(int m) {
  std::mt19937 rng(6);
  // Sequence X (length 300) alone, then packed between two others.
  Case alone;
  alone.name = "batch_invariant alone";
  alone.prefill = m;
  alone.batch_inv = true;
  alone.l2 = alone.beta_sig = true;  // f16_modes: PIPELINE_ARCH 4 too
  alone.lens = {300};
  Case packed = alone;
  packed.name = "batch_invariant packed";
  packed.lens = {5, 300, 1000};
  auto pa = build(alone);
  ASSERT_TRUE(pa->g.validate().is_good());
  auto pp = build(packed);
  ASSERT_TRUE(pp->g.validate().is_good());
  auto ha = draw(alone, *pa, rng, nullptr);
  auto hp = draw(packed, *pp, rng, nullptr);
  // Copy X's rows (tokens 5 .. 305 of the packed batch) and its state into the packed inputs.
  auto splice = [&](const TensorPtr& ta, const TensorPtr& tp, std::int64_t row_elems, std::int64_t row0) {
    const std::size_t w = width(ta->get_data_type());
    auto& dst = hp.at(tp->get_uid());
    const auto& src = ha.at(ta->get_uid());
    std::memcpy(dst.data() + row0 * row_elems * w, src.data(), src.size());
    (void)row_elems;
  };
  const std::int64_t D = alone.d, HO = alone.ho();
  splice(pa->q, pp->q, alone.hq * D, 5);
  splice(pa->k, pp->k, alone.hk * D, 5);
  splice(pa->v, pp->v, alone.hv * D, 5);
  splice(pa->gate, pp->gate, HO, 5);
  splice(pa->beta, pp->beta, HO, 5);
  splice(pa->init, pp->init, HO * D * D, 1);
  Outcome ra = run_case(alone, rng, nullptr, &ha);
  Outcome rp = run_case(packed, rng, nullptr, &hp, false);
  EXPECT_LE(ra.o_ratio, kTol);
  const std::size_t ob = static_cast<std::size_t>(300 * HO * D) * width(alone.o_t);
  ASSERT_GE(rp.o.size(), static_cast<std::size_t>(5 * HO * D) * width(alone.o_t) + ob);
  EXPECT_EQ(std::memcmp(ra.o.data(), rp.o.data() + static_cast<std::size_t>(5 * HO * D) * width(alone.o_t), ob), 0)
      << "O of the sequence differs alone and packed";
  const std::size_t sb = static_cast<std::size_t>(HO * D * D) * width(alone.state_t);
  EXPECT_EQ(std::memcmp(ra.fin.data(), rp.fin.data() + sb, sb), 0) << "final state differs alone and packed";
}

// The two-pass plan refuses a workspace below its declared size (or none), naming it.
TEST_F(GdnGpu, TwoPassRefusesASmallWorkspace) {
  std::mt19937 rng(10);
  Case c;
  c.lens = {200, 100};
  auto p = build(c);
  ASSERT_TRUE(p->g.validate().is_good());
  FactsCache facts(p->g, PlanTarget{gpu().props});
  PlanContext ctx{&facts};
  auto plan = build_direct(la_engine(), p->g, config_of(1), ctx);
  ASSERT_TRUE(plan.is_good()) << plan.status().message();
  const std::int64_t need = (*plan)->workspace_size();
  ASSERT_GT(need, 0);
  auto host = draw(c, *p, rng, nullptr);
  const auto& api = *gpu().api;
  std::vector<std::unique_ptr<DeviceBuffer>> bufs;
  VariantPack pack;
  for (auto& [uid, bytes] : host) {
    bufs.push_back(std::make_unique<DeviceBuffer>(api, std::max<std::size_t>(bytes.size(), 4)));
    ASSERT_EQ(api.memcpy_htod(bufs.back()->ptr(), bytes.data(), bytes.size()), CUDA_SUCCESS);
    pack.set(uid, reinterpret_cast<void*>(bufs.back()->ptr()));
  }
  for (const TensorPtr& t : {p->out.o, p->out.final_state}) {
    bufs.push_back(std::make_unique<DeviceBuffer>(
        api, static_cast<std::size_t>(t->element_count()) * width(t->get_data_type())));
    pack.set(t->get_uid(), reinterpret_cast<void*>(bufs.back()->ptr()));
  }
  auto ws = std::make_unique<DeviceBuffer>(api, static_cast<std::size_t>(need));
  ASSERT_TRUE(ws->status().is_good());
  ExecutionContext ec;
  ec.stream = gpu().stream;
  ec.device = &gpu().props;
  ec.workspace = Workspace{reinterpret_cast<void*>(ws->ptr()), need - 16};
  Status st = (*plan)->execute(pack, ec);
  EXPECT_EQ(st.code(), ErrorCode::INVALID_VALUE) << st.to_string();
  EXPECT_NE(st.message().find("workspace of " + std::to_string(need) + " bytes"), std::string::npos) << st.message();
  ec.workspace = Workspace{};
  EXPECT_EQ((*plan)->execute(pack, ec).code(), ErrorCode::INVALID_VALUE);
  ec.workspace = Workspace{reinterpret_cast<void*>(ws->ptr()), need};
  EXPECT_TRUE((*plan)->execute(pack, ec).is_good());
  EXPECT_EQ(api.stream_synchronize(gpu().stream), CUDA_SUCCESS);
}

// Device ordinals (the H200 machine has device 0 only): a target naming a device
// that does not exist is refused at build and opens no runtime (never built on
// device 0); a plan built on device 0 refuses an execute whose handle names
// another device before launching (the poisoned O stays poisoned), and runs
// with its own. (Builds and launches on device 1 of a two-device driver:
// tests/runtime/test_device_ordinal.cpp.)
TEST_F(GdnGpu, DeviceOrdinals) {
  std::mt19937 rng(7);
  auto count = device_count();
  ASSERT_TRUE(count.is_good()) << count.status().message();
  Case c;
  c.name = "device ordinals";
  c.d = 64;
  c.lens = {5, 70};
  c.init = c.final_out = false;
  auto p = build(c);
  ASSERT_TRUE(p->g.validate().is_good());
  const PlanConfig config{la_engine().id(), {}, {}, -1};
  DeviceProperties ghost = gpu().props;  // device 0's figures, an ordinal no device has
  ghost.ordinal = *count;
  {
    FactsCache facts(p->g, PlanTarget{ghost});
    PlanContext ctx{&facts};
    ASSERT_TRUE(la_engine().check_support(p->g, ctx).is_good());
    auto refused = build_direct(la_engine(), p->g, config, ctx);
    ASSERT_TRUE(refused.is_bad()) << "built a plan for device " << *count << " (it does not exist): on device 0?";
    EXPECT_EQ(refused.status().code(), ErrorCode::INVALID_CUDA_DEVICE) << refused.status().to_string();
    EXPECT_NE(refused.status().message().find("device " + std::to_string(*count) + " does not exist"),
              std::string::npos)
        << refused.status().message();
    EXPECT_EQ(linear_attention::shared_runtime_if_open(*count), nullptr);
  }
  ASSERT_EQ(gpu().props.ordinal, 0);
  FactsCache facts(p->g, PlanTarget{gpu().props});
  PlanContext ctx{&facts};
  auto plan = build_direct(la_engine(), p->g, config, ctx);
  ASSERT_TRUE(plan.is_good()) << plan.status().message();
  ASSERT_NE(linear_attention::shared_runtime_if_open(0), nullptr);
  const auto& api = *gpu().api;
  auto host = draw(c, *p, rng, nullptr);
  std::map<std::int64_t, std::unique_ptr<DeviceBuffer>> dev;
  VariantPack pack;
  for (auto& [uid, bytes] : host) {
    auto b = std::make_unique<DeviceBuffer>(api, std::max<std::size_t>(bytes.size(), 4));
    ASSERT_TRUE(b->status().is_good());
    ASSERT_EQ(api.memcpy_htod(b->ptr(), bytes.data(), bytes.size()), CUDA_SUCCESS);
    pack.set(uid, reinterpret_cast<void*>(b->ptr()));
    dev[uid] = std::move(b);
  }
  const std::int64_t o_uid = p->out.o->get_uid();
  const std::size_t o_bytes = static_cast<std::size_t>(p->out.o->element_count()) * width(c.o_t);
  auto o = std::make_unique<DeviceBuffer>(api, o_bytes);
  ASSERT_TRUE(o->status().is_good());
  pack.set(o_uid, reinterpret_cast<void*>(o->ptr()));
  ASSERT_EQ(api.memset_d32(o->ptr(), 0xFFFFFFFFu, o_bytes / 4), CUDA_SUCCESS);
  ASSERT_EQ(api.ctx_synchronize(), CUDA_SUCCESS);
  DeviceProperties other = gpu().props;
  other.ordinal = 1;
  ExecutionContext ec;
  ec.stream = gpu().stream;
  ec.device = &other;
  Status refused = (*plan)->execute(pack, ec);
  EXPECT_EQ(refused.code(), ErrorCode::INVALID_CUDA_DEVICE) << refused.to_string();
  EXPECT_NE(refused.message().find("built on device 0"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("drives device 1"), std::string::npos) << refused.message();
  ASSERT_EQ(api.stream_synchronize(gpu().stream), CUDA_SUCCESS);
  std::vector<unsigned char> got(o_bytes);
  ASSERT_EQ(api.memcpy_dtoh(got.data(), o->ptr(), o_bytes), CUDA_SUCCESS);
  EXPECT_EQ(got, std::vector<unsigned char>(o_bytes, 0xFF)) << "the refused execute wrote O";
  ec.device = &gpu().props;
  Status ran = (*plan)->execute(pack, ec);
  ASSERT_TRUE(ran.is_good()) << ran.to_string();
  ASSERT_EQ(api.stream_synchronize(gpu().stream), CUDA_SUCCESS);
  ASSERT_EQ(api.memcpy_dtoh(got.data(), o->ptr(), o_bytes), CUDA_SUCCESS);
  std::map<std::int64_t, reference::HostBuffer> hb;
  for (auto& [uid, bytes] : host) hb[uid] = reference::HostBuffer{bytes.data()};
  std::vector<unsigned char> want(o_bytes, 0);
  hb[o_uid] = reference::HostBuffer{want.data()};
  Status ref = reference::execute(p->g, hb);
  ASSERT_TRUE(ref.is_good()) << ref.message();
  EXPECT_LE(rms_ratio(decode(got, c.o_t), decode(want, c.o_t)), kTol) << "O on device 0";
}

}  // namespace
