// opgraph/plan_notes.h — what a plan says about its numerics and its behaviour.
//
// Every plan in graph.plans carries PlanNotes: the cuDNN backend reads them off
// each engine config's engine (CUDNN_ATTR_ENGINE_NUMERICAL_NOTE / _BEHAVIOR_NOTE);
// our engines declare theirs in Capabilities::notes. The Graph filters
// select_/deselect_numeric_notes and select_/deselect_behavior_notes read them.
// Notes are provenance, not identity: two plans with the same (engine_id, knobs)
// are the same plan whatever their notes.
//
// The integer values equal cuDNN 9's cudnnBackendNumericalNote_t /
// cudnnBackendBehaviorNote_t (cudnn_graph.h, checked against 9.19), so the
// backend mapping is a range check. APPEND-ONLY: never renumber.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opgraph {

enum class NumericalNote : std::uint8_t {
  TENSOR_CORE = 0,                  // uses tensor cores
  DOWN_CONVERT_INPUTS = 1,          // converts inputs to a narrower type before computing
  REDUCED_PRECISION_REDUCTION = 2,  // accumulates in a type narrower than the compute type
  FFT = 3,
  NONDETERMINISTIC = 4,             // results may differ run to run (e.g. atomics)
  WINOGRAD = 5,
  WINOGRAD_TILE_4x4 = 6,
  WINOGRAD_TILE_6x6 = 7,
  WINOGRAD_TILE_13x13 = 8,
  STRICT_NAN_PROP = 9,              // NaN inputs always propagate to the outputs they reach
};

enum class BehaviorNote : std::uint8_t {
  RUNTIME_COMPILATION = 0,              // building compiles a kernel (NVRTC / cuDNN runtime fusion)
  REQUIRES_FILTER_INT8x32_REORDER = 1,
  REQUIRES_BIAS_INT8x32_REORDER = 2,
  SUPPORTS_CUDA_GRAPH_NATIVE_API = 3,
  CUBLASLT_DEPENDENCY = 4,
};

inline constexpr int kNumericalNoteCount = 10;
inline constexpr int kBehaviorNoteCount = 5;

// Each list holds every note at most once, ascending (add() keeps it so).
struct PlanNotes {
  std::vector<NumericalNote> numerical;
  std::vector<BehaviorNote> behavior;

  bool has(NumericalNote n) const noexcept;
  bool has(BehaviorNote n) const noexcept;
  void add(NumericalNote n);
  void add(BehaviorNote n);
  void merge(const PlanNotes& o);  // the union
  bool empty() const noexcept { return numerical.empty() && behavior.empty(); }
  bool operator==(const PlanNotes&) const = default;
};

// "TENSOR_CORE", "RUNTIME_COMPILATION" (cuDNN's names without the prefix).
std::string_view to_string(NumericalNote n) noexcept;
std::string_view to_string(BehaviorNote n) noexcept;
std::optional<NumericalNote> numerical_note_from_string(std::string_view s) noexcept;  // exact name
std::optional<BehaviorNote> behavior_note_from_string(std::string_view s) noexcept;
// The note for a cuDNN enum value; nullopt for a value this build does not name.
std::optional<NumericalNote> numerical_note_from_backend(std::int64_t v) noexcept;
std::optional<BehaviorNote> behavior_note_from_backend(std::int64_t v) noexcept;
// "TENSOR_CORE,RUNTIME_COMPILATION" (numerical first; "" when none).
std::string notes_to_string(const PlanNotes& n);

}  // namespace opgraph
