// plan/manifest.cpp — classification, slot resolution, the opt-in gate, and the
// test hook that swaps the table. The table's rows live in src/engines/manifest.cpp.
#include "plan/manifest.h"

#include <cstdlib>
#include <set>
#include <string_view>

#include "opgraph/op_graph.h"

namespace opgraph::plan {

std::string to_string(IdBand band) {
  switch (band) {
    case IdBand::BACKEND: return "backend";
    case IdBand::RESERVED: return "reserved";
    case IdBand::OURS: return "ours";
    case IdBand::INVALID: return "invalid";
  }
  return "?";
}

namespace {

Status check_family(const Family& f, std::set<int>& blocks, std::set<std::string>& names) {
  if (f.block < 0) return {ErrorCode::INTERNAL_ERROR, "manifest: family '" + f.name + "' has no id block"};
  if (!blocks.insert(f.block).second)
    return {ErrorCode::INTERNAL_ERROR, "manifest: family '" + f.name + "' reuses id block " + std::to_string(f.block)};
  if (static_cast<std::int64_t>(f.slots.size()) > kFamilyBlockWidth)
    return {ErrorCode::INTERNAL_ERROR, "manifest: family '" + f.name + "' has more slots than its id block holds"};
  for (const auto& s : f.slots) {
    if (s.name.empty() || !s.factory)
      return {ErrorCode::INTERNAL_ERROR, "manifest: family '" + f.name + "' has a slot without a name or factory"};
    if (!names.insert(s.name).second)
      return {ErrorCode::INTERNAL_ERROR, "manifest: engine name '" + s.name + "' appears twice"};
  }
  return Status::ok();
}

const Manifest*& override_slot() {
  static const Manifest* current = nullptr;
  return current;
}

}  // namespace

Status check_manifest(const Manifest& m) {
  std::set<int> blocks;
  std::set<std::string> names;
  std::set<std::string> anchors;
  OPGRAPH_CHECK(check_family(m.universal, blocks, names));
  for (const auto& f : m.families) {
    OPGRAPH_CHECK(check_family(f, blocks, names));
    for (const auto& a : f.anchors)
      if (!anchors.insert(a).second)
        return {ErrorCode::INTERNAL_ERROR, "manifest: op '" + a + "' anchors two families"};
  }
  return Status::ok();
}

const Family* family_for(const Manifest& m, const OpGraph& graph) {
  const Family* found = nullptr;
  for (const auto& node : graph.nodes()) {
    for (const auto& f : m.families) {
      bool anchors = false;
      for (const auto& a : f.anchors) anchors = anchors || a == node->op();
      if (!anchors) continue;
      if (found && found != &f) return nullptr;  // two families named: none
      found = &f;
    }
  }
  return found;
}

bool slot_enabled(const EngineSlot& slot) {
  if (!slot.opt_in) return true;
  const char* env = std::getenv("OPGRAPH_ENABLE_ENGINES");
  if (!env) return false;
  std::string_view list(env);
  while (!list.empty()) {
    std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == "all" || item == slot.name) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

std::vector<SlotRef> slots_of(const Family& family) {
  std::vector<SlotRef> out;
  for (std::size_t i = 0; i < family.slots.size(); ++i)
    out.push_back({&family, &family.slots[i], encode_engine_id(family.block, static_cast<int>(i))});
  return out;
}

Result<SlotRef> slot_for_id(const Manifest& m, std::int64_t id) {
  DecodedId d = decode_engine_id(id);
  if (d.band != IdBand::OURS)
    return Status(ErrorCode::INVALID_VALUE,
                  "engine id " + std::to_string(id) + " is in the " + to_string(d.band) + " band, not a manifest slot");
  auto find = [&](const Family& f) -> const Family* { return f.block == d.block ? &f : nullptr; };
  const Family* fam = find(m.universal);
  for (const auto& f : m.families)
    if (!fam) fam = find(f);
  if (!fam)
    return Status(ErrorCode::INVALID_VALUE, "engine id " + std::to_string(id) + " decodes to family block " +
                                                std::to_string(d.block) + ", which no family holds");
  if (d.slot >= static_cast<int>(fam->slots.size()))
    return Status(ErrorCode::INVALID_VALUE, "engine id " + std::to_string(id) + " decodes to slot " +
                                                std::to_string(d.slot) + " of family '" + fam->name + "', which has " +
                                                std::to_string(fam->slots.size()) + " slot(s)");
  return SlotRef{fam, &fam->slots[static_cast<std::size_t>(d.slot)], id};
}

Result<std::unique_ptr<Engine>> instantiate(const SlotRef& ref) {
  std::unique_ptr<Engine> e = ref.slot->factory(EngineIdentity{ref.id, ref.slot->name});
  if (!e) return Status(ErrorCode::INTERNAL_ERROR, "manifest: factory of engine '" + ref.slot->name + "' returned null");
  if (e->id() != ref.id || e->name() != ref.slot->name)
    return Status(ErrorCode::INTERNAL_ERROR,
                  "manifest: engine '" + ref.slot->name + "' did not keep the identity the manifest gave it");
  return e;
}

Status declared_kernels(const Manifest& m, std::string_view family, const SlotKernelSink& sink) {
  std::vector<const Family*> rows{&m.universal};
  for (const auto& f : m.families) rows.push_back(&f);
  if (!family.empty()) {
    std::string names;
    std::erase_if(rows, [&](const Family* f) { return f->name != family; });
    if (rows.empty()) {
      for (const auto& f : m.families) names += (names.empty() ? "" : ", ") + f.name;
      return Status(ErrorCode::INVALID_VALUE, "no family is named '" + std::string(family) + "' (the families: " +
                                                  m.universal.name + ", " + names + ")");
    }
  }
  for (const Family* f : rows) {
    for (const SlotRef& ref : slots_of(*f)) {
      auto engine = instantiate(ref);
      if (engine.is_bad()) return engine.status();
      OPGRAPH_CHECK((*engine)->declared_kernels([&](const runtime::KernelRequest& r) { return sink(ref, r); }));
    }
  }
  return Status::ok();
}

Status plan_kernels(const Manifest& m, const OpGraph& graph, const PlanConfig& config, const PlanTarget& target,
                    const SlotKernelSink& sink) {
  if (decode_engine_id(config.engine_id).band != IdBand::OURS) return Status::ok();
  auto ref = slot_for_id(m, config.engine_id);
  if (ref.is_bad()) return ref.status();
  auto engine = instantiate(*ref);
  if (engine.is_bad()) return engine.status();
  const FactsCache facts(graph, target);
  PlanContext ctx;
  ctx.facts = &facts;
  return (*engine)->plan_kernels(graph, config, ctx,
                                 [&](const runtime::KernelRequest& r) { return sink(*ref, r); });
}

const Manifest& active_manifest(const Manifest& dflt) {
  const Manifest* o = override_slot();
  return o ? *o : dflt;
}

namespace testing {
ScopedManifest::ScopedManifest(Manifest m) : m_(std::make_unique<Manifest>(std::move(m))), prev_(override_slot()) {
  override_slot() = m_.get();
}
ScopedManifest::~ScopedManifest() { override_slot() = prev_; }
}  // namespace testing

}  // namespace opgraph::plan
