// tests/linear_attention/test_la_planning.cpp — the linear_attention family in the default manifest and
// the order its heuristics give a gdn graph's plans on a device-less sm_90a target (132 multiprocessors):
// decode, prefill below and above fused_first's threshold, a chain split, and a graph it declines.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "engines/linear_attention/la_engine.h"
#include "engines/manifest.h"
#include "ir/linear_attention_fixture.h"
#include "opgraph/graph.h"

namespace {

using namespace opgraph;
using la_test::Built;
using la_test::Cfg;
using la_test::mark_outputs;

// The linear_attention plans the heuristics list (mode A) for graph `c` (outputs marked) with attributes `a` on
// `target`, in order; none where planning fails.
std::vector<std::string> our_plan_names(const Cfg& c, Attributes a, const DeviceProperties& target) {
  Built b = la_test::build(la_test::op_named("gdn"), c, std::move(a));
  mark_outputs(b);
  Graph g(std::move(b.g));
  g.set_device_properties(target);
  std::vector<std::string> names;
  if (g.create_execution_plans({HeurMode::A}).is_bad()) return names;
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i)
    if (auto n = g.get_plan_name_at_index(i); n.is_good() && n->rfind("linear_attention", 0) == 0)
      names.push_back(*n);
  return names;
}

TEST(LaManifest, OnByDefaultForGdnAndPlannedFirst) {
  const auto& m = engines::default_manifest();
  const plan::Family* fam = nullptr;
  for (const auto& f : m.families)
    if (f.name == "linear_attention") fam = &f;
  ASSERT_NE(fam, nullptr);
  ASSERT_EQ(fam->slots.size(), 1u);
  EXPECT_EQ(fam->slots[0].name, "linear_attention");
  EXPECT_FALSE(fam->slots[0].opt_in);

  Cfg c = la_test::engine_cfg(128);
  Built b = la_test::build(la_test::op_named("gdn"), c);
  mark_outputs(b);
  Graph g(std::move(b.g));
  auto target = DeviceProperties::for_arch("sm_90a");
  ASSERT_TRUE(target.is_good());
  g.set_device_properties(*target);
  const Status made0 = g.create_execution_plans({HeurMode::A});
  ASSERT_TRUE(made0.is_good()) << made0.to_string();
  auto name = g.get_plan_name_at_index(0);
  ASSERT_TRUE(name.is_good()) << name.status().message();
  EXPECT_EQ(name->rfind("linear_attention", 0), 0u) << *name;
  // A decode graph (T = 10 over N = 3): one plan of ours, PIPELINE_ARCH=0 (the decode kernel).
  EXPECT_NE(name->find("PIPELINE_ARCH=0"), std::string::npos) << *name;
  Cfg pc = la_test::engine_cfg(128);
  pc.cu = {0, 30, 30, 100};
  for (HeurMode mode : {HeurMode::A, HeurMode::B, HeurMode::FALLBACK}) {
    Built bp = la_test::build(la_test::op_named("gdn"), pc);
    mark_outputs(bp);
    Graph gp(std::move(bp.g));
    gp.set_device_properties(*target);
    Status made = gp.create_execution_plans({mode});
    ASSERT_TRUE(made.is_good()) << made.to_string();
    auto n0 = gp.get_plan_name_at_index(0);
    auto n1 = gp.get_plan_name_at_index(1);
    auto n2 = gp.get_plan_name_at_index(2);
    auto n3 = gp.get_plan_name_at_index(3);
    ASSERT_TRUE(n0.is_good() && n1.is_good() && n2.is_good() && n3.is_good());
    EXPECT_EQ(*n0, "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=1]");  // 24 CTAs: two-pass first
    EXPECT_EQ(*n1, "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=3]");  // fused, warp-specialised (d = 128)
    EXPECT_EQ(*n2, "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=2]");  // fused, eight warps
    EXPECT_EQ(*n3, "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=0]");
  }
  // 20 sequences x 8 heads (160 CTAs on the H200's 132): the fused prefill first.
  {
    Cfg many = la_test::engine_cfg(128);
    many.cu.assign(1, 0);
    for (int i = 0; i < 20; ++i) many.cu.push_back(many.cu.back() + 100);
    Built bm = la_test::build(la_test::op_named("gdn"), many);
    mark_outputs(bm);
    Graph gm(std::move(bm.g));
    gm.set_device_properties(*target);
    ASSERT_TRUE(gm.create_execution_plans({HeurMode::A}).is_good());
    auto m0 = gm.get_plan_name_at_index(0);
    auto m1 = gm.get_plan_name_at_index(1);
    auto m2 = gm.get_plan_name_at_index(2);
    ASSERT_TRUE(m0.is_good() && m1.is_good() && m2.is_good());
    EXPECT_EQ(*m0, "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=3]");
    EXPECT_EQ(*m1, "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=2]");
    EXPECT_EQ(*m2, "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=1]");
  }
  // One 32k sequence at hqk / hv heads: our plans as the heuristics list them.
  auto expect_plans = [&](std::int64_t hqk, std::int64_t hv, const std::vector<std::string>& want) {
    Cfg one = la_test::engine_cfg(128);
    one.hq = one.hk = hqk;
    one.hv = hv;
    one.cu = {0, 32768};
    Built bo = la_test::build(la_test::op_named("gdn"), one);
    mark_outputs(bo);
    Graph go(std::move(bo.g));
    go.set_device_properties(*target);
    ASSERT_TRUE(go.create_execution_plans({HeurMode::A}).is_good());
    for (std::size_t i = 0; i < want.size(); ++i) {
      auto n = go.get_plan_name_at_index(static_cast<std::int64_t>(i));
      ASSERT_TRUE(n.is_good()) << i << ": " << n.status().message();
      EXPECT_EQ(*n, want[i]) << hqk << "/" << hv << " plan " << i;
    }
  };
  // 2/8 heads (8 CTAs): the chain split's plans first, the warp-specialised fused one leading (the fused plans at
  // fused_split_rule's span, the two-pass one at chain_split_rule's), then the unsplit ones with the two-pass plan
  // before the fused ones (fused_first does not hold).
  expect_plans(2, 8, {"linear_attention[CHAIN_SPLIT=32, PIPELINE_ARCH=3]",
                       "linear_attention[CHAIN_SPLIT=64, PIPELINE_ARCH=1]",
                       "linear_attention[CHAIN_SPLIT=32, PIPELINE_ARCH=2]",
                       "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=1]",
                       "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=3]",
                       "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=2]",
                       "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=0]"});
  // 16/32 heads (32 CTAs): the fused plans split in spans of 128 chunks first (the two-pass rule splits nothing
  // here), then the unsplit ones with the fused plans first (fused_first holds).
  expect_plans(16, 32, {"linear_attention[CHAIN_SPLIT=128, PIPELINE_ARCH=3]",
                         "linear_attention[CHAIN_SPLIT=128, PIPELINE_ARCH=2]",
                         "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=3]",
                         "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=2]",
                         "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=1]",
                         "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=0]"});
  // use_qk_l2norm and use_beta_sigmoid (rule f16_inverse_domain): PIPELINE_ARCH 4, the fp16-inverse build, right
  // before every PIPELINE_ARCH 3 plan, split or not; with one of the two alone, the order above.
  auto plans_with = [&](bool l2, bool sig, std::int64_t hqk, std::int64_t hv) {
    Cfg one = la_test::engine_cfg(128);
    one.hq = one.hk = hqk;
    one.hv = hv;
    one.cu = {0, 32768};
    Attributes a;
    if (l2) a.set("use_qk_l2norm", true);
    if (sig) a.set("use_beta_sigmoid", true);
    return our_plan_names(one, a, *target);
  };
  const std::string p4 = "linear_attention[CHAIN_SPLIT=128, PIPELINE_ARCH=";
  const std::string p0 = "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=";
  EXPECT_EQ(plans_with(true, true, 16, 32),
            (std::vector<std::string>{p4 + "4]", p4 + "3]", p4 + "2]", p0 + "4]", p0 + "3]", p0 + "2]", p0 + "1]",
                                      p0 + "0]"}));
  // use_qk_l2norm alone: the guarded form, before the unsplit PIPELINE_ARCH 3 plan only; use_beta_sigmoid alone:
  // none.
  EXPECT_EQ(plans_with(true, false, 16, 32),
            (std::vector<std::string>{p4 + "3]", p4 + "2]", p0 + "4]", p0 + "3]", p0 + "2]", p0 + "1]", p0 + "0]"}));
  const auto names = plans_with(false, true, 16, 32);
  ASSERT_EQ(names.size(), 6u);
  for (const auto& n : names) EXPECT_EQ(n.find("PIPELINE_ARCH=4"), std::string::npos) << n;
  // The decode graph: one plan of ours (both modes run the decode kernel).
  auto n1 = g.get_plan_name_at_index(1);
  if (n1.is_good()) {
    EXPECT_EQ(n1->rfind("linear_attention", 0), std::string::npos) << *n1;
  }
  // A graph the engine declines: no plan of ours.
  Cfg bad = la_test::engine_cfg(32);  // head dim outside {64, 128}
  Built bb = la_test::build(la_test::op_named("gdn"), bad);
  mark_outputs(bb);
  Graph gb(std::move(bb.g));
  gb.set_device_properties(*target);
  if (gb.create_execution_plans({HeurMode::A}).is_good()) {
    for (std::int64_t i = 0; i < gb.get_execution_plan_count(); ++i) {
      auto n = gb.get_plan_name_at_index(i);
      if (n.is_good()) {
        EXPECT_EQ(n->rfind("linear_attention", 0), std::string::npos) << *n;
      }
    }
  }
}

// Bound state_checkpoints (rule L8): the fused plans (d = 128) then the two-pass ones (they write them), never the
// decode kernel, so a decode-sized graph plans a prefill; each plan's kernels are the checkpoint builds (*_ckpt);
// a config naming the one-pass prefill is refused by the rule's name; at d = 64 the two-pass plans alone.
TEST(LaManifest, BoundCheckpointsPlanTheFusedThenTheTwoPassPrefill) {
  auto target = DeviceProperties::for_arch("sm_90a");
  ASSERT_TRUE(target.is_good());
  auto plans_of = [&](std::int64_t d, std::vector<std::int64_t> cu, std::int64_t hqk, std::int64_t hv) {
    Cfg c = la_test::engine_cfg(d);
    c.cu = std::move(cu);
    c.hq = c.hk = hqk;
    c.hv = hv;
    return our_plan_names(c, Attributes().set("checkpoint_every_n_tokens", 64), *target);
  };
  EXPECT_EQ(plans_of(128, {0, 4, 4, 10}, 2, 8),  // decode-sized: the fused prefill serves it
            (std::vector<std::string>{"linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=3]",
                                      "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=2]",
                                      "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=1]"}));
  EXPECT_EQ(plans_of(128, {0, 32768}, 2, 8),  // one long sequence: the warp-specialised split first
            (std::vector<std::string>{"linear_attention[CHAIN_SPLIT=32, PIPELINE_ARCH=3]",
                                      "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=3]",
                                      "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=2]",
                                      "linear_attention[CHAIN_SPLIT=64, PIPELINE_ARCH=1]",
                                      "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=1]"}));
  EXPECT_EQ(plans_of(64, {0, 300}, 2, 8),
            (std::vector<std::string>{"linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=1]"}));

  Cfg c = la_test::engine_cfg(128);
  c.cu = {0, 300};
  Built b = la_test::build(la_test::op_named("gdn"), c, Attributes().set("checkpoint_every_n_tokens", 64));
  mark_outputs(b);
  ASSERT_TRUE(b.g.validate().is_good());
  auto e = linear_attention::make_la_engine(EngineIdentity{20500, "linear_attention"});
  FactsCache facts(b.g, PlanTarget{*target});
  const PlanContext ctx{&facts};
  for (long long arch : {0, 1, 2, 3}) {
    std::vector<std::string> kernels;
    const Status st = e->plan_kernels(b.g, PlanConfig{e->id(), {{KnobType::PIPELINE_ARCH, arch}}, {}, -1}, ctx,
                                      [&](const runtime::KernelRequest& r) {
                                        kernels.push_back(r.kernel);
                                        return Status::ok();
                                      });
    if (arch == 0) {
      EXPECT_EQ(st.code(), ErrorCode::GRAPH_NOT_SUPPORTED) << arch;
      EXPECT_NE(st.message().find("L8 checkpoints"), std::string::npos) << st.message();
    } else if (arch == 1) {
      ASSERT_TRUE(st.is_good()) << st.message();
      EXPECT_EQ(kernels, (std::vector<std::string>{"gdn_prefill_scan_d128_bf16_ckpt", "gdn_prefill_prep_d128_bf16"}));
    } else {
      ASSERT_TRUE(st.is_good()) << arch << ": " << st.message();
      ASSERT_EQ(kernels.size(), 1u);
      EXPECT_EQ(kernels[0], arch == 3 ? "gdn_prefill_fused_d128_bf16_ws_ckpt" : "gdn_prefill_fused_d128_bf16_ckpt");
    }
  }
}

}  // namespace
