// runtime/plan_choice.h — the plan-choice file: which plan autotuning found
// fastest for a graph on a device, kept across processes.
//
// Layout: <root>/v<kPlanChoiceSchema>/<fingerprint hash>/ holds environment.json
// (the fingerprint's facts, for people) and one record per graph,
// <graph key as 16 hex>.json:
//   {"schema":1, "environment":"<hash>", "graph_key":"<16 hex>",
//    "engine_id":N, "knobs":"TILE_M=128, ...", "name":"engine[...]",
//    "median_ms":x, "rounds":n}
// The knobs travel as the text knobs_to_string writes (the API layer reads
// and writes it; this layer does not interpret it).
//
// The fingerprint (plan_choice_environment) is the compiled-kernel cache's
// environment (cache_environment.h) without the NVRTC and driver versions:
// opgraph's version, the digest of the embedded kernel sources, the device's
// name, compute capability, SM count and L2 size. Those two are left out
// because reading them loads libnvrtc / libcuda, and planning a graph must not
// map either (tests/runtime's probe checks it). A driver or NVRTC upgrade
// therefore keeps a choice; run autotune again after one.
//
// The rules are the compiled cache's (compiled_cache.h, cache_files.h):
// - atomic commit: a record is written to a temp file beside it, then
//   rename(2); a reader sees the old record or the whole new one.
// - anything doubtful is a miss, never an error: a missing, malformed or
//   truncated record, another schema, another fingerprint hash inside the
//   record (a file copied from another device's folder), another graph key (a
//   file renamed or copied from another graph), a record or folder that is not
//   private. lookup() says why in `why` and logs it at level 1.
// - trust: the root, v<schema>/ and the fingerprint folder (those that exist)
//   and the record must belong to this user (or root) and be writable by no
//   one else (cache_files::check_private), else nothing is read or written
//   there. Folders made here are 0755 whatever the umask.
// - records are a few hundred bytes: nothing is pruned. `rm -r` the root (or
//   one fingerprint folder) forgets the choices.
// - location: OPGRAPH_PLAN_CHOICES, else $XDG_CACHE_HOME/opgraph/plan_choices,
//   else $HOME/.cache/opgraph/plan_choices. OPGRAPH_DISABLE_PLAN_CHOICES=1
//   turns it off: nothing is read (planning keeps the heuristics' order) and
//   autotune records nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "opgraph/device_properties.h"
#include "opgraph/status.h"
#include "runtime/cache_environment.h"

namespace opgraph::runtime {

inline constexpr int kPlanChoiceSchema = 1;

struct PlanChoiceOptions {
  std::filesystem::path root;  // empty: no location (nothing read or written)
  bool disabled = false;

  // From the environment variables in the file comment (read at each call).
  static PlanChoiceOptions from_env();
  bool enabled() const noexcept { return !disabled && !root.empty(); }
};

// The device fingerprint of a planning target (nullopt: the host), as above.
CacheEnvironment plan_choice_environment(const std::optional<DeviceProperties>& device);

struct PlanChoice {
  std::int64_t engine_id = -1;
  std::string knobs;  // knobs_to_string's text
  std::string name;   // the plan's name, for people
  double median_ms = 0;
  std::int64_t rounds = 0;
};

class PlanChoiceStore {
 public:
  PlanChoiceStore(PlanChoiceOptions options, const CacheEnvironment& environment);

  bool enabled() const noexcept { return options_.enabled(); }
  const PlanChoiceOptions& options() const noexcept { return options_; }
  // <root>/v<schema>/<fingerprint hash>
  std::filesystem::path environment_dir() const;
  // <environment_dir>/<16 hex of graph_key>.json
  std::filesystem::path record_path(std::uint64_t graph_key) const;
  // Whether the fingerprint folder exists (a cheap test before computing a graph key).
  bool has_environment_dir() const;

  // The recorded choice for `graph_key`, or nullopt: absent (why empty) or
  // doubtful (why says which rule refused it). Never an error.
  std::optional<PlanChoice> lookup(std::uint64_t graph_key, std::string* why = nullptr) const;
  // Records `choice` (replacing any earlier one): creates the folders (0755),
  // checks they are private, writes environment.json when absent, then the
  // record atomically. INVALID_VALUE when the store is off or has no location;
  // IO_ERROR naming the folder or file and the rule otherwise.
  Status record(std::uint64_t graph_key, const PlanChoice& choice) const;

 private:
  PlanChoiceOptions options_;
  CacheEnvironment env_;
  std::string env_hash_;
};

// 16 lower-case hex digits of a graph key (the record's file stem).
std::string graph_key_hex(std::uint64_t graph_key);

}  // namespace opgraph::runtime
