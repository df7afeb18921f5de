// api/graph_records.cpp — a built plan as a JSON record, and planning a graph
// from one (Graph::serialize_plan_at_index / deserialize_plan).
//
// Record (one JSON object, keys sorted):
//   format "opgraph.plan", version 1, graph (its name, informative),
//   graph_key (16 hex digits of OpGraph::key()), engine_id, engine (label,
//   informative), knobs {KNOB_NAME: value} (public form), numerical_notes /
//   behavior_notes [names], and optionally backend_plan (the engine's own
//   serialised plan, e.g. cuDNN's execution-plan JSON) or backend_refused (why
//   the engine could not serialise it), and dynamic_shapes true when the graph
//   was planned dynamic (Graph::set_dynamic_shapes; absent otherwise).
// (engine_id, knobs) is the portable form: it replays on any build that has the
// engine. backend_plan only skips heuristics and the build; when the engine
// refuses it (another library version, another GPU) the plan is rebuilt.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "api/plan_state.h"
#include "opgraph/graph.h"

namespace opgraph {
namespace {

using json = nlohmann::json;
constexpr int kRecordVersion = 1;

std::string hex_key(std::uint64_t k) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(k));
  return buf;
}

Status bad(const std::string& what) { return {ErrorCode::UNSUPPORTED_GRAPH_FORMAT, "plan record: " + what}; }

// The parsed fields of a record.
struct Parsed {
  std::string graph_key;
  std::int64_t engine_id = -1;
  Knobs knobs;
  PlanNotes notes;
  std::optional<std::string> backend_plan;
  bool dynamic_shapes = false;
};

Result<Parsed> parse(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  auto str = [&](const char* k) -> const json* {
    auto it = j.find(k);
    return it != j.end() && it->is_string() ? &*it : nullptr;
  };
  const json* fmt = str("format");
  if (!fmt || fmt->get<std::string>() != "opgraph.plan") return bad("'format' must be \"opgraph.plan\"");
  auto ver = j.find("version");
  if (ver == j.end() || !ver->is_number_integer() || ver->get<std::int64_t>() != kRecordVersion)
    return bad("'version' must be " + std::to_string(kRecordVersion));
  Parsed p;
  const json* key = str("graph_key");
  if (!key) return bad("'graph_key' is missing or not a string");
  p.graph_key = key->get<std::string>();
  if (auto d = j.find("dynamic_shapes"); d != j.end()) {
    if (!d->is_boolean()) return bad("'dynamic_shapes' is not a boolean");
    p.dynamic_shapes = d->get<bool>();
  }
  auto id = j.find("engine_id");
  if (id == j.end() || !id->is_number_integer()) return bad("'engine_id' is missing or not an integer");
  p.engine_id = id->get<std::int64_t>();
  auto knobs = j.find("knobs");
  if (knobs == j.end() || !knobs->is_object()) return bad("'knobs' is missing or not an object");
  for (auto it = knobs->begin(); it != knobs->end(); ++it) {
    auto t = knob_type_from_string(it.key());
    if (!t) return bad("knobs." + it.key() + ": unknown knob type");
    if (!it->is_number_integer()) return bad("knobs." + it.key() + ": not an integer");
    p.knobs[*t] = it->get<std::int64_t>();
  }
  for (const char* field : {"numerical_notes", "behavior_notes"}) {
    auto n = j.find(field);
    if (n == j.end()) continue;
    if (!n->is_array()) return bad(std::string("'") + field + "' is not an array");
    for (const auto& e : *n) {
      if (!e.is_string()) return bad(std::string(field) + ": an entry is not a string");
      const std::string name = e.get<std::string>();
      bool numerical = field[0] == 'n';
      if (numerical) {
        auto v = numerical_note_from_string(name);
        if (!v) return bad(std::string(field) + ": unknown note '" + name + "'");
        p.notes.add(*v);
      } else {
        auto v = behavior_note_from_string(name);
        if (!v) return bad(std::string(field) + ": unknown note '" + name + "'");
        p.notes.add(*v);
      }
    }
  }
  if (auto b = j.find("backend_plan"); b != j.end()) {
    if (!b->is_string()) return bad("'backend_plan' is not a string");
    p.backend_plan = b->get<std::string>();
  }
  return p;
}

}  // namespace

Result<std::string> Graph::serialize_plan_at_index(std::int64_t index) {
  OPGRAPH_CHECK(check_index(*st_, *this, index));
  const PlanRecord& p = st_->plans[static_cast<std::size_t>(index)];
  const CompiledPlan* built = p.live.get();
  if (!built) return not_built(p, index);
  auto k = key();
  if (k.is_bad()) return k.status();
  json j;
  j["format"] = "opgraph.plan";
  j["version"] = kRecordVersion;
  j["graph"] = context().name;
  j["graph_key"] = hex_key(k.value());
  if (st_->dynamic_shapes) j["dynamic_shapes"] = true;  // ranked and built on the dynamic graph
  j["engine_id"] = p.config.engine_id;
  j["engine"] = p.engine->label(p.config);
  json knobs = json::object();
  for (const auto& [t, v] : p.engine->knobs_to_public(p.config.knobs)) knobs[to_string(t)] = v;
  j["knobs"] = std::move(knobs);
  json nn = json::array(), bn = json::array();
  for (auto n : p.config.notes.numerical) nn.push_back(std::string(to_string(n)));
  for (auto n : p.config.notes.behavior) bn.push_back(std::string(to_string(n)));
  j["numerical_notes"] = std::move(nn);
  j["behavior_notes"] = std::move(bn);
  auto blob = built->serialize_backend();
  if (blob.is_bad()) j["backend_refused"] = blob.status().message();
  else if (!blob.value().empty()) j["backend_plan"] = blob.value();
  // Bytes that are not UTF-8 (a backend blob) are written as U+FFFD rather than failing.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<std::string> Graph::serialize_plan() {
  auto i = get_selected_plan_index();
  if (i.is_bad()) return i.status();
  return serialize_plan_at_index(i.value());
}

Status Graph::deserialize_plan(std::string_view record) {
  auto r = parse(record);
  if (r.is_bad()) return r.status();
  if (!st_->planned) {
    if (!is_validated()) OPGRAPH_CHECK(validate());  // the key of the graph as planned: inferred shapes included
    auto k = key();
    if (k.is_bad()) return k.status();
    if (hex_key(k.value()) != r->graph_key)
      return {ErrorCode::INVALID_VALUE, "plan record was made for graph key " + r->graph_key + "; graph '" +
                                            context().name + "' has key " + hex_key(k.value())};
  }
  // The record's plan was ranked and built on a graph planned dynamic or not (cuDNN's
  // dynamic-shape operation graph or the static one): the graph is planned as it was,
  // and a planning note says when that changed the graph's setting.
  const bool was_dynamic = st_->dynamic_shapes;
  if (!st_->planned) st_->dynamic_shapes = r->dynamic_shapes;
  if (Status s = create_execution_plan(r->engine_id, r->knobs); s.is_bad()) {  // refuses a second planning
    if (!st_->planned) st_->dynamic_shapes = was_dynamic;  // a refused record changes nothing
    return s;
  }
  if (was_dynamic != st_->dynamic_shapes)
    st_->notes.push_back(std::string("the plan record was made for a graph planned ") +
                         (st_->dynamic_shapes ? "dynamic" : "static") + ": planned so (Graph::set_dynamic_shapes)");
  PlanRecord& p = st_->plans.front();
  p.config.notes.merge(r->notes);
  if (!r->backend_plan) return Status::ok();
  auto loaded = p.engine->load_serialized(*this, p.config, *r->backend_plan, st_->ctx());
  if (loaded.is_bad()) {
    st_->notes.push_back(p.engine->label(p.config) + ": the record's backend plan was refused (" +
                         loaded.status().message() + "); build_plans rebuilds from (engine_id, knobs)");
    return Status::ok();
  }
  std::lock_guard<std::mutex> lock(st_->mu);
  st_->publish(p, std::move(loaded.value()));
  p.last = Status::ok();
  return Status::ok();
}

}  // namespace opgraph
