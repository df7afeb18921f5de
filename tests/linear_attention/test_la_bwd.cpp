// tests/linear_attention/test_la_bwd.cpp — the linear_attention engine's gdn_bwd
// without a GPU: its support rules (what it accepts, and the named rule of every
// decline), the kernels and workspace of a plan, the engine's dispatch of a
// gdn_bwd graph (check_support, plan_kernels, the family's ranked plan on a
// device-less sm_90a target), and an NVRTC compile for sm_90a of every gdn_bwd
// kernel specialisation.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "engines/linear_attention/gdn_bwd.h"
#include "engines/linear_attention/kernels/gdn_bwd_params.cuh"
#include "engines/linear_attention/la_engine.h"
#include "exec/declared_layout.h"
#include "ir/linear_attention_fixture.h"
#include "linear_attention/la_bwd_test_util.h"
#include "linear_attention/la_nvrtc_test_util.h"
#include "opgraph/graph.h"
#include "runtime/loader.h"
#include "runtime/nvrtc_compiler.h"

namespace {

using namespace opgraph;
using la_test::Built;
using la_test::Cfg;
using linear_attention::analyze_gdn_bwd;

Cfg cfg_of(std::int64_t d) { return la_test::engine_cfg(d); }
using la_test::mark_outputs;

template <class Tweak>
Built bwd(const Cfg& c, Attributes attrs, Tweak&& tweak, bool outputs = true) {
  Built b = la_test::build(la_test::op_named("gdn_bwd"), c, std::move(attrs), tweak);
  if (outputs) mark_outputs(b);
  const Status v = b.g.validate();
  EXPECT_TRUE(v.is_good()) << v.to_string();
  return b;
}
Built bwd(const Cfg& c, Attributes attrs = {}) {
  return bwd(c, std::move(attrs), [](Built&) {});
}

void expect_decline(const OpGraph& g, const std::string& rule) { la_bwd_test::expect_decline(g, rule, "gdn_bwd"); }
using la_bwd_test::engine;

TEST(LaBwdSupport, AcceptsBothHeadDimsTypesAndGroupedHeads) {
  for (std::int64_t d : {64, 128})
    for (DataType io : {DataType::BFLOAT16, DataType::HALF}) {
      Built b = bwd(cfg_of(d), {}, [&](Built& x) {
        x.q->set_data_type(io);
        x.k->set_data_type(io);
        x.v->set_data_type(io);
        x.d_o->set_data_type(io);
      });
      auto p = analyze_gdn_bwd(b.g);
      ASSERT_TRUE(p.is_good()) << d << " " << to_string(io) << ": " << p.status().message();
      EXPECT_EQ(p->d, d);
      EXPECT_EQ(p->io, io);
      EXPECT_EQ(p->hq, 2);
      EXPECT_EQ(p->hv, 8);
      EXPECT_EQ(p->ho, 8);
      EXPECT_EQ(p->n_seq, 3);  // {0, 4, 4, 10}: one empty sequence
      EXPECT_EQ(p->t, 10);
      EXPECT_EQ(p->dq_type, io);  // the gradients take their inputs' types
      EXPECT_EQ(p->dg_type, DataType::FLOAT);
      EXPECT_DOUBLE_EQ(p->scale, 1.0 / std::sqrt(static_cast<double>(d)));
      EXPECT_EQ(p->initial_state, -1);
      EXPECT_EQ(p->d_initial_state, -1);
      EXPECT_EQ(p->d_final_state, -1);
      // The engine's check_support hands the graph to the backward's rules.
      FactsCache facts(b.g, PlanTarget{});
      EXPECT_TRUE(engine().check_support(b.g, PlanContext{&facts}).is_good());
    }
  // q heads > v heads (v shared): HO = HQ.
  Cfg c = cfg_of(64);
  c.hq = 4;
  c.hk = 1;
  c.hv = 2;
  auto p = analyze_gdn_bwd(bwd(c).g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_EQ(p->ho, 4);
}

TEST(LaBwdSupport, AcceptsTheAttributesItServes) {
  Cfg c = cfg_of(128);
  c.init = c.d_final = true;
  Attributes a;
  a.set("scale", 0.25);
  a.set("use_qk_l2norm", true);
  a.set("use_beta_sigmoid", true);
  a.set("allow_neg_eigval", true);
  a.set("gate_domain", std::string("linear"));
  a.set("overwrite_initial_state", true);
  a.set("batch_invariant", true);
  Built b = bwd(c, a, [](Built& x) {
    x.gate->set_data_type(DataType::BFLOAT16);
    x.cu->set_data_type(DataType::INT64);
    x.init->set_data_type(DataType::BFLOAT16);
    x.d_final->set_data_type(DataType::BFLOAT16);
  });
  auto p = analyze_gdn_bwd(b.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_TRUE(p->l2norm && p->beta_sigmoid && p->neg_eig && p->linear_gate && p->batch_invariant && p->overwrite);
  EXPECT_TRUE(p->cu64);
  EXPECT_DOUBLE_EQ(p->scale, 0.25);
  EXPECT_GE(p->initial_state, 0);
  EXPECT_GE(p->d_final_state, 0);
  EXPECT_GE(p->d_initial_state, 0);
  EXPECT_EQ(p->g_type, DataType::BFLOAT16);
  EXPECT_EQ(p->dg_type, DataType::BFLOAT16);
  EXPECT_EQ(p->init_type, DataType::BFLOAT16);
  EXPECT_EQ(p->dinit_type, DataType::BFLOAT16);
  // A virtual d_initial_state is not written (accepted, no uid).
  Built v = la_test::build(la_test::op_named("gdn_bwd"), c);
  for (const char* port : {"dQ", "dK", "dV", "dG", "dBeta"}) v.g.nodes().back()->output(port)->set_output(true);
  ASSERT_TRUE(v.g.validate().is_good());
  auto pv = analyze_gdn_bwd(v.g);
  ASSERT_TRUE(pv.is_good()) << pv.status().message();
  EXPECT_EQ(pv->d_initial_state, -1);
  EXPECT_GE(pv->initial_state, 0);
}

TEST(LaBwdSupport, AcceptsSafeGateWithAndWithoutItsParameters) {
  Cfg c = cfg_of(64);
  c.a_log = c.dt_bias = true;
  Attributes a;
  a.set("safe_gate", true);
  Built b = bwd(c, a, [](Built& x) { x.dt_bias->set_data_type(DataType::BFLOAT16); });
  auto p = analyze_gdn_bwd(b.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_TRUE(p->safe_gate);
  EXPECT_GE(p->a_log, 0);
  EXPECT_GE(p->dt_bias, 0);
  EXPECT_GE(p->d_a_log, 0);
  EXPECT_GE(p->d_dt_bias, 0);
  EXPECT_EQ(p->dt_bias_type, DataType::BFLOAT16);
  EXPECT_EQ(p->ddt_type, DataType::BFLOAT16);
  // Without a_log / dt_bias: unit amplitude and zero bias, no parameter gradients.
  auto p2 = analyze_gdn_bwd(bwd(cfg_of(64), a).g);
  ASSERT_TRUE(p2.is_good()) << p2.status().message();
  EXPECT_TRUE(p2->safe_gate);
  EXPECT_EQ(p2->a_log, -1);
  EXPECT_EQ(p2->d_a_log, -1);
  EXPECT_EQ(p2->d_dt_bias, -1);
  expect_decline(bwd(c, a, [](Built& x) { x.a_log->set_data_type(DataType::DOUBLE); }).g, "B4 types:");
}

// A checkpoint cadence without the state_checkpoints input is served: the kernels recompute every chunk state,
// so the plan is the one without the cadence (given the input: test_la_bwd_checkpoints.cpp).
TEST(LaBwdSupport, ServesACheckpointCadence) {
  Attributes ck;
  ck.set("checkpoint_every_n_tokens", std::int64_t{128});
  Built b = bwd(cfg_of(64), ck);
  FactsCache facts(b.g, PlanTarget{});
  const Status st = engine().check_support(b.g, PlanContext{&facts});
  EXPECT_TRUE(st.is_good()) << st.message();
  Status s1, s2;
  const auto with = la_bwd_test::planned_kernels(b.g, PlanConfig{engine().id(), {}, {}, -1}, &s1);
  Built plain = bwd(cfg_of(64));
  const auto without = la_bwd_test::planned_kernels(plain.g, PlanConfig{engine().id(), {}, {}, -1}, &s2);
  ASSERT_TRUE(s1.is_good() && s2.is_good()) << s1.message() << s2.message();
  EXPECT_FALSE(with.empty());
  EXPECT_EQ(with, without);
}

TEST(LaBwdSupport, DeclinesHeadDimsAndTypesOutsideTheSet) {
  for (std::int64_t d : {32, 96, 256}) expect_decline(bwd(cfg_of(d)).g, "B3 head dim:");
  Cfg c = cfg_of(128);
  c.v = 64;
  expect_decline(bwd(c).g, "B3 head dim:");
  expect_decline(bwd(cfg_of(64), {}, [](Built& x) {
                   x.q->set_data_type(DataType::FLOAT);
                   x.k->set_data_type(DataType::FLOAT);
                   x.v->set_data_type(DataType::FLOAT);
                 }).g,
                 "B2 q/k/v:");
  expect_decline(bwd(cfg_of(64), {}, [](Built& x) { x.v->set_data_type(DataType::HALF); }).g, "B2 q/k/v:");
  expect_decline(bwd(cfg_of(64), {}, [](Built& x) { x.gate->set_data_type(DataType::DOUBLE); }).g, "B4 types:");
  expect_decline(bwd(cfg_of(64), {}, [](Built& x) { x.d_o->set_data_type(DataType::DOUBLE); }).g, "B4 types:");
  Cfg ci = cfg_of(64);
  ci.init = true;
  expect_decline(bwd(ci, {}, [](Built& x) { x.init->set_data_type(DataType::HALF); }).g, "B4 types:");
  Cfg cf = cfg_of(64);
  cf.d_final = true;
  expect_decline(bwd(cf, {}, [](Built& x) { x.d_final->set_data_type(DataType::HALF); }).g, "B4 types:");
}

TEST(LaBwdSupport, DeclinesLayoutsItDoesNotRead) {
  // q, k, v: the forward's rule (head dim contiguous, strides multiples of 8).
  expect_decline(bwd(cfg_of(64), {}, [](Built& x) { x.k->set_stride({68, 4, 1}); }).g, "B7 layout:");
  // Views of a fused projection are served.
  {
    auto b = bwd(cfg_of(64), {}, [](Built& x) {
      const std::int64_t row = (2 + 2 + 8) * 64;
      x.q->set_stride({row, 64, 1});
      x.k->set_stride({row, 64, 1});
      x.v->set_stride({row, 64, 1});
    });
    auto p = analyze_gdn_bwd(b.g);
    ASSERT_TRUE(p.is_good()) << p.status().message();
    EXPECT_EQ(p->v_ts, (2 + 2 + 8) * 64);
    EXPECT_EQ(p->v_hs, 64);
  }
  // Every other operand dense: a strided dO is declined.
  expect_decline(bwd(cfg_of(64), {}, [](Built& x) { x.d_o->set_stride({8 * 128, 128, 1}); }).g, "B7 layout:");
  // A virtual gradient is declined: the engine writes each one.
  Built b = bwd(cfg_of(64), {}, [](Built&) {}, /*outputs=*/false);
  expect_decline(b.g, "B7 layout:");
  // A forward graph is not the backward's: B1 (the forward's own rules take it).
  Built f = la_test::build(la_test::op_named("gdn"), cfg_of(64));
  mark_outputs(f);
  ASSERT_TRUE(f.g.validate().is_good());
  expect_decline(f.g, "B1 op:");
  EXPECT_FALSE(linear_attention::is_gdn_bwd(f.g));
}

// The six kernels in launch order (unsplit), one specialisation per (D, q/k/v type), and the workspace.
TEST(LaBwdKernels, RequestsAndWorkspace) {
  Cfg c = cfg_of(128);
  c.cu = {0, 30, 30, 100};  // T = 100, N = 3
  auto p = analyze_gdn_bwd(bwd(c).g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  auto r = linear_attention::gdn_bwd_kernel_requests(*p);
  std::vector<std::string> names;
  for (const auto& x : r) names.push_back(x.kernel);
  EXPECT_EQ(names, (std::vector<std::string>{"gdn_bwd_prep_d128_bf16", "gdn_bwd_fwd_scan_d128_bf16",
                                             "gdn_bwd_rev_scan_d128_bf16", "gdn_bwd_grads_d128_bf16",
                                             "gdn_bwd_finish_d128_bf16", "gdn_bwd_gate_params_d128_bf16"}));
  // The prep and the two scans compile from one source, the gradient kernels from the other.
  for (std::size_t i = 0; i < r.size(); ++i)
    EXPECT_EQ(r[i].source, i < 3 ? "linear_attention/kernels/gdn_bwd_states.cu"
                                 : "linear_attention/kernels/gdn_bwd_grads.cu")
        << r[i].kernel;
  // ceil(100 / 64) + 3 = 5 chunk slots x 8 heads: the tiles (4 x 64 x 128 + 2 x 64 x 64 bf16: P and T), exp(gamma_C),
  // S^T and dS^T (128 x 128 bf16 each), Vn and dVn (64 x 128 bf16 each); no fp32 dq, dk staging (HQ = HK: the
  // grads kernel sums each q / k head's group and writes dQ, dK itself), no dv staging (every v head is its own
  // output head here, HV = HO, so the grads kernel writes dV itself); fp32 [8, 100] twice (the safe gate's terms).
  const long long sh = 5 * 8;
  auto up = [](long long x) { return (x + 255) / 256 * 256; };
  long long want = up(sh * 2 * (4 * 64 * 128 + 2 * 64 * 64));
  want = up(want + sh * 4);
  want = up(want + sh * 16 * 4);  // <S^T, dS^T>'s partial sums
  want = up(want + sh * 2 * 128 * 128);
  want = up(want + sh * 2 * 128 * 128);
  want = up(want + sh * 2 * 64 * 128);
  want = up(want + sh * 2 * 64 * 128);
  ASSERT_EQ(p->hv, p->ho);
  ASSERT_EQ(p->hq, p->hk);
  want = up(want + 100 * 8 * 4);
  want = up(want + 100 * 8 * 4);
  EXPECT_EQ(linear_attention::gdn_bwd_workspace_bytes(*p), want);
  // Grouped v heads (HV = 2 < HO = 8): dV per output head is staged in fp32 for the finish kernel's group sums.
  Cfg gv = c;
  gv.hq = gv.hk = 8;
  gv.hv = 2;
  auto pg = analyze_gdn_bwd(bwd(gv).g);
  ASSERT_TRUE(pg.is_good()) << pg.status().message();
  ASSERT_EQ(pg->ho, 8);
  EXPECT_EQ(linear_attention::gdn_bwd_workspace_bytes(*pg) - linear_attention::gdn_bwd_workspace_bytes(*p),
            up(100 * 8 * 128 * 4));
  // q and k heads that differ (HQ = 2, HK = 4): dq and dk per output head are staged in fp32 too, for the
  // finish kernel's group sums.
  Cfg qk = c;
  qk.hq = 2;
  qk.hk = 4;
  auto pq = analyze_gdn_bwd(bwd(qk).g);
  ASSERT_TRUE(pq.is_good()) << pq.status().message();
  ASSERT_EQ(pq->ho, 8);
  EXPECT_EQ(linear_attention::gdn_bwd_workspace_bytes(*pq) - linear_attention::gdn_bwd_workspace_bytes(*p),
            2 * up(100 * 8 * 128 * 4));
  // One kernel per layout class: lengths, heads and attributes do not enter the key.
  Cfg other = cfg_of(128);
  other.cu = {0, 500, 4000};
  other.hq = other.hk = other.hv = 4;
  Attributes l2;
  l2.set("use_qk_l2norm", true);
  auto po = analyze_gdn_bwd(bwd(other, l2).g);
  ASSERT_TRUE(po.is_good());
  EXPECT_EQ(linear_attention::gdn_bwd_kernel_requests(*po)[3].key("sm_90a"), r[3].key("sm_90a"));
  // fp16 at d = 64.
  auto ph = analyze_gdn_bwd(bwd(cfg_of(64), {}, [](Built& x) {
                              x.q->set_data_type(DataType::HALF);
                              x.k->set_data_type(DataType::HALF);
                              x.v->set_data_type(DataType::HALF);
                            }).g);
  ASSERT_TRUE(ph.is_good());
  EXPECT_EQ(linear_attention::gdn_bwd_kernel_requests(*ph)[0].kernel, "gdn_bwd_prep_d64_f16");
  // Every kernel's shared memory fits the H200's 227 KiB a block.
  for (long long d : {64, 128}) {
    EXPECT_LE(opgraph_gdn::gdn_bwd_grads_smem_bytes(d), 227 * 1024) << d;
    EXPECT_LE(opgraph_gdn::gdn_bwd_rev_scan_smem_bytes(d), 227 * 1024) << d;
    EXPECT_LE(opgraph_gdn::gdn_bwd_fixup_smem_bytes(d), 227 * 1024) << d;
  }
}

// The engine's dispatch: plan_kernels names the six kernels, and the family's
// heuristics rank the whole-sequence plan of ours first for an accepted gdn_bwd graph
// (none for a declined one) on a device-less sm_90a target.
TEST(LaBwdKernels, EnginePlansAGdnBwdGraph) {
  Built b = bwd(cfg_of(64));
  b.g.freeze();
  auto sm90 = DeviceProperties::for_arch("sm_90a");
  ASSERT_TRUE(sm90.is_good());
  Status st;
  const auto names = la_bwd_test::planned_kernels(b.g, PlanConfig{engine().id(), {}, {}, -1}, &st);
  ASSERT_TRUE(st.is_good()) << st.message();
  EXPECT_EQ(names, (std::vector<std::string>{"gdn_bwd_prep_d64_bf16", "gdn_bwd_fwd_scan_d64_bf16",
                                             "gdn_bwd_rev_scan_d64_bf16", "gdn_bwd_grads_d64_bf16",
                                             "gdn_bwd_finish_d64_bf16", "gdn_bwd_gate_params_d64_bf16"}));

  for (HeurMode mode : {HeurMode::A, HeurMode::FALLBACK}) {  // a few (head, sequence) chains: the fused form last
    Built bp = bwd(cfg_of(128));
    la_bwd_test::expect_our_plans(std::move(bp.g), mode,
                                  {la_bwd_test::kPlanUnsplit, la_bwd_test::kPlanFusedRecompute,
                                   la_bwd_test::kPlanFusedBoth});
  }
  // A declined gdn_bwd graph (an fp32 q / k / v, rule B2): no plan of ours.
  Built bd = bwd(cfg_of(128), {}, [](Built& x) {
    for (const auto& t : {x.q, x.k, x.v}) t->set_data_type(DataType::FLOAT);
  });
  Graph gd(std::move(bd.g));
  gd.set_device_properties(*sm90);
  if (gd.create_execution_plans({HeurMode::A}).is_good()) {
    for (std::int64_t i = 0; i < gd.get_execution_plan_count(); ++i) {
      auto n = gd.get_plan_name_at_index(i);
      if (n.is_good()) {
        EXPECT_EQ(n->rfind("linear_attention", 0), std::string::npos) << *n;
      }
    }
  }
}

// The chain split of the two scans (CHAIN_SPLIT = chunks a span): the rule, the heuristics' order, the
// kernels a split plan compiles, its workspace, and the knob's refusals.
TEST(LaBwdKernels, ChainSplit) {
  auto sm90 = DeviceProperties::for_arch("sm_90a");
  ASSERT_TRUE(sm90.is_good());
  ASSERT_EQ(sm90->sm_count, 132);
  // The 2 / 8 cell: one sequence of 32768 tokens, 8 output heads: 16 CTAs a scan unsplit.
  Cfg c = cfg_of(128);
  c.hq = c.hk = 2;
  c.hv = 8;
  c.cu = {0, 32768};
  auto p = analyze_gdn_bwd(bwd(c).g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  const long long j = linear_attention::gdn_bwd_chain_split_rule(*p, 132);
  EXPECT_EQ(j, 64);  // 8 spans of 64 chunks (the H200's fastest: 2.114 ms against 2.221 at 32, 5.306 whole)
  EXPECT_EQ(linear_attention::gdn_bwd_chain_split_rule(*p, 0), 0);  // no device facts: no split
  {
    Attributes bi;
    bi.set("batch_invariant", true);
    auto pb = analyze_gdn_bwd(bwd(c, bi).g);
    ASSERT_TRUE(pb.is_good());
    EXPECT_EQ(linear_attention::gdn_bwd_chain_split_rule(*pb, 132), 0);  // a sequence's spans would follow the batch
  }
  {
    Cfg mid = c;  // one 32k sequence at 16 / 32 heads: 64 CTAs a scan; spans of 128 chunks measured 5 % faster
    mid.hq = mid.hk = 16;
    mid.hv = 32;
    auto pm = analyze_gdn_bwd(bwd(mid).g);
    ASSERT_TRUE(pm.is_good());
    EXPECT_EQ(linear_attention::gdn_bwd_chain_split_rule(*pm, 132), 128);
    mid.hv = 64;  // 16 / 64: 128 CTAs, one wave of the reverse scan already: no split
    auto pw = analyze_gdn_bwd(bwd(mid).g);
    ASSERT_TRUE(pw.is_good());
    EXPECT_EQ(linear_attention::gdn_bwd_chain_split_rule(*pw, 132), 0);
  }
  {
    Cfg wide = c;  // 4 x 8192 at 16 / 64 heads: 512 CTAs a scan already
    wide.hq = wide.hk = 16;
    wide.hv = 64;
    wide.cu = {0, 8192, 16384, 24576, 32768};
    auto pw = analyze_gdn_bwd(bwd(wide).g);
    ASSERT_TRUE(pw.is_good());
    EXPECT_EQ(linear_attention::gdn_bwd_chain_split_rule(*pw, 132), 0);
  }
  // The kernels: the split's five in place of the two scans.
  std::vector<std::string> names;
  for (const auto& r : linear_attention::gdn_bwd_kernel_requests(*p, j)) {
    names.push_back(r.kernel);
    EXPECT_EQ(r.source, r.entry == "gdn_bwd_grads" || r.entry == "gdn_bwd_finish" || r.entry == "gdn_bwd_gate_params"
                            ? "linear_attention/kernels/gdn_bwd_grads.cu"
                            : "linear_attention/kernels/gdn_bwd_states.cu")
        << r.kernel;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"gdn_bwd_prep_d128_bf16", "gdn_bwd_fwd_summary_d128_bf16",
                                             "gdn_bwd_rev_summary_d128_bf16", "gdn_bwd_span_fixup_d128_bf16",
                                             "gdn_bwd_fwd_span_d128_bf16", "gdn_bwd_rev_span_d128_bf16",
                                             "gdn_bwd_grads_d128_bf16", "gdn_bwd_finish_d128_bf16",
                                             "gdn_bwd_gate_params_d128_bf16"}));
  // The workspace: five fp32 [128][128] blocks a (sequence, span, head) besides the unsplit one's.
  EXPECT_EQ(opgraph_gdn::gdn_bwd_spans(32768, 64), 8);
  EXPECT_EQ(linear_attention::gdn_bwd_workspace_bytes(*p, j) - linear_attention::gdn_bwd_workspace_bytes(*p),
            1LL * 8 * 8 * 5 * 128 * 128 * 4);
  // The heuristics: the one-pass form's split, then PIPELINE_ARCH 3's (their rules: spans of 32 chunks both).
  EXPECT_EQ(la_bwd_test::first_two_plans(std::move(bwd(c).g)),
            (std::vector<std::string>{"linear_attention[CHAIN_SPLIT=32, PIPELINE_ARCH=5]",
                                      "linear_attention[CHAIN_SPLIT=32, PIPELINE_ARCH=3]"}));
  // plan_kernels follows the knob; a value off the domain, or a split whose N x spans overflows
  // the grid, is refused naming the knob.
  Built b = bwd(c);
  b.g.freeze();
  auto kernels_of = [&](const OpGraph& g, std::int64_t split, std::vector<std::string>& out) {
    FactsCache f(g, PlanTarget{*sm90});
    return engine().plan_kernels(g, PlanConfig{engine().id(), {{KnobType::CHAIN_SPLIT, split}}, {}, -1},
                                 PlanContext{&f}, [&](const runtime::KernelRequest& r) {
                                   out.push_back(r.kernel);
                                   return Status::ok();
                                 });
  };
  std::vector<std::string> got;
  ASSERT_TRUE(kernels_of(b.g, 8, got).is_good());
  EXPECT_EQ(got, names);
  got.clear();
  Status bad = kernels_of(b.g, 24, got);
  EXPECT_EQ(bad.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(bad.message().find("CHAIN_SPLIT"), std::string::npos) << bad.message();
  Cfg many = cfg_of(64);
  many.cu.clear();
  for (std::int64_t i = 0; i <= 40000; ++i) many.cu.push_back(i);  // 40000 one-token sequences: 625 chunks
  Built bm = bwd(many);
  bm.g.freeze();
  bad = kernels_of(bm.g, 8, got);
  EXPECT_EQ(bad.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(bad.message().find("exceeds the grid's 65535"), std::string::npos) << bad.message();
}

// Execute-time shape overrides: T and N follow the call (the workspace with them);
// heads, a token tensor left behind, state rows off N and a strided dO are refused.
TEST(LaBwdOverrides, TokenAndSequenceCountsChangeHeadsDoNot) {
  Cfg c = cfg_of(64);
  c.cu = {0, 30, 30, 100};
  c.init = c.d_final = true;
  Built b = bwd(c);
  auto p = analyze_gdn_bwd(b.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  auto layout = DeclaredLayout::compute(b.g);
  ASSERT_TRUE(layout.is_good()) << layout.status().message();
  std::vector<unsigned char> mem(64);  // stand-in addresses: nothing is read
  auto pack_for = [&](std::int64_t t, std::int64_t n, std::int64_t rows, std::int64_t q_heads = 2) {
    VariantPack v;
    for (std::int64_t uid : {p->q, p->k, p->v, p->g, p->beta, p->cu_seqlens, p->initial_state, p->d_o,
                             p->d_final_state, p->dq, p->dk, p->dv, p->dg, p->dbeta, p->d_initial_state})
      v.set(uid, mem.data());
    v.override_shape(p->q, {t, q_heads, 64});
    v.override_shape(p->k, {t, 2, 64});
    v.override_shape(p->v, {t, 8, 64});
    v.override_shape(p->g, {t, 8});
    v.override_shape(p->beta, {t, 8});
    v.override_shape(p->d_o, {t, 8, 64});
    v.override_shape(p->dq, {t, 2, 64});
    v.override_shape(p->dk, {t, 2, 64});
    v.override_shape(p->dv, {t, 8, 64});
    v.override_shape(p->dg, {t, 8});
    v.override_shape(p->dbeta, {t, 8});
    v.override_shape(p->cu_seqlens, {n + 1});
    for (std::int64_t uid : {p->initial_state, p->d_final_state, p->d_initial_state})
      v.override_shape(uid, {rows, 8, 64, 64});
    return v;
  };
  auto run = [&](const VariantPack& v) { return la_bwd_test::overridden(*p, *layout, v); };
  auto q = run(pack_for(3000, 5, 5));
  ASSERT_TRUE(q.is_good()) << q.status().message();
  EXPECT_EQ(q->t, 3000);
  EXPECT_EQ(q->n_seq, 5);
  EXPECT_EQ(q->q_ts, 2 * 64);
  EXPECT_EQ(q->v_ts, 8 * 64);
  EXPECT_EQ(q->hq, p->hq);
  EXPECT_EQ(linear_attention::gdn_bwd_workspace_bytes(*q), opgraph_gdn::gdn_bwd_ws(64, 3000, 5, 8, q->hq != q->hk, q->hv != q->ho).total);
  EXPECT_GT(linear_attention::gdn_bwd_workspace_bytes(*q), linear_attention::gdn_bwd_workspace_bytes(*p));
  auto fewer = run(pack_for(40, 2, 2));
  ASSERT_TRUE(fewer.is_good()) << fewer.status().message();
  EXPECT_EQ(fewer->t, 40);
  EXPECT_EQ(fewer->n_seq, 2);

  auto refused = [&](const VariantPack& v, std::initializer_list<const char*> parts) {
    auto r = run(v);
    ASSERT_TRUE(r.is_bad()) << "accepted";
    EXPECT_EQ(r.status().code(), ErrorCode::INVALID_VARIANT_PACK) << r.status().to_string();
    for (const char* part : parts)
      EXPECT_NE(r.status().message().find(part), std::string::npos) << "'" << part << "' not in " << r.status().message();
  };
  refused(pack_for(300, 3, 3, 4), {"'q'", "rule built_extents", "dim 1"});
  {
    VariantPack v = pack_for(300, 3, 3);
    v.override_shape(p->dbeta, {100, 8});
    refused(v, {"'dBeta'", "rule token_axis", "100 tokens here, 300"});
  }
  refused(pack_for(300, 4, 3), {"rule state_rows", "3 state rows for 4 sequences"});
  {
    VariantPack v = pack_for(300, 3, 3);
    // (normalisation refuses a stride that does not pack the declaration's order first)
    v.override_shape(p->d_o, {300, 8, 64}, {8 * 128, 128, 1});
    refused(v, {"'dO'", "rule layout_class"});
  }
}

// The engine offers its gdn_bwd for every graph the rules accept, with nothing
// to opt in (its GPU numerics tests pass on the H200; before that run a rule
// declined every gdn_bwd graph here): check_support accepts it on a device-less
// sm_90a target and the family's heuristics rank a plan of ours first, for both
// head dims and both input types.
TEST(LaBwdSupport, OfferedForAnSm90TargetByDefault) {
  auto sm90 = DeviceProperties::for_arch("sm_90a");
  ASSERT_TRUE(sm90.is_good());
  for (std::int64_t d : {64, 128})
    for (DataType io : {DataType::BFLOAT16, DataType::HALF}) {
      SCOPED_TRACE("d " + std::to_string(d) + " " + std::string(to_string(io)));
      Built b = bwd(cfg_of(d), {}, [&](Built& x) {
        x.q->set_data_type(io);
        x.k->set_data_type(io);
        x.v->set_data_type(io);
        x.d_o->set_data_type(io);
      });
      {
        FactsCache facts(b.g, PlanTarget{*sm90});
        const Status st = engine().check_support(b.g, PlanContext{&facts});
        EXPECT_TRUE(st.is_good()) << st.to_string();
      }
      Graph g(std::move(b.g));
      g.set_device_properties(*sm90);
      const Status made = g.create_execution_plans({HeurMode::A});
      ASSERT_TRUE(made.is_good()) << made.to_string();
      auto n0 = g.get_plan_name_at_index(0);
      ASSERT_TRUE(n0.is_good()) << n0.status().message();
      EXPECT_EQ(n0->rfind("linear_attention", 0), 0u) << *n0;
    }
}

TEST(LaBwdNvrtc, EveryGdnBwdSpecialisationCompilesForSm90a) {
  if (auto api = runtime::nvrtc(); api.is_bad())
    GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  auto all = linear_attention::gdn_bwd_declared_specialisations();
  // 12 entries x d {64, 128} x {bf16, fp16}, the six fused ones (gdn_bwd_fwd_fused, gdn_bwd_rev_fused and
  // PIPELINE_ARCH 3's split: gdn_fused.cu's warp-specialised build) x {bf16, fp16} at d = 128, and the one-pass
  // form's five (PIPELINE_ARCH 5: gdn_bwd_fwd_st_fused and its split's span recompute, gdn_bwd_onepass and its finish
  // and gate-parameter builds) at d = 128, bf16
  ASSERT_EQ(all.size(), 65u);
  // One compile a build (source and defines: every entry of a source is in its one cubin), each entry found in it;
  // 12 builds: states, grads x d x type, the fused build x type, and the one-pass form's two.
  EXPECT_EQ(la_test::compile_each_build_once(all), 12u);
}

// The A/B forms of the backward's kernels compile too (d = 128, bf16: the input type is a define every form shares,
// and EveryGdnBwdSpecialisationCompilesForSm90a compiles both; one type halves the test's ~300 s): gdn_bwd_grads
// with its products on mma.sync (GDN_BWD_GRADS_WG=0, kernels/gdn_bwd_grads_tiles.cuh; the engine's d = 128 build is
// on wgmma, d = 64's on mma.sync), fully unrolled on wgmma (GDN_BWD_WG_UNROLL=8), with independent products
// paired in one commit group (GDN_BWD_WG_PAIRS=1), with its address arithmetic cut (GDN_BWD_WG_ADDR=1, alone and
// with the pairs), its warpgroups on different full-width products (GDN_BWD_GRADS_WIDE=1,
// kernels/gdn_bwd_grads_wide.cuh; alone and with GDN_BWD_WIDE_PREFETCH=1), its next head's tiles requested early
// (GDN_BWD_EARLY_LOADS=1; all of them after the head's last products: =2), its dV stored as staged 16-byte rows
// (GDN_BWD_DV_STAGE=1), its per-token epilogue on two warps (GDN_BWD_EPI_SPREAD=1), the next head's gates read a head
// ahead with every next-head tile requested early (GDN_BWD_GATES_AHEAD=1 GDN_BWD_EARLY_LOADS=2), and with the
// head-start barrier dropped (GDN_BWD_EPI_DEFER=1), <S^T, dS^T> summed here (GDN_BWD_SDS_IN_GRADS=1), its phase clocks
// (GDN_BWD_CLOCK=1, with the staged dV), and beside it the one-pass design's second pass (GDN_BWD_ONEPASS=1:
// gdn_bwd_onepass, kernels/gdn_bwd_onepass.cuh, an entry of its own in the cubin; with its loads a chunk ahead by
// TMA, alone and with dq / dk by L2 reductions, a phase's products under one wait and its clocks, RED=1 BATCH=1
// CLOCK=1; and by roles, every product full width on one warpgroup, RED=1 ROLES=1, and its one-barrier start with its
// clocks, ROLES=2 CLOCK=1, and with the dL chain on aux, ROLES=3, kernels/gdn_bwd_onepass_roles.cuh; and dq / dk
// added by TMA reductions from shared memory with dv by TMA stores, RED=1 BATCH=1 TMARED=1 TMADV=1, and the dv
// stores alone, TMADV=1);
// gdn_bwd_rev_fused with its
// loader's second form (GDN_BWD_REV_LOADER=2); gdn_bwd_fwd_fused with its S^T and Wn stores staged
// (GDN_BWD_FWD_STAGE=1).
TEST(LaBwdNvrtc, TrialVariantsCompileForSm90a) {
  if (auto api = runtime::nvrtc(); api.is_bad())
    GTEST_SKIP() << "libnvrtc cannot be loaded: " << api.status().message();
  int n = 0;
  for (const auto& base : linear_attention::gdn_bwd_declared_specialisations()) {
    if (base.entry != "gdn_bwd_grads" || base.kernel != "gdn_bwd_grads_d128_bf16") continue;
    using Defs = std::vector<std::pair<std::string, std::string>>;
    for (const Defs& defs : {Defs{{"GDN_BWD_GRADS_WG", "0"}}, Defs{{"GDN_BWD_WG_UNROLL", "8"}},
                             Defs{{"GDN_BWD_WG_PAIRS", "1"}}, Defs{{"GDN_BWD_WG_ADDR", "1"}},
                             Defs{{"GDN_BWD_WG_ADDR", "1"}, {"GDN_BWD_WG_PAIRS", "1"}},
                             Defs{{"GDN_BWD_GRADS_WIDE", "1"}},
                             Defs{{"GDN_BWD_GRADS_WIDE", "1"}, {"GDN_BWD_WIDE_PREFETCH", "1"}},
                             Defs{{"GDN_BWD_EARLY_LOADS", "1"}}, Defs{{"GDN_BWD_EARLY_LOADS", "2"}},
                             Defs{{"GDN_BWD_DV_STAGE", "1"}}, Defs{{"GDN_BWD_EPI_SPREAD", "1"}},
                             Defs{{"GDN_BWD_GATES_AHEAD", "1"}, {"GDN_BWD_EARLY_LOADS", "2"}},
                             Defs{{"GDN_BWD_EPI_DEFER", "1"}, {"GDN_BWD_GATES_AHEAD", "1"}},
                             Defs{{"GDN_BWD_SDS_IN_GRADS", "1"}},
                             Defs{{"GDN_BWD_CLOCK", "1"}, {"GDN_BWD_DV_STAGE", "1"}},
                             Defs{{"GDN_BWD_ONEPASS", "1"}},
                             Defs{{"GDN_BWD_ONEPASS", "1"}, {"GDN_BWD_ONEPASS_RED", "1"},
                                  {"GDN_BWD_ONEPASS_BATCH", "1"}, {"GDN_BWD_CLOCK", "1"}},
                             Defs{{"GDN_BWD_ONEPASS", "1"}, {"GDN_BWD_ONEPASS_RED", "1"},
                                  {"GDN_BWD_ONEPASS_ROLES", "1"}},
                             Defs{{"GDN_BWD_ONEPASS", "1"}, {"GDN_BWD_ONEPASS_RED", "1"},
                                  {"GDN_BWD_ONEPASS_ROLES", "2"}, {"GDN_BWD_CLOCK", "1"}},
                             Defs{{"GDN_BWD_ONEPASS", "1"}, {"GDN_BWD_ONEPASS_RED", "1"},
                                  {"GDN_BWD_ONEPASS_ROLES", "3"}},
                             Defs{{"GDN_BWD_ONEPASS", "1"}, {"GDN_BWD_ONEPASS_RED", "1"},
                                  {"GDN_BWD_ONEPASS_BATCH", "1"}, {"GDN_BWD_ONEPASS_TMARED", "1"},
                                  {"GDN_BWD_ONEPASS_TMADV", "1"}},
                             Defs{{"GDN_BWD_ONEPASS", "1"}, {"GDN_BWD_ONEPASS_RED", "1"},
                                  {"GDN_BWD_ONEPASS_BATCH", "1"}, {"GDN_BWD_ONEPASS_TMADV", "1"}}}) {
      auto r = base;
      ++n;
      for (const auto& [def, val] : defs) {
        r.defines.push_back({def, val});
        r.kernel += "_" + def + val;
      }
      auto k = runtime::compile_kernel(r, "sm_90a");
      ASSERT_TRUE(k.is_good()) << r.kernel << ": " << k.status().message();
      EXPECT_TRUE(runtime::validate_cubin(k->cubin, k->lowered_name).is_good()) << r.kernel;
    }
  }
  // gdn_bwd_rev_fused's second loader form (GDN_BWD_REV_LOADER=2, kernels/gdn_bwd_rev_ws.cuh), its 32-bit
  // <S^T, dS^T> reads (GDN_BWD_REV_SDS32=1), its form without them (GDN_BWD_SDS_IN_GRADS=1), gdn_bwd_fwd_fused's
  // staged stores (GDN_BWD_FWD_STAGE=1, kernels/gdn_fused_ws3.cuh).
  const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> fused_trials = {
      {"gdn_bwd_rev_fused", {"GDN_BWD_REV_LOADER", "2"}},
      {"gdn_bwd_rev_fused", {"GDN_BWD_REV_SDS32", "1"}},
      {"gdn_bwd_rev_fused", {"GDN_BWD_SDS_IN_GRADS", "1"}},
      {"gdn_bwd_fwd_fused", {"GDN_BWD_FWD_STAGE", "1"}}};
  for (const auto& base : linear_attention::gdn_bwd_declared_specialisations())
    for (const auto& [entry, def] : fused_trials) {
      if (base.entry != entry || base.kernel.find("_bf16") == std::string::npos) continue;
      auto r = base;
      ++n;
      r.defines.push_back({def.first, def.second});
      r.kernel += "_" + def.first + def.second;
      auto k = runtime::compile_kernel(r, "sm_90a");
      ASSERT_TRUE(k.is_good()) << r.kernel << ": " << k.status().message();
      EXPECT_TRUE(runtime::validate_cubin(k->cubin, k->lowered_name).is_good()) << r.kernel;
    }
  EXPECT_EQ(n, 26);
}

}  // namespace
