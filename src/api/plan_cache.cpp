// api/plan_cache.cpp — layout classes and the process-wide plan-list cache
// (contracts in plan_cache.h).
#include "api/plan_cache.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <numeric>

#include "api/plan_state.h"
#include "ir/graph_hash.h"
#include "opgraph/graph.h"
#include "runtime/cache_environment.h"
#include "runtime/plan_choice.h"

namespace opgraph::plan_cache {
namespace {

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

// Reads the integers of a JSON array starting at s[at] == '['; `at` ends past ']'.
bool read_ints(const std::string& s, std::size_t& at, std::vector<std::int64_t>& out) {
  out.clear();
  if (at >= s.size() || s[at] != '[') return false;
  ++at;
  while (at < s.size() && s[at] != ']') {
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str() + at, &end, 10);
    if (end == s.c_str() + at) return false;
    out.push_back(v);
    at = static_cast<std::size_t>(end - s.c_str());
    if (at < s.size() && s[at] == ',') ++at;
  }
  if (at >= s.size()) return false;
  ++at;
  return true;
}

}  // namespace

// A pass over the canonical JSON text rather than a parse and a dump (which cost
// more than ranking does): in canonical JSON the top-level keys are sorted, so the
// "tensors" array comes after every node (no attribute is visited), and each
// tensor object holds one "dim":[...] followed by its "stride":[...]. Inside a JSON
// string a quote is always escaped, so the text "dim":[ cannot occur in a name.
Result<std::string> layout_class_text(OpGraph& g) {
  auto serialized = g.serialize();
  if (serialized.is_bad()) return serialized.status();
  const std::string& s = serialized.value();
  static constexpr std::string_view kTensors = "\"tensors\":[", kDim = "\"dim\":", kStride = "\"stride\":";
  std::size_t pos = s.find(kTensors);
  if (pos == std::string::npos) return s;
  std::string out = s.substr(0, pos);
  out.reserve(s.size());
  std::vector<std::int64_t> dims, strides;
  auto bad = [] { return Status(ErrorCode::INTERNAL_ERROR, "layout class: unexpected canonical JSON of a tensor"); };
  while (true) {
    const std::size_t d = s.find(kDim, pos);
    if (d == std::string::npos) break;
    std::size_t d_end = d + kDim.size();
    if (d_end < s.size() && s[d_end] != '[') {  // "user_set":{"dim":true,...}: not an extent list
      out.append(s, pos, d_end - pos);
      pos = d_end;
      continue;
    }
    if (!read_ints(s, d_end, dims)) return bad();
    const std::size_t st = s.find(kStride, d_end);
    if (st == std::string::npos) return bad();
    std::size_t st_end = st + kStride.size();
    if (!read_ints(s, st_end, strides)) return bad();
    auto order = packed_order(dims, strides);
    if (!order) {  // not packed: extents and strides stay as written
      out.append(s, pos, st_end - pos);
      pos = st_end;
      continue;
    }
    out.append(s, pos, d + kDim.size() - pos);
    out += '[';
    for (std::size_t a = 0; a < dims.size(); ++a) out += (a ? "," : "") + std::string(dims[a] == 1 ? "1" : "\"*\"");
    out += ']';
    out.append(s, d_end, st + kStride.size() - d_end);
    out += '[';
    for (std::size_t a = 0; a < dims.size(); ++a)
      out += (a ? "," : "") + ((*order)[a] < 0 ? std::string("\"-\"") : std::to_string((*order)[a]));
    out += ']';
    pos = st_end;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

Result<graph_hash::Hash128> layout_class128(OpGraph& g) {
  return graph_hash::content_hash(g, graph_hash::Mode::LAYOUT_CLASS);
}

Result<std::uint64_t> layout_class(OpGraph& g) {
  auto h = layout_class128(g);
  if (h.is_bad()) return h.status();
  return h->fold();
}

namespace {

// The plan-choice fingerprint's hash of a target's device: the same for every
// graph planned for one device, so the last one each thread asked for is kept.
const std::string& fingerprint_hash(const std::optional<DeviceProperties>& device) {
  thread_local std::optional<std::optional<DeviceProperties>> last;
  thread_local std::string hash;
  if (!last || *last != device) {
    hash = runtime::plan_choice_environment(device).hash();
    last = device;
  }
  return hash;
}

}  // namespace

Result<std::string> key_for(OpGraph& g, const PlanTarget& target, const std::vector<HeurMode>& modes,
                            bool dynamic_shapes) {
  auto cls = layout_class128(g);
  if (cls.is_bad()) return cls.status();
  std::string key;
  key.reserve(128);
  key += runtime::graph_key_hex(cls->lo);
  key += runtime::graph_key_hex(cls->hi);
  key += '/';
  key += fingerprint_hash(target.device);
  key += '/';
  for (HeurMode m : modes) {
    key += to_string(m);
    key += ',';
  }
  // The manifest in use (a test's swapped table is another) and the opt-in switch.
  char manifest[32];
  std::snprintf(manifest, sizeof(manifest), "/%p/", static_cast<const void*>(&current_manifest()));
  key += manifest;
  if (const char* e = std::getenv("OPGRAPH_ENABLE_ENGINES")) key += e;
  // Planned for execute-time shape overrides: the engines ranked another graph (cuDNN's dynamic one).
  if (dynamic_shapes) key += "/dynamic";
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
