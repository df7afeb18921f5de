// tests/linear_attention_gpu/test_la_bwd_gpu_timing.cpp — GdnBwdGpu.Timing* (run by the device scripts for
// figures, not checks): the five backward cells at every chain split, the fused forms against the prep and
// the scans (interleaved round by round), PIPELINE_ARCH 3 split on the one-sequence cells, what state_checkpoints
// buy (CUDA events around each execute, median), and the one-pass form's host cost a call (host wall time).
// The cases and plans are test_la_bwd_gpu.cpp's (gdn_bwd_gpu_case.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "engines/linear_attention/gdn_bwd.h"
#include "engines/linear_attention/gdn_bwd_onepass.h"
#include "engines/linear_attention/la_engine.h"
#include "gemm_gpu/gemm_gpu_util.h"
#include "linear_attention_gpu/gdn_bwd_gpu_case.h"
#include "linear_attention_gpu/la_gpu_util.h"
#include "opgraph/device.h"
#include "opgraph/op_graph.h"
#include "runtime/device_buffer.h"

namespace {

using namespace opgraph;
using namespace opgraph::la_testing;
using namespace opgraph::la_testing::gdn_bwd;
using gemm_testing::build_direct;
using gemm_testing::gpu;

// Inputs for timing (no reference at these sizes): uniform values straight into
// their encodings, cheap to draw for 32k-token cells.
std::map<std::int64_t, std::vector<unsigned char>> fast_inputs(const Case& c, const Problem& p, std::uint64_t seed) {
  UniformFill fill(seed);
  std::map<std::int64_t, std::vector<unsigned char>> h;
  h[p.q->get_uid()] = fill(p.q, -1, 1, false);
  h[p.k->get_uid()] = fill(p.k, -1, 1, false);
  h[p.v->get_uid()] = fill(p.v, -1, 1, false);
  h[p.d_o->get_uid()] = fill(p.d_o, -1, 1, false);
  h[p.gate->get_uid()] = timing_gates(fill, p.gate);
  h[p.beta->get_uid()] = fill(p.beta, 0, 1, false);
  if (p.init) h[p.init->get_uid()] = fill(p.init, -0.5f, 0.5f, false);
  if (p.d_final) h[p.d_final->get_uid()] = fill(p.d_final, -0.5f, 0.5f, false);
  if (p.ckpt) h[p.ckpt->get_uid()] = fill(p.ckpt, -0.5f, 0.5f, false);
  std::vector<double> cu{0};
  for (auto l : c.lens) cu.push_back(cu.back() + static_cast<double>(l));
  h[p.cu->get_uid()] = encode(cu, DataType::INT32);
  return h;
}

// Case c's fast_inputs and its outputs in device buffers (kept in `dev`) bound in `pack`; false where a buffer
// failed (recorded).
bool bind_buffers(const Case& c, const Problem& p, std::uint64_t seed, VariantPack& pack,
                  std::map<std::int64_t, std::unique_ptr<DeviceBuffer>>& dev) {
  const auto& api = *gpu().api;
  auto host = fast_inputs(c, p, seed);
  auto add = [&](std::int64_t uid, std::size_t bytes, const void* from) {
    auto b = std::make_unique<DeviceBuffer>(api, bytes);
    EXPECT_TRUE(b->status().is_good()) << b->status().message();
    if (b->status().is_bad()) return false;
    if (from) {
      EXPECT_EQ(api.memcpy_htod(b->ptr(), from, bytes), CUDA_SUCCESS);
    }
    pack.set(uid, reinterpret_cast<void*>(b->ptr()));
    dev[uid] = std::move(b);
    return true;
  };
  for (auto& [uid, bytes] : host)
    if (!add(uid, bytes.size(), bytes.data())) return false;
  for (const Checked& o : checked(p))
    if (!add(o.t->get_uid(), static_cast<std::size_t>(o.t->element_count()) * width(o.t->get_data_type()), nullptr))
      return false;
  return true;
}

// Case c's plans under each (PIPELINE_ARCH, CHAIN_SPLIT) of `forms` on one set of fast_inputs and one set of output
// buffers, each with its own workspace, timed interleaved: three warm-up executes each, then `rounds` rounds of one
// execute of each form in turn, CUDA events around each. The median a form (ms), the workspaces' bytes in
// *ws_bytes when given; empty when a plan or a buffer failed (recorded).
std::vector<double> time_interleaved(const Case& c, const std::vector<std::pair<std::int64_t, std::int64_t>>& forms,
                                     std::uint64_t seed, int rounds, std::vector<std::int64_t>* ws_bytes = nullptr) {
  const auto& api = *gpu().api;
  auto p = build(c);
  EXPECT_TRUE(p->g.validate().is_good());
  FactsCache facts(p->g, PlanTarget{gpu().props});
  PlanContext ctx{&facts};
  std::vector<std::unique_ptr<CompiledPlan>> plans;
  for (const auto& [arch, split] : forms) {
    const PlanConfig config{la_engine().id(), {{KnobType::PIPELINE_ARCH, arch}, {KnobType::CHAIN_SPLIT, split}}, {},
                            -1};
    auto plan = build_direct(la_engine(), p->g, config, ctx);
    EXPECT_TRUE(plan.is_good()) << "arch " << arch << " split " << split << ": " << plan.status().message();
    if (plan.is_bad()) return {};
    plans.push_back(std::move(plan.value()));
  }
  std::map<std::int64_t, std::unique_ptr<DeviceBuffer>> dev;
  VariantPack pack;
  if (!bind_buffers(c, *p, seed, pack, dev)) return {};
  std::vector<std::unique_ptr<DeviceBuffer>> ws;
  std::vector<ExecutionContext> ecs(plans.size());
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const std::int64_t wb = plans[i]->workspace_size();
    ws.push_back(std::make_unique<DeviceBuffer>(api, static_cast<std::size_t>(wb)));
    EXPECT_TRUE(ws.back()->status().is_good()) << "workspace of " << wb << " bytes";
    if (ws.back()->status().is_bad()) return {};
    ecs[i].stream = gpu().stream;
    ecs[i].device = &gpu().props;
    ecs[i].workspace = Workspace{reinterpret_cast<void*>(ws.back()->ptr()), wb};
    if (ws_bytes) ws_bytes->push_back(wb);
  }
  CUevent e0, e1;
  if (api.event_create(&e0, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    ADD_FAILURE() << "event_create";
    return {};
  }
  if (api.event_create(&e1, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    ADD_FAILURE() << "event_create";
    api.event_destroy(e0);
    return {};
  }
  std::vector<std::vector<float>> ms(plans.size());
  for (std::size_t i = 0; i < plans.size(); ++i)
    for (int w = 0; w < 3; ++w) EXPECT_TRUE(plans[i]->execute(pack, ecs[i]).is_good());
  for (int r = 0; r < rounds; ++r)
    for (std::size_t i = 0; i < plans.size(); ++i) {
      api.event_record(e0, gpu().stream);
      const Status st = plans[i]->execute(pack, ecs[i]);
      EXPECT_TRUE(st.is_good()) << st.message();
      api.event_record(e1, gpu().stream);
      EXPECT_EQ(api.event_synchronize(e1), CUDA_SUCCESS);
      float x = 0;
      api.event_elapsed_time(&x, e0, e1);
      ms[i].push_back(x);
    }
  api.event_destroy(e0);
  api.event_destroy(e1);
  std::vector<double> out;
  for (auto& m : ms) {
    std::sort(m.begin(), m.end());
    out.push_back(m[m.size() / 2]);
  }
  return out;
}

// The median of 20 executes (CUDA events around each) of case c's plan under CHAIN_SPLIT `split` (time_interleaved
// with one form); its workspace in *ws_bytes. Negative: not timed (a failure was recorded).
double time_case(const Case& c, std::int64_t split, std::uint64_t seed, std::int64_t* ws_bytes) {
  std::vector<std::int64_t> wb;
  const std::vector<double> ms = time_interleaved(c, {{c.arch, split}}, seed, 20, &wb);
  if (ms.empty()) return -1;
  *ws_bytes = wb[0];
  return ms[0];
}

struct Cell {
  std::int64_t hqk, hv, b, t;
  double fla;
};
const Cell kCells[] = {{16, 64, 4, 8192, 9.922},
                       {16, 64, 1, 32768, 10.734},
                       {16, 32, 4, 8192, 5.661},
                       {16, 32, 1, 32768, 6.720},
                       {2, 8, 1, 32768, 2.709}};
Case cell_case(const Cell& cell) {
  Case c;
  c.l2 = true;
  c.hq = c.hk = cell.hqk;
  c.hv = cell.hv;
  c.lens.assign(static_cast<std::size_t>(cell.b), cell.t);
  return c;
}
// What the heuristics pick for case c on this device: the scans' chain split rule, the fused forms' split rule, and
// the (PIPELINE_ARCH, CHAIN_SPLIT) of the family's first proposal (gdn_bwd_proposals).
struct Picks {
  long long rule = 0, fused_rule = 0;
  std::pair<std::int64_t, std::int64_t> first{0, 0};
};
Picks picks_of(const Case& c) {
  Picks out;
  auto p = build(c);
  EXPECT_TRUE(p->g.validate().is_good());
  auto prob = linear_attention::analyze_gdn_bwd(p->g);
  EXPECT_TRUE(prob.is_good()) << prob.status().message();
  if (prob.is_bad()) return out;
  const long long sms = gpu().props.sm_count;
  out.rule = linear_attention::gdn_bwd_chain_split_rule(*prob, sms);
  out.fused_rule = linear_attention::gdn_bwd_fused_split_rule(*prob, sms);
  std::vector<plan::Proposal> proposals;
  linear_attention::gdn_bwd_proposals(la_engine(), p->g, sms, proposals);
  EXPECT_FALSE(proposals.empty());
  if (!proposals.empty()) {
    const Knobs& k = proposals.front().config.knobs;
    out.first = {k.at(KnobType::PIPELINE_ARCH), k.at(KnobType::CHAIN_SPLIT)};
  }
  return out;
}

// The five cells, backward alone (every gdn_bwd kernel, no forward): median
// of 20 executes, CUDA events around each; fla's backward (torch.autograd.grad of
// (o, final_state) against (q, k, v, g, beta), 2026-12-01 on this H200) beside it. The heuristics'
// first plan first (arch 3 where first_plan says so), then the prep and scans' at each split.
// Run by the device script for the figures, not a check.
TEST_F(GdnBwdGpu, TimingFiveCells) {
  if (!gpu().api->event_create) GTEST_SKIP() << "driver without events";
  std::printf("[ gdn_bwd timing ] %s\n", timing_gates_name());
  std::printf("[ gdn_bwd timing ] bf16, d = 128, l2norm in kernel, initial state, d_final_state; median of 20;\n"
              "[ gdn_bwd timing ] plan: PIPELINE_ARCH/CHAIN_SPLIT (* the heuristics' first plan)\n");
  std::printf("[ gdn_bwd timing ] %-8s %-10s %6s %10s %10s %8s %12s\n", "heads", "B x T", "plan", "ours ms", "fla ms",
              "ratio", "workspace");
  for (const Cell& cell : kCells) {
    const Picks pk = picks_of(cell_case(cell));
    // The first plan, then the scans' plans: whole, and split where the cell is one sequence (or at the rule's pick).
    std::vector<std::pair<std::int64_t, std::int64_t>> forms = {pk.first};
    for (std::int64_t split : {0, 16, 32, 64, 128})
      if ((split == 0 || split == pk.rule || cell.b == 1) && std::make_pair(std::int64_t{0}, split) != pk.first)
        forms.push_back({0, split});
    for (const auto& [arch, split] : forms) {
      Case c = cell_case(cell);
      c.arch = arch;
      std::int64_t wb = 0;
      const double med = time_case(c, split, static_cast<std::uint64_t>(cell.hv * 131 + cell.b), &wb);
      ASSERT_GE(med, 0);
      std::printf("[ gdn_bwd timing ] %3lld/%-4lld %lld x %-6lld %lld/%-4lld%s %9.3f %10.3f %7.2fx %9.2f GB\n",
                  static_cast<long long>(cell.hqk), static_cast<long long>(cell.hv), static_cast<long long>(cell.b),
                  static_cast<long long>(cell.t), static_cast<long long>(arch), static_cast<long long>(split),
                  std::make_pair(arch, split) == pk.first ? "*" : " ", med, cell.fla, med / cell.fla,
                  static_cast<double>(wb) / 1e9);
    }
  }
}

// The fused forms against the prep and the scans on the five cells (split 0 all; the same inputs and outputs): the
// backward's time under PIPELINE_ARCH 0, 2 (the fused forward recompute) and 3 (and the fused reverse scan),
// interleaved round by round (each round one execute of each form, CUDA events around each), the medians and their
// ratios to 0. Figures, not a check.
TEST_F(GdnBwdGpu, TimingFusedRecompute) {
  if (!gpu().api->event_create) GTEST_SKIP() << "driver without events";
  std::printf("[ gdn_bwd fused ] %s\n", timing_gates_name());
  std::printf("[ gdn_bwd fused ] bf16, d = 128, l2norm, initial state, d_final_state; unsplit; the three forms\n"
              "[ gdn_bwd fused ] interleaved round by round, median of 20 rounds\n");
  std::printf("[ gdn_bwd fused ] %-8s %-10s %10s %10s %10s %8s %8s\n", "heads", "B x T", "arch 0 ms", "arch 2 ms",
              "arch 3 ms", "2 / 0", "3 / 0");
  for (const Cell& cell : kCells) {
    const Case c = cell_case(cell);
    const auto seed = static_cast<std::uint64_t>(cell.hv * 131 + cell.b);
    const std::vector<double> ms = time_interleaved(c, {{0, 0}, {2, 0}, {3, 0}}, seed, 20);
    ASSERT_EQ(ms.size(), 3u);
    std::printf("[ gdn_bwd fused ] %3lld/%-4lld %lld x %-6lld %10.3f %10.3f %10.3f %7.3fx %7.3fx\n",
                static_cast<long long>(cell.hqk), static_cast<long long>(cell.hv), static_cast<long long>(cell.b),
                static_cast<long long>(cell.t), ms[0], ms[1], ms[2], ms[1] / ms[0], ms[2] / ms[0]);
  }
}

using Form = std::pair<std::int64_t, std::int64_t>;  // (PIPELINE_ARCH, CHAIN_SPLIT)
// The one-sequence cells: each cell's forms (forms_of its picks) interleaved round by round on the same inputs
// (median of 20 rounds), a row each ("[ gdn_bwd <tag> ]"), marked where `marked` says, against the first form's time.
void time_split_forms(const char* tag, const std::function<std::vector<Form>(const Picks&)>& forms_of,
                      const std::function<bool(const Picks&, const Form&)>& marked) {
  for (const Cell& cell : kCells) {
    if (cell.b != 1) continue;
    const Case c = cell_case(cell);
    const Picks pk = picks_of(c);
    const std::vector<Form> forms = forms_of(pk);
    const auto seed = static_cast<std::uint64_t>(cell.hv * 131 + cell.b);
    const std::vector<double> ms = time_interleaved(c, forms, seed, 20);
    ASSERT_EQ(ms.size(), forms.size());
    for (std::size_t i = 0; i < forms.size(); ++i)
      std::printf("[ gdn_bwd %s ] %3lld/%-4lld %lld x %-6lld arch %lld J %-3lld%s %10.3f %7.3fx\n", tag,
                  static_cast<long long>(cell.hqk), static_cast<long long>(cell.hv), static_cast<long long>(cell.b),
                  static_cast<long long>(cell.t), static_cast<long long>(forms[i].first),
                  static_cast<long long>(forms[i].second), marked(pk, forms[i]) ? "*" : " ", ms[i], ms[i] / ms[0]);
  }
}

// PIPELINE_ARCH 3's chain split on the one-sequence cells (where its unsplit form, one CTA a chain, loses): the
// prep and scans' plan under their split rule (the first plan before the fused split), PIPELINE_ARCH 3 whole, and 3
// at spans of 32 .. 256 chunks, interleaved round by round on the same inputs (median of 20 rounds), each against
// the scans' plan; the fused split rule's pick marked. Figures, not a check.
TEST_F(GdnBwdGpu, TimingFusedSplit) {
  if (!gpu().api->event_create) GTEST_SKIP() << "driver without events";
  std::printf("[ gdn_bwd fsplit ] %s\n", timing_gates_name());
  std::printf("[ gdn_bwd fsplit ] bf16, d = 128, l2norm, initial state, d_final_state; interleaved, median of 20\n");
  std::printf("[ gdn_bwd fsplit ] %-8s %-10s %-12s %10s %8s\n", "heads", "B x T", "plan", "ms", "/ scans");
  time_split_forms(
      "fsplit",
      [](const Picks& pk) {
        std::vector<Form> forms = {{0, pk.rule}, {3, 0}};
        for (std::int64_t j : {32, 64, 128, 256}) forms.push_back({3, j});
        return forms;
      },
      [](const Picks& pk, const Form& f) { return f.first == 3 && f.second == pk.fused_rule && pk.fused_rule > 0; });
}

// The one-pass form's chain split on the one-sequence cells (where one CTA a chain leaves most multiprocessors idle):
// PIPELINE_ARCH 3 at the fused split rule's pick (the first plan there before it), 5 whole, and 5 at spans of 16 ..
// 256 chunks, interleaved round by round on the same inputs (median of 20 rounds), each against the first of them.
// Figures, not a check.
TEST_F(GdnBwdGpu, TimingOnePassSplit) {
  if (!gpu().api->event_create) GTEST_SKIP() << "driver without events";
  std::printf("[ gdn_bwd 1split ] %s\n", timing_gates_name());
  std::printf("[ gdn_bwd 1split ] bf16, d = 128, l2norm, initial state, d_final_state; interleaved, median of 20\n");
  std::printf("[ gdn_bwd 1split ] %-8s %-10s %-12s %10s %8s\n", "heads", "B x T", "plan", "ms", "/ 3 split");
  time_split_forms(
      "1split",
      [](const Picks& pk) {
        std::vector<Form> forms = {{3, pk.fused_rule}, {5, 0}};
        for (std::int64_t j : {16, 32, 64, 128, 256}) forms.push_back({5, j});
        return forms;
      },
      [](const Picks& pk, const Form& f) { return f == pk.first; });
}

// What state_checkpoints buy the backward (the memory / time trade): each cell's backward without them (the
// heuristics' first plan, and the prep and scans' plan under their split rule, interleaved), then given the forward's
// every c tokens (fp32 rows; the forward recompute then runs spans of c tokens at once) under PIPELINE_ARCH 3 unsplit
// (rule B9 refuses its split with checkpoints) and the scans' plan unsplit and under its split rule, interleaved;
// each against the first plan without them. The checkpoints' bytes (held from the forward to the backward) beside it.
// The forward's cost of writing them is GdnGpu.TimingCheckpoints. Figures, not a check.
TEST_F(GdnBwdGpu, TimingCheckpoints) {
  if (!gpu().api->event_create) GTEST_SKIP() << "driver without events";
  std::printf("[ gdn_bwd ckpt ] %s\n", timing_gates_name());
  std::printf("[ gdn_bwd ckpt ] bf16, d = 128, l2norm, initial state, d_final_state; fp32 checkpoints; interleaved "
              "within a cadence, median of 20\n");
  std::printf("[ gdn_bwd ckpt ] %-8s %-10s %6s %-10s %10s %8s %12s %12s\n", "heads", "B x T", "every", "plan",
              "ours ms", "/ first", "checkpoints", "workspace");
  for (const Cell& cell : kCells) {
    Case c = cell_case(cell);
    const Picks pk = picks_of(c);
    const auto seed = static_cast<std::uint64_t>(cell.hv * 131 + cell.b);
    auto row = [&](std::int64_t every, std::pair<std::int64_t, std::int64_t> form, double ms, double first,
                   std::int64_t wb) {
      const double ckpt_bytes =
          every ? static_cast<double>(c.t() / every) * static_cast<double>(c.ho()) * 128 * 128 * 4 : 0.0;
      char plan[32];
      std::snprintf(plan, sizeof(plan), "%lld/%lld%s", static_cast<long long>(form.first),
                    static_cast<long long>(form.second), every == 0 && form == pk.first ? "*" : "");
      std::printf("[ gdn_bwd ckpt ] %3lld/%-4lld %lld x %-6lld %6s %-10s %10.3f %8.3f %9.2f GB %9.2f GB\n",
                  static_cast<long long>(cell.hqk), static_cast<long long>(cell.hv), static_cast<long long>(cell.b),
                  static_cast<long long>(cell.t), every ? std::to_string(every).c_str() : "none", plan, ms,
                  ms / first, ckpt_bytes / 1e9, static_cast<double>(wb) / 1e9);
    };
    std::vector<std::pair<std::int64_t, std::int64_t>> none = {pk.first};
    if (pk.first != std::make_pair(std::int64_t{0}, static_cast<std::int64_t>(pk.rule))) none.push_back({0, pk.rule});
    std::vector<std::int64_t> wb;
    const std::vector<double> base = time_interleaved(c, none, seed, 20, &wb);
    ASSERT_EQ(base.size(), none.size());
    for (std::size_t i = 0; i < none.size(); ++i) row(0, none[i], base[i], base[0], wb[i]);
    for (std::int64_t every : {4096, 1024, 256, 64}) {
      c.ckpt_every = every;
      std::vector<std::pair<std::int64_t, std::int64_t>> forms = {{3, 0}, {0, 0}};
      if (pk.rule > 0) forms.push_back({0, pk.rule});
      wb.clear();
      const std::vector<double> ms = time_interleaved(c, forms, seed, 20, &wb);
      ASSERT_EQ(ms.size(), forms.size());
      for (std::size_t i = 0; i < forms.size(); ++i) row(every, forms[i], ms[i], base[0], wb[i]);
    }
  }
}

// The host cost of the one-pass form's execute (PIPELINE_ARCH 5: its launches, the two memsets and its ten TMA maps)
// at 2/8, one sequence of 256 tokens: host wall time a call, the minimum over 20 bursts of 16 executes each from a
// drained stream, with the same pointers every call (the plan's OnePassMapCache hits) and with the workspace rotated
// over kEntries + 1 buffers (every call encodes the ten maps), the bursts of the two interleaved; the difference is
// what the cache saves a call. Figures, not a check.
TEST_F(GdnBwdGpu, TimingHostOnePass) {
  const auto& api = *gpu().api;
  Case c;
  c.l2 = true;
  c.hq = c.hk = 2;
  c.hv = 8;
  c.lens = {256};
  auto p = build(c);
  ASSERT_TRUE(p->g.validate().is_good());
  FactsCache facts(p->g, PlanTarget{gpu().props});
  auto plan = build_direct(la_engine(), p->g,
                           PlanConfig{la_engine().id(), {{KnobType::PIPELINE_ARCH, 5}, {KnobType::CHAIN_SPLIT, 0}},
                                      {}, -1},
                           PlanContext{&facts});
  ASSERT_TRUE(plan.is_good()) << plan.status().message();
  std::map<std::int64_t, std::unique_ptr<DeviceBuffer>> dev;
  VariantPack pack;
  ASSERT_TRUE(bind_buffers(c, *p, 5, pack, dev));
  const std::int64_t wb = (*plan)->workspace_size();
  std::vector<std::unique_ptr<DeviceBuffer>> ws;
  std::vector<ExecutionContext> ecs;
  for (std::size_t i = 0; i <= linear_attention::OnePassMapCache::kEntries; ++i) {
    ws.push_back(std::make_unique<DeviceBuffer>(api, static_cast<std::size_t>(wb)));
    ASSERT_TRUE(ws.back()->status().is_good());
    ExecutionContext e;
    e.stream = gpu().stream;
    e.device = &gpu().props;
    e.workspace = Workspace{reinterpret_cast<void*>(ws.back()->ptr()), wb};
    ecs.push_back(e);
  }
  for (const ExecutionContext& e : ecs) ASSERT_TRUE((*plan)->execute(pack, e).is_good());
  ASSERT_EQ(api.stream_synchronize(static_cast<CUstream>(gpu().stream)), CUDA_SUCCESS);
  double best[2] = {1e30, 1e30};
  std::size_t next = 0;
  for (int r = 0; r < 20; ++r)
    for (int rotate = 0; rotate < 2; ++rotate) {
      if (!rotate) {
        ASSERT_TRUE((*plan)->execute(pack, ecs[0]).is_good());  // its maps back in the cache, untimed
      }
      ASSERT_EQ(api.stream_synchronize(static_cast<CUstream>(gpu().stream)), CUDA_SUCCESS);
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 16; ++i) {
        const ExecutionContext& e = rotate ? ecs[next++ % ecs.size()] : ecs[0];
        ASSERT_TRUE((*plan)->execute(pack, e).is_good());
      }
      const auto t1 = std::chrono::steady_clock::now();
      best[rotate] = std::min(best[rotate], std::chrono::duration<double, std::micro>(t1 - t0).count() / 16);
    }
  ASSERT_EQ(api.stream_synchronize(static_cast<CUstream>(gpu().stream)), CUDA_SUCCESS);
  std::printf("[ gdn_bwd host ] PIPELINE_ARCH 5, 2/8, 1 x 256: execute %.2f us a call with its maps cached, %.2f us "
              "encoding them (the ten maps: %.2f us)\n",
              best[0], best[1], best[1] - best[0]);
}

}  // namespace
