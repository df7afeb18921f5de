// tests/linear_attention/test_la_split_adapt.cpp — the fused prefill's chain split for batches of several sequences
// (GDN_SPLIT_ADAPT, kernels/gdn_params.cuh; the engine's build since 2026-12-06) without a GPU: the longest sequence
// it leaves whole (split_min_chunks), where the heuristics offer it, and the grid rule that counts its compact rows.
// The maps themselves are emulated lane by lane by scripts/emulate_split_compact.py (ctest
// gdn_split_compact_map_emulated); the numerics run on the device (GdnGpu.PrefillAttributes' batch with a sequence
// longer than a span left whole).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engines/linear_attention/gdn_problem.h"
#include "engines/linear_attention/la_engine.h"
#include "engines/linear_attention/kernels/gdn_params.cuh"
#include "ir/linear_attention_fixture.h"
#include "opgraph/graph.h"

namespace {

using namespace opgraph;
using la_test::Built;
using la_test::Cfg;

// A gdn graph at d = 128 with hqk / hv heads over sequences of `lens` tokens (outputs marked).
Built graph_of(std::int64_t hqk, std::int64_t hv, const std::vector<std::int64_t>& lens, bool invariant = false) {
  Cfg c = la_test::engine_cfg(128);
  c.hq = c.hk = hqk;
  c.hv = hv;
  c.cu.assign(1, 0);
  for (std::int64_t l : lens) c.cu.push_back(c.cu.back() + l);
  Attributes a;
  if (invariant) a.set("batch_invariant", true);
  Built b = la_test::build(la_test::op_named("gdn"), c, std::move(a));
  la_test::mark_outputs(b);
  const Status v = b.g.validate();  // the outputs' types inferred
  EXPECT_TRUE(v.is_good()) << v.to_string();
  return b;
}
linear_attention::GdnProblem problem_of(const Built& b) {
  auto p = linear_attention::analyze_gdn(b.g);
  EXPECT_TRUE(p.is_good()) << p.status().message();
  return p.is_good() ? *p : linear_attention::GdnProblem{};
}
// The 16/32 varlen batch (bench/compare_gdn.py's VARLEN: 8 lengths summing to 32768).
const std::vector<std::int64_t> kPeersVarlen = {3000, 12000, 1000, 4097, 2048, 7000, 1123, 2500};

TEST(LaSplitAdapt, IsTheEnginesBuild) { EXPECT_EQ(GDN_SPLIT_ADAPT, 1); }

// split_min_chunks: 5/4 of an even share of the batch's (chunk, head) steps a multiprocessor, 0 for one sequence.
TEST(LaSplitAdapt, LongestSequenceLeftWhole) {
  // 16/32 heads, 32768 tokens (512 chunks) on 132 multiprocessors: ceil(5 x 32 x 512 / 528) = 156 chunks, so four
  // sequences of 8192 tokens (128 chunks) stay whole and the varlen batch's 12000-token one (188) splits.
  EXPECT_EQ(linear_attention::split_min_chunks(problem_of(graph_of(16, 32, {8192, 8192, 8192, 8192})), 132), 156);
  EXPECT_EQ(linear_attention::split_min_chunks(problem_of(graph_of(16, 32, kPeersVarlen)), 132), 156);
  // One sequence: every sequence longer than a span splits (the one-sequence cells keep their split).
  EXPECT_EQ(linear_attention::split_min_chunks(problem_of(graph_of(16, 32, {32768})), 132), 0);
  // 8 heads over 7761 tokens (122 chunks): ceil(5 x 8 x 122 / 528) = 10 — the GPU numerics batch, whose 600-token
  // sequence (10 chunks, longer than a span of 8) stays whole.
  EXPECT_EQ(linear_attention::split_min_chunks(problem_of(graph_of(4, 8, {600, 4097, 64, 0, 3000})), 132), 10);
  EXPECT_EQ(linear_attention::split_min_chunks(problem_of(graph_of(16, 32, kPeersVarlen)), 0), 0);  // no device
}

// Where the heuristics offer the split at kAdaptSplit chunks a span, and where they rank it.
TEST(LaSplitAdapt, OfferedAfterTheUnsplitPlansForBatchesThatFillTheDevice) {
  auto offers = [](const Built& b) { return linear_attention::offers_adapt_split(problem_of(b), 132); };
  EXPECT_TRUE(offers(graph_of(16, 32, kPeersVarlen)));
  EXPECT_TRUE(offers(graph_of(16, 32, {8192, 8192, 8192, 8192})));  // the lengths are on the device
  EXPECT_FALSE(offers(graph_of(16, 32, {32768})));                   // one sequence: fused_split_rule's split
  EXPECT_FALSE(offers(graph_of(2, 8, {4096, 4096})));                // 16 chains: fused_first does not hold
  EXPECT_FALSE(offers(graph_of(16, 32, kPeersVarlen, true)));        // batch_invariant
  // 20 sequences of 100 tokens: 32 chunks in all, none can be longer than a span.
  EXPECT_FALSE(offers(graph_of(4, 8, std::vector<std::int64_t>(20, 100))));

  Built b = graph_of(16, 32, kPeersVarlen);
  Graph g(std::move(b.g));
  auto target = DeviceProperties::for_arch("sm_90a");
  ASSERT_TRUE(target.is_good());
  g.set_device_properties(*target);
  ASSERT_TRUE(g.create_execution_plans({HeurMode::A}).is_good());
  std::vector<std::string> ours;
  for (std::int64_t i = 0; i < g.get_execution_plan_count(); ++i)
    if (auto n = g.get_plan_name_at_index(i); n.is_good() && n->rfind("linear_attention", 0) == 0) ours.push_back(*n);
  const std::vector<std::string> want = {"linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=3]",
                                         "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=2]",
                                         "linear_attention[CHAIN_SPLIT=32, PIPELINE_ARCH=3]",
                                         "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=1]",
                                         "linear_attention[CHAIN_SPLIT=0, PIPELINE_ARCH=0]"};
  EXPECT_EQ(ours, want);
}

// The grid rule counts the rows each split launches: the fused split's compact rows (N + the full spans' bound),
// the two-pass split's N x spans. 10000 sequences of 64 tokens at spans of 8: the fused split needs 12500 rows (it
// is accepted), the two-pass one 10000 x 1250 (refused by name).
TEST(LaSplitAdapt, GridRuleCountsTheCompactRows) {
  auto engine = linear_attention::make_la_engine(EngineIdentity{20500, "linear_attention"});
  auto sm90 = DeviceProperties::for_arch("sm_90a");
  ASSERT_TRUE(sm90.is_good());
  auto kernels = [&](const OpGraph& g, std::int64_t arch, std::int64_t split) {
    FactsCache f(g, PlanTarget{*sm90});
    return engine->plan_kernels(
        g, PlanConfig{engine->id(), {{KnobType::PIPELINE_ARCH, arch}, {KnobType::CHAIN_SPLIT, split}}, {}, -1},
        PlanContext{&f}, [](const runtime::KernelRequest&) { return Status::ok(); });
  };
  EXPECT_EQ(opgraph_gdn::gdn_split_grid_spans(10000 * 64, 10000, 8), 12500);
  Built many = graph_of(1, 2, std::vector<std::int64_t>(10000, 64));
  many.g.freeze();
  const Status fused = kernels(many.g, linear_attention::kPrefillFusedWs, 8);
  EXPECT_TRUE(fused.is_good()) << fused.message();
  const Status two_pass = kernels(many.g, linear_attention::kPrefillTwoPass, 8);
  EXPECT_EQ(two_pass.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(two_pass.message().find("10000 x 1250"), std::string::npos) << two_pass.message();
  EXPECT_NE(two_pass.message().find("exceed the grid's 65535"), std::string::npos) << two_pass.message();
  // 60000 sequences of 9 tokens (a prefill: more than 8 tokens a sequence): (8438 + 60000) / 8 + 60000 = 68554
  // compact rows, refused too.
  Built more = graph_of(1, 2, std::vector<std::int64_t>(60000, 9));
  more.g.freeze();
  const Status over = kernels(more.g, linear_attention::kPrefillFusedWs, 8);
  EXPECT_EQ(over.code(), ErrorCode::INVALID_VALUE);
  EXPECT_NE(over.message().find("(68554: N + the full spans' bound)"), std::string::npos) << over.message();
  EXPECT_NE(over.message().find("CHAIN_SPLIT 8"), std::string::npos) << over.message();
}

}  // namespace
