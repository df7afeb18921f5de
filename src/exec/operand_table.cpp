// exec/operand_table.cpp — the fast-path loop and its checker over one table.
#include "exec/operand_table.h"

#include <algorithm>
#include <cstring>

namespace opgraph {
namespace {

std::string list(const std::int64_t* v, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

const char* memory_name(MemoryKind m) { return m == MemoryKind::HOST ? "host" : "device"; }

}  // namespace

OperandTable::OperandTable(const DeclaredLayout& layout, const OperandNeeds& needs, std::string engine)
    : layout_(&layout), engine_(std::move(engine)) {
  rows_.reserve(layout.size());
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const DeclaredSlot& s = layout.slot(i);
    OperandRow r;
    r.position = static_cast<std::int32_t>(i);
    r.rank = s.rank;
    r.dims = s.dims;
    r.strides = s.strides;
    r.dtype = s.dtype;
    std::int64_t align = needs.align_bytes > 0 ? needs.align_bytes : std::max(1, s.slot_bits / 8);
    r.align_mask = static_cast<std::uint64_t>(align - 1);
    r.is_output = s.is_output;
    r.check_extents = needs.declared_extents;
    r.check_strides = needs.declared_strides;
    r.check_dtype = needs.declared_dtype;
    r.memory = needs.memory;
    rows_.push_back(r);
  }
}

bool OperandTable::accepts(const VariantPack& pack) const noexcept {
  if (pack.layout() != layout_) return false;
  const OperandBuffer* ops = pack.operands().data();
  for (const OperandRow& r : rows_) {
    const OperandBuffer& b = ops[r.position];
    const auto n = static_cast<std::size_t>(r.rank) * sizeof(std::int64_t);
    if (!b.bound || b.data == nullptr) return false;
    if (reinterpret_cast<std::uintptr_t>(b.data) & r.align_mask) return false;
    if (r.check_extents && (b.rank != r.rank || std::memcmp(b.dims.data(), r.dims.data(), n) != 0)) return false;
    if (r.check_strides && (b.rank != r.rank || std::memcmp(b.strides.data(), r.strides.data(), n) != 0)) return false;
    if (r.check_dtype && b.dtype != r.dtype) return false;
    if (r.memory != MemoryKind::UNKNOWN && b.memory != MemoryKind::UNKNOWN && b.memory != r.memory) return false;
    if (r.is_output && b.read_only) return false;
  }
  return true;
}

Status OperandTable::explain(const VariantPack& pack) const {
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
    if (r.check_extents && (b.rank != r.rank || !std::equal(r.dims.begin(), r.dims.begin() + r.rank, b.dims.begin())))
      return no("buffer extents " + list(b.dims.data(), b.rank) + " (slots) are not the declared " +
                list(r.dims.data(), r.rank) + " and it is not a dense buffer covering the declared " +
                std::to_string(s.bytes) + " bytes; this engine runs the declared extents (it would read past the buffer)");
    if (r.check_strides &&
        (b.rank != r.rank || !std::equal(r.strides.begin(), r.strides.begin() + r.rank, b.strides.begin())))
      return no("buffer strides " + list(b.strides.data(), b.rank) + " are not the declared " +
                list(r.strides.data(), r.rank) + "; this engine reads the declared layout");
    if (r.check_dtype && b.dtype != r.dtype)
      return no("buffer holds " + std::string(to_string(b.dtype)) + " (" + std::to_string(slot_bits(b.dtype)) +
                "-bit slots), the declaration is " + std::string(to_string(r.dtype)) + " (" +
                std::to_string(s.slot_bits) + "-bit slots); only equal slot widths read as the declared type");
    if (r.memory != MemoryKind::UNKNOWN && b.memory != MemoryKind::UNKNOWN && b.memory != r.memory)
      return no(std::string(memory_name(b.memory)) + " memory, this engine executes on " + memory_name(r.memory) +
                " buffers");
    if (r.is_output && b.read_only) return no("an output bound to a read-only DLPack tensor");
  }
  return {ErrorCode::INTERNAL_ERROR,
          "engine " + engine_ + ": the fast path refused a call its checker finds legal (a bug: the two disagree)"};
}

}  // namespace opgraph
