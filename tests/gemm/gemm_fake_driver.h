// gemm/gemm_fake_driver.h — a CUDA driver table of fake entry points for the
// gemm engine's host-side tests (no GPU in CI): allocations, memsets,
// context get/set per thread, and events whose completion the test decides
// (a recorded event is pending until finish_stream / finish_all). Every call
// is recorded under a mutex (the concurrency tests call from many threads).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "runtime/loader.h"

namespace opgraph::gemm_fake {

struct FakeDriver {
  std::mutex mu;
  std::uint64_t next = 0x100000;
  std::map<CUdeviceptr, std::size_t> live;  // allocations not yet freed
  std::vector<CUdeviceptr> freed;
  std::vector<CUcontext> freed_in;  // the context current at each free
  std::vector<std::string> calls;   // "alloc", "memset", "sync", in order
  struct Memset {
    CUdeviceptr ptr;
    unsigned value;
    std::size_t count;
  };
  std::vector<Memset> memsets;
  int fail_alloc = 0, fail_memset = 0, fail_record = 0, fail_wait = 0;  // fail the next N calls
  int set_calls = 0;
  bool fail_set = false;
  // Events: pending from a record until the test finishes its stream.
  struct Event {
    bool pending = false;
    bool captured = false;  // last recorded under stream capture: queries answer CUDA_ERROR_CAPTURED_EVENT
    CUstream stream = nullptr;  // of the last record
    int records = 0;
  };
  std::uintptr_t next_event = 0xE000;
  std::map<CUevent, Event> events;  // live events
  int events_destroyed = 0, queries = 0;
  struct Wait {
    CUstream stream;
    CUevent event;
  };
  std::vector<Wait> waits;  // cuStreamWaitEvent calls that succeeded
  CUresult not_initialized = CUDA_SUCCESS;  // what ctx_get_current answers (CUDA_ERROR_NOT_INITIALIZED: before cuInit)

  // The device finished everything enqueued on `s` (every event last recorded there).
  void finish_stream(CUstream s) {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [e, st] : events)
      if (st.stream == s) st.pending = false;
  }
  void finish_all() {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [e, st] : events) st.pending = false;
  }
};

inline FakeDriver* g_fake = nullptr;
inline thread_local CUcontext t_current = nullptr;

// The table; `events`: with the event entry points (cuEventCreate / Record /
// Query / Destroy, cuStreamWaitEvent), else those stay null (an old driver).
inline runtime::CudaDriverApi fake_api(bool events = true) {
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
    g_fake->freed_in.push_back(t_current);
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
    if (g_fake->not_initialized != CUDA_SUCCESS) return g_fake->not_initialized;
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
  if (!events) return a;
  a.event_create = [](CUevent* e, unsigned) -> CUresult {
    std::lock_guard<std::mutex> lock(g_fake->mu);
    *e = reinterpret_cast<CUevent>(g_fake->next_event);
    g_fake->next_event += 0x10;
    g_fake->events[*e] = {};
    return CUDA_SUCCESS;
  };
  a.event_record = [](CUevent e, CUstream s) -> CUresult {
    std::lock_guard<std::mutex> lock(g_fake->mu);
    if (g_fake->fail_record > 0) return --g_fake->fail_record, CUDA_ERROR_INVALID_HANDLE;
    auto it = g_fake->events.find(e);
    if (it == g_fake->events.end()) return CUDA_ERROR_INVALID_HANDLE;
    it->second.pending = true;
    it->second.captured = false;
    it->second.stream = s;
    ++it->second.records;
    return CUDA_SUCCESS;
  };
  a.event_query = [](CUevent e) -> CUresult {
    std::lock_guard<std::mutex> lock(g_fake->mu);
    auto it = g_fake->events.find(e);
    ++g_fake->queries;
    if (it == g_fake->events.end()) return CUDA_ERROR_INVALID_HANDLE;
    if (it->second.captured) return CUDA_ERROR_CAPTURED_EVENT;
    return it->second.pending ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
  };
  a.event_destroy = [](CUevent e) -> CUresult {
    std::lock_guard<std::mutex> lock(g_fake->mu);
    ++g_fake->events_destroyed;
    return g_fake->events.erase(e) == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  };
  a.stream_wait_event = [](CUstream s, CUevent e, unsigned) -> CUresult {
    std::lock_guard<std::mutex> lock(g_fake->mu);
    if (g_fake->fail_wait > 0) return --g_fake->fail_wait, CUDA_ERROR_INVALID_HANDLE;
    if (g_fake->events.count(e) == 0) return CUDA_ERROR_INVALID_HANDLE;
    g_fake->waits.push_back({s, e});
    return CUDA_SUCCESS;
  };
  return a;
}

// The host-side tests' fixture: this FakeDriver installed as g_fake for the
// test's duration, its table, a random engine; fake stream and context values.
class FakeDriverTest : public ::testing::Test {
 protected:
  void SetUp() override { g_fake = &fake_; }
  void TearDown() override { g_fake = nullptr; }
  FakeDriver fake_;
  runtime::CudaDriverApi api_ = fake_api();
  std::mt19937 rng_{std::random_device{}()};
};

inline CUstream stream_handle(std::uintptr_t v) { return reinterpret_cast<CUstream>(v); }
// The (fake) context a plan's scratch slots belong to.
inline CUcontext scratch_ctx() { return reinterpret_cast<CUcontext>(0xE0); }

}  // namespace opgraph::gemm_fake
