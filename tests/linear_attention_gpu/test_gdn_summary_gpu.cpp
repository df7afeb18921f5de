// tests/linear_attention_gpu/test_gdn_summary_gpu.cpp — the linear_attention engine's gdn_summary on the device
// against the float64 reference (the forward's cases and fixture: gdn_gpu_case.h; split from test_gdn_gpu.cpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engines/linear_attention/la_engine.h"
#include "engines/reference/executor.h"
#include "gemm_gpu/gemm_gpu_util.h"
#include "linear_attention_gpu/gdn_gpu_case.h"
#include "linear_attention_gpu/la_gpu_util.h"
#include "opgraph/op_graph.h"

namespace {

using namespace opgraph;
using namespace opgraph::la_testing;
using namespace opgraph::la_testing::gdn_fwd;
using gemm_testing::build_direct;
using gemm_testing::gpu;

// gdn_summary: H and M^T per (sequence, head) against the reference, varlen with empty sequences, grouped heads,
// with and without l2norm and a safe gate, at d = 128 (the fused kernel's summary form) and 64 (the two-pass prep and
// gdn_summary_scan); H, M and the workspace poisoned first.
TEST_F(GdnGpu, SummaryMatchesTheReference) {
  const auto& api = *gpu().api;
  std::mt19937 rng(21);
  // Variants 0..2 at d = 128 (gdn_summary_fused), 3..5 the same at d = 64 (gdn_prefill_prep, then
  // gdn_summary_scan: a workspace, poisoned as the outputs are).
  for (int variant = 0; variant < 6; ++variant) {
    Case c;
    const int form = variant % 3;
    c.d = variant < 3 ? 128 : 64;
    c.name = form == 0 ? "summary" : form == 1 ? "summary, l2norm, bf16 H / M" : "summary, safe gate, fp16";
    if (c.d == 64) c.name += ", d 64";
    c.lens = {1, 63, 0, 64, 65, 1000, 300, 0};
    c.hq = c.hk = 2;
    c.hv = 8;
    c.init = false;
    c.l2 = form == 1;
    c.safe = c.a_log = c.dt = form == 2;
    if (form == 2) c.io = DataType::HALF;
    const DataType out_t = form == 1 ? DataType::BFLOAT16 : DataType::FLOAT;
    auto fwd = build(c);  // the forward's tensors, for draw()
    ASSERT_TRUE(fwd->g.validate().is_good());  // uids assigned: draw() keys the bytes by them
    auto host = draw(c, *fwd, rng, nullptr);
    const std::int64_t T = c.t(), N = c.n(), HO = c.ho(), D = c.d;
    OpGraph g;
    auto k = g.tensor({T, c.hk, D}, c.io, "k");
    auto v = g.tensor({T, c.hv, D}, c.io, "v");
    auto gate = g.tensor({T, HO}, c.gate_t, "g");
    auto beta = g.tensor({T, HO}, c.beta_t, "beta");
    auto cu = g.tensor({N + 1}, DataType::INT32, "cu_seqlens");
    TensorPtr a_log = c.a_log ? g.tensor({HO}, DataType::FLOAT, "a_log") : nullptr;
    TensorPtr dt = c.dt ? g.tensor({HO}, DataType::FLOAT, "dt_bias") : nullptr;
    Attributes a;
    a.set("use_qk_l2norm", c.l2);
    a.set("safe_gate", c.safe);
    a.set_name("sum0");
    StateSummary out = g.gdn_summary(DeltaRuleInputs{nullptr, k, v, gate, beta, cu, nullptr, a_log, dt, nullptr}, a);
    out.h->set_output(true).set_data_type(out_t).set_name("H");
    out.m->set_output(true).set_data_type(out_t).set_name("M");
    ASSERT_TRUE(g.validate().is_good()) << g.validate().to_string();
    // The summary graph's inputs carry the forward draw's bytes.
    std::map<std::int64_t, std::vector<unsigned char>> in;
    in[k->get_uid()] = host.at(fwd->k->get_uid());
    in[v->get_uid()] = host.at(fwd->v->get_uid());
    in[gate->get_uid()] = host.at(fwd->gate->get_uid());
    in[beta->get_uid()] = host.at(fwd->beta->get_uid());
    in[cu->get_uid()] = host.at(fwd->cu->get_uid());
    if (a_log) in[a_log->get_uid()] = host.at(fwd->a_log->get_uid());
    if (dt) in[dt->get_uid()] = host.at(fwd->dt->get_uid());
    FactsCache facts(g, PlanTarget{gpu().props});
    PlanContext ctx{&facts};
    auto plan = build_direct(la_engine(), g, config_of(0), ctx);
    ASSERT_TRUE(plan.is_good()) << c.name << ": " << plan.status().message();
    const std::int64_t ws_bytes = (*plan)->workspace_size();
    if (c.d == 128) {
      EXPECT_EQ(ws_bytes, 0) << c.name;
    } else {
      EXPECT_GT(ws_bytes, 0) << c.name;
    }
    std::unique_ptr<DeviceBuffer> ws = poisoned_workspace(ws_bytes);
    VariantPack pack;
    std::map<std::int64_t, std::unique_ptr<DeviceBuffer>> dev;
    for (auto& [uid, bytes] : in) {
      auto b = std::make_unique<DeviceBuffer>(api, std::max<std::size_t>(bytes.size(), 4));
      ASSERT_EQ(api.memcpy_htod(b->ptr(), bytes.data(), bytes.size()), CUDA_SUCCESS);
      pack.set(uid, reinterpret_cast<void*>(b->ptr()));
      dev[uid] = std::move(b);
    }
    const std::size_t out_bytes = static_cast<std::size_t>(N * HO * D * D) * width(out_t);
    for (const TensorPtr& t : {out.h, out.m}) {
      auto b = std::make_unique<DeviceBuffer>(api, out_bytes);
      ASSERT_EQ(api.memset_d32(b->ptr(), 0xFFFFFFFFu, out_bytes / 4), CUDA_SUCCESS);  // poisoned: NaN fails
      pack.set(t->get_uid(), reinterpret_cast<void*>(b->ptr()));
      dev[t->get_uid()] = std::move(b);
    }
    ExecutionContext ec;
    ec.stream = gpu().stream;
    ec.device = &gpu().props;
    if (ws) ec.workspace = Workspace{reinterpret_cast<void*>(ws->ptr()), ws_bytes};
    const Status ran = (*plan)->execute(pack, ec);
    ASSERT_TRUE(ran.is_good()) << c.name << ": " << ran.to_string();
    ASSERT_EQ(api.stream_synchronize(gpu().stream), CUDA_SUCCESS);
    std::vector<unsigned char> got_h(out_bytes), got_m(out_bytes), ref_h(out_bytes, 0), ref_m(out_bytes, 0);
    ASSERT_EQ(api.memcpy_dtoh(got_h.data(), dev.at(out.h->get_uid())->ptr(), out_bytes), CUDA_SUCCESS);
    ASSERT_EQ(api.memcpy_dtoh(got_m.data(), dev.at(out.m->get_uid())->ptr(), out_bytes), CUDA_SUCCESS);
    std::map<std::int64_t, reference::HostBuffer> hb;
    for (auto& [uid, bytes] : in) hb[uid] = reference::HostBuffer{bytes.data()};
    hb[out.h->get_uid()] = reference::HostBuffer{ref_h.data()};
    hb[out.m->get_uid()] = reference::HostBuffer{ref_m.data()};
    const Status ref = reference::execute(g, hb);
    ASSERT_TRUE(ref.is_good()) << c.name << ": " << ref.message();
    const double rh = rms_ratio(decode(got_h, out_t), decode(ref_h, out_t));
    const double rm = rms_ratio(decode(got_m, out_t), decode(ref_m, out_t));
    std::printf("[ gdn ] summary %-44s T=%-6lld N=%-3lld H %.2e  M %.2e\n", c.name.c_str(), static_cast<long long>(T),
                static_cast<long long>(N), rh, rm);
    EXPECT_LE(rh, kTol) << c.name << ": H";
    EXPECT_LE(rm, kTol) << c.name << ": M";
  }
}

}  // namespace
