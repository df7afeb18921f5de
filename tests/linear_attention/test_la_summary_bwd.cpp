// tests/linear_attention/test_la_summary_bwd.cpp — the linear_attention engine's gdn_summary_bwd
// without a GPU: what its rules accept (and the named rule of every decline), the kernels and
// the workspace of its plan, the CHAIN_SPLIT refusal, and the engine's dispatch (plan_kernels and
// the family's ranked plan on a device-less sm_90a target). Its numerics: GdnBwdGpu.SummaryBwd
// (tests/linear_attention_gpu/test_la_bwd_gpu.cpp) on the H200.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engines/linear_attention/gdn_bwd.h"
#include "engines/linear_attention/kernels/gdn_bwd_params.cuh"
#include "engines/linear_attention/la_engine.h"
#include "exec/declared_layout.h"
#include "ir/linear_attention_fixture.h"
#include "linear_attention/la_bwd_test_util.h"
#include "opgraph/graph.h"

namespace {

using namespace opgraph;
using la_test::Built;
using la_test::Cfg;
using linear_attention::analyze_gdn_bwd;

template <class Tweak>
Built summary_bwd(const Cfg& c, Attributes attrs, Tweak&& tweak) {
  Built b = la_test::build(la_test::op_named("gdn_summary_bwd"), c, std::move(attrs), tweak);
  la_test::mark_outputs(b);
  const Status v = b.g.validate();
  EXPECT_TRUE(v.is_good()) << v.to_string();
  return b;
}
Built summary_bwd(const Cfg& c, Attributes attrs = {}) {
  return summary_bwd(c, std::move(attrs), [](Built&) {});
}
Attributes with_transition() {
  Attributes a;
  a.set("output_transition", true);
  return a;
}

void expect_decline(const OpGraph& g, const std::string& rule) { la_bwd_test::expect_decline(g, rule, "gdn_summary_bwd"); }
using la_bwd_test::engine;

std::vector<std::string> entries(const linear_attention::GdnBwdProblem& p) {
  std::vector<std::string> out;
  for (const auto& r : linear_attention::gdn_bwd_kernel_requests(p)) out.push_back(r.entry);
  return out;
}

TEST(LaSummaryBwd, AcceptsBothHeadDimsTypesGroupedHeadsAndTheGatesAttributes) {
  for (std::int64_t d : {64, 128})
    for (DataType io : {DataType::BFLOAT16, DataType::HALF}) {
      Built b = summary_bwd(la_test::engine_cfg(d), with_transition(), [&](Built& x) {
        x.q->set_data_type(io);
        x.k->set_data_type(io);
      });
      auto p = analyze_gdn_bwd(b.g);
      ASSERT_TRUE(p.is_good()) << d << " " << to_string(io) << ": " << p.status().message();
      EXPECT_TRUE(p->summary);
      EXPECT_EQ(p->d, d);
      EXPECT_EQ(p->io, io);
      EXPECT_EQ(p->hq, 2);
      EXPECT_EQ(p->ho, 8);  // g's heads
      EXPECT_EQ(p->hv, 8);  // no v: the output heads stand in
      EXPECT_EQ(p->n_seq, 3);
      EXPECT_EQ(p->t, 10);
      EXPECT_EQ(p->v, -1);
      EXPECT_EQ(p->d_initial_state, b.node().output("G")->get_uid());
      EXPECT_EQ(p->transition, b.node().output("transition")->get_uid());
      EXPECT_EQ(p->dinit_type, DataType::FLOAT);
      EXPECT_DOUBLE_EQ(p->scale, 1.0 / std::sqrt(static_cast<double>(d)));
      EXPECT_EQ(entries(*p), (std::vector<std::string>{"gdn_bwd_prep", "gdn_bwd_fwd_summary", "gdn_bwd_rev_summary"}));
    }
  // Without output_transition: G alone, no forward summary; bf16 G; safe_gate with both parameters, l2norm,
  // beta sigmoid, the linear gate.
  Cfg c = la_test::engine_cfg(128);
  c.a_log = c.dt_bias = true;
  Attributes a;
  a.set("safe_gate", true);
  a.set("use_qk_l2norm", true);
  a.set("use_beta_sigmoid", true);
  a.set("scale", 0.5);
  Built b = summary_bwd(c, a, [](Built&) {});
  b.node().output("G")->set_data_type(DataType::BFLOAT16);
  auto p = analyze_gdn_bwd(b.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_EQ(p->transition, -1);
  EXPECT_EQ(p->dinit_type, DataType::BFLOAT16);
  EXPECT_TRUE(p->safe_gate && p->l2norm && p->beta_sigmoid);
  EXPECT_GE(p->a_log, 0);
  EXPECT_GE(p->dt_bias, 0);
  EXPECT_DOUBLE_EQ(p->scale, 0.5);
  EXPECT_EQ(entries(*p), (std::vector<std::string>{"gdn_bwd_prep", "gdn_bwd_rev_summary"}));
  Attributes lin;
  lin.set("gate_domain", std::string("linear"));
  auto pl = analyze_gdn_bwd(summary_bwd(la_test::engine_cfg(64), lin).g);
  ASSERT_TRUE(pl.is_good()) << pl.status().message();
  EXPECT_TRUE(pl->linear_gate);
}

// The workspace: the prep's tiles and e^gamma_C a (chunk slot, head), nothing of gdn_bwd's per-chunk states,
// staging or span blocks (the summaries store nothing per chunk).
TEST(LaSummaryBwd, WorkspaceIsThePrepsTilesOnly) {
  Cfg c = la_test::engine_cfg(128);
  c.cu = {0, 4096, 4096, 9000};
  auto p = analyze_gdn_bwd(summary_bwd(c, with_transition()).g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  const long long sh = opgraph_gdn::gdn_bwd_slots(9000, 3) * 8;
  const long long blocks = sh * opgraph_gdn::gdn_bwd_block_elems(128) * 2;
  const long long want = opgraph_gdn::gdn_bwd_round256(opgraph_gdn::gdn_bwd_round256(blocks) + sh * 4);
  EXPECT_EQ(linear_attention::gdn_bwd_workspace_bytes(*p), want);
  // The same extents as a gdn_bwd problem need its states besides: more than twice as much.
  linear_attention::GdnBwdProblem full = *p;
  full.summary = false;
  EXPECT_GT(linear_attention::gdn_bwd_workspace_bytes(full), 2 * want);
}

TEST(LaSummaryBwd, DeclinesByNamedRule) {
  // SB2: q and k of one 16-bit type.
  expect_decline(summary_bwd(la_test::engine_cfg(64), {}, [](Built& x) { x.q->set_data_type(DataType::HALF); }).g,
                 "SB2 q/k:");
  // SB3: head dims outside {64, 128}, and V (dO's last dim) != K.
  for (std::int64_t d : {32, 96}) expect_decline(summary_bwd(la_test::engine_cfg(d)).g, "SB3 head dim:");
  Cfg kv = la_test::engine_cfg(64);
  kv.v = 128;
  expect_decline(summary_bwd(kv).g, "SB3 head dim:");
  // SB4: a HALF G, an fp16 transition, an INT32 dO is refused by validate() before the engine sees it.
  {
    Built b = summary_bwd(la_test::engine_cfg(64));
    b.node().output("G")->set_data_type(DataType::HALF);
    expect_decline(b.g, "SB4 types:");
  }
  {
    Built b = summary_bwd(la_test::engine_cfg(64), with_transition());
    b.node().output("transition")->set_data_type(DataType::HALF);
    expect_decline(b.g, "SB4 types:");
  }
  // SB5: G left virtual; a strided dO.
  {
    Built b = la_test::build(la_test::op_named("gdn_summary_bwd"), la_test::engine_cfg(64));
    ASSERT_TRUE(b.g.validate().is_good());
    expect_decline(b.g, "SB5 layout:");
  }
  {
    Built b = summary_bwd(la_test::engine_cfg(64), {}, [](Built& x) {
      const auto dims = x.d_o->get_dim();
      x.d_o->set_stride({dims[1] * dims[2] * 2, dims[2], 1});
    });
    expect_decline(b.g, "SB5 layout:");
  }
}

// Execute-time shape overrides: T and N follow the call (the workspace with them); G's and the transition's
// rows must be N, a refusal names the tensor and the rule.
TEST(LaSummaryBwd, ShapeOverridesChangeTokensAndSequences) {
  Cfg c = la_test::engine_cfg(64);
  c.cu = {0, 30, 30, 100};
  Built b = summary_bwd(c, with_transition());
  auto p = analyze_gdn_bwd(b.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  auto layout = DeclaredLayout::compute(b.g);
  ASSERT_TRUE(layout.is_good()) << layout.status().message();
  std::vector<unsigned char> mem(64);  // stand-in addresses: nothing is read
  auto pack_for = [&](std::int64_t t, std::int64_t n, std::int64_t g_rows, std::int64_t m_rows) {
    VariantPack v;
    for (std::int64_t uid : {p->q, p->k, p->g, p->beta, p->cu_seqlens, p->d_o, p->d_initial_state, p->transition})
      v.set(uid, mem.data());
    v.override_shape(p->q, {t, 2, 64});
    v.override_shape(p->k, {t, 2, 64});
    v.override_shape(p->g, {t, 8});
    v.override_shape(p->beta, {t, 8});
    v.override_shape(p->d_o, {t, 8, 64});
    v.override_shape(p->cu_seqlens, {n + 1});
    v.override_shape(p->d_initial_state, {g_rows, 8, 64, 64});
    v.override_shape(p->transition, {m_rows, 8, 64, 64});
    return v;
  };
  auto run = [&](const VariantPack& v) { return la_bwd_test::overridden(*p, *layout, v); };
  auto q = run(pack_for(3000, 5, 5, 5));
  ASSERT_TRUE(q.is_good()) << q.status().message();
  EXPECT_TRUE(q->summary);
  EXPECT_EQ(q->t, 3000);
  EXPECT_EQ(q->n_seq, 5);
  EXPECT_GT(linear_attention::gdn_bwd_workspace_bytes(*q), linear_attention::gdn_bwd_workspace_bytes(*p));
  for (const auto& v : {pack_for(300, 3, 4, 3), pack_for(300, 3, 3, 2)}) {
    auto r = run(v);
    ASSERT_TRUE(r.is_bad()) << "accepted";
    EXPECT_EQ(r.status().code(), ErrorCode::INVALID_VARIANT_PACK) << r.status().to_string();
    EXPECT_NE(r.status().message().find("rule state_rows"), std::string::npos) << r.status().message();
  }
}

// CHAIN_SPLIT: a summary runs every sequence whole; a split is refused naming the knob.
TEST(LaSummaryBwd, RefusesAChainSplit) {
  Built b = summary_bwd(la_test::engine_cfg(128), with_transition());
  b.g.freeze();
  Status st;
  const auto names =
      la_bwd_test::planned_kernels(b.g, PlanConfig{engine().id(), {{KnobType::CHAIN_SPLIT, 8}}, {}, -1}, &st);
  EXPECT_TRUE(names.empty());
  ASSERT_TRUE(st.is_bad());
  EXPECT_NE(st.message().find("CHAIN_SPLIT"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("gdn_summary_bwd"), std::string::npos) << st.message();
  auto p = analyze_gdn_bwd(b.g);
  ASSERT_TRUE(p.is_good());
  EXPECT_EQ(linear_attention::gdn_bwd_chain_split_rule(*p, 132), 0);
}

// The engine's dispatch: check_support accepts, plan_kernels names the three kernels, and the family
// ranks one plan of ours first on a device-less sm_90a target.
TEST(LaSummaryBwd, EnginePlansAGdnSummaryBwdGraph) {
  Built b = summary_bwd(la_test::engine_cfg(64), with_transition());
  b.g.freeze();
  auto sm90 = DeviceProperties::for_arch("sm_90a");
  ASSERT_TRUE(sm90.is_good());
  FactsCache facts(b.g, PlanTarget{*sm90});
  PlanContext ctx{&facts};
  EXPECT_TRUE(engine().check_support(b.g, ctx).is_good());
  Status st;
  const auto names = la_bwd_test::planned_kernels(b.g, PlanConfig{engine().id(), {}, {}, -1}, &st);
  ASSERT_TRUE(st.is_good()) << st.message();
  EXPECT_EQ(names, (std::vector<std::string>{"gdn_bwd_prep_d64_bf16", "gdn_bwd_fwd_summary_d64_bf16",
                                             "gdn_bwd_rev_summary_d64_bf16"}));
  Built bp = summary_bwd(la_test::engine_cfg(128), with_transition());
  la_bwd_test::expect_our_plans(std::move(bp.g), HeurMode::A, {la_bwd_test::kPlanUnsplit});  // B9: no fused form
}

}  // namespace
