// api/engine_info.cpp — the engine listing and library probe (opgraph/engine_info.h)
// over the manifest and the runtime's loader.
#include "opgraph/engine_info.h"

#include "engines/manifest.h"
#include "plan/manifest.h"
#include "runtime/loader.h"

namespace opgraph {
namespace {

EngineInfo describe(const plan::SlotRef& ref, bool universal, const PlanTarget& target) {
  EngineInfo e;
  e.id = ref.id;
  e.name = ref.slot->name;
  e.family = ref.family->name;
  e.universal = universal;
  e.opt_in = ref.slot->opt_in;
  e.summary = ref.slot->summary;
  auto engine = plan::instantiate(ref);
  if (engine.is_good()) e.needs_device = engine.value()->capabilities().needs_device;
  if (!plan::slot_enabled(*ref.slot)) {
    e.availability = EngineAvailability::OPT_IN_OFF;
    e.why = "opt-in (OPGRAPH_ENABLE_ENGINES=" + ref.slot->name + ")";
  } else if (engine.is_bad()) {
    e.availability = EngineAvailability::BROKEN;
    e.why = engine.status().message();
  } else if (auto why = engine.value()->capabilities().arch_mismatch(target)) {
    e.availability = EngineAvailability::UNAVAILABLE;
    e.why = *why;
  }
  return e;
}

FamilyInfo family_info(const plan::Family& f, bool universal, const PlanTarget& target) {
  FamilyInfo info;
  info.name = f.name;
  info.block = f.block;
  info.anchors = f.anchors;
  info.universal = universal;
  info.summary = f.summary;
  for (const auto& ref : plan::slots_of(f)) info.engines.push_back(describe(ref, universal, target));
  return info;
}

template <class Api, class Version>
LibraryInfo probe(const char* name, const Result<const Api*>& api, Version version) {
  LibraryInfo l;
  l.name = name;
  l.found = api.is_good();
  if (l.found) {
    l.path = api.value()->path;
    l.version = static_cast<std::int64_t>(version(*api.value()));
  } else {
    l.error = api.status().message();
  }
  return l;
}

}  // namespace

EngineListing list_engines(const PlanTarget& target) {
  const plan::Manifest& m = plan::active_manifest(engines::default_manifest());
  EngineListing out;
  out.families.push_back(family_info(m.universal, true, target));
  for (const auto& f : m.families) out.families.push_back(family_info(f, false, target));
  out.backend = m.backend != nullptr;
  return out;
}

Result<EngineInfo> engine_info(std::int64_t engine_id, const PlanTarget& target) {
  const plan::Manifest& m = plan::active_manifest(engines::default_manifest());
  auto ref = plan::slot_for_id(m, engine_id);
  if (ref.is_bad()) return ref.status();
  return describe(*ref, ref->family == &m.universal, target);
}

std::vector<LibraryInfo> probe_gpu_libraries() {
  return {probe("libcuda", runtime::cuda_driver(), [](const runtime::CudaDriverApi& a) { return a.driver_version; }),
          probe("libnvrtc", runtime::nvrtc(), [](const runtime::NvrtcApi& a) { return a.version; }),
          probe("libcudnn", runtime::cudnn(), [](const runtime::CudnnApi& a) { return a.version; })};
}

}  // namespace opgraph
