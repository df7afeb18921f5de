// opgraph/engine.h — the engine interface every engine implements.
//
// An engine is one class in one folder (src/engines/<family>/), offered to the
// planner by one manifest row. Engines do not pick their ids: the manifest hands
// each factory an EngineIdentity. Engines do not propose their own plans: the
// family's heuristics hook does, from facts.
//
// Contract (seed, "Backend contract" and "Accept means run"):
//  * check_support accepts (OK) or declines with GRAPH_NOT_SUPPORTED and one
//    sentence saying why. That is the ONLY way to decline: any other code is an
//    engine bug and propagates out of planning/building unchanged.
//  * Decide everything decidable from the declaration at check_support; after
//    an accept, build_plan and execute succeed on buffers bound as declared.
//  * build_plan is the expensive step (a JIT compile); the graph caches its
//    result per plan, so it runs at most once per (graph, plan).
//  * CompiledPlan::execute takes the handle, stream and workspace explicitly and
//    may be called concurrently from several threads with different buffers.
//  * An engine that compiles kernels (NVRTC) names them ahead of time:
//    declared_kernels (its whole domain) and plan_kernels (one plan), so
//    `opgraph cache warm` fills the compiled cache without a device.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opgraph/execution_context.h"
#include "opgraph/facts.h"
#include "opgraph/knobs.h"
#include "opgraph/plan_notes.h"
#include "opgraph/status.h"
#include "opgraph/variant_pack.h"

namespace opgraph {

class OpGraph;

namespace runtime {
// One NVRTC specialisation (family, kernel name, embedded source, entry,
// defines): library-internal, defined in src/runtime/nvrtc_compiler.h. Engines
// hand it out only by reference through a KernelSink, so this header needs no
// more than the name.
struct KernelRequest;
}  // namespace runtime

// Receives one kernel request an engine names (declared_kernels /
// plan_kernels). The request is valid only during the call. A bad status stops
// the walk and is what the engine's method returns.
using KernelSink = std::function<Status(const runtime::KernelRequest& request)>;

// What the manifest hands a factory: the engine's id and stable name (the name
// appears in plan names, filters, cache keys and logs).
struct EngineIdentity {
  std::int64_t id = -1;
  std::string name;
};

// One tuning axis and the values an engine can build for it.
struct KnobDomain {
  KnobType type = KnobType::NOT_SET;
  std::vector<std::int64_t> values;  // non-empty; the first is the default ("sole point") value
};

// The capability row: what an engine can serve, judged against facts.
struct Capabilities {
  // Architecture RANGE, major*10+minor, inclusive: an sm90 kernel serves the sm90
  // line, including members that ship later. Ignored when !needs_device.
  int sm_lo = 0;
  int sm_hi = INT_MAX;
  bool needs_device = true;  // false: a host engine (the reference)
  std::vector<KnobDomain> knobs;
  PlanNotes notes;  // true of every plan this engine builds (merged into each plan's notes)

  // The reason the target is outside this row (no device, sm out of range), or nullopt.
  std::optional<std::string> arch_mismatch(const PlanTarget& target) const;
};

// A plan's identity is (engine_id, knobs); the rest is provenance.
struct PlanConfig {
  std::int64_t engine_id = -1;
  Knobs knobs;                      // complete: one value per axis the engine declares
  std::optional<HeurMode> mode;     // the heuristic mode that produced it (none: replay/delegate)
  std::int64_t backend_index = -1;  // position in the backend's own plan list (backend entries only)
  PlanNotes notes;                  // numerical / behaviour notes (backend: read per config; ours: Capabilities)

  bool same_plan(const PlanConfig& o) const noexcept { return engine_id == o.engine_id && knobs == o.knobs; }
};

// What planning and building hand an engine: the target and the graph's facts.
struct PlanContext {
  const FactsCache* facts = nullptr;  // never null during planning/building
  // The graph's operand order and declared storage geometry (exec/declared_layout.h),
  // computed once at planning; build_plan reads it into the plan's operand table.
  const DeclaredLayout* layout = nullptr;
  // The graph is planned for execute-time shape overrides from the start
  // (Graph::set_dynamic_shapes): an engine that plans differently for them
  // (cuDNN: a dynamic-shape operation graph for its heuristics, configs and
  // plans) does so for every step; false: the static planning of today.
  bool dynamic_shapes = false;
  const PlanTarget& target() const { return facts->target(); }
};

class CompiledPlan {
 public:
  virtual ~CompiledPlan() = default;
  // Scratch this plan needs, in BYTES (0 when none). Fixed once built.
  virtual std::int64_t workspace_size() const = 0;
  // Scratch the call `pack` (NORMALISED, as execute gets it) needs: with
  // execute-time shape overrides an engine whose scratch follows the extents
  // answers for the call's (an override it refuses is refused here alike, naming
  // the rule); without, and by default, workspace_size().
  virtual Result<std::int64_t> workspace_size_for(const VariantPack& pack) const {
    (void)pack;
    return workspace_size();
  }
  // workspace_size_for asked by an execute with overrides, about to run `pack`
  // on `ctx` (its stream): an engine that does device work to answer (cuDNN
  // finalises a plan for the call's extents) reads the stream, e.g. to refuse
  // that work under CUDA-graph capture. Default: workspace_size_for(pack).
  virtual Result<std::int64_t> workspace_size_for_call(const VariantPack& pack, const ExecutionContext& ctx) const {
    (void)ctx;
    return workspace_size_for(pack);
  }
  // Runs the plan on the caller's buffers, NORMALISED: `pack` holds one
  // OperandBuffer per position of the graph's DeclaredLayout (read them by
  // position; resolve positions at build). Refuses only caller errors (a missing
  // or too-small buffer: INVALID_VARIANT_PACK; workspace too small: INVALID_VALUE),
  // naming the operand. Thread-safe: keeps no per-call state in the plan.
  virtual Status execute(const VariantPack& pack, const ExecutionContext& ctx) const = 0;
  // The backend's own serialised form of this built plan (cuDNN: the execution
  // plan's JSON), "" when the engine has none. A refusal (the backend cannot
  // serialise this plan) is a bad status; Graph::serialize_plan records it and
  // keeps the portable (engine_id, knobs) form.
  virtual Result<std::string> serialize_backend() const { return std::string(); }
};

class Engine {
 public:
  explicit Engine(EngineIdentity identity) : identity_(std::move(identity)) {}
  virtual ~Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  std::int64_t id() const noexcept { return identity_.id; }
  const std::string& name() const noexcept { return identity_.name; }

  virtual const Capabilities& capabilities() const = 0;

  // Why this engine cannot serve the planning target / the graph's facts, or
  // nullopt. The default checks the architecture range; a family's engine
  // overrides it to read its family's facts (ctx.facts->get_as<MyFacts>(my_analyzer)).
  virtual std::optional<std::string> mismatch(const PlanContext& ctx) const {
    return capabilities().arch_mismatch(ctx.target());
  }
  // OK, or GRAPH_NOT_SUPPORTED with the reason (the only decline). `graph` is frozen.
  virtual Status check_support(const OpGraph& graph, const PlanContext& ctx) const = 0;
  // Builds the plan `config` names (its knobs are complete and in this engine's
  // domains). A decline is GRAPH_NOT_SUPPORTED; anything else is a bug.
  virtual Result<std::unique_ptr<CompiledPlan>> build_plan(const OpGraph& graph, const PlanConfig& config,
                                                           const PlanContext& ctx) const = 0;
  // The notes of plan `config` when it is named rather than proposed
  // (create_execution_plan / a plan record). Default: capabilities().notes. The
  // cuDNN engine asks the backend for that engine's notes (none when it cannot).
  virtual PlanNotes plan_notes(const OpGraph& graph, const PlanConfig& config, const PlanContext& ctx) const {
    (void)graph;
    (void)config;
    (void)ctx;
    return capabilities().notes;
  }
  // Loads a plan from what this engine's CompiledPlan::serialize_backend wrote for
  // `config` on this graph, skipping heuristics and the build. Any bad status is
  // a refusal: the graph rebuilds from (engine_id, knobs) and notes why. Default:
  // GRAPH_NOT_SUPPORTED (the engine has no serialised form).
  virtual Result<std::unique_ptr<CompiledPlan>> load_serialized(const OpGraph& graph, const PlanConfig& config,
                                                                std::string_view blob, const PlanContext& ctx) const;

  // --- knobs at the public boundary ---
  // Public knobs → this engine's knobs. The default requires exactly one value
  // per declared axis, each inside its domain (INVALID_VALUE names the knob).
  virtual Result<Knobs> knobs_from_public(const Knobs& knobs) const;
  // This engine's knobs → public knobs (default: identity).
  virtual Knobs knobs_to_public(const Knobs& knobs) const { return knobs; }
  // The first value of every declared axis: the config for a family with no
  // heuristics hook (the "sole point per axis" until someone measures).
  Knobs default_knobs() const;
  // The engine part of a plan's name ("reference", "cudnn_eng12"): `name()` by default.
  virtual std::string label(const PlanConfig& config) const {
    (void)config;
    return name();
  }

  // --- ahead-of-time compilation (`opgraph cache warm`) ---
  // Hands `sink`, in a stable order, every kernel specialisation this engine
  // may compile on any graph (its declared domain: what `cache warm --all`
  // and the CI compile). Each compiles for an arch without a device. Returns
  // the first bad status `sink` returns, else OK. Default: none (an engine
  // that compiles no kernels: the reference, cuDNN).
  virtual Status declared_kernels(const KernelSink& sink) const {
    (void)sink;
    return Status::ok();
  }
  // Hands `sink` the specialisations build_plan would compile for plan
  // `config` on `graph` for ctx.target(), without compiling or opening a
  // device (ctx.layout may be null). GRAPH_NOT_SUPPORTED when build_plan
  // would decline the plan for a reason decidable here; else as
  // declared_kernels. Default: none.
  virtual Status plan_kernels(const OpGraph& graph, const PlanConfig& config, const PlanContext& ctx,
                              const KernelSink& sink) const {
    (void)graph;
    (void)config;
    (void)ctx;
    (void)sink;
    return Status::ok();
  }

 private:
  EngineIdentity identity_;
};

}  // namespace opgraph
