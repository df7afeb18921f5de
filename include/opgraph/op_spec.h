// opgraph/op_spec.h — one declarative record per op.
//
// Builders, validation, serialization, the reference engine and lowering all read
// the same OpSpec. Adding an op is one record in src/ir/ops/<group>.cpp, its
// builder, the regenerated opgraph/ops.h (typed ports and attributes), its
// reference kernel and lowering registrations, and its tests (docs/op_records.md);
// nothing else switches over op kinds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "opgraph/attributes.h"
#include "opgraph/status.h"

namespace opgraph {

class Node;
class InferContext;

// The seed's three mechanisms, plus the ops no cuDNN lowering exists for.
enum class OpMechanism : std::uint8_t {
  POINTWISE,    // the pointwise table (one op, 50 modes)
  STRUCTURED,   // the structured-op table (matmul, norms, conv, ...)
  CAPTURED,     // the captured SDPA family (explicit per-op schema)
  ENGINE_ONLY,  // gdn, kda, gdn2, gdp and their summaries: no cuDNN lowering
};
std::string_view to_string(OpMechanism m) noexcept;

struct PortSpec {
  std::string_view name;       // cudnn-frontend's port name, e.g. "A", "X", "SCALE", "Q"
  bool optional = false;       // may be left unbound
  bool list = false;           // binds any number of tensors (concatenate, peer stats)
};

struct OutputSpec {
  std::string_view name;
  // Conditional outputs: produced only when this returns true for the node's
  // attributes and bound inputs (nullptr = always). The builder returns nullptr
  // for an output that is not produced.
  bool (*present)(const Node& node) = nullptr;
};

struct AttrSpec {
  std::string_view name;
  AttrType type;
  std::optional<AttrValue> default_value;    // nullopt: no default
  bool required = false;                     // must be set by the user
  std::vector<std::string_view> enum_values; // the domain of an ENUM attribute
};

struct OpSpec {
  std::string_view name;                     // "matmul", "pointwise", "sdpa", "gdn", ...
  OpMechanism mechanism = OpMechanism::STRUCTURED;
  std::vector<PortSpec> inputs;
  std::vector<OutputSpec> outputs;
  std::vector<AttrSpec> attrs;
  bool backend_lowerable = true;             // false for ENGINE_ONLY ops
  // Shape/dtype inference and the op's semantic rules. Called by validate() after
  // the generic checks (ports bound, attribute names/types/domains) passed.
  Status (*infer)(InferContext& ctx) = nullptr;
  std::string_view summary;                  // one line for docs and `opgraph info`

  const PortSpec* find_input(std::string_view port) const;
  int input_index(std::string_view port) const;   // -1 if absent
  int output_index(std::string_view port) const;  // -1 if absent
  const AttrSpec* find_attr(std::string_view attr) const;
};

// The registry: every op of the IR, in a fixed order. Defined in src/ir/ops/registry.cpp.
std::span<const OpSpec* const> all_op_specs();
const OpSpec* find_op_spec(std::string_view name);
// The record's position in all_op_specs() (ops::<Op>::kIndex of opgraph/ops.h);
// tables keyed per op record (reference kernels, lowerings) are indexed by it.
std::size_t op_index(const OpSpec& spec);

}  // namespace opgraph
