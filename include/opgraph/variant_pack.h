// opgraph/variant_pack.h — the caller's buffers for one execute, by tensor uid.
//
// MINIMAL for now: issue 6 replaces the internals (DLPack, normalisation once,
// per-call pointer arrays, declared-layout rules) behind this same name, so
// Engine / CompiledPlan signatures do not change. What an engine may rely on today:
//   * find(uid) gives the caller's buffer for a tensor uid, or nullptr;
//   * a buffer's dims/strides (ELEMENTS) and dtype are its own description; empty
//     dims mean "a bare address": the declaration describes it.
// Buffers are non-owning; the caller keeps them alive for the call.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "opgraph/data_type.h"

namespace opgraph {

struct OperandBuffer {
  void* data = nullptr;
  std::vector<std::int64_t> dims;     // empty: described by the graph's declaration
  std::vector<std::int64_t> strides;  // elements; empty with dims set: packed row-major
  DataType dtype = DataType::NOT_SET; // NOT_SET: the declared dtype
  bool described() const noexcept { return !dims.empty(); }
};

class VariantPack {
 public:
  VariantPack() = default;
  VariantPack(std::initializer_list<std::pair<const std::int64_t, void*>> ptrs) {
    for (const auto& [uid, p] : ptrs) set(uid, p);
  }
  VariantPack& set(std::int64_t uid, void* data) {
    buffers_[uid] = OperandBuffer{data, {}, {}, DataType::NOT_SET};
    return *this;
  }
  VariantPack& set(std::int64_t uid, OperandBuffer b) {
    buffers_[uid] = std::move(b);
    return *this;
  }
  const OperandBuffer* find(std::int64_t uid) const {
    auto it = buffers_.find(uid);
    return it == buffers_.end() ? nullptr : &it->second;
  }
  std::size_t size() const noexcept { return buffers_.size(); }
  // Ascending uid.
  const std::map<std::int64_t, OperandBuffer>& buffers() const noexcept { return buffers_; }

 private:
  std::map<std::int64_t, OperandBuffer> buffers_;
};

}  // namespace opgraph
