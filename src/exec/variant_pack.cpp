// exec/variant_pack.cpp — binding the caller's buffers, and normalising them ONCE
// into position-ordered OperandBuffers (the only branch on the caller's form).
#include "opgraph/variant_pack.h"

#include <algorithm>

#include "exec/declared_layout.h"

namespace opgraph {

OperandBuffer OperandBuffer::make(void* data, std::span<const std::int64_t> dims, std::span<const std::int64_t> strides,
                                  DataType dtype, MemoryKind memory) {
  OperandBuffer b;
  b.data = data;
  b.rank = static_cast<int>(dims.size());
  b.dtype = dtype;
  b.memory = memory;
  const int n = std::min(b.rank, kMaxRank);
  std::copy_n(dims.begin(), n, b.dims.begin());
  if (strides.size() == dims.size()) std::copy_n(strides.begin(), n, b.strides.begin());
  else packed_strides(n, b.dims.data(), b.strides.data());
  return b;
}

VariantPack::Entry& VariantPack::entry_for(std::int64_t uid) {
  for (auto& e : entries_)
    if (e.uid == uid) return e;
  entries_.emplace_back();
  entries_.back().uid = uid;
  return entries_.back();
}

VariantPack& VariantPack::set(std::int64_t uid, void* data) {
  Entry& e = entry_for(uid);
  e = Entry{uid, nullptr, Form::ADDRESS, nullptr, OperandBuffer::address(data)};
  return *this;
}
VariantPack& VariantPack::set(std::int64_t uid, const OperandBuffer& b) {
  Entry& e = entry_for(uid);
  e = Entry{uid, nullptr, b.described() ? Form::OPERAND : Form::ADDRESS, nullptr, b};
  return *this;
}
VariantPack& VariantPack::set(std::int64_t uid, const DLTensor* t) {
  entry_for(uid) = Entry{uid, nullptr, Form::DLTENSOR, t, {}};
  return *this;
}
VariantPack& VariantPack::set(std::int64_t uid, const DLManagedTensor* t) {
  entry_for(uid) = Entry{uid, nullptr, Form::DLMANAGED, t, {}};
  return *this;
}
VariantPack& VariantPack::set(std::int64_t uid, const DLManagedTensorVersioned* t) {
  entry_for(uid) = Entry{uid, nullptr, Form::DLVERSIONED, t, {}};
  return *this;
}

VariantPack& VariantPack::override_shape(std::int64_t uid, std::vector<std::int64_t> dims,
                                         std::vector<std::int64_t> strides) {
  for (auto& o : overrides_)
    if (o.uid == uid) {
      o.dims = std::move(dims);
      o.strides = std::move(strides);
      return *this;
    }
  overrides_.push_back(Override{uid, std::move(dims), std::move(strides)});
  return *this;
}

std::int64_t VariantPack::index_of(std::int64_t uid) const { return layout_ ? layout_->index_of(uid) : -1; }
std::int64_t VariantPack::index_of(const Tensor& t) const { return index_of(t.get_uid()); }

const OperandBuffer* VariantPack::find(std::int64_t uid) const {
  if (layout_) {
    std::int64_t i = layout_->index_of(uid);
    return i >= 0 && slots_[static_cast<std::size_t>(i)].bound ? &slots_[static_cast<std::size_t>(i)] : nullptr;
  }
  for (const auto& e : entries_)
    if (e.uid == uid && (e.form == Form::ADDRESS || e.form == Form::OPERAND)) return &e.buffer;
  return nullptr;
}

}  // namespace opgraph
