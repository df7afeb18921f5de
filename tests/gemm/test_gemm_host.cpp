// The gemm engine's host side past the basics of test_gemm_exec.cpp, without a
// GPU (fake driver table, gemm_fake_driver.h):
// StreamScratch's bound — many fresh streams in sequence keep at most N slots
// (reused least recently used first, nothing freed while the plan lives); a
// stream's own slot costs no driver call on acquire; an untrackable slot
// (captured) is not handed over; an
// idle slot is preferred to one in flight; with every slot in flight the new
// stream waits on the device (cuStreamWaitEvent on the slot's last launch);
// a leased slot is never handed over (the host waits for its release); a slot
// whose event could not be recorded stays with its stream; concurrent streams
// from many threads never hold one slot at once;
// ContextRestore — the caller's context (or none, before cuInit) put back;
// launch_plan — resident clusters, schedule and grid computed once from the
// driver's answer; only GRAPH_NOT_SUPPORTED falls back to sm_count / CLUSTER_M,
// other failures are returned; the override; the same grid as grid_of.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <random>
#include <set>
#include <thread>

#include "engines/gemm/gemm_engine.h"
#include "engines/gemm/gemm_exec.h"
#include "gemm_fake_driver.h"
#include "opgraph/op_graph.h"

using namespace opgraph;
using namespace opgraph::gemm;
using namespace opgraph::gemm_fake;

namespace {

class GemmHost : public FakeDriverTest {};

// One execute: lease, launch (enqueued), release.
StreamScratch::Slot use(StreamScratch& s, const runtime::CudaDriverApi& api, CUstream st) {
  auto slot = s.acquire(api, st);
  EXPECT_TRUE(slot.is_good()) << slot.status().message();
  if (slot.is_bad()) return {};
  EXPECT_TRUE(s.release(api, *slot, st, true).is_good());
  return *slot;
}

}  // namespace

TEST_F(GemmHost, ManyFreshStreamsInSequenceKeepTheSlotBound) {
  constexpr std::size_t kN = StreamScratch::kMaxSlots;
  StreamScratch s(4096 * (1 + rng_() % 64), 64, scratch_ctx());
  std::set<std::uintptr_t> used;
  std::vector<std::uint64_t> order;
  const int rounds = static_cast<int>(kN) * 6;
  for (int i = 0; i < rounds; ++i) {
    std::uintptr_t h;
    do h = 0x10000 + 0x10 * (rng_() % 100000); while (!used.insert(h).second);  // a stream never seen before
    const StreamScratch::Slot slot = use(s, api_, stream_handle(h));
    order.push_back(slot.partials);
    EXPECT_LE(s.slot_count(), kN);
    EXPECT_LE(fake_.live.size(), kN);
    fake_.finish_stream(stream_handle(h));  // the request's kernel completed
  }
  EXPECT_EQ(s.slot_count(), kN);
  EXPECT_EQ(fake_.memsets.size(), kN) << "a reused slot was zeroed again (or a new one not)";
  EXPECT_TRUE(fake_.freed.empty()) << "a slot was freed while the plan lives";
  EXPECT_TRUE(fake_.waits.empty()) << "idle slots were handed over with a device wait";
  // Least recently used first: in sequence, the slot of N streams ago.
  for (int i = static_cast<int>(kN); i < rounds; ++i) EXPECT_EQ(order[i], order[i - kN]) << "round " << i;
}

TEST_F(GemmHost, AnIdleSlotIsHandedOverBeforeOneInFlight) {
  StreamScratch s(8192, 64, scratch_ctx(), 3);
  const CUstream a = stream_handle(0xA0), b = stream_handle(0xB0), c = stream_handle(0xC0);
  const auto sa = use(s, api_, a), sb = use(s, api_, b), sc = use(s, api_, c);
  use(s, api_, a);  // a is now the most recent
  fake_.finish_stream(b);  // only b's launch finished
  const std::size_t waits = fake_.waits.size();
  const auto sd = use(s, api_, stream_handle(0xD0));
  EXPECT_EQ(sd.partials, sb.partials) << "the finished slot, not the least recently used in flight";
  EXPECT_EQ(fake_.waits.size(), waits) << "a finished slot was handed over with a device wait";
  fake_.finish_all();
  // All idle: least recently used is c's (a was used again, d is newest).
  const auto se = use(s, api_, stream_handle(0xE0));
  EXPECT_EQ(se.partials, sc.partials);
  EXPECT_EQ(use(s, api_, a).partials, sa.partials) << "a kept its slot";
  EXPECT_EQ(s.slot_count(), 3u);
}

TEST_F(GemmHost, WithEverySlotInFlightTheNewStreamWaitsOnTheDevice) {
  StreamScratch s(8192, 64, scratch_ctx(), 2);
  const CUstream a = stream_handle(0xA0), b = stream_handle(0xB0), c = stream_handle(0xC0);
  const auto sa = use(s, api_, a);
  use(s, api_, b);
  ASSERT_EQ(fake_.events.size(), 2u);
  CUevent ea = nullptr;
  for (const auto& [e, st] : fake_.events)
    if (st.stream == a) ea = e;
  ASSERT_NE(ea, nullptr);
  const auto sc = use(s, api_, c);
  EXPECT_EQ(sc.partials, sa.partials) << "the least recently used slot";
  ASSERT_EQ(fake_.waits.size(), 1u);
  EXPECT_EQ(fake_.waits[0].stream, c);
  EXPECT_EQ(fake_.waits[0].event, ea) << "c must wait for a's last launch on that slot";
  EXPECT_EQ(fake_.events[ea].stream, c) << "the slot's event now follows c's launch";
  EXPECT_EQ(fake_.live.size(), 2u);
  // A refused wait hands nothing over: b keeps its slot, the error names the call.
  fake_.fail_wait = 1;
  auto r = s.acquire(api_, stream_handle(0xD0));
  ASSERT_TRUE(r.is_bad());
  EXPECT_NE(r.status().message().find("cuStreamWaitEvent"), std::string::npos) << r.status().message();
  EXPECT_EQ(fake_.waits.size(), 1u);
}

// A stream's own slot costs no driver call on acquire (the stream orders its
// launches; under stream capture a query or a cross-capture wait is refused),
// one cuEventRecord on release.
TEST_F(GemmHost, AStreamsOwnSlotCostsNoDriverCallOnAcquire) {
  StreamScratch s(8192, 64, scratch_ctx(), 2);
  const CUstream a = stream_handle(0xA0);
  const auto first = use(s, api_, a);
  const int queries = fake_.queries;
  for (int i = 0; i < 5; ++i) {
    auto r = s.acquire(api_, a);
    ASSERT_TRUE(r.is_good());
    EXPECT_EQ(r->partials, first.partials);
    ASSERT_TRUE(s.release(api_, *r, a, true).is_good());
  }
  EXPECT_EQ(fake_.queries, queries);
  EXPECT_TRUE(fake_.waits.empty());
  ASSERT_EQ(fake_.events.size(), 1u);
  EXPECT_EQ(fake_.events.begin()->second.records, 6) << "one record per launch";
}

// A slot whose event cannot answer (last recorded under stream capture: a
// graph may replay it) is not handed over; with every slot so, the new stream
// gets one past the bound rather than waiting for ever.
TEST_F(GemmHost, AnUntrackableSlotIsNotHandedOver) {
  StreamScratch s(8192, 64, scratch_ctx(), 2);
  const CUstream a = stream_handle(0xA0), b = stream_handle(0xB0);
  const auto sa = use(s, api_, a);
  const auto sb = use(s, api_, b);
  fake_.finish_all();
  for (auto& [e, st] : fake_.events)
    if (st.stream == a) st.captured = true;
  const auto sc = use(s, api_, stream_handle(0xC0));
  EXPECT_EQ(sc.partials, sb.partials) << "the captured slot was handed over";
  EXPECT_EQ(s.slot_count(), 2u);
  for (auto& [e, st] : fake_.events) st.captured = true;
  const auto sd = use(s, api_, stream_handle(0xD0));
  EXPECT_NE(sd.partials, sa.partials);
  EXPECT_NE(sd.partials, sc.partials);
  EXPECT_EQ(s.slot_count(), 3u) << "every slot untrackable: one more past the bound";
  EXPECT_TRUE(fake_.waits.empty());
  // a's next eager execute re-records its event: trackable (and handed over) again.
  EXPECT_EQ(use(s, api_, a).partials, sa.partials);
  fake_.finish_all();
  for (auto& [e, st] : fake_.events) st.captured = st.stream != a;
  EXPECT_EQ(use(s, api_, stream_handle(0xE0)).partials, sa.partials);
}

TEST_F(GemmHost, ALeasedSlotIsNeverHandedOver) {
  StreamScratch s(8192, 64, scratch_ctx(), 1);
  const CUstream a = stream_handle(0xA0), b = stream_handle(0xB0);
  auto held = s.acquire(api_, a);
  ASSERT_TRUE(held.is_good());
  std::atomic<bool> got{false};
  StreamScratch::Slot other{};
  std::thread t([&] {
    auto r = s.acquire(api_, b);
    ASSERT_TRUE(r.is_good());
    other = *r;
    got = true;
    EXPECT_TRUE(s.release(api_, *r, b, true).is_good());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(got.load()) << "b was given a's slot while a's launch was being enqueued";
  ASSERT_TRUE(s.release(api_, *held, a, true).is_good());
  t.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(other.partials, held->partials);
  ASSERT_EQ(fake_.waits.size(), 1u) << "a's launch had not finished: b must wait for it";
  EXPECT_EQ(fake_.waits[0].stream, b);
  EXPECT_EQ(s.slot_count(), 1u);
}

TEST_F(GemmHost, ARefusedLaunchOrAFailedRecordKeepsTheSlotSafe) {
  StreamScratch s(8192, 64, scratch_ctx(), 1);
  const CUstream a = stream_handle(0xA0), b = stream_handle(0xB0), c = stream_handle(0xC0);
  // A launch the driver refused never ran: the slot is idle, handed over without a wait.
  auto r = s.acquire(api_, a);
  ASSERT_TRUE(r.is_good());
  EXPECT_TRUE(s.release(api_, *r, a, false).is_good());
  const auto sb = use(s, api_, b);
  EXPECT_EQ(sb.partials, r->partials);
  EXPECT_TRUE(fake_.waits.empty());
  fake_.finish_all();
  // b's next record fails: the error names it, and the slot stays with b.
  fake_.fail_record = 1;
  auto again = s.acquire(api_, b);
  ASSERT_TRUE(again.is_good());
  Status rec = s.release(api_, *again, b, true);
  ASSERT_TRUE(rec.is_bad());
  EXPECT_NE(rec.message().find("cuEventRecord"), std::string::npos) << rec.message();
  const auto sc = use(s, api_, c);
  EXPECT_NE(sc.partials, sb.partials) << "a slot whose launch cannot be tracked was handed over";
  EXPECT_EQ(s.slot_count(), 2u) << "every slot pinned: one more past the bound";
  EXPECT_EQ(use(s, api_, b).partials, sb.partials);
}

TEST_F(GemmHost, WithoutTheEventApiEveryStreamKeepsItsOwnSlot) {
  const runtime::CudaDriverApi old = fake_api(false);
  StreamScratch s(8192, 64, scratch_ctx(), 2);
  std::set<std::uint64_t> slots;
  for (std::uintptr_t h : {0xA0u, 0xB0u, 0xC0u}) slots.insert(use(s, old, stream_handle(h)).partials);
  EXPECT_EQ(slots.size(), 3u) << "an untracked slot was shared between streams";
  EXPECT_TRUE(fake_.waits.empty());
}

TEST_F(GemmHost, ConcurrentStreamsNeverHoldOneSlotAtOnce) {
  constexpr int kThreads = 6, kCalls = 400;
  StreamScratch s(1 << 14, 256, scratch_ctx(), 3);
  std::mutex held_mu;
  std::map<std::uint64_t, int> held;  // slot -> the thread enqueueing on it
  std::atomic<int> clashes{0}, failures{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t) * 7919u + 1u);
      for (int i = 0; i < kCalls; ++i) {
        // Thread t's own streams (distinct from every other thread's).
        const CUstream st = stream_handle(0x100000 * static_cast<std::uintptr_t>(t + 1) + 0x10 * (rng() % 4));
        auto r = s.acquire(api_, st);
        if (r.is_bad()) {
          ++failures;
          continue;
        }
        {
          std::lock_guard<std::mutex> lock(held_mu);
          if (!held.emplace(r->partials, t).second) ++clashes;
        }
        std::this_thread::yield();
        {
          std::lock_guard<std::mutex> lock(held_mu);
          held.erase(r->partials);
        }
        if (s.release(api_, *r, st, true).is_bad()) ++failures;
        if (rng() % 3 == 0) fake_.finish_stream(st);
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(clashes.load(), 0) << "two streams enqueued on one slot at once";
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(s.slot_count(), 3u);
  EXPECT_EQ(fake_.live.size(), 3u);
  EXPECT_TRUE(fake_.freed.empty());
}

TEST_F(GemmHost, ContextRestorePutsBackTheCallersContext) {
  const CUcontext runtime_ctx = reinterpret_cast<CUcontext>(0xC0), theirs = reinterpret_cast<CUcontext>(0xD0);
  std::thread t([&] {
    t_current = theirs;
    {
      ContextRestore keep(api_);
      api_.ctx_set_current(runtime_ctx);  // what KernelRuntime::open does
    }
    EXPECT_EQ(t_current, theirs);
    t_current = nullptr;
    {
      ContextRestore keep(api_);
      api_.ctx_set_current(runtime_ctx);
    }
    EXPECT_EQ(t_current, nullptr);
    // Before cuInit nothing is current: after the open, nothing is again.
    g_fake->not_initialized = CUDA_ERROR_NOT_INITIALIZED;
    {
      ContextRestore keep(api_);
      g_fake->not_initialized = CUDA_SUCCESS;  // cuInit ran inside
      api_.ctx_set_current(runtime_ctx);
    }
    EXPECT_EQ(t_current, nullptr);
    // Nothing changed inside: no set call at exit.
    t_current = theirs;
    const int sets = g_fake->set_calls;
    { ContextRestore keep(api_); }
    EXPECT_EQ(g_fake->set_calls, sets);
  });
  t.join();
}

namespace {

// A [1, m, k] @ B [1, k, n] (K-major B), bf16; its kernel view under v2 `c`.
GemmProblem v2_problem(std::int64_t m, std::int64_t n, std::int64_t k) {
  OpGraph g;
  g.set_name("gemm_host").set_compute_data_type(DataType::FLOAT).set_intermediate_data_type(DataType::FLOAT);
  auto a = g.tensor({1, m, k}, DataType::BFLOAT16, "A");
  auto b = g.tensor({1, k, n}, DataType::BFLOAT16, "B");
  b->set_stride({k * n, 1, k});
  a->set_alignment(16);
  b->set_alignment(16);
  g.matmul(a, b)->set_output(true).set_name("Y").set_data_type(DataType::BFLOAT16);
  EXPECT_TRUE(g.validate().is_good());
  auto p = analyze_gemm(g);
  EXPECT_TRUE(p.is_good()) << p.status().message();
  return p.is_good() ? *p : GemmProblem{};
}

GemmConfig clustered(int split = 1) {
  GemmConfig c;
  c.version = 2;
  c.tile_n = 128;
  c.stages = 6;
  c.cluster_m = 2;
  c.split_k = split;
  return c;
}

}  // namespace

TEST(GemmLaunchPlan, ClusteredGridsAreSizedByTheDriversAnswer) {
  std::mt19937 rng(std::random_device{}());
  // 32 x 32 pairs of row tiles by column tiles: far more units than resident pairs.
  const GemmProblem kp = v2_problem(8192, 4096, 512);
  const int answer = 40 + static_cast<int>(rng() % 26);
  int asked = 0;
  runtime::LaunchDims probe;
  auto lp = launch_plan(kp, clustered(), 132, [&](const runtime::LaunchDims& d) -> Result<int> {
    ++asked;
    probe = d;
    return answer;
  });
  ASSERT_TRUE(lp.is_good()) << lp.status().message();
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(probe.cluster[0], 2u);
  EXPECT_EQ(probe.block[0], 384u);
  EXPECT_EQ(probe.shared_bytes, smem_bytes(kp, clustered()));
  EXPECT_EQ(probe.grid[0] % 2, 0u) << "the probe's grid is a whole number of clusters";
  EXPECT_EQ(lp->resident, answer);
  EXPECT_EQ(lp->sched.resident, answer);
  EXPECT_EQ(lp->dims.grid[0], 2u * static_cast<unsigned>(answer));
  EXPECT_EQ(lp->dims.cluster[0], 2u);
  // Split K: scratch sized by the schedule the grid walks: at least 64 row
  // tiles x 32 column tiles x 2 splits of 128 x 128 fp32, 2 counters a tile.
  auto split = launch_plan(kp, clustered(2), 132, [&](const runtime::LaunchDims&) -> Result<int> { return answer; });
  ASSERT_TRUE(split.is_good());
  EXPECT_EQ(split->sched.splits, 2);
  EXPECT_EQ(split->sched.units, 32 * 32 * 2);
  EXPECT_EQ(split->partial_bytes, v2_partial_bytes(clustered(2), split->sched));
  EXPECT_EQ(split->counter_bytes, v2_counter_bytes(clustered(2), split->sched));
  EXPECT_GE(split->partial_bytes, 64LL * 32 * 2 * 128 * 128 * 4);
  EXPECT_GE(split->counter_bytes, 64LL * 32 * 2 * 4);
  // CLUSTER_M = 1 and v1 never ask.
  GemmConfig single = clustered();
  single.cluster_m = 1;
  asked = 0;
  auto count = [&](const runtime::LaunchDims&) -> Result<int> { return ++asked, answer; };
  ASSERT_TRUE(launch_plan(kp, single, 132, count).is_good());
  ASSERT_TRUE(launch_plan(kp, GemmConfig{}, 132, count).is_good());
  EXPECT_EQ(asked, 0);
}

TEST(GemmLaunchPlan, OnlyNotSupportedFallsBackOtherFailuresAreReturned) {
  const GemmProblem kp = v2_problem(8192, 4096, 512);
  auto lacks = launch_plan(kp, clustered(), 132, [](const runtime::LaunchDims&) -> Result<int> {
    return Status(ErrorCode::GRAPH_NOT_SUPPORTED, "the CUDA driver has no cuOccupancyMaxActiveClusters");
  });
  ASSERT_TRUE(lacks.is_good()) << lacks.status().message();
  EXPECT_EQ(lacks->resident, 0);
  EXPECT_EQ(lacks->sched.resident, 66) << "sm_count / CLUSTER_M";
  EXPECT_EQ(lacks->dims.grid[0], 132u);
  auto refused = launch_plan(kp, clustered(), 132, [](const runtime::LaunchDims&) -> Result<int> {
    return Status(ErrorCode::CUDA_API_FAILED, "cuOccupancyMaxActiveClusters: CUDA_ERROR_INVALID_CONTEXT (no context)");
  });
  ASSERT_TRUE(refused.is_bad()) << "a refused occupancy query was swallowed";
  EXPECT_EQ(refused.status().code(), ErrorCode::CUDA_API_FAILED);
  EXPECT_NE(refused.status().message().find("CUDA_ERROR_INVALID_CONTEXT"), std::string::npos);
  EXPECT_NE(refused.status().message().find("CLUSTER_M=2"), std::string::npos) << refused.status().message();
}

TEST(GemmLaunchPlan, TheOverrideReplacesTheAnswer) {
  const GemmProblem kp = v2_problem(8192, 4096, 512);
  ASSERT_EQ(setenv("OPGRAPH_GEMM_RESIDENT_CLUSTERS", "17", 1), 0);
  auto lp = launch_plan(kp, clustered(), 132, [](const runtime::LaunchDims&) -> Result<int> { return 60; });
  unsetenv("OPGRAPH_GEMM_RESIDENT_CLUSTERS");
  ASSERT_TRUE(lp.is_good());
  EXPECT_EQ(lp->resident, 17);
  EXPECT_EQ(lp->dims.grid[0], 34u);
}

// The grid launch_plan_for derives from its one schedule is grid_of's, on
// random problems and configs (v1 and v2, split, STREAM_K, clusters).
TEST(GemmLaunchPlan, TheGridMatchesGridOf) {
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < 200; ++i) {
    const GemmProblem kp = v2_problem(8 * (1 + rng() % 1200), 8 * (8 + rng() % 1200), 8 * (8 + rng() % 1200));
    GemmConfig c = clustered(1 + static_cast<int>(rng() % 4));
    c.cluster_m = 1 + static_cast<int>(rng() % 2);
    c.tile_n = rng() % 2 ? 128 : 256;
    c.stages = c.tile_n == 256 ? 4 : 6;
    if (rng() % 3 == 0) c.split_k = 1, c.stream_k = 1;
    if (rng() % 5 == 0) c = GemmConfig{};
    const int sms = 60 + static_cast<int>(rng() % 100), resident = rng() % 2 ? 0 : 1 + static_cast<int>(rng() % 80);
    const LaunchPlan lp = launch_plan_for(kp, c, sms, resident);
    unsigned grid[3], block[3];
    grid_of(kp, c, grid, block, sms, resident);
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(lp.dims.grid[d], grid[d]) << "problem " << kp.m << "x" << kp.n << "x" << kp.k;
      EXPECT_EQ(lp.dims.block[d], block[d]);
    }
    EXPECT_EQ(lp.dims.shared_bytes, smem_bytes(kp, c));
  }
}
