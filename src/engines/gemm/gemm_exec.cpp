// engines/gemm/gemm_exec.cpp — launch_plan and StreamScratch (contracts in
// gemm_exec.h; ContextScope and ContextRestore are runtime/context_scope.cpp).
#include "engines/gemm/gemm_exec.h"

#include <algorithm>
#include <cstdlib>

namespace opgraph::gemm {
namespace {

std::int64_t round256(std::int64_t b) { return (b + 255) / 256 * 256; }

}  // namespace

LaunchPlan launch_plan_for(const GemmProblem& kp, const GemmConfig& config, int sm_count, int resident) {
  GemmConfig c = config;
  c.swap_ab = false;  // kp is the kernel view already
  LaunchPlan p;
  p.resident = resident;
  p.dims.shared_bytes = smem_bytes(kp, c);
  p.dims.cluster[0] = static_cast<unsigned>(c.cluster_m);
  if (c.version != 2) {
    grid_of(kp, c, p.dims.grid, p.dims.block, sm_count, resident);
    return p;
  }
  p.sched = v2_schedule(kp, c, sm_count, resident);
  v2_grid(c, p.sched, p.dims.grid, p.dims.block);  // from this schedule, not a second one
  p.partial_bytes = v2_partial_bytes(c, p.sched);
  p.counter_bytes = v2_counter_bytes(c, p.sched);
  return p;
}

Result<OperandTable> operand_table_for(const GemmProblem& kp, const DeclaredLayout* layout, OperandSlots& slots) {
  if (!layout) return Status(ErrorCode::INTERNAL_ERROR, "engine gemm: built without the graph's layout");
  std::vector<std::int64_t> positions;
  auto row_of = [&](std::int64_t uid, std::int32_t& row) -> Status {
    const std::int64_t pos = layout->index_of(uid);
    if (pos < 0)
      return {ErrorCode::INTERNAL_ERROR,
              "engine gemm: tensor uid " + std::to_string(uid) + " has no position in the graph's operand layout"};
    auto it = std::find(positions.begin(), positions.end(), pos);
    row = static_cast<std::int32_t>(it - positions.begin());
    if (it == positions.end()) positions.push_back(pos);
    return Status::ok();
  };
  slots = OperandSlots{};
  OPGRAPH_CHECK(row_of(kp.a.uid, slots.a));
  OPGRAPH_CHECK(row_of(kp.b.uid, slots.b));
  OPGRAPH_CHECK(row_of(kp.c.uid, slots.c));
  for (std::size_t i = 0; i < kp.operands.size() && i < static_cast<std::size_t>(kMaxEpilogueOperands); ++i)
    if (!kp.operands[i].by_value) OPGRAPH_CHECK(row_of(kp.operands[i].view.uid, slots.epi[i]));
  OperandNeeds needs;
  needs.declared_extents = true;
  needs.declared_strides = true;  // the views' strides are the declaration's, baked into the parameters
  needs.declared_dtype = true;
  needs.memory = MemoryKind::DEVICE;
  needs.declared_alignment = true;  // G7: the 16-byte class's cp.async / TMA rely on it
  return OperandTable(*layout, needs, "gemm", positions);
}

bool same_kernel(const runtime::KernelRequest& a, const runtime::KernelRequest& b) {
  if (a.family != b.family || a.kernel != b.kernel || a.source != b.source || a.entry != b.entry ||
      a.defines.size() != b.defines.size())
    return false;
  for (std::size_t i = 0; i < a.defines.size(); ++i)
    if (a.defines[i].name != b.defines[i].name || a.defines[i].value != b.defines[i].value) return false;
  return true;
}

Result<GemmProblem> overridden_view(const OpGraph& g, const VariantPack& pack, const GemmProblem& built,
                                    const GemmConfig& config) {
  return overridden_view(g, pack, kernel_request(built, config), config);
}

Result<GemmProblem> overridden_view(const OpGraph& g, const VariantPack& pack, const runtime::KernelRequest& have,
                                    const GemmConfig& config) {
  const std::string head = "engine gemm: execute-time shape override refused: ";
  auto p = analyze_gemm(g, &pack);
  if (p.is_bad()) return Status(p.status().code(), head + p.status().message());
  const runtime::KernelRequest want = kernel_request(*p, config);
  if (!same_kernel(want, have))
    return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                  head + "the new extents need kernel " + want.kernel + ", the plan holds " + have.kernel +
                      " (another layout or alignment class: the 16-byte class needs contiguous extents and strides "
                      "that are multiples of 8); build a plan for this shape");
  if (!config_takes(*p, config))
    return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                  head + "PIPELINE_ARCH=2 takes extents within int32 (M " + std::to_string(p->m) + ", N " +
                      std::to_string(p->n) + ", K " + std::to_string(p->k) + ")");
  return kernel_view(*p, config);
}

Status override_fits_scratch(const LaunchPlan& now, const LaunchPlan& built) {
  if (now.partial_bytes <= built.partial_bytes && now.counter_bytes <= built.counter_bytes) return Status::ok();
  return {ErrorCode::GRAPH_NOT_SUPPORTED,
          "engine gemm: execute-time shape override refused: its split-K schedule (" + std::to_string(now.sched.tiles) +
              " tiles, " + std::to_string(now.sched.splits) + " splits) needs " + std::to_string(now.partial_bytes) +
              " bytes of partials and " + std::to_string(now.counter_bytes) + " of counters; the plan's scratch was "
              "sized at build for " + std::to_string(built.partial_bytes) + " and " +
              std::to_string(built.counter_bytes) + " (build a plan for the larger shape, or one without split-K)"};
}

std::int64_t scratch_counter_bytes(const GemmConfig& c, const LaunchPlan& p) {
  if (p.partial_bytes <= 0) return 0;
  const std::int64_t slot = static_cast<std::int64_t>(std::max(c.tile_m, 128)) * c.tile_n * 4;  // v2_partial_bytes
  const std::int64_t slots = p.partial_bytes / slot;  // split tiles x splits x cluster CTAs
  return std::max(p.counter_bytes, slots / 2 * 8);  // at 2 splits: slots / 2 tile CTAs, 2 u32 each
}

LaunchPlan override_launch(const GemmProblem& kp, const GemmConfig& c, int sm_count, int resident,
                           const LaunchPlan& cap) {
  auto fits = [&](const LaunchPlan& p) {
    return p.partial_bytes <= cap.partial_bytes && p.counter_bytes <= cap.counter_bytes;
  };
  LaunchPlan p = launch_plan_for(kp, c, sm_count, resident);
  if (fits(p)) return p;
  GemmConfig fewer = c;
  fewer.stream_k = 0;
  for (fewer.split_k = static_cast<int>(std::min<std::int64_t>(c.split_k, p.sched.splits)) - 1; fewer.split_k > 1;
       --fewer.split_k) {
    p = launch_plan_for(kp, fewer, sm_count, resident);
    if (fits(p)) return p;
  }
  fewer.split_k = 1;
  return launch_plan_for(kp, fewer, sm_count, resident);  // un-split: no scratch
}

Result<LaunchPlan> launch_plan(const GemmProblem& kp, const GemmConfig& c, int sm_count,
                               const MaxActiveClusters& max_active_clusters) {
  int resident = 0;
  if (c.cluster_m > 1) {
    // The query sees the launch's block, shared memory and cluster shape
    // (and the default grid, a whole number of clusters).
    const LaunchPlan probe = launch_plan_for(kp, c, sm_count, 0);
    Result<int> n = max_active_clusters(probe.dims);
    if (n.is_good()) {
      resident = std::max(*n, 0);
    } else if (n.status().code() != ErrorCode::GRAPH_NOT_SUPPORTED) {
      // Only "the driver cannot answer" (GRAPH_NOT_SUPPORTED) falls back to
      // sm_count / CLUSTER_M; a refused query (no context, a configuration
      // the device cannot launch) would fail the launch too: say so now.
      return Status(n.status().code(),
                    "engine gemm: sizing the clustered grid (CLUSTER_M=" + std::to_string(c.cluster_m) +
                        ", shared " + std::to_string(probe.dims.shared_bytes) + " bytes): " + n.status().message());
    }
    if (const char* v = std::getenv("OPGRAPH_GEMM_RESIDENT_CLUSTERS"); v && std::atoi(v) > 0) resident = std::atoi(v);
  }
  return launch_plan_for(kp, c, sm_count, resident);
}

Result<LaunchPlan> launch_plan(const GemmProblem& kp, const GemmConfig& c, const runtime::KernelRuntime& rt,
                               const runtime::LoadedKernel& kernel) {
  const ContextScope bound(rt.api(), rt.context());
  OPGRAPH_CHECK(bound.status());
  return launch_plan(kp, c, rt.device().sm_count,
                     [&](const runtime::LaunchDims& d) { return rt.max_active_clusters(kernel, d); });
}

StreamScratch::~StreamScratch() {
  if (slots_.empty()) return;
  const ContextScope bound(*api_, ctx_);
  for (const Entry& e : slots_) {
    api_->mem_free(e.base);
    if (e.done) api_->event_destroy(e.done);
  }
}

StreamScratch::Key StreamScratch::key_of(CUstream stream) {
  Key key;
  if (stream == CU_STREAM_PER_THREAD) {
    key.stream = stream;
    key.thread = std::this_thread::get_id();
  } else if (stream != CU_STREAM_LEGACY) {
    key.stream = stream;
  }
  return key;
}

StreamScratch::Slot StreamScratch::slot_of(std::size_t i) const {
  const CUdeviceptr base = slots_[i].base;
  return Slot{base, base + static_cast<std::uint64_t>(round256(partial_bytes_)), i};
}

// Under mu_: a new slot for `key`, counters zeroed and waited for, its event created.
Result<StreamScratch::Entry> StreamScratch::allocate(const runtime::CudaDriverApi& api, const Key& key) {
  Entry e;
  e.key = key;
  const std::int64_t counter_offset = round256(partial_bytes_);
  const std::int64_t total = counter_offset + round256(counter_bytes_);
  OPGRAPH_CHECK(runtime::cuda_check(api, api.mem_alloc(&e.base, static_cast<std::size_t>(total)),
                                    "engine gemm v2: cuMemAlloc of a split-K scratch slot (" + std::to_string(total) +
                                        " bytes)"));
  const CUdeviceptr counters = e.base + static_cast<CUdeviceptr>(counter_offset);
  Status made = runtime::cuda_check(
      api, api.memset_d32(counters, 0, static_cast<std::size_t>(round256(counter_bytes_) / 4)),
      "engine gemm v2: cuMemsetD32 of the split-K counters");
  if (made.is_good())
    made = runtime::cuda_check(api, api.stream_synchronize(nullptr),
                               "engine gemm v2: cuStreamSynchronize after zeroing the split-K counters");
  const bool events = api.event_create && api.event_record && api.event_query && api.stream_wait_event &&
                      api.event_destroy;
  if (made.is_good() && events)
    made = runtime::cuda_check(api, api.event_create(&e.done, CU_EVENT_DISABLE_TIMING),
                               "engine gemm v2: cuEventCreate for a split-K scratch slot");
  if (made.is_bad()) {
    api.mem_free(e.base);
    return made;
  }
  e.pinned = !events;  // without the event API a slot can never be shown idle
  return e;
}

// Under mu_: what the slot's event says about its last launch.
StreamScratch::Last StreamScratch::last_launch(const runtime::CudaDriverApi& api, const Entry& e) {
  if (e.pinned) return Last::UNKNOWN;
  if (!e.recorded) return Last::FINISHED;  // never launched (or only refused launches)
  const CUresult r = api.event_query(e.done);
  if (r == CUDA_SUCCESS) return Last::FINISHED;
  if (r == CUDA_ERROR_NOT_READY) return Last::RUNNING;
  return Last::UNKNOWN;  // e.g. CUDA_ERROR_CAPTURED_EVENT: last recorded under stream capture
}

Result<StreamScratch::Slot> StreamScratch::acquire(const runtime::CudaDriverApi& api, CUstream stream) {
  const Key key = key_of(stream);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    const std::uint64_t now = ++tick_;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      Entry& e = slots_[i];
      if (!(e.key == key)) continue;
      // No driver call: the stream orders its own launches (and this path
      // may run under stream capture, where a query or a wait on an event
      // recorded outside it is refused).
      ++e.leases;
      e.last_use = now;
      return slot_of(i);
    }
    // Below the bound: a new slot.
    bool leased = false;
    std::size_t idle = slots_.size(), busy = slots_.size();
    if (slots_.size() >= max_slots_) {
      // Full: the least recently used slot nobody is enqueueing on, one whose
      // last launch finished first, else one still running (waited for).
      for (std::size_t i = 0; i < slots_.size(); ++i) {
        const Entry& e = slots_[i];
        if (e.leases > 0) {
          leased = true;
          continue;
        }
        const Last last = last_launch(api, e);
        if (last == Last::UNKNOWN) continue;  // pinned, or its launches cannot be tracked
        std::size_t& best = last == Last::FINISHED ? idle : busy;
        if (best == slots_.size() || e.last_use < slots_[best].last_use) best = i;
      }
      std::size_t take = idle;
      if (take == slots_.size() && busy != slots_.size()) {
        take = busy;
        OPGRAPH_CHECK(runtime::cuda_check(api, api.stream_wait_event(stream, slots_[take].done, 0),
                                          "engine gemm v2: cuStreamWaitEvent for a split-K scratch slot's last launch"));
      }
      if (take != slots_.size()) {
        Entry& e = slots_[take];
        e.key = key;
        e.leases = 1;
        e.last_use = now;
        return slot_of(take);
      }
      if (leased) {
        // A slot's launch is being enqueued (microseconds): wait for its release.
        released_.wait(lock);
        continue;
      }
      // Every slot is pinned or untrackable: one more, past the bound.
    }
    // A new slot allocates and waits for its zeroed counters: illegal while
    // `stream` is being captured into a CUDA graph. Say what to do instead of
    // letting the driver invalidate the capture.
    if (api.stream_is_capturing) {
      CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
      if (api.stream_is_capturing(stream, &capturing) == CUDA_SUCCESS && capturing != CU_STREAM_CAPTURE_STATUS_NONE)
        return Status(ErrorCode::INVALID_VALUE,
                      "engine gemm v2: a split-K / stream-K plan allocates a stream's scratch slot (and zeroes its "
                      "counters, with a sync) on the stream's first execute, which cannot run under stream capture: "
                      "execute the plan once on this stream before capturing");
    }
    auto e = allocate(api, key);
    if (e.is_bad()) return e.status();
    e->leases = 1;
    e->last_use = now;
    api_ = &api;
    slots_.push_back(*e);
    return slot_of(slots_.size() - 1);
  }
}

Status StreamScratch::release(const runtime::CudaDriverApi& api, const Slot& slot, CUstream stream, bool launched) {
  Status recorded = Status::ok();
  {
    std::lock_guard<std::mutex> lock(mu_);
    Entry& e = slots_[slot.index];
    if (launched && !e.pinned) {
      recorded = runtime::cuda_check(api, api.event_record(e.done, stream),
                                     "engine gemm v2: cuEventRecord after a split-K launch");
      if (recorded.is_good()) e.recorded = true;
      else e.pinned = true;  // cannot show when this launch ends: keep the slot on its stream
    }
    --e.leases;
  }
  released_.notify_all();
  return recorded;
}

std::size_t StreamScratch::slot_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return slots_.size();
}

}  // namespace opgraph::gemm
