// exec/normalize.cpp — VariantPack::normalize: the caller's bindings → one
// OperandBuffer per position, under the declaration-is-the-contract rules
// (docs/architecture.md, "The variant pack"). This is the only code that looks at
// the form a caller bound; everything after it reads OperandBuffers.
#include <algorithm>
#include <array>

#include "exec/declared_layout.h"
#include "opgraph/variant_pack.h"

namespace opgraph {
namespace {

Status refuse(const DeclaredSlot* s, std::int64_t uid, const std::string& rule) {
  std::string who = s ? "operand '" + s->tensor->get_name() + "' (uid " + std::to_string(s->uid) + ")"
                      : "uid " + std::to_string(uid);
  return {ErrorCode::INVALID_VARIANT_PACK, "variant pack: " + who + ": " + rule};
}

// An override's refusal names the tensor, its port and the rule.
Status refuse_override(const DeclaredSlot& s, const std::string& rule) {
  return {ErrorCode::INVALID_VARIANT_PACK, "variant pack: shape override of " + operand_label(s) + ": " + rule};
}

std::string dims_list(int rank, const std::int64_t* v) { return int_list(v, rank < kMaxRank ? rank : kMaxRank); }

MemoryKind memory_of(DLDevice d) {
  switch (d.device_type) {
    case kDLCPU:
    case kDLCUDAHost: return MemoryKind::HOST;
    case kDLCUDA:
    case kDLCUDAManaged: return MemoryKind::DEVICE;
    default: return MemoryKind::UNKNOWN;
  }
}

// A DLTensor → OperandBuffer in the caller's own elements.
Status from_dltensor(const DLTensor& t, bool read_only, const DeclaredSlot* s, std::int64_t uid, OperandBuffer& b) {
  auto dt = data_type_of(t.dtype);
  if (!dt)
    return refuse(s, uid, "DLPack dtype (code " + std::to_string(t.dtype.code) + ", bits " +
                              std::to_string(t.dtype.bits) + ", lanes " + std::to_string(t.dtype.lanes) +
                              ") has no opgraph data type");
  if (t.ndim < 0 || t.ndim > kMaxRank)
    return refuse(s, uid, "DLPack tensor has " + std::to_string(t.ndim) + " dims; at most " + std::to_string(kMaxRank));
  b = OperandBuffer::make(static_cast<char*>(t.data) + t.byte_offset,
                          std::span<const std::int64_t>(t.shape, static_cast<std::size_t>(t.ndim)),
                          t.strides ? std::span<const std::int64_t>(t.strides, static_cast<std::size_t>(t.ndim))
                                    : std::span<const std::int64_t>(),
                          *dt, memory_of(t.device));
  b.read_only = read_only;
  return Status::ok();
}

// Whether a buffer holding `own` may be read as the declaration's `declared`:
// the same type, or a byte buffer (UINT8: how torch, numpy and FlashInfer carry
// fp8 / fp4 data and e4m3 / e8m0 scale blobs) for a declaration of one-byte
// slots. Anything else (int32 bits as float, fp16 as bf16, complex as float) is
// never reinterpreted: the buffer keeps its own dtype and the engine's table
// refuses it naming both types.
bool reads_as(DataType own, DataType declared) {
  return own == declared || (own == DataType::UINT8 && slot_bits(declared) == 8);
}

}  // namespace

std::optional<DataType> data_type_of(DLDataType t) noexcept {
  if (t.lanes != 1) return std::nullopt;
  switch (t.code) {
    case kDLFloat:
      if (t.bits == 32) return DataType::FLOAT;
      if (t.bits == 64) return DataType::DOUBLE;
      if (t.bits == 16) return DataType::HALF;
      return std::nullopt;
    case kDLBfloat: return t.bits == 16 ? std::optional(DataType::BFLOAT16) : std::nullopt;
    case kDLInt:
      if (t.bits == 8) return DataType::INT8;
      if (t.bits == 32) return DataType::INT32;
      if (t.bits == 64) return DataType::INT64;
      return std::nullopt;
    case kDLUInt: return t.bits == 8 ? std::optional(DataType::UINT8) : std::nullopt;
    case kDLBool: return t.bits == 8 ? std::optional(DataType::BOOLEAN) : std::nullopt;
    case kDLFloat8_e4m3fn: return t.bits == 8 ? std::optional(DataType::FP8_E4M3) : std::nullopt;
    case kDLFloat8_e5m2: return t.bits == 8 ? std::optional(DataType::FP8_E5M2) : std::nullopt;
    case kDLFloat8_e8m0fnu: return t.bits == 8 ? std::optional(DataType::FP8_E8M0) : std::nullopt;
    case kDLFloat4_e2m1fn: return t.bits == 4 ? std::optional(DataType::FP4_E2M1) : std::nullopt;
    default: return std::nullopt;
  }
}

// The axes of extent above 1, outermost first, when `strides` pack `dims` in that
// order (the innermost has stride 1, each outer one the product of the extents
// inside it); false otherwise (a padded row, a stride-0 broadcast, overlapping or
// tied axes). The layout class's "axis order they pack" (docs/autotune.md).
bool packed_order(int rank, const std::int64_t* dims, const std::int64_t* strides, std::array<int, kMaxRank>& order,
                  int& n) {
  n = 0;
  for (int i = 0; i < rank; ++i)
    if (dims[i] > 1) order[static_cast<std::size_t>(n++)] = i;
  std::sort(order.begin(), order.begin() + n, [&](int a, int b) { return strides[a] > strides[b]; });
  std::int64_t want = 1;
  for (int k = n - 1; k >= 0; --k) {
    const int ax = order[static_cast<std::size_t>(k)];
    if (strides[ax] != want) return false;
    if (__builtin_mul_overflow(want, dims[ax], &want)) return false;
  }
  return true;
}

// Why an override (element geometry) leaves the declaration's layout class, or "".
std::string layout_class_change(const DeclaredSlot& s, const std::int64_t* od, const std::int64_t* os) {
  const Tensor& t = *s.tensor;
  const int rank = s.rank;
  std::array<std::int64_t, kMaxRank> dd{}, ds{};
  const auto& tdim = t.get_dim();
  const auto& tstr = t.get_stride();
  std::copy(tdim.begin(), tdim.end(), dd.begin());
  if (tstr.size() == tdim.size()) std::copy(tstr.begin(), tstr.end(), ds.begin());
  else packed_strides(rank, dd.data(), ds.data());
  for (int i = 0; i < rank; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (od[k] < 1)
      return "rule layout_class: axis " + std::to_string(i) + " has extent " + std::to_string(od[k]) +
             "; an override's extents are at least 1";
    if ((dd[k] == 1) != (od[k] == 1))
      return "rule layout_class: axis " + std::to_string(i) + " has extent " + std::to_string(od[k]) +
             " where the declaration has " + std::to_string(dd[k]) +
             "; an extent of 1 and one above 1 are different layout classes (1 decides broadcasting)";
  }
  std::array<int, kMaxRank> dorder{}, oorder{};
  int dn = 0, on = 0;
  if (!packed_order(rank, dd.data(), ds.data(), dorder, dn)) {
    if (std::equal(dd.begin(), dd.begin() + rank, od) && std::equal(ds.begin(), ds.begin() + rank, os)) return "";
    return "rule layout_class: the declared strides " + dims_list(rank, ds.data()) + " do not pack the extents " +
           dims_list(rank, dd.data()) +
           " (padded, broadcast or overlapping), so the layout class pins them; an override may not change them";
  }
  if (!packed_order(rank, od, os, oorder, on) || !std::equal(dorder.begin(), dorder.begin() + dn, oorder.begin()))
    return "rule layout_class: strides " + dims_list(rank, os) + " do not pack the extents " + dims_list(rank, od) +
           " in the declaration's axis order (declared strides " + dims_list(rank, ds.data()) +
           "); an override keeps the dim order and packing of the declaration";
  return "";
}

struct PackNormalizer {
  // One binding → its OperandBuffer in the caller's own description.
  static Status read_form(const VariantPack::Entry& e, const DeclaredSlot* s, OperandBuffer& b) {
    switch (e.form) {
      case VariantPack::Form::ADDRESS:
      case VariantPack::Form::OPERAND: b = e.buffer; return Status::ok();
      case VariantPack::Form::DLTENSOR: return from_dltensor(*static_cast<const DLTensor*>(e.dl), false, s, e.uid, b);
      case VariantPack::Form::DLMANAGED:
        return from_dltensor(static_cast<const DLManagedTensor*>(e.dl)->dl_tensor, false, s, e.uid, b);
      case VariantPack::Form::DLVERSIONED: {
        const auto* m = static_cast<const DLManagedTensorVersioned*>(e.dl);
        if (m->version.major != kDLPackMajorRead)
          return refuse(s, e.uid, "DLManagedTensorVersioned of DLPack major version " +
                                      std::to_string(m->version.major) + "; opgraph reads major version " +
                                      std::to_string(kDLPackMajorRead));
        if (m->flags & kDLFlagSubbytePadded)
          return refuse(s, e.uid, "sub-byte elements padded to a byte each have no slot spelling");
        return from_dltensor(m->dl_tensor, (m->flags & kDLFlagReadOnly) != 0, s, e.uid, b);
      }
    }
    return refuse(s, e.uid, "unknown binding form");
  }

  // The rules: the declaration is the contract; the buffer supplies pointer, bytes, alignment.
  static Status describe(const DeclaredSlot& s, OperandBuffer& b) {
    b.bound = true;
    // Only normalisation says a slot holds the declaration's description or an override (the tables skip
    // comparing such a slot with the declaration): a caller's buffer carrying either flag is not believed.
    b.graph_described = false;
    b.overridden = false;
    if (!s.unspellable.empty()) return refuse(&s, s.uid, s.unspellable);
    auto lend = [&] {
      b.rank = s.rank;
      b.dims = s.dims;
      b.strides = s.strides;
      b.dtype = s.dtype;
      b.graph_described = true;
    };
    if (!b.described()) {  // a bare address lends the declaration
      lend();
      return Status::ok();
    }
    if (b.rank > kMaxRank)
      return refuse(&s, s.uid, "buffer has " + std::to_string(b.rank) + " dims; at most " + std::to_string(kMaxRank));
    if (b.rank < 0 || !span_elements(b.rank, b.dims.data(), b.strides.data()))
      return refuse(&s, s.uid, "buffer extents " + dims_list(b.rank, b.dims.data()) + " and strides " +
                                   dims_list(b.rank, b.strides.data()) +
                                   ": an extent is negative or the span overflows int64");
    const DataType own = b.dtype == DataType::NOT_SET ? s.dtype : b.dtype;
    b.dtype = own;
    if (auto why = to_storage_geometry(own, b.rank, b.dims.data(), b.strides.data()))
      return refuse(&s, s.uid, "buffer: " + *why);
    const int bits = slot_bits(own);
    const bool declared_extents =
        b.rank == s.rank && std::equal(s.dims.begin(), s.dims.begin() + s.rank, b.dims.begin());
    const bool reads_as_declared = reads_as(own, s.dtype);
    if (declared_extents) {  // keeps its own strides; reads as the declared dtype only under reads_as
      if (reads_as_declared) b.dtype = s.dtype;
      return Status::ok();
    }
    if (!reads_as_declared) return Status::ok();  // its own description and dtype: an engine refuses it
    const auto n = element_count(b.rank, b.dims.data());
    const auto bytes = n ? slot_bytes(*n, bits) : std::nullopt;
    if (!bytes)
      return refuse(&s, s.uid, "buffer extents " + dims_list(b.rank, b.dims.data()) +
                                   ": an extent is negative or their product (bytes) overflows int64");
    if (is_dense(b.rank, b.dims.data(), b.strides.data()) && *bytes >= s.bytes) lend();  // re-described
    return Status::ok();  // otherwise (smaller, or strided of other extents): its own description
  }

  static Status override_slot(const DeclaredSlot& s, const VariantPack::Override& o, OperandBuffer& b) {
    if (o.dims.size() != static_cast<std::size_t>(s.rank))
      return refuse_override(s, "rule layout_class: the override has " + std::to_string(o.dims.size()) +
                                    " dims; overrides speak the graph's axis order and the declaration has " +
                                    std::to_string(s.rank));
    if (!o.strides.empty() && o.strides.size() != o.dims.size())
      return refuse_override(s, "override strides have " + std::to_string(o.strides.size()) + " entries for " +
                                    std::to_string(o.dims.size()) + " dims");
    std::copy(o.dims.begin(), o.dims.end(), b.dims.begin());
    bool spelled = true;
    if (o.strides.empty()) spelled = packed_strides(s.rank, b.dims.data(), b.strides.data());
    else std::copy(o.strides.begin(), o.strides.end(), b.strides.begin());
    if (!spelled || !span_elements(s.rank, b.dims.data(), b.strides.data()))
      return refuse_override(s, "override shape " + dims_list(s.rank, b.dims.data()) +
                                    ": an extent is negative or the span overflows int64");
    if (std::string why = layout_class_change(s, b.dims.data(), b.strides.data()); !why.empty())
      return refuse_override(s, "shape " + dims_list(s.rank, b.dims.data()) + ", strides " +
                                    dims_list(s.rank, b.strides.data()) + ": " + why);
    b.rank = s.rank;
    if (auto why = to_storage_geometry(s.dtype, s.rank, b.dims.data(), b.strides.data()))
      return refuse_override(s, "override: " + *why);
    b.dtype = s.dtype;
    b.graph_described = false;
    b.overridden = true;
    return Status::ok();
  }
};

Status VariantPack::normalize(const VariantPack& caller, const DeclaredLayout& layout, VariantPack& out) {
  // A pack normalised into again (execute's per-thread scratch) keeps its slots: each slot this call binds is
  // overwritten whole by read_form, so only the ones it leaves unbound go back to the default (one bit each in
  // `seen`; the first call, another layout's size or more than 64 slots: every slot reset). An unbound slot is
  // default or was bound (`bound`, set first by describe) by an earlier call.
  const std::size_t n = layout.size();
  const bool reuse = out.slots_.size() == n && n <= 64;
  // The earlier call normalised against this very layout (its generation: never another live layout's).
  const bool same_layout = reuse && out.layout_generation_ == layout.generation();
  out.entries_.clear();
  out.overrides_.clear();
  out.layout_ = &layout;
  out.layout_generation_ = 0;  // this layout's only once the call succeeds: a refused call's slots are half written
  if (!reuse) out.slots_.assign(n, OperandBuffer{});
  std::uint64_t seen = 0;
  out.overridden_ = false;
  std::int64_t next = 0;
  for (const Entry& e : caller.entries_) {
    const std::int64_t pos = layout.index_of(e.uid, next);
    next = pos + 1;
    if (pos < 0) {
      std::string who = e.tensor ? "tensor '" + e.tensor->get_name() + "'" : "uid " + std::to_string(e.uid);
      return {ErrorCode::INVALID_VARIANT_PACK,
              "variant pack: " + who + " is not an operand of this graph (virtual, pass-by-value, or another graph's)"};
    }
    const DeclaredSlot& s = layout.slot(static_cast<std::size_t>(pos));
    if (e.tensor && e.tensor != s.tensor)
      return refuse(&s, s.uid, "bound by a tensor of another graph ('" + e.tensor->get_name() + "') with this uid");
    OperandBuffer& b = out.slots_[static_cast<std::size_t>(pos)];
    if (reuse) seen |= std::uint64_t{1} << pos;
    // A bare address into a slot that holds this layout's declaration as lend() wrote it (only lend sets
    // graph_described; read_form overwrites a slot whole, an override clears the flag): read_form and describe
    // would write the same description again, so only what the address brings changes.
    if (same_layout && e.form == Form::ADDRESS && b.bound && b.graph_described && !b.overridden) {
      b.data = e.buffer.data;
      b.memory = e.buffer.memory;
      b.read_only = e.buffer.read_only;
      continue;
    }
    OPGRAPH_CHECK(PackNormalizer::read_form(e, &s, b));
    OPGRAPH_CHECK(PackNormalizer::describe(s, b));
  }
  if (reuse)
    for (std::size_t i = 0; i < n; ++i)
      if (!((seen >> i) & 1u) && out.slots_[i].bound) out.slots_[i] = OperandBuffer{};
  for (const Override& o : caller.overrides_) {
    const std::int64_t pos = layout.index_of(o.uid);
    if (pos < 0 || !out.slots_[static_cast<std::size_t>(pos)].bound)
      return {ErrorCode::INVALID_VARIANT_PACK, "variant pack: override for uid " + std::to_string(o.uid) +
                                                   (pos < 0 ? ", which is not an operand of this graph"
                                                            : ", which has no buffer bound")};
    OPGRAPH_CHECK(PackNormalizer::override_slot(layout.slot(static_cast<std::size_t>(pos)), o,
                                                out.slots_[static_cast<std::size_t>(pos)]));
    out.overridden_ = true;
  }
  out.layout_generation_ = layout.generation();
  return Status::ok();
}

}  // namespace opgraph
