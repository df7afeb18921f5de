// engines/cudnn/cudnn_engine.cpp — CudnnEngine (check_support / build_plan),
// CudnnPlan (workspace, execute through a variant pack reused while the call's
// pointers and workspace repeat) and the provider.
#include "engines/cudnn/cudnn_engine.h"

#include <mutex>

#include "engines/cudnn/backend.h"
#include "engines/cudnn/heuristics.h"
#include "opgraph/op_graph.h"
#include "plan/engine_ids.h"

namespace opgraph::engines {
namespace {

using namespace cudnn;

class CudnnPlan final : public CompiledPlan {
 public:
  // `ws`: the engine's own workspace bytes; the lowering's scratch tensors follow
  // them (256-aligned) in the caller's workspace.
  CudnnPlan(const CudnnApi& api, LoweringPlan lp, Materialised m, Descriptor plan, std::int64_t ws)
      : api_(&api), lowering_(std::move(lp)), graph_(std::move(m)), plan_(std::move(plan)),
        scratch_at_((ws + 255) / 256 * 256),
        workspace_(lowering_.scratch.empty() ? ws : scratch_at_ + lowering_.scratch_bytes) {
    // The uid order (caller, by-value, scratch) and the by-value pointers are
    // fixed by the lowering: built once here, not per execute.
    uids_.reserve(lowering_.caller_uids.size() + lowering_.by_value_uids.size() + lowering_.scratch.size());
    uids_.insert(uids_.end(), lowering_.caller_uids.begin(), lowering_.caller_uids.end());
    uids_.insert(uids_.end(), lowering_.by_value_uids.begin(), lowering_.by_value_uids.end());
    for (std::int64_t uid : lowering_.by_value_uids)
      by_value_ptrs_.push_back(const_cast<unsigned char*>(lowering_.tensor(uid)->scalar_bytes.data()));  // read only
    for (const ScratchTensor& s : lowering_.scratch) {
      uids_.push_back(s.uid);
      if (!s.init.empty()) has_scratch_init_ = true;
    }
  }
  std::int64_t workspace_size() const override { return workspace_; }

  Status execute(const VariantPack& pack, const ExecutionContext& ctx) const override {
    if (ctx.workspace.bytes < workspace_)
      return {ErrorCode::INVALID_VALUE, "engine cudnn: workspace too small: needs " + std::to_string(workspace_) +
                                            " bytes, got " + std::to_string(ctx.workspace.bytes)};
    // The pointer array is per call: concurrent executes never share it.
    std::vector<void*> ptrs;
    ptrs.reserve(uids_.size());
    for (std::int64_t uid : lowering_.caller_uids) {
      const OperandBuffer* b = pack.find(uid);
      if (!b || !b->data) {
        const TensorRecord* t = lowering_.tensor(uid);
        return {ErrorCode::INVALID_VARIANT_PACK,
                "engine cudnn: no buffer for tensor uid " + std::to_string(uid) +
                    (t ? " (" + lowering_.records[static_cast<std::size_t>(t->record)].label + ")" : std::string())};
      }
      ptrs.push_back(b->data);
    }
    ptrs.insert(ptrs.end(), by_value_ptrs_.begin(), by_value_ptrs_.end());
    for (const ScratchTensor& s : lowering_.scratch)
      ptrs.push_back(static_cast<char*>(ctx.workspace.data) + scratch_at_ + s.offset);
    if (has_scratch_init_) OPGRAPH_CHECK(init_scratch(ctx));
    auto h = thread_handle_on(*api_, static_cast<CUstream>(ctx.stream));
    if (h.is_bad()) return h.status();
    void* ws = ctx.workspace.data;
    // The last call's finalized variant pack serves this one when its pointers and
    // workspace are this call's. One call at a time uses it: a call that finds
    // another holding it finalizes a pack of its own (never waits).
    std::unique_lock<std::mutex> lock(cache_.mu, std::try_to_lock);
    if (!lock.owns_lock()) {
      auto vp = variant_pack(ptrs, ws);
      if (vp.is_bad()) return vp.status();
      return run(h->handle, vp.value());
    }
    if (!cache_.vp || cache_.ws != ws || cache_.ptrs != ptrs) {
      cache_.vp = Descriptor();  // invalid until the new one is finalized
      auto vp = variant_pack(ptrs, ws);
      if (vp.is_bad()) return vp.status();
      cache_.vp = std::move(vp.value());
      cache_.ptrs.assign(ptrs.begin(), ptrs.end());
      cache_.ws = ws;
    }
    return run(h->handle, cache_.vp);
  }

  Result<std::string> serialize_backend() const override { return execution_plan_json(*api_, plan_); }

 private:
  // Copies the host bytes of the scratch tensors that carry some (ALiBi slopes)
  // into the workspace, on `ctx.stream` (async when the driver has
  // cuMemcpyHtoDAsync, else a synchronous copy after a stream sync).
  Status init_scratch(const ExecutionContext& ctx) const {
    auto drv = runtime::cuda_driver();
    if (drv.is_bad()) return drv.status();
    const auto* d = drv.value();
    for (const ScratchTensor& s : lowering_.scratch) {
      if (s.init.empty()) continue;
      auto dst = reinterpret_cast<CUdeviceptr>(static_cast<char*>(ctx.workspace.data) + scratch_at_ + s.offset);
      auto stream = static_cast<CUstream>(ctx.stream);
      CUresult r = CUDA_SUCCESS;
      if (d->memcpy_htod_async) {
        r = d->memcpy_htod_async(dst, s.init.data(), s.init.size(), stream);
      } else {
        if (d->stream_synchronize) r = d->stream_synchronize(stream);
        if (r == CUDA_SUCCESS) r = d->memcpy_htod(dst, s.init.data(), s.init.size());
      }
      if (r != CUDA_SUCCESS)
        return {ErrorCode::GRAPH_EXECUTION_FAILED, "engine cudnn: copying the initial bytes of workspace tensor uid " +
                                                 std::to_string(s.uid) + " failed (CUresult " +
                                                 std::to_string(static_cast<int>(r)) + ")"};
    }
    return Status::ok();
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

  Status run(cudnnHandle_t h, const Descriptor& vp) const {
    return check(*api_, static_cast<cudnnStatus_t>(api_->backend_execute(h, plan_.get(), vp.get())), Step::EXECUTE,
                 "cudnnBackendExecute of " + lowering_.operations_summary());
  }

  // The last finalized variant pack and what it was made of (guarded by mu).
  struct VariantPackCache {
    std::mutex mu;
    Descriptor vp;
    std::vector<void*> ptrs;
    void* ws = nullptr;
  };

  const CudnnApi* api_;
  LoweringPlan lowering_;
  Materialised graph_;  // kept alive: the execution plan references it
  Descriptor plan_;
  std::int64_t scratch_at_;  // bytes: where the lowering's scratch tensors start
  std::int64_t workspace_;
  std::vector<std::int64_t> uids_;   // the variant pack's uids: caller, by-value, scratch
  std::vector<void*> by_value_ptrs_;  // into lowering_'s TensorRecords (read only)
  bool has_scratch_init_ = false;     // some scratch tensor carries initial bytes
  mutable VariantPackCache cache_;
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
    auto lp = lower(g, options(*api.value()));
    if (lp.is_bad()) return lp.status();
    auto have = static_cast<std::int64_t>(api.value()->version);
    if (have < lp->min_cudnn_version)
      return Status{ErrorCode::GRAPH_NOT_SUPPORTED, "cudnn lowering: " + lp->min_version_reason +
                                                        "; the loaded libcudnn (" + api.value()->path + ") is " +
                                                        cudnn_version_string(have)};
    return lp;
  }

  // What the lowering may know about the loaded library (its version gates native operations).
  static LoweringOptions options(const CudnnApi& api) {
    LoweringOptions o;
    o.cudnn_version = static_cast<std::int64_t>(api.version);
    return o;
  }

  Result<std::unique_ptr<CompiledPlan>> build_plan(const OpGraph& g, const PlanConfig& config,
                                                   const PlanContext& ctx) const override {
    auto lp = lower_supported(g, ctx);
    if (lp.is_bad()) return lp.status();
    if (plan::decode_engine_id(config.engine_id).band != plan::IdBand::BACKEND)
      return Status{ErrorCode::GRAPH_NOT_SUPPORTED,
                    "engine cudnn: engine id " + std::to_string(config.engine_id) +
                        " is not a backend engine index (the delegating entry is not offered)"};
    auto api = runtime::cudnn();
    auto h = thread_handle(*api.value());
    if (h.is_bad()) return h.status();
    auto m = materialise(*api.value(), lp.value(), h->handle);
    if (m.is_bad()) return m.status();
    auto plan = build_execution_plan(*api.value(), h->handle, m->operation_graph(lp.value()), config);
    if (plan.is_bad()) return Status{plan.status().code(), plan.status().message() + " [" + lp->operations_summary() + "]"};
    auto ws = plan->get_int64(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, Step::BUILD, "workspace size");
    if (ws.is_bad()) return ws.status();
    return std::unique_ptr<CompiledPlan>(std::make_unique<CudnnPlan>(*api.value(), std::move(lp.value()),
                                                                     std::move(m.value()), std::move(plan.value()),
                                                                     ws.value()));
  }

  // A named backend id's notes, from an ENGINE descriptor finalized on this
  // graph; none when the graph does not lower here or cuDNN refuses the id
  // (building will say why).
  PlanNotes plan_notes(const OpGraph& g, const PlanConfig& config, const PlanContext& ctx) const override {
    if (plan::decode_engine_id(config.engine_id).band != plan::IdBand::BACKEND) return {};
    auto lp = lower_supported(g, ctx);
    if (lp.is_bad()) return {};
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
    (void)config;
    auto lp = lower_supported(g, ctx);
    if (lp.is_bad()) return lp.status();
    auto api = runtime::cudnn();
    auto h = thread_handle(*api.value());
    if (h.is_bad()) return h.status();
    auto plan = execution_plan_from_json(*api.value(), h->handle, blob);
    if (plan.is_bad()) return Status{plan.status().code(), plan.status().message() + " [" + lp->operations_summary() + "]"};
    auto ws = plan->get_int64(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, Step::BUILD, "workspace size");
    if (ws.is_bad()) return ws.status();
    return std::unique_ptr<CompiledPlan>(std::make_unique<CudnnPlan>(*api.value(), std::move(lp.value()), Materialised{},
                                                                     std::move(plan.value()), ws.value()));
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
