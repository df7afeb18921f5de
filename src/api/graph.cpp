// api/graph.cpp — Graph construction and one-shot planning (validate → freeze →
// facts → rank), including the replay of a recorded (engine_id, knobs).
#include "opgraph/graph.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "api/plan_cache.h"
#include "api/plan_choices.h"
#include "api/plan_state.h"
#include "engines/manifest.h"
#include "plan/heuristics.h"

namespace opgraph {

const plan::Manifest& current_manifest() { return plan::active_manifest(engines::default_manifest()); }

Status check_planned(const GraphPlanState& st, const OpGraph& g) {
  if (!st.planned)
    return {ErrorCode::INVALID_VALUE, "graph '" + g.context().name + "' has no plans: call create_execution_plans first"};
  return Status::ok();
}

Status not_built(const PlanRecord& p, std::int64_t index) {
  return {ErrorCode::INVALID_VALUE,
          "plan " + std::to_string(index) + " (" + p.name + ") is not built: call build_plan_at_index first"};
}

Status check_index(const GraphPlanState& st, const OpGraph& g, std::int64_t index) {
  OPGRAPH_CHECK(check_planned(st, g));
  if (index < 0 || index >= static_cast<std::int64_t>(st.plans.size()))
    return {ErrorCode::INVALID_VALUE, "plan index " + std::to_string(index) + " is out of range: graph '" +
                                          g.context().name + "' has " + std::to_string(st.plans.size()) + " plan(s)"};
  return Status::ok();
}

Graph::Graph() : st_(std::make_unique<GraphPlanState>()) {}
Graph::Graph(OpGraph&& g) : st_(std::make_unique<GraphPlanState>()) { adopt(std::move(g)); }
Graph::~Graph() = default;

Graph::Graph(Graph&& other) : st_(std::make_unique<GraphPlanState>()) {
  if (other.st_->planned) throw std::logic_error("a planned graph cannot move: its plans refer to it");
  st_->target = other.st_->target;
  st_->host_fallback = other.st_->host_fallback;
  st_->plan_cache = other.st_->plan_cache;
  st_->dynamic_shapes = other.st_->dynamic_shapes;
  adopt(std::move(other));
}

Graph& Graph::operator=(Graph&& other) {
  if (this == &other) return *this;
  if (other.st_->planned || st_->planned) throw std::logic_error("a planned graph cannot move: its plans refer to it");
  st_->target = other.st_->target;
  st_->host_fallback = other.st_->host_fallback;
  st_->plan_cache = other.st_->plan_cache;
  st_->dynamic_shapes = other.st_->dynamic_shapes;
  adopt(std::move(other));
  return *this;
}

Result<Graph> Graph::deserialize(std::string_view json_text) {
  auto g = OpGraph::deserialize(json_text);
  if (g.is_bad()) return g.status();
  return Graph(std::move(g.value()));
}

Graph& Graph::set_device_properties(DeviceProperties p) {
  if (st_->planned || is_frozen())
    throw FrozenError("graph '" + context().name + "' is frozen by planning: cannot set device properties");
  st_->target.device = std::move(p);
  return *this;
}

Graph& Graph::set_plan_cache(bool use) {
  if (st_->planned) throw FrozenError("graph '" + context().name + "' is planned: set_plan_cache comes before planning");
  st_->plan_cache = use;
  return *this;
}

bool Graph::plan_cache() const noexcept { return st_->plan_cache; }

Graph& Graph::set_dynamic_shapes(bool enabled) {
  if (st_->planned)
    throw FrozenError("graph '" + context().name + "' is planned: set_dynamic_shapes comes before planning");
  st_->dynamic_shapes = enabled;
  return *this;
}

bool Graph::dynamic_shapes() const noexcept { return st_->dynamic_shapes; }

const PlanTarget& Graph::plan_target() const { return st_->target; }
bool Graph::is_planned() const noexcept { return st_->planned; }
const std::string& Graph::family_name() const { return st_->family; }
const FactsCache* Graph::facts() const { return st_->facts.get(); }
const std::vector<std::string>& Graph::planning_notes() const { return st_->notes; }

// validate → family validator → freeze → attach facts. Shared by both planning calls.
Status Graph::begin_planning() {
  if (st_->planned)
    return {ErrorCode::INVALID_VALUE, "graph '" + context().name +
                                          "' is already planned: planning is one-shot (select_plan() switches plans; "
                                          "build a new graph to plan differently)"};
  if (!is_validated()) OPGRAPH_CHECK(validate());
  const plan::Manifest& m = current_manifest();
  const plan::Family* fam = plan::family_for(m, *this);
  st_->family = fam ? fam->name : "";
  if (fam && fam->validator) {
    bool offers = false;
    for (const auto& s : fam->slots) offers = offers || plan::slot_enabled(s);
    if (offers) OPGRAPH_CHECK(fam->validator(*this));
  }
  freeze();
  auto layout = DeclaredLayout::compute(*this);
  if (layout.is_bad()) return layout.status();
  st_->layout = std::make_unique<DeclaredLayout>(std::move(layout.value()));
  st_->planned = true;
  st_->facts = std::make_unique<FactsCache>(*this, st_->target);
  if (fam && fam->analyzer) (void)st_->facts->get(fam->analyzer);
  st_->backend = m.backend;
  return Status::ok();
}

namespace {

std::string plan_name(const Engine& e, const PlanConfig& c) {
  return e.label(c) + "[" + knobs_to_string(e.knobs_to_public(c.knobs)) + "]";
}

// Instantiates the enabled slots of `f`, keeping those without a capability mismatch.
Result<std::vector<const Engine*>> offer(const plan::Family& f, GraphPlanState& st) {
  std::vector<const Engine*> out;
  for (const auto& ref : plan::slots_of(f)) {
    if (!plan::slot_enabled(*ref.slot)) {
      st.notes.push_back(ref.slot->name + ": opt-in (set OPGRAPH_ENABLE_ENGINES=" + ref.slot->name + ")");
      continue;
    }
    auto e = plan::instantiate(ref);
    if (e.is_bad()) return e.status();
    if (auto why = e.value()->mismatch(st.ctx())) {
      st.notes.push_back(ref.slot->name + ": " + *why);
      continue;
    }
    out.push_back(e.value().get());
    st.engines.push_back(std::move(e.value()));
  }
  return out;
}

// A cached list of the graph's layout class (api/plan_cache.h), taken as it is:
// each entry's engine instantiated once per id, nothing ranked.
Status adopt_cached(OpGraph& g, GraphPlanState& st, const plan::Manifest& m, plan_cache::Entry hit) {
  std::map<std::int64_t, const Engine*> made;
  st.plans.reserve(hit.plans.size());
  for (std::size_t i = 0; i < hit.plans.size(); ++i) {
    PlanConfig& config = hit.plans[i];
    const Engine* engine = nullptr;
    plan::DecodedId d = plan::decode_engine_id(config.engine_id);
    const bool backend = d.band == plan::IdBand::BACKEND || config.engine_id == plan::kBackendHeuristicEngineId;
    if (backend) {
      if (!st.backend) continue;
      engine = &st.backend->engine();
      config.backend_index = -1;  // a position in another graph's backend list: replayed by (engine_id, knobs)
    } else if (auto it = made.find(config.engine_id); it != made.end()) {
      engine = it->second;
    } else {
      auto ref = plan::slot_for_id(m, config.engine_id);
      if (ref.is_bad()) return ref.status();
      auto e = plan::instantiate(ref.value());
      if (e.is_bad()) return e.status();
      engine = made[config.engine_id] = e.value().get();
      st.engines.push_back(std::move(e.value()));
    }
    PlanRecord rec;
    // Our engines' names are their (id, knobs)'s, kept with the entry; a backend's is asked again.
    rec.name = !backend && i < hit.names.size() ? std::move(hit.names[i]) : plan_name(*engine, config);
    rec.config = std::move(config);
    rec.engine = engine;
    st.plans.push_back(std::move(rec));
  }
  st.notes = std::move(hit.notes);
  st.notes.push_back("plan list reused from the process's plan cache (layout class of this graph)");
  apply_recorded_choice(g, st);
  st.find_host_plan();
  if (st.plans.empty())
    return {ErrorCode::GRAPH_NOT_SUPPORTED, "no engine offers a plan for graph '" + g.context().name +
                                                "': the cached list of its layout class is empty here"};
  return Status::ok();
}

}  // namespace

Status Graph::create_execution_plans(const std::vector<HeurMode>& modes) {
  if (modes.empty()) return {ErrorCode::INVALID_VALUE, "create_execution_plans needs at least one heuristic mode"};
  OPGRAPH_CHECK(begin_planning());
  const plan::Manifest& m = current_manifest();
  std::string cache_key;
  if (st_->plan_cache) {
    auto k = plan_cache::key_for(*this, st_->target, modes, st_->dynamic_shapes);
    if (k.is_bad()) return k.status();
    cache_key = std::move(k.value());
    if (auto hit = plan_cache::find(cache_key)) return adopt_cached(*this, *st_, m, std::move(*hit));
  }
  plan::RankInputs in;
  in.family = plan::family_for(m, *this);
  if (in.family) {
    auto o = offer(*in.family, *st_);
    if (o.is_bad()) return o.status();
    in.offered = std::move(o.value());
  }
  auto u = offer(m.universal, *st_);
  if (u.is_bad()) return u.status();
  in.universal = std::move(u.value());
  in.backend = st_->backend.get();
  in.notes = &st_->notes;
  auto ranked = plan::rank(*this, in, modes, st_->ctx());
  std::vector<std::string> notes;  // one line per reason, though each mode re-asks
  for (auto& n : st_->notes)
    if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(std::move(n));
  st_->notes = std::move(notes);
  if (ranked.is_bad()) return ranked.status();
  for (auto& r : ranked.value()) {
    PlanRecord rec;
    rec.name = plan_name(*r.engine, r.config);
    r.config.notes.merge(r.engine->capabilities().notes);
    rec.config = std::move(r.config);
    rec.engine = r.engine;
    st_->plans.push_back(std::move(rec));
  }
  if (st_->plan_cache && !st_->plans.empty()) {
    plan_cache::Entry e;
    for (const auto& p : st_->plans) e.plans.push_back(p.config), e.names.push_back(p.name);
    e.notes = st_->notes;
    plan_cache::store(cache_key, std::move(e));
  }
  apply_recorded_choice(*this, *st_);  // an autotuned choice first (api/plan_choices.h)
  st_->find_host_plan();
  if (st_->plans.empty()) {
    std::string why;
    for (const auto& n : st_->notes) why += (why.empty() ? "" : "; ") + n;
    return {ErrorCode::GRAPH_NOT_SUPPORTED, "no engine offers a plan for graph '" + context().name + "' (family " +
                                                (st_->family.empty() ? std::string("none") : st_->family) + ")" +
                                                (why.empty() ? "" : ": " + why)};
  }
  return Status::ok();
}

Status Graph::create_execution_plan(std::int64_t engine_id, const Knobs& knobs) {
  OPGRAPH_CHECK(begin_planning());
  const plan::Manifest& m = current_manifest();
  plan::DecodedId d = plan::decode_engine_id(engine_id);
  const Engine* engine = nullptr;
  if (d.band == plan::IdBand::BACKEND || engine_id == plan::kBackendHeuristicEngineId) {
    if (!st_->backend)
      return {ErrorCode::GRAPH_NOT_SUPPORTED,
              "engine id " + std::to_string(engine_id) + " is a cuDNN backend id; this build has no backend provider"};
    engine = &st_->backend->engine();
  } else {
    auto ref = plan::slot_for_id(m, engine_id);
    if (ref.is_bad()) return ref.status();
    if (!plan::slot_enabled(*ref.value().slot))
      return {ErrorCode::GRAPH_NOT_SUPPORTED, "engine " + ref.value().slot->name +
                                                  " is opt-in: set OPGRAPH_ENABLE_ENGINES=" + ref.value().slot->name};
    auto e = plan::instantiate(ref.value());
    if (e.is_bad()) return e.status();
    if (auto why = e.value()->mismatch(st_->ctx()))
      return {ErrorCode::GRAPH_NOT_SUPPORTED, "engine " + e.value()->name() + ": " + *why};
    engine = e.value().get();
    st_->engines.push_back(std::move(e.value()));
  }
  auto k = engine->knobs_from_public(knobs);
  if (k.is_bad()) return k.status();
  PlanRecord rec;
  rec.config = PlanConfig{engine_id, std::move(k.value())};
  rec.config.notes = engine->plan_notes(*this, rec.config, st_->ctx());
  rec.engine = engine;
  rec.name = plan_name(*engine, rec.config);
  st_->plans.push_back(std::move(rec));
  st_->find_host_plan();
  return Status::ok();
}

}  // namespace opgraph
