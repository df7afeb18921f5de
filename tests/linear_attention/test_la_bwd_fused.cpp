// tests/linear_attention/test_la_bwd_fused.cpp — gdn_bwd's fused forms (rule B9) without a GPU: the kernels a
// plan compiles under PIPELINE_ARCH 2 (gdn_bwd_fwd_fused, the forward's warp-specialised fused build, in place of
// gdn_bwd_prep and gdn_bwd_fwd_scan) and 3 (that, and gdn_bwd_rev_fused in place of gdn_bwd_rev_scan), the knob's
// refusals by name (head dim 64, a chain split, state_checkpoints, gdn_summary_bwd), PIPELINE_ARCH 0 and 1 keeping
// the prep and the scans, and the heuristics proposing neither yet. Their NVRTC compile is
// LaBwdNvrtc.EveryGdnBwdSpecialisationCompilesForSm90a; their numerics GdnBwdGpu.FusedRecompute
// (tests/linear_attention_gpu/test_la_bwd_gpu.cpp).
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
bool has_define(const runtime::KernelRequest& r, const std::string& name, const std::string& value) {
  return std::any_of(r.defines.begin(), r.defines.end(),
                     [&](const runtime::KernelDefine& d) { return d.name == name && d.value == value; });
}

TEST(LaBwdFused, ItsKernelsReplaceThePrepAndTheScans) {
  Cfg c = la_test::engine_cfg(128);
  c.init = true;
  Built b = bwd(c);
  auto p = analyze_gdn_bwd(b.g);
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

TEST(LaBwdFused, PlanKernelsFollowTheKnob) {
  Cfg c = la_test::engine_cfg(128);
  Built b = bwd(c);
  Status s;
  EXPECT_EQ(la_bwd_test::planned_kernels(b.g, config(3), &s),
            (std::vector<std::string>{"gdn_bwd_fwd_fused_d128_bf16", "gdn_bwd_rev_fused_d128_bf16",
                                      "gdn_bwd_grads_d128_bf16", "gdn_bwd_finish_d128_bf16",
                                      "gdn_bwd_gate_params_d128_bf16"}));
  EXPECT_TRUE(s.is_good()) << s.message();
  EXPECT_EQ(la_bwd_test::planned_kernels(b.g, config(2), &s),
            (std::vector<std::string>{"gdn_bwd_fwd_fused_d128_bf16", "gdn_bwd_rev_scan_d128_bf16",
                                      "gdn_bwd_grads_d128_bf16", "gdn_bwd_finish_d128_bf16",
                                      "gdn_bwd_gate_params_d128_bf16"}));
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
  refused(bwd(la_test::engine_cfg(128)).g, config(3, 8), "CHAIN_SPLIT 8");
  Cfg ck = la_test::engine_cfg(128);
  ck.cu = {0, 200, 200, 530};
  ck.ckpt_rows = 4;
  refused(bwd(ck, "gdn_bwd", Attributes().set("checkpoint_every_n_tokens", std::int64_t{128})).g, config(3),
          "state_checkpoints");
  refused(bwd(la_test::engine_cfg(128), "gdn_summary_bwd").g, config(3), "gdn_summary_bwd");
}

TEST(LaBwdFused, TheHeuristicsDoNotProposeThemYet) {
  // Not until its numerics have run on the H200: the default plan stays the prep and the scans.
  Built b = bwd(la_test::engine_cfg(128), "gdn_bwd", {}, /*freeze=*/false);
  la_bwd_test::expect_one_plan_of_ours_first(std::move(b.g), HeurMode::A);
}

}  // namespace
