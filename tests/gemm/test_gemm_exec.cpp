// GemmPlan::execute's helpers without a GPU (gemm_exec.h), driven through a
// driver table of fake entry points that record every call:
// StreamScratch, up to its slot bound — one slot per stream (distinct,
// non-overlapping, allocated once, counters zeroed once and waited for;
// CU_STREAM_PER_THREAD keyed by thread; legacy aliases shared; failures keep
// nothing; concurrent first use from many threads allocates exactly once per
// stream; every slot and its event freed once, with its context current, from
// any thread); past the bound: test_gemm_host.cpp;
// ContextScope — the runtime's context current inside the scope from a thread
// with none or another one current, the previous one restored after, no set
// call when it is already current. The engine on the GPU: tests/gemm_gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "engines/gemm/gemm_exec.h"
#include "gemm_fake_driver.h"

using namespace opgraph;
using namespace opgraph::gemm;
using namespace opgraph::gemm_fake;

namespace {

class GemmExec : public FakeDriverTest {};

std::int64_t round256(std::int64_t b) { return (b + 255) / 256 * 256; }

// One execute's use of the scratch: the slot leased, the launch enqueued, released.
Result<StreamScratch::Slot> use(StreamScratch& s, const runtime::CudaDriverApi& api, CUstream st) {
  auto slot = s.acquire(api, st);
  if (slot.is_good()) OPGRAPH_CHECK(s.release(api, *slot, st, true));
  return slot;
}

}  // namespace

TEST_F(GemmExec, ScratchOneSlotPerStreamAllocatedAndZeroedOnce) {
  std::uniform_int_distribution<std::int64_t> bytes(1, 1 << 22);
  const std::int64_t partial = bytes(rng_) * 4, counters = bytes(rng_) / 1024 * 4 + 8;
  StreamScratch s(partial, counters, scratch_ctx());
  const std::vector<CUstream> streams = {stream_handle(0x7000), stream_handle(0x7100), stream_handle(0x7200)};
  std::vector<StreamScratch::Slot> first;
  for (CUstream st : streams) {
    auto slot = use(s, api_, st);
    ASSERT_TRUE(slot.is_good()) << slot.status().message();
    first.push_back(*slot);
  }
  // Again, in another order: the same slot per stream, no new allocation or memset.
  for (int round = 0; round < 3; ++round)
    for (std::size_t i = streams.size(); i-- > 0;) {
      auto slot = use(s, api_, streams[i]);
      ASSERT_TRUE(slot.is_good());
      EXPECT_EQ(slot->partials, first[i].partials);
      EXPECT_EQ(slot->counters, first[i].counters);
    }
  EXPECT_EQ(s.slot_count(), streams.size());
  ASSERT_EQ(fake_.live.size(), streams.size());
  ASSERT_EQ(fake_.memsets.size(), streams.size());
  for (std::size_t i = 0; i < streams.size(); ++i) {
    // Counters after the partials, 256-byte aligned, inside the allocation.
    EXPECT_EQ(first[i].counters - first[i].partials, static_cast<std::uint64_t>(round256(partial)));
    EXPECT_EQ(first[i].counters % 256, 0u);
    ASSERT_EQ(fake_.live.count(first[i].partials), 1u);
    const std::size_t size = fake_.live[first[i].partials];
    EXPECT_GE(static_cast<std::int64_t>(size), round256(partial) + counters);
    // Zeroed once: every counter byte, with 0.
    EXPECT_EQ(fake_.memsets[i].ptr, first[i].counters);
    EXPECT_EQ(fake_.memsets[i].value, 0u);
    EXPECT_GE(static_cast<std::int64_t>(fake_.memsets[i].count) * 4, counters);
    EXPECT_LE(first[i].counters + fake_.memsets[i].count * 4, first[i].partials + size);
    // Disjoint from every other slot.
    for (std::size_t j = 0; j < i; ++j)
      EXPECT_TRUE(first[i].partials >= first[j].partials + fake_.live[first[j].partials] ||
                  first[j].partials >= first[i].partials + size);
  }
  // Each allocation is followed by its memset and a wait on the legacy stream.
  std::vector<std::string> want;
  for (std::size_t i = 0; i < streams.size(); ++i) want.insert(want.end(), {"alloc", "memset", "sync"});
  EXPECT_EQ(fake_.calls, want);
}

TEST_F(GemmExec, ScratchPerThreadStreamIsKeyedByThreadAndLegacyAliasesShare) {
  StreamScratch s(4096, 64, scratch_ctx());
  auto legacy0 = use(s, api_, nullptr);
  auto legacy1 = use(s, api_, CU_STREAM_LEGACY);
  ASSERT_TRUE(legacy0.is_good() && legacy1.is_good());
  EXPECT_EQ(legacy0->partials, legacy1->partials) << "nullptr and CU_STREAM_LEGACY are the same stream";
  auto mine = use(s, api_, CU_STREAM_PER_THREAD);
  auto mine_again = use(s, api_, CU_STREAM_PER_THREAD);
  ASSERT_TRUE(mine.is_good() && mine_again.is_good());
  EXPECT_EQ(mine->partials, mine_again->partials);
  EXPECT_NE(mine->partials, legacy0->partials);
  StreamScratch::Slot other{};
  std::thread t([&] {
    auto r = use(s, api_, CU_STREAM_PER_THREAD);
    ASSERT_TRUE(r.is_good());
    other = *r;
  });
  t.join();
  EXPECT_NE(other.partials, 0u);
  EXPECT_NE(other.partials, mine->partials) << "two threads' per-thread default streams shared a slot";
  EXPECT_NE(other.partials, legacy0->partials);
  EXPECT_EQ(s.slot_count(), 3u);
}

TEST_F(GemmExec, ScratchConcurrentFirstUseAllocatesOncePerStream) {
  StreamScratch s(1 << 16, 256, scratch_ctx());
  constexpr int kThreads = 8, kCalls = 300;
  std::vector<std::thread> ts;
  std::vector<std::vector<std::uint64_t>> seen(kThreads);
  std::atomic<int> ready{0};
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      // Threads t and t + 4 share stream t % 4.
      const CUstream st = stream_handle(0x9000 + 0x40 * static_cast<std::uintptr_t>(t % 4));
      for (int i = 0; i < kCalls; ++i) {
        auto r = use(s, api_, st);
        seen[t].push_back(r.is_good() ? r->partials : 0);
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(s.slot_count(), 4u);
  EXPECT_EQ(fake_.live.size(), 4u);
  EXPECT_EQ(fake_.memsets.size(), 4u);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(seen[t].size(), static_cast<std::size_t>(kCalls));
    EXPECT_NE(seen[t][0], 0u);
    EXPECT_TRUE(std::all_of(seen[t].begin(), seen[t].end(), [&](std::uint64_t p) { return p == seen[t][0]; }));
    EXPECT_EQ(seen[t][0], seen[(t + 4) % kThreads][0]) << "one stream, two slots";
    EXPECT_NE(seen[t][0], seen[(t + 1) % kThreads][0]) << "two streams, one slot";
  }
}

TEST_F(GemmExec, ScratchFailuresKeepNothingAndTheNextCallRetries) {
  StreamScratch s(1024, 32, scratch_ctx());
  const CUstream st = stream_handle(0x5000);
  fake_.fail_alloc = 1;
  auto r = use(s, api_, st);
  ASSERT_TRUE(r.is_bad());
  EXPECT_EQ(r.status().code(), ErrorCode::CUDA_API_FAILED);
  EXPECT_NE(r.status().message().find("cuMemAlloc"), std::string::npos) << r.status().message();
  EXPECT_EQ(s.slot_count(), 0u);
  fake_.fail_memset = 1;
  r = use(s, api_, st);
  ASSERT_TRUE(r.is_bad());
  EXPECT_NE(r.status().message().find("cuMemsetD32"), std::string::npos) << r.status().message();
  EXPECT_EQ(s.slot_count(), 0u);
  EXPECT_TRUE(fake_.live.empty()) << "the allocation whose counters were not zeroed leaked";
  r = use(s, api_, st);
  ASSERT_TRUE(r.is_good()) << r.status().message();
  EXPECT_EQ(s.slot_count(), 1u);
  ASSERT_EQ(fake_.memsets.size(), 1u);
  EXPECT_EQ(fake_.memsets[0].ptr, r->counters);
}

TEST_F(GemmExec, ScratchFreesEverySlotOnceWhenThePlanDies) {
  std::vector<CUdeviceptr> bases;
  {
    StreamScratch s(2048, 16, scratch_ctx());
    for (std::uintptr_t h : {0x10u, 0x20u, 0x30u}) {
      auto r = use(s, api_, stream_handle(h));
      ASSERT_TRUE(r.is_good());
      bases.push_back(r->partials);
    }
    EXPECT_TRUE(fake_.freed.empty());
  }
  EXPECT_TRUE(fake_.live.empty());
  EXPECT_TRUE(fake_.events.empty()) << "a slot's completion event was not destroyed";
  EXPECT_EQ(fake_.events_destroyed, 3);
  std::sort(bases.begin(), bases.end());
  std::sort(fake_.freed.begin(), fake_.freed.end());
  EXPECT_EQ(fake_.freed, bases);
}

TEST_F(GemmExec, ScratchFreesInItsContextOnAThreadWithoutOne) {
  auto* s = new StreamScratch(2048, 16, scratch_ctx());
  t_current = scratch_ctx();
  for (std::uintptr_t h : {0x10u, 0x20u}) ASSERT_TRUE(use(*s, api_, stream_handle(h)).is_good());
  t_current = nullptr;
  // Dropped on a fresh thread (nothing current): every free runs with the
  // scratch's context current, and the thread is left as it was.
  CUcontext after = scratch_ctx();
  std::thread t([&] {
    delete s;
    after = t_current;
  });
  t.join();
  EXPECT_TRUE(fake_.live.empty());
  ASSERT_EQ(fake_.freed_in.size(), 2u);
  for (CUcontext c : fake_.freed_in) EXPECT_EQ(c, scratch_ctx()) << "a slot was freed outside its context";
  EXPECT_EQ(after, nullptr);
}

TEST_F(GemmExec, ContextScopeBindsTheRuntimeContextOnAnyThreadAndRestores) {
  const CUcontext ours = reinterpret_cast<CUcontext>(0xC0);
  const CUcontext theirs = reinterpret_cast<CUcontext>(0xD0);
  std::thread t([&] {
    // A fresh thread: nothing current.
    EXPECT_EQ(t_current, nullptr);
    {
      ContextScope scope(api_, ours);
      EXPECT_TRUE(scope.status().is_good());
      EXPECT_EQ(t_current, ours);
    }
    EXPECT_EQ(t_current, nullptr) << "the thread's state was not restored";
    // Another context current: ours inside, theirs again after.
    t_current = theirs;
    {
      ContextScope scope(api_, ours);
      EXPECT_EQ(t_current, ours);
    }
    EXPECT_EQ(t_current, theirs);
  });
  t.join();
  EXPECT_EQ(fake_.set_calls, 4);
  // Already current (the steady state): no set at all.
  t_current = ours;
  {
    ContextScope scope(api_, ours);
    EXPECT_TRUE(scope.status().is_good());
  }
  EXPECT_EQ(fake_.set_calls, 4);
  EXPECT_EQ(t_current, ours);
  // A refused set is an error naming the call, and changes nothing.
  t_current = theirs;
  fake_.fail_set = true;
  {
    ContextScope scope(api_, ours);
    ASSERT_TRUE(scope.status().is_bad());
    EXPECT_EQ(scope.status().code(), ErrorCode::CUDA_API_FAILED);
    EXPECT_NE(scope.status().message().find("cuCtxSetCurrent"), std::string::npos);
  }
  EXPECT_EQ(fake_.set_calls, 5) << "a failed scope must not try to restore";
  EXPECT_EQ(t_current, theirs);
  t_current = nullptr;
}
