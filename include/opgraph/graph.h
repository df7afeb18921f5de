// opgraph/graph.h — the graph users plan and execute: OpGraph plus the plan API.
//
// Life of a Graph (cudnn-frontend's classic flow, one ranked list for all engines):
//   build (builders) → create_execution_plans({A, FALLBACK})   validates, freezes,
//        attaches facts, ranks: graph.plans, ONE list of (engine_id, knobs)
//   → [filters] → [select_plan(i)] → build_plans() → execute(pack, workspace, handle)
//
// Rules:
//  * one-shot planning: create_execution_plans / create_execution_plan may
//    succeed once per graph; a second call is INVALID_VALUE. Switch plans with
//    select_plan(); plan differently with a new graph.
//  * the at-index API addresses exactly graph.plans, position for position;
//    filters mark plans deselected, they never renumber the list.
//  * build_plans(HEURISTICS_CHOICE) walks from the selected index (0 unless
//    select_plan was called) and takes the first plan that builds; a decline
//    (GRAPH_NOT_SUPPORTED from check_support or build_plan) advances; any other
//    error propagates. select_plan(i) PINS: a pinned decline is an error, never a
//    silent run of something else. ALL builds every plan that is not deselected.
//  * a built plan is cached on the graph: building it again is free.
//  * a planned graph must not move (its plans refer to it): the move
//    constructor throws std::logic_error for one.
// Plan indices are int64 (negative or past the count: INVALID_VALUE naming both).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "opgraph/device_properties.h"
#include "opgraph/engine.h"
#include "opgraph/execution_context.h"
#include "opgraph/facts.h"
#include "opgraph/knobs.h"
#include "opgraph/op_graph.h"
#include "opgraph/variant_pack.h"

namespace opgraph {

struct GraphPlanState;  // src/api/plan_state.h

// --- autotuning (Graph::autotune; docs/autotune.md) ---
struct AutotuneOptions {
  std::int64_t top_k = 4;  // time the first k plans of graph.plans that are not deselected
  int rounds = 5;          // interleaved timed rounds (one execute of each plan per round); median per plan
  int warmup = 1;          // untimed executes of each plan before the rounds
  bool persist = true;     // record the winner in the plan-choice file (off under OPGRAPH_DISABLE_PLAN_CHOICES)
};

// One timed (or skipped) plan.
struct AutotuneEntry {
  std::int64_t index = -1;  // position in graph.plans
  std::int64_t engine_id = -1;
  Knobs knobs;              // public knobs
  std::string name;         // "engine[KNOB=v, ...]"
  double median_ms = -1;    // MILLISECONDS per execute; -1 when skipped
  int rounds = 0;           // timed rounds behind the median
  std::string timer;        // "cuda events" or "host wall clock"
  std::string skipped;      // non-empty: why the plan was not timed (a build or execute failure)
};

struct AutotuneResult {
  std::vector<AutotuneEntry> entries;  // in list order
  std::int64_t selected = -1;          // the fastest plan's index (now the graph's selected, pinned plan)
  bool recorded = false;               // the choice was written to the plan-choice file
  std::string record_path;             // where (or where it would have been)
  std::string record_note;             // why it was not written ("" when it was)
};

// --- the process-wide plan cache by layout class (docs/autotune.md) ---
// The layout class of a validated graph: its structure without extents (every
// extent above 1, and strides that pack the extents in some axis order, left
// out; docs/autotune.md defines it exactly), as a 64-bit hash. Two graphs that differ
// only in such extents have one class. Errors: serialisation's.
Result<std::uint64_t> layout_class_key(OpGraph& g);
struct PlanCacheStats {
  std::uint64_t hits = 0;     // plan lists reused without ranking
  std::uint64_t misses = 0;   // lookups that ranked (and stored the list)
  std::uint64_t entries = 0;  // lists held
};
PlanCacheStats plan_cache_stats();
// Forgets every cached list and zeroes the counts.
void clear_plan_cache();

class Graph : public OpGraph {
 public:
  Graph();
  explicit Graph(OpGraph&& g);
  Graph(Graph&& other);
  Graph& operator=(Graph&& other);
  ~Graph() override;

  // Parses canonical graph JSON (OpGraph::deserialize) into a plannable graph.
  static Result<Graph> deserialize(std::string_view json_text);

  // --- planning target ---
  // The device plans are made for; none (the default without a runtime) plans
  // for the host: only engines that need no device are offered. Throws
  // FrozenError once planned.
  Graph& set_device_properties(DeviceProperties p);
  const PlanTarget& plan_target() const;

  // --- planning (one-shot) ---
  Status create_execution_plans(const std::vector<HeurMode>& modes);
  // Opt-in, before planning: create_execution_plans first looks in the
  // process-wide plan cache under (layout class, device fingerprint, modes, the
  // engines offered); on a hit the graph takes that ranked list as it is
  // (validation, the family's rules, facts and the operand layout still run;
  // ranking and the engines' heuristics do not: the list was ranked for the
  // first graph of the class, and a plan that cannot serve this graph's extents
  // declines at build as usual). On a miss it ranks and stores the list. A
  // recorded autotune choice for this exact graph is still put first. Off by
  // default. Throws FrozenError once planned.
  Graph& set_plan_cache(bool use);
  bool plan_cache() const noexcept;
  // Opt-in, before planning: the graph is planned for execute-time shape
  // overrides from the start (cudnn-frontend's is_dynamic_shape_enabled;
  // docs/dynamic_shapes.md). Engines see it in PlanContext::dynamic_shapes: the
  // cuDNN engine lowers the operation graph with cuDNN's dynamic-shape flag for
  // its heuristics query, its engine configs and the built plan, and attaches
  // the plan's kernel cache at build, so an override finalises the config the
  // heuristics chose for that dynamic graph. The ranked list of such a graph is
  // cached and recorded under keys apart from the static graph's (plan cache,
  // plan-choice file). Off by default: planning is the static one. Throws
  // FrozenError once planned.
  Graph& set_dynamic_shapes(bool enabled);
  bool dynamic_shapes() const noexcept;
  // Replays a recorded plan: the list becomes that one entry. `knobs` must name
  // every axis of the engine, inside its domains (INVALID_VALUE otherwise); an id
  // no slot holds is INVALID_VALUE; an opt-in engine not enabled, a backend id with
  // no backend, or a capability mismatch is GRAPH_NOT_SUPPORTED.
  Status create_execution_plan(std::int64_t engine_id, const Knobs& knobs);
  bool is_planned() const noexcept;
  // The graph's family ("" when it belongs to none). Valid once planned.
  const std::string& family_name() const;
  // The facts attached at planning (nullptr before).
  const FactsCache* facts() const;
  // Why planning left engines out ("engine: reason"), for diagnostics.
  const std::vector<std::string>& planning_notes() const;

  // --- the at-index API over graph.plans ---
  std::int64_t get_execution_plan_count() const;
  // "engine[KNOB=v, ...]", knobs sorted by name ("engine[]" with none).
  Result<std::string> get_plan_name_at_index(std::int64_t index) const;
  // The plan's identity with public knobs (an empty map when it has no axes),
  // plus its provenance (mode, backend_index, notes).
  Result<PlanConfig> get_engine_and_knobs_at_index(std::int64_t index) const;
  // The plan's numerical and behaviour notes (opgraph/plan_notes.h).
  Result<PlanNotes> get_plan_notes_at_index(std::int64_t index) const;
  Status build_plan_at_index(std::int64_t index);
  // BYTES; the plan must be built (INVALID_VALUE otherwise).
  Result<std::int64_t> get_workspace_size_plan_at_index(std::int64_t index) const;
  // BYTES the call `pack` needs from plan `index` — with execute-time shape
  // overrides, at the call's extents (docs/dynamic_shapes.md); without, the same
  // as above. A pack the plan would refuse is refused here alike, nothing run.
  Result<std::int64_t> get_workspace_size_plan_at_index(std::int64_t index, const VariantPack& pack) const;
  Status execute_plan_at_index(const VariantPack& pack, Workspace workspace, std::int64_t index,
                               const Handle* handle = nullptr) const;

  // --- choosing and building ---
  // OK at the first plan whose engine accepts; GRAPH_EXECUTION_PLAN_CREATION_FAILED
  // with every reason when none does.
  Status check_support();
  Status build_plans(BuildPlanPolicy policy = BuildPlanPolicy::HEURISTICS_CHOICE);
  Status select_plan(std::int64_t index);
  // The plan execute() runs: the one build_plans chose (INVALID_VALUE before).
  Result<std::int64_t> get_selected_plan_index() const;
  Result<std::int64_t> get_workspace_size() const;
  // The selected plan's workspace for the call `pack` (overrides included).
  Result<std::int64_t> get_workspace_size(const VariantPack& pack) const;
  // Runs the selected plan. workspace.bytes below the plan's need is INVALID_VALUE.
  Status execute(const VariantPack& pack, Workspace workspace = {}, const Handle* handle = nullptr) const;
  // --- routing: which plan runs a call's buffers (docs/architecture.md, "Routing") ---
  // One policy for C++ and Python callers (the binding calls these):
  //  * device buffers on a graph planned for the host: INVALID_VARIANT_PACK naming
  //    the operand (only host engines hold plans; nothing is staged);
  //  * device buffers on the host plan (host_plan_index()): INVALID_VARIANT_PACK
  //    naming the operand and the plan (never staged);
  //  * host buffers (and no device buffers) on a graph planned for a device, with no
  //    index pinned by the call: the host plan runs, built on first use, with no
  //    device in the call's handle;
  //  * bare addresses (neither kind known): the caller's handle decides (its device,
  //    or the host without one).
  // The device a call drives: the planning target's for device buffers, none for
  // host buffers (even with a device handle), the handle's for bare addresses.
  struct BufferKinds {
    bool host = false;                  // some entry is host memory (MemoryKind::HOST)
    bool device = false;                // some entry is device memory (MemoryKind::DEVICE)
    std::int64_t first_device_uid = -1;  // named in errors
  };
  // What a pack's bound operands say about their memory (OperandBuffer::memory),
  // read after normalising a caller's pack against this graph (a prepared pack as
  // it is). The graph must be planned; a pack normalisation refuses is its error.
  Result<BufferKinds> buffer_kinds(const VariantPack& pack) const;
  struct Route {
    std::int64_t index = -1;                   // the plan to run
    const DeviceProperties* device = nullptr;  // the device the call drives; null: the host
  };
  // The plan that runs host buffers: the first whose engine needs no device
  // (Capabilities::needs_device == false, the reference), -1 when the list holds
  // none or the graph is not planned. A typed query: never a plan-name test.
  std::int64_t host_plan_index() const;
  // Decides a call's plan and device by the rules above; `index` < 0: the selected
  // plan (INVALID_VALUE before build_plans), else that plan as asked (not rerouted).
  // May build the host plan (takes the build lock).
  Result<Route> route(const BufferKinds& kinds, std::int64_t index = -1, const Handle* handle = nullptr);
  // route() then execute_plan_at_index, with a handle carrying `handle`'s stream and
  // exactly the route's device. The first form reads the kinds off `pack`.
  Status execute_routed(const VariantPack& pack, Workspace workspace = {}, const Handle* handle = nullptr,
                        std::int64_t index = -1);
  Status execute_routed(const VariantPack& pack, const BufferKinds& kinds, Workspace workspace,
                        const Handle* handle, std::int64_t index);
  // Host fallback policy (default: off). A graph planned for a device takes a plan
  // from the heuristics only when a device engine accepts it: with none,
  // check_support and build_plans fail (GRAPH_EXECUTION_PLAN_CREATION_FAILED, Python's
  // GraphNotSupportedError), as cudnn-frontend does, instead of choosing the host
  // reference and failing at execute on device buffers. The host plan stays available
  // to a caller who asks for it: set_host_fallback(true) lets the heuristics take it;
  // select_plan(host_plan_index()) pins it; a replayed plan (create_execution_plan,
  // deserialize_plan) is taken as asked; host buffers route to it (above). A graph
  // planned for the host is unaffected. May be set at any time before build_plans.
  Graph& set_host_fallback(bool allow);
  bool host_fallback() const noexcept;

  // Normalises `caller` into `out` once, for repeated executes: execute(out, ...)
  // then skips normalisation. The graph must be planned (INVALID_VALUE otherwise);
  // a binding with no spelling is INVALID_VARIANT_PACK, as execute says it. `out`
  // is this graph's and reads the buffers in place: they and the graph outlive its
  // use. It is recognised by the graph's layout generation (exec/declared_layout.h):
  // any other graph refuses it with INVALID_VARIANT_PACK, even one built later at
  // the same address. Planning is one-shot, so a graph's layout (and generation)
  // never changes once planned: `out` stays valid for the graph's whole life.
  Status prepare_variant_pack(const VariantPack& caller, VariantPack& out) const;

  // --- autotuning (src/api/graph_autotune.cpp; docs/autotune.md) ---
  // Times the first options.top_k plans that are not deselected on the caller's
  // buffers and workspace: each is built (a build that declines or fails is
  // skipped, its reason kept), executed options.warmup times untimed, then timed
  // in options.rounds interleaved rounds (an execute that fails skips the plan);
  // the median decides. A plan whose engine needs a device is timed with CUDA
  // events on the handle's stream (device `handle->device()`, else the planning
  // target's), any other by the host wall clock around execute. The fastest is
  // selected and pinned (select_plan) and, with options.persist, recorded in the
  // plan-choice file under (graph key, device fingerprint, library version):
  // a later create_execution_plans of the same graph on the same device puts it
  // first. The pack is executed as given (host buffers run the host plans; the
  // caller picks buffers that suit the plans timed). Errors: INVALID_VALUE before
  // planning or for top_k < 1 / rounds < 1 / warmup < 0;
  // GRAPH_EXECUTION_PLAN_CREATION_FAILED when no plan could be timed (every
  // reason named). A failed record is not an error (record_note says why).
  Result<AutotuneResult> autotune(const VariantPack& pack, Workspace workspace, const Handle* handle = nullptr,
                                  const AutotuneOptions& options = {});

  // --- plan records (src/api/graph_records.cpp) ---
  // A built plan as a JSON record: the graph's key, (engine_id, public knobs by
  // name), its notes, and — when the engine has one (cuDNN's execution plan
  // JSON) — the backend's serialised plan. The portable form is (engine_id,
  // knobs); the backend blob only saves heuristics and the build. The plan must
  // be built (INVALID_VALUE otherwise). A backend that refuses to serialise
  // leaves the blob out and records why ("backend_refused").
  Result<std::string> serialize_plan_at_index(std::int64_t index);
  Result<std::string> serialize_plan();  // the selected plan
  // Plans THIS graph from a record (one-shot, like create_execution_plan): the
  // record's graph key must equal this graph's (INVALID_VALUE naming both), a
  // malformed record is UNSUPPORTED_GRAPH_FORMAT naming the field; then replays
  // (engine_id, knobs) with the record's notes. With a backend blob the engine
  // loads it now (the plan is built on return); if the engine refuses it, a
  // planning note says why and build_plans rebuilds from (engine_id, knobs).
  // A record of a graph planned dynamic says so ("dynamic_shapes": true): the
  // graph is planned as the record's was (set_dynamic_shapes), with a planning
  // note when that changed its setting.
  Status deserialize_plan(std::string_view record);

  // --- filters (after planning, before building) ---
  // Plans needing more workspace are deselected (checked when built).
  Status deselect_workspace_greater_than(std::int64_t bytes);
  // Plans whose engine label contains any of `substrings` are deselected.
  // Both filters may run while other threads execute: a call either runs the
  // plan it started with fully, or is refused ("no built plan"); never a crash.
  Status deselect_engines(const std::vector<std::string>& substrings);
  // Note filters (cudnn-frontend's): deselect_* removes every plan having ANY of
  // `notes`; select_* keeps only plans having ALL of them (an empty list keeps
  // all). Same concurrency contract as deselect_engines.
  Status deselect_numeric_notes(const std::vector<NumericalNote>& notes);
  Status deselect_behavior_notes(const std::vector<BehaviorNote>& notes);
  Status select_numeric_notes(const std::vector<NumericalNote>& notes);
  Status select_behavior_notes(const std::vector<BehaviorNote>& notes);
  // Why plan `index` is not usable ("" when it is, or it was never tried).
  Result<std::string> get_plan_status_at_index(std::int64_t index) const;

 private:
  Status begin_planning();
  std::unique_ptr<GraphPlanState> st_;
};

}  // namespace opgraph
