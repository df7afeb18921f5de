// opgraph/variant_pack.h — the caller's buffers for one execute.
//
// Two sides of one type (seed, "The variant pack is normalized once"):
//  * FILLING (the caller): bind a buffer per operand, keyed by uid or TensorPtr, in
//    any form callers have — a bare address, an OperandBuffer (pointer, dims,
//    strides in ELEMENTS, dtype), a DLTensor, a DLManagedTensor or a
//    DLManagedTensorVersioned; override_shape() adds a per-call shape override.
//    Binding stores the form; nothing is read yet.
//  * READING (engines): Graph::execute normalises the caller's pack ONCE, at its
//    top, into a new pack whose operands are OperandBuffers in POSITION order (the
//    graph's DeclaredLayout). Nothing below branches on what the caller passed.
//    index_of(uid or tensor) gives a position (resolve once, at build); operand(i)
//    / operands() give the per-call buffers.
// The normalised pack is the executing thread's (reused across its calls, so the
// steady state allocates nothing): concurrent executes of one plan never see each
// other's pointer arrays.
// Buffers are non-owning; the caller keeps them (and DLPack structs) alive for the
// call, and opgraph never calls a managed tensor's deleter.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "opgraph/data_type.h"
#include "opgraph/dlpack.h"
#include "opgraph/status.h"
#include "opgraph/tensor.h"

namespace opgraph {

inline constexpr int kMaxRank = 12;  // dims an operand may have

enum class MemoryKind : std::uint8_t { UNKNOWN = 0, HOST, DEVICE };

// One caller buffer described, non-owning. Units: dims and strides in ELEMENTS of
// `dtype` as the caller gives them; in a NORMALISED pack, in storage SLOTS (fp4:
// two elements per slot along the unit-stride axis; every other type: one).
struct OperandBuffer {
  void* data = nullptr;
  int rank = -1;  // -1: a bare address (nothing described); 0: a 0-d scalar
  std::array<std::int64_t, kMaxRank> dims{};
  std::array<std::int64_t, kMaxRank> strides{};
  DataType dtype = DataType::NOT_SET;  // NOT_SET: the declared dtype
  MemoryKind memory = MemoryKind::UNKNOWN;
  bool read_only = false;
  // Set by normalisation: the slot's description came from the declaration
  // (a bare address, or a dense buffer of other extents covering the declared bytes).
  bool graph_described = false;
  bool overridden = false;  // a per-call shape override was written into the slot
  bool bound = false;       // normalised: the caller bound this operand

  static OperandBuffer address(void* data) {
    OperandBuffer b;
    b.data = data;
    return b;
  }
  // `strides` empty: packed row-major. A rank above kMaxRank is kept as the rank
  // (dims beyond it dropped) and refused at normalisation naming the operand.
  static OperandBuffer make(void* data, std::span<const std::int64_t> dims, std::span<const std::int64_t> strides = {},
                            DataType dtype = DataType::NOT_SET, MemoryKind memory = MemoryKind::UNKNOWN);
  static OperandBuffer make(void* data, std::initializer_list<std::int64_t> dims,
                            std::initializer_list<std::int64_t> strides = {}, DataType dtype = DataType::NOT_SET,
                            MemoryKind memory = MemoryKind::UNKNOWN) {
    return make(data, std::span<const std::int64_t>(dims.begin(), dims.size()),
                std::span<const std::int64_t>(strides.begin(), strides.size()), dtype, memory);
  }
  bool described() const noexcept { return rank >= 0; }
  std::span<const std::int64_t> dim() const noexcept { return {dims.data(), static_cast<std::size_t>(rank < 0 ? 0 : rank)}; }
  std::span<const std::int64_t> stride() const noexcept {
    return {strides.data(), static_cast<std::size_t>(rank < 0 ? 0 : rank)};
  }
};

// The opgraph type of a DLPack dtype (one lane; DLPack 1.1's fp8 / fp4 codes
// included), or nullopt when opgraph has none (complex, uint32, vector lanes, ...).
// The one DLPack type table: normalisation and the Python binding both read it.
std::optional<DataType> data_type_of(DLDataType t) noexcept;

class DeclaredLayout;  // src/exec/declared_layout.h: per-graph operand order and geometry

class VariantPack {
 public:
  VariantPack() = default;
  VariantPack(std::initializer_list<std::pair<const std::int64_t, void*>> ptrs) {
    for (const auto& [uid, p] : ptrs) set(uid, p);
  }
  // cudnn-frontend's classic form, and the same keyed by tensor.
  explicit VariantPack(const std::unordered_map<std::int64_t, void*>& ptrs) {
    for (const auto& [uid, p] : ptrs) set(uid, p);
  }
  explicit VariantPack(const std::unordered_map<TensorPtr, void*>& ptrs) {
    for (const auto& [t, p] : ptrs) set(t, p);
  }

  // --- filling: a later binding of the same key replaces the earlier one ---
  VariantPack& set(std::int64_t uid, void* data);
  VariantPack& set(std::int64_t uid, const OperandBuffer& b);
  VariantPack& set(std::int64_t uid, const DLTensor* t);
  VariantPack& set(std::int64_t uid, const DLManagedTensor* t);
  VariantPack& set(std::int64_t uid, const DLManagedTensorVersioned* t);
  template <class B>
  VariantPack& set(const TensorPtr& t, B b) {  // by value: arrays decay to pointers
    const std::int64_t uid = t ? t->get_uid() : -1;
    set(uid, b);
    entry_for(uid).tensor = t.get();
    return *this;
  }
  // Per-call shape (and strides; empty: packed row-major) in ELEMENTS, in the
  // graph's axis order (docs/dynamic_shapes.md). Written into the operand's slot at
  // normalisation, which refuses (INVALID_VARIANT_PACK naming the tensor, its port
  // and the rule) an override that leaves the tensor's layout class: another rank,
  // an extent of 1 made larger or one above 1 made 1 (or 0), strides that do not
  // pack the extents in the declaration's axis order, or any change to a tensor
  // whose declared strides do not pack its extents (padded, broadcast). Whether an
  // engine runs the new extents is the plan's to say: one that does not refuses the
  // call with GRAPH_NOT_SUPPORTED naming the tensor and why; nothing is launched.
  VariantPack& override_shape(std::int64_t uid, std::vector<std::int64_t> dims, std::vector<std::int64_t> strides = {});
  // Whether any binding carries an override (caller side), or any slot was
  // overridden (normalised). The one branch an engine's execute takes for overrides:
  // false, it runs the declaration as before; true, it reads each slot's dims and
  // strides (OperandBuffer::overridden marks the slots an override wrote).
  bool has_overrides() const noexcept { return normalized() ? overridden_ : !overrides_.empty(); }

  // --- reading (a normalised pack; the caller's pack answers "not normalised") ---
  bool normalized() const noexcept { return layout_ != nullptr; }
  const DeclaredLayout* layout() const noexcept { return layout_; }
  // The generation of the layout it was normalised against (0: not normalised).
  // Execute recognises a prepared pack by this id, not by layout()'s address, which
  // a later graph's layout may reuse (exec/declared_layout.h).
  std::uint64_t layout_generation() const noexcept { return layout_generation_; }
  // The operand's position, or -1 when it is not an operand of the graph.
  std::int64_t index_of(std::int64_t uid) const;
  std::int64_t index_of(const Tensor& t) const;
  std::size_t operand_count() const noexcept { return slots_.size(); }
  const OperandBuffer& operand(std::size_t position) const { return slots_[position]; }
  std::span<const OperandBuffer> operands() const noexcept { return slots_; }
  // The bound operand of `uid`, or nullptr (unbound, or not an operand). Also
  // answers on the caller's pack for bare addresses and OperandBuffers.
  const OperandBuffer* find(std::int64_t uid) const;
  // Caller side: the number of bindings.
  std::size_t size() const noexcept { return normalized() ? slots_.size() : entries_.size(); }

  // Normalises `caller` into `out` (cleared first) against `layout`: each binding
  // becomes an OperandBuffer at its position under the rules of docs/architecture.md
  // ("The variant pack"). INVALID_VARIANT_PACK names the operand and the rule for
  // a binding that has no spelling (a uid or tensor not in the graph, a DLPack
  // tensor opgraph cannot read, an odd fp4 unit-stride extent, a bad override).
  static Status normalize(const VariantPack& caller, const DeclaredLayout& layout, VariantPack& out);

 private:
  enum class Form : std::uint8_t { ADDRESS, OPERAND, DLTENSOR, DLMANAGED, DLVERSIONED };
  struct Entry {
    std::int64_t uid = -1;
    const Tensor* tensor = nullptr;  // set when bound by TensorPtr
    Form form = Form::ADDRESS;
    const void* dl = nullptr;        // the DLPack struct for the DL* forms
    OperandBuffer buffer;            // ADDRESS / OPERAND
  };
  struct Override {
    std::int64_t uid;
    std::vector<std::int64_t> dims, strides;
  };
  Entry& entry_for(std::int64_t uid);
  friend struct PackNormalizer;

  std::vector<Entry> entries_;
  std::vector<Override> overrides_;
  const DeclaredLayout* layout_ = nullptr;
  std::uint64_t layout_generation_ = 0;
  std::vector<OperandBuffer> slots_;
  bool overridden_ = false;  // normalised: some slot carries an override
};

}  // namespace opgraph
