// exec/operand_table.cpp — the fast-path loop and its checker over one table.
#include "exec/operand_table.h"

#include <algorithm>
#include <cstring>

namespace opgraph {
namespace {

const char* memory_name(MemoryKind m) { return m == MemoryKind::HOST ? "host" : "device"; }

std::int64_t pow2_at_least(std::int64_t bytes) {
  std::int64_t a = 1;
  while (a < bytes && a < (std::int64_t{1} << 40)) a <<= 1;
  return a;
}

// A stride of an axis of extent 1 (or 0) addresses nothing: only the axes of
// extent > 1 must carry the declared strides (torch reports arbitrary strides for
// size-1 axes).
bool same_strides(const OperandRow& r, const OperandBuffer& b) noexcept {
  if (b.rank != r.rank) return false;
  for (int i = 0; i < r.rank; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (r.dims[k] > 1 && b.strides[k] != r.strides[k]) return false;
  }
  return true;
}

}  // namespace

OperandTable::OperandTable(const DeclaredLayout& layout, const OperandNeeds& needs, std::string engine)
    : OperandTable(layout, needs, std::move(engine), {}) {
  rows_.reserve(layout.size());
  for (std::size_t i = 0; i < layout.size(); ++i) add_row(layout, needs, static_cast<std::int64_t>(i));
}

OperandTable::OperandTable(const DeclaredLayout& layout, const OperandNeeds& needs, std::string engine,
                           std::span<const std::int64_t> positions)
    : layout_(&layout), engine_(std::move(engine)) {
  rows_.reserve(positions.size());
  for (std::int64_t p : positions) add_row(layout, needs, p);
}

void OperandTable::add_row(const DeclaredLayout& layout, const OperandNeeds& needs, std::int64_t position) {
  const DeclaredSlot& s = layout.slot(static_cast<std::size_t>(position));
  OperandRow r;
  r.position = static_cast<std::int32_t>(position);
  r.rank = s.rank;
  r.dims = s.dims;
  r.strides = s.strides;
  r.dtype = s.dtype;
  std::int64_t align = std::max<std::int64_t>(needs.align_bytes, std::max(1, s.slot_bits / 8));
  if (needs.declared_alignment && s.tensor) align = std::max(align, s.tensor->get_alignment());
  r.align_mask = static_cast<std::uint64_t>(pow2_at_least(align) - 1);
  r.is_output = s.is_output;
  r.check_extents = needs.declared_extents;
  r.check_strides = needs.declared_strides;
  r.check_dtype = needs.declared_dtype;
  r.memory = needs.memory;
  rows_.push_back(r);
}

void OperandTable::require_alignment(std::size_t row, std::int64_t bytes) {
  OperandRow& r = rows_.at(row);
  r.align_mask = std::max<std::uint64_t>(r.align_mask, static_cast<std::uint64_t>(pow2_at_least(bytes) - 1));
}

bool OperandTable::accepts_rows(const VariantPack& pack, bool overridden_geometry) const noexcept {
  if (pack.layout() != layout_) return false;
  const OperandBuffer* ops = pack.operands().data();
  for (const OperandRow& r : rows_) {
    const OperandBuffer& b = ops[r.position];
    if (!b.bound || b.data == nullptr) return false;
    if (reinterpret_cast<std::uintptr_t>(b.data) & r.align_mask) return false;
    // A slot the declaration described (a bare address, or a dense buffer re-described by normalisation; an
    // override clears the mark) holds the declared rank, extents, strides and dtype, which this row copied from
    // the same layout: nothing to compare.
    if (!b.graph_described) {
      const auto n = static_cast<std::size_t>(r.rank) * sizeof(std::int64_t);
      const bool geometry = !(overridden_geometry && b.overridden);
      if (geometry && r.check_extents && (b.rank != r.rank || std::memcmp(b.dims.data(), r.dims.data(), n) != 0))
        return false;
      if (geometry && r.check_strides && !same_strides(r, b)) return false;
      if (r.check_dtype && b.dtype != r.dtype) return false;
    }
    if (r.memory != MemoryKind::UNKNOWN && b.memory != MemoryKind::UNKNOWN && b.memory != r.memory) return false;
    if (r.is_output && b.read_only) return false;
  }
  return true;
}

Status OperandTable::explain_rows(const VariantPack& pack, bool overridden_geometry) const {
  if (pack.layout() != layout_)
    return {ErrorCode::INTERNAL_ERROR, "engine " + engine_ + ": the pack was normalised against another graph's layout"};
  for (const OperandRow& r : rows_) {
    const OperandBuffer& b = pack.operand(static_cast<std::size_t>(r.position));
    const DeclaredSlot& s = layout_->slot(static_cast<std::size_t>(r.position));
    auto no = [&](const std::string& rule) {
      return Status(ErrorCode::INVALID_VARIANT_PACK, "engine " + engine_ + ": operand '" + s.tensor->get_name() +
                                                         "' (uid " + std::to_string(s.uid) + "): " + rule);
    };
    if (!b.bound || b.data == nullptr) return no(b.bound ? "bound to a null address" : "no buffer bound");
    if (reinterpret_cast<std::uintptr_t>(b.data) & r.align_mask)
      return no("address is not aligned to " + std::to_string(r.align_mask + 1) + " bytes");
    const bool geometry = !(overridden_geometry && b.overridden);
    const bool other_extents =
        b.rank != r.rank || !std::equal(r.dims.begin(), r.dims.begin() + r.rank, b.dims.begin());
    if (geometry && b.overridden && ((r.check_extents && other_extents) || (r.check_strides && !same_strides(r, b))))
      return Status(ErrorCode::GRAPH_NOT_SUPPORTED,
                    "engine " + engine_ + ": " + operand_label(s) + ": execute-time shape override " +
                        int_list(b.dims.data(), b.rank) +
                        " (slots) refused: " +
                        (no_overrides_.empty() ? "engine " + engine_ + " runs the declared extents and strides only"
                                               : no_overrides_) +
                        "; nothing was launched");
    if (geometry && r.check_extents && other_extents)
      return no("buffer extents " + int_list(b.dims.data(), b.rank) + " (slots) are not the declared " +
                int_list(r.dims.data(), r.rank) + " and it is not a dense buffer covering the declared " +
                std::to_string(s.bytes) + " bytes; this engine runs the declared extents (it would read past the buffer)");
    if (geometry && r.check_strides && !same_strides(r, b))
      return no("buffer strides " + int_list(b.strides.data(), b.rank) + " are not the declared " +
                int_list(r.strides.data(), r.rank) + " (slots, axes of extent > 1); this engine reads and writes by the declaration");
    if (r.check_dtype && b.dtype != r.dtype)
      return no("buffer holds " + std::string(to_string(b.dtype)) + " (" + std::to_string(slot_bits(b.dtype)) +
                "-bit slots), the declaration is " + std::string(to_string(r.dtype)) + " (" +
                std::to_string(s.slot_bits) + "-bit slots); only equal slot widths read as the declared type");
    if (r.memory != MemoryKind::UNKNOWN && b.memory != MemoryKind::UNKNOWN && b.memory != r.memory)
      return no(std::string(memory_name(b.memory)) + " memory, this engine executes on " + memory_name(r.memory) +
                " buffers");
    if (r.is_output && b.read_only) return no("an output bound to a read-only buffer");
  }
  return {ErrorCode::INTERNAL_ERROR,
          "engine " + engine_ + ": the fast path refused a call its checker finds legal (a bug: the two disagree)"};
}

}  // namespace opgraph
