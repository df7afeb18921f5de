// plan/plan_notes.cpp — note names, the backend mapping, and the note set.
#include "opgraph/plan_notes.h"

#include <algorithm>

namespace opgraph {
namespace {

constexpr std::string_view kNumerical[kNumericalNoteCount] = {
    "TENSOR_CORE",     "DOWN_CONVERT_INPUTS", "REDUCED_PRECISION_REDUCTION", "FFT",
    "NONDETERMINISTIC", "WINOGRAD",           "WINOGRAD_TILE_4x4",           "WINOGRAD_TILE_6x6",
    "WINOGRAD_TILE_13x13", "STRICT_NAN_PROP"};
constexpr std::string_view kBehavior[kBehaviorNoteCount] = {
    "RUNTIME_COMPILATION", "REQUIRES_FILTER_INT8x32_REORDER", "REQUIRES_BIAS_INT8x32_REORDER",
    "SUPPORTS_CUDA_GRAPH_NATIVE_API", "CUBLASLT_DEPENDENCY"};

template <class E>
void insert_sorted(std::vector<E>& v, E n) {
  auto it = std::lower_bound(v.begin(), v.end(), n);
  if (it == v.end() || *it != n) v.insert(it, n);
}

}  // namespace

bool PlanNotes::has(NumericalNote n) const noexcept { return std::binary_search(numerical.begin(), numerical.end(), n); }
bool PlanNotes::has(BehaviorNote n) const noexcept { return std::binary_search(behavior.begin(), behavior.end(), n); }
void PlanNotes::add(NumericalNote n) { insert_sorted(numerical, n); }
void PlanNotes::add(BehaviorNote n) { insert_sorted(behavior, n); }
void PlanNotes::merge(const PlanNotes& o) {
  for (auto n : o.numerical) add(n);
  for (auto n : o.behavior) add(n);
}

std::string_view to_string(NumericalNote n) noexcept {
  auto i = static_cast<int>(n);
  return i < kNumericalNoteCount ? kNumerical[i] : std::string_view("UNKNOWN_NUMERICAL_NOTE");
}
std::string_view to_string(BehaviorNote n) noexcept {
  auto i = static_cast<int>(n);
  return i < kBehaviorNoteCount ? kBehavior[i] : std::string_view("UNKNOWN_BEHAVIOR_NOTE");
}

std::optional<NumericalNote> numerical_note_from_string(std::string_view s) noexcept {
  for (int i = 0; i < kNumericalNoteCount; ++i)
    if (kNumerical[i] == s) return static_cast<NumericalNote>(i);
  return std::nullopt;
}
std::optional<BehaviorNote> behavior_note_from_string(std::string_view s) noexcept {
  for (int i = 0; i < kBehaviorNoteCount; ++i)
    if (kBehavior[i] == s) return static_cast<BehaviorNote>(i);
  return std::nullopt;
}

std::optional<NumericalNote> numerical_note_from_backend(std::int64_t v) noexcept {
  if (v < 0 || v >= kNumericalNoteCount) return std::nullopt;
  return static_cast<NumericalNote>(v);
}
std::optional<BehaviorNote> behavior_note_from_backend(std::int64_t v) noexcept {
  if (v < 0 || v >= kBehaviorNoteCount) return std::nullopt;
  return static_cast<BehaviorNote>(v);
}

std::string notes_to_string(const PlanNotes& n) {
  std::string s;
  for (auto x : n.numerical) s += (s.empty() ? "" : ",") + std::string(to_string(x));
  for (auto x : n.behavior) s += (s.empty() ? "" : ",") + std::string(to_string(x));
  return s;
}

}  // namespace opgraph
