// api/plan_choices.cpp — a recorded autotune choice put first at planning.
#include "api/plan_choices.h"

#include "ir/graph_hash.h"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace opgraph {

namespace {

// The fingerprint of a target's device (a few strings and the kernel sources'
// digest): the same for every graph planned for one device, so the last one each
// thread asked for is kept. The options are read from the environment each call.
const runtime::CacheEnvironment& environment_of(const std::optional<DeviceProperties>& device) {
  thread_local std::optional<std::optional<DeviceProperties>> last;
  thread_local runtime::CacheEnvironment env;
  if (!last || *last != device) {
    env = runtime::plan_choice_environment(device);
    last = device;
  }
  return env;
}

// The store every planning call of this thread asks: rebuilt when the options read
// from the environment now or the device differ from the last call's, else the
// last one (its fingerprint hash already computed).
const runtime::PlanChoiceStore& planning_store(const PlanTarget& target) {
  thread_local std::optional<runtime::PlanChoiceStore> store;
  thread_local std::optional<DeviceProperties> device;
  runtime::PlanChoiceOptions options = runtime::PlanChoiceOptions::from_env();
  if (!store || device != target.device || store->options().root != options.root ||
      store->options().disabled != options.disabled) {
    store.emplace(std::move(options), environment_of(target.device));
    device = target.device;
  }
  return *store;
}

}  // namespace

runtime::PlanChoiceStore plan_choice_store(const PlanTarget& target) {
  return runtime::PlanChoiceStore(runtime::PlanChoiceOptions::from_env(), environment_of(target.device));
}

Result<std::uint64_t> plan_choice_key(OpGraph& g, const GraphPlanState& st) {
  auto key = g.key();
  if (key.is_bad() || !st.dynamic_shapes) return key;
  // The finaliser over the key and the tag "dynamic": another key, as well spread.
  return graph_hash::stafford(key.value() ^ 0x64796e616d6963ULL);
}

void apply_recorded_choice(OpGraph& g, GraphPlanState& st) {
  const runtime::PlanChoiceStore& store = planning_store(st.target);
  if (!store.has_environment_dir()) return;
  auto key = plan_choice_key(g, st);
  if (key.is_bad()) return;
  std::string why;
  auto choice = store.lookup(*key, &why);
  if (!choice) {
    if (!why.empty()) st.notes.push_back("plan choice ignored (" + store.record_path(*key).string() + "): " + why);
    return;
  }
  auto knobs = knobs_from_string(choice->knobs);
  if (knobs.is_bad()) {
    st.notes.push_back("plan choice ignored (" + store.record_path(*key).string() + "): its knobs do not read: " +
                       knobs.status().message());
    return;
  }
  auto same = [&](const PlanRecord& p) {
    return p.config.engine_id == choice->engine_id && p.engine->knobs_to_public(p.config.knobs) == knobs.value();
  };
  auto it = std::find_if(st.plans.begin(), st.plans.end(), same);
  if (it == st.plans.end()) {
    st.notes.push_back("plan choice " + choice->name + " (engine " + std::to_string(choice->engine_id) +
                       ") is not in this graph's plan list: ignored");
    return;
  }
  std::rotate(st.plans.begin(), it, it + 1);
  char ms[32];
  std::snprintf(ms, sizeof(ms), "%.4g", choice->median_ms);
  st.notes.push_back("plan choice: " + st.plans.front().name + " first (recorded by autotune, median " + ms +
                     " ms)");
}

}  // namespace opgraph
