// tests/linear_attention/test_la_bwd_checkpoints.cpp — gdn_bwd given the forward's state_checkpoints, without a
// GPU: rule B6 (what is accepted; a row count short of floor(T / c), a type the kernels do not read, each
// declined by name), B8's span count, the kernels a plan launches (the forward recompute is gdn_bwd_fwd_span
// seeded by the checkpoints, unsplit or split), the execute-time shape overrides' row rule, and the ranking.
// The kernels' numerics are GdnBwdGpu.Checkpoints* (tests/linear_attention_gpu/test_la_bwd_gpu.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engines/linear_attention/gdn_bwd.h"
#include "engines/linear_attention/kernels/gdn_bwd_params.cuh"
#include "exec/declared_layout.h"
#include "ir/linear_attention_fixture.h"
#include "linear_attention/la_bwd_test_util.h"

namespace {

using namespace opgraph;
using la_test::Built;
using la_test::Cfg;
using linear_attention::analyze_gdn_bwd;

// gdn_bwd at d = 64 over {0, 200, 200, 530}: T = 530, cadence 128 (floor(530 / 128) = 4 rows at most).
Cfg ckpt_cfg(std::int64_t rows) {
  Cfg c = la_test::engine_cfg(64);
  c.cu = {0, 200, 200, 530};
  c.init = true;
  c.ckpt_rows = rows;
  return c;
}
template <class Tweak>
Built bwd(const Cfg& c, Tweak&& tweak, std::int64_t every = 128) {
  Built b = la_test::build(la_test::op_named("gdn_bwd"), c, Attributes().set("checkpoint_every_n_tokens", every),
                           tweak);
  la_test::mark_outputs(b);
  const Status v = b.g.validate();
  EXPECT_TRUE(v.is_good()) << v.to_string();
  return b;
}
Built bwd(const Cfg& c) {
  return bwd(c, [](Built&) {});
}

std::vector<std::string> entries(const linear_attention::GdnBwdProblem& p, long long split) {
  std::vector<std::string> out;
  for (const auto& r : linear_attention::gdn_bwd_kernel_requests(p, split)) out.push_back(r.entry);
  return out;
}
bool has(const std::vector<std::string>& v, const char* e) { return std::find(v.begin(), v.end(), e) != v.end(); }

TEST(LaBwdCheckpoints, AcceptedWithRowsForEveryCheckpointTheTokensCanHave) {
  for (DataType st : {DataType::FLOAT, DataType::BFLOAT16}) {
    Built b = bwd(ckpt_cfg(4), [&](Built& x) { x.ckpt->set_data_type(st); });
    auto p = analyze_gdn_bwd(b.g);
    ASSERT_TRUE(p.is_good()) << p.status().message();
    EXPECT_EQ(p->checkpoints, b.ckpt->get_uid());
    EXPECT_EQ(p->ckpt_type, st);
    EXPECT_EQ(p->checkpoint_every, 128);
    EXPECT_EQ(p->ckpt_rows, 4);
  }
  // More rows than needed are fine; the cadence without the input changes nothing.
  EXPECT_TRUE(analyze_gdn_bwd(bwd(ckpt_cfg(9)).g).is_good());
  Cfg none = ckpt_cfg(-1);
  auto p = analyze_gdn_bwd(bwd(none).g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_EQ(p->checkpoints, -1);
}

TEST(LaBwdCheckpoints, DeclinesShortRowsOtherTypesAndTooManySpans) {
  // FlashInfer's exact count (sum floor(L_i / c) = 1 + 0 + 2 = 3) is short of floor(T / c) = 4: the reference.
  la_bwd_test::expect_decline(bwd(ckpt_cfg(3)).g, "B6 checkpoints:", "gdn_bwd");
  {
    auto p = analyze_gdn_bwd(bwd(ckpt_cfg(3)).g);
    ASSERT_TRUE(p.is_bad());
    EXPECT_NE(p.status().message().find("state_checkpoints"), std::string::npos) << p.status().message();
    EXPECT_NE(p.status().message().find("floor(T / 128) = 4"), std::string::npos) << p.status().message();
  }
  la_bwd_test::expect_decline(bwd(ckpt_cfg(4), [](Built& x) { x.ckpt->set_data_type(DataType::HALF); }).g,
                              "B6 checkpoints:", "gdn_bwd");
  // Strided rows: the kernels read them dense.
  la_bwd_test::expect_decline(
      bwd(ckpt_cfg(4), [](Built& x) { x.ckpt->set_stride({2 * 8 * 64 * 64, 64 * 64, 64, 1}); }).g, "B7 layout:",
      "gdn_bwd");
  // 40000 sequences of 128 tokens every 64: 2 spans a sequence, 80000 over the grid's z.
  Cfg many = la_test::engine_cfg(64);
  many.cu.clear();
  for (std::int64_t i = 0; i <= 40000; ++i) many.cu.push_back(128 * i);
  many.ckpt_rows = 80000;
  la_bwd_test::expect_decline(bwd(many, [](Built&) {}, 64).g, "B8 grid:", "gdn_bwd");
}

TEST(LaBwdCheckpoints, TheForwardRecomputeIsTheSeededSpans) {
  auto p = analyze_gdn_bwd(bwd(ckpt_cfg(4)).g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  const auto whole = entries(*p, 0);
  EXPECT_TRUE(has(whole, "gdn_bwd_fwd_span"));
  EXPECT_FALSE(has(whole, "gdn_bwd_fwd_scan"));
  EXPECT_TRUE(has(whole, "gdn_bwd_rev_scan"));
  EXPECT_FALSE(has(whole, "gdn_bwd_span_fixup"));
  EXPECT_TRUE(has(whole, "gdn_bwd_prep") && has(whole, "gdn_bwd_grads"));
  const auto split = entries(*p, 8);
  for (const char* e : {"gdn_bwd_fwd_summary", "gdn_bwd_rev_summary", "gdn_bwd_span_fixup", "gdn_bwd_fwd_span",
                        "gdn_bwd_rev_span"})
    EXPECT_TRUE(has(split, e)) << e;
  EXPECT_FALSE(has(split, "gdn_bwd_fwd_scan"));
  EXPECT_FALSE(has(split, "gdn_bwd_rev_scan"));
  // Without the input the unsplit plan is the two whole-sequence scans.
  auto plain = analyze_gdn_bwd(bwd(ckpt_cfg(-1)).g);
  ASSERT_TRUE(plain.is_good());
  EXPECT_TRUE(has(entries(*plain, 0), "gdn_bwd_fwd_scan"));
  EXPECT_FALSE(has(entries(*plain, 0), "gdn_bwd_fwd_span"));
  // The workspace does not grow: the checkpoints are the caller's buffer.
  EXPECT_EQ(linear_attention::gdn_bwd_workspace_bytes(*p), linear_attention::gdn_bwd_workspace_bytes(*plain));
  EXPECT_EQ(opgraph_gdn::gdn_bwd_spans(530, 2), 5);  // ceil(9 chunks / 2): the seeded spans' grid z per sequence
}

TEST(LaBwdCheckpoints, ShapeOverridesKeepRowsForTheCallsTokens) {
  Built b = bwd(ckpt_cfg(4));
  auto p = analyze_gdn_bwd(b.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  auto layout = DeclaredLayout::compute(b.g);
  ASSERT_TRUE(layout.is_good()) << layout.status().message();
  std::vector<unsigned char> mem(64);  // stand-in addresses: nothing is read
  auto pack_for = [&](std::int64_t t, std::int64_t rows) {
    VariantPack v;
    for (std::int64_t uid : {p->q, p->k, p->v, p->g, p->beta, p->cu_seqlens, p->initial_state, p->d_o, p->dq,
                             p->dk, p->dv, p->dg, p->dbeta, p->d_initial_state, p->checkpoints})
      v.set(uid, mem.data());
    for (std::int64_t uid : {p->q, p->k, p->dq, p->dk}) v.override_shape(uid, {t, 2, 64});
    for (std::int64_t uid : {p->v, p->d_o, p->dv}) v.override_shape(uid, {t, 8, 64});
    for (std::int64_t uid : {p->g, p->beta, p->dg, p->dbeta}) v.override_shape(uid, {t, 8});
    v.override_shape(p->cu_seqlens, {4});
    v.override_shape(p->checkpoints, {rows, 8, 64, 64});
    return v;
  };
  auto run = [&](const VariantPack& v) { return la_bwd_test::overridden(*p, *layout, v); };
  auto q = run(pack_for(1100, 8));  // floor(1100 / 128) = 8
  ASSERT_TRUE(q.is_good()) << q.status().message();
  EXPECT_EQ(q->ckpt_rows, 8);
  EXPECT_EQ(q->t, 1100);
  auto r = run(pack_for(1100, 7));
  ASSERT_TRUE(r.is_bad());
  EXPECT_EQ(r.status().code(), ErrorCode::INVALID_VARIANT_PACK);
  EXPECT_NE(r.status().message().find("rule B6 checkpoints"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("'state_checkpoints'"), std::string::npos) << r.status().message();
}

// The heuristics rank as without checkpoints: the split rule's plan first where it splits (on the H200 the 2/8,
// 1 x 32768 cell with checkpoints every 1024 tokens took 1.906 ms under spans of 64 chunks against 3.821 unsplit,
// bench/results/2026-12-04-gdn-bwd-checkpoints-8fc474e-h200.txt), then the unsplit plan.
TEST(LaBwdCheckpoints, RankedAsWithoutThem) {
  Cfg c = la_test::engine_cfg(128);
  c.cu = {0, 32768};
  c.hq = c.hk = 2;
  c.hv = 8;
  c.init = true;
  c.ckpt_rows = 32;
  Built b = bwd(c, [](Built&) {}, 1024);
  auto p = analyze_gdn_bwd(b.g);
  ASSERT_TRUE(p.is_good()) << p.status().message();
  EXPECT_EQ(linear_attention::gdn_bwd_chain_split_rule(*p, 132), 64);
  EXPECT_EQ(la_bwd_test::first_two_plans(std::move(b.g)),
            (std::vector<std::string>{"linear_attention[CHAIN_SPLIT=64, PIPELINE_ARCH=0]",
                                      "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=0]"}));
}

}  // namespace
