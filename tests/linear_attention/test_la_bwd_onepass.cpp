// tests/linear_attention/test_la_bwd_onepass.cpp — gdn_bwd's one-pass form (PIPELINE_ARCH 5, rule B11) without a GPU:
// the kernels a plan compiles (gdn_bwd_fwd_st_fused from the forward's warp-specialised build with GDN_BWD_ONEPASS,
// then gdn_bwd_onepass and gdn_bwd_finish / gdn_bwd_gate_params from the gradient source's one-pass build), the
// workspace (dq and dk always staged), the rule's refusals by name, and the heuristics' order (5 first where its
// chains fill the device and run long). Their NVRTC compile is LaBwdNvrtc.EveryGdnBwdSpecialisationCompilesForSm90a;
// their numerics GdnBwdGpu.OnePass (tests/linear_attention_gpu/test_la_bwd_gpu.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engines/linear_attention/gdn_bwd.h"
#include "engines/linear_attention/la_engine.h"
#include "ir/linear_attention_fixture.h"
#include "linear_attention/la_bwd_test_util.h"

namespace {

using namespace opgraph;
using la_test::Built;
using la_test::Cfg;
using linear_attention::analyze_gdn_bwd;
using linear_attention::BwdForm;

constexpr const char* kPlanOnePass = "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=5]";

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
bool has_define(const runtime::KernelRequest& r, const std::string& name, const std::string& value) {
  return std::any_of(r.defines.begin(), r.defines.end(),
                     [&](const runtime::KernelDefine& d) { return d.name == name && d.value == value; });
}
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
    // The gradient source's one-pass build: its loads by TMA, dq / dk by L2 reductions, one wait a phase.
    EXPECT_EQ(r.source, "linear_attention/kernels/gdn_bwd_grads.cu") << r.entry;
    EXPECT_TRUE(has_define(r, "GDN_BWD_ONEPASS", "1")) << r.entry;
    EXPECT_TRUE(has_define(r, "GDN_BWD_ONEPASS_RED", "1")) << r.entry;
    EXPECT_TRUE(has_define(r, "GDN_BWD_ONEPASS_BATCH", "1")) << r.entry;
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
  refused(bwd(la_test::engine_cfg(128)).g, config(5, 8), "CHAIN_SPLIT 8");
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
  EXPECT_TRUE(linear_attention::gdn_bwd_b11_refusal(*p, 0).empty());
  for (auto* type : {&p->io, &p->do_type}) {  // fp16 q / k / v or dO
    *type = DataType::HALF;
    EXPECT_NE(linear_attention::gdn_bwd_b11_refusal(*p, 0).find("BFLOAT16"), std::string::npos);
    *type = DataType::BFLOAT16;
  }
  p->t = 1LL << 31;
  EXPECT_NE(linear_attention::gdn_bwd_b11_refusal(*p, 0).find("32-bit coordinates"), std::string::npos);
}

// The heuristics: 5 first at 16/64 and 16/32, 4 x 8192 (256 and 128 chains on 132 multiprocessors; on the H100
// 0.886x and 0.879x PIPELINE_ARCH 3's time); not with 64 chains (16/64, 1 x 32768: 1.25x), with sequences shorter
// than 4096 tokens on average, or where B11 refuses (batch_invariant).
Cfg cell(std::int64_t hqk, std::int64_t hv, std::vector<std::int64_t> cu) {
  Cfg c = la_test::engine_cfg(128);
  c.hq = c.hk = hqk;
  c.hv = hv;
  c.cu = std::move(cu);
  return c;
}
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

}  // namespace
