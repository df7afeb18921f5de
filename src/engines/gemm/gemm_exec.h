// engines/gemm/gemm_exec.h — what GemmPlan::execute needs besides the kernel:
// the runtime's CUDA context made current on the calling thread for one call
// (ContextScope, from runtime/context_scope.h), and the v2 split-K scratch,
// one slot per stream (StreamScratch).
//
// Both take the driver table by reference, so CI tests drive them with a table
// of fake entry points (no GPU there); the engine passes the loader's table.
#pragma once

#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/context_scope.h"
#include "runtime/loader.h"

namespace opgraph::gemm {

// The plan's context made current for one call: runtime/context_scope.h (it
// moved there so the cudnn engine binds its plans' context the same way).
using runtime::ContextScope;

// The split-K scratch of one v2 plan: fp32 partials (partial_bytes) then u32
// tile counters (counter_bytes), one slot per stream, so two executes of one
// plan on different streams never share partials or counters (the same stream
// orders its executes, so they may share). A slot is allocated on the
// stream's first execute, under the mutex, and its counters are zeroed then
// (cuMemsetD32, then a wait on the legacy stream so a non-blocking stream
// cannot overtake the memset); the kernel leaves them zero at exit. A launch
// the driver refuses never ran, so it leaves them zero too; a kernel that
// faults kills the context. After the first execute per stream, get() is a
// mutex and a scan of the slots: no allocation, no driver call.
//
// Why not the caller's workspace (workspace_size() > 0 plus a
// cuMemsetD32Async of the counters on every execute)? That is one more
// driver call and one more device operation per execute, a few microseconds
// against split-K's targets (decode shapes, kernels of ~10 us); a slot per
// stream costs that once.
//
// Keys: the stream handle. CU_STREAM_PER_THREAD names a different stream on
// every thread, so its key adds the thread id; CU_STREAM_LEGACY and nullptr
// are the same (legacy) stream and share a slot. A slot lives until the plan
// dies. Caveats: a CUDA graph captured from execute keeps the slot of the
// stream it was captured on (replaying it concurrently with executes on that
// stream shares scratch), and the first execute on a stream must not be under
// stream capture (the counters' memset runs on the legacy stream).
class StreamScratch {
 public:
  // `ctx`: the context the slots are allocated in (the runtime's; get() runs
  // with it current).
  StreamScratch(std::int64_t partial_bytes, std::int64_t counter_bytes, CUcontext ctx)
      : partial_bytes_(partial_bytes), counter_bytes_(counter_bytes), ctx_(ctx) {}
  // Frees every slot through the table that allocated it, with `ctx` made
  // current for the frees (ContextScope), whichever thread drops the plan.
  ~StreamScratch();
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  // Device addresses of one slot: partials, counters (256-byte aligned).
  struct Slot {
    std::uint64_t partials = 0, counters = 0;
  };
  // The slot of `stream` for the calling thread, allocated and zeroed on first
  // use. CUDA_API_FAILED naming the call when cuMemAlloc / cuMemsetD32 /
  // cuStreamSynchronize fails (nothing is kept; the next call tries again).
  Result<Slot> get(const runtime::CudaDriverApi& api, CUstream stream);
  // Slots allocated so far (tests).
  std::size_t slot_count() const;

 private:
  struct Key {
    CUstream stream = nullptr;
    std::thread::id thread;  // set only for CU_STREAM_PER_THREAD
    bool operator==(const Key&) const = default;
  };
  struct Entry {
    Key key;
    CUdeviceptr base = 0;
  };
  std::int64_t partial_bytes_, counter_bytes_;
  CUcontext ctx_;
  mutable std::mutex mu_;
  const runtime::CudaDriverApi* api_ = nullptr;  // the table that allocated the slots
  std::vector<Entry> slots_;
};

}  // namespace opgraph::gemm
