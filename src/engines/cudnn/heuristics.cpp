// engines/cudnn/heuristics.cpp — see heuristics.h.
#include "engines/cudnn/heuristics.h"

#include <algorithm>

namespace opgraph::engines::cudnn {
namespace {

cudnnBackendHeurMode_t heur_mode(HeurMode m) {
  switch (m) {
    case HeurMode::B: return CUDNN_HEUR_MODE_B;
    case HeurMode::FALLBACK: return CUDNN_HEUR_MODE_FALLBACK;
    default: return CUDNN_HEUR_MODE_A;
  }
}

constexpr std::int64_t kMaxKnobs = CUDNN_KNOB_TYPE_COUNTS;

}  // namespace

PlanNotes read_notes(const CudnnApi& api, cudnnBackendDescriptor_t engine) {
  PlanNotes notes;
  static_assert(CUDNN_NUMERICAL_NOTE_TYPE_COUNT <= 32 && CUDNN_BEHAVIOR_NOTE_TYPE_COUNT <= 32);
  std::int32_t v[32] = {};
  std::int64_t n = 0;
  // Requested counts as cudnn-frontend asks them: the header's TYPE_COUNT.
  if (api.backend_get_attribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, v) == 0)
    for (std::int64_t i = 0; i < n && i < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; ++i)
      if (auto note = numerical_note_from_backend(v[i])) notes.add(*note);
  n = 0;
  if (api.backend_get_attribute(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &n, v) == 0)
    for (std::int64_t i = 0; i < n && i < CUDNN_BEHAVIOR_NOTE_TYPE_COUNT; ++i)
      if (auto note = behavior_note_from_backend(v[i])) notes.add(*note);
  return notes;
}

Result<PlanNotes> engine_notes(const CudnnApi& api, const Descriptor& op_graph, std::int64_t engine_id) {
  const std::string what = "notes of engine " + std::to_string(engine_id);
  auto eng = Descriptor::create(api, CUDNN_BACKEND_ENGINE_DESCRIPTOR, what);
  if (eng.is_bad()) return eng.status();
  cudnnBackendDescriptor_t g = op_graph.get();
  OPGRAPH_CHECK(eng->set(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g, Step::HEURISTICS, what));
  OPGRAPH_CHECK(eng->set(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &engine_id, Step::HEURISTICS, what));
  OPGRAPH_CHECK(eng->finalize(Step::HEURISTICS, what));
  return read_notes(api, eng->get());
}

Result<std::vector<PlanConfig>> query_heuristics(const CudnnApi& api, const Descriptor& op_graph, HeurMode mode) {
  const std::string what = "engine heuristics (mode " + std::string(to_string(mode)) + ")";
  auto heur = Descriptor::create(api, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, what);
  if (heur.is_bad()) return heur.status();
  cudnnBackendDescriptor_t g = op_graph.get();
  std::int32_t m = heur_mode(mode);
  OPGRAPH_CHECK(heur->set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g, Step::HEURISTICS, what));
  OPGRAPH_CHECK(heur->set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &m, Step::HEURISTICS, what));
  OPGRAPH_CHECK(heur->finalize(Step::HEURISTICS, what));
  std::int64_t count = 0;
  OPGRAPH_CHECK(check(api, static_cast<cudnnStatus_t>(api.backend_get_attribute(
                               heur->get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr)),
                      Step::HEURISTICS, what + ": result count"));
  std::vector<Descriptor> cfgs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (std::int64_t i = 0; i < count; ++i) {
    auto c = Descriptor::create(api, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, what);
    if (c.is_bad()) return c.status();
    raw.push_back(c->get());
    cfgs.push_back(std::move(c.value()));
  }
  std::int64_t got = 0;
  if (count > 0)
    OPGRAPH_CHECK(check(api, static_cast<cudnnStatus_t>(api.backend_get_attribute(
                                 heur->get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, raw.data())),
                        Step::HEURISTICS, what + ": results"));
  std::vector<PlanConfig> out;
  for (std::int64_t i = 0; i < got; ++i) {
    auto eng = Descriptor::create(api, CUDNN_BACKEND_ENGINE_DESCRIPTOR, what);
    if (eng.is_bad()) return eng.status();
    cudnnBackendDescriptor_t e = eng->get();
    std::int64_t n = 0;
    OPGRAPH_CHECK(check(api, static_cast<cudnnStatus_t>(api.backend_get_attribute(
                                 raw[i], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e)),
                        Step::HEURISTICS, what + ": engine of config " + std::to_string(i)));
    auto idx = eng->get_int64(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, Step::HEURISTICS, what);
    if (idx.is_bad()) return idx.status();
    std::vector<Descriptor> knobs;
    std::vector<cudnnBackendDescriptor_t> kraw;
    for (std::int64_t k = 0; k < kMaxKnobs; ++k) {
      auto d = Descriptor::create(api, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, what);
      if (d.is_bad()) return d.status();
      kraw.push_back(d->get());
      knobs.push_back(std::move(d.value()));
    }
    std::int64_t nk = 0;
    OPGRAPH_CHECK(check(api, static_cast<cudnnStatus_t>(api.backend_get_attribute(
                                 raw[i], CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, kMaxKnobs, &nk,
                                 kraw.data())),
                        Step::HEURISTICS, what + ": knob choices"));
    PlanConfig pc;
    pc.engine_id = idx.value();
    pc.mode = mode;
    pc.backend_index = i;
    pc.notes = read_notes(api, e);
    bool representable = pc.engine_id >= 0 && pc.engine_id < 10000;
    for (std::int64_t k = 0; k < nk && representable; ++k) {
      std::int32_t type = 0;
      std::int64_t c = 0, value = 0;
      OPGRAPH_CHECK(check(api, static_cast<cudnnStatus_t>(api.backend_get_attribute(
                                   kraw[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &c, &type)),
                          Step::HEURISTICS, what + ": knob type"));
      OPGRAPH_CHECK(check(api, static_cast<cudnnStatus_t>(api.backend_get_attribute(
                                   kraw[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &c, &value)),
                          Step::HEURISTICS, what + ": knob value"));
      auto kt = knob_type_from_backend(type);
      if (!kt) representable = false;
      else pc.knobs[*kt] = value;
    }
    if (representable) out.push_back(std::move(pc));
  }
  return out;
}

Result<Descriptor> build_execution_plan(const CudnnApi& api, cudnnHandle_t handle, const Descriptor& op_graph,
                                        const PlanConfig& config, cudnnBackendDescriptor_t kernel_cache) {
  const std::string what = "engine " + std::to_string(config.engine_id);
  auto eng = Descriptor::create(api, CUDNN_BACKEND_ENGINE_DESCRIPTOR, what);
  if (eng.is_bad()) return eng.status();
  cudnnBackendDescriptor_t g = op_graph.get();
  std::int64_t index = config.engine_id;
  OPGRAPH_CHECK(eng->set(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g, Step::BUILD, what));
  OPGRAPH_CHECK(eng->set(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index, Step::BUILD, what));
  OPGRAPH_CHECK(eng->finalize(Step::BUILD, what));
  std::vector<Descriptor> knobs;
  std::vector<cudnnBackendDescriptor_t> kraw;
  for (const auto& [k, v] : config.knobs) {
    auto bt = to_backend(k);
    if (bt.is_bad()) return bt.status();
    auto d = Descriptor::create(api, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, what);
    if (d.is_bad()) return d.status();
    auto type = static_cast<std::int32_t>(bt.value());
    std::int64_t value = v;
    OPGRAPH_CHECK(d->set(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &type, Step::BUILD, what));
    OPGRAPH_CHECK(d->set(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &value, Step::BUILD, what));
    OPGRAPH_CHECK(d->finalize(Step::BUILD, what + ": knob " + to_string(k)));
    kraw.push_back(d->get());
    knobs.push_back(std::move(d.value()));
  }
  auto cfg = Descriptor::create(api, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, what);
  if (cfg.is_bad()) return cfg.status();
  cudnnBackendDescriptor_t e = eng->get();
  OPGRAPH_CHECK(cfg->set(CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &e, Step::BUILD, what));
  if (!kraw.empty())
    OPGRAPH_CHECK(cfg->set(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                           static_cast<std::int64_t>(kraw.size()), kraw.data(), Step::BUILD, what));
  OPGRAPH_CHECK(cfg->finalize(Step::BUILD, what + ": engine config"));
  auto plan = Descriptor::create(api, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, what);
  if (plan.is_bad()) return plan.status();
  cudnnBackendDescriptor_t c = cfg->get();
  OPGRAPH_CHECK(plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, Step::BUILD, what));
  OPGRAPH_CHECK(plan->set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, Step::BUILD, what));
  if (kernel_cache)
    OPGRAPH_CHECK(plan->set(CUDNN_ATTR_EXECUTION_PLAN_KERNEL_CACHE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &kernel_cache,
                            Step::BUILD, what + ": kernel cache"));
  OPGRAPH_CHECK(plan->finalize(Step::BUILD, what + ": execution plan"));
  return plan;
}

Result<std::string> execution_plan_json(const CudnnApi& api, const Descriptor& plan) {
  std::int64_t n = 0;
  OPGRAPH_CHECK(check(api, static_cast<cudnnStatus_t>(api.backend_get_attribute(
                               plan.get(), CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, 0, &n, nullptr)),
                      Step::BUILD, "execution plan JSON: size"));
  std::string text(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)), '\0');
  std::int64_t got = 0;
  if (n > 0)
    OPGRAPH_CHECK(check(api, static_cast<cudnnStatus_t>(api.backend_get_attribute(
                                 plan.get(), CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, n, &got,
                                 text.data())),
                        Step::BUILD, "execution plan JSON"));
  text.resize(static_cast<std::size_t>(std::clamp<std::int64_t>(got, 0, n)));
  return text;
}

Result<Descriptor> execution_plan_from_json(const CudnnApi& api, cudnnHandle_t handle, std::string_view json) {
  const std::string what = "execution plan from JSON";
  auto plan = Descriptor::create(api, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, what);
  if (plan.is_bad()) return plan.status();
  OPGRAPH_CHECK(plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, Step::BUILD, what));
  // Exactly the bytes execution_plan_json returned (cudnn-frontend hands them back the same way);
  // std::string keeps a terminator after them.
  std::string text(json);
  OPGRAPH_CHECK(plan->set(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
                          static_cast<std::int64_t>(text.size()), text.c_str(), Step::BUILD, what));
  OPGRAPH_CHECK(plan->finalize(Step::BUILD, what));
  return plan;
}

}  // namespace opgraph::engines::cudnn
