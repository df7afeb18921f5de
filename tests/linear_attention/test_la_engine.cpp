// tests/linear_attention/test_la_engine.cpp — the linear_attention engine without a
// GPU: its support rules (what it accepts and the named rule of every decline),
// the kernels a plan compiles and gdn_summary's plan (the manifest slot and the plan order on a
// device-less sm_90a target: test_la_planning.cpp; the NVRTC compiles of its kernels: test_la_nvrtc.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "engines/linear_attention/gdn_problem.h"
#include "engines/linear_attention/gdn_bwd.h"
#include "engines/linear_attention/la_engine.h"
#include "exec/declared_layout.h"
#include "ir/linear_attention_fixture.h"
#include "opgraph/graph.h"
#include "runtime/nvrtc_compiler.h"

namespace {

using namespace opgraph;
using la_test::Built;
using la_test::Cfg;
using linear_attention::analyze_gdn;

Cfg cfg_of(std::int64_t d) { return la_test::engine_cfg(d); }
using la_test::mark_outputs;

template <class Tweak>
Built gdn(const Cfg& c, Attributes attrs, Tweak&& tweak) {
  Built b = la_test::build(la_test::op_named("gdn"), c, std::move(attrs), tweak);
  mark_outputs(b);
  EXPECT_TRUE(b.g.validate().is_good()) << b.g.validate().to_string();
  return b;
}
Built gdn(const Cfg& c, Attributes attrs = {}) {
  return gdn(c, std::move(attrs), [](Built&) {});
}

void expect_decline(const OpGraph& g, const std::string& rule) {
  auto p = analyze_gdn(g);
  ASSERT_TRUE(p.is_bad()) << "accepted; expected a decline naming " << rule;
  EXPECT_EQ(p.status().code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(p.status().message().find(rule), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("engine linear_attention"), std::string::npos) << p.status().message();
}

TEST(LaSupport, AcceptsGdnForwardBothHeadDimsAndTypes) {
  for (std::int64_t d : {64, 128})
    for (DataType io : {DataType::BFLOAT16, DataType::HALF}) {
      Built b = gdn(cfg_of(d), {}, [&](Built& x) {
        x.q->set_data_type(io);
        x.k->set_data_type(io);
        x.v->set_data_type(io);
      });
      auto p = analyze_gdn(b.g);
      ASSERT_TRUE(p.is_good()) << d << " " << to_string(io) << ": " << p.status().message();
      EXPECT_EQ(p->d, d);
      EXPECT_EQ(p->io, io);
      EXPECT_EQ(p->ho, 8);
      EXPECT_EQ(p->n_seq, 3);
      EXPECT_DOUBLE_EQ(p->scale, 1.0 / std::sqrt(static_cast<double>(d)));
      EXPECT_EQ(p->final_state, -1);
    }
}

TEST(LaSupport, AcceptsEveryAttributeTheIssueLists) {
  Cfg c = cfg_of(128);
  c.init = c.pool = c.a_log = c.dt_bias = true;
  Attributes a;
  a.set("scale", 0.25);
  a.set("use_qk_l2norm", true);
  a.set("safe_gate", true);
  a.set("use_beta_sigmoid", true);
  a.set("allow_neg_eigval", true);
  a.set("output_final_state", true);
  a.set("overwrite_initial_state", true);
  a.set("batch_invariant", true);
  Built b = gdn(c, a, [](Built& x) {
    x.gate->set_data_type(DataType::BFLOAT16);
    x.beta->set_data_type(DataType::FLOAT);
    x.cu->set_data_type(DataType::INT64);
  });
  auto p = analyze_gdn(b.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_TRUE(p->l2norm && p->safe_gate && p->beta_sigmoid && p->neg_eig && p->batch_invariant && p->overwrite);
  EXPECT_TRUE(p->cu64);
  EXPECT_DOUBLE_EQ(p->scale, 0.25);
  EXPECT_EQ(p->state_rows, c.n_pool);
  EXPECT_GE(p->final_state, 0);
  EXPECT_GE(p->state_indices, 0);
  EXPECT_EQ(p->g_type, DataType::BFLOAT16);

  // The linear gate and a checkpoint cadence with its state_checkpoints output left virtual (nothing written)
  // are accepted too; bound as a graph output at d = 64, the two-pass prefill writes them (L8), in FLOAT or
  // BFLOAT16 (HALF declined by the rule's name: the reference writes them).
  Cfg c2 = cfg_of(64);
  c2.init = true;
  Attributes a2;
  a2.set("gate_domain", std::string("linear"));
  a2.set("checkpoint_every_n_tokens", std::int64_t{128});
  a2.set("output_final_state", true);
  auto virtual_checkpoints = [&](auto&& tweak) {
    Built b = la_test::build(la_test::op_named("gdn"), c2, a2, tweak);
    const auto& node = b.g.nodes().back();
    EXPECT_NE(node->output("state_checkpoints"), nullptr);
    for (const char* port : {"O", "final_state"}) node->output(port)->set_output(true);
    EXPECT_TRUE(b.g.validate().is_good()) << b.g.validate().to_string();
    return b;
  };
  Built b2 = virtual_checkpoints([](Built&) {});
  auto p2 = analyze_gdn(b2.g);
  ASSERT_TRUE(p2.is_good()) << p2.status().message();
  EXPECT_TRUE(p2->linear_gate);
  EXPECT_EQ(p2->checkpoint_every, 128);
  {
    auto bound = analyze_gdn(gdn(c2, a2).g);
    ASSERT_TRUE(bound.is_good()) << bound.status().message();
    EXPECT_GE(bound->checkpoints, 0);
    EXPECT_EQ(bound->ckpt_type, DataType::FLOAT);
    Built half = gdn(c2, a2);
    half.g.nodes().back()->output("state_checkpoints")->set_data_type(DataType::HALF);
    ASSERT_TRUE(half.g.validate().is_good());
    expect_decline(half.g, "L8 checkpoints:");
  }
  // bf16 state in and out.
  Built b3 = virtual_checkpoints([](Built& x) { x.init->set_data_type(DataType::BFLOAT16); });
  auto p3 = analyze_gdn(b3.g);
  ASSERT_TRUE(p3.is_good()) << p3.status().message();
  EXPECT_EQ(p3->state_type, DataType::BFLOAT16);
}

TEST(LaSupport, DeclinesOtherOps) {
  // (gdn_bwd and gdn_summary_bwd: the engine serves them through gdn_bwd.h's analysis, not this one.)
  for (const char* op : {"gdn_bwd", "gdn_summary_bwd", "kda", "gdn2", "gdp"}) {
    Cfg c = cfg_of(64);
    Built b = la_test::build(la_test::op_named(op), c);
    ASSERT_TRUE(b.g.validate().is_good()) << op << ": " << b.g.validate().to_string();
    expect_decline(b.g, "L1 op:");
  }
  // gdn_summary has its own rules (LaSummary below): d = 32 is declined by S3 (64 and 128 are served).
  Built s = la_test::build(la_test::op_named("gdn_summary"), cfg_of(32));
  expect_decline(s.g, "S3");
}

TEST(LaSupport, DeclinesHeadDimsOutsideTheSet) {
  for (std::int64_t d : {32, 96, 256}) expect_decline(gdn(cfg_of(d)).g, "L3 head dim:");
  Cfg c = cfg_of(128);
  c.v = 64;  // K != V
  expect_decline(gdn(c).g, "L3 head dim:");
}

TEST(LaSupport, DeclinesTypesOutsideTheSet) {
  expect_decline(gdn(cfg_of(64), {}, [](Built& x) {
                   x.q->set_data_type(DataType::FLOAT);
                   x.k->set_data_type(DataType::FLOAT);
                   x.v->set_data_type(DataType::FLOAT);
                 }).g,
                 "L2 q/k/v:");
  expect_decline(gdn(cfg_of(64), {}, [](Built& x) { x.k->set_data_type(DataType::HALF); }).g, "L2 q/k/v:");
  Cfg c = cfg_of(64);
  c.init = true;
  Attributes a;
  a.set("output_final_state", true);
  expect_decline(gdn(c, a, [](Built& x) { x.init->set_data_type(DataType::HALF); }).g, "L5 state:");
  expect_decline(gdn(cfg_of(64), {}, [](Built& x) { x.gate->set_data_type(DataType::DOUBLE); }).g, "L4 gates:");
}

TEST(LaSupport, DeclinesStridedOperands) {
  // q, k, v: the head dim must be contiguous, the other strides multiples of 8 elements.
  expect_decline(gdn(cfg_of(64), {}, [](Built& x) { x.q->set_stride({1, 64, 64 * 64}); }).g, "L6 layout:");
  expect_decline(gdn(cfg_of(64), {}, [](Built& x) { x.k->set_stride({68, 4, 1}); }).g, "L6 layout:");
  // q with its head and token axes swapped in memory is served (strides taken as declared).
  {
    auto b = gdn(cfg_of(64), {}, [](Built& x) { x.q->set_stride({64, 10 * 64, 1}); });
    auto p = analyze_gdn(b.g);
    ASSERT_TRUE(p.is_good()) << p.status().message();
    EXPECT_EQ(p->q_ts, 64);
    EXPECT_EQ(p->q_hs, 10 * 64);
  }
  // A state row padded by 16 bytes is served; an unaligned pad is not.
  Cfg c = cfg_of(64);
  c.init = true;
  const std::int64_t row = 8 * 64 * 64;
  Built ok = gdn(c, {}, [&](Built& x) { x.init->set_stride({row + 4, 64 * 64, 64, 1}); });
  auto p = analyze_gdn(ok.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_EQ(p->state_row_stride, row + 4);
  expect_decline(gdn(c, {}, [&](Built& x) { x.init->set_stride({row + 1, 64 * 64, 64, 1}); }).g, "L6 layout:");
}

TEST(LaSupport, DeclinesAVirtualOutput) {
  Built b = la_test::build(la_test::op_named("gdn"), cfg_of(64));
  ASSERT_TRUE(b.g.validate().is_good());
  expect_decline(b.g, "L6 layout:");
}

// FlashInfer 0.7.2 drives gdn through cudnn.pygraph (flashinfer/cudnn/linear_attention.py):
// uids q 1, k 2, v 3, g 10, beta 11, cu_seqlens 100, initial_state 200, O 1000,
// final_state 1001; every tensor declared with its torch shape and strides; g the
// linear-domain alpha (gate_domain "linear") in fp32, beta post-sigmoid fp32, the
// state V-major fp32 or bf16 in a separate output buffer, O at q's type.
struct FlashInferGdn {
  OpGraph g;
  TensorPtr q;
};
FlashInferGdn flashinfer_gdn(std::int64_t hqk, std::int64_t hv, DataType state, bool fused_qkv) {
  FlashInferGdn f;
  OpGraph& g = f.g;
  const std::int64_t T = 3000, N = 3, D = 128;
  auto decl = [&](std::vector<std::int64_t> dim, DataType dt, const char* name, std::int64_t uid) {
    auto t = g.tensor(std::move(dim), dt, name);
    t->set_uid(uid);
    return t;
  };
  f.q = decl({T, hqk, D}, DataType::BFLOAT16, "q", 1);
  auto k = decl({T, hqk, D}, DataType::BFLOAT16, "k", 2);
  auto v = decl({T, hv, D}, DataType::BFLOAT16, "v", 3);
  if (fused_qkv) {  // views of one [T, 2 HQK + HV, D] projection: only the innermost dim contiguous
    const std::int64_t row = (2 * hqk + hv) * D;
    f.q->set_stride({row, D, 1});
    k->set_stride({row, D, 1});
    v->set_stride({row, D, 1});
  }
  auto gate = decl({T, hv}, DataType::FLOAT, "g", 10);
  auto beta = decl({T, hv}, DataType::FLOAT, "beta", 11);
  auto cu = decl({N + 1}, DataType::INT64, "cu_seqlens", 100);
  auto init = decl({N, hv, D, D}, state, "initial_state", 200);
  Attributes a;
  a.set("scale", 1.0 / std::sqrt(128.0));
  a.set("output_final_state", true);
  a.set("use_qk_l2norm", true);
  a.set("use_beta_sigmoid", false);
  a.set("safe_gate", false);
  a.set("batch_invariant", false);
  a.set("gate_domain", std::string("linear"));
  a.set_name("gdn");
  auto out = g.gdn(DeltaRuleInputs{f.q, k, v, gate, beta, cu, init, nullptr, nullptr, nullptr}, a);
  out.o->set_uid(1000).set_output(true).set_dim({T, hv, D}).set_stride({hv * D, D, 1});
  out.o->set_data_type(DataType::BFLOAT16);
  out.final_state->set_uid(1001).set_output(true).set_dim({N, hv, D, D}).set_stride({hv * D * D, D * D, D, 1})
      .set_data_type(state);
  return f;
}

TEST(LaFlashInferShaped, AcceptsItsGdnGraphs) {
  for (auto [hqk, hv] : {std::pair<std::int64_t, std::int64_t>{16, 32}, {16, 64}, {2, 8}, {4, 4}})
    for (DataType st : {DataType::FLOAT, DataType::BFLOAT16}) {
      FlashInferGdn f = flashinfer_gdn(hqk, hv, st, false);
      ASSERT_TRUE(f.g.validate().is_good()) << f.g.validate().to_string();
      auto p = analyze_gdn(f.g);
      ASSERT_TRUE(p.is_good()) << hqk << "/" << hv << ": " << p.status().message();
      EXPECT_TRUE(p->linear_gate && p->l2norm);
      EXPECT_EQ(p->q, 1);
      EXPECT_EQ(p->o, 1000);
      EXPECT_EQ(p->final_state, 1001);
      EXPECT_EQ(p->state_type, st);
    }
}

// Views of a fused qkv projection (only the head dim contiguous) are served: the
// kernels take each of q, k, v's token and head strides.
TEST(LaFlashInferShaped, AcceptsFusedQkvViewsWithTheirStrides) {
  for (auto [hqk, hv] : {std::pair<std::int64_t, std::int64_t>{16, 32}, {2, 8}}) {
    FlashInferGdn f = flashinfer_gdn(hqk, hv, DataType::FLOAT, true);
    ASSERT_TRUE(f.g.validate().is_good()) << f.g.validate().to_string();
    auto p = analyze_gdn(f.g);
    ASSERT_TRUE(p.is_good()) << p.status().message();
    const std::int64_t row = (2 * hqk + hv) * p->d;  // one token's fused row
    EXPECT_EQ(p->q_ts, row);
    EXPECT_EQ(p->k_ts, row);
    EXPECT_EQ(p->v_ts, row);
    EXPECT_EQ(p->q_hs, p->d);
    EXPECT_EQ(p->k_hs, p->d);
    EXPECT_EQ(p->v_hs, p->d);
  }
  // Dense operands report their packed strides.
  FlashInferGdn dense = flashinfer_gdn(16, 32, DataType::FLOAT, false);
  auto p = analyze_gdn(dense.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_EQ(p->q_ts, 16 * p->d);
  EXPECT_EQ(p->v_ts, 32 * p->d);
  EXPECT_EQ(p->v_hs, p->d);
}

TEST(LaKernels, DecodeForShortSequencesPrefillOtherwiseAndUnderBatchInvariant) {
  Cfg c = cfg_of(128);
  c.cu = {0, 1, 2, 4};  // T = 4 <= 8 N
  auto p = analyze_gdn(gdn(c).g);
  ASSERT_TRUE(p.is_good());
  auto r = linear_attention::kernel_requests(*p);
  ASSERT_EQ(r.size(), 1u);
  // 3 sequences x 8 heads: at most kDecodeSmallPairs (sequence, head) pairs, the small CTA.
  EXPECT_TRUE(linear_attention::decode_small(*p));
  EXPECT_EQ(r[0].entry, "gdn_decode_small");
  EXPECT_EQ(r[0].kernel, "gdn_decode_small_d128_bf16");
  {  // Past kDecodeSmallPairs pairs: gdn_decode (32 rows a CTA of 4 warps).
    Cfg many = cfg_of(128);
    const std::int64_t n = linear_attention::kDecodeSmallPairs / many.ho() + 1;
    many.cu.resize(static_cast<std::size_t>(n) + 1);
    for (std::int64_t i = 0; i <= n; ++i) many.cu[static_cast<std::size_t>(i)] = i;
    auto pm = analyze_gdn(gdn(many).g);
    ASSERT_TRUE(pm.is_good());
    EXPECT_GT(pm->n_seq * pm->ho, linear_attention::kDecodeSmallPairs);
    EXPECT_FALSE(linear_attention::decode_small(*pm));
    EXPECT_EQ(linear_attention::kernel_requests(*pm)[0].entry, "gdn_decode");
    many.cu.resize(static_cast<std::size_t>(n));  // one sequence fewer: exactly the bound or below
    auto pe = analyze_gdn(gdn(many).g);
    ASSERT_TRUE(pe.is_good());
    EXPECT_LE(pe->n_seq * pe->ho, linear_attention::kDecodeSmallPairs);
    EXPECT_EQ(linear_attention::kernel_requests(*pe)[0].entry, "gdn_decode_small");
  }
  Attributes bi;
  bi.set("batch_invariant", true);
  auto pb = analyze_gdn(gdn(c, bi).g);
  ASSERT_TRUE(pb.is_good());
  EXPECT_EQ(linear_attention::kernel_requests(*pb)[0].entry, "gdn_prefill");
  c.cu = {0, 30, 30, 100};
  auto pp = analyze_gdn(gdn(c).g);
  ASSERT_TRUE(pp.is_good());
  EXPECT_EQ(linear_attention::kernel_requests(*pp)[0].entry, "gdn_prefill");
  // A pool with a final state: the pool copy comes second.
  c.init = c.pool = true;
  Attributes a;
  a.set("output_final_state", true);
  auto pq = analyze_gdn(gdn(c, a).g);
  ASSERT_TRUE(pq.is_good());
  auto rq = linear_attention::kernel_requests(*pq);
  ASSERT_EQ(rq.size(), 2u);
  EXPECT_EQ(rq[1].entry, "gdn_state_copy");
  // One kernel per layout class: lengths, heads and attributes do not enter the key.
  Cfg other = cfg_of(128);
  other.cu = {0, 500, 4000};
  other.hq = other.hk = other.hv = 4;
  Attributes l2;
  l2.set("use_qk_l2norm", true);
  auto po = analyze_gdn(gdn(other, l2).g);
  ASSERT_TRUE(po.is_good());
  EXPECT_EQ(linear_attention::kernel_requests(*po)[0].key("sm_90a"),
            linear_attention::kernel_requests(*pp)[0].key("sm_90a"));
}

// What `opgraph cache warm GRAPH.json` compiles for a plan: the kernels build_plan
// would load, named without a device; a device-less target is declined.
TEST(LaKernels, PlanKernelsNameWhatBuildPlanLoads) {
  auto engine = linear_attention::make_la_engine(EngineIdentity{20500, "linear_attention"});
  Cfg c = cfg_of(64);
  c.init = c.pool = true;
  Attributes a;
  a.set("output_final_state", true);
  Built b = gdn(c, a);
  b.g.freeze();
  auto sm90 = DeviceProperties::for_arch("sm_90a");
  ASSERT_TRUE(sm90.is_good());
  FactsCache facts(b.g, PlanTarget{*sm90});
  PlanContext ctx{&facts};
  std::vector<std::string> names;
  Status st = engine->plan_kernels(b.g, PlanConfig{engine->id(), {}, {}, -1}, ctx,
                                   [&](const runtime::KernelRequest& r) {
                                     names.push_back(r.kernel);
                                     return Status::ok();
                                   });
  ASSERT_TRUE(st.is_good()) << st.message();
  // T = 10 over N = 3 sequences: the decode kernel.
  EXPECT_EQ(names, (std::vector<std::string>{"gdn_decode_small_d64_bf16", "gdn_state_copy"}));
  FactsCache host(b.g, PlanTarget{});
  PlanContext hctx{&host};
  Status none = engine->plan_kernels(b.g, PlanConfig{engine->id(), {}, {}, -1}, hctx,
                                     [](const runtime::KernelRequest&) { return Status::ok(); });
  EXPECT_EQ(none.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  // check_support on a target without a device: the arch rule of the capability row.
  EXPECT_TRUE(engine->capabilities().arch_mismatch(PlanTarget{}).has_value());
  EXPECT_FALSE(engine->capabilities().arch_mismatch(PlanTarget{*sm90}).has_value());
  auto sm80 = DeviceProperties::for_arch("sm_80");
  ASSERT_TRUE(sm80.is_good());
  EXPECT_TRUE(engine->capabilities().arch_mismatch(PlanTarget{*sm80}).has_value());
}

// The kernel requests plan_kernels gives graph `c` under `knobs` for an sm_90a target
// (st: its status; nothing on a refusal).
std::vector<runtime::KernelRequest> planned_kernels(const Engine& engine, const Cfg& c, const Knobs& knobs, Status* st,
                                                    Attributes attrs = {}) {
  Built b = gdn(c, std::move(attrs));
  b.g.freeze();
  auto sm90 = DeviceProperties::for_arch("sm_90a");
  if (sm90.is_bad()) {
    *st = sm90.status();
    return {};
  }
  FactsCache facts(b.g, PlanTarget{*sm90});
  PlanContext ctx{&facts};
  std::vector<runtime::KernelRequest> out;
  *st = engine.plan_kernels(b.g, PlanConfig{engine.id(), knobs, {}, -1}, ctx, [&](const runtime::KernelRequest& r) {
    out.push_back(r);
    return Status::ok();
  });
  return out;
}

// The prefill mode knob: PIPELINE_ARCH 0 (one pass, the default), 1 (prep +
// scan with a workspace of ceil(T / 64) + N chunk slots per head) or 2 (fused,
// d = 128 only, no workspace); decode is the same under all.
TEST(LaKernels, TwoPassPrefillKernelsAndWorkspace) {
  auto engine = linear_attention::make_la_engine(EngineIdentity{20500, "linear_attention"});
  const auto& knobs = engine->capabilities().knobs;
  ASSERT_EQ(knobs.size(), 2u);
  EXPECT_EQ(knobs[0].type, KnobType::PIPELINE_ARCH);
  EXPECT_EQ(knobs[0].values, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(engine->default_knobs().at(KnobType::PIPELINE_ARCH), 0);
  EXPECT_EQ(knobs[1].type, KnobType::CHAIN_SPLIT);
  EXPECT_EQ(knobs[1].values, (std::vector<std::int64_t>{0, 8, 16, 32, 64, 128, 256}));
  EXPECT_EQ(engine->default_knobs().at(KnobType::CHAIN_SPLIT), 0);

  Cfg c = cfg_of(128);
  c.cu = {0, 30, 30, 100};  // T = 100, N = 3: prefill
  auto p = analyze_gdn(gdn(c).g);
  ASSERT_TRUE(p.is_good());
  auto one = linear_attention::kernel_requests(*p, linear_attention::kPrefillOnePass);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].entry, "gdn_prefill");
  EXPECT_EQ(linear_attention::workspace_bytes(*p, linear_attention::kPrefillOnePass), 0);
  auto two = linear_attention::kernel_requests(*p, linear_attention::kPrefillTwoPass);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].kernel, "gdn_prefill_scan_d128_bf16");
  EXPECT_EQ(two[1].kernel, "gdn_prefill_prep_d128_bf16");
  // ceil(100 / 64) + 3 = 5 slots x 8 heads x (4 x 64 x 128 + 64 x 64 bf16, and one fp32).
  EXPECT_EQ(linear_attention::workspace_bytes(*p, linear_attention::kPrefillTwoPass),
            5 * 8 * (2 * (4 * 64 * 128 + 64 * 64) + 4));
  auto fz = linear_attention::kernel_requests(*p, linear_attention::kPrefillFused);
  ASSERT_EQ(fz.size(), 1u);
  EXPECT_EQ(fz[0].kernel, "gdn_prefill_fused_d128_bf16");
  EXPECT_EQ(fz[0].source, "linear_attention/kernels/gdn_fused.cu");
  EXPECT_EQ(linear_attention::workspace_bytes(*p, linear_attention::kPrefillFused), 0);
  // A pool with a final state: the copy comes last.
  c.init = c.pool = true;
  Attributes a;
  a.set("output_final_state", true);
  auto pq = analyze_gdn(gdn(c, a).g);
  ASSERT_TRUE(pq.is_good());
  auto rq = linear_attention::kernel_requests(*pq, linear_attention::kPrefillTwoPass);
  ASSERT_EQ(rq.size(), 3u);
  EXPECT_EQ(rq[2].entry, "gdn_state_copy");
  // Short sequences: decode under both modes, no workspace.
  Cfg d = cfg_of(64);
  d.cu = {0, 1, 2, 4};
  auto pd = analyze_gdn(gdn(d).g);
  ASSERT_TRUE(pd.is_good());
  EXPECT_EQ(linear_attention::kernel_requests(*pd, linear_attention::kPrefillTwoPass)[0].entry, "gdn_decode_small");
  EXPECT_EQ(linear_attention::workspace_bytes(*pd, linear_attention::kPrefillTwoPass), 0);
  // Every mode and split runs a decode-sized graph on the decode kernel alone (d = 128 too, where
  // the fused modes plan): test_la_gpu's decode cases therefore run two modes, not all seven.
  Cfg d128 = cfg_of(128);
  d128.cu = {0, 1, 2, 4};
  auto pd128 = analyze_gdn(gdn(d128).g);
  ASSERT_TRUE(pd128.is_good());
  for (const linear_attention::GdnProblem* q : {&*pd, &*pd128})
    for (int mode : {linear_attention::kPrefillOnePass, linear_attention::kPrefillTwoPass,
                     linear_attention::kPrefillFused, linear_attention::kPrefillFusedWs,
                     linear_attention::kPrefillFusedWsH})
      for (long long split : {0LL, 8LL}) {
        if (mode == linear_attention::kPrefillOnePass && split > 0) continue;
        auto rd = linear_attention::kernel_requests(*q, mode, split);
        ASSERT_EQ(rd.size(), 1u) << "mode " << mode << " split " << split;
        EXPECT_EQ(rd[0].entry, "gdn_decode_small") << "mode " << mode << " split " << split;
        EXPECT_EQ(linear_attention::workspace_bytes(*q, mode, split), 0) << "mode " << mode << " split " << split;
      }

  // plan_kernels names what the knob picks; a value outside the domain is refused by name.
  Cfg e = cfg_of(64);
  e.cu = {0, 30, 30, 100};
  auto names_of = [&](std::int64_t mode, Status* st) {
    std::vector<std::string> names;
    for (const auto& r : planned_kernels(*engine, e, {{KnobType::PIPELINE_ARCH, mode}}, st)) names.push_back(r.kernel);
    return names;
  };
  Status st;
  EXPECT_EQ(names_of(1, &st), (std::vector<std::string>{"gdn_prefill_scan_d64_bf16", "gdn_prefill_prep_d64_bf16"}));
  EXPECT_TRUE(st.is_good()) << st.message();
  EXPECT_EQ(names_of(0, &st), (std::vector<std::string>{"gdn_prefill_d64_bf16"}));
  // The fused prefill serves d = 128 only: this d = 64 graph is refused by its rule.
  EXPECT_TRUE(names_of(2, &st).empty());
  EXPECT_EQ(st.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(st.message().find("rule fused_head_dim"), std::string::npos) << st.message();
  // 3 and 4, the warp-specialised fused prefill, serve d = 128 only too; 5 is gdn_bwd's alone; 6 is no mode.
  for (std::int64_t m : {3, 4}) {
    EXPECT_TRUE(names_of(m, &st).empty()) << m;
    EXPECT_EQ(st.code(), ErrorCode::GRAPH_NOT_SUPPORTED) << m;
    EXPECT_NE(st.message().find("rule fused_head_dim"), std::string::npos) << st.message();
  }
  EXPECT_TRUE(names_of(5, &st).empty());
  EXPECT_EQ(st.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(st.message().find("rule L11 backward only"), std::string::npos) << st.message();
  names_of(6, &st);
  EXPECT_EQ(st.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(st.message().find("PIPELINE_ARCH"), std::string::npos) << st.message();
}

// PIPELINE_ARCH 3: the fused entries' warp-specialised build (define GDN_FUSED_WS=1, kernel names
// ending _ws, a cache key of their own), split or not; the two-pass fix-up between the spans is
// the same kernel as under 2; no workspace unsplit.
TEST(LaKernels, WarpSpecialisedFusedRequests) {
  auto engine = linear_attention::make_la_engine(EngineIdentity{20500, "linear_attention"});
  Cfg c = cfg_of(128);
  c.cu = {0, 700, 700, 1000};
  auto requests_of = [&](std::int64_t split, Status* st) {
    return planned_kernels(*engine, c, {{KnobType::PIPELINE_ARCH, 3}, {KnobType::CHAIN_SPLIT, split}}, st);
  };
  auto has_ws_define = [](const runtime::KernelRequest& r) {
    return std::any_of(r.defines.begin(), r.defines.end(),
                       [](const runtime::KernelDefine& d) { return d.name == "GDN_FUSED_WS" && d.value == "1"; });
  };
  Status st;
  auto whole = requests_of(0, &st);
  ASSERT_TRUE(st.is_good()) << st.message();
  auto split = requests_of(8, &st);
  ASSERT_TRUE(st.is_good()) << st.message();
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].kernel, "gdn_prefill_fused_d128_bf16_ws");
  EXPECT_EQ(whole[0].entry, "gdn_prefill_fused");
  EXPECT_TRUE(has_ws_define(whole[0]));
  ASSERT_EQ(split.size(), 3u);
  EXPECT_EQ(split[0].kernel, "gdn_span_scan_fused_d128_bf16_ws");
  EXPECT_EQ(split[1].kernel, "gdn_span_summary_fused_d128_bf16_ws");
  EXPECT_TRUE(has_ws_define(split[0]) && has_ws_define(split[1]));
  EXPECT_EQ(split[2].kernel, "gdn_span_fixup_d128_bf16");
  EXPECT_FALSE(has_ws_define(split[2]));
  auto p = analyze_gdn(gdn(c).g);
  ASSERT_TRUE(p.is_good());
  EXPECT_EQ(linear_attention::workspace_bytes(*p, linear_attention::kPrefillFusedWs), 0);
  EXPECT_EQ(linear_attention::workspace_bytes(*p, linear_attention::kPrefillFusedWs, 8),
            linear_attention::workspace_bytes(*p, linear_attention::kPrefillFused, 8));
  // The plain fused prefill never carries the define.
  for (const auto& r : linear_attention::kernel_requests(*p, linear_attention::kPrefillFused, 8))
    EXPECT_FALSE(has_ws_define(r)) << r.kernel;
}

// PIPELINE_ARCH 4: PIPELINE_ARCH 3's entries built with GDN_WS3_F16INV=1 too (kernel names ending _h), split,
// whole and writing checkpoints, each among the declared specialisations (the CI compile set); without
// use_beta_sigmoid its guarded form (unsplit: the fp16 build checking beta, then the fp32 fallback, "_g", and a
// workspace of one word a (sequence, head)); rule f16_inverse_domain refuses it without use_qk_l2norm, and the
// guarded form split or with checkpoints, naming why.
TEST(LaKernels, F16InverseBuildAndItsDomain) {
  auto engine = linear_attention::make_la_engine(EngineIdentity{20500, "linear_attention"});
  Cfg c = cfg_of(128);
  c.cu = {0, 700, 700, 1000};
  auto attrs = [](bool l2, bool sig) {
    Attributes a;
    if (l2) a.set("use_qk_l2norm", true);
    if (sig) a.set("use_beta_sigmoid", true);
    return a;
  };
  auto has = [](const runtime::KernelRequest& r, const char* name) {
    return std::any_of(r.defines.begin(), r.defines.end(),
                       [&](const runtime::KernelDefine& d) { return d.name == name && d.value == "1"; });
  };
  const auto declared = linear_attention::declared_specialisations();
  auto is_declared = [&](const runtime::KernelRequest& r) {
    return std::any_of(declared.begin(), declared.end(), [&](const runtime::KernelRequest& d) {
      return d.kernel == r.kernel && d.entry == r.entry && d.source == r.source && d.defines.size() == r.defines.size();
    });
  };
  Status st;
  auto whole = planned_kernels(*engine, c, {{KnobType::PIPELINE_ARCH, 4}}, &st, attrs(true, true));
  ASSERT_TRUE(st.is_good()) << st.message();
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].kernel, "gdn_prefill_fused_d128_bf16_ws_h");
  EXPECT_TRUE(has(whole[0], "GDN_FUSED_WS") && has(whole[0], "GDN_WS3_F16INV"));
  EXPECT_TRUE(is_declared(whole[0]));
  auto split = planned_kernels(*engine, c, {{KnobType::PIPELINE_ARCH, 4}, {KnobType::CHAIN_SPLIT, 8}}, &st,
                               attrs(true, true));
  ASSERT_TRUE(st.is_good()) << st.message();
  ASSERT_EQ(split.size(), 3u);
  EXPECT_EQ(split[0].kernel, "gdn_span_scan_fused_d128_bf16_ws_h");
  EXPECT_EQ(split[1].kernel, "gdn_span_summary_fused_d128_bf16_ws_h");
  EXPECT_EQ(split[2].kernel, "gdn_span_fixup_d128_bf16");
  EXPECT_TRUE(has(split[0], "GDN_WS3_F16INV") && has(split[1], "GDN_WS3_F16INV"));
  EXPECT_FALSE(has(split[2], "GDN_WS3_F16INV"));
  for (const auto& r : split) EXPECT_TRUE(is_declared(r)) << r.kernel;
  // PIPELINE_ARCH 3 never carries the define.
  for (const auto& r : planned_kernels(*engine, c, {{KnobType::PIPELINE_ARCH, 3}, {KnobType::CHAIN_SPLIT, 8}}, &st,
                                       attrs(true, true)))
    EXPECT_FALSE(has(r, "GDN_WS3_F16INV")) << r.kernel;
  // Checkpoints: the checkpoint build of the fp16-inverse entry.
  Attributes ck = attrs(true, true);
  ck.set("checkpoint_every_n_tokens", std::int64_t{64});
  auto pc = analyze_gdn(gdn(c, ck).g);
  ASSERT_TRUE(pc.is_good()) << pc.status().message();
  ASSERT_GE(pc->checkpoints, 0);
  auto rc = linear_attention::kernel_requests(*pc, linear_attention::kPrefillFusedWsH);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].kernel, "gdn_prefill_fused_d128_bf16_ws_ckpt_h");
  EXPECT_TRUE(is_declared(rc[0]));
  // Without use_qk_l2norm: refused by the rule's name, naming it.
  for (bool sig : {false, true}) {
    auto ps = analyze_gdn(gdn(c, attrs(false, sig)).g);
    ASSERT_TRUE(ps.is_good());
    EXPECT_FALSE(linear_attention::f16_inverse_domain(*ps));
    EXPECT_FALSE(linear_attention::f16_inverse_guarded(*ps));
    EXPECT_TRUE(planned_kernels(*engine, c, {{KnobType::PIPELINE_ARCH, 4}}, &st, attrs(false, sig)).empty());
    EXPECT_EQ(st.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
    EXPECT_NE(st.message().find("rule f16_inverse_domain"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("declares no use_qk_l2norm"), std::string::npos) << st.message();
  }
  // use_qk_l2norm without use_beta_sigmoid: the guarded form, unsplit.
  auto pg = analyze_gdn(gdn(c, attrs(true, false)).g);
  ASSERT_TRUE(pg.is_good());
  EXPECT_FALSE(linear_attention::f16_inverse_domain(*pg));
  EXPECT_TRUE(linear_attention::f16_inverse_guarded(*pg));
  auto guarded = planned_kernels(*engine, c, {{KnobType::PIPELINE_ARCH, 4}}, &st, attrs(true, false));
  ASSERT_TRUE(st.is_good()) << st.message();
  ASSERT_EQ(guarded.size(), 2u);
  EXPECT_EQ(guarded[0].kernel, "gdn_prefill_fused_d128_bf16_ws_h_g");
  EXPECT_TRUE(has(guarded[0], "GDN_WS3_F16INV") && has(guarded[0], "GDN_BETA_GUARD"));
  EXPECT_EQ(guarded[1].kernel, "gdn_prefill_fused_d128_bf16_ws_g");
  EXPECT_FALSE(linear_attention::guard_fallback(guarded[0]));  // what build_plan launches after the fp16 build
  EXPECT_TRUE(linear_attention::guard_fallback(guarded[1]));
  for (const auto& r : planned_kernels(*engine, c, {{KnobType::PIPELINE_ARCH, 3}}, &st, attrs(true, false)))
    EXPECT_FALSE(linear_attention::guard_fallback(r)) << r.kernel;  // no other plan has one
  EXPECT_TRUE(!has(guarded[1], "GDN_WS3_F16INV") && has(guarded[1], "GDN_BETA_GUARD") &&
              has(guarded[1], "GDN_FUSED_WS"));
  for (const auto& r : guarded) EXPECT_TRUE(is_declared(r)) << r.kernel;
  // A word a (sequence, head): 3 x 8, rounded up to 256 bytes; the proven form needs none.
  EXPECT_EQ(linear_attention::workspace_bytes(*pg, linear_attention::kPrefillFusedWsH), 256);
  auto pin0 = analyze_gdn(gdn(c, attrs(true, true)).g);
  ASSERT_TRUE(pin0.is_good());
  EXPECT_EQ(linear_attention::workspace_bytes(*pin0, linear_attention::kPrefillFusedWsH), 0);
  // ... split or with checkpoints: refused, naming why.
  EXPECT_TRUE(planned_kernels(*engine, c, {{KnobType::PIPELINE_ARCH, 4}, {KnobType::CHAIN_SPLIT, 8}}, &st,
                              attrs(true, false))
                  .empty());
  EXPECT_EQ(st.code(), ErrorCode::GRAPH_NOT_SUPPORTED);
  EXPECT_NE(st.message().find("is planned with CHAIN_SPLIT 8"), std::string::npos) << st.message();
  Attributes gck = attrs(true, false);
  gck.set("checkpoint_every_n_tokens", std::int64_t{64});
  auto pgc = analyze_gdn(gdn(c, gck).g);
  ASSERT_TRUE(pgc.is_good());
  EXPECT_FALSE(linear_attention::f16_inverse_guarded(*pgc));
  EXPECT_TRUE(planned_kernels(*engine, c, {{KnobType::PIPELINE_ARCH, 4}}, &st, gck).empty());
  EXPECT_NE(st.message().find("binds state_checkpoints"), std::string::npos) << st.message();
  auto pin = analyze_gdn(gdn(c, attrs(true, true)).g);
  ASSERT_TRUE(pin.is_good());
  EXPECT_TRUE(linear_attention::f16_inverse_domain(*pin));
  // allow_neg_eigval (beta = 2 sigmoid) stays inside [0, 2].
  Attributes neg = attrs(true, true);
  neg.set("allow_neg_eigval", true);
  auto pn = analyze_gdn(gdn(c, neg).g);
  ASSERT_TRUE(pn.is_good());
  EXPECT_TRUE(linear_attention::f16_inverse_domain(*pn));
}

// Chain splitting (knob CHAIN_SPLIT, two-pass only): the kernels and workspace
// of a split, its refusals, and the rule the heuristics apply.
TEST(LaKernels, ChainSplitKernelsWorkspaceAndRule) {
  auto engine = linear_attention::make_la_engine(EngineIdentity{20500, "linear_attention"});
  Cfg c = cfg_of(128);
  c.cu = {0, 700, 700, 1000};  // T = 1000, N = 3: prefill
  auto p = analyze_gdn(gdn(c).g);
  ASSERT_TRUE(p.is_good());
  auto r = linear_attention::kernel_requests(*p, linear_attention::kPrefillTwoPass, 8);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].entry, "gdn_span_scan");
  EXPECT_EQ(r[1].entry, "gdn_prefill_prep");
  EXPECT_EQ(r[2].entry, "gdn_span_summary");
  EXPECT_EQ(r[3].entry, "gdn_span_fixup");
  // The chunk blocks (ceil(1000 / 64) + 3 = 19 slots x 8 heads), rounded up to 256 bytes, then
  // N x spans x heads x 3 fp32 [128][128] blocks; spans = ceil(16 chunks / 8) = 2.
  const std::int64_t blocks = 19 * 8 * (2 * (4 * 64 * 128 + 64 * 64) + 4);
  EXPECT_EQ(linear_attention::workspace_bytes(*p, linear_attention::kPrefillTwoPass, 8),
            (blocks + 255) / 256 * 256 + 3 * 2 * 8 * 3 * 128 * 128 * 4);
  EXPECT_EQ(linear_attention::workspace_bytes(*p, linear_attention::kPrefillTwoPass, 0), blocks);
  // The fused prefill's split: its span summary and span scan, the two-pass fix-up, and
  // the span blocks as workspace, then the span scan's map (GDN_SPLIT_ADAPT): a row of 8 bytes for each of
  // (ceil(1000 / 64) + 3) / 8 = 2 full spans at most and N = 3 last spans.
  auto fzr = linear_attention::kernel_requests(*p, linear_attention::kPrefillFused, 8);
  ASSERT_EQ(fzr.size(), 3u);
  EXPECT_EQ(fzr[0].entry, "gdn_span_scan_fused");
  EXPECT_EQ(fzr[1].entry, "gdn_span_summary_fused");
  EXPECT_EQ(fzr[2].entry, "gdn_span_fixup");
  EXPECT_EQ(linear_attention::workspace_bytes(*p, linear_attention::kPrefillFused, 8),
            3 * 2 * 8 * 3 * 128 * 128 * 4 + (2 + 3) * 8);
  EXPECT_EQ(linear_attention::workspace_bytes(*p, linear_attention::kPrefillFused, 0), 0);
  // The fix-up walk's three stages of M and H (FixupSmem, kernels/gdn_common.cuh) fit the H200's 227 KiB a block.
  for (long long d : {64, 128}) {
    EXPECT_LE(opgraph_gdn::gdn_fixup_smem_bytes(d), 227 * 1024) << d;
  }
  EXPECT_EQ(opgraph_gdn::gdn_fixup_smem_bytes(128), 226304);

  // plan_kernels: the split's kernels; CHAIN_SPLIT without the two-pass mode, or outside
  // its domain, is refused by name.
  Built b = gdn(c);
  b.g.freeze();
  auto sm90 = DeviceProperties::for_arch("sm_90a");
  ASSERT_TRUE(sm90.is_good());
  FactsCache facts(b.g, PlanTarget{*sm90});
  PlanContext ctx{&facts};
  auto plan_with = [&](std::int64_t mode, std::int64_t split, Status* st) {
    std::vector<std::string> names;
    *st = engine->plan_kernels(
        b.g, PlanConfig{engine->id(), {{KnobType::PIPELINE_ARCH, mode}, {KnobType::CHAIN_SPLIT, split}}, {}, -1}, ctx,
        [&](const runtime::KernelRequest& k) {
          names.push_back(k.entry);
          return Status::ok();
        });
    return names;
  };
  Status st;
  EXPECT_EQ(plan_with(1, 16, &st),
            (std::vector<std::string>{"gdn_span_scan", "gdn_prefill_prep", "gdn_span_summary", "gdn_span_fixup"}));
  EXPECT_TRUE(st.is_good()) << st.message();
  plan_with(0, 16, &st);
  EXPECT_EQ(st.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(st.message().find("needs PIPELINE_ARCH 1, 2, 3 or 4"), std::string::npos) << st.message();
  plan_with(1, 12, &st);
  EXPECT_EQ(st.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(st.message().find("CHAIN_SPLIT"), std::string::npos) << st.message();

  // The rules on an H200 (132 multiprocessors), on the issue's cells: `which` 0 the two-pass scan's
  // (chain_split_rule), 1 the fused prefill's (fused_split_rule).
  auto rule_of = [](int which, std::int64_t d, std::int64_t hqk, std::int64_t hv, std::int64_t n, std::int64_t t,
                    bool invariant) {
    Cfg k = cfg_of(d);
    k.hq = k.hk = hqk;
    k.hv = hv;
    k.cu.assign(1, 0);
    for (std::int64_t i = 0; i < n; ++i) k.cu.push_back(k.cu.back() + t);
    Attributes a;
    if (invariant) a.set("batch_invariant", true);
    auto q = analyze_gdn(gdn(k, a).g);
    EXPECT_TRUE(q.is_good()) << q.status().message();
    if (q.is_bad()) return -1LL;
    return which == 0 ? linear_attention::chain_split_rule(*q, 132) : linear_attention::fused_split_rule(*q, 132);
  };
  auto rule = [&](std::int64_t hqk, std::int64_t hv, std::int64_t n, std::int64_t t, bool invariant = false) {
    return rule_of(0, 128, hqk, hv, n, t, invariant);
  };
  // 2/8 heads, one 32k sequence: 16 CTAs on 132 SMs; every span length from 8 to 64 models
  // 192 chunk-steps against 512, the longest of them is taken.
  EXPECT_EQ(rule(2, 8, 1, 32768), 64);
  // 16/32 and 16/64 heads fill the device already (64 and 128 CTAs): no split.
  EXPECT_EQ(rule(16, 32, 1, 32768), 0);
  EXPECT_EQ(rule(16, 64, 1, 32768), 0);
  EXPECT_EQ(rule(16, 64, 4, 8192), 0);
  // batch_invariant: the split depends on the batch, so none.
  EXPECT_EQ(rule(2, 8, 1, 32768, true), 0);
  // Short sequences: nothing to split.
  EXPECT_EQ(rule(2, 8, 1, 300), 0);

  // The fused prefill's rule (one CTA a (sequence x span, head) for the whole state): the span lengths
  // the H200 measured fastest for the warp-specialised plan on one 32k sequence (la_engine.h).
  auto frule = [&](std::int64_t d, std::int64_t hqk, std::int64_t hv, std::int64_t n, std::int64_t t,
                   bool invariant = false) { return rule_of(1, d, hqk, hv, n, t, invariant); };
  EXPECT_EQ(frule(128, 2, 8, 1, 32768), 32);    // 8 CTAs whole
  EXPECT_EQ(frule(128, 16, 32, 1, 32768), 128);  // 32
  EXPECT_EQ(frule(128, 16, 64, 1, 32768), 256);  // 64: two spans
  EXPECT_EQ(frule(128, 16, 64, 4, 8192), 0);     // 256 CTAs fill two waves already
  EXPECT_EQ(frule(128, 16, 32, 4, 8192), 0);
  EXPECT_EQ(frule(128, 16, 64, 1, 2048), 0);     // 32 chunks: a split saves under 5 %
  EXPECT_EQ(frule(128, 2, 8, 1, 32768, true), 0);  // batch_invariant
  EXPECT_EQ(frule(64, 2, 8, 1, 32768), 0);       // no fused prefill at d = 64

  // The fused prefill goes first from a fifth of the multiprocessors' worth of (sequence, head) CTAs
  // (27 of 132): the issue's 4 x 8192 cells (256 and 128 CTAs) and one-sequence 16-head cells (64 and 32
  // CTAs), not 2/8 heads on one sequence (8 CTAs), nor d = 64.
  auto fz = [](std::int64_t d, std::int64_t hqk, std::int64_t hv, std::int64_t n, std::int64_t t) {
    Cfg k = cfg_of(d);
    k.hq = k.hk = hqk;
    k.hv = hv;
    k.cu.assign(1, 0);
    for (std::int64_t i = 0; i < n; ++i) k.cu.push_back(k.cu.back() + t);
    auto q = analyze_gdn(gdn(k).g);
    EXPECT_TRUE(q.is_good()) << q.status().message();
    return q.is_good() && linear_attention::fused_first(*q, 132);
  };
  EXPECT_TRUE(fz(128, 16, 64, 4, 8192));
  EXPECT_TRUE(fz(128, 16, 32, 4, 8192));
  EXPECT_TRUE(fz(128, 16, 64, 1, 32768));
  EXPECT_TRUE(fz(128, 16, 32, 1, 32768));
  EXPECT_FALSE(fz(128, 2, 8, 1, 32768));
  EXPECT_FALSE(fz(64, 16, 64, 4, 8192));
  EXPECT_TRUE(fz(128, 2, 8, 4, 1000));   // 32 CTAs: 5 x 32 >= 132
  EXPECT_FALSE(fz(128, 2, 8, 3, 1000));  // 24 CTAs
}

// Execute-time shape overrides (docs/dynamic_shapes.md): a plan runs its built
// kernels at the call's token count T, sequence count N and state rows; heads and
// the head dim may not change; a refusal names the tensor, its port and the rule.
TEST(LaOverrides, TokenAndSequenceCountsChangeHeadsDoNot) {
  Cfg c = cfg_of(64);  // q, k: 2 heads, v: 8, D = 64
  c.cu = {0, 30, 30, 100};
  c.init = true;
  Attributes a;
  a.set("output_final_state", true);
  Built b = gdn(c, a);
  auto p = analyze_gdn(b.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  auto layout = DeclaredLayout::compute(b.g);
  ASSERT_TRUE(layout.is_good()) << layout.status().message();
  std::vector<unsigned char> mem(64);  // stand-in addresses: nothing is read
  auto pack_for = [&](std::int64_t t, std::int64_t n, std::int64_t rows, std::int64_t q_heads = 2) {
    VariantPack v;
    for (std::int64_t uid : {p->q, p->k, p->v, p->g, p->beta, p->cu_seqlens, p->initial_state, p->o, p->final_state})
      v.set(uid, mem.data());
    v.override_shape(p->q, {t, q_heads, 64});
    v.override_shape(p->k, {t, 2, 64});
    v.override_shape(p->v, {t, 8, 64});
    v.override_shape(p->g, {t, 8});
    v.override_shape(p->beta, {t, 8});
    v.override_shape(p->o, {t, 8, 64});
    v.override_shape(p->cu_seqlens, {n + 1});
    v.override_shape(p->initial_state, {rows, 8, 64, 64});
    v.override_shape(p->final_state, {rows, 8, 64, 64});
    return v;
  };
  auto run = [&](const VariantPack& v) -> Result<linear_attention::GdnProblem> {
    VariantPack n;
    OPGRAPH_CHECK(VariantPack::normalize(v, *layout, n));
    EXPECT_TRUE(n.has_overrides());
    return linear_attention::overridden_problem(*p, n, *layout);
  };
  auto q = run(pack_for(3000, 5, 5));
  ASSERT_TRUE(q.is_good()) << q.status().message();
  EXPECT_EQ(q->t, 3000);
  EXPECT_EQ(q->n_seq, 5);
  EXPECT_EQ(q->state_rows, 5);
  EXPECT_EQ(q->q_ts, 2 * 64);
  EXPECT_EQ(q->v_ts, 8 * 64);
  EXPECT_EQ(q->hq, p->hq);
  // The two-pass workspace follows the call's extents: ceil(3000 / 64) + 5 = 52 slots x 8 heads.
  EXPECT_EQ(linear_attention::workspace_bytes(*q, linear_attention::kPrefillTwoPass),
            52 * 8 * (2 * (4 * 64 * 64 + 64 * 64) + 4));
  // Fewer tokens and sequences than built (extents stay above 1: the layout class).
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
  // Heads select the kernels.
  refused(pack_for(300, 3, 3, 4), {"'q'", "input 'q'", "rule built_extents", "dim 1"});
  // One tensor of the token axis left at the built T.
  {
    VariantPack v = pack_for(300, 3, 3);
    v.override_shape(p->beta, {100, 8});
    refused(v, {"'beta'", "rule token_axis", "100 tokens here, 300"});
  }
  // Without state_indices: one state row a sequence.
  refused(pack_for(300, 4, 3), {"initial_state", "rule state_rows", "3 state rows for 4 sequences"});
}

// gdn_summary: served by the fused kernel's summary form at d = 128 (no workspace), by the two-pass prep and the
// scan's summary form (gdn_summary_scan, q read as k) at d = 64, one plan either way (their numerics:
// GdnGpu.SummaryMatchesTheReference on the device).
TEST(LaSummary, FusedKernelOrTwoPassScan) {
  auto summary = [](std::int64_t d) {
    Cfg c = cfg_of(d);
    c.cu = {0, 30, 30, 100};
    Built b = la_test::build(la_test::op_named("gdn_summary"), c);
    mark_outputs(b);
    EXPECT_TRUE(b.g.validate().is_good()) << b.g.validate().to_string();
    return b;
  };
  Built b = summary(128);
  auto p = analyze_gdn(b.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_TRUE(p->summary);
  EXPECT_EQ(p->q, -1);
  EXPECT_GE(p->o, 0);            // H
  EXPECT_GE(p->final_state, 0);  // M
  EXPECT_EQ(p->n_seq, 3);
  EXPECT_EQ(p->ho, 8);
  EXPECT_FALSE(linear_attention::use_decode(*p));
  for (int mode : {0, 1, 2}) {
    auto r = linear_attention::kernel_requests(*p, mode, mode == 1 ? 8 : 0);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].kernel, "gdn_summary_fused_d128_bf16");
    EXPECT_EQ(linear_attention::workspace_bytes(*p, mode, mode == 1 ? 8 : 0), 0);
  }
  Built b64 = summary(64);
  auto p64 = analyze_gdn(b64.g);
  ASSERT_TRUE(p64.is_good()) << p64.status().message();
  EXPECT_TRUE(p64->summary);
  EXPECT_EQ(p64->d, 64);
  EXPECT_EQ(p64->q_ts, p64->k_ts);  // the prep reads k as q
  EXPECT_EQ(p64->q_hs, p64->k_hs);
  for (int mode : {0, 1, 2}) {
    auto r = linear_attention::kernel_requests(*p64, mode, mode == 1 ? 8 : 0);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].kernel, "gdn_summary_scan_d64_bf16");
    EXPECT_EQ(r[1].kernel, "gdn_prefill_prep_d64_bf16");
    // The two-pass workspace: ceil(100 / 64) + 3 = 5 chunk slots x 8 heads, a block and exp(gamma_C) each.
    EXPECT_EQ(linear_attention::workspace_bytes(*p64, mode, mode == 1 ? 8 : 0),
              5 * 8 * (2 * (4 * 64 * 64 + 64 * 64) + 4));
  }
  expect_decline(summary(32).g, "S3 head dim");
  // One plan of ours, then the reference.
  Built bp = summary(128);
  Graph gp(std::move(bp.g));
  auto target = DeviceProperties::for_arch("sm_90a");
  ASSERT_TRUE(target.is_good());
  gp.set_device_properties(*target);
  ASSERT_TRUE(gp.create_execution_plans({HeurMode::A}).is_good());
  auto n0 = gp.get_plan_name_at_index(0);
  ASSERT_TRUE(n0.is_good());
  EXPECT_EQ(*n0, "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=0]");
  auto n1 = gp.get_plan_name_at_index(1);
  if (n1.is_good()) {
    EXPECT_EQ(n1->rfind("linear_attention", 0), std::string::npos) << *n1;
  }
}

}  // namespace
