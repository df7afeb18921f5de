// plan/knobs.cpp — knob names, the backend mapping, and knob text.
//
// The backend mapping is a table of cudnnBackendKnobType_t values as numbered in
// cuDNN 9's cudnn_graph_v9.h (checked against 9.19). INPUT_TMA_ENABLE and
// OUTPUT_TMA_ENABLE have no value in the 9.19 header, so they do not map yet.
#include "opgraph/knobs.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace opgraph {
namespace {

struct KnobRow {
  KnobType type;
  std::string_view name;
  std::int64_t backend;  // cudnnBackendKnobType_t, -1: no backend counterpart
};

constexpr KnobRow kKnobs[] = {
    {KnobType::SWIZZLE, "SWIZZLE", 1},
    {KnobType::TILE_SIZE, "TILE_SIZE", 2},
    {KnobType::EDGE, "EDGE", 4},
    {KnobType::MULTIPLY, "MULTIPLY", 11},
    {KnobType::SPLIT_K_BUF, "SPLIT_K_BUF", 12},
    {KnobType::TILEK, "TILEK", 13},
    {KnobType::STAGES, "STAGES", 14},
    {KnobType::REDUCTION_MODE, "REDUCTION_MODE", 15},
    {KnobType::SPLIT_K_SLC, "SPLIT_K_SLC", 17},
    {KnobType::IDX_MODE, "IDX_MODE", 18},
    {KnobType::SPECFILT, "SPECFILT", 23},
    {KnobType::KERNEL_CFG, "KERNEL_CFG", 24},
    {KnobType::WORKSPACE, "WORKSPACE", 25},
    {KnobType::TILE_CGA_M, "TILE_CGA_M", 27},
    {KnobType::TILE_CGA_N, "TILE_CGA_N", 28},
    {KnobType::BLOCK_SIZE, "BLOCK_SIZE", 29},
    {KnobType::OCCUPANCY, "OCCUPANCY", 30},
    {KnobType::ARRAY_SIZE_PER_THREAD, "ARRAY_SIZE_PER_THREAD", 31},
    {KnobType::SPLIT_COLS, "SPLIT_COLS", 33},
    {KnobType::TILE_ROWS, "TILE_ROWS", 34},
    {KnobType::TILE_COLS, "TILE_COLS", 35},
    {KnobType::LOAD_SIZE, "LOAD_SIZE", 36},
    {KnobType::CTA_COUNT, "CTA_COUNT", 37},
    {KnobType::STREAM_K, "STREAM_K", 38},
    {KnobType::SPLIT_P_SLC, "SPLIT_P_SLC", 39},
    {KnobType::TILE_M, "TILE_M", 40},
    {KnobType::TILE_N, "TILE_N", 41},
    {KnobType::WARP_SPEC_CFG, "WARP_SPEC_CFG", 42},
    {KnobType::SWAP_AB, "SWAP_AB", 43},
    {KnobType::INPUT_TMA_ENABLE, "INPUT_TMA_ENABLE", -1},
    {KnobType::OUTPUT_TMA_ENABLE, "OUTPUT_TMA_ENABLE", -1},
    {KnobType::TILE_CGA, "TILE_CGA", 26},  // deprecated in the backend enum, still reported
    {KnobType::SCHED_POLICY, "SCHED_POLICY", -1},
    {KnobType::PACK_GQA, "PACK_GQA", -1},
    {KnobType::SPLIT_KV, "SPLIT_KV", -1},
    {KnobType::PIPELINE_ARCH, "PIPELINE_ARCH", -1},
    {KnobType::MMA_TILE_M, "MMA_TILE_M", -1},
    {KnobType::MMA_TILE_N, "MMA_TILE_N", -1},
    {KnobType::MMA_TILE_K, "MMA_TILE_K", -1},
    {KnobType::CTA_GROUP, "CTA_GROUP", -1},
    {KnobType::WARPS_M, "WARPS_M", -1},
    {KnobType::WARPS_N, "WARPS_N", -1},
    {KnobType::RASTER_ORDER, "RASTER_ORDER", -1},
    {KnobType::CLUSTER_M, "CLUSTER_M", -1},
    {KnobType::CLUSTER_N, "CLUSTER_N", -1},
    {KnobType::CHAIN_SPLIT, "CHAIN_SPLIT", -1},
};

// The persisted values: a renumbering would re-target every stored record.
static_assert(static_cast<std::int64_t>(KnobType::TILE_CGA) == 32, "backend-band knob values are append-only");
static_assert(static_cast<std::int64_t>(KnobType::SCHED_POLICY) == kFrontendKnobBase,
              "the frontend band starts at kFrontendKnobBase");

const KnobRow* find_row(KnobType k) {
  for (const auto& r : kKnobs)
    if (r.type == k) return &r;
  return nullptr;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string to_string(KnobType k) {
  if (k == KnobType::NOT_SET) return "NOT_SET";
  if (const KnobRow* r = find_row(k)) return std::string(r->name);
  return "UNKNOWN_" + std::to_string(static_cast<std::int64_t>(k));
}

std::optional<KnobType> knob_type_from_string(std::string_view s) noexcept {
  for (const auto& r : kKnobs)
    if (r.name == s) return r.type;
  return std::nullopt;
}

const std::map<std::string, KnobType, std::less<>>& all_knob_types() {
  static const auto* table = [] {
    auto* m = new std::map<std::string, KnobType, std::less<>>();
    for (const auto& r : kKnobs) m->emplace(std::string(r.name), r.type);
    return m;
  }();
  return *table;
}

Result<std::int64_t> to_backend(KnobType k) {
  if (is_frontend_knob(k))
    return Status(ErrorCode::INVALID_VALUE, "knob " + to_string(k) + " (" + std::to_string(static_cast<std::int64_t>(k)) +
                                                ") is a frontend-band knob: it never reaches the cuDNN backend");
  const KnobRow* r = find_row(k);
  if (!r || r->backend < 0)
    return Status(ErrorCode::INVALID_VALUE, "knob " + to_string(k) + " has no cudnnBackendKnobType_t counterpart");
  return r->backend;
}

std::optional<KnobType> knob_type_from_backend(std::int64_t backend_value) noexcept {
  for (const auto& r : kKnobs)
    if (r.backend >= 0 && r.backend == backend_value) return r.type;
  return std::nullopt;
}

std::string knobs_to_string(const Knobs& knobs) {
  std::vector<std::pair<std::string, std::int64_t>> named;
  named.reserve(knobs.size());
  for (const auto& [k, v] : knobs) named.emplace_back(to_string(k), v);
  std::sort(named.begin(), named.end());
  std::string out;
  for (const auto& [name, v] : named) {
    if (!out.empty()) out += ", ";
    out += name + "=" + std::to_string(v);
  }
  return out;
}

Result<Knobs> knobs_from_string(std::string_view text) {
  Knobs out;
  text = trim(text);
  while (!text.empty()) {
    std::size_t comma = text.find(',');
    std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : trim(text.substr(comma + 1));
    std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return Status(ErrorCode::INVALID_VALUE, "knob '" + std::string(item) + "': expected NAME=VALUE");
    std::string_view name = trim(item.substr(0, eq));
    std::string value(trim(item.substr(eq + 1)));
    auto type = knob_type_from_string(name);
    if (!type) return Status(ErrorCode::INVALID_VALUE, "unknown knob '" + std::string(name) + "'");
    std::size_t used = 0;
    std::int64_t v = 0;
    try {
      v = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (value.empty() || used != value.size())
      return Status(ErrorCode::INVALID_VALUE, "knob " + std::string(name) + ": value '" + value + "' is not an integer");
    if (!out.emplace(*type, v).second)
      return Status(ErrorCode::INVALID_VALUE, "knob " + std::string(name) + " is given twice");
  }
  return out;
}

std::string_view to_string(HeurMode m) noexcept {
  switch (m) {
    case HeurMode::A: return "A";
    case HeurMode::B: return "B";
    case HeurMode::FALLBACK: return "FALLBACK";
    case HeurMode::OPENSOURCE: return "OPENSOURCE";
  }
  return "?";
}

std::optional<HeurMode> heur_mode_from_string(std::string_view s) noexcept {
  std::string u(s);
  for (auto& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (HeurMode m : {HeurMode::A, HeurMode::B, HeurMode::FALLBACK, HeurMode::OPENSOURCE})
    if (to_string(m) == u) return m;
  return std::nullopt;
}

}  // namespace opgraph
