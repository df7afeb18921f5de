// ContextHandles (engines/cudnn/handles.h) without a GPU: the cuDNN and driver
// tables are fakes that record every call (which handle, which stream, which
// context was current). Checked: one handle per context, created with that
// context current; the stream cache is per handle, so switching contexts never
// skips a cudnnSetStream the other handle needs; a refused cudnnSetStream is
// retried; a thread with no context keys its handle by the context cudnnCreate
// left current; the destructor destroys each handle in its own context and
// puts the caller's back. context_for, the context the engine plans and builds
// a device's plans in: the caller's when it is on that device, else the device's
// primary context. The engine on the GPU: tests/cudnn_gpu/test_cudnn_gpu_threads.cpp
// and test_cudnn_gpu_device.cpp; with a fake two-device driver:
// tests/runtime/test_device_ordinal.cpp.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "engines/cudnn/handles.h"

using namespace opgraph;
using namespace opgraph::engines::cudnn;

namespace {

thread_local CUcontext t_current = nullptr;

struct FakeCudnn {
  std::mutex mu;
  std::uintptr_t next = 0x5000;
  struct Call {
    cudnnHandle_t handle;
    CUcontext current;  // the context current at the call
    CUstream stream;    // set_stream only
  };
  std::vector<Call> created, destroyed, streams_set;
  int fail_set_stream = 0;          // fail the next N cudnnSetStream calls
  CUcontext runtime_ctx = nullptr;  // what cudnnCreate makes current when none is (the runtime's init)
  int ctx_get_fails = 0;            // fail the next N cuCtxGetCurrent calls
  std::map<CUcontext, CUdevice> device_of;  // cuCtxGetDevice's answers (absent: an error)
};
FakeCudnn* g_fake = nullptr;

runtime::CudnnApi fake_cudnn() {
  runtime::CudnnApi a;
  a.create = [](runtime::cudnn_abi::Handle* h) -> runtime::cudnn_abi::Status {
    std::lock_guard<std::mutex> lock(g_fake->mu);
    if (!t_current) t_current = g_fake->runtime_ctx;
    *h = reinterpret_cast<runtime::cudnn_abi::Handle>(g_fake->next += 0x10);
    g_fake->created.push_back({*h, t_current, nullptr});
    return 0;
  };
  a.destroy = [](runtime::cudnn_abi::Handle h) -> runtime::cudnn_abi::Status {
    std::lock_guard<std::mutex> lock(g_fake->mu);
    g_fake->destroyed.push_back({h, t_current, nullptr});
    return 0;
  };
  a.set_stream = [](runtime::cudnn_abi::Handle h, CUstream s) -> runtime::cudnn_abi::Status {
    std::lock_guard<std::mutex> lock(g_fake->mu);
    if (g_fake->fail_set_stream > 0) return --g_fake->fail_set_stream, 2000;  // CUDNN_STATUS_BAD_PARAM
    g_fake->streams_set.push_back({h, t_current, s});
    return 0;
  };
  return a;
}

runtime::CudaDriverApi fake_driver() {
  runtime::CudaDriverApi a;
  a.ctx_get_current = [](CUcontext* c) -> CUresult {
    if (g_fake->ctx_get_fails > 0) return --g_fake->ctx_get_fails, CUDA_ERROR_NOT_INITIALIZED;
    *c = t_current;
    return CUDA_SUCCESS;
  };
  a.ctx_set_current = [](CUcontext c) -> CUresult {
    t_current = c;
    return CUDA_SUCCESS;
  };
  a.ctx_get_device = [](CUdevice* d) -> CUresult {
    auto it = g_fake->device_of.find(t_current);
    if (!t_current || it == g_fake->device_of.end()) return CUDA_ERROR_INVALID_CONTEXT;
    *d = it->second;
    return CUDA_SUCCESS;
  };
  return a;
}

class CudnnHandles : public ::testing::Test {
 protected:
  void SetUp() override {
    g_fake = &fake_;
    // Fresh, distinct context and stream values per run.
    std::uniform_int_distribution<std::uintptr_t> v(1, 1 << 20);
    std::set<std::uintptr_t> seen;
    auto fresh = [&] {
      std::uintptr_t x;
      do x = v(rng_) * 64; while (!seen.insert(x).second);
      return x;
    };
    a_ = reinterpret_cast<CUcontext>(fresh());
    b_ = reinterpret_cast<CUcontext>(fresh());
    s1_ = reinterpret_cast<CUstream>(fresh());
    s2_ = reinterpret_cast<CUstream>(fresh());
    fake_.runtime_ctx = reinterpret_cast<CUcontext>(fresh());
    t_current = nullptr;
  }
  void TearDown() override {
    t_current = nullptr;
    g_fake = nullptr;
  }
  std::mt19937 rng_{std::random_device{}()};
  FakeCudnn fake_;
  runtime::CudnnApi api_ = fake_cudnn();
  runtime::CudaDriverApi drv_ = fake_driver();
  CUcontext a_ = nullptr, b_ = nullptr;
  CUstream s1_ = nullptr, s2_ = nullptr;
};

}  // namespace

TEST_F(CudnnHandles, OneHandlePerContextCreatedInThatContext) {
  ContextHandles hs(api_, drv_);
  t_current = a_;
  auto ha = hs.current();
  ASSERT_TRUE(ha.is_good()) << ha.status().to_string();
  EXPECT_EQ(ha->context, a_);
  t_current = b_;
  auto hb = hs.current();
  ASSERT_TRUE(hb.is_good());
  EXPECT_EQ(hb->context, b_);
  EXPECT_NE(hb->handle, ha->handle) << "device B must not reuse device A's handle";
  t_current = a_;
  auto again = hs.current();
  ASSERT_TRUE(again.is_good());
  EXPECT_EQ(again->handle, ha->handle);
  ASSERT_EQ(fake_.created.size(), 2u) << "a handle is created once per context";
  EXPECT_EQ(fake_.created[0].current, a_);
  EXPECT_EQ(fake_.created[1].current, b_);
  EXPECT_EQ(hs.size(), 2u);
}

TEST_F(CudnnHandles, StreamCacheIsPerContextHandle) {
  ContextHandles hs(api_, drv_);
  t_current = a_;
  auto ha = hs.current_on(s1_);
  ASSERT_TRUE(ha.is_good());
  ASSERT_EQ(fake_.streams_set.size(), 1u);
  // Switch device, same stream value: B's handle has never had it set. (A
  // per-thread "last stream" cache skipped this call.)
  t_current = b_;
  auto hb = hs.current_on(s1_);
  ASSERT_TRUE(hb.is_good());
  ASSERT_EQ(fake_.streams_set.size(), 2u) << "the stream was not set on context B's handle";
  EXPECT_EQ(fake_.streams_set[1].handle, hb->handle);
  EXPECT_EQ(fake_.streams_set[1].stream, s1_);
  EXPECT_EQ(fake_.streams_set[1].current, b_);
  // Back on A with the same stream: nothing to set.
  t_current = a_;
  ASSERT_TRUE(hs.current_on(s1_).is_good());
  EXPECT_EQ(fake_.streams_set.size(), 2u);
  // A new stream on A: set on A's handle only; B keeps s1 and needs no call.
  ASSERT_TRUE(hs.current_on(s2_).is_good());
  ASSERT_EQ(fake_.streams_set.size(), 3u);
  EXPECT_EQ(fake_.streams_set[2].handle, ha->handle);
  EXPECT_EQ(fake_.streams_set[2].stream, s2_);
  t_current = b_;
  ASSERT_TRUE(hs.current_on(s1_).is_good());
  EXPECT_EQ(fake_.streams_set.size(), 3u);
  // The legacy stream (nullptr) is a stream like any other: set once.
  ASSERT_TRUE(hs.current_on(nullptr).is_good());
  ASSERT_TRUE(hs.current_on(nullptr).is_good());
  ASSERT_EQ(fake_.streams_set.size(), 4u);
  EXPECT_EQ(fake_.streams_set[3].stream, nullptr);
}

TEST_F(CudnnHandles, RefusedSetStreamIsRetried) {
  ContextHandles hs(api_, drv_);
  t_current = a_;
  ASSERT_TRUE(hs.current_on(s1_).is_good());
  fake_.fail_set_stream = 1;
  auto bad = hs.current_on(s2_);
  ASSERT_TRUE(bad.is_bad());
  EXPECT_EQ(bad.status().code(), ErrorCode::GRAPH_EXECUTION_FAILED);
  EXPECT_NE(bad.status().message().find("cudnnSetStream"), std::string::npos) << bad.status().message();
  // The handle's stream is unknown now: even the old stream is set again.
  ASSERT_TRUE(hs.current_on(s1_).is_good());
  ASSERT_EQ(fake_.streams_set.size(), 2u);
  EXPECT_EQ(fake_.streams_set[1].stream, s1_);
}

TEST_F(CudnnHandles, NoContextCurrentKeysTheHandleByTheContextCudnnCreateLeft) {
  ContextHandles hs(api_, drv_);
  auto h = hs.current();
  ASSERT_TRUE(h.is_good());
  EXPECT_EQ(h->context, fake_.runtime_ctx);
  EXPECT_EQ(t_current, fake_.runtime_ctx);
  // That context current now (or made current by a plan later): the same handle.
  auto again = hs.current();
  ASSERT_TRUE(again.is_good());
  EXPECT_EQ(again->handle, h->handle);
  EXPECT_EQ(fake_.created.size(), 1u);
  EXPECT_EQ(hs.size(), 1u);
}

TEST_F(CudnnHandles, ContextQueryFailureCreatesNothing) {
  ContextHandles hs(api_, drv_);
  t_current = a_;
  fake_.ctx_get_fails = 1;
  auto h = hs.current_on(s1_);
  ASSERT_TRUE(h.is_bad());
  EXPECT_EQ(h.status().code(), ErrorCode::CUDA_API_FAILED);
  EXPECT_NE(h.status().message().find("cuCtxGetCurrent"), std::string::npos);
  EXPECT_TRUE(fake_.created.empty());
  EXPECT_TRUE(fake_.streams_set.empty());
}

// A caller that has just bound the context (execute's ContextScope) names it:
// the lookup asks the driver nothing (a failing cuCtxGetCurrent is never hit)
// and finds the same handle as a query would.
TEST_F(CudnnHandles, AContextTheCallerBoundIsNotQueriedAgain) {
  ContextHandles hs(api_, drv_);
  t_current = a_;
  auto queried = hs.current();
  ASSERT_TRUE(queried.is_good());
  fake_.ctx_get_fails = 1;
  auto bound = hs.current_on(s1_, a_);
  ASSERT_TRUE(bound.is_good()) << bound.status().to_string();
  EXPECT_EQ(bound->handle, queried->handle);
  EXPECT_EQ(bound->context, a_);
  EXPECT_EQ(fake_.ctx_get_fails, 1) << "cuCtxGetCurrent was called";
  EXPECT_EQ(fake_.created.size(), 1u);
}

TEST_F(CudnnHandles, DestructorDestroysEachHandleInItsContextAndRestoresTheCallers) {
  cudnnHandle_t ha = nullptr, hb = nullptr;
  const CUcontext caller = fake_.runtime_ctx;
  std::thread t([&] {
    {
      ContextHandles hs(api_, drv_);
      t_current = a_;
      ha = hs.current()->handle;
      t_current = b_;
      hb = hs.current()->handle;
      t_current = caller;  // the thread moved on to another context
    }
    EXPECT_EQ(t_current, caller) << "the caller's context was not put back";
  });
  t.join();
  ASSERT_EQ(fake_.destroyed.size(), 2u);
  for (const auto& d : fake_.destroyed) {
    if (d.handle == ha) EXPECT_EQ(d.current, a_);
    else if (d.handle == hb) EXPECT_EQ(d.current, b_);
    else ADD_FAILURE() << "destroyed a handle never created";
  }
  EXPECT_NE(fake_.destroyed[0].handle, fake_.destroyed[1].handle);
}

// The target device's primary context unless the caller's current context is on
// that device (its primary, or a context of its own there).
TEST_F(CudnnHandles, ContextForKeepsTheCallersContextOnlyOnTheTargetDevice) {
  std::uniform_int_distribution<int> pick(0, 7);
  const CUdevice target = pick(rng_), other = (target + 1 + pick(rng_) % 7) % 8;
  const CUcontext primary = fake_.runtime_ctx, own = a_, elsewhere = b_;
  fake_.device_of = {{primary, target}, {own, target}, {elsewhere, other}};
  const DeviceContext dev{target, primary};
  struct Row {
    CUcontext current;
    CUcontext want;
    const char* what;
  };
  const Row rows[] = {{nullptr, primary, "none current"},
                      {primary, primary, "the target's primary current"},
                      {own, own, "a caller's own context on the target device"},
                      {elsewhere, primary, "another device's context"}};
  for (const Row& r : rows) {
    t_current = r.current;
    auto c = context_for(drv_, dev);
    ASSERT_TRUE(c.is_good()) << r.what << ": " << c.status().to_string();
    EXPECT_EQ(c.value(), r.want) << r.what;
    EXPECT_EQ(t_current, r.current) << r.what << ": context_for makes nothing current";
  }
  // A context the driver cannot place (destroyed) is not the target's.
  fake_.device_of.erase(own);
  t_current = own;
  EXPECT_EQ(context_for(drv_, dev).value(), primary);
  // A driver without cuCtxGetDevice: only the primary counts as on the device.
  runtime::CudaDriverApi old = drv_;
  old.ctx_get_device = nullptr;
  fake_.device_of[own] = target;
  EXPECT_EQ(context_for(old, dev).value(), primary);
  t_current = primary;
  EXPECT_EQ(context_for(old, dev).value(), primary);
  // A refused cuCtxGetCurrent is an error naming it, not a guess.
  fake_.ctx_get_fails = 1;
  auto refused = context_for(drv_, dev);
  ASSERT_TRUE(refused.is_bad());
  EXPECT_EQ(refused.status().code(), ErrorCode::CUDA_API_FAILED);
  EXPECT_NE(refused.status().message().find("cuCtxGetCurrent"), std::string::npos) << refused.status().message();
}
