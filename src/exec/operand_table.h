// exec/operand_table.h — an engine's execute fast path: build-time facts in one
// flat table, one loop per call, and a checker that names what the loop refused.
//
// Split by when facts are decided (seed, "What a per-execute path costs"): the
// operand positions, declared geometry, alignment needs, which slots are outputs
// and what the engine needs of each slot are fixed when the plan is built, so
// build_plan reads them ONCE into rows. Per call, accepts() loops over the rows
// and compares with the normalised pack: no allocation, no lookup, no message.
// It never fails silently: a call it refuses goes to explain(), which reads the
// same rows and returns INVALID_VARIANT_PACK naming the operand and the rule (and
// INTERNAL_ERROR if it cannot name one — the loop and the checker disagree).
// Every engine's execute is this and nothing else: check the normalised pack
// against its table (accepts, else explain), patch the pointers it resolved to
// positions at build, launch. No uid lookup per call.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "exec/declared_layout.h"
#include "opgraph/variant_pack.h"

namespace opgraph {

// What an engine needs of every operand it reads; decided at build.
struct OperandNeeds {
  bool declared_extents = true;   // the slot's extents must be the declaration's
  bool declared_strides = false;  // ... and its strides (an engine that reads the declaration's layout)
  bool declared_dtype = true;     // the slot must read as the declared dtype
  MemoryKind memory = MemoryKind::UNKNOWN;  // HOST / DEVICE: a buffer known to be elsewhere is refused
  std::int64_t align_bytes = 0;   // 0: one slot's width
  // The address must honour the tensor's declared alignment (Tensor::get_alignment()):
  // what an engine that promised the declaration to its kernel (TMA, cuDNN's
  // BYTE_ALIGNMENT) relies on. The row takes the largest of the three.
  bool declared_alignment = false;
};

struct OperandRow {
  std::int32_t position = 0;
  std::int32_t rank = 0;
  std::array<std::int64_t, kMaxRank> dims{};
  std::array<std::int64_t, kMaxRank> strides{};
  DataType dtype = DataType::NOT_SET;
  std::uint64_t align_mask = 0;  // address & mask must be 0
  bool is_output = false;
  bool check_extents = false, check_strides = false, check_dtype = false;
  MemoryKind memory = MemoryKind::UNKNOWN;
};

class OperandTable {
 public:
  OperandTable() = default;
  // One row per operand of `layout` (every operand is required).
  OperandTable(const DeclaredLayout& layout, const OperandNeeds& needs, std::string engine);
  // One row per position in `positions` (the operands the engine reads or
  // writes; each must be a position of `layout`, checked by the caller).
  OperandTable(const DeclaredLayout& layout, const OperandNeeds& needs, std::string engine,
               std::span<const std::int64_t> positions);

  // Raises the alignment row `row` asks for to at least `bytes` (rounded up to
  // a power of two): a need only the engine knows (cuDNN's per-tensor BYTE_ALIGNMENT).
  void require_alignment(std::size_t row, std::int64_t bytes);

  // The fast path: true when every row is satisfied.
  bool accepts(const VariantPack& pack) const noexcept { return accepts_rows(pack, false); }
  // The checker: why `pack` is refused, naming operand and rule. A slot a
  // per-call shape override wrote (OperandBuffer::overridden) whose extents or
  // strides differ from a row that checks them is GRAPH_NOT_SUPPORTED naming the
  // operand, its port and why this engine takes no overrides (decline_overrides).
  Status explain(const VariantPack& pack) const { return explain_rows(pack, false); }
  Status check(const VariantPack& pack) const { return accepts(pack) ? Status::ok() : explain(pack); }

  // For a plan that reads overridden extents itself: every row as above, except
  // that an overridden slot's extents and strides are left to the plan (which
  // validates them against its kernel before launching).
  bool accepts_overridden(const VariantPack& pack) const noexcept { return accepts_rows(pack, true); }
  Status explain_overridden(const VariantPack& pack) const { return explain_rows(pack, true); }

  // Why this engine takes no execute-time shape overrides, in the refusal explain()
  // gives for one (default: "engine <name> runs the declared extents and strides only").
  void decline_overrides(std::string why) { no_overrides_ = std::move(why); }
  const std::string& overrides_declined() const noexcept { return no_overrides_; }
  const std::vector<OperandRow>& rows() const noexcept { return rows_; }
  // The layout the rows index (the graph's; it outlives every plan built on it).
  const DeclaredLayout& layout() const noexcept { return *layout_; }

 private:
  void add_row(const DeclaredLayout& layout, const OperandNeeds& needs, std::int64_t position);
  bool accepts_rows(const VariantPack& pack, bool overridden_geometry) const noexcept;
  Status explain_rows(const VariantPack& pack, bool overridden_geometry) const;

  const DeclaredLayout* layout_ = nullptr;
  std::vector<OperandRow> rows_;
  std::string engine_;
  std::string no_overrides_;  // "" : the default reason
};

}  // namespace opgraph
