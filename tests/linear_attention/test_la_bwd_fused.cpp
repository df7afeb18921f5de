// tests/linear_attention/test_la_bwd_fused.cpp — gdn_bwd's fused forms (rule B9) without a GPU: the kernels a
// plan compiles under PIPELINE_ARCH 2 (gdn_bwd_fwd_fused, the forward's warp-specialised fused build, in place of
// gdn_bwd_prep and gdn_bwd_fwd_scan) and 3 (that, and gdn_bwd_rev_fused in place of gdn_bwd_rev_scan; under a chain
// split its six span kernels; under state_checkpoints the forward recompute's spans seeded by them), the knob's
// refusals by name (head dim 64, a chain split under 2 or with state_checkpoints, gdn_summary_bwd), PIPELINE_ARCH 0
// and 1 keeping the prep and the scans, and the heuristics' order (PIPELINE_ARCH 3 first where its chains fill the
// device; its split proposed last where the fused split rule splits); and the one-pass form (PIPELINE_ARCH 5, rule
// B11, at the end, with its TMA maps' encoding).
// Their NVRTC compile is LaBwdNvrtc.EveryGdnBwdSpecialisationCompilesForSm90a; their numerics
// GdnBwdGpu.FusedRecompute (tests/linear_attention_gpu/test_la_bwd_gpu.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engines/linear_attention/gdn_bwd.h"
#include "engines/linear_attention/gdn_bwd_onepass.h"
#include "engines/linear_attention/la_engine.h"
#include "ir/linear_attention_fixture.h"
#include "linear_attention/la_bwd_test_util.h"

namespace {

using namespace opgraph;
using la_test::Built;
using la_test::Cfg;
using linear_attention::analyze_gdn_bwd;
using linear_attention::BwdForm;

// The graph of `op` for `c`, validated; frozen unless `freeze` is false.
Built bwd(const Cfg& c, const char* op = "gdn_bwd", Attributes attrs = {}, bool freeze = true) {
  Built b = la_test::build(la_test::op_named(op), c, std::move(attrs));
  la_test::mark_outputs(b);
  const Status v = b.g.validate();
  EXPECT_TRUE(v.is_good()) << v.to_string();
  if (freeze) b.g.freeze();
  return b;
}
PlanConfig config(std::int64_t arch, std::int64_t split = 0) {
  return PlanConfig{la_bwd_test::engine().id(),
                    {{KnobType::PIPELINE_ARCH, arch}, {KnobType::CHAIN_SPLIT, split}}, {}, -1};
}
// The d = 128 bf16 engine configuration's gdn_bwd problem with an initial state.
auto init_problem() {
  Cfg c = la_test::engine_cfg(128);
  c.init = true;
  return analyze_gdn_bwd(bwd(c).g);
}
// The kernels a d = 128 bf16 plan compiles: `head`, then the gradients' three.
std::vector<std::string> with_grads(std::vector<std::string> head) {
  for (const char* k : {"gdn_bwd_grads_d128_bf16", "gdn_bwd_finish_d128_bf16", "gdn_bwd_gate_params_d128_bf16"})
    head.push_back(k);
  return head;
}
constexpr const char* kPlanOnePass = "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=5]";
bool has_define(const runtime::KernelRequest& r, const std::string& name, const std::string& value) {
  return std::any_of(r.defines.begin(), r.defines.end(),
                     [&](const runtime::KernelDefine& d) { return d.name == name && d.value == value; });
}

TEST(LaBwdFused, ItsKernelsReplaceThePrepAndTheScans) {
  auto p = init_problem();
  ASSERT_TRUE(p.is_good()) << p.status().message();
  std::vector<std::string> entries;
  for (const auto& r : linear_attention::gdn_bwd_kernel_requests(*p, BwdForm{0, true, true})) {
    entries.push_back(r.entry);
    if (r.entry != "gdn_bwd_fwd_fused" && r.entry != "gdn_bwd_rev_fused") continue;
    EXPECT_EQ(r.kernel, r.entry + "_d128_bf16");
    EXPECT_EQ(r.source, "linear_attention/kernels/gdn_fused.cu");
    EXPECT_TRUE(has_define(r, "GDN_FUSED_WS", "1"));  // the warp-specialised build holds both entries
    EXPECT_TRUE(has_define(r, "GDN_D", "128"));
    EXPECT_FALSE(has_define(r, "GDN_CKPT", "1"));     // that build has neither
  }
  EXPECT_EQ(entries, (std::vector<std::string>{"gdn_bwd_fwd_fused", "gdn_bwd_rev_fused", "gdn_bwd_grads",
                                               "gdn_bwd_finish", "gdn_bwd_gate_params"}));
  // The forward recompute alone (PIPELINE_ARCH 2): the reverse scan stays.
  entries.clear();
  for (const auto& r : linear_attention::gdn_bwd_kernel_requests(*p, BwdForm{0, true, false}))
    entries.push_back(r.entry);
  EXPECT_EQ(entries, (std::vector<std::string>{"gdn_bwd_fwd_fused", "gdn_bwd_rev_scan", "gdn_bwd_grads",
                                               "gdn_bwd_finish", "gdn_bwd_gate_params"}));
  // The same problem's default form: the prep and both scans, no fused kernel.
  std::vector<std::string> plain;
  for (const auto& r : linear_attention::gdn_bwd_kernel_requests(*p)) plain.push_back(r.entry);
  EXPECT_EQ(plain, (std::vector<std::string>{"gdn_bwd_prep", "gdn_bwd_fwd_scan", "gdn_bwd_rev_scan", "gdn_bwd_grads",
                                             "gdn_bwd_finish", "gdn_bwd_gate_params"}));
  // The fused form writes the regions the prep and the forward scan wrote: the workspace is the same.
  EXPECT_EQ(linear_attention::gdn_bwd_workspace_bytes(*p), linear_attention::gdn_bwd_workspace_bytes(*p, 0));
  // fp16 q / k / v: the fp16 build of the same entry.
  p->io = DataType::HALF;
  const auto half = linear_attention::gdn_bwd_kernel_requests(*p, BwdForm{0, true, true});
  EXPECT_EQ(half[0].kernel, "gdn_bwd_fwd_fused_d128_f16");
  EXPECT_EQ(half[1].kernel, "gdn_bwd_rev_fused_d128_f16");
}

// PIPELINE_ARCH 3 under a chain split: the forward summaries, the fix-up's forward walk, each span's forward recompute,
// the reverse summaries, the fix-up's reverse walk, each span's reverse scan; the four fused ones from the
// warp-specialised build, the walks from the states' source; the split's span blocks in the workspace.
TEST(LaBwdFused, ItsSplitRunsSixSpanKernels) {
  auto p = init_problem();
  ASSERT_TRUE(p.is_good()) << p.status().message();
  std::vector<std::string> entries;
  for (const auto& r : linear_attention::gdn_bwd_kernel_requests(*p, BwdForm{8, true, true})) {
    entries.push_back(r.entry);
    const bool fused = r.entry.find("_fused") != std::string::npos;
    const bool grads = r.entry == "gdn_bwd_grads" || r.entry == "gdn_bwd_finish" || r.entry == "gdn_bwd_gate_params";
    EXPECT_EQ(r.source, std::string("linear_attention/kernels/") +
                            (fused ? "gdn_fused.cu" : grads ? "gdn_bwd_grads.cu" : "gdn_bwd_states.cu"))
        << r.entry;
    EXPECT_EQ(has_define(r, "GDN_FUSED_WS", "1"), fused) << r.entry;
  }
  EXPECT_EQ(entries, (std::vector<std::string>{"gdn_bwd_fwd_summary_fused", "gdn_bwd_span_fixup",
                                               "gdn_bwd_fwd_span_fused", "gdn_bwd_rev_summary_fused",
                                               "gdn_bwd_span_fixup_rev", "gdn_bwd_rev_span_fused", "gdn_bwd_grads",
                                               "gdn_bwd_finish", "gdn_bwd_gate_params"}));
  // The same span blocks as the scans' split (five fp32 [D][D] a (sequence, span, head)).
  EXPECT_GT(linear_attention::gdn_bwd_workspace_bytes(*p, 8), linear_attention::gdn_bwd_workspace_bytes(*p, 0));
  // Every fused entry of the split is declared for both input types at D = 128, and none at 64.
  const auto declared = linear_attention::gdn_bwd_declared_specialisations();
  for (const char* e : {"gdn_bwd_fwd_summary_fused", "gdn_bwd_fwd_span_fused", "gdn_bwd_rev_summary_fused",
                        "gdn_bwd_rev_span_fused", "gdn_bwd_span_fixup_rev"})
    for (const char* k : {"_d128_bf16", "_d128_f16", "_d64_bf16"}) {
      const bool want = std::string(k) != "_d64_bf16" || std::string(e) == "gdn_bwd_span_fixup_rev";
      const bool got = std::any_of(declared.begin(), declared.end(),
                                   [&](const runtime::KernelRequest& r) { return r.kernel == std::string(e) + k; });
      EXPECT_EQ(got, want) << e << k;
    }
}

TEST(LaBwdFused, PlanKernelsFollowTheKnob) {
  Cfg c = la_test::engine_cfg(128);
  Built b = bwd(c);
  Status s;
  EXPECT_EQ(la_bwd_test::planned_kernels(b.g, config(3), &s),
            with_grads({"gdn_bwd_fwd_fused_d128_bf16", "gdn_bwd_rev_fused_d128_bf16"}));
  EXPECT_TRUE(s.is_good()) << s.message();
  EXPECT_EQ(la_bwd_test::planned_kernels(b.g, config(2), &s),
            with_grads({"gdn_bwd_fwd_fused_d128_bf16", "gdn_bwd_rev_scan_d128_bf16"}));
  EXPECT_TRUE(s.is_good()) << s.message();
  EXPECT_EQ(la_bwd_test::planned_kernels(b.g, config(3, 16), &s),
            with_grads({"gdn_bwd_fwd_summary_fused_d128_bf16", "gdn_bwd_span_fixup_d128_bf16",
                        "gdn_bwd_fwd_span_fused_d128_bf16", "gdn_bwd_rev_summary_fused_d128_bf16",
                        "gdn_bwd_span_fixup_rev_d128_bf16", "gdn_bwd_rev_span_fused_d128_bf16"}));
  EXPECT_TRUE(s.is_good()) << s.message();
  // PIPELINE_ARCH 0 and 1 keep the prep and the scans (as every gdn_bwd plan before the fused forms).
  for (std::int64_t arch : {0, 1}) {
    auto names = la_bwd_test::planned_kernels(b.g, config(arch), &s);
    EXPECT_TRUE(s.is_good()) << s.message();
    ASSERT_FALSE(names.empty());
    EXPECT_EQ(names[0], "gdn_bwd_prep_d128_bf16") << "PIPELINE_ARCH " << arch;
  }
}

TEST(LaBwdFused, RuleB9RefusesWhatTheFusedPassDoesNotRun) {
  auto refused = [](const OpGraph& g, const PlanConfig& cfg, const std::string& why) {
    Status s;
    la_bwd_test::planned_kernels(g, cfg, &s);
    EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED) << s.to_string();
    EXPECT_NE(s.message().find("rule B9 fused recompute"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("PIPELINE_ARCH " + std::to_string(cfg.knobs.at(KnobType::PIPELINE_ARCH))),
              std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find(why), std::string::npos) << s.message();
  };
  refused(bwd(la_test::engine_cfg(64)).g, config(3), "head dim 64");
  refused(bwd(la_test::engine_cfg(64)).g, config(2), "head dim 64");
  refused(bwd(la_test::engine_cfg(128)).g, config(2, 8), "CHAIN_SPLIT 8");  // 3 splits; 2 runs sequences whole
  Cfg ck = la_test::engine_cfg(128);
  ck.cu = {0, 200, 200, 530};
  ck.ckpt_rows = 4;
  refused(bwd(ck, "gdn_bwd", Attributes().set("checkpoint_every_n_tokens", std::int64_t{128})).g, config(3, 8),
          "CHAIN_SPLIT 8 with state_checkpoints");
  refused(bwd(la_test::engine_cfg(128), "gdn_summary_bwd").g, config(3), "gdn_summary_bwd");
}

// PIPELINE_ARCH 4 (the forward prefill's inverse on fp16 tiles) shares the knob's domain with gdn_bwd, which has no
// such form: refused by rule B10's name, even where the forward's domain (use_qk_l2norm, use_beta_sigmoid) holds.
TEST(LaBwdFused, RuleB10RefusesTheForwardsF16Inverse) {
  Attributes a;
  a.set("use_qk_l2norm", true);
  a.set("use_beta_sigmoid", true);
  for (const char* op : {"gdn_bwd", "gdn_summary_bwd"})
    for (std::int64_t split : {0, 8}) {
      if (split > 0 && std::string(op) == "gdn_summary_bwd") continue;  // a summary refuses any split first
      Status s;
      EXPECT_TRUE(la_bwd_test::planned_kernels(bwd(la_test::engine_cfg(128), op, a).g, config(4, split), &s).empty());
      EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED) << op << ": " << s.to_string();
      EXPECT_NE(s.message().find("rule B10 forward only"), std::string::npos) << op << ": " << s.message();
    }
}

// state_checkpoints bound: the fused forward recompute runs spans of the cadence at once, each seeded by its
// checkpoint (gdn_bwd_fwd_span_fused), then the whole-sequence reverse scan of the form (3: fused; 2: the scan's).
TEST(LaBwdFused, CheckpointsSeedTheForwardRecomputesSpans) {
  Cfg ck = la_test::engine_cfg(128);
  ck.cu = {0, 200, 200, 530};
  ck.ckpt_rows = 4;
  Built b = bwd(ck, "gdn_bwd", Attributes().set("checkpoint_every_n_tokens", std::int64_t{128}));
  Status s;
  EXPECT_EQ(la_bwd_test::planned_kernels(b.g, config(3), &s),
            with_grads({"gdn_bwd_fwd_span_fused_d128_bf16", "gdn_bwd_rev_fused_d128_bf16"}));
  EXPECT_TRUE(s.is_good()) << s.message();
  EXPECT_EQ(la_bwd_test::planned_kernels(b.g, config(2), &s),
            with_grads({"gdn_bwd_fwd_span_fused_d128_bf16", "gdn_bwd_rev_scan_d128_bf16"}));
  EXPECT_TRUE(s.is_good()) << s.message();
  // The fused split rule never splits with them (B9 refuses the combination).
  auto p = analyze_gdn_bwd(b.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_EQ(linear_attention::gdn_bwd_fused_split_rule(*p, 132), 0);
}

// The heuristics (gdn_bwd_fused_first): PIPELINE_ARCH 3, then 2, first where the (head, sequence) chains, one CTA
// each, number at least 3/4 of the multiprocessors and the chain split rule does not split; else after the
// whole-sequence plan (2, then 3) where B9 serves the graph. The H200's figures behind it:
// bench/results/2026-12-05-gdn-bwd-rev-loader-h200.txt.
Cfg cell(std::int64_t hqk, std::int64_t hv, std::vector<std::int64_t> cu) {
  Cfg c = la_test::engine_cfg(128);
  c.hq = c.hk = hqk;
  c.hv = hv;
  c.cu = std::move(cu);
  return c;
}
TEST(LaBwdFused, TheHeuristicsRankTheForwardRecomputeByItsChains) {
  using la_bwd_test::kPlanFusedBoth;
  using la_bwd_test::kPlanFusedRecompute;
  using la_bwd_test::kPlanUnsplit;
  const std::vector<std::int64_t> four = {0, 8192, 16384, 24576, 32768}, one = {0, 32768};
  // 16/64 and 16/32, 4 x 8192: 256 and 128 chains (3: 0.778x and 0.796x the prep and scans' time): first, after the
  // one-pass form (PIPELINE_ARCH 5; LaBwdOnePass.TheHeuristicsRankItFirstWhereItsChainsFillTheDevice).
  la_bwd_test::expect_our_plans(bwd(cell(16, 64, four), "gdn_bwd", {}, false).g, HeurMode::A,
                                {kPlanOnePass, kPlanFusedBoth, kPlanFusedRecompute, kPlanUnsplit});
  la_bwd_test::expect_our_plans(bwd(cell(16, 32, four), "gdn_bwd", {}, false).g, HeurMode::A,
                                {kPlanOnePass, kPlanFusedBoth, kPlanFusedRecompute, kPlanUnsplit});
  // 16/64, 1 x 32768: 64 chains (unsplit 2: 1.025x, 3: 1.062x): the one-pass split (spans of 128 chunks;
  // LaBwdOnePass.TheHeuristicsRankItsSplitBeforeTheFusedSplit), 3's split (the fused split rule's spans of 256
  // chunks, 0.947x the whole-sequence plan), then the whole-sequence plan, the fused ones.
  la_bwd_test::expect_our_plans(bwd(cell(16, 64, one), "gdn_bwd", {}, false).g, HeurMode::A,
                                {"linear_attention[CHAIN_SPLIT=128, PIPELINE_ARCH=5]",
                                 "linear_attention[CHAIN_SPLIT=256, PIPELINE_ARCH=3]", kPlanUnsplit,
                                 kPlanFusedRecompute, kPlanFusedBoth});
  // 16/32, 1 x 32768: the one-pass split (64), 3's split (spans of 128 chunks, 0.752x the scans' split), the scans'
  // split (128), the whole one, the fused ones.
  la_bwd_test::expect_our_plans(bwd(cell(16, 32, one), "gdn_bwd", {}, false).g, HeurMode::A,
                                {"linear_attention[CHAIN_SPLIT=64, PIPELINE_ARCH=5]",
                                 "linear_attention[CHAIN_SPLIT=128, PIPELINE_ARCH=3]",
                                 "linear_attention[CHAIN_SPLIT=128, PIPELINE_ARCH=0]", kPlanUnsplit,
                                 kPlanFusedRecompute, kPlanFusedBoth});
  // batch_invariant (no split): the fused form's chunks do not depend on the batch either.
  la_bwd_test::expect_our_plans(
      bwd(cell(16, 64, four), "gdn_bwd", Attributes().set("batch_invariant", true), false).g, HeurMode::A,
      {kPlanFusedBoth, kPlanFusedRecompute, kPlanUnsplit});
  // Where B9 refuses (head dim 64), the fused form is not proposed.
  Cfg d64 = cell(16, 64, four);
  d64.k = d64.v = 64;
  la_bwd_test::expect_our_plans(bwd(d64, "gdn_bwd", {}, false).g, HeurMode::A, {kPlanUnsplit});
  // With state_checkpoints bound the fused forms come first wherever the scans' rule does not split (their forward
  // recompute runs the cadence's spans at once): on the H100 (GdnBwdGpu.TimingCheckpoints,
  // bench/results/2026-12-05-gdn-split-mskip-h100.txt, every 1024 tokens) 3 took 0.73x the whole-sequence plan's
  // time at 16/64 4 x 8192 and 0.83x at 16/64, 1 x 32768; where the scans' rule splits, their split stays first
  // (2/8, 1 x 32768: 0.53x 3's time).
  const Attributes every1024 = Attributes().set("checkpoint_every_n_tokens", std::int64_t{1024});
  Cfg ck = cell(16, 64, four);
  ck.ckpt_rows = 32;
  la_bwd_test::expect_our_plans(bwd(ck, "gdn_bwd", every1024, false).g, HeurMode::A,
                                {kPlanFusedBoth, kPlanFusedRecompute, kPlanUnsplit});
  Cfg ck1 = cell(16, 64, one);
  ck1.ckpt_rows = 32;
  la_bwd_test::expect_our_plans(bwd(ck1, "gdn_bwd", every1024, false).g, HeurMode::A,
                                {kPlanFusedBoth, kPlanFusedRecompute, kPlanUnsplit});
  Cfg ck28 = cell(2, 8, one);
  ck28.ckpt_rows = 32;
  la_bwd_test::expect_our_plans(bwd(ck28, "gdn_bwd", every1024, false).g, HeurMode::A,
                                {"linear_attention[CHAIN_SPLIT=64, PIPELINE_ARCH=0]", kPlanUnsplit,
                                 kPlanFusedRecompute, kPlanFusedBoth});
  // The bar: 3/4 of the multiprocessors' worth of chains (99 of 132), none without device facts.
  auto p = analyze_gdn_bwd(bwd(cell(16, 64, four)).g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  p->ho = 25;  // 4 x 25 = 100 chains
  ASSERT_EQ(linear_attention::gdn_bwd_chain_split_rule(*p, 132), 0);
  EXPECT_TRUE(linear_attention::gdn_bwd_fused_first(*p, 132));
  p->ho = 24;  // 96
  ASSERT_EQ(linear_attention::gdn_bwd_chain_split_rule(*p, 132), 0);
  EXPECT_FALSE(linear_attention::gdn_bwd_fused_first(*p, 132));
  p->ho = 64;
  EXPECT_FALSE(linear_attention::gdn_bwd_fused_first(*p, 0));
  // The fused split rule: none where the chains fill the device (4 x 8192), without device facts, under
  // batch_invariant or at head dim 64; spans where one sequence leaves most multiprocessors idle (2/8, 1 x 32768).
  EXPECT_EQ(linear_attention::gdn_bwd_fused_split_rule(*p, 132), 0);
  auto q = analyze_gdn_bwd(bwd(cell(2, 8, one)).g);
  ASSERT_TRUE(q.is_good()) << q.status().message();
  EXPECT_EQ(linear_attention::gdn_bwd_fused_split_rule(*q, 132), 32);  // the H200's fastest: 1.466 ms against 1.815 at 64
  EXPECT_EQ(linear_attention::gdn_bwd_fused_split_rule(*q, 0), 0);
  q->batch_invariant = true;
  EXPECT_EQ(linear_attention::gdn_bwd_fused_split_rule(*q, 132), 0);
  q->batch_invariant = false;
  q->d = 64;
  EXPECT_EQ(linear_attention::gdn_bwd_fused_split_rule(*q, 132), 0);
}

// ---- the one-pass form (PIPELINE_ARCH 5, rule B11): the kernels a plan compiles (gdn_bwd_fwd_st_fused from the
// forward's warp-specialised build with GDN_BWD_ONEPASS, then gdn_bwd_onepass and gdn_bwd_finish / gdn_bwd_gate_params
// from the gradient source's one-pass build), the rule's refusals by name, and the heuristics' order (5 first where
// its chains fill the device and run long); its numerics GdnBwdGpu.OnePass.
BwdForm onepass_form() {
  BwdForm f;
  f.onepass = true;
  return f;
}

TEST(LaBwdOnePass, ItsKernelsAndWorkspace) {
  Cfg c = la_test::engine_cfg(128);
  c.init = true;
  const Built b = bwd(c);
  auto p = analyze_gdn_bwd(b.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  std::vector<std::string> kernels;
  for (const auto& r : linear_attention::gdn_bwd_kernel_requests(*p, onepass_form())) {
    kernels.push_back(r.kernel);
    if (r.entry == "gdn_bwd_fwd_st_fused") {
      EXPECT_EQ(r.source, "linear_attention/kernels/gdn_fused.cu");
      EXPECT_TRUE(has_define(r, "GDN_FUSED_WS", "1"));
      EXPECT_TRUE(has_define(r, "GDN_BWD_ONEPASS", "1"));
      continue;
    }
    // The gradient source's one-pass build: its loads by TMA, dq / dk by L2 reductions (TMA reductions from shared
    // memory), one wait a phase.
    EXPECT_EQ(r.source, "linear_attention/kernels/gdn_bwd_grads.cu") << r.entry;
    EXPECT_TRUE(has_define(r, "GDN_BWD_ONEPASS", "1")) << r.entry;
    EXPECT_TRUE(has_define(r, "GDN_BWD_ONEPASS_RED", "1")) << r.entry;
    EXPECT_TRUE(has_define(r, "GDN_BWD_ONEPASS_BATCH", "1")) << r.entry;
    EXPECT_TRUE(has_define(r, "GDN_BWD_ONEPASS_TMARED", "1")) << r.entry;
    EXPECT_FALSE(has_define(r, "GDN_BWD_ONEPASS_TMADV", "1")) << r.entry;
  }
  EXPECT_EQ(kernels, (std::vector<std::string>{"gdn_bwd_fwd_st_fused_d128_bf16", "gdn_bwd_onepass_d128_bf16_onepass",
                                               "gdn_bwd_finish_d128_bf16_onepass",
                                               "gdn_bwd_gate_params_d128_bf16_onepass"}));
  // The same through the plan's knob.
  Status s;
  EXPECT_EQ(la_bwd_test::planned_kernels(b.g, config(5), &s), kernels);
  EXPECT_TRUE(s.is_good()) << s.message();
  // No other form launches the one-pass kernels.
  for (const BwdForm& f : {BwdForm{}, BwdForm{0, true, false}, BwdForm{0, true, true}, BwdForm{8, true, true}})
    for (const auto& r : linear_attention::gdn_bwd_kernel_requests(*p, f)) {
      EXPECT_NE(r.entry, "gdn_bwd_onepass");
      EXPECT_NE(r.entry, "gdn_bwd_fwd_st_fused");
      EXPECT_FALSE(has_define(r, "GDN_BWD_ONEPASS", "1")) << r.kernel;
    }
  // Every one-pass build is among the declared specialisations (so CI compiles it for sm_90a).
  const auto declared = linear_attention::gdn_bwd_declared_specialisations();
  for (const auto& r : linear_attention::gdn_bwd_kernel_requests(*p, onepass_form()))
    EXPECT_TRUE(std::any_of(declared.begin(), declared.end(),
                            [&](const runtime::KernelRequest& d) { return d.kernel == r.kernel; }))
        << r.kernel;
}

// Its chain split (PIPELINE_ARCH 5 with CHAIN_SPLIT): PIPELINE_ARCH 3's split kernels but its last (the forward
// summaries, the forward walk, the forward recompute of every span, the reverse summaries and walk: the same builds
// as 3's but the span recompute, gdn_bwd_fwd_st_fused's build's, which stores no Vn) in place of
// gdn_bwd_fwd_st_fused, then the one-pass build's gdn_bwd_onepass (over the spans, from their seeds), finish and gate
// parameters; the workspace the split's span blocks on top of the one-pass form's.
TEST(LaBwdOnePass, ItsSplitSeedsItsSpansByTheFusedSplitsWalks) {
  Cfg c = la_test::engine_cfg(128);
  c.init = true;
  const Built b = bwd(c);
  auto p = analyze_gdn_bwd(b.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  BwdForm f = onepass_form();
  f.split = 8;
  std::vector<std::string> kernels;
  std::string st_build;  // gdn_bwd_fwd_st_fused's build (source and defines)
  for (const auto& r : linear_attention::gdn_bwd_kernel_requests(*p, onepass_form()))
    if (r.entry == "gdn_bwd_fwd_st_fused") st_build = r.build_key();
  ASSERT_FALSE(st_build.empty());
  for (const auto& r : linear_attention::gdn_bwd_kernel_requests(*p, f)) {
    kernels.push_back(r.kernel);
    const bool grads_src = r.source == "linear_attention/kernels/gdn_bwd_grads.cu";
    const bool span = r.entry == "gdn_bwd_fwd_span_fused";
    EXPECT_EQ(has_define(r, "GDN_BWD_ONEPASS", "1"), grads_src || span) << r.kernel;
    if (span) {
      EXPECT_EQ(r.build_key(), st_build);  // one compile for both
    }
  }
  EXPECT_EQ(kernels, (std::vector<std::string>{
                         "gdn_bwd_fwd_summary_fused_d128_bf16", "gdn_bwd_span_fixup_d128_bf16",
                         "gdn_bwd_fwd_span_fused_d128_bf16_onepass", "gdn_bwd_rev_summary_fused_d128_bf16",
                         "gdn_bwd_span_fixup_rev_d128_bf16", "gdn_bwd_onepass_d128_bf16_onepass",
                         "gdn_bwd_finish_d128_bf16_onepass", "gdn_bwd_gate_params_d128_bf16_onepass"}));
  // The summaries and walks are PIPELINE_ARCH 3's split's own builds (one kernel cache entry for both forms).
  std::vector<std::string> fsplit;
  for (const auto& r : linear_attention::gdn_bwd_kernel_requests(*p, BwdForm{8, true, true}))
    fsplit.push_back(r.kernel);
  for (std::size_t i : {0, 1, 3, 4})
    EXPECT_NE(std::find(fsplit.begin(), fsplit.end(), kernels[i]), fsplit.end()) << kernels[i];
  Status s;
  EXPECT_EQ(la_bwd_test::planned_kernels(b.g, config(5, 8), &s), kernels);
  EXPECT_TRUE(s.is_good()) << s.message();
  // The workspace: the split's span blocks and every block tile on top of the unsplit one-pass layout; less than
  // PIPELINE_ARCH 3's split (no dS^T, no dVn).
  const std::int64_t split_ws = linear_attention::gdn_bwd_workspace_bytes(*p, 8, true);
  EXPECT_GT(split_ws, linear_attention::gdn_bwd_workspace_bytes(*p, 0, true));
  EXPECT_LT(split_ws, linear_attention::gdn_bwd_workspace_bytes(*p, 8, false));
}

// Its workspace (gdn_bwd_ws_onepass) holds what its kernels write: unsplit T alone in the block region (C x C bf16 a
// (chunk slot, head)), S^T, no dS^T / Vn / dVn, the dq / dk sums [T][HQ] / [T][HK]; split every block tile
// (PIPELINE_ARCH 3's span recompute writes them), its Vn not stored, still no dS^T or dVn. At 16/64, 4 x 8192: under a
// third of PIPELINE_ARCH 3's workspace.
TEST(LaBwdOnePass, ItsWorkspaceHoldsWhatItsKernelsWrite) {
  const std::int64_t D = 128, T = 3000, N = 3, HQ = 2, HK = 1, HO = 8;
  const std::int64_t sh = opgraph_gdn::gdn_bwd_slots(T, N) * HO;
  auto r256 = [](std::int64_t x) { return (x + 255) / 256 * 256; };
  const opgraph_gdn::GdnBwdWs w = opgraph_gdn::gdn_bwd_ws_onepass(D, T, N, HQ, HK, HO, false);
  EXPECT_EQ(w.egc - w.blocks, r256(sh * 64 * 64 * 2));
  EXPECT_EQ(w.dst - w.st, r256(sh * D * D * 2));
  EXPECT_EQ(w.vn, w.dst);
  EXPECT_EQ(w.dvn, w.vn);
  EXPECT_EQ(w.dq, w.dvn);
  EXPECT_EQ(w.dk - w.dq, r256(T * HQ * D * 4));
  EXPECT_EQ(w.dv - w.dk, r256(T * HK * D * 4));
  EXPECT_EQ(w.ga, w.dv);  // dV not staged
  EXPECT_EQ(w.total, w.span);  // no span blocks
  const opgraph_gdn::GdnBwdWs v = opgraph_gdn::gdn_bwd_ws_onepass(D, T, N, HQ, HK, HO, true, 8);
  EXPECT_EQ(v.egc - v.blocks, r256(sh * opgraph_gdn::gdn_bwd_block_elems(D) * 2));
  EXPECT_EQ(v.vn, v.dst);
  EXPECT_EQ(v.dvn, v.vn);
  EXPECT_EQ(v.dq, v.dvn);
  EXPECT_EQ(v.ga - v.dv, r256(T * HO * D * 4));  // dV staged
  EXPECT_EQ(v.total - v.span, N * opgraph_gdn::gdn_bwd_spans(T, 8) * HO * opgraph_gdn::kSpanBlocks * D * D * 4);
  // The plan's workspace is this layout.
  auto p = analyze_gdn_bwd(bwd(cell(16, 64, {0, 8192, 16384, 24576, 32768}), "gdn_bwd", {}, false).g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  const std::int64_t one = linear_attention::gdn_bwd_workspace_bytes(*p, 0, true);
  EXPECT_EQ(one, opgraph_gdn::gdn_bwd_ws_onepass(128, p->t, p->n_seq, p->hq, p->hk, p->ho, false).total);
  const std::int64_t three = linear_attention::gdn_bwd_workspace_bytes(*p, 0, false);
  EXPECT_LT(3 * one, three) << one << " against " << three;
}

// The launches (gdn_bwd_launch_grids) of three sequences of 1000, 0 and 1100 tokens (T = 2100: the grid's spans a
// sequence ceil(ceil(2100 / 64) / 8) = 5 under spans of 8 chunks): whole, gdn_bwd_fwd_st_fused and gdn_bwd_onepass one CTA a (head, sequence);
// split, the five span kernels over (head, sequence x span) but the walks, gdn_bwd_onepass over (head, sequence x
// span), and neither 3's span reverse scan nor the grads kernel.
TEST(LaBwdOnePass, ItsSplitLaunchesOneCtaASpan) {
  Cfg c = la_test::engine_cfg(128);
  c.init = true;
  c.cu = {0, 1000, 1000, 2100};
  auto p = analyze_gdn_bwd(bwd(c).g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  const unsigned ho = static_cast<unsigned>(p->ho);
  auto grids = [&](long long split) {
    BwdForm f = onepass_form();
    f.split = split;
    std::map<std::string, std::vector<unsigned>> m;
    for (const auto& g : linear_attention::gdn_bwd_launch_grids(*p, f)) m[g.entry] = {g.x, g.y, g.z};
    return m;
  };
  const auto whole = grids(0);
  EXPECT_EQ(whole.size(), 3u);  // the first pass, gdn_bwd_onepass, the finish (no gate parameter gradient)
  EXPECT_EQ(whole.at("gdn_bwd_fwd_st_fused"), (std::vector<unsigned>{1, ho, 3}));
  EXPECT_EQ(whole.at("gdn_bwd_onepass"), (std::vector<unsigned>{1, ho, 3}));
  const auto split = grids(8);
  for (const char* e : {"gdn_bwd_fwd_st_fused", "gdn_bwd_rev_span_fused", "gdn_bwd_grads", "gdn_bwd_rev_fused"})
    EXPECT_EQ(split.count(e), 0u) << e;
  EXPECT_EQ(split.at("gdn_bwd_onepass"), (std::vector<unsigned>{1, ho, 15}));
  EXPECT_EQ(split.at("gdn_bwd_fwd_span_fused"), (std::vector<unsigned>{1, ho, 15}));
  EXPECT_EQ(split.at("gdn_bwd_fwd_summary_fused"), (std::vector<unsigned>{2, ho, 15}));
  EXPECT_EQ(split.at("gdn_bwd_rev_summary_fused"), (std::vector<unsigned>{1, ho, 15}));
  EXPECT_EQ(split.at("gdn_bwd_span_fixup").at(2), 3u);  // the walks: a (slice, head, sequence)
  EXPECT_EQ(split.at("gdn_bwd_span_fixup_rev").at(2), 3u);
  EXPECT_EQ(split.count("gdn_bwd_finish"), 1u);
}

TEST(LaBwdOnePass, RuleB11RefusesWhatItDoesNotRun) {
  auto refused = [](const OpGraph& g, const PlanConfig& cfg, const std::string& why) {
    Status s;
    la_bwd_test::planned_kernels(g, cfg, &s);
    EXPECT_EQ(s.code(), ErrorCode::GRAPH_NOT_SUPPORTED) << s.to_string();
    EXPECT_NE(s.message().find("PIPELINE_ARCH 5 (the one-pass backward): rule B11 one pass"), std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find(why), std::string::npos) << s.message();
  };
  refused(bwd(la_test::engine_cfg(64)).g, config(5), "head dim 64");
  Cfg ck = la_test::engine_cfg(128);
  ck.cu = {0, 200, 200, 530};
  ck.ckpt_rows = 4;
  refused(bwd(ck, "gdn_bwd", Attributes().set("checkpoint_every_n_tokens", std::int64_t{128})).g, config(5),
          "state_checkpoints");
  refused(bwd(la_test::engine_cfg(128), "gdn_bwd", Attributes().set("batch_invariant", true)).g, config(5),
          "batch_invariant");
  refused(bwd(la_test::engine_cfg(128), "gdn_summary_bwd").g, config(5), "gdn_summary_bwd");
  // The rule itself on a problem past the TMA maps' 32-bit coordinates.
  auto p = analyze_gdn_bwd(bwd(la_test::engine_cfg(128)).g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_TRUE(linear_attention::gdn_bwd_b11_refusal(*p).empty());
  for (auto* type : {&p->io, &p->do_type}) {  // fp16 q / k / v or dO
    *type = DataType::HALF;
    EXPECT_NE(linear_attention::gdn_bwd_b11_refusal(*p).find("BFLOAT16"), std::string::npos);
    *type = DataType::BFLOAT16;
  }
  p->t = 1LL << 31;
  EXPECT_NE(linear_attention::gdn_bwd_b11_refusal(*p).find("32-bit coordinates"), std::string::npos);
}

// The heuristics: 5 first at 16/64 and 16/32, 4 x 8192 (256 and 128 chains on 132 multiprocessors; on the H100
// 0.886x and 0.879x PIPELINE_ARCH 3's time); not with 64 chains (16/64, 1 x 32768: 1.25x), with sequences shorter
// than 4096 tokens on average, or where B11 refuses (batch_invariant).
TEST(LaBwdOnePass, TheHeuristicsRankItFirstWhereItsChainsFillTheDevice) {
  using la_bwd_test::kPlanFusedBoth;
  using la_bwd_test::kPlanFusedRecompute;
  using la_bwd_test::kPlanUnsplit;
  const std::vector<std::int64_t> four = {0, 8192, 16384, 24576, 32768}, one = {0, 32768};
  for (std::int64_t hv : {64, 32})
    la_bwd_test::expect_our_plans(bwd(cell(16, hv, four), "gdn_bwd", {}, false).g, HeurMode::A,
                                  {kPlanOnePass, kPlanFusedBoth, kPlanFusedRecompute, kPlanUnsplit});
  auto p = analyze_gdn_bwd(bwd(cell(16, 64, one), "gdn_bwd", {}, false).g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_FALSE(linear_attention::gdn_bwd_onepass_first(*p, 132));
  // 64 sequences of 2048 tokens: chains enough, too short to have been measured.
  std::vector<std::int64_t> short_cu;
  for (std::int64_t i = 0; i <= 64; ++i) short_cu.push_back(2048 * i);
  p = analyze_gdn_bwd(bwd(cell(16, 64, short_cu), "gdn_bwd", {}, false).g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_FALSE(linear_attention::gdn_bwd_onepass_first(*p, 132));
  la_bwd_test::expect_our_plans(
      bwd(cell(16, 64, four), "gdn_bwd", Attributes().set("batch_invariant", true), false).g, HeurMode::A,
      {kPlanFusedBoth, kPlanFusedRecompute, kPlanUnsplit});
  // No device (sm_count 0): never first.
  p = analyze_gdn_bwd(bwd(cell(16, 64, four), "gdn_bwd", {}, false).g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_FALSE(linear_attention::gdn_bwd_onepass_first(*p, 0));
  EXPECT_TRUE(linear_attention::gdn_bwd_onepass_first(*p, 132));
}

// Its split: where the fused split rule splits and B11 serves the graph, before PIPELINE_ARCH 3's split, its spans
// halved while longer than 64 chunks and their CTAs within two waves. On the H100 (GdnBwdGpu.TimingOnePassSplit) the
// fastest spans were 128 or 64 at 16/64 (0.948x 3's split), 64 at 16/32 (0.970x), 32 at 2/8 (0.946x).
TEST(LaBwdOnePass, TheHeuristicsRankItsSplitBeforeTheFusedSplit) {
  const std::vector<std::int64_t> one = {0, 32768}, four = {0, 8192, 16384, 24576, 32768};
  const std::pair<std::int64_t, std::int64_t> heads[] = {{16, 64}, {16, 32}, {2, 8}};
  const long long fused[] = {256, 128, 32}, want[] = {128, 64, 32};
  for (int i = 0; i < 3; ++i) {
    auto p = analyze_gdn_bwd(bwd(cell(heads[i].first, heads[i].second, one), "gdn_bwd", {}, false).g);
    ASSERT_TRUE(p.is_good()) << p.status().message();
    ASSERT_EQ(linear_attention::gdn_bwd_fused_split_rule(*p, 132), fused[i]) << i;
    EXPECT_EQ(linear_attention::gdn_bwd_onepass_split_rule(*p, 132), want[i]) << i;
    EXPECT_EQ(linear_attention::gdn_bwd_onepass_split_rule(*p, 0), 0) << i;  // no device
    p->io = DataType::HALF;  // B11 refuses; 3's split stays
    ASSERT_EQ(linear_attention::gdn_bwd_fused_split_rule(*p, 132), fused[i]) << i;
    EXPECT_EQ(linear_attention::gdn_bwd_onepass_split_rule(*p, 132), 0) << i;
  }
  // Where the chains fill the device the fused rule does not split, nor does this one.
  auto p = analyze_gdn_bwd(bwd(cell(16, 64, four), "gdn_bwd", {}, false).g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_EQ(linear_attention::gdn_bwd_onepass_split_rule(*p, 132), 0);
}

}  // namespace

// The one-pass form's TMA maps (encode_onepass_maps, at each execute): every map of OnePassMaps' order encoded with
// its tensor's base, extents, strides and box; the dq / dk sums (GDN_BWD_ONEPASS_TMARED's reductions) as fp32
// (D, HQ or HK, T) over the workspace's staging with boxes of 32 columns and 64 rows, 128-byte swizzled.
namespace {
namespace onepass_maps {
struct Call {
  CUtensorMapDataType type;
  std::uint64_t base;
  cuuint64_t dims[3], strides[2];
  cuuint32_t box[3];
  CUtensorMapSwizzle swizzle;
};
std::vector<Call> g_calls;
CUresult CUDAAPI record(CUtensorMap* out, CUtensorMapDataType type, cuuint32_t rank, void* base, const cuuint64_t* dims,
                        const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t*, CUtensorMapInterleave,
                        CUtensorMapSwizzle swizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  EXPECT_EQ(rank, 4u);
  Call c{type, reinterpret_cast<std::uint64_t>(base), {dims[0], dims[1], dims[2]}, {strides[0], strides[1]},
         {box[0], box[1], box[2]}, swizzle};
  g_calls.push_back(c);
  reinterpret_cast<unsigned char*>(out)[0] = static_cast<unsigned char>(g_calls.size());  // which call filled it
  return CUDA_SUCCESS;
}
// A call's fields the maps read (fake addresses: the recording driver dereferences none).
opgraph_gdn::GdnBwdParams map_params() {
  opgraph_gdn::GdnBwdParams a{};
  a.t = 3000, a.n_seq = 2, a.hq = 8, a.hk = 4, a.hv = 16, a.ho = 16;
  a.n_slots = 50;
  a.q = 0x100000, a.k = 0x200000, a.v = 0x300000, a.d_o = 0x400000, a.ws = 0x1000000;
  a.ws_st = 0x1000, a.ws_blocks = 0x2000, a.ws_dq = 0x40000, a.ws_dk = 0x80000;
  a.g = 0x500000, a.beta = 0x600000;
  a.flags = opgraph_gdn::kBwdFlagGatesTma;
  return a;
}
}  // namespace onepass_maps
}  // namespace

TEST(LaBwdOnePass, ItsMapsCarryTheDqDkSumsForTheTmaReductions) {
  runtime::CudaDriverApi api;
  api.tensor_map_encode_tiled = &onepass_maps::record;
  opgraph_gdn::GdnBwdParams a = onepass_maps::map_params();
  linear_attention::OnePassMaps m{};
  onepass_maps::g_calls.clear();
  ASSERT_TRUE(linear_attention::encode_onepass_maps(api, a, m).is_good());
  const auto& calls = onepass_maps::g_calls;
  ASSERT_EQ(calls.size(), 10u);  // q, k, v, dO, S^T, T, dq, dk, g, beta
  // Each map of the struct filled by its own call, in the struct's order: dq and dk by the 7th and 8th.
  EXPECT_EQ(reinterpret_cast<const unsigned char*>(&m.dq)[0], 7);
  EXPECT_EQ(reinterpret_cast<const unsigned char*>(&m.dk)[0], 8);
  EXPECT_EQ(reinterpret_cast<const unsigned char*>(&m.g)[0], 9);
  EXPECT_EQ(reinterpret_cast<const unsigned char*>(&m.beta)[0], 10);
  EXPECT_EQ(reinterpret_cast<const unsigned char*>(&m.dv)[0], 0);  // the TMADV trial's: not encoded
  for (int which = 0; which < 2; ++which) {
    const onepass_maps::Call& c = calls[6 + which];
    const std::uint64_t heads = which ? a.hk : a.hq;
    EXPECT_EQ(c.type, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
    EXPECT_EQ(c.base, a.ws + static_cast<std::uint64_t>(which ? a.ws_dk : a.ws_dq));
    EXPECT_EQ(c.dims[0], 128u);
    EXPECT_EQ(c.dims[1], heads);
    EXPECT_EQ(c.dims[2], 3000u);
    EXPECT_EQ(c.strides[0], 128u * 4);
    EXPECT_EQ(c.strides[1], heads * 128 * 4);
    EXPECT_EQ(c.box[0], 32u);  // 128 bytes: the swizzle's row
    EXPECT_EQ(c.box[1], 1u);
    EXPECT_EQ(c.box[2], 64u);
    EXPECT_EQ(c.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  }
  // q's map beside them: bf16 (D, HQ, T) from q's base.
  EXPECT_EQ(calls[0].type, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(calls[0].base, a.q);
  EXPECT_EQ(calls[0].dims[1], 8u);
  // T's (the 6th): (64, C, sh) over the one-pass layout's T region, C x C a (chunk slot, head); under a chain split
  // each block's T tile (its offset and the block's stride).
  const std::uint64_t sh = static_cast<std::uint64_t>(a.n_slots * a.ho);
  for (int split = 0; split < 2; ++split) {
    a.span_chunks = split ? 8 : 0;
    onepass_maps::g_calls.clear();
    ASSERT_TRUE(linear_attention::encode_onepass_maps(api, a, m).is_good());
    const onepass_maps::Call& t = onepass_maps::g_calls.at(5);
    const std::uint64_t blk = static_cast<std::uint64_t>(opgraph_gdn::gdn_bwd_block_elems(128));
    EXPECT_EQ(t.base, a.ws + static_cast<std::uint64_t>(a.ws_blocks) + (split ? (4 * 64 * 128 + 64 * 64) * 2 : 0));
    EXPECT_EQ(t.dims[0], 64u);
    EXPECT_EQ(t.dims[1], 64u);
    EXPECT_EQ(t.dims[2], sh);
    EXPECT_EQ(t.strides[0], 128u);
    EXPECT_EQ(t.strides[1], split ? blk * 2 : 64u * 64 * 2);
    EXPECT_EQ(t.box[0], 64u);
    EXPECT_EQ(t.box[1], 64u);
    EXPECT_EQ(t.box[2], 1u);
  }
}

// The plan's map cache (OnePassMapCache, at each execute): a call with a recent call's pointers and extents takes its
// maps without a driver call; a changed pointer encodes the ten again; the gates' TMA flag follows the entry (cleared
// for misaligned gates on a hit as on the encode); a failed encode adds no entry; the least recent of nine goes.
namespace {
namespace onepass_cache {
std::uint64_t g_refuse = 0;  // a base the fake driver refuses
CUresult CUDAAPI record(CUtensorMap* out, CUtensorMapDataType type, cuuint32_t rank, void* base, const cuuint64_t* dims,
                        const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t* es,
                        CUtensorMapInterleave il, CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
                        CUtensorMapFloatOOBfill oob) {
  if (reinterpret_cast<std::uint64_t>(base) == g_refuse) return CUDA_ERROR_INVALID_VALUE;
  return onepass_maps::record(out, type, rank, base, dims, strides, box, es, il, sw, l2, oob);
}
}  // namespace onepass_cache
}  // namespace

TEST(LaBwdOnePass, ItsMapsAreEncodedOnceForARecentCallsPointers) {
  runtime::CudaDriverApi api;
  api.tensor_map_encode_tiled = &onepass_cache::record;
  opgraph_gdn::GdnBwdParams a = onepass_maps::map_params();
  const opgraph_gdn::GdnBwdParams base = a;
  auto& calls = onepass_maps::g_calls;
  calls.clear();
  onepass_cache::g_refuse = 0;
  linear_attention::OnePassMapCache cache;
  auto first_byte = [](const CUtensorMap& m) { return reinterpret_cast<const unsigned char*>(&m)[0]; };
  linear_attention::OnePassMaps m{};
  ASSERT_TRUE(cache.maps(api, a, m).is_good());
  ASSERT_EQ(calls.size(), 10u);
  EXPECT_EQ(first_byte(m.q), 1);
  EXPECT_EQ(first_byte(m.beta), 10);
  // The same call again: no driver call, the same maps.
  linear_attention::OnePassMaps again{};
  ASSERT_TRUE(cache.maps(api, a, again).is_good());
  EXPECT_EQ(calls.size(), 10u);
  EXPECT_EQ(std::memcmp(&m, &again, sizeof m), 0);
  EXPECT_EQ(a.flags & opgraph_gdn::kBwdFlagGatesTma, opgraph_gdn::kBwdFlagGatesTma);
  // Another q: all ten again, q's map from its own call.
  a.q = 0x110000;
  ASSERT_TRUE(cache.maps(api, a, m).is_good());
  ASSERT_EQ(calls.size(), 20u);
  EXPECT_EQ(first_byte(m.q), 11);
  EXPECT_EQ(calls[10].base, 0x110000u);
  // Gates 4 bytes off 16: no g / beta maps, the flag cleared; on the hit too.
  a = base;
  a.g = 0x500004;
  ASSERT_TRUE(cache.maps(api, a, m).is_good());
  EXPECT_EQ(calls.size(), 28u);
  EXPECT_EQ(a.flags & opgraph_gdn::kBwdFlagGatesTma, 0);
  a.flags = opgraph_gdn::kBwdFlagGatesTma;
  ASSERT_TRUE(cache.maps(api, a, m).is_good());
  EXPECT_EQ(calls.size(), 28u);
  EXPECT_EQ(a.flags & opgraph_gdn::kBwdFlagGatesTma, 0);
  // The first call's pointers: still cached.
  a = base;
  ASSERT_TRUE(cache.maps(api, a, m).is_good());
  EXPECT_EQ(calls.size(), 28u);
  EXPECT_EQ(first_byte(m.q), 1);
  // A refused map: an error naming the map, no entry (the next call tries again).
  a.v = 0x330000;
  onepass_cache::g_refuse = 0x330000;
  const Status bad = cache.maps(api, a, m);
  EXPECT_FALSE(bad.is_good());
  EXPECT_NE(bad.message().find("(v)"), std::string::npos) << bad.message();
  onepass_cache::g_refuse = 0;
  const std::size_t before = calls.size();
  ASSERT_TRUE(cache.maps(api, a, m).is_good());
  EXPECT_EQ(calls.size(), before + 10);
  // Eight entries at most: after eight more k pointers the first call's entry is gone.
  for (unsigned long long i = 1; i <= linear_attention::OnePassMapCache::kEntries; ++i) {
    a = base;
    a.k = 0x200000 + i * 0x100000000ULL;
    ASSERT_TRUE(cache.maps(api, a, m).is_good());
  }
  a = base;
  const std::size_t n = calls.size();
  ASSERT_TRUE(cache.maps(api, a, m).is_good());
  EXPECT_EQ(calls.size(), n + 10);
}

// The dq / dk sums are zeroed by one memset over both regions of the one-pass layout (the gap between them
// included): from dq's first word to dk's last; a refused memset is an error naming it.
namespace {
namespace onepass_zero {
struct Call {
  CUdeviceptr at;
  unsigned value;
  std::size_t words;
};
std::vector<Call> g_calls;
CUresult g_result = CUDA_SUCCESS;
CUresult CUDAAPI record(CUdeviceptr at, unsigned value, std::size_t words, CUstream) {
  g_calls.push_back({at, value, words});
  return g_result;
}
}  // namespace onepass_zero
}  // namespace

TEST(LaBwdOnePass, ItsSumsAreZeroedByOneMemset) {
  runtime::CudaDriverApi api;
  api.memset_d32_async = &onepass_zero::record;
  opgraph_gdn::GdnBwdParams a = onepass_maps::map_params();
  const opgraph_gdn::GdnBwdWs w = opgraph_gdn::gdn_bwd_ws_onepass(128, a.t, a.n_seq, a.hq, a.hk, a.ho, false);
  a.ws_dq = w.dq, a.ws_dk = w.dk;
  auto& calls = onepass_zero::g_calls;
  calls.clear();
  onepass_zero::g_result = CUDA_SUCCESS;
  ASSERT_TRUE(linear_attention::zero_onepass_sums(api, a, nullptr).is_good());
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].at, a.ws + static_cast<CUdeviceptr>(w.dq));
  EXPECT_EQ(calls[0].value, 0u);
  const std::uint64_t dq_bytes = static_cast<std::uint64_t>(a.t * a.hq * 128 * 4);
  const std::uint64_t dk_end = static_cast<std::uint64_t>(w.dk + a.t * a.hk * 128 * 4);
  EXPECT_GE(static_cast<std::uint64_t>(w.dk - w.dq), dq_bytes);  // dq's sums inside
  EXPECT_EQ(calls[0].at + calls[0].words * 4, a.ws + dk_end);    // up to dk's last word
  EXPECT_LE(dk_end, static_cast<std::uint64_t>(w.dv));           // and no further than dk's region
  onepass_zero::g_result = CUDA_ERROR_INVALID_VALUE;
  const Status bad = linear_attention::zero_onepass_sums(api, a, nullptr);
  EXPECT_FALSE(bad.is_good());
  EXPECT_NE(bad.message().find("cuMemsetD32Async"), std::string::npos) << bad.message();
}
