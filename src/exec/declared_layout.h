// exec/declared_layout.h — the per-graph side of the variant pack: the operand
// order and each operand's declared STORAGE geometry, computed once per graph.
//
// Operand order has one source: every non-virtual, non-pass-by-value tensor of
// the graph (node ports and ragged offsets), ascending uid. Geometry is in storage
// slots: fp4 packs two elements per slot along the unit-stride axis (that extent
// halves, every other stride halves); a declaration with no slot spelling (an
// odd unit-stride extent, no unit-stride axis) is recorded in `unspellable` and
// refused when an execute binds it, naming the operand.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "opgraph/layout.h"
#include "opgraph/op_graph.h"
#include "opgraph/variant_pack.h"

namespace opgraph {

// The checked layout arithmetic (slot_bits, to_storage_geometry, span_elements,
// slot_bytes, ...) is public: opgraph/layout.h.

struct DeclaredSlot {
  std::int64_t uid = -1;
  const Tensor* tensor = nullptr;
  DataType dtype = DataType::NOT_SET;
  int rank = 0;
  std::array<std::int64_t, kMaxRank> dims{};     // storage slots
  std::array<std::int64_t, kMaxRank> strides{};  // storage slots
  int slot_bits = 0;
  std::int64_t bytes = 0;   // bytes the declaration spans
  bool is_output = false;   // produced by a node
  std::string unspellable;  // non-empty: why the declaration has no slot spelling
  // Where the graph uses it, for errors: "input 'A' of node 'mm'" (its first use,
  // in node order; "output 'C' of node 'mm'" for a produced tensor; a ragged
  // offset: "ragged offset of tensor 'q'").
  std::string port;
};

// How an error spells extents or strides: "[1, 64, 128]" (the first n of v).
inline std::string int_list(const std::int64_t* v, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// How an error names a slot with its port: "operand 'B' (uid 2, input 'B' of node 'mm')".
inline std::string operand_label(const DeclaredSlot& s) {
  return "operand '" + (s.tensor ? s.tensor->get_name() : std::string("?")) + "' (uid " + std::to_string(s.uid) +
         ", " + s.port + ")";
}

// Identity: each layout object carries a GENERATION, a process-unique id (never 0)
// drawn when it is constructed, computed or copied. A pack normalised against it
// records the generation, and execute recognises a prepared pack by it (one integer
// compare), never by the layout's address: a graph destroyed and a later graph's
// layout landing at the same address, or a layout assigned over, are different
// generations, so a stale prepared pack is refused instead of running its slots as
// the new graph's operands. A move hands the generation over (the moved-from object
// draws a fresh one), so two live layouts never share one.
class DeclaredLayout {
 public:
  DeclaredLayout() = default;
  DeclaredLayout(const DeclaredLayout& o) : slots_(o.slots_) {}
  DeclaredLayout(DeclaredLayout&& o) noexcept : slots_(std::move(o.slots_)), generation_(o.generation_) {
    o.generation_ = next_generation();
  }
  DeclaredLayout& operator=(const DeclaredLayout& o) {
    if (this != &o) {
      slots_ = o.slots_;
      generation_ = next_generation();
    }
    return *this;
  }
  DeclaredLayout& operator=(DeclaredLayout&& o) noexcept {
    if (this != &o) {
      slots_ = std::move(o.slots_);
      generation_ = o.generation_;
      o.generation_ = next_generation();
    }
    return *this;
  }
  ~DeclaredLayout() = default;

  // Computed from a graph whose uids are assigned (validated). INVALID_VALUE
  // names a tensor with more than kMaxRank dims.
  static Result<DeclaredLayout> compute(const OpGraph& g);

  std::span<const DeclaredSlot> slots() const noexcept { return slots_; }
  const DeclaredSlot& slot(std::size_t position) const { return slots_[position]; }
  std::size_t size() const noexcept { return slots_.size(); }
  // Position of `uid` (binary search over ascending uids), or -1.
  std::int64_t index_of(std::int64_t uid) const noexcept;
  // The same, trying position `hint` first (normalisation passes the slot after the previous entry's: callers
  // bind in the declaration's order more often than not, and a hit skips the search's branches).
  std::int64_t index_of(std::int64_t uid, std::int64_t hint) const noexcept {
    if (hint >= 0 && static_cast<std::size_t>(hint) < slots_.size() && slots_[static_cast<std::size_t>(hint)].uid == uid)
      return hint;
    return index_of(uid);
  }

  // This layout's generation (see above); never 0.
  std::uint64_t generation() const noexcept { return generation_; }
  // Whether `pack` was normalised against this layout (this generation): the
  // one check execute makes before handing a prepared pack on unchecked.
  bool prepared(const VariantPack& pack) const noexcept { return pack.layout_generation() == generation_; }

 private:
  static std::uint64_t next_generation() noexcept {
    static std::atomic<std::uint64_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed) + 1;
  }

  std::vector<DeclaredSlot> slots_;
  std::uint64_t generation_ = next_generation();
};

}  // namespace opgraph
