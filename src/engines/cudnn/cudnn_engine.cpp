// engines/cudnn/cudnn_engine.cpp — CudnnEngine (check_support / build_plan),
// CudnnPlan (workspace; execute with the plan's CUDA context bound on the
// calling thread, through a variant pack reused while the call's pointers and
// workspace repeat) and the provider. Threading contract: docs/cudnn.md.
#include "engines/cudnn/cudnn_engine.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>

#include "engines/cudnn/backend.h"
#include "engines/cudnn/dynamic_shapes.h"
#include "engines/cudnn/heuristics.h"
#include "exec/operand_table.h"
#include "runtime/context_scope.h"
#include "opgraph/op_graph.h"
#include "plan/engine_ids.h"

namespace opgraph::engines {
namespace {

using namespace cudnn;

// Process-wide counts of execute-time shape overrides served by cuDNN plans (tests read them).
std::atomic<std::int64_t> g_shapes_finalized{0}, g_shapes_reused{0}, g_shapes_declined{0};

}  // namespace

DynamicShapeCounts dynamic_shape_counts() noexcept {
  return {g_shapes_finalized.load(), g_shapes_reused.load(), g_shapes_declined.load()};
}

// The plan's operand table: one row per caller tensor (lp.caller_uids, in that
// order) at its position in the graph's layout, asking for the declared
// extents, strides (cuDNN's tensor descriptors were built from them), dtype,
// device memory and the alignment the descriptor promised cuDNN
// (CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT; at least the declared one). INTERNAL_ERROR
// when a caller tensor has no position (the lowering and the layout disagree).
Result<OperandTable> operand_table_of(const LoweringPlan& lp, const DeclaredLayout* layout) {
  if (!layout) return Status(ErrorCode::INTERNAL_ERROR, "engine cudnn: built without the graph's layout");
  std::vector<std::int64_t> positions;
  positions.reserve(lp.caller_uids.size());
  for (std::int64_t uid : lp.caller_uids) {
    const std::int64_t pos = layout->index_of(uid);
    if (pos < 0)
      return Status(ErrorCode::INTERNAL_ERROR, "engine cudnn: tensor uid " + std::to_string(uid) +
                                                   " of the lowering has no position in the graph's operand layout");
    positions.push_back(pos);
  }
  OperandNeeds needs;
  needs.declared_extents = true;
  needs.declared_strides = true;
  needs.declared_dtype = true;
  needs.memory = MemoryKind::DEVICE;
  needs.declared_alignment = true;
  OperandTable table(*layout, needs, "cudnn", positions);
  // The built plan's descriptors hold the declared extents and strides; a call
  // that overrides them runs a plan finalised for its extents (CudnnPlan's
  // execute_overridden, which checks the table with accepts_overridden). This
  // reason is what a check of the declared geometry alone says.
  table.decline_overrides(
      "cudnn: the built execution plan runs the declared extents and strides; other extents run an execution plan "
      "finalised for them on cuDNN's dynamic shapes (docs/dynamic_shapes.md)");
  for (std::size_t i = 0; i < lp.caller_uids.size(); ++i) {
    const TensorRecord* t = lp.tensor(lp.caller_uids[i]);
    if (!t || t->record < 0) continue;
    const AttrRecord* a = lp.records[static_cast<std::size_t>(t->record)].find(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT);
    if (a && !a->ints.empty()) table.require_alignment(i, a->ints[0]);
  }
  return table;
}

namespace {

// A finalised KERNEL_CACHE descriptor, bound to `op_graph` where the loaded
// cuDNN takes that (>= 9.5, CUDNN_ATTR_KERNEL_CACHE_OPERATION_GRAPH).
Result<Descriptor> kernel_cache_for(const CudnnApi& api, const Descriptor& op_graph) {
  auto kc = Descriptor::create(api, CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR, "kernel cache");
  if (kc.is_bad()) return kc.status();
  if (static_cast<std::int64_t>(api.version) >= kKernelCacheGraphMinVersion) {
    cudnnBackendDescriptor_t g = op_graph.get();
    OPGRAPH_CHECK(kc->set(CUDNN_ATTR_KERNEL_CACHE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g, Step::BUILD,
                          "kernel cache"));
  }
  OPGRAPH_CHECK(kc->finalize(Step::BUILD, "kernel cache"));
  return kc;
}

// What a plan re-lowers an execute-time shape override from: the canonical
// JSON of the graph it was built on, the lowering options, the engine config
// built, and the reason overrides are declined outright ("" : served).
struct DynamicSource {
  std::string json;
  LoweringOptions options;
  PlanConfig config;
  std::string unavailable;
};

// The last finalized variant pack of a plan and what it was made of (guarded
// by mu; ptrs keeps its capacity across misses).
struct VariantPackCache {
  std::mutex mu;
  Descriptor vp;
  std::vector<void*> ptrs;  // parallel to the plan's uids
  void* ws = nullptr;
};

// One shape's execution plan (or its cached refusal), finalised on the graph
// lowered at the call's extents with cuDNN's dynamic shapes. Members in
// destruction order: the plan before its own kernel cache (if any) before the
// operation graph they reference.
struct ShapePlan {
  Status declined = Status::ok();      // not ok: this shape is refused with it (cached)
  LoweringPlan lowering;               // at the shape's extents (same uids as the built one)
  std::shared_ptr<Materialised> graph;  // its descriptors, alive while the plan is
  Descriptor kernel_cache;              // its own (DynamicState::fresh_kernel_cache); else empty
  Descriptor plan;
  WorkspaceLayout ws;
  mutable VariantPackCache packs;  // its last variant pack (destroyed before the plan)
};

// A plan's per-shape state, guarded by mu. The kernel cache (created with the
// first shape finalised, bound to that shape's operation graph, which it keeps
// alive) is shared by every shape's execution plan, so a later shape reuses
// the kernels cuDNN compiled for an earlier one (not for an SDPA graph, whose
// shapes each get their own: fresh_kernel_cache, override_policy of the built
// lowering, decided at the plan's first override, so a plan never overridden
// never looks). Destruction order: the shapes' plans, then the cache, then the
// graph it references.
struct DynamicState {
  std::mutex mu;
  std::optional<bool> fresh_kernel_cache;
  std::shared_ptr<Materialised> cache_graph;
  Descriptor kernel_cache;
  ShapeCache<const ShapePlan> shapes{kShapePlansPerPlan};
};

class CudnnPlan final : public CompiledPlan {
 public:
  // `ws`: the engine's own workspace bytes; the lowering's scratch tensors follow
  // them (256-aligned) in the caller's workspace. `built_on`: the handle the
  // plan was built with, whose context every execute binds; `ordinal`: the
  // device that context belongs to (a handle on another one is refused).
  // `table`: the operand table over the caller's tensors, one row per
  // caller_uids entry in that order (operand_table_of).
  // `dynamic`: what an execute-time shape override re-lowers and re-finalises
  // with (the graph, the options it was lowered with, the engine config built).
  // `build_cache`: the kernel cache `plan` was finalised with (a graph planned
  // dynamic, Graph::set_dynamic_shapes), bound to `m`'s operation graph; every
  // shape's plan then shares it. Empty for a static plan (the first shape
  // finalised makes one).
  CudnnPlan(const CudnnApi& api, const runtime::CudaDriverApi& driver, BoundHandle built_on, int ordinal,
            LoweringPlan lp, Materialised m, Descriptor plan, std::int64_t ws, OperandTable table, DynamicSource dynamic,
            Descriptor build_cache = Descriptor())
      : api_(&api), driver_(&driver), context_(built_on.context), ordinal_(ordinal), lowering_(std::move(lp)),
        graph_(std::move(m)), build_cache_(std::move(build_cache)),
        plan_(std::move(plan)), scratch_at_(workspace_layout(ws, lowering_).scratch_at),
        workspace_(workspace_layout(ws, lowering_).total), table_(std::move(table)), dynamic_(std::move(dynamic)) {
    // The uid order (caller, by-value, scratch) and the by-value pointers are
    // fixed by the lowering: built once here, not per execute.
    uids_.reserve(lowering_.caller_uids.size() + lowering_.by_value_uids.size() + lowering_.scratch.size());
    uids_.insert(uids_.end(), lowering_.caller_uids.begin(), lowering_.caller_uids.end());
    uids_.insert(uids_.end(), lowering_.by_value_uids.begin(), lowering_.by_value_uids.end());
    for (std::int64_t uid : lowering_.by_value_uids)
      by_value_ptrs_.push_back(const_cast<unsigned char*>(lowering_.tensor(uid)->scalar_bytes.data()));  // read only
    for (const ScratchTensor& s : lowering_.scratch) uids_.push_back(s.uid);
    constant_at_.assign(lowering_.scratch.size(), 0);
  }
  ~CudnnPlan() override {
    if (!constants_) return;
    std::optional<runtime::ContextScope> bound;
    if (context_) bound.emplace(*driver_, context_);
    driver_->mem_free(constants_);
  }
  CudnnPlan(const CudnnPlan&) = delete;
  CudnnPlan& operator=(const CudnnPlan&) = delete;

  // The scratch tensors that carry initial bytes (ALiBi slopes: constants of the
  // lowering, read only) go to one device buffer the plan owns, written ONCE here,
  // at build, with the plan's context bound (the caller's building scope). Execute
  // then points the variant pack at it: no host-to-device copy, allocation or
  // host sync per execute, so an execute can be captured into a CUDA graph and
  // replayed. Their bytes in the caller's workspace stay reserved (unused).
  Status upload_constants() {
    std::int64_t total = 0;
    for (const ScratchTensor& s : lowering_.scratch)
      if (!s.init.empty()) total += (static_cast<std::int64_t>(s.init.size()) + 255) / 256 * 256;
    if (total == 0) return Status::ok();
    std::optional<runtime::ContextScope> bound;
    if (context_) {
      bound.emplace(*driver_, context_);
      OPGRAPH_CHECK(bound->status());
    }
    CUresult r = driver_->mem_alloc(&constants_, static_cast<std::size_t>(total));
    if (r != CUDA_SUCCESS) {
      constants_ = 0;
      return {ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED,
              "engine cudnn: cuMemAlloc of " + std::to_string(total) + " bytes for the plan's constant tensors "
              "(ALiBi slopes) failed (CUresult " + std::to_string(static_cast<int>(r)) + ")"};
    }
    CUdeviceptr at = constants_;
    for (std::size_t i = 0; i < lowering_.scratch.size(); ++i) {
      const ScratchTensor& s = lowering_.scratch[i];
      if (s.init.empty()) continue;
      r = driver_->memcpy_htod(at, s.init.data(), s.init.size());
      if (r != CUDA_SUCCESS)
        return {ErrorCode::GRAPH_EXECUTION_PLAN_CREATION_FAILED,
                "engine cudnn: copying the initial bytes of constant tensor uid " + std::to_string(s.uid) +
                    " to the device failed (CUresult " + std::to_string(static_cast<int>(r)) + ")"};
      constant_at_[i] = at;
      at += static_cast<CUdeviceptr>((s.init.size() + 255) / 256 * 256);
    }
    return Status::ok();
  }

  std::int64_t workspace_size() const override { return workspace_; }

  // With overrides the call's extents decide: the workspace of the execution
  // plan finalised for them (finalised here on the first call at a shape, so a
  // later execute at it finalises nothing). Refusals as execute's.
  Result<std::int64_t> workspace_size_for(const VariantPack& pack) const override {
    if (!pack.has_overrides() || table_.accepts(pack)) return workspace_;
    return overridden_workspace(pack, nullptr);
  }
  Result<std::int64_t> workspace_size_for_call(const VariantPack& pack, const ExecutionContext& ctx) const override {
    if (!pack.has_overrides() || table_.accepts(pack)) return workspace_;
    return overridden_workspace(pack, &ctx);
  }

  // Runs with the plan's context current on the calling thread (any thread:
  // none current, or another device's) and the caller's put back after; on
  // this thread's handle for that context, with ctx.stream set on it.
  Status execute(const VariantPack& pack, const ExecutionContext& ctx) const override {
    // The plan, its handle and its context belong to the device it was built
    // on: a handle on another device is refused, never run there.
    if (ctx.device && ctx.device->ordinal >= 0 && ctx.device->ordinal != ordinal_)
      return {ErrorCode::INVALID_CUDA_DEVICE, "engine cudnn: the plan was built on device " + std::to_string(ordinal_) +
                                                  "; this call's handle drives device " +
                                                  std::to_string(ctx.device->ordinal)};
    // The one branch an override adds (an override equal to the declaration runs the built plan).
    if (pack.has_overrides() && !table_.accepts(pack)) return execute_overridden(pack, ctx);
    if (ctx.workspace.bytes < workspace_)
      return {ErrorCode::INVALID_VALUE, "engine cudnn: workspace too small: needs " + std::to_string(workspace_) +
                                            " bytes, got " + std::to_string(ctx.workspace.bytes)};
    std::optional<runtime::ContextScope> bound;
    OPGRAPH_CHECK(bind_context(bound));
    // The one check: the caller's buffers against the table built at build (a
    // refusal goes to its checker, which names the operand and the rule).
    if (!table_.accepts(pack)) return table_.explain(pack);
    return run_cached(pack, ctx, cache_, plan_, scratch_at_, lowering_.scratch);
  }

  Result<std::string> serialize_backend() const override { return execution_plan_json(*api_, plan_); }

 private:
  // The plan's context made current on this thread for the scope of `bound`
  // (nothing when the plan has none).
  Status bind_context(std::optional<runtime::ContextScope>& bound) const {
    if (!context_) return Status::ok();
    bound.emplace(*driver_, context_);
    if (bound->status().is_bad())
      return {ErrorCode::GRAPH_EXECUTION_FAILED, "engine cudnn: " + bound->status().message()};
    return Status::ok();
  }

  // Runs `plan` (the built one, or a shape's) on the caller's buffers: the last
  // call's finalized variant pack in `cache` serves this one when its pointers
  // and workspace are this call's (compared in place: a hit allocates nothing).
  // One call at a time uses it: a call that finds another holding it finalizes a
  // pack of its own in a pointer array of its own (never waits). `scratch_at`,
  // `scratch`: where the plan's lowering puts its scratch tensors in the workspace.
  Status run_cached(const VariantPack& pack, const ExecutionContext& ctx, VariantPackCache& cache,
                    const Descriptor& plan, std::int64_t scratch_at, const std::vector<ScratchTensor>& scratch) const {
    void* ws = ctx.workspace.data;
    std::unique_lock<std::mutex> lock(cache.mu, std::try_to_lock);
    if (lock.owns_lock() && cache.vp && cache.ws == ws && pointers_are(pack, cache.ptrs))
      return launch(ctx, cache.vp, plan);
    std::vector<void*> own;
    std::vector<void*>& ptrs = lock.owns_lock() ? cache.ptrs : own;
    if (lock.owns_lock()) cache.vp = Descriptor();  // invalid until the new one is finalized
    gather(pack, ws, scratch_at, scratch, ptrs);
    auto vp = variant_pack(ptrs, ws);
    if (vp.is_bad()) return vp.status();
    if (!lock.owns_lock()) return launch(ctx, vp.value(), plan);
    cache.vp = std::move(vp.value());
    cache.ws = ws;
    return launch(ctx, cache.vp, plan);
  }

  // Whether the caller's buffers are `ptrs`' first table_.rows().size() entries
  // (the by-value and scratch ones follow from the lowering and the workspace).
  bool pointers_are(const VariantPack& pack, const std::vector<void*>& ptrs) const {
    const OperandBuffer* ops = pack.operands().data();
    const auto& rows = table_.rows();
    if (ptrs.size() < rows.size()) return false;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (ops[rows[i].position].data != ptrs[i]) return false;
    return true;
  }

  // `ptrs` (cleared first) := the pack's pointers parallel to uids_: the
  // caller's buffers, the by-value scalars, the scratch tensors in `ws`.
  // The table accepted the pack: every caller buffer is bound.
  void gather(const VariantPack& pack, void* ws, std::int64_t scratch_at, const std::vector<ScratchTensor>& scratch,
              std::vector<void*>& ptrs) const {
    ptrs.clear();
    ptrs.reserve(uids_.size());
    const OperandBuffer* ops = pack.operands().data();
    for (const OperandRow& r : table_.rows()) ptrs.push_back(ops[r.position].data);
    ptrs.insert(ptrs.end(), by_value_ptrs_.begin(), by_value_ptrs_.end());
    for (std::size_t i = 0; i < scratch.size(); ++i)
      ptrs.push_back(constant_at_[i] ? reinterpret_cast<void*>(constant_at_[i])
                                     : static_cast<char*>(ws) + scratch_at + scratch[i].offset);
  }

  // cudnnBackendExecute of `plan` with `vp` on this thread's handle for the
  // (bound) context with ctx.stream set: one enqueue, nothing else on the stream.
  Status launch(const ExecutionContext& ctx, const Descriptor& vp, const Descriptor& plan) const {
    // execute() bound context_ (when known): the handle lookup need not ask again.
    auto h = thread_handle_on(*api_, static_cast<CUstream>(ctx.stream), context_);
    if (h.is_bad()) return h.status();
    return run(h->handle, vp, plan);
  }

  // A finalized VARIANT_PACK over `ptrs` (parallel to uids_) and workspace `ws`.
  Result<Descriptor> variant_pack(const std::vector<void*>& ptrs, void* ws) const {
    auto vp = Descriptor::create(*api_, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");
    if (vp.is_bad()) return vp.status();
    auto n = static_cast<std::int64_t>(uids_.size());
    OPGRAPH_CHECK(vp->set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids_.data(), Step::EXECUTE, "variant pack"));
    OPGRAPH_CHECK(vp->set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs.data(), Step::EXECUTE, "variant pack"));
    OPGRAPH_CHECK(vp->set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws, Step::EXECUTE, "variant pack"));
    OPGRAPH_CHECK(vp->finalize(Step::EXECUTE, "variant pack"));
    return vp;
  }

  // The error's label is built only on failure: a successful call allocates nothing.
  Status run(cudnnHandle_t h, const Descriptor& vp, const Descriptor& plan) const {
    const auto r = static_cast<cudnnStatus_t>(api_->backend_execute(h, plan.get(), vp.get()));
    if (r == CUDNN_STATUS_SUCCESS) return Status::ok();
    return check(*api_, r, Step::EXECUTE, "cudnnBackendExecute of " + lowering_.operations_summary());
  }

  // --- execute-time shape overrides (docs/dynamic_shapes.md) ---

  // A call whose overridden operands differ from the declaration: the
  // execution plan finalised for its extents (made on the first call at them,
  // reused after), the call's workspace checked against it, the caller's
  // pointers, one variant pack, one cudnnBackendExecute. Any refusal leaves
  // the caller's buffers untouched.
  Status execute_overridden(const VariantPack& pack, const ExecutionContext& ctx) const {
    if (!table_.accepts_overridden(pack)) return table_.explain_overridden(pack);
    std::optional<runtime::ContextScope> bound;
    OPGRAPH_CHECK(bind_context(bound));
    auto sp = shape_plan(pack, &ctx);
    if (sp.is_bad()) return sp.status();
    const ShapePlan& shape = *sp.value();
    if (ctx.workspace.bytes < shape.ws.total)
      return {ErrorCode::INVALID_VALUE, "engine cudnn: workspace too small for the execution plan at the call's "
                                        "overridden extents: needs " + std::to_string(shape.ws.total) +
                                            " bytes, got " + std::to_string(ctx.workspace.bytes) +
                                            " (Graph::get_workspace_size(pack) answers for the call); nothing was launched"};
    // The uids are the built plan's (lowering_difference checked the caller's,
    // by-value and scratch tensors are the same); the scratch offsets are the shape's.
    return run_cached(pack, ctx, shape.packs, shape.plan, shape.ws.scratch_at, shape.lowering.scratch);
  }

  // workspace_size_for with overrides: the shape's plan (finalised if new) and its workspace.
  Result<std::int64_t> overridden_workspace(const VariantPack& pack, const ExecutionContext* ctx) const {
    if (!table_.accepts_overridden(pack)) return table_.explain_overridden(pack);
    std::optional<runtime::ContextScope> bound;
    OPGRAPH_CHECK(bind_context(bound));
    auto sp = shape_plan(pack, ctx);
    if (sp.is_bad()) return sp.status();
    return sp.value()->ws.total;
  }

  // Whether `stream` is being captured into a CUDA graph (false when the driver cannot say).
  bool capturing(void* stream) const {
    if (!driver_->stream_is_capturing) return false;
    CUstreamCaptureStatus c = CU_STREAM_CAPTURE_STATUS_NONE;
    return driver_->stream_is_capturing(static_cast<CUstream>(stream), &c) == CUDA_SUCCESS &&
           c != CU_STREAM_CAPTURE_STATUS_NONE;
  }

  // The call's shape plan: the cached one (a refusal cached alike), else one
  // finalised now and kept (the oldest of kShapePlansPerPlan dropped). `ctx`:
  // the call's (its stream is checked for capture before anything is
  // finalised); null for Graph::get_workspace_size. The plan's context is bound.
  Result<std::shared_ptr<const ShapePlan>> shape_plan(const VariantPack& pack, const ExecutionContext* ctx) const {
    std::lock_guard<std::mutex> lock(dyn_.mu);
    const auto ops = pack.operands();
    if (auto hit = dyn_.shapes.find(ops)) {
      if (hit->declined.is_bad()) return hit->declined;
      g_shapes_reused.fetch_add(1, std::memory_order_relaxed);
      return hit;
    }
    if (ctx && capturing(ctx->stream))
      return Status{ErrorCode::INVALID_VALUE,
                    "engine cudnn: the first call at these overridden extents finalises an execution plan for them "
                    "(cuDNN allocates and may compile kernels), which cannot run under CUDA-graph stream capture: "
                    "execute the plan once at these extents before capturing (or ask Graph::get_workspace_size(pack) "
                    "for them, which finalises it); a shape already finalised runs under capture"};
    auto made = make_shape_plan(pack);
    if (made.is_bad()) return made.status();  // not about the shape (a context, a handle): not cached
    std::vector<std::int64_t> key;
    shape_key(ops, key);
    std::shared_ptr<const ShapePlan> entry = std::move(made.value());
    dyn_.shapes.insert(std::move(key), entry);
    if (entry->declined.is_bad()) {
      g_shapes_declined.fetch_add(1, std::memory_order_relaxed);
      return entry->declined;
    }
    g_shapes_finalized.fetch_add(1, std::memory_order_relaxed);
    return entry;
  }

  // A shape's plan: the graph at the call's extents, lowered with dynamic shapes,
  // checked to differ from the built lowering in extents and strides only, its
  // operation graph materialised, the built engine config finalised on it with
  // the kernel cache. What the shape decides (a graph that does not validate or
  // lower there, a lowering that needs the declared extents, anything cuDNN
  // refuses) is a ShapePlan holding the refusal; a bad status is not the shape's.
  Result<std::shared_ptr<ShapePlan>> make_shape_plan(const VariantPack& pack) const {
    auto sp = std::make_shared<ShapePlan>();
    const DeclaredLayout& layout = table_.layout();
    const auto ops = pack.operands();
    auto decline = [&](const std::string& why) {
      sp->declined = override_declined(layout, ops, why);
      return sp;
    };
    if (!dynamic_.unavailable.empty()) return decline(dynamic_.unavailable);  // e.g. a cuDNN below 9.4
    auto g = graph_at_extents(dynamic_.json, layout, ops);
    if (g.is_bad()) {
      if (g.status().code() == ErrorCode::INVALID_VARIANT_PACK) {
        sp->declined = {ErrorCode::INVALID_VARIANT_PACK,
                        "engine cudnn: execute-time shape override: " + g.status().message() + "; nothing was launched"};
        return sp;
      }
      return decline(g.status().message());
    }
    LoweringOptions o = dynamic_.options;
    o.dynamic_shapes = true;
    auto lp = lower(g.value(), o);
    if (lp.is_bad()) return decline("the graph does not lower at these extents: " + lp.status().message());
    if (static_cast<std::int64_t>(api_->version) < lp->min_cudnn_version)
      return decline("at these extents " + lp->min_version_reason + "; the loaded libcudnn is " +
                     cudnn_version_string(static_cast<std::int64_t>(api_->version)));
    if (std::string d = lowering_difference(lowering_, lp.value()); !d.empty())
      return decline("a plan finalised at other extents runs the built operation graph with other tensor extents and "
                     "strides only, and " + d);
    auto h = thread_handle(*api_);
    if (h.is_bad()) return h.status();
    auto m = materialise(*api_, lp.value(), h->handle);
    if (m.is_bad())
      return decline("cuDNN refused the dynamic-shape operation graph at these extents: " + m.status().message());
    auto graph = std::make_shared<Materialised>(std::move(m.value()));
    const Descriptor& op_graph = graph->operation_graph(lp.value());
    // An SDPA graph's shape gets a kernel cache of its own, bound to its operation
    // graph (override_policy: sharing one across its shapes gave wrong O and Stats
    // on cuDNN 9.19, a fresh one per shape right ones; H200, 2026-12-02). Otherwise
    // a plan built on a dynamic-shape graph shares the kernel cache it was built
    // with, and a static one the cache its first shape made.
    if (!dyn_.fresh_kernel_cache) dyn_.fresh_kernel_cache = override_policy(lowering_).fresh_kernel_cache;
    const bool own_cache = *dyn_.fresh_kernel_cache;
    if (own_cache || (!build_cache_ && !dyn_.kernel_cache)) {
      auto kc = kernel_cache_for(*api_, op_graph);
      if (kc.is_bad()) return decline("cuDNN refused the kernel cache: " + kc.status().message());
      if (own_cache) {
        sp->kernel_cache = std::move(kc.value());
      } else {
        dyn_.kernel_cache = std::move(kc.value());
        dyn_.cache_graph = graph;
      }
    }
    cudnnBackendDescriptor_t cache = sp->kernel_cache ? sp->kernel_cache.get()
                                     : build_cache_   ? build_cache_.get()
                                                      : dyn_.kernel_cache.get();
    auto plan = build_execution_plan(*api_, h->handle, op_graph, dynamic_.config, cache);
    if (plan.is_bad())
      return decline("cuDNN did not finalise the built engine config (engine " +
                     std::to_string(dynamic_.config.engine_id) + ", " +
                     (build_cache_ ? "chosen by the heuristics of the graph planned dynamic"
                                   : "chosen by the heuristics of the static graph: Graph::set_dynamic_shapes(true) "
                                     "plans it dynamic from the start") +
                     ") on the dynamic-shape operation graph at these extents: " + plan.status().message());
    auto ws = plan->get_int64(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, Step::BUILD, "workspace size");
    if (ws.is_bad()) return decline(ws.status().message());
    sp->ws = workspace_layout(ws.value(), lp.value());
    sp->lowering = std::move(lp.value());
    sp->graph = std::move(graph);
    sp->plan = std::move(plan.value());
    return sp;
  }

  const CudnnApi* api_;
  const runtime::CudaDriverApi* driver_;
  CUcontext context_;  // the building handle's: bound by every execute (none: nothing bound)
  int ordinal_;        // the device context_ belongs to
  LoweringPlan lowering_;
  Materialised graph_;  // kept alive: the execution plan references it
  Descriptor build_cache_;  // the kernel cache plan_ was finalised with (planned dynamic); else empty
  Descriptor plan_;
  std::int64_t scratch_at_;  // bytes: where the lowering's scratch tensors start
  std::int64_t workspace_;
  std::vector<std::int64_t> uids_;   // the variant pack's uids: caller, by-value, scratch
  std::vector<void*> by_value_ptrs_;  // into lowering_'s TensorRecords (read only)
  CUdeviceptr constants_ = 0;          // the plan's constant tensors (upload_constants), freed with the plan
  std::vector<CUdeviceptr> constant_at_;  // per lowering scratch tensor: its constant copy, 0: in the workspace
  OperandTable table_;                // the caller's tensors, parallel to caller_uids
  mutable VariantPackCache cache_;
  DynamicSource dynamic_;
  mutable DynamicState dyn_;
};

class CudnnEngine final : public Engine {
 public:
  CudnnEngine() : Engine(EngineIdentity{plan::kBackendHeuristicEngineId, "cudnn"}) {}
  const Capabilities& capabilities() const override { return caps_; }

  std::optional<std::string> mismatch(const PlanContext& ctx) const override {
    if (!ctx.target().has_device()) return "the cuDNN backend needs a device";
    // A target read off a device loaded libcuda through the runtime loader; one
    // named by arch (DeviceProperties::for_arch) did not, and is never queried.
    if (!runtime::library_loaded(runtime::Library::CUDA_DRIVER))
      return "planning for an arch without a device (libcuda not loaded): the cuDNN backend is not queried";
    return std::nullopt;
  }

  Status check_support(const OpGraph& g, const PlanContext& ctx) const override {
    return lower_supported(g, ctx).status();
  }

  // check_support's work, handing back the lowering it checked: the callers
  // below use it rather than lowering the graph a second time.
  Result<LoweringPlan> lower_supported(const OpGraph& g, const PlanContext& ctx) const {
    if (auto why = mismatch(ctx)) return Status{ErrorCode::GRAPH_NOT_SUPPORTED, "engine cudnn: " + *why};
    auto api = runtime::cudnn();
    if (api.is_bad()) return Status{ErrorCode::GRAPH_NOT_SUPPORTED, "engine cudnn: " + api.status().message()};
    auto lp = lower(g, options(*api.value(), ctx));
    if (lp.is_bad()) return lp.status();
    auto have = static_cast<std::int64_t>(api.value()->version);
    if (have < lp->min_cudnn_version)
      return Status{ErrorCode::GRAPH_NOT_SUPPORTED, "cudnn lowering: " + lp->min_version_reason +
                                                        "; the loaded libcudnn (" + api.value()->path + ") is " +
                                                        cudnn_version_string(have)};
    return lp;
  }

  // What a built plan re-lowers an execute-time shape override from: the
  // graph's canonical JSON, the options it was lowered with, the engine config;
  // "unavailable" on a cuDNN without dynamic shapes or for a graph whose JSON
  // cannot be read (not frozen).
  static DynamicSource dynamic_source(const OpGraph& g, const PlanConfig& config, const PlanContext& ctx,
                                      const CudnnApi& api) {
    DynamicSource d;
    d.options = options(api, ctx);
    d.config = config;
    d.unavailable = dynamic_shapes_unavailable(static_cast<std::int64_t>(api.version));
    if (!d.unavailable.empty()) return d;
    // A frozen graph's serialize() assigns nothing (its uids are final): it only reads.
    auto j = g.is_frozen() ? const_cast<OpGraph&>(g).serialize()
                           : Result<std::string>(Status{ErrorCode::INVALID_VALUE, "the graph is not frozen"});
    if (j.is_good()) d.json = std::move(j.value());
    else d.unavailable = "the graph's JSON, which a plan re-lowers at other extents, could not be read: " + j.status().message();
    return d;
  }

  // The loader's driver table: loaded once mismatch() passed (it checks).
  static const runtime::CudaDriverApi& driver() { return *runtime::cuda_driver().value(); }

  // The device the planning target names (a handle's device, read_device; device
  // 0 for a target that names none) and the context to work in there
  // (context_for: the caller's when it is on that device, else the device's
  // primary context). Every step that asks cuDNN (heuristics, notes, build,
  // load) binds that context before it takes this thread's handle, so the
  // handle and the plan belong to the target's device whatever the caller has
  // current (or none), and the caller's is put back after. INVALID_CUDA_DEVICE
  // for a device that does not exist.
  struct TargetDevice {
    int ordinal = 0;
    CUcontext context = nullptr;
  };
  static Result<TargetDevice> target_device(const PlanContext& ctx) {
    const int ordinal = ctx.target().has_device() ? std::max(ctx.target().device->ordinal, 0) : 0;
    auto dev = device_context(ordinal);
    if (dev.is_bad()) return dev.status();
    auto c = context_for(driver(), dev.value());
    if (c.is_bad()) return c.status();
    return TargetDevice{ordinal, c.value()};
  }

  // What the lowering may know about the loaded library (its version gates native
  // operations), the target, and whether the graph is planned dynamic
  // (planning_options). mismatch() checked the target has a device.
  static LoweringOptions options(const CudnnApi& api, const PlanContext& ctx) {
    return planning_options(static_cast<std::int64_t>(api.version), ctx.target().device->sm_version(),
                            ctx.dynamic_shapes);
  }

  Result<std::unique_ptr<CompiledPlan>> build_plan(const OpGraph& g, const PlanConfig& config,
                                                   const PlanContext& ctx) const override {
    auto lp = lower_supported(g, ctx);
    if (lp.is_bad()) return lp.status();
    if (plan::decode_engine_id(config.engine_id).band != plan::IdBand::BACKEND)
      return Status{ErrorCode::GRAPH_NOT_SUPPORTED,
                    "engine cudnn: engine id " + std::to_string(config.engine_id) +
                        " is not a backend engine index (the delegating entry is not offered)"};
    auto dev = target_device(ctx);
    if (dev.is_bad()) return dev.status();
    const runtime::ContextScope bound(driver(), dev->context);
    OPGRAPH_CHECK(bound.status());
    auto api = runtime::cudnn();
    auto h = thread_handle(*api.value());
    if (h.is_bad()) return h.status();
    auto m = materialise(*api.value(), lp.value(), h->handle);
    if (m.is_bad()) return m.status();
    // A graph planned dynamic: the plan is finalised with its kernel cache (bound
    // to this operation graph), which every shape an override finalises shares.
    Descriptor cache;
    if (lowered_dynamic(lp.value())) {
      auto kc = kernel_cache_for(*api.value(), m->operation_graph(lp.value()));
      if (kc.is_bad())
        return Status{kc.status().code(), "engine cudnn: the kernel cache of a graph planned dynamic: " +
                                              kc.status().message() + " [" + lp->operations_summary() + "]"};
      cache = std::move(kc.value());
    }
    auto plan = build_execution_plan(*api.value(), h->handle, m->operation_graph(lp.value()), config, cache.get());
    if (plan.is_bad()) return Status{plan.status().code(), plan.status().message() + " [" + lp->operations_summary() + "]"};
    auto ws = plan->get_int64(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, Step::BUILD, "workspace size");
    if (ws.is_bad()) return ws.status();
    auto table = operand_table_of(lp.value(), ctx.layout);
    if (table.is_bad()) return table.status();
    DynamicSource dynamic = dynamic_source(g, config, ctx, *api.value());
    auto built = std::make_unique<CudnnPlan>(*api.value(), driver(), h.value(), dev->ordinal, std::move(lp.value()),
                                             std::move(m.value()), std::move(plan.value()), ws.value(),
                                             std::move(table.value()), std::move(dynamic), std::move(cache));
    OPGRAPH_CHECK(built->upload_constants());
    return std::unique_ptr<CompiledPlan>(std::move(built));
  }

  // A named backend id's notes, from an ENGINE descriptor finalized on this
  // graph; none when the graph does not lower here or cuDNN refuses the id
  // (building will say why).
  PlanNotes plan_notes(const OpGraph& g, const PlanConfig& config, const PlanContext& ctx) const override {
    if (plan::decode_engine_id(config.engine_id).band != plan::IdBand::BACKEND) return {};
    auto lp = lower_supported(g, ctx);
    if (lp.is_bad()) return {};
    auto dev = target_device(ctx);
    if (dev.is_bad()) return {};
    const runtime::ContextScope bound(driver(), dev->context);
    if (bound.status().is_bad()) return {};
    auto api = runtime::cudnn();
    auto h = thread_handle(*api.value());
    if (h.is_bad()) return {};
    auto m = materialise(*api.value(), lp.value(), h->handle);
    if (m.is_bad()) return {};
    auto n = engine_notes(*api.value(), m->operation_graph(lp.value()), config.engine_id);
    return n.is_good() ? n.value() : PlanNotes{};
  }

  // cuDNN's execution-plan JSON for this graph: no heuristics, no engine config.
  // The lowering still runs (it names the variant pack's uids and by-value scalars).
  Result<std::unique_ptr<CompiledPlan>> load_serialized(const OpGraph& g, const PlanConfig& config, std::string_view blob,
                                                        const PlanContext& ctx) const override {
    auto lp = lower_supported(g, ctx);
    if (lp.is_bad()) return lp.status();
    auto dev = target_device(ctx);
    if (dev.is_bad()) return dev.status();
    const runtime::ContextScope bound(driver(), dev->context);
    OPGRAPH_CHECK(bound.status());
    auto api = runtime::cudnn();
    auto h = thread_handle(*api.value());
    if (h.is_bad()) return h.status();
    auto plan = execution_plan_from_json(*api.value(), h->handle, blob);
    if (plan.is_bad()) return Status{plan.status().code(), plan.status().message() + " [" + lp->operations_summary() + "]"};
    auto ws = plan->get_int64(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, Step::BUILD, "workspace size");
    if (ws.is_bad()) return ws.status();
    auto table = operand_table_of(lp.value(), ctx.layout);
    if (table.is_bad()) return table.status();
    DynamicSource dynamic = dynamic_source(g, config, ctx, *api.value());
    auto built = std::make_unique<CudnnPlan>(*api.value(), driver(), h.value(), dev->ordinal, std::move(lp.value()),
                                             Materialised{}, std::move(plan.value()), ws.value(),
                                             std::move(table.value()), std::move(dynamic));
    OPGRAPH_CHECK(built->upload_constants());
    return std::unique_ptr<CompiledPlan>(std::move(built));
  }

  // Any backend-band knobs (each engine config has its own set); frontend knobs are refused.
  Result<Knobs> knobs_from_public(const Knobs& knobs) const override {
    for (const auto& [k, v] : knobs) {
      auto b = to_backend(k);
      if (b.is_bad())
        return Status{ErrorCode::INVALID_VALUE, "engine cudnn: knob " + to_string(k) + " has no cuDNN counterpart"};
    }
    return knobs;
  }

  std::string label(const PlanConfig& config) const override {
    return "cudnn_eng" + std::to_string(config.engine_id);
  }

 private:
  Capabilities caps_;
};

class CudnnProvider final : public plan::BackendProvider {
 public:
  const Engine& engine() const override { return engine_; }

  Result<std::vector<PlanConfig>> entries(const OpGraph& g, HeurMode mode, const PlanContext& ctx) override {
    if (mode == HeurMode::OPENSOURCE) return std::vector<PlanConfig>{};
    auto lp = engine_.lower_supported(g, ctx);
    if (lp.is_bad()) return lp.status();
    auto dev = CudnnEngine::target_device(ctx);
    if (dev.is_bad()) return Status{ErrorCode::GRAPH_NOT_SUPPORTED, "engine cudnn: " + dev.status().message()};
    const runtime::ContextScope bound(CudnnEngine::driver(), dev->context);
    if (bound.status().is_bad())
      return Status{ErrorCode::GRAPH_NOT_SUPPORTED, "engine cudnn: " + bound.status().message()};
    auto api = runtime::cudnn();
    auto h = thread_handle(*api.value());
    if (h.is_bad()) return Status{ErrorCode::GRAPH_NOT_SUPPORTED, h.status().message()};
    auto m = materialise(*api.value(), lp.value(), h->handle);
    if (m.is_bad()) return Status{ErrorCode::GRAPH_NOT_SUPPORTED, m.status().message()};
    auto r = query_heuristics(*api.value(), m->operation_graph(lp.value()), mode);
    if (r.is_bad())
      return Status{ErrorCode::GRAPH_NOT_SUPPORTED, r.status().message() + " [" + lp->operations_summary() + "]"};
    // No config is a decline too, so that the planner's notes say which graph cuDNN has no engine for.
    if (r->empty())
      return Status{ErrorCode::GRAPH_NOT_SUPPORTED, "cudnn heuristics (mode " + std::string(to_string(mode)) +
                                                        "): no engine config for this operation graph (" +
                                                        lp->operations_summary() + ")"};
    return r;
  }

 private:
  CudnnEngine engine_;
};

}  // namespace

std::shared_ptr<plan::BackendProvider> make_cudnn_provider() { return std::make_shared<CudnnProvider>(); }

}  // namespace opgraph::engines
