// opgraph/knobs.h — the ONE knob vocabulary, heuristic modes and build policies.
//
// Every plan in the ranked list — a cuDNN backend plan or one of ours — is
// identified by (engine_id, knobs), with knobs keyed by KnobType. The integer
// values are a persisted contract (autotune records replay them), so both bands
// are APPEND-ONLY: never insert, renumber or reuse a value.
//
//  * Backend band 0..32: cudnn-frontend's KnobType_t values, in its order. They
//    map to cuDNN's cudnnBackendKnobType_t through to_backend() (the numbers
//    differ; the mapping is a table in src/plan/knobs.cpp).
//  * Frontend band from 1000: tuning axes the backend has no word for. They never
//    reach the backend: to_backend() refuses them. Reuse a backend type when the
//    meaning matches (TILE_M, TILE_CGA_M, SPLIT_K_SLC, SWAP_AB); mint a frontend one
//    only for an axis the backend cannot name.
//
// Knobs are performance-only: a plan computes the same function under any knob
// value. Anything that changes numerics is an op attribute, never a knob.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "opgraph/status.h"

namespace opgraph {

enum class KnobType : std::int64_t {
  NOT_SET = 0,
  // --- backend band (cudnn-frontend KnobType_t) ---
  SWIZZLE = 1,
  TILE_SIZE = 2,
  EDGE = 3,
  MULTIPLY = 4,
  SPLIT_K_BUF = 5,
  TILEK = 6,
  STAGES = 7,
  REDUCTION_MODE = 8,
  SPLIT_K_SLC = 9,
  IDX_MODE = 10,
  SPECFILT = 11,
  KERNEL_CFG = 12,
  WORKSPACE = 13,
  TILE_CGA_M = 14,
  TILE_CGA_N = 15,
  BLOCK_SIZE = 16,
  OCCUPANCY = 17,
  ARRAY_SIZE_PER_THREAD = 18,
  SPLIT_COLS = 19,
  TILE_ROWS = 20,
  TILE_COLS = 21,
  LOAD_SIZE = 22,
  CTA_COUNT = 23,
  STREAM_K = 24,
  SPLIT_P_SLC = 25,
  TILE_M = 26,
  TILE_N = 27,
  WARP_SPEC_CFG = 28,
  SWAP_AB = 29,
  INPUT_TMA_ENABLE = 30,
  OUTPUT_TMA_ENABLE = 31,
  TILE_CGA = 32,
  // --- frontend band (ours; never reaches the backend) ---
  SCHED_POLICY = 1000,   // tile-scheduler policy (an engine-declared enumeration)
  PACK_GQA = 1001,       // pack a GQA group's query heads into one tile (0/1)
  SPLIT_KV = 1002,       // KV chunks each Q tile is split across (1 = off)
  PIPELINE_ARCH = 1003,  // which pipeline template (engine-declared enumeration)
  MMA_TILE_M = 1004,     // MMA instruction tile extents (elements)
  MMA_TILE_N = 1005,
  MMA_TILE_K = 1006,
  CTA_GROUP = 1007,      // CTAs cooperating on one MMA (1 or 2)
  WARPS_M = 1008,        // warp grid of a CTA
  WARPS_N = 1009,
  RASTER_ORDER = 1010,   // tile rasterisation: 0 along M, 1 along N
  CLUSTER_M = 1011,      // thread-block cluster extents
  CLUSTER_N = 1012,
  CHAIN_SPLIT = 1013,    // a sequential scan split into spans of this many chunks (0 = off)
};

inline constexpr std::int64_t kFrontendKnobBase = 1000;

inline constexpr bool is_frontend_knob(KnobType k) noexcept {
  return static_cast<std::int64_t>(k) >= kFrontendKnobBase;
}

// "TILE_M", "SPLIT_KV", ... ("UNKNOWN_<n>" for a value this build does not name).
std::string to_string(KnobType k);
std::optional<KnobType> knob_type_from_string(std::string_view s) noexcept;  // exact upper-case name
// Every named knob type, backend band first (for listing and round-trip tests).
const std::map<std::string, KnobType, std::less<>>& all_knob_types();

// The cudnnBackendKnobType_t value of a backend-band knob (cuDNN 9 numbering).
// A frontend-band knob is refused with INVALID_VALUE naming it; NOT_SET and a
// knob the backend has no counterpart for are refused the same way.
Result<std::int64_t> to_backend(KnobType k);
// The knob for a cudnnBackendKnobType_t value; nullopt when none maps to it.
std::optional<KnobType> knob_type_from_backend(std::int64_t backend_value) noexcept;

// A plan's knob settings. Ordered by enum value; printing sorts by name.
using Knobs = std::map<KnobType, std::int64_t>;

// "SPLIT_KV=2, TILE_M=128" — sorted by knob name ("" when empty).
std::string knobs_to_string(const Knobs& knobs);
// Parses "TILE_M=128,SPLIT_KV=2" (spaces allowed). INVALID_VALUE names the bad item.
Result<Knobs> knobs_from_string(std::string_view text);

// Heuristic modes, with the seed's meanings:
//  A         the recommended configs (ours by the family's measured rules, the
//            backend's mode-A block where the family's BACKEND marker sits)
//  B         the backend's mode-B heuristic; ours as in A
//  FALLBACK  the configs expected to build everywhere (+ the backend's FALLBACK block)
//  OPENSOURCE mode A without the backend's recommendation: our engines, then only
//            the backend's delegating entry
enum class HeurMode : std::uint8_t { A = 0, B, FALLBACK, OPENSOURCE };
std::string_view to_string(HeurMode m) noexcept;
std::optional<HeurMode> heur_mode_from_string(std::string_view s) noexcept;  // "A", "fallback", ...

enum class BuildPlanPolicy : std::uint8_t { HEURISTICS_CHOICE = 0, ALL };

}  // namespace opgraph
