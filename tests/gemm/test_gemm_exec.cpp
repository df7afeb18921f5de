// GemmPlan::execute's helpers without a GPU (gemm_exec.h), driven through a
// driver table of fake entry points that record every call:
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

using namespace opgraph;
using namespace opgraph::gemm;

namespace {

// What the fake driver saw. Guarded: the concurrency test calls from many threads.
struct FakeDriver {
  std::mutex mu;
  std::uint64_t next = 0x100000;
  std::map<CUdeviceptr, std::size_t> live;  // allocations not yet freed
  std::vector<CUdeviceptr> freed;
  std::vector<std::string> calls;  // "alloc", "memset", "sync", in order
  struct Memset {
    CUdeviceptr ptr;
    unsigned value;
    std::size_t count;
  };
  std::vector<Memset> memsets;
  int fail_alloc = 0, fail_memset = 0;  // fail the next N calls
  int set_calls = 0;
  bool fail_set = false;
};
FakeDriver* g_fake = nullptr;
thread_local CUcontext t_current = nullptr;

runtime::CudaDriverApi fake_api() {
  runtime::CudaDriverApi a;
  a.mem_alloc = [](CUdeviceptr* p, std::size_t bytes) -> CUresult {
    std::lock_guard<std::mutex> lock(g_fake->mu);
    g_fake->calls.push_back("alloc");
    if (g_fake->fail_alloc > 0) return --g_fake->fail_alloc, CUDA_ERROR_OUT_OF_MEMORY;
    *p = g_fake->next;
    g_fake->next += (bytes + 4095) / 4096 * 4096 + 4096;
    g_fake->live[*p] = bytes;
    return CUDA_SUCCESS;
  };
  a.mem_free = [](CUdeviceptr p) -> CUresult {
    std::lock_guard<std::mutex> lock(g_fake->mu);
    g_fake->freed.push_back(p);
    return g_fake->live.erase(p) == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  };
  a.memset_d32 = [](CUdeviceptr p, unsigned v, std::size_t n) -> CUresult {
    std::lock_guard<std::mutex> lock(g_fake->mu);
    g_fake->calls.push_back("memset");
    if (g_fake->fail_memset > 0) return --g_fake->fail_memset, CUDA_ERROR_ILLEGAL_ADDRESS;
    g_fake->memsets.push_back({p, v, n});
    return CUDA_SUCCESS;
  };
  a.stream_synchronize = [](CUstream s) -> CUresult {
    std::lock_guard<std::mutex> lock(g_fake->mu);
    g_fake->calls.push_back(s == nullptr ? "sync" : "sync-other");
    return CUDA_SUCCESS;
  };
  a.ctx_get_current = [](CUcontext* c) -> CUresult {
    *c = t_current;
    return CUDA_SUCCESS;
  };
  a.ctx_set_current = [](CUcontext c) -> CUresult {
    std::lock_guard<std::mutex> lock(g_fake->mu);
    ++g_fake->set_calls;
    if (g_fake->fail_set) return CUDA_ERROR_INVALID_CONTEXT;
    t_current = c;
    return CUDA_SUCCESS;
  };
  return a;
}

class GemmExec : public ::testing::Test {
 protected:
  void SetUp() override { g_fake = &fake_; }
  void TearDown() override { g_fake = nullptr; }
  FakeDriver fake_;
  runtime::CudaDriverApi api_ = fake_api();
  std::mt19937 rng_{std::random_device{}()};
};

}  // namespace

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
