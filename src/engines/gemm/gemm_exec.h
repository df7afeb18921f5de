// engines/gemm/gemm_exec.h — the gemm engine's host side besides the kernel:
// the runtime's CUDA context made current on the calling thread for one
// planning step or one execute (ContextScope and ContextRestore, from
// runtime/context_scope.h), the launch geometry a plan computes once (LaunchPlan,
// launch_plan), and the v2 split-K scratch, a bounded set of slots handed to
// streams (StreamScratch).
//
// All take the driver table (or the occupancy query) as an argument, so CI
// tests drive them with fake entry points (no GPU there); the engine passes
// the loader's table and its KernelRuntime.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "engines/gemm/gemm_kernel.h"
#include "exec/operand_table.h"
#include "runtime/context_scope.h"
#include "runtime/device.h"
#include "runtime/loader.h"

namespace opgraph::gemm {

// The plan's context made current for one call: runtime/context_scope.h (it
// moved there so the cudnn engine binds its plans' context the same way).
using runtime::ContextScope;

// The caller's context put back after KernelRuntime::open:
// runtime/context_scope.h (it moved there with the device's shared runtime,
// runtime/shared_runtimes.h, which opens through it).
using runtime::ContextRestore;

// What a plan launches, computed once when it is built, in this order: the
// resident clusters (the driver's answer), then the schedule, then from both
// the grid and the split-K scratch sizes.
struct LaunchPlan {
  // Clusters (CTAs at CLUSTER_M = 1) resident at once, as the driver answered
  // for this kernel (or OPGRAPH_GEMM_RESIDENT_CLUSTERS); 0 = not asked or not
  // answerable (CLUSTER_M = 1, v1, or a driver without the query): the
  // schedule then assumes sm_count / CLUSTER_M.
  int resident = 0;
  V2Schedule sched;  // v2 only (v1: default)
  runtime::LaunchDims dims;
  std::int64_t partial_bytes = 0, counter_bytes = 0;  // v2 split-K scratch (bytes), 0 when nothing is split
};

// The launch of kernel view `kp` under `c` (swap already applied, c.swap_ab
// ignored) for `resident` clusters (0 = unknown). Pure.
LaunchPlan launch_plan_for(const GemmProblem& kp, const GemmConfig& c, int sm_count, int resident);

// The driver's answer for a clustered launch: how many clusters of the dims'
// cluster shape, block and shared memory fit at once (KernelRuntime::
// max_active_clusters in the engine, a fake in CI).
using MaxActiveClusters = std::function<Result<int>(const runtime::LaunchDims& probe)>;

// launch_plan_for with the driver asked when CLUSTER_M > 1 (the probe: the
// default grid, sm_count / CLUSTER_M clusters), then OPGRAPH_GEMM_RESIDENT_
// CLUSTERS (a positive integer; a measurement override for bench/gemm_bench
// --study) replacing the answer. A GRAPH_NOT_SUPPORTED answer (the runtime's
// "the driver has no cuOccupancyMaxActiveClusters") falls back to
// sm_count / CLUSTER_M; every other failure (CUDA_API_FAILED: no context
// current, an invalid configuration, ...) is returned, naming the query.
Result<LaunchPlan> launch_plan(const GemmProblem& kp, const GemmConfig& c, int sm_count,
                               const MaxActiveClusters& max_active_clusters);
// The same for `kernel` on `rt`, with rt's context bound (ContextScope) for
// the query: callable from any thread. What GemmPlan and the benchmark use.
Result<LaunchPlan> launch_plan(const GemmProblem& kp, const GemmConfig& c, const runtime::KernelRuntime& rt,
                               const runtime::LoadedKernel& kernel);

// Which row of a plan's operand table feeds each pointer of GemmParams (-1:
// none: a by-value scalar, or no such operand).
struct OperandSlots {
  std::int32_t a = -1, b = -1, c = -1;
  std::int32_t epi[kMaxEpilogueOperands] = {-1, -1, -1, -1};
};

// The plan's operand table over `layout` (the graph's; null is INTERNAL_ERROR):
// one row per operand of the kernel view `kp` (A, B, C, the epilogue's tensor
// operands), each asking for the declared extents, strides (the kernel's
// strides are baked from them), dtype, the declared alignment and device
// memory; `slots` := each GemmParams pointer's row. INTERNAL_ERROR when an
// operand has no position in the layout (the layout and the analysis disagree).
// Pure: CI tests the refusals without a GPU.
Result<OperandTable> operand_table_for(const GemmProblem& kp, const DeclaredLayout* layout, OperandSlots& slots);

// --- execute-time shape overrides (docs/dynamic_shapes.md) ---
// One kernel per layout class: a built plan runs other extents of its class
// when a call overrides them (VariantPack::override_shape). These are the pure
// steps of that path, so CI tests them without a GPU.
//
// The kernel view of the problem `pack` (normalised against g's layout; some
// slots overridden) gives, for a plan built from `built` (the graph view
// analysed at build) under `config` (SWAP_AB as knobbed), or the refusal:
// analyze_gemm's rules on the new extents (G1..G7 as GRAPH_NOT_SUPPORTED, G9
// disagreeing extents as INVALID_VARIANT_PACK), then GRAPH_NOT_SUPPORTED when
// the new problem needs another kernel than the built one (another layout or
// alignment class: e.g. a contiguous extent that is no multiple of 8 leaves the
// 16-byte class) or when `config` cannot run it (config_takes: v2 extents within
// int32). Every refusal starts "engine gemm: execute-time shape override refused:".
// The kernel and config stay the built ones even where the heuristics would
// pick another tile for the new extents (a plan is one kernel).
Result<GemmProblem> overridden_view(const OpGraph& g, const VariantPack& pack, const GemmProblem& built,
                                    const GemmConfig& config);
// The same with the built plan's kernel request given (kernel_request(built, config),
// computed once at build): the per-call path, which compares the new problem's request
// with it field by field (same_kernel) instead of building both cache keys.
Result<GemmProblem> overridden_view(const OpGraph& g, const VariantPack& pack, const runtime::KernelRequest& have,
                                    const GemmConfig& config);
// Whether two requests name the same cubin on one architecture: KernelRequest::key's
// fields (family, kernel, source, entry, defines) equal, without building the keys
// (the arch and the compile options, the rest of a key, are the same for both).
bool same_kernel(const runtime::KernelRequest& a, const runtime::KernelRequest& b);
// OK when launch `now` (launch_plan_for the overridden view, with the built
// plan's resident clusters) fits the split-K scratch the plan sized at build
// for `built`; GRAPH_NOT_SUPPORTED naming both sizes otherwise (a split-K /
// stream-K schedule of larger extents needs more partials than the plan holds:
// build a plan for the larger shape).
Status override_fits_scratch(const LaunchPlan& now, const LaunchPlan& built);
// The split-K counter bytes a v2 plan allocates with launch `p`'s partials: enough for
// every schedule those partials hold at 2 splits or more (8 bytes per split tile and CTA
// of a cluster), so an override with more tiles and fewer splits fits; 0 without partials.
std::int64_t scratch_counter_bytes(const GemmConfig& c, const LaunchPlan& p);
// The launch of an overridden kernel view `kp` under `c` (the kernel view's config),
// with the built plan's resident clusters, within scratch `cap` (cap.partial_bytes,
// cap.counter_bytes: what the plan allocated): the plan's own schedule at the call's
// extents when it fits; else the same kernel with fewer K splits, the most that fit, down
// to one (no scratch). The split count and stream-K are launch arguments, not kernel
// defines, so every such launch runs the built cubin; a stream-K schedule past the
// scratch runs with neither. Pure: CI tests it without a GPU.
LaunchPlan override_launch(const GemmProblem& kp, const GemmConfig& c, int sm_count, int resident,
                           const LaunchPlan& cap);

// The split-K scratch of one v2 plan: fp32 partials (partial_bytes) then u32
// tile counters (counter_bytes) per slot, at most `max_slots` slots (default
// kMaxSlots). A slot belongs to one stream at a time, so two executes of one
// plan on different streams never share partials or counters at once (the
// same stream orders its executes, so they share its slot).
//
// acquire() gives the stream its slot (no driver call: same-stream order),
// or else (in this order):
//  - a new slot while fewer than max_slots exist: allocated, counters zeroed
//    (cuMemsetD32, then a wait on the legacy stream so a non-blocking stream
//    cannot overtake the memset), a completion event created;
//  - the least recently used slot whose last launch finished (cuEventQuery on
//    the event release() recorded after it): handed over as it is;
//  - the least recently used slot still in flight: handed over with the new
//    stream made to wait for its last launch (cuStreamWaitEvent), a device-side
//    wait; the host does not block. (Only with more than max_slots streams
//    executing one plan at once.)
// A slot between acquire() and release() (leased: its launch is being
// enqueued) is never handed over; when every slot is leased, acquire() waits
// on the host for a release (a few microseconds: a launch). Slots are reused,
// never freed before the plan dies, so no launch in flight can lose its
// memory. Counters stay zero between launches: the kernel leaves them zero at
// exit, a launch the driver refuses never ran, and a kernel that faults kills
// the context.
//
// A slot whose event could not be recorded (or a driver without the event
// API) is pinned: it stays with its stream (same-stream order keeps it safe)
// and is never handed over; nor is a slot while cuEventQuery cannot answer
// for it (untrackable: its last record was under stream capture, and a graph
// may replay it). Only when every slot is pinned or untrackable does
// acquire() allocate past max_slots (the old one-slot-per-stream behaviour).
//
// Steady state (the stream has its slot): acquire() is a mutex and a scan,
// release() a mutex and one cuEventRecord (the one driver call added per
// split-K execute; legal under stream capture, where it records a node).
//
// Why not the caller's workspace (workspace_size() > 0 plus a
// cuMemsetD32Async of the counters on every execute)? That is one more
// device operation per execute against split-K's targets (decode shapes,
// kernels of ~10 us); a slot costs its memset once.
//
// Keys: the stream handle. CU_STREAM_PER_THREAD names a different stream on
// every thread, so its key adds the thread id; CU_STREAM_LEGACY and nullptr
// are the same (legacy) stream and share a slot. Caveats: (1) a stream
// destroyed while a split-K execute on it is in flight, whose handle the
// driver then gives to a new stream (or a per-thread stream of a thread whose
// id a new thread gets), shares its slot with that launch: synchronize a
// stream before destroying it. (2) Stream capture: the first execute on a
// stream, and one that takes over another stream's slot, must not be under
// capture (the counters' memset runs on the legacy stream; a wait on an event
// recorded outside the capture is refused; acquire() refuses to allocate a
// slot for a stream the driver reports capturing, INVALID_VALUE saying to
// execute once first); a captured execute leaves its
// slot untrackable (above) until the stream's next eager execute re-records
// it, after which the slot can be handed over again: do not replay such a
// graph while more than max_slots streams execute the plan.
class StreamScratch {
 public:
  // N: a serving stack rarely runs one plan on more than a few streams at
  // once; each slot is up to tiles * splits * max(TILE_M, 128) * TILE_N * 4 bytes.
  static constexpr std::size_t kMaxSlots = 4;

  // `ctx`: the context the slots are allocated in (the runtime's; acquire()
  // and release() run with it current).
  StreamScratch(std::int64_t partial_bytes, std::int64_t counter_bytes, CUcontext ctx,
                std::size_t max_slots = kMaxSlots)
      : partial_bytes_(partial_bytes), counter_bytes_(counter_bytes), ctx_(ctx), max_slots_(max_slots ? max_slots : 1) {}
  // Frees every slot and destroys its event through the table that allocated
  // it, with `ctx` made current (ContextScope), whichever thread drops the
  // plan. The plan's launches must have finished (as for any device memory).
  ~StreamScratch();
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  // One slot, leased to one launch: device addresses of the partials and the
  // counters (256-byte aligned); `index` is release()'s handle.
  struct Slot {
    std::uint64_t partials = 0, counters = 0;
    std::size_t index = 0;
  };
  // The slot of `stream` for the calling thread, leased until release().
  // CUDA_API_FAILED naming the call when cuMemAlloc / cuMemsetD32 /
  // cuStreamSynchronize / cuEventCreate / cuStreamWaitEvent fails (nothing is
  // kept or handed over; the next call tries again).
  Result<Slot> acquire(const runtime::CudaDriverApi& api, CUstream stream);
  // Ends the lease of `slot`: records its event on `stream` when `launched`
  // (the kernel was enqueued). CUDA_API_FAILED naming cuEventRecord when that
  // fails (the slot is then pinned to its stream); the lease ends either way.
  Status release(const runtime::CudaDriverApi& api, const Slot& slot, CUstream stream, bool launched);

  // Slots allocated so far (tests; at most max_slots unless every slot is pinned).
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
    CUevent done = nullptr;  // recorded by release() after each launch
    bool recorded = false;   // `done` holds a record
    bool pinned = false;     // no usable record: never handed to another stream
    int leases = 0;          // acquired, not yet released
    std::uint64_t last_use = 0;
  };
  enum class Last : std::uint8_t { FINISHED, RUNNING, UNKNOWN };
  static Key key_of(CUstream stream);
  static Last last_launch(const runtime::CudaDriverApi& api, const Entry& e);
  Slot slot_of(std::size_t i) const;
  Result<Entry> allocate(const runtime::CudaDriverApi& api, const Key& key);

  std::int64_t partial_bytes_, counter_bytes_;
  CUcontext ctx_;
  std::size_t max_slots_;
  mutable std::mutex mu_;
  std::condition_variable released_;
  const runtime::CudaDriverApi* api_ = nullptr;  // the table that allocated the slots
  std::vector<Entry> slots_;                    // never shrinks: indices are stable
  std::uint64_t tick_ = 0;
};

}  // namespace opgraph::gemm
