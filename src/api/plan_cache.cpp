// api/plan_cache.cpp — layout classes and the process-wide plan-list cache
// (contracts in plan_cache.h).
#include "api/plan_cache.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>

#include "api/plan_state.h"
#include "opgraph/graph.h"
#include "runtime/cache_environment.h"
#include "runtime/plan_choice.h"

namespace opgraph::plan_cache {
namespace {

using json = nlohmann::json;

struct Store {
  std::mutex mu;
  std::map<std::string, Entry> entries;
  PlanCacheStats stats;
};

Store& store_() {
  static Store* s = new Store();  // never destroyed: graphs may plan during static destruction
  return *s;
}

// The axis order `strides` pack `dims` in (see the header), or nullopt.
std::optional<std::vector<std::int64_t>> packed_order(const std::vector<std::int64_t>& dims,
                                                      const std::vector<std::int64_t>& strides) {
  if (dims.size() != strides.size()) return std::nullopt;
  std::vector<std::size_t> axes;  // axes of extent above 1
  for (std::size_t a = 0; a < dims.size(); ++a)
    if (dims[a] != 1) axes.push_back(a);
  // Innermost first: by stride ascending (a tie between two axes of extent above 1 cannot pack).
  std::stable_sort(axes.begin(), axes.end(), [&](std::size_t x, std::size_t y) { return strides[x] < strides[y]; });
  std::int64_t expect = 1;
  for (std::size_t a : axes) {
    if (strides[a] != expect || dims[a] <= 0) return std::nullopt;
    if (__builtin_mul_overflow(expect, dims[a], &expect)) return std::nullopt;
  }
  std::vector<std::int64_t> order(dims.size(), -1);
  for (std::size_t i = 0; i < axes.size(); ++i) order[axes[i]] = static_cast<std::int64_t>(axes.size() - 1 - i);
  return order;
}

}  // namespace

Result<std::string> layout_class_text(OpGraph& g) {
  auto text = g.serialize();
  if (text.is_bad()) return text.status();
  json j = json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("tensors"))
    return Status(ErrorCode::INTERNAL_ERROR, "layout class: the graph's canonical JSON does not read back");
  for (json& t : j["tensors"]) {
    if (!t.contains("dim") || !t.contains("stride")) continue;
    auto dims = t["dim"].get<std::vector<std::int64_t>>();
    auto strides = t["stride"].get<std::vector<std::int64_t>>();
    auto order = packed_order(dims, strides);
    if (!order) continue;  // not packed: extents and strides stay as written
    json d = json::array(), s = json::array();
    for (std::size_t a = 0; a < dims.size(); ++a) {
      d.push_back(dims[a] == 1 ? json(1) : json("*"));
      s.push_back((*order)[a] < 0 ? json("-") : json((*order)[a]));
    }
    t["dim"] = std::move(d);
    t["stride"] = std::move(s);
  }
  return j.dump();
}

Result<std::uint64_t> layout_class(OpGraph& g) {
  auto text = layout_class_text(g);
  if (text.is_bad()) return text.status();
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text.value()) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

Result<std::string> key_for(OpGraph& g, const PlanTarget& target, const std::vector<HeurMode>& modes) {
  auto cls = layout_class(g);
  if (cls.is_bad()) return cls.status();
  std::string key = runtime::graph_key_hex(*cls) + "/" + runtime::plan_choice_environment(target.device).hash() + "/";
  for (HeurMode m : modes) key += std::string(to_string(m)) + ",";
  // The manifest in use (a test's swapped table is another) and the opt-in switch.
  char manifest[32];
  std::snprintf(manifest, sizeof(manifest), "/%p/", static_cast<const void*>(&current_manifest()));
  key += manifest;
  if (const char* e = std::getenv("OPGRAPH_ENABLE_ENGINES")) key += e;
  return key;
}

std::optional<Entry> find(const std::string& key) {
  Store& s = store_();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.entries.find(key);
  if (it == s.entries.end()) {
    ++s.stats.misses;
    return std::nullopt;
  }
  ++s.stats.hits;
  return it->second;
}

void store(const std::string& key, Entry entry) {
  Store& s = store_();
  std::lock_guard<std::mutex> lock(s.mu);
  s.entries[key] = std::move(entry);
  s.stats.entries = s.entries.size();
}

}  // namespace opgraph::plan_cache

namespace opgraph {

PlanCacheStats plan_cache_stats() {
  auto& s = plan_cache::store_();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.stats;
}

void clear_plan_cache() {
  auto& s = plan_cache::store_();
  std::lock_guard<std::mutex> lock(s.mu);
  s.entries.clear();
  s.stats = PlanCacheStats{};
}

Result<std::uint64_t> layout_class_key(OpGraph& g) { return plan_cache::layout_class(g); }

}  // namespace opgraph
