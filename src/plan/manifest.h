// plan/manifest.h — the manifest's types and rules: families, slots, ids, opt-in.
//
// The manifest is the ONE table of engines (its rows live in
// src/engines/manifest.cpp, the one place that names engine factories; this
// layer holds the machinery and knows no concrete engine). It answers only what
// an engine cannot answer about itself:
//  * a FAMILY is a kind of graph, named by anchor node types. family_for(graph)
//    is a pure function of the graph's op names: no device, no environment. A
//    graph naming anchors of two families belongs to none (it goes to the
//    backend); op types that anchor nothing (pointwise, reduction, ...) are
//    ignored when classifying. Whether a family serves the WHOLE graph is its
//    engines' judgment at check_support.
//  * each family has a fixed id block, its slots (engine factories), and
//    optional analyzer / heuristics / validator hooks.
//  * the UNIVERSAL row holds engines offered for every graph whatever its family
//    (the CPU reference, which has a kernel for every op): classification does
//    not apply to it.
//  * maturity is per slot: an opt_in slot is offered only when
//    OPGRAPH_ENABLE_ENGINES lists its name (comma-separated) or is "all".
//
// There is no registration call. Tests swap the whole table with
// testing::ScopedManifest, so stand-in engines reach dispatch the way real ones do.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "opgraph/engine.h"
#include "plan/backend_provider.h"
#include "plan/engine_ids.h"

namespace opgraph::plan {

// One entry of a family hook's answer: a concrete plan, or the BACKEND marker
// (where the backend's block for this mode goes; ours first when absent).
struct Proposal {
  bool backend_marker = false;
  PlanConfig config;
  static Proposal backend() { return Proposal{true, {}}; }
  static Proposal plan(std::int64_t engine_id, Knobs knobs = {}) { return Proposal{false, PlanConfig{engine_id, std::move(knobs)}}; }
};

// The family's ranking policy for one mode: its proposals, from facts alone,
// among `offered` (the family's enabled engines). Every proposal names an
// offered engine and complete knobs. For OPENSOURCE a marker is ignored.
using HeuristicsHook = std::function<Result<std::vector<Proposal>>(HeurMode mode, const PlanContext& ctx,
                                                                   const std::vector<const Engine*>& offered)>;
// The family's native semantic rules, run at planning after validate() when the
// family offers an engine. GRAPH_NOT_SUPPORTED names the rule.
using ValidatorHook = std::function<Status(const OpGraph& graph)>;
// Makes the slot's engine with the identity the manifest gives it.
using EngineFactory = std::function<std::unique_ptr<Engine>(EngineIdentity identity)>;

struct EngineSlot {
  std::string name;        // stable: plan names, filters, OPGRAPH_ENABLE_ENGINES
  EngineFactory factory;
  bool opt_in = false;     // offered only when OPGRAPH_ENABLE_ENGINES names it (or "all")
  std::string summary;     // one line for `opgraph info`
};

struct Family {
  std::string name;
  int block = -1;                    // fixed id block: ids 20000 + 100*block + slot
  std::vector<std::string> anchors;  // op names that name this family
  Analyzer analyzer = nullptr;       // nullptr: no family facts
  HeuristicsHook heuristics;         // empty: accepting engines in slot order, then the backend
  ValidatorHook validator;           // empty: IR validation only
  std::vector<EngineSlot> slots;     // at most kFamilyBlockWidth
  std::string summary;
};

struct Manifest {
  std::vector<Family> families;
  Family universal;                           // offered for every graph (anchors unused)
  std::shared_ptr<BackendProvider> backend;   // nullptr: a backend that offers nothing
};

// A slot resolved from the table.
struct SlotRef {
  const Family* family = nullptr;
  const EngineSlot* slot = nullptr;
  std::int64_t id = -1;
};

// Structural rules: unique blocks and names, slots within a block, factories set.
Status check_manifest(const Manifest& m);

// The family a graph belongs to, or nullptr (no anchor, or anchors of two families).
const Family* family_for(const Manifest& m, const OpGraph& graph);

// Whether an opt-in gate admits `slot` now (reads OPGRAPH_ENABLE_ENGINES each call).
bool slot_enabled(const EngineSlot& slot);

// The family's slots (and the universal row's) with their ids, enabled or not.
std::vector<SlotRef> slots_of(const Family& family);
// Decodes `id` and finds its slot. INVALID_VALUE names what the id decodes to
// when no slot holds it (a backend id is not a manifest slot).
Result<SlotRef> slot_for_id(const Manifest& m, std::int64_t id);
// Instantiates a slot's engine with its manifest-given identity.
Result<std::unique_ptr<Engine>> instantiate(const SlotRef& ref);

// --- ahead-of-time compilation (`opgraph cache warm`) ---
// Receives one kernel request and the slot whose engine named it.
using SlotKernelSink = std::function<Status(const SlotRef& slot, const runtime::KernelRequest& request)>;
// Hands `sink` every kernel the engines of `m` declare (Engine::declared_kernels):
// the universal row, then each family in table order, every slot enabled or
// not (an opt-in engine's kernels are warmed too). `family` non-empty: that
// family's slots only (INVALID_VALUE naming the families when none has that
// name). The first bad status (a factory's, the engine's or the sink's) stops
// the walk and is returned.
Status declared_kernels(const Manifest& m, std::string_view family, const SlotKernelSink& sink);
// Hands `sink` the kernels plan `config` would compile on `graph` for `target`
// (Engine::plan_kernels), compiling nothing and opening no device. A backend
// plan (an id outside the OURS band) names none. Errors: the engine's (a
// decline is GRAPH_NOT_SUPPORTED), the sink's, slot_for_id's.
Status plan_kernels(const Manifest& m, const OpGraph& graph, const PlanConfig& config, const PlanTarget& target,
                    const SlotKernelSink& sink);

// The manifest planning uses: a test's override if one is installed, else `dflt`.
const Manifest& active_manifest(const Manifest& dflt);

namespace testing {
// Installs `m` as the manifest for the lifetime of this object (tests only; not
// thread-safe against concurrent planning). Nested scopes restore in order.
class ScopedManifest {
 public:
  explicit ScopedManifest(Manifest m);
  ~ScopedManifest();
  ScopedManifest(const ScopedManifest&) = delete;
  ScopedManifest& operator=(const ScopedManifest&) = delete;
  const Manifest& manifest() const { return *m_; }

 private:
  std::unique_ptr<Manifest> m_;
  const Manifest* prev_;
};
}  // namespace testing

}  // namespace opgraph::plan
