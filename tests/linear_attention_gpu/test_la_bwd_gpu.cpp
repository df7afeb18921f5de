// tests/linear_attention_gpu/test_la_bwd_gpu.cpp — the linear_attention engine's
// gdn_bwd on the device against the float64 reference's gdn_bwd
// (--gtest_filter='GdnBwdGpu.*').
//
// Every case draws fresh random inputs, poisons every output and the workspace
// (all bits set: NaN in every type) before the run, and compares each gradient
// with the reference's by RMS ratio, ||got - ref|| / ||ref|| (any NaN fails),
// within fla's tolerances for 16-bit inputs: dQ, dK, dV and d_initial_state
// 8e-3, dG and dBeta 2e-2; d_a_log and d_dt_bias (safe_gate) 1e-2. Inputs follow the forward's GPU tests (fla's): q, k
// unit-norm rows (raw under use_qk_l2norm), v ~ N(0, 1), gates
// logsigmoid(N(0, 1)) or strong decay g in [-10, -5] (alpha = e^g under the
// linear gate), beta in (0, 1) or logits N(0, 1), initial state N(0, 1/4); dO ~
// N(0, 1), d_final_state N(0, 1/4). The families: varlen with empty sequences and
// sequences of 1, 63, 64, 65, 1000 and 4097 tokens at both head dims; fp16 and
// bf16 inputs, bf16 gates and states; grouped heads both ways (q/k shared by
// 4 value heads; v shared by 2 q heads) with int64 cu_seqlens; every attribute
// the engine serves (safe_gate with and without a_log / dt_bias: raw gate logits
// N(0, 1), a_log = log(1 + 15 U), dt_bias N(0, 1)); d_final_state and d_initial_state one buffer
// (overwrite_initial_state). Under batch_invariant a sequence's gradients are
// bitwise the same alone and packed with others. A plan built for one T and N runs
// another through execute-time shape overrides. The case, its graph and inputs are gdn_bwd_gpu_case.h's; the
// timing of the cells (figures, not checks) is test_la_bwd_gpu_timing.cpp's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engines/linear_attention/gdn_bwd.h"
#include "engines/linear_attention/la_engine.h"
#include "engines/reference/executor.h"
#include "gemm_gpu/gemm_gpu_util.h"
#include "linear_attention_gpu/gdn_bwd_gpu_case.h"
#include "linear_attention_gpu/la_gpu_util.h"
#include "opgraph/device.h"
#include "opgraph/op_graph.h"
#include "runtime/device_buffer.h"

namespace {

using namespace opgraph;
using namespace opgraph::la_testing;
using namespace opgraph::la_testing::gdn_bwd;
using gemm_testing::build_direct;
using gemm_testing::gpu;

struct Outcome {
  std::map<std::string, std::vector<unsigned char>> got, ref;  // bytes by output name
  std::map<std::string, double> ratio;
  bool ran = false;
};

// Builds, runs on the device (outputs and workspace poisoned) and, unless
// `run_reference` is false, on the reference; `given`: the inputs to use.
Outcome run_case(const Case& c, std::mt19937& rng, const std::map<std::int64_t, std::vector<unsigned char>>* given =
                                                       nullptr,
                 bool run_reference = true) {
  Outcome r;
  auto p = build(c);
  const Status v = p->g.validate();
  EXPECT_TRUE(v.is_good()) << c.name << ": " << v.to_string();
  if (v.is_bad()) return r;
  FactsCache facts(p->g, PlanTarget{gpu().props});
  PlanContext ctx{&facts};
  const Status sup = la_engine().check_support(p->g, ctx);
  EXPECT_TRUE(sup.is_good()) << c.name << ": " << sup.message();
  if (sup.is_bad()) return r;
  const PlanConfig config{la_engine().id(), {{KnobType::PIPELINE_ARCH, c.arch}, {KnobType::CHAIN_SPLIT, c.split}}, {},
                          -1};
  auto plan = build_direct(la_engine(), p->g, config, ctx);
  EXPECT_TRUE(plan.is_good()) << c.name << ": " << plan.status().message();
  if (plan.is_bad()) return r;
  const auto host = given ? *given : draw(c, *p, rng);
  const auto& api = *gpu().api;
  DeviceBuffers dev;
  VariantPack pack;
  upload_inputs(host, dev, pack);
  const auto outs = checked(*p);
  auto bytes_of = [](const TensorPtr& t) {
    return static_cast<std::size_t>(t->element_count()) * width(t->get_data_type());
  };
  for (const Checked& o : outs) {
    const std::int64_t uid = o.t->get_uid();
    if (c.overwrite && o.t == p->out.d_initial_state) {
      // One buffer: d_final_state in, d_initial_state out.
      pack.set(uid, reinterpret_cast<void*>(dev.at(p->d_final->get_uid())->ptr()));
      continue;
    }
    auto b = poisoned_buffer(bytes_of(o.t));
    pack.set(uid, reinterpret_cast<void*>(b->ptr()));
    dev[uid] = std::move(b);
  }
  const std::int64_t ws_bytes = (*plan)->workspace_size();
  EXPECT_GT(ws_bytes, 0) << c.name;
  std::unique_ptr<DeviceBuffer> ws = poisoned_workspace(ws_bytes);
  EXPECT_EQ(api.ctx_synchronize(), CUDA_SUCCESS);
  ExecutionContext ec;
  ec.stream = gpu().stream;
  ec.device = &gpu().props;
  if (ws) ec.workspace = Workspace{reinterpret_cast<void*>(ws->ptr()), ws_bytes};
  const Status ran = (*plan)->execute(pack, ec);
  EXPECT_TRUE(ran.is_good()) << c.name << ": " << ran.message();
  EXPECT_EQ(api.stream_synchronize(gpu().stream), CUDA_SUCCESS) << c.name;
  for (const Checked& o : outs) {
    auto& b = r.got[o.name];
    b.resize(bytes_of(o.t));
    const std::int64_t uid = c.overwrite && o.t == p->out.d_initial_state ? p->d_final->get_uid() : o.t->get_uid();
    if (!b.empty()) {
      EXPECT_EQ(api.memcpy_dtoh(b.data(), dev.at(uid)->ptr(), b.size()), CUDA_SUCCESS);
    }
  }
  r.ran = ran.is_good();
  if (!run_reference) return r;
  std::map<std::int64_t, reference::HostBuffer> hb;
  for (const auto& [uid, bytes] : host) hb[uid] = reference::HostBuffer{const_cast<unsigned char*>(bytes.data())};
  for (const Checked& o : outs) {
    auto& b = r.ref[o.name];
    b.assign(bytes_of(o.t), 0);
    hb[o.t->get_uid()] = reference::HostBuffer{b.data()};
  }
  const Status ref = reference::execute(p->g, hb);
  EXPECT_TRUE(ref.is_good()) << c.name << ": " << ref.message();
  std::printf("[ gdn_bwd ] %-46s T=%-6lld N=%-3lld", c.name.c_str(), static_cast<long long>(c.t()),
              static_cast<long long>(c.n()));
  for (const Checked& o : outs) {
    const DataType dt = o.t->get_data_type();
    r.ratio[o.name] = rms_ratio(decode(r.got[o.name], dt), decode(r.ref[o.name], dt));
    std::printf("  %s %.2e", o.name, r.ratio[o.name]);
  }
  std::printf("\n");
  return r;
}

void check(const Case& c, std::mt19937& rng) {
  Outcome r = run_case(c, rng);
  ASSERT_TRUE(r.ran) << c.name;
  auto p = build(c);
  for (const Checked& o : checked(*p)) {
    ASSERT_TRUE(r.ratio.count(o.name)) << c.name << ": " << o.name << " not compared";
    EXPECT_LE(r.ratio[o.name], o.tol) << c.name << ": " << o.name;  // NaN (an unwritten element) fails too
  }
}

const std::vector<std::int64_t> kVarlen = {1, 63, 0, 64, 65, 1000, 4097, 0};

// The varlen batch at head dim d, one q/k head and two value heads, named `prefix` + "varlen d<d>".
Case varlen_case(std::int64_t d, const std::string& prefix) {
  Case c;
  c.name = prefix + "varlen d" + std::to_string(d);
  c.d = d;
  c.lens = kVarlen;
  c.hq = c.hk = 1;
  c.hv = 2;
  return c;
}

// Head dim 64 with grouped q heads: 4 q heads over 1 k head, 2 value heads.
void gqa_d64(Case& c) {
  c.d = 64;
  c.hq = 4;
  c.hk = 1;
  c.hv = 2;
}
// fp16 q / k / v with bf16 gates, beta and states, 4 q heads over 1 k head and 2 v heads (dq, dk staged).
void fp16_gqa(Case& c) {
  c.io = DataType::HALF;
  c.gate_t = c.beta_t = c.state_t = DataType::BFLOAT16;
  c.hq = 4;
  c.hk = 1;
  c.hv = 2;
}

TEST_F(GdnBwdGpu, VarlenBothHeadDims) {
  std::mt19937 rng(11);
  for (std::int64_t d : {128, 64}) check(varlen_case(d, ""), rng);
}

TEST_F(GdnBwdGpu, TypesAndGroupedHeads) {
  std::mt19937 rng(12);
  Case c;
  c.lens = {300, 77, 129};
  c.name = "fp16 io, bf16 gates, d64";
  c.io = DataType::HALF;
  c.gate_t = c.beta_t = DataType::BFLOAT16;
  c.d = 64;
  check(c, rng);
  c.name = "fp16 io, d128";
  c.d = 128;
  c.gate_t = c.beta_t = DataType::FLOAT;
  check(c, rng);
  c = Case{};
  c.lens = {300, 77, 129};
  c.name = "GVA q/k 2 heads, v 8 heads";
  check(c, rng);
  c = Case{};
  c.lens = {300, 77, 129};
  c.name = "GQA q 4 heads, k 1, v 2 heads, int64 cu";
  c.hq = 4;
  c.hk = 1;
  c.hv = 2;
  c.cu64 = true;
  check(c, rng);
  c = Case{};
  c.lens = {200, 5, 0};
  c.name = "no initial state, no d_final_state";
  c.init = c.d_final = false;
  check(c, rng);
  c = Case{};
  c.lens = {200, 5, 0};
  c.name = "bf16 states";
  c.state_t = DataType::BFLOAT16;
  check(c, rng);
}

TEST_F(GdnBwdGpu, Attributes) {
  std::mt19937 rng(13);
  auto base = [] {
    Case c;
    c.lens = {130, 64, 1, 257};
    return c;
  };
  Case c = base();
  c.name = "strong decay g in [-10, -5]";
  c.strong = true;
  check(c, rng);
  c = base();
  c.name = "l2norm in kernel, scale 0.3";
  c.l2 = true;
  c.scale = 0.3;
  check(c, rng);
  c = base();
  c.name = "l2norm in kernel, d64, GVA";
  c.l2 = true;
  c.d = 64;
  check(c, rng);
  c = base();
  c.name = "beta sigmoid";
  c.beta_sig = true;
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
  c.name = "safe gate, dt_bias only, GQA, d64";
  c.safe = c.dt = true;
  gqa_d64(c);
  check(c, rng);
  c = base();
  c.name = "overwrite_initial_state (one state gradient buffer)";
  c.overwrite = true;
  check(c, rng);
}

// The chain split of the scans (CHAIN_SPLIT pinned): spans from zero seeds, the summaries'
// fix-up in both directions, then every span from its true seed. Sequences of one span
// (64, 65 tokens at 8 chunks a span), of several with a short last one (1000: 16 chunks;
// 4097: 65 chunks, nine spans) and empty ones; d_final_state and d_initial_state one buffer
// (span 0 writes it while the last span's seed came from it); both head dims; grouped heads.
TEST_F(GdnBwdGpu, ChainSplit) {
  std::mt19937 rng(17);
  for (std::int64_t d : {128, 64}) {
    Case c = varlen_case(d, "split 8, ");
    c.split = 8;
    check(c, rng);
  }
  Case c;
  c.name = "split 8, overwrite, safe gate, l2norm";
  c.lens = {4097, 700, 0};
  c.split = 8;
  c.overwrite = c.safe = c.a_log = c.dt = c.l2 = true;
  check(c, rng);
  c = Case{};
  c.name = "split 16, no initial state, GQA, d64";
  c.lens = {3000, 2000};
  c.split = 16;
  c.init = false;
  gqa_d64(c);
  check(c, rng);
  c = Case{};
  c.name = "split 32, no d_final_state, strong decay";
  c.lens = {8192};
  c.split = 32;
  c.d_final = false;
  c.strong = true;
  check(c, rng);
}

// state_checkpoints bound: the forward recompute runs spans of c tokens at once, span j > 0 from the sequence's
// checkpoint j - 1, unsplit (the reverse scan whole) and split (the reverse spans from the fix-up); the rows are
// random states, which the reference takes too, so a row read from the wrong sequence or offset shows. Cadences
// of one chunk and of several; sequences shorter than the cadence, of one checkpoint and of many, empty ones;
// bf16 rows; both head dims.
TEST_F(GdnBwdGpu, CheckpointsSeedTheForwardSpans) {
  std::mt19937 rng(19);
  for (std::int64_t d : {128, 64}) {
    Case c = varlen_case(d, "checkpoints every 64, ");
    c.ckpt_every = 64;
    check(c, rng);
  }
  Case c;
  c.name = "checkpoints every 256 (bf16), split 8, overwrite";
  c.lens = {4097, 700, 0, 255, 256};
  c.ckpt_every = 256;
  c.ckpt_t = DataType::BFLOAT16;
  c.split = 8;
  c.overwrite = true;
  check(c, rng);
  c = Case{};
  c.name = "checkpoints every 1024, safe gate, l2norm, GQA, d64";
  c.lens = {3000, 2000, 1024};
  c.ckpt_every = 1024;
  c.safe = c.a_log = c.dt = c.l2 = true;
  gqa_d64(c);
  check(c, rng);
  c = Case{};
  c.name = "checkpoints every 128, split 16, no initial state, strong decay";
  c.lens = {8192, 130};
  c.ckpt_every = 128;
  c.split = 16;
  c.init = false;
  c.strong = true;
  check(c, rng);
}

// Three cases a d = 128 form runs under PIPELINE_ARCH `arch` (names prefixed): every gate and beta attribute with the
// in-place state gradient; the linear gate with no initial state, strong decay and no d_final_state, v shared by 2 q
// heads; one long sequence.
void check_attribute_cases(std::int64_t arch, const std::string& prefix, std::mt19937& rng) {
  Case c;
  c.arch = arch;
  c.name = prefix + "safe gate, l2norm, beta sigmoid x2, overwrite";
  c.lens = {700, 1, 65};
  c.safe = c.a_log = c.dt = c.l2 = c.beta_sig = c.neg = c.overwrite = true;
  check(c, rng);
  c = Case{};
  c.arch = arch;
  c.name = prefix + "linear gate, no init, strong decay, no d_final";
  c.lens = {513, 64};
  c.linear = c.strong = true;
  c.init = c.d_final = false;
  c.hq = c.hk = 2;
  c.hv = 1;
  check(c, rng);
  c = Case{};
  c.arch = arch;
  c.name = prefix + "one long sequence, l2norm";
  c.lens = {4096};
  c.l2 = true;
  check(c, rng);
}

// The fused forms (d = 128): PIPELINE_ARCH 2, gdn_bwd_fwd_fused writing the prep's tiles, S^T and Vn from the
// forward's warp-specialised pass, then the scan-based reverse; 3, that and gdn_bwd_rev_fused (dS^T on three
// warpgroups, both V halves a CTA). The varlen batch under both; under 3: fp16 inputs with bf16 gates and states and
// grouped q / k heads (4 q heads over 1 k head: dq, dk staged); every gate and beta attribute with the in-place
// state gradient; no initial state, strong decay, no d_final_state, v shared by 2 q heads; a long sequence.
TEST_F(GdnBwdGpu, FusedRecompute) {
  std::mt19937 rng(21);
  Case c = varlen_case(128, "fused fwd, ");
  c.arch = 2;
  check(c, rng);
  c = varlen_case(128, "fused fwd + rev, ");
  c.arch = 3;
  check(c, rng);
  c = Case{};
  c.arch = 3;
  c.name = "fused, fp16 io, bf16 gates and states, GQA";
  c.lens = {300, 77, 0, 129};
  fp16_gqa(c);
  c.cu64 = true;
  check(c, rng);
  check_attribute_cases(3, "fused, ", rng);
}

// The one-pass form (PIPELINE_ARCH 5, rule B11; d = 128, bf16 q / k / v / dO): gdn_bwd_fwd_st_fused, then
// gdn_bwd_onepass (TMA loads a chunk ahead, dq / dk added into [T][HQ] / [T][HK] sums), gdn_bwd_finish. The varlen
// batch (HO = 2: the gates read by each row's thread); 4 q heads over 2 k heads with 4 v heads and fp32 gates (their
// TMA boxes); bf16 gates and states with 8 v heads over 2 q / k heads; every gate and beta attribute with the
// in-place state gradient; no initial state, strong decay, no d_final_state, v shared by 2 q heads (dV staged); a
// long sequence.
TEST_F(GdnBwdGpu, OnePass) {
  std::mt19937 rng(31);
  Case c = varlen_case(128, "one pass, ");
  c.arch = 5;
  check(c, rng);
  c = Case{};
  c.arch = 5;
  c.name = "one pass, 4 q heads over 2 k heads, 4 v heads, fp32 gates";
  c.lens = {300, 77, 0, 129};
  c.hq = 4;
  c.hk = 2;
  c.hv = 4;
  check(c, rng);
  c = Case{};
  c.arch = 5;
  c.name = "one pass, bf16 gates and states, 8 v heads";
  c.lens = {200, 513};
  c.gate_t = c.beta_t = c.state_t = DataType::BFLOAT16;
  c.hq = c.hk = 2;
  c.hv = 8;
  c.cu64 = true;
  check(c, rng);
  check_attribute_cases(5, "one pass, ", rng);
}

// The chain split cases of a fused form `arch` (3: its six span kernels — the forward summaries into the span blocks,
// the fix-up's forward walk, each span's forward recompute from its seed, the reverse summaries, the reverse walk,
// each span's reverse scan; 5: the first five of them, then gdn_bwd_onepass over (head, sequence x span) from each
// span's dS^T seed): the varlen batch (sequences of one span, of nine with a short last one, empty ones),
// d_final_state and d_initial_state one buffer with the safe gate, grouped q / k heads without an initial state (3:
// fp16 inputs; 5, bf16 only: 8 v heads, bf16 gates), one long sequence of many spans without d_final_state, and span
// transitions that vanish (heads 4-7, logsigmoid gates: written as zeros, their chunks not run) beside ones that do
// not (heads 0-3, weak decay), l2norm in kernel.
void check_split_cases(std::int64_t arch, const std::string& form, std::mt19937& rng) {
  auto split_case = [&](std::int64_t split, const std::string& what) {
    Case c;
    c.arch = arch;
    c.split = split;
    c.name = form + " split " + std::to_string(split) + ", " + what;
    return c;
  };
  Case c = varlen_case(128, form + " split 8, ");
  c.arch = arch;
  c.split = 8;
  check(c, rng);
  c = split_case(8, "overwrite, safe gate, l2norm");
  c.lens = {4097, 700, 0};
  c.overwrite = c.safe = c.a_log = c.dt = c.l2 = true;
  check(c, rng);
  c = split_case(16, arch == 5 ? "4 q heads over 2 k heads, 8 v heads, bf16 gates, no initial state"
                               : "fp16 io, bf16 gates and states, GQA, no initial state");
  c.lens = {3000, 77, 0, 2000};
  if (arch == 5) {
    c.hq = 4;
    c.hk = 2;
    c.hv = 8;
    c.gate_t = c.beta_t = DataType::BFLOAT16;
  } else {
    fp16_gqa(c);
  }
  c.init = false;
  check(c, rng);
  c = split_case(32, "one long sequence, no d_final_state, strong decay");
  c.lens = {8192};
  c.d_final = false;
  c.strong = true;
  check(c, rng);
  c = split_case(8, "l2norm, heads 0-3 weak decay, 4-7 logsigmoid");
  c.lens = {4097, 0, 1300};
  c.l2 = c.weak_low_heads = true;
  check(c, rng);
}

TEST_F(GdnBwdGpu, FusedChainSplit) {
  std::mt19937 rng(23);
  check_split_cases(3, "fused", rng);
}

TEST_F(GdnBwdGpu, OnePassChainSplit) {
  std::mt19937 rng(37);
  check_split_cases(5, "one pass", rng);
}

// The fused forms with state_checkpoints bound: the forward recompute over spans of the cadence at once
// (gdn_bwd_fwd_span_fused), span j > 0 from the sequence's checkpoint j - 1 (random states the reference takes too),
// then the reverse scan whole (3: fused; 2: the scan's). Cadences of one chunk and of several, sequences shorter than
// the cadence and empty ones, bf16 rows, the safe gate with the in-place state gradient, no initial state.
TEST_F(GdnBwdGpu, FusedCheckpoints) {
  std::mt19937 rng(29);
  Case c = varlen_case(128, "fused, checkpoints every 64, ");
  c.arch = 3;
  c.ckpt_every = 64;
  check(c, rng);
  c = Case{};
  c.arch = 3;
  c.name = "fused, checkpoints every 256 (bf16), safe gate, l2norm, overwrite";
  c.lens = {4097, 700, 0, 255, 256};
  c.ckpt_every = 256;
  c.ckpt_t = DataType::BFLOAT16;
  c.overwrite = c.safe = c.a_log = c.dt = c.l2 = true;
  check(c, rng);
  c = Case{};
  c.arch = 2;
  c.name = "fused recompute, checkpoints every 1024, no initial state";
  c.lens = {3000, 2000, 1024};
  c.ckpt_every = 1024;
  c.init = false;
  check(c, rng);
}

// Execute-time shape overrides: a plan built for one T and N runs another T and N
// of its layout class (its built kernels), checked against the reference run on a
// graph declared at the call's extents; a workspace one byte short of what the
// call's extents need is refused naming the size.
TEST_F(GdnBwdGpu, OverriddenShapesRunTheBuiltKernels) {
  for (std::int64_t arch : {0, 3, 5}) {  // the prep and the scans; both fused forms (B9); the one-pass form (B11)
    std::mt19937 rng(15);
    const auto& api = *gpu().api;
    Case built;
    built.l2 = true;
    built.lens = {300, 77, 129};
    Case call = built;
    call.name = arch ? "overridden T and N, PIPELINE_ARCH " + std::to_string(arch) : "overridden T and N";
    call.lens = {500, 64, 2, 0, 700, 3};
    auto pb = build(built);
    auto pc = build(call);
    ASSERT_TRUE(pb->g.validate().is_good());
    ASSERT_TRUE(pc->g.validate().is_good());
    FactsCache facts(pb->g, PlanTarget{gpu().props});
    PlanContext ctx{&facts};
    const PlanConfig config{la_engine().id(), {{KnobType::PIPELINE_ARCH, arch}, {KnobType::CHAIN_SPLIT, 0}}, {},
                            -1};
    auto plan = build_direct(la_engine(), pb->g, config, ctx);
    ASSERT_TRUE(plan.is_good()) << plan.status().message();
    auto host = draw(call, *pc, rng);
    // The call's tensors by port: (built graph's tensor, call graph's tensor).
    const std::pair<TensorPtr, TensorPtr> ports[] = {
        {pb->q, pc->q},           {pb->k, pc->k},           {pb->v, pc->v},
        {pb->gate, pc->gate},     {pb->beta, pc->beta},     {pb->cu, pc->cu},
        {pb->init, pc->init},     {pb->d_o, pc->d_o},       {pb->d_final, pc->d_final},
        {pb->out.dq, pc->out.dq}, {pb->out.dk, pc->out.dk}, {pb->out.dv, pc->out.dv},
        {pb->out.dg, pc->out.dg}, {pb->out.dbeta, pc->out.dbeta}, {pb->out.d_initial_state, pc->out.d_initial_state}};
    VariantPack pack;
    std::map<std::int64_t, std::unique_ptr<DeviceBuffer>> dev;  // by the call graph's uid
    for (const auto& [b, c] : ports) {
      ASSERT_TRUE(b && c);
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
    auto prob = linear_attention::analyze_gdn_bwd(pc->g);
    ASSERT_TRUE(prob.is_good()) << prob.status().message();
    // (The one-pass form stages dq and dk besides the default form's workspace.)
    const std::int64_t ws_bytes = linear_attention::gdn_bwd_workspace_bytes(*prob, 0, arch == 5);
    ASSERT_GT(ws_bytes, (*plan)->workspace_size());  // more tokens and sequences than built
    auto ws = std::make_unique<DeviceBuffer>(api, static_cast<std::size_t>(ws_bytes));
    ASSERT_TRUE(ws->status().is_good());
    ASSERT_EQ(api.memset_d32(ws->ptr(), 0xFFFFFFFFu, static_cast<std::size_t>(ws_bytes) / 4), CUDA_SUCCESS);
    ExecutionContext ec;
    ec.stream = gpu().stream;
    ec.device = &gpu().props;
    ec.workspace = Workspace{reinterpret_cast<void*>(ws->ptr()), ws_bytes - 1};
    const Status short_ws = (*plan)->execute(pack, ec);
    EXPECT_EQ(short_ws.code(), ErrorCode::INVALID_VALUE) << short_ws.to_string();
    EXPECT_NE(short_ws.message().find(std::to_string(ws_bytes)), std::string::npos) << short_ws.message();
    ec.workspace = Workspace{reinterpret_cast<void*>(ws->ptr()), ws_bytes};
    const Status ran = (*plan)->execute(pack, ec);
    ASSERT_TRUE(ran.is_good()) << ran.to_string();
    ASSERT_EQ(api.stream_synchronize(gpu().stream), CUDA_SUCCESS);
    std::map<std::int64_t, reference::HostBuffer> hb;
    for (auto& [uid, bytes] : host) hb[uid] = reference::HostBuffer{bytes.data()};
    std::map<std::string, std::vector<unsigned char>> want;
    for (const Checked& o : checked(*pc)) {
      auto& w = want[o.name];
      w.assign(static_cast<std::size_t>(o.t->element_count()) * width(o.t->get_data_type()), 0);
      hb[o.t->get_uid()] = reference::HostBuffer{w.data()};
    }
    const Status ref = reference::execute(pc->g, hb);
    ASSERT_TRUE(ref.is_good()) << ref.message();
    std::printf("[ gdn_bwd ] %-46s T=%-6lld N=%-3lld", call.name.c_str(), static_cast<long long>(call.t()),
                static_cast<long long>(call.n()));
    for (const Checked& o : checked(*pc)) {
      const auto& w = want.at(o.name);
      std::vector<unsigned char> got(w.size());
      ASSERT_EQ(api.memcpy_dtoh(got.data(), dev.at(o.t->get_uid())->ptr(), got.size()), CUDA_SUCCESS);
      const DataType dt = o.t->get_data_type();
      const double r = rms_ratio(decode(got, dt), decode(w, dt));
      std::printf("  %s %.2e", o.name, r);
      EXPECT_LE(r, o.tol) << call.name << ": " << o.name;
    }
    std::printf("  (plan built for T=%lld N=%lld)\n", static_cast<long long>(built.t()),
                static_cast<long long>(built.n()));
  }
}

// batch_invariant: a sequence's gradients are bitwise the same alone and packed
// after other sequences (its token rows of dQ, dK, dV, dG, dBeta and its row of
// d_initial_state), under the prep and the scans and under both fused forms.
TEST_F(GdnBwdGpu, BatchInvariantBitwise) {
  for (std::int64_t arch : {0, 2, 3}) {  // the prep and the scans; the fused forms (B9)
    SCOPED_TRACE("PIPELINE_ARCH " + std::to_string(arch));
    std::mt19937 rng(14);
    Case packed;
    packed.name = "batch_invariant, packed";
    packed.batch_inv = true;
    packed.arch = arch;
    packed.lens = {77, 300, 129};
    Case alone = packed;
    alone.name = "batch_invariant, alone";
    alone.lens = {300};
    auto pp = build(packed);
    auto pa = build(alone);
    ASSERT_TRUE(pp->g.validate().is_good());  // uids as run_case's graphs will have them
    ASSERT_TRUE(pa->g.validate().is_good());
    auto hp = draw(packed, *pp, rng);
    // The alone case's inputs: the packed case's middle sequence (tokens 77 .. 377, state row 1).
    std::map<std::int64_t, std::vector<unsigned char>> ha;
    const std::int64_t HO = packed.ho(), D = packed.d, t0 = 77, len = 300;
    auto rows = [&](const TensorPtr& from, const TensorPtr& to, std::int64_t first, std::int64_t count) {
      const std::size_t row = hp.at(from->get_uid()).size() / static_cast<std::size_t>(from->get_dim()[0]);
      const auto& src = hp.at(from->get_uid());
      ha[to->get_uid()].assign(src.begin() + static_cast<std::ptrdiff_t>(row * first),
                               src.begin() + static_cast<std::ptrdiff_t>(row * (first + count)));
    };
    rows(pp->q, pa->q, t0, len);
    rows(pp->k, pa->k, t0, len);
    rows(pp->v, pa->v, t0, len);
    rows(pp->gate, pa->gate, t0, len);
    rows(pp->beta, pa->beta, t0, len);
    rows(pp->d_o, pa->d_o, t0, len);
    rows(pp->init, pa->init, 1, 1);
    rows(pp->d_final, pa->d_final, 1, 1);
    ha[pa->cu->get_uid()] = encode({0.0, 300.0}, DataType::INT32);
    Outcome rp = run_case(packed, rng, &hp, /*run_reference=*/false);
    Outcome ra = run_case(alone, rng, &ha, /*run_reference=*/false);
    ASSERT_TRUE(rp.ran && ra.ran);
    auto same_rows = [&](const char* name, std::size_t row_bytes, std::int64_t first) {
      const auto& a = ra.got.at(name);
      const auto& b = rp.got.at(name);
      ASSERT_LE(row_bytes * static_cast<std::size_t>(first) + a.size(), b.size()) << name;
      EXPECT_EQ(std::memcmp(a.data(), b.data() + row_bytes * static_cast<std::size_t>(first), a.size()), 0)
          << name << ": the sequence's gradients differ alone and packed";
    };
    same_rows("dQ", static_cast<std::size_t>(packed.hq * D) * 2, t0);
    same_rows("dK", static_cast<std::size_t>(packed.hk * D) * 2, t0);
    same_rows("dV", static_cast<std::size_t>(packed.hv * D) * 2, t0);
    same_rows("dG", static_cast<std::size_t>(HO) * 4, t0);
    same_rows("dBeta", static_cast<std::size_t>(HO) * 4, t0);
    same_rows("d_initial_state", static_cast<std::size_t>(HO * D * D) * 4, 1);
  }
}

}  // namespace
