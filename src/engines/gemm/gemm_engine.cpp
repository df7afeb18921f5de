// engines/gemm/gemm_engine.cpp — the gemm Engine, its CompiledPlan, and the
// family hooks (analyzer, heuristics).
#include "engines/gemm/gemm_engine.h"

#include "engines/gemm/gemm_declared.h"
#include "engines/gemm/gemm_exec.h"
#include "engines/gemm/gemm_tma.h"
#include "exec/operand_table.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <vector>

#include "opgraph/op_graph.h"
#include "runtime/device.h"
#include "runtime/shared_runtimes.h"

namespace opgraph::gemm {
namespace {

// What a plan's split-K scratch holds: launch `l`'s partials, and counters for every
// schedule those partials hold (scratch_counter_bytes), so an override with more tiles
// and fewer splits runs within it (override_launch).
LaunchPlan capacity_of(const LaunchPlan& l, const GemmConfig& c) {
  LaunchPlan p = l;
  p.counter_bytes = scratch_counter_bytes(c, l);
  return p;
}

class GemmPlan final : public CompiledPlan {
 public:
  // `kc`: the config with the swap off (kp is already the kernel view);
  // `launch`: its geometry, schedule and scratch sizes (launch_plan, computed
  // once at build).
  // `table`, `slots`: the operand table (every operand the kernel reads or
  // writes: declared extents, strides, dtype, alignment, device memory) and,
  // per GemmParams operand, its row (-1: a by-value scalar or no operand), built
  // once (operand_table_for).
  // `g`, `built`, `config`: the graph (it outlives its plans), its problem as
  // analysed at build (graph view) and the config with the swap as knobbed: what
  // an execute-time shape override is checked against (overridden_view).
  GemmPlan(const OpGraph& g, const GemmProblem& built, const GemmConfig& config, GemmProblem kp, const GemmConfig& kc,
           const LaunchPlan& launch, runtime::KernelRuntime* rt, const runtime::LoadedKernel* k, OperandTable table,
           const OperandSlots& slots)
      : graph_(&g),
        config_(config),
        request_(kernel_request(built, config)),
        kp_(std::move(kp)),
        cfg_(kc),
        launch_(launch),
        rt_(rt),
        kernel_(k),
        epi_tma_(v2_epi_tma(kp_, kc)),
        table_(std::move(table)),
        slots_(slots),
        params_(launch_params(kp_, launch.sched)),
        scratch_cap_(capacity_of(launch, kc)),
        scratch_(scratch_cap_.partial_bytes, scratch_cap_.counter_bytes, rt->context()) {}
  // Split-K scratch is plan-owned, a bounded set of slots (StreamScratch, gemm_exec.h).
  std::int64_t workspace_size() const override { return 0; }

  Status execute(const VariantPack& pack, const ExecutionContext& ctx) const override {
    if (!ctx.device)
      return {ErrorCode::INVALID_VALUE, "engine gemm executes device buffers; this call has no device handle"};
    // The plan's kernel, scratch and context belong to the device it was built on:
    // a handle on another device is refused, never run there.
    if (ctx.device->ordinal >= 0 && ctx.device->ordinal != rt_->device().ordinal)
      return {ErrorCode::INVALID_CUDA_DEVICE, "engine gemm: the plan was built on device " +
                                                  std::to_string(rt_->device().ordinal) +
                                                  "; this call's handle drives device " +
                                                  std::to_string(ctx.device->ordinal)};
    // The runtime was opened on the planning thread; this call may come from
    // any thread. Its context is current for the launch (and the scratch).
    const ContextScope bound(rt_->api(), rt_->context());
    OPGRAPH_CHECK(bound.status());
    RawLaunch a;
    // The one branch for execute-time shape overrides: the built launch, or
    // one sized for the call's extents (same kernel, checked before launching).
    LaunchPlan moved;
    const LaunchPlan* launch = &launch_;
    if (!pack.has_overrides()) {
      OPGRAPH_CHECK(arguments(pack, a));
    } else {
      OPGRAPH_CHECK(overridden_arguments(pack, a, moved));
      launch = &moved;
    }
    const CUstream stream = static_cast<CUstream>(ctx.stream);
    if (launch->sched.splits == 1) return rt_->launch(*kernel_, launch->dims, stream, a.args);
    const runtime::CudaDriverApi& api = rt_->api();
    auto slot = scratch_.acquire(api, stream);
    if (slot.is_bad()) return slot.status();
    a.params.workspace = slot->partials;
    a.params.counters = slot->counters;
    const Status launched = rt_->launch(*kernel_, launch->dims, stream, a.args);
    const Status released = scratch_.release(api, *slot, stream, launched.is_good());
    OPGRAPH_CHECK(launched);
    return released;
  }

  // The launch's argument for `pack`, in `a`: the one check (the operand
  // table's loop; a refusal goes to its checker), the pointers patched into
  // the argument built at build, v2's tensor maps (cached by pointer). The
  // runtime's context must be current.
  Status arguments(const VariantPack& pack, RawLaunch& a) const {
    if (!table_.accepts(pack)) return table_.explain(pack);
    a.dims = launch_.dims;
    a.params = params_;
    return patch(pack, kp_, a);
  }

  // arguments() for a pack with execute-time shape overrides: the table's rows
  // but the overridden slots' geometry, then the problem re-read at the call's
  // extents (overridden_view: same kernel, same config), its launch sized with
  // the built plan's resident clusters (no driver query) within the plan's split-K
  // scratch, with fewer splits where the call's tiles need it (override_launch);
  // `launch` := that launch.
  // A serving loop repeats shapes: the last kShapes accepted ones are kept by
  // their overridden slots' geometry, so a repeat skips the analysis.
  Status overridden_arguments(const VariantPack& pack, RawLaunch& a, LaunchPlan& launch) const {
    if (!table_.accepts_overridden(pack)) return table_.explain_overridden(pack);
    std::vector<std::int64_t> key;
    const OperandBuffer* ops = pack.operands().data();
    for (const OperandRow& r : table_.rows()) {
      const OperandBuffer& b = ops[r.position];
      if (!b.overridden) continue;
      key.push_back(r.position);
      key.insert(key.end(), b.dims.begin(), b.dims.begin() + b.rank);
      key.insert(key.end(), b.strides.begin(), b.strides.begin() + b.rank);
    }
    {
      std::lock_guard<std::mutex> lock(shapes_mu_);
      for (auto it = shapes_.rbegin(); it != shapes_.rend(); ++it)
        if (it->key == key) {
          launch = it->launch;
          a.dims = launch.dims;
          a.params = it->params;
          return patch(pack, it->kp, a);
        }
    }
    auto kp = overridden_view(*graph_, pack, request_, config_);
    if (kp.is_bad()) return kp.status();
    launch = override_launch(*kp, cfg_, rt_->device().sm_count, launch_.resident, scratch_cap_);
    a.dims = launch.dims;
    a.params = launch_params(*kp, launch.sched);
    {
      std::lock_guard<std::mutex> lock(shapes_mu_);
      if (shapes_.size() >= kShapes) shapes_.erase(shapes_.begin());
      shapes_.push_back(Shape{std::move(key), *kp, launch, a.params});
    }
    return patch(pack, *kp, a);
  }

  // The pointers patched into a.params (built from kernel view `kp`), v2's maps.
  Status patch(const VariantPack& pack, const GemmProblem& kp, RawLaunch& a) const {
    const OperandBuffer* ops = pack.operands().data();
    auto ptr = [&](std::int32_t row) -> std::uint64_t {
      return row < 0 ? 0 : reinterpret_cast<std::uint64_t>(ops[table_.rows()[static_cast<std::size_t>(row)].position].data);
    };
    a.function = kernel_->function;
    GemmParams& h = a.params.problem;
    h.a.ptr = ptr(slots_.a);
    h.b.ptr = ptr(slots_.b);
    h.c.ptr = ptr(slots_.c);
    for (std::size_t i = 0; i < kMaxEpilogueOperands; ++i) h.epi[i].ptr = ptr(slots_.epi[i]);
    if (cfg_.version != 2) {
      a.args[0] = &h;
      return Status::ok();
    }
    a.args[0] = &a.params;
    return tma_.maps(rt_->api(), kp, cfg_, epi_tma_, a.params);
  }

  bool uses_scratch() const { return launch_.sched.splits != 1; }
  const runtime::KernelRuntime& runtime() const { return *rt_; }

  std::size_t scratch_slots() const { return scratch_.slot_count(); }

 private:
  const OpGraph* graph_;  // the plan's graph (overrides are re-read through it)
  GemmConfig config_;     // the config as knobbed (SWAP_AB as set)
  runtime::KernelRequest request_;  // of the graph view analysed at build: what an override's kernel must equal
  GemmProblem kp_;     // the kernel view (SWAP_AB applied)
  GemmConfig cfg_;     // swap_ab cleared: kp_ is already swapped
  LaunchPlan launch_;  // grid, shared memory, cluster; v2: the schedule the grid walks
  runtime::KernelRuntime* rt_;
  const runtime::LoadedKernel* kernel_;
  bool epi_tma_ = false;           // v2 kernel with the TMA-store epilogue (v2_epi_tma): its output's map encoded
  OperandTable table_;             // what execute checks, one row per operand
  OperandSlots slots_;             // GemmParams operand -> table row
  GemmV2Params params_;            // the argument less pointers, maps and scratch (launch_params), fixed at build
  mutable TmaCache tma_;           // v2: maps by (pointer, extents, strides)
  LaunchPlan scratch_cap_;         // the split-K scratch allocated: launch_'s partials, counters for fewer splits
  mutable StreamScratch scratch_;  // v2 with splits > 1: slots leased per launch, freed in rt_'s context
  // Overridden shapes accepted lately (overridden_arguments), most recent last.
  struct Shape {
    std::vector<std::int64_t> key;  // per overridden row: position, dims, strides
    GemmProblem kp;                 // the kernel view at those extents
    LaunchPlan launch;
    GemmV2Params params;            // launch_params(kp, launch.sched): no pointers, maps or scratch
  };
  static constexpr std::size_t kShapes = 8;
  mutable std::mutex shapes_mu_;
  mutable std::vector<Shape> shapes_;
};

// build_plan's declines that need no device: a v2 config outside the problem's class.
Status config_declines(const GemmProblem& p, const GemmConfig& c) {
  if (config_takes(p, c)) return Status::ok();
  return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                "engine gemm: PIPELINE_ARCH=2 takes the 16-byte class only, with TILE_N >= 64 for an N-major B "
                "(kernel view); this graph or config is outside it");
}

// v2 (wgmma) runs on the sm_90 line only.
Status arch_declines(const GemmConfig& c, const DeviceProperties& device) {
  if (c.version != 2 || device.major == 9) return Status::ok();
  return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                "engine gemm: PIPELINE_ARCH=2 (wgmma, sm_90a) needs an sm_90 device; this one is " + device.arch());
}

class GemmEngine final : public Engine {
 public:
  explicit GemmEngine(EngineIdentity id) : Engine(std::move(id)) {
    caps_.sm_lo = 80;  // v1 (mma.sync + cp.async): sm_80+; v2 (wgmma): sm_90 only, decided per config
    caps_.knobs = knob_domains();
    caps_.notes = PlanNotes{{NumericalNote::TENSOR_CORE}, {BehaviorNote::RUNTIME_COMPILATION}};  // mma.sync / wgmma; NVRTC
  }
  const Capabilities& capabilities() const override { return caps_; }

  Status check_support(const OpGraph& g, const PlanContext&) const override { return analyze_gemm(g).status(); }

  Result<std::unique_ptr<CompiledPlan>> build_plan(const OpGraph& g, const PlanConfig& config,
                                                   const PlanContext& ctx) const override {
    if (!ctx.layout) return Status(ErrorCode::INTERNAL_ERROR, "engine gemm: built without the graph's layout");
    auto p = analyze_gemm(g);
    if (p.is_bad()) return p.status();
    auto cfg = config_from_knobs(config.knobs);
    if (cfg.is_bad()) return cfg.status();
    OPGRAPH_CHECK(config_declines(*p, *cfg));
    // The device the planning target names (a handle's device, read_device); a
    // target that names none (for_arch, JSON without "ordinal") builds on device 0.
    const int ordinal = ctx.target().has_device() ? std::max(ctx.target().device->ordinal, 0) : 0;
    // The device's runtime, shared with the other families (runtime/shared_runtimes.h),
    // held for the whole build; the caller's context is current again on return.
    auto leased = runtime::shared_kernel_runtime(ordinal);
    if (leased.is_bad()) return leased.status();
    runtime::KernelRuntime& rt = **leased;
    OPGRAPH_CHECK(arch_declines(*cfg, rt.device()));
    // The whole planning step (module load, occupancy query) with the
    // runtime's context bound; get() sets it current itself on a load, which
    // the scope undoes at return.
    const ContextScope bound(rt.api(), rt.context());
    OPGRAPH_CHECK(bound.status());
    auto k = rt.get(kernel_request(*p, *cfg));
    if (k.is_bad()) return k.status();
    // The plan keeps the kernel view (SWAP_AB applied) and the config with
    // the swap off; the launch is sized once, from them.
    GemmProblem kp = kernel_view(*p, *cfg);
    GemmConfig kc = *cfg;
    kc.swap_ab = false;
    auto launch = launch_plan(kp, kc, rt, **k);
    if (launch.is_bad()) return launch.status();
    OperandSlots slots;
    auto table = operand_table_for(kp, ctx.layout, slots);
    if (table.is_bad()) return table.status();
    return std::unique_ptr<CompiledPlan>(std::make_unique<GemmPlan>(g, std::move(*p), *cfg, std::move(kp), kc, *launch,
                                                                    &rt, *k, std::move(*table), slots));
  }

  // The CI compile set (gemm_declared.cpp): every proposable config, layout,
  // alignment, type and epilogue class.
  Status declared_kernels(const KernelSink& sink) const override {
    for (const auto& r : declared_specialisations()) OPGRAPH_CHECK(sink(r));
    return Status::ok();
  }

  // The one kernel build_plan gets for this plan, declined as build_plan
  // declines it (the device read from the target, not opened).
  Status plan_kernels(const OpGraph& g, const PlanConfig& config, const PlanContext& ctx,
                      const KernelSink& sink) const override {
    auto p = analyze_gemm(g);
    if (p.is_bad()) return p.status();
    auto cfg = config_from_knobs(config.knobs);
    if (cfg.is_bad()) return cfg.status();
    OPGRAPH_CHECK(config_declines(*p, *cfg));
    if (!ctx.facts || !ctx.target().has_device())
      return Status(ErrorCode::GRAPH_NOT_SUPPORTED, "engine gemm: compiles for a device target; this target has none");
    OPGRAPH_CHECK(arch_declines(*cfg, *ctx.target().device));
    return sink(kernel_request(*p, *cfg));
  }

  std::string label(const PlanConfig& config) const override {
    auto c = config_from_knobs(config.knobs);
    if (c.is_bad()) return name();
    return name() + "_v" + std::to_string(c->version) + "_" + std::to_string(c->tile_m) + "x" +
           std::to_string(c->tile_n) + "s" + std::to_string(c->stages) + (c->swap_ab ? "_swap" : "") +
           (c->raster ? "_r1" : "") +
           (c->cluster_m > 1 ? "_c" + std::to_string(c->cluster_m) : "") +
           (c->split_k > 1 ? "_k" + std::to_string(c->split_k) : "") + (c->stream_k ? "_sk" : "") +
           (c->pingpong ? "_pp" : "");
  }

 private:
  Capabilities caps_;
};

}  // namespace

std::unique_ptr<Engine> make_gemm_engine(EngineIdentity identity) {
  return std::make_unique<GemmEngine>(std::move(identity));
}

Result<std::unique_ptr<RawLaunch>> raw_launch_of(const CompiledPlan& plan, const VariantPack& pack) {
  const auto* p = dynamic_cast<const GemmPlan*>(&plan);
  if (!p) return Status(ErrorCode::INVALID_VALUE, "raw_launch_of: not a gemm plan");
  if (p->uses_scratch())
    return Status(ErrorCode::GRAPH_NOT_SUPPORTED, "raw_launch_of: a split-K / stream-K plan leases scratch per call");
  const ContextScope bound(p->runtime().api(), p->runtime().context());
  OPGRAPH_CHECK(bound.status());
  auto a = std::make_unique<RawLaunch>();
  OPGRAPH_CHECK(p->arguments(pack, *a));
  return a;
}

std::optional<std::size_t> split_k_slots(const CompiledPlan& plan) {
  const auto* p = dynamic_cast<const GemmPlan*>(&plan);
  if (!p) return std::nullopt;
  return p->scratch_slots();
}

runtime::KernelRuntime* shared_runtime_if_open(int ordinal) { return runtime::shared_kernel_runtime_if_open(ordinal); }

std::shared_ptr<const FactsRecord> analyze_facts(const OpGraph& graph, const PlanTarget&) {
  auto f = std::make_shared<GemmFacts>();
  f->problem = analyze_gemm(graph);
  return f;
}

Result<std::vector<plan::Proposal>> heuristics(HeurMode mode, const PlanContext& ctx,
                                               const std::vector<const Engine*>& offered) {
  std::vector<plan::Proposal> out;
  const Engine* ours = nullptr;
  for (const Engine* e : offered)
    if (e->name() == "gemm") ours = e;
  const auto& facts = ctx.facts->get_as<GemmFacts>(analyze_facts);
  const bool fallback = mode == HeurMode::FALLBACK;
  const int sms = ctx.target().has_device() ? ctx.target().device->sm_count : 132;
  const bool hopper = ctx.target().has_device() && ctx.target().device->major == 9;
  std::optional<plan::Proposal> mine;
  bool first = false;
  if (ours && facts.problem.is_good()) {
    const GemmConfig c = pick_config(facts.problem.value(), sms, fallback, hopper);
    mine = plan::Proposal::plan(ours->id(), knobs_of(c));
    // A/B: ours before the BACKEND marker only for a v2 pick in a shape class
    // measured ahead of cuDNN (ours_first, gemm_kernel.cpp). FALLBACK: ours
    // (the portable v1 tile) first, then the backend.
    first = fallback || (c.version == 2 && ours_first(shape_class(facts.problem.value())));
  }
  if (mine && first) out.push_back(*mine);
  out.push_back(plan::Proposal::backend());
  if (mine && !first) out.push_back(*mine);
  return out;
}

}  // namespace opgraph::gemm
