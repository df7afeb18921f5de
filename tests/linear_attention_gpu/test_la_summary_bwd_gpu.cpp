// tests/linear_attention_gpu/test_la_summary_bwd_gpu.cpp — the linear_attention engine's
// gdn_summary_bwd on the device against the float64 reference (--gtest_filter='GdnBwdGpuSummary.*').
//
// Per (sequence, head): G, the gradient of the state at the sequence's start from a zero gradient
// at its end, driven by dO, and (output_transition) the transition M; both poisoned first (all bits
// set: NaN in every type), as the workspace; fresh random inputs drawn as the backward's GPU tests
// draw them (fla's: q, k unit-norm rows or raw under use_qk_l2norm, dO ~ N(0, 1), the gates and
// betas of la_gpu_util.h's Drawer). RMS ratio ||got - ref|| / ||ref|| within 8e-3 (fla's state
// tolerance for 16-bit inputs; the backward's d_initial_state) for each.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engines/linear_attention/gdn_bwd.h"
#include "engines/reference/executor.h"
#include "gemm_gpu/gemm_gpu_util.h"
#include "linear_attention_gpu/la_gpu_util.h"
#include "opgraph/op_graph.h"
#include "runtime/device_buffer.h"

namespace {

using namespace opgraph;
using namespace opgraph::la_testing;
using gemm_testing::build_direct;
using gemm_testing::gpu;

struct Case : CaseBase {
  bool transition = true;
  DataType out_t = DataType::FLOAT;  // G's and the transition's type
};

struct Problem : Inputs {  // v stays null: gdn_summary_bwd has none
  OpGraph g;
  TensorPtr d_o;
  StateSummaryGrad out;
};

std::unique_ptr<Problem> build(const Case& c) {
  auto p = std::make_unique<Problem>();
  OpGraph& g = p->g;
  const std::int64_t T = c.t(), N = c.n(), HO = c.ho(), D = c.d;
  p->q = g.tensor({T, c.hq, D}, c.io, "q");
  p->k = g.tensor({T, c.hk, D}, c.io, "k");
  p->gate = g.tensor({T, HO}, c.gate_t, "g");
  p->beta = g.tensor({T, HO}, c.beta_t, "beta");
  p->cu = g.tensor({N + 1}, c.cu64 ? DataType::INT64 : DataType::INT32, "cu_seqlens");
  p->d_o = g.tensor({T, HO, D}, c.io, "dO");
  if (c.a_log) p->a_log = g.tensor({HO}, DataType::FLOAT, "a_log");
  if (c.dt) p->dt = g.tensor({HO}, DataType::FLOAT, "dt_bias");
  Attributes a = gate_attributes(c);
  a.set("output_transition", c.transition);
  a.set_name("sum_bwd0");
  p->out = g.gdn_summary_bwd(DeltaRuleInputs{p->q, p->k, nullptr, p->gate, p->beta, p->cu, nullptr, p->a_log, p->dt,
                                             nullptr},
                             p->d_o, a);
  p->out.g->set_output(true).set_data_type(c.out_t);
  if (p->out.transition) p->out.transition->set_output(true).set_data_type(c.out_t);
  return p;
}

class GdnBwdGpuSummary : public LaGpuTest {};

void check(const Case& c, std::mt19937& rng) {
  const auto& api = *gpu().api;
  auto p = build(c);
  const Status v = p->g.validate();
  ASSERT_TRUE(v.is_good()) << c.name << ": " << v.to_string();
  ASSERT_EQ(c.transition, p->out.transition != nullptr) << c.name;
  // Inputs, keyed by uid (assigned by validate()).
  expect_distinct_uids({p->q, p->k, p->gate, p->beta, p->cu, p->d_o, p->a_log, p->dt});
  Drawer dr{rng};
  const std::int64_t T = c.t(), N = c.n(), HO = c.ho(), D = c.d;
  HostInputs host;
  host[p->q->get_uid()] = encode(dr.rows(T, c.hq, D, !c.l2), c.io);
  host[p->k->get_uid()] = encode(dr.rows(T, c.hk, D, !c.l2), c.io);
  host[p->d_o->get_uid()] = encode(dr.rows(T, HO, D, false), c.io);
  dr.gates_betas(c, *p, host);
  host[p->cu->get_uid()] = cu_seqlens_bytes(c);
  dr.gate_params(c, *p, host);

  FactsCache facts(p->g, PlanTarget{gpu().props});
  PlanContext ctx{&facts};
  const Status sup = la_engine().check_support(p->g, ctx);
  ASSERT_TRUE(sup.is_good()) << c.name << ": " << sup.message();
  const PlanConfig config{la_engine().id(), {{KnobType::PIPELINE_ARCH, 0}, {KnobType::CHAIN_SPLIT, 0}}, {}, -1};
  auto plan = build_direct(la_engine(), p->g, config, ctx);
  ASSERT_TRUE(plan.is_good()) << c.name << ": " << plan.status().message();
  DeviceBuffers dev;
  VariantPack pack;
  upload_inputs(host, dev, pack);
  const std::size_t out_bytes = static_cast<std::size_t>(N * HO * D * D) * width(c.out_t);
  std::vector<TensorPtr> outs = {p->out.g};
  if (p->out.transition) outs.push_back(p->out.transition);
  for (const TensorPtr& t : outs) {
    auto b = poisoned_buffer(out_bytes);
    pack.set(t->get_uid(), reinterpret_cast<void*>(b->ptr()));
    dev[t->get_uid()] = std::move(b);
  }
  const std::int64_t ws_bytes = (*plan)->workspace_size();
  EXPECT_GT(ws_bytes, 0) << c.name;
  std::unique_ptr<DeviceBuffer> ws = poisoned_workspace(ws_bytes);
  ExecutionContext ec;
  ec.stream = gpu().stream;
  ec.device = &gpu().props;
  if (ws) ec.workspace = Workspace{reinterpret_cast<void*>(ws->ptr()), ws_bytes};
  const Status ran = (*plan)->execute(pack, ec);
  ASSERT_TRUE(ran.is_good()) << c.name << ": " << ran.message();
  ASSERT_EQ(api.stream_synchronize(gpu().stream), CUDA_SUCCESS) << c.name;

  std::map<std::int64_t, reference::HostBuffer> hb;
  for (const auto& [uid, bytes] : host) hb[uid] = reference::HostBuffer{const_cast<unsigned char*>(bytes.data())};
  std::map<std::int64_t, std::vector<unsigned char>> got, ref;
  for (const TensorPtr& t : outs) {
    got[t->get_uid()].resize(out_bytes);
    ASSERT_EQ(api.memcpy_dtoh(got[t->get_uid()].data(), dev.at(t->get_uid())->ptr(), out_bytes), CUDA_SUCCESS);
    ref[t->get_uid()].assign(out_bytes, 0);
    hb[t->get_uid()] = reference::HostBuffer{ref[t->get_uid()].data()};
  }
  const Status rs = reference::execute(p->g, hb);
  ASSERT_TRUE(rs.is_good()) << c.name << ": " << rs.message();
  std::printf("[ gdn_summary_bwd ] %-52s T=%-6lld N=%-3lld", c.name.c_str(), static_cast<long long>(T),
              static_cast<long long>(N));
  for (const TensorPtr& t : outs) {
    const double r = rms_ratio(decode(got[t->get_uid()], c.out_t), decode(ref[t->get_uid()], c.out_t));
    const char* name = t == p->out.g ? "G" : "transition";
    std::printf("  %s %.2e", name, r);
    EXPECT_LE(r, 8e-3) << c.name << ": " << name;  // NaN (an unwritten element) fails too
  }
  std::printf("\n");
}

// Varlen with empty sequences (G = 0, M = I there) and sequences of 1, 63, 64, 65, 1000 and 4097 tokens
// at both head dims.
TEST_F(GdnBwdGpuSummary, VarlenBothHeadDims) {
  std::mt19937 rng(31);
  for (std::int64_t d : {128, 64}) {
    Case c;
    c.name = "varlen d" + std::to_string(d);
    c.d = d;
    c.lens = {1, 63, 0, 64, 65, 1000, 4097, 0};
    c.hq = c.hk = 1;
    c.hv = 2;
    check(c, rng);
  }
}

// Every attribute the rules accept: grouped heads both ways with l2norm, a scale and int64 cu_seqlens;
// safe_gate with a_log and dt_bias, beta sigmoid, fp16 inputs, bf16 G and transition; the linear gate
// with negative eigenvalues and strong decay, bf16 gates, no transition; batch_invariant.
TEST_F(GdnBwdGpuSummary, Attributes) {
  std::mt19937 rng(32);
  const std::vector<std::int64_t> lens = {130, 0, 64, 700, 1};
  {
    Case c;
    c.name = "grouped q/k, l2norm, scale 0.3, int64 cu";
    c.lens = lens;
    c.hq = c.hk = 2;
    c.hv = 8;
    c.l2 = c.cu64 = true;
    c.scale = 0.3;
    check(c, rng);
  }
  {
    Case c;
    c.name = "safe gate a_log dt_bias, beta sigmoid, fp16, bf16 out";
    c.lens = lens;
    c.hq = c.hk = 4;
    c.hv = 4;
    c.safe = c.a_log = c.dt = c.beta_sig = true;
    c.io = DataType::HALF;
    c.out_t = DataType::BFLOAT16;
    check(c, rng);
  }
  {
    Case c;
    c.name = "linear gate, neg eigval, strong decay, bf16 gates, no M";
    c.lens = lens;
    c.hq = c.hk = 2;
    c.hv = 4;
    c.linear = c.neg = c.strong = c.beta_sig = true;
    c.gate_t = c.beta_t = DataType::BFLOAT16;
    c.transition = false;
    check(c, rng);
  }
  {
    Case c;
    c.name = "batch invariant, d64";
    c.lens = lens;
    c.d = 64;
    c.hq = c.hk = 2;
    c.hv = 2;
    c.batch_inv = true;
    check(c, rng);
  }
}

}  // namespace
