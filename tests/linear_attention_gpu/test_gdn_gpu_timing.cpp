// tests/linear_attention_gpu/test_gdn_gpu_timing.cpp — GdnGpu.Timing* (run by the device
// scripts for figures, not checks): the five prefill cells under every prefill mode,
// the one-sequence cells' span lengths, and the decode cells, with CUDA events around each
// execute (median). The cases and plans are test_gdn_gpu.cpp's (gdn_gpu_case.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engines/linear_attention/la_engine.h"
#include "gemm_gpu/gemm_gpu_util.h"
#include "linear_attention_gpu/gdn_gpu_case.h"
#include "linear_attention_gpu/la_gpu_util.h"
#include "opgraph/device.h"
#include "opgraph/op_graph.h"

namespace {

using namespace opgraph;
using namespace opgraph::la_testing;
using namespace opgraph::la_testing::gdn_fwd;
using gemm_testing::build_direct;
using gemm_testing::gpu;

// ---- timing (not a check): the five prefill cells ----

// Timed executes per case: `fallback`, or OPGRAPH_GDN_REPS (a profiler run wants few).
int timing_reps(int fallback) {
  const char* e = std::getenv("OPGRAPH_GDN_REPS");
  const int n = e ? std::atoi(e) : 0;
  return n > 0 ? n : fallback;
}
// How many of TimingFiveCells' cells run (OPGRAPH_GDN_TIMING_CELLS; all when unset): a profiler run of the
// one-sequence split wants the first alone.
std::size_t timing_cells(std::size_t all) {
  const char* e = std::getenv("OPGRAPH_GDN_TIMING_CELLS");
  const int n = e ? std::atoi(e) : 0;
  return n > 0 && static_cast<std::size_t>(n) < all ? static_cast<std::size_t>(n) : all;
}

// Inputs for timing at sizes where drawing doubles is too slow: q, k uniform in
// [-1, 1) (normalised in the kernel: use_qk_l2norm), v uniform, g = logsigmoid of
// a uniform in [-2, 2) (or weak decay: timing_gates, la_gpu_util.h), beta in (0, 1), initial state uniform in
// [-1/2, 1/2).
std::map<std::int64_t, std::vector<unsigned char>> fast_inputs(const Case& c, const Problem& p, std::mt19937& rng) {
  UniformFill fill(rng());
  std::map<std::int64_t, std::vector<unsigned char>> h;
  h[p.q->get_uid()] = fill(p.q, -1, 1, false);
  h[p.k->get_uid()] = fill(p.k, -1, 1, false);
  h[p.v->get_uid()] = fill(p.v, -1, 1, false);
  h[p.gate->get_uid()] = timing_gates(fill, p.gate);
  h[p.beta->get_uid()] = fill(p.beta, 0, 1, false);
  h[p.init->get_uid()] = fill(p.init, -0.5f, 0.5f, false);
  std::vector<double> cu{0};
  for (auto l : c.lens) cu.push_back(cu.back() + static_cast<double>(l));
  h[p.cu->get_uid()] = encode(cu, DataType::INT32);
  if (p.idx) {
    std::vector<double> rows(static_cast<std::size_t>(c.n()));
    std::iota(rows.begin(), rows.end(), 0.0);
    h[p.idx->get_uid()] = encode(rows, DataType::INT32);
  }
  return h;
}

// Median kernel time (ms) of case c's plan over `reps` executes, CUDA events around each.
// Median kernel time (ms) of case c's plan under each prefill mode of `modes`
// over `reps` executes, CUDA events around each; one set of inputs for all. When
// `o_vs_first` is given, it receives for each mode the RMS ratio of its O to the
// first mode's O (how far the modes agree at this size).
std::vector<double> time_modes(const Case& c, std::mt19937& rng, int reps, const std::vector<int>& modes,
                               std::vector<double>* o_vs_first = nullptr) {
  const auto& api = *gpu().api;
  std::vector<double> out;
  auto p = build(c);
  EXPECT_TRUE(p->g.validate().is_good());
  FactsCache facts(p->g, PlanTarget{gpu().props});
  PlanContext ctx{&facts};
  auto host = fast_inputs(c, *p, rng);
  std::map<std::int64_t, std::unique_ptr<DeviceBuffer>> dev;
  VariantPack pack;
  for (auto& [uid, bytes] : host) {
    auto b = std::make_unique<DeviceBuffer>(api, bytes.size());
    EXPECT_EQ(api.memcpy_htod(b->ptr(), bytes.data(), bytes.size()), CUDA_SUCCESS);
    pack.set(uid, reinterpret_cast<void*>(b->ptr()));
    dev[uid] = std::move(b);
  }
  for (const TensorPtr& t : {p->out.o, p->out.final_state, p->out.state_checkpoints}) {
    if (!t) continue;
    if (c.overwrite && t == p->out.final_state) {
      pack.set(t->get_uid(), reinterpret_cast<void*>(dev.at(p->init->get_uid())->ptr()));
      continue;
    }
    const std::size_t bytes = static_cast<std::size_t>(t->element_count()) * width(t->get_data_type());
    auto b = std::make_unique<DeviceBuffer>(api, bytes);
    pack.set(t->get_uid(), reinterpret_cast<void*>(b->ptr()));
    dev[t->get_uid()] = std::move(b);
  }
  const std::int64_t o_uid = p->out.o->get_uid();
  const std::size_t o_bytes = static_cast<std::size_t>(p->out.o->element_count()) * width(c.o_t);
  std::vector<double> first_o;
  for (int m : modes) {
    auto plan = build_direct(la_engine(), p->g, config_of(m), ctx);
    EXPECT_TRUE(plan.is_good()) << mode_name(m) << ": " << plan.status().message();
    if (plan.is_bad()) {
      out.push_back(-1);
      if (o_vs_first) o_vs_first->push_back(-1);
      continue;
    }
    ExecutionContext ec;
    ec.stream = gpu().stream;
    ec.device = &gpu().props;
    std::unique_ptr<DeviceBuffer> ws;
    const std::int64_t wb = (*plan)->workspace_size();
    if (wb > 0) {
      ws = std::make_unique<DeviceBuffer>(api, static_cast<std::size_t>(wb));
      EXPECT_TRUE(ws->status().is_good()) << "workspace of " << wb << " bytes";
      ec.workspace = Workspace{reinterpret_cast<void*>(ws->ptr()), wb};
    }
    out.push_back(median_execute_ms(**plan, pack, ec, reps));
    if (o_vs_first) {
      // O after the timed runs (an in-place state changes the inputs between
      // runs, so compare only cases whose state is not overwritten).
      std::vector<unsigned char> o(o_bytes);
      EXPECT_EQ(api.stream_synchronize(gpu().stream), CUDA_SUCCESS);
      EXPECT_EQ(api.memcpy_dtoh(o.data(), dev.at(o_uid)->ptr(), o_bytes), CUDA_SUCCESS);
      std::vector<double> od = decode(o, c.o_t);
      if (first_o.empty()) first_o = std::move(od), o_vs_first->push_back(0);
      else o_vs_first->push_back(c.overwrite ? -1 : rms_ratio(od, first_o));
    }
  }
  return out;
}
double time_case(const Case& c, std::mt19937& rng, int reps) { return time_modes(c, rng, reps, {c.prefill})[0]; }

TEST_F(GdnGpu, TimingFiveCells) {
  if (!gpu().api->event_create) GTEST_SKIP() << "driver without events";
  struct Cell {
    std::int64_t hqk, hv, b, t;
    double fla, fi;
  };
  // The cell a split serves first (a cut-short run still reports it).
  const Cell cells[] = {{2, 8, 1, 32768, 0.981, 0.480},
                        {16, 64, 4, 8192, 3.218, 0.800},
                        {16, 64, 1, 32768, 3.885, 1.514},
                        {16, 32, 4, 8192, 1.648, 0.397},
                        {16, 32, 1, 32768, 2.086, 0.781}};
  std::mt19937 rng(7);
  std::printf("[ gdn timing ] prefill, bf16, d = 128, l2norm in kernel, initial state in, final state out;\n");
  std::printf("[ gdn timing ] %s\n", timing_gates_name());
  std::printf("[ gdn timing ] CUDA events per call, median of 30; fla / FlashInfer: the anchors of 2026-12-01\n");
  std::printf("[ gdn timing ] 1-pass: PIPELINE_ARCH 0 (gdn_prefill); 2-pass: PIPELINE_ARCH 1 (prep + scan)\n");
  std::printf("[ gdn timing ] o 2p~1p: RMS ratio of the two modes' O on the same inputs (no reference at this size)\n");
  std::printf("[ gdn timing ] split: 2-pass with CHAIN_SPLIT J (the heuristics' rule for this device; 64 where the\n");
  std::printf("[ gdn timing ]        rule splits nothing, marked *); best vs FI: the plan the list ranks first\n");
  std::printf("[ gdn timing ] fused: PIPELINE_ARCH 3 (gdn_prefill_fused, wgmma, warp-specialised; the fused plan the\n");
  std::printf("[ gdn timing ]        list ranks first); o fz~1p: its O against 1-pass's; the line under a cell: 3 vs 2\n");
  std::printf("[ gdn timing ]        (the eight-warp form), interleaved in the same calls\n");
  std::printf("[ gdn timing ] %-8s %-10s %10s %10s %9s %12s %10s %10s %12s %10s %10s %10s %10s\n", "heads", "B x T",
              "1-pass ms", "2-pass ms", "2p / 1p", "split ms (J)", "fused ms", "fla ms", "FlashInfer", "best vs FI",
              "fz vs FI", "o 2p~1p", "o fz~1p");
  for (std::size_t ci = 0; ci < timing_cells(std::size(cells)); ++ci) {
    const Cell& cell = cells[ci];
    Case c;
    c.l2 = true;
    c.hq = c.hk = cell.hqk;
    c.hv = cell.hv;
    c.lens.assign(static_cast<std::size_t>(cell.b), cell.t);
    std::vector<double> agree;
    auto built = build(c);
    ASSERT_TRUE(built->g.validate().is_good());
    auto prob = linear_attention::analyze_gdn(built->g);
    ASSERT_TRUE(prob.is_good()) << prob.status().message();
    const long long rule = linear_attention::chain_split_rule(*prob, gpu().props.sm_count);
    const int j = rule > 0 ? static_cast<int>(rule) : 64;
    const std::vector<double> t =
        time_modes(c, rng, timing_reps(30), {0, 1, j, kFusedWs, kFused, 3000 + j}, &agree);
    const double one = t[0], two = t[1], split = t[2], fz = t[3], fz8 = t[4], fz_split = t[5];
    // What the ranked list puts first (the heuristics' order: a split's warp-specialised fused plan where the
    // rule splits, else the fused plan where fused_first holds, else the two-pass plan).
    const double best =
        rule > 0 ? fz_split : (linear_attention::fused_first(*prob, gpu().props.sm_count) ? fz : two);
    std::printf(
        "[ gdn timing ] %3lld/%-4lld %lld x %-6lld %10.3f %10.3f %8.3fx %7.3f (%d%s) %10.3f %10.3f %12.3f %9.2fx %9.2fx "
        "%10.2e %10.2e\n",
        static_cast<long long>(cell.hqk), static_cast<long long>(cell.hv), static_cast<long long>(cell.b),
        static_cast<long long>(cell.t), one, two, two / one, split, j, rule > 0 ? "" : "*", fz, cell.fla, cell.fi,
        best / cell.fi, fz / cell.fi, agree[1], agree[3]);
    std::printf("[ gdn timing ] %3lld/%-4lld %lld x %-6lld fused-ws %8.3f ms, fused (eight warps) %8.3f ms: %6.3fx; o fz8~1p %.2e;"
                " fused-ws split %d %8.3f ms\n",
                static_cast<long long>(cell.hqk), static_cast<long long>(cell.hv), static_cast<long long>(cell.b),
                static_cast<long long>(cell.t), fz, fz8, fz / fz8, agree[4], j, fz_split);
    if (cell.b == 1) {
      // One long sequence: the warp-specialised fused plan unsplit and at four span lengths, interleaved.
      std::vector<double> fa;
      const std::vector<double> ts = time_modes(c, rng, timing_reps(30), {kFusedWs, 3032, 3064, 3128, 3256}, &fa);
      std::printf("[ gdn timing ] %3lld/%-4lld %lld x %-6lld fused-ws split 0 / 32 / 64 / 128 / 256: %.3f / %.3f / "
                  "%.3f / %.3f / %.3f ms\n",
                  static_cast<long long>(cell.hqk), static_cast<long long>(cell.hv), static_cast<long long>(cell.b),
                  static_cast<long long>(cell.t), ts[0], ts[1], ts[2], ts[3], ts[4]);
    }
  }
}

// A timing cell given by its sequence lengths (the peers' varlen batch among them: bench/compare_gdn.py's VARLEN).
struct LensCell {
  std::int64_t hqk, hv;
  std::vector<std::int64_t> lens;
  const char* name;
};
const std::vector<std::int64_t> kPeersVarlen = {3000, 12000, 1000, 4097, 2048, 7000, 1123, 2500};
// The case of `cell` (l2norm in the kernel; beta's logits under use_beta_sigmoid where `beta_sig`) and its analysis.
std::pair<Case, Result<linear_attention::GdnProblem>> lens_case(const LensCell& cell, bool beta_sig) {
  Case c;
  c.l2 = true;
  c.beta_sig = beta_sig;
  c.hq = c.hk = cell.hqk;
  c.hv = cell.hv;
  c.lens = cell.lens;
  auto built = build(c);
  EXPECT_TRUE(built->g.validate().is_good()) << cell.name;
  return {c, linear_attention::analyze_gdn(built->g)};
}

// PIPELINE_ARCH 4 (the fused prefill's inverse on fp16 tiles) against 3 on a declaration inside its domain
// (use_qk_l2norm, use_beta_sigmoid; beta logits U(0, 1)): the five cells and the peers' varlen batch, each
// split where fused_split_rule splits (as the heuristics list both), in five rounds of A then B (each round the
// median of reps / 5 executes, CUDA events), the median round reported; O of 4 against O of 3 on the same inputs.
// Then its guarded form (use_qk_l2norm alone, beta U(0, 1) given: every pair on the fp16 build, the fp32 one
// launched after it returning at once) on the cells the rule leaves unsplit, marked "(guarded)".
TEST_F(GdnGpu, TimingF16Inverse) {
  if (!gpu().api->event_create) GTEST_SKIP() << "driver without events";
  std::mt19937 rng(11);
  std::printf("[ gdn timing ] f16 inverse: prefill, bf16, d = 128, l2norm and beta sigmoid in kernel, initial state "
              "in, final state out\n");
  std::printf("[ gdn timing ] %s\n", timing_gates_name());
  std::printf("[ gdn timing ] %-8s %-16s %6s %10s %10s %8s %12s\n", "heads", "B x T", "split", "arch 3 ms",
              "arch 4 ms", "4 / 3", "O 4 vs 3");
  const LensCell cells[] = {{16, 64, {8192, 8192, 8192, 8192}, "4 x 8192"},
                            {16, 64, {32768}, "1 x 32768"},
                            {16, 32, {8192, 8192, 8192, 8192}, "4 x 8192"},
                            {16, 32, {32768}, "1 x 32768"},
                            {2, 8, {32768}, "1 x 32768"},
                            {16, 32, kPeersVarlen, "varlen 8, 32768"}};
  const int rounds = 5, reps = std::max(3, timing_reps(30) / rounds);
  // Declared with use_beta_sigmoid every cell, split where the rule splits; then with beta given post-sigmoid (the
  // guarded form: the fp16 build checking beta, the fp32 one after it, both unsplit) the cells the rule leaves whole.
  for (bool sig : {true, false}) {
    for (std::size_t ci = 0; ci < timing_cells(std::size(cells)); ++ci) {
      const LensCell& cell = cells[ci];
      auto [c, prob] = lens_case(cell, sig);
      ASSERT_TRUE(prob.is_good()) << prob.status().message();
      ASSERT_TRUE(sig ? linear_attention::f16_inverse_domain(*prob) : linear_attention::f16_inverse_guarded(*prob));
      const int j = static_cast<int>(linear_attention::fused_split_rule(*prob, gpu().props.sm_count));
      if (!sig && j > 0) continue;
      const int a = j > 0 ? 3000 + j : kFusedWs, b = j > 0 ? 4000 + j : kFusedWsH;
      std::vector<int> modes;
      for (int r = 0; r < rounds; ++r) modes.push_back(a), modes.push_back(b);
      std::vector<double> agree;
      const std::vector<double> t = time_modes(c, rng, reps, modes, &agree);
      std::vector<double> ta, tb;
      double o_diff = 0;
      for (int r = 0; r < rounds; ++r) {
        ta.push_back(t[2 * r]);
        tb.push_back(t[2 * r + 1]);
        o_diff = std::max(o_diff, agree[2 * r + 1]);
      }
      std::sort(ta.begin(), ta.end());
      std::sort(tb.begin(), tb.end());
      const double ma = ta[rounds / 2], mb = tb[rounds / 2];
      std::printf("[ gdn timing ] %3lld/%-4lld %-16s %6d %10.3f %10.3f %7.3fx %12.2e%s\n",
                  static_cast<long long>(cell.hqk), static_cast<long long>(cell.hv), cell.name, j, ma, mb, mb / ma,
                  o_diff, sig ? "" : "  (guarded)");
      EXPECT_LT(o_diff, 1e-2) << cell.name << ": PIPELINE_ARCH 4's O differs from 3's";
    }
  }
}

// The cells whose (sequence, head) pairs leave multiprocessors idle without a split, where fused_split_rule splits
// nothing (docs/linear_attention.md, "What is left"): 16/64 1 x 2048 and the peers' 16/32 varlen batch
// (bench/compare_gdn.py's VARLEN). The warp-specialised fused plan unsplit and at each span length shorter than the
// cell's longest sequence, interleaved on one set of inputs, with every split's O against the unsplit plan's: what
// the rule needs to split them, under both gate regimes (OPGRAPH_GDN_TIMING_GATES: with strong decay the span
// summaries run a few chunks, with weak decay every chunk of their span). And 16/32, 4 x 8192, whose equal lengths fill
// the device unsplit: what a split costs where nothing is gained (under GDN_SPLIT_ADAPT, kernels/gdn_params.cuh, its
// split_min_chunks leaves every sequence whole there, so this is the trial's overhead).
TEST_F(GdnGpu, TimingSplitIdleCells) {
  if (!gpu().api->event_create) GTEST_SKIP() << "driver without events";
  std::mt19937 rng(10);
  std::printf("[ gdn timing ] idle-multiprocessor cells: prefill, bf16, d = 128, l2norm, initial state in, final state "
              "out; CUDA events, median of 30\n");
  std::printf("[ gdn timing ] %s\n", timing_gates_name());
  const LensCell cells[] = {{16, 64, {2048}, "1 x 2048"},
                            {16, 32, kPeersVarlen, "varlen 8, 32768"},
                            {16, 32, {8192, 8192, 8192, 8192}, "4 x 8192"}};
  for (const LensCell& cell : cells) {
    auto [c, prob] = lens_case(cell, /*beta_sig=*/false);
    ASSERT_TRUE(prob.is_good()) << prob.status().message();
    const std::int64_t longest = *std::max_element(cell.lens.begin(), cell.lens.end());
    std::vector<int> modes = {kFusedWs};
    std::string spans = "0";
    for (int j : {8, 16, 32, 64, 128})
      if (64LL * j < longest) modes.push_back(3000 + j), spans += " / " + std::to_string(j);
    std::vector<double> agree;
    const std::vector<double> t = time_modes(c, rng, timing_reps(30), modes, &agree);
    std::string ms, ratios;
    double worst = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      char b[32];
      std::snprintf(b, sizeof b, "%s%.3f", i ? " / " : "", t[i]);
      ms += b;
      std::snprintf(b, sizeof b, "%s%.3f", i ? " / " : "", t[i] / t[0]);
      ratios += b;
      if (i > 0) worst = std::max(worst, agree[i]);
    }
    std::printf("[ gdn timing ] %3lld/%-4lld %-16s fused-ws split %s: %s ms (%s; rule: %lld; O vs unsplit <= %.2e)\n",
                static_cast<long long>(cell.hqk), static_cast<long long>(cell.hv), cell.name, spans.c_str(),
                ms.c_str(), ratios.c_str(), linear_attention::fused_split_rule(*prob, gpu().props.sm_count), worst);
    EXPECT_LT(worst, 1e-2) << cell.name << ": a split's O differs from the unsplit plan's";
  }
}

// What writing state_checkpoints costs the fused prefill (the plan the heuristics list first: warp-specialised,
// split where the rule splits): the same cell without checkpoints, every 1024 and every 64 tokens (fp32, the exact
// row count). Each cadence is a graph of its own, timed one after the other (not interleaved).
TEST_F(GdnGpu, TimingCheckpoints) {
  if (!gpu().api->event_create) GTEST_SKIP() << "driver without events";
  std::mt19937 rng(9);
  std::printf("[ gdn timing ] checkpoints: prefill, bf16, d = 128, l2norm, fp32 state; CUDA events, median of 30\n");
  std::printf("[ gdn timing ] %s\n", timing_gates_name());
  std::printf("[ gdn timing ] %-8s %-10s %6s %12s %12s %12s %14s\n", "heads", "B x T", "split", "none ms", "1024 ms",
              "64 ms", "GB (every 64)");
  const std::int64_t cells[][4] = {{16, 64, 4, 8192}, {16, 32, 1, 32768}, {2, 8, 1, 32768}};
  // Each cell at head dim d: the warp-specialised fused plan (fused) or the two-pass one, split where its rule splits.
  auto time_cells = [&](std::int64_t d, bool fused) {
    for (const auto& cell : cells) {
      Case c;
      c.l2 = true;
      c.d = d;
      c.hq = c.hk = cell[0];
      c.hv = cell[1];
      c.lens.assign(static_cast<std::size_t>(cell[2]), cell[3]);
      auto built = build(c);
      ASSERT_TRUE(built->g.validate().is_good());
      auto prob = linear_attention::analyze_gdn(built->g);
      ASSERT_TRUE(prob.is_good()) << prob.status().message();
      const long long j = fused ? linear_attention::fused_split_rule(*prob, gpu().props.sm_count)
                                : linear_attention::chain_split_rule(*prob, gpu().props.sm_count);
      const int mode = fused ? (j > 0 ? 3000 + static_cast<int>(j) : kFusedWs) : (j > 0 ? static_cast<int>(j) : 1);
      double ms[3];
      const std::int64_t every[3] = {0, 1024, 64};
      for (int i = 0; i < 3; ++i) {
        c.ckpt_every = every[i];
        ms[i] = time_modes(c, rng, timing_reps(30), {mode})[0];
      }
      const double gb = static_cast<double>(cell[2] * (cell[3] / 64) * std::max(cell[0], cell[1])) * d * d * 4 / 1e9;
      std::printf("[ gdn timing ] %3lld/%-4lld %lld x %-6lld %6lld %12.3f %12.3f %12.3f %14.2f\n",
                  static_cast<long long>(cell[0]), static_cast<long long>(cell[1]), static_cast<long long>(cell[2]),
                  static_cast<long long>(cell[3]), j, ms[0], ms[1], ms[2], gb);
    }
  };
  time_cells(128, true);
  // d = 64: the two-pass prefill writes them (split where chain_split_rule splits).
  std::printf("[ gdn timing ] checkpoints: two-pass prefill, d = 64 (else as above)\n");
  time_cells(64, false);
}

TEST_F(GdnGpu, TimingDecode) {
  if (!gpu().api->event_create) GTEST_SKIP() << "driver without events";
  std::mt19937 rng(8);
  std::printf("[ gdn timing ] decode, T = 1 a sequence, bf16, d = 128, fp32 state pool in place; median of 50;\n");
  std::printf("[ gdn timing ] GB/s counts the state read and written once (2 x N x HV x 128 x 128 x 4 bytes)\n");
  std::printf("[ gdn timing ] %-8s %-6s %10s %10s\n", "heads", "B", "ours us", "GB/s");
  for (std::int64_t hv : {32, 64})
    for (std::int64_t b : {1, 64, 256, 1024}) {
      Case c;
      c.l2 = true;
      c.hq = c.hk = 16;
      c.hv = hv;
      c.lens.assign(static_cast<std::size_t>(b), 1);
      c.pool = c.overwrite = true;
      c.n_pool = b;
      const double med = time_case(c, rng, 50);
      const double bytes = 2.0 * static_cast<double>(b * hv) * 128 * 128 * 4;
      std::printf("[ gdn timing ] %3d/%-4lld %-6lld %10.1f %10.0f\n", 16, static_cast<long long>(hv),
                  static_cast<long long>(b), med * 1e3, bytes / (med * 1e-3) / 1e9);
    }
}

}  // namespace
