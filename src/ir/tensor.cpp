// ir/tensor.cpp — tensor attributes and their freeze rule.
#include "opgraph/tensor.h"

#include <cstdint>
#include <string>

#include "opgraph/status.h"

namespace opgraph {

std::string_view to_string(TensorReordering r) noexcept {
  switch (r) {
    case TensorReordering::NONE: return "NONE";
    case TensorReordering::INT8x32: return "INT8x32";
    case TensorReordering::F16x16: return "F16x16";
    case TensorReordering::F8_128x4: return "F8_128x4";
  }
  return "NONE";
}

std::optional<TensorReordering> tensor_reordering_from_string(std::string_view s) noexcept {
  for (auto r : {TensorReordering::NONE, TensorReordering::INT8x32, TensorReordering::F16x16,
                 TensorReordering::F8_128x4})
    if (to_string(r) == s) return r;
  return std::nullopt;
}

double ScalarValue::as_double() const noexcept {
  return is_integral(data_type) || data_type == DataType::BOOLEAN ? static_cast<double>(i) : f;
}

void Tensor::check_mutable(std::string_view what) const {
  if (frozen_)
    throw FrozenError("tensor '" + name_ + "' (uid " + std::to_string(uid_) + ") is frozen by planning: cannot set " +
                      std::string(what));
}

Tensor& Tensor::set_name(std::string name) { check_mutable("name"); name_ = std::move(name); return *this; }
Tensor& Tensor::set_dim(std::vector<std::int64_t> dim) {
  check_mutable("dim"); dim_ = std::move(dim); dim_by_user_ = true; return *this;
}
Tensor& Tensor::set_stride(std::vector<std::int64_t> stride) {
  check_mutable("stride"); stride_ = std::move(stride); stride_by_user_ = true; return *this;
}
Tensor& Tensor::set_data_type(DataType t) {
  check_mutable("data_type"); data_type_ = t; data_type_by_user_ = t != DataType::NOT_SET; return *this;
}
Tensor& Tensor::set_is_virtual(bool v) { check_mutable("is_virtual"); is_virtual_ = v; return *this; }
Tensor& Tensor::set_output(bool is_output) { return set_is_virtual(!is_output); }
Tensor& Tensor::set_uid(std::int64_t uid) {
  check_mutable("uid"); uid_ = uid; uid_by_user_ = true; return *this;
}
Tensor& Tensor::clear_uid() { check_mutable("uid"); uid_ = 0; uid_by_user_ = false; return *this; }
Tensor& Tensor::set_ragged_offset(TensorPtr offsets) {
  check_mutable("ragged_offset"); ragged_offset_ = std::move(offsets); return *this;
}
Tensor& Tensor::set_reordering_type(TensorReordering r) { check_mutable("reordering_type"); reordering_ = r; return *this; }
Tensor& Tensor::set_alignment(std::int64_t bytes) { check_mutable("alignment"); alignment_ = bytes; return *this; }
Tensor& Tensor::set_pass_by_value(ScalarValue v) {
  check_mutable("pass_by_value");
  if (data_type_ == DataType::NOT_SET) { data_type_ = v.data_type; data_type_by_user_ = true; }
  pass_by_value_ = v;
  return *this;
}

std::int64_t Tensor::element_count() const noexcept {
  // Saturates instead of overflowing (validate() refuses such tensors).
  std::int64_t n = 1;
  for (auto d : dim_)
    if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
  return n;
}

std::vector<std::int64_t> Tensor::packed_strides(const std::vector<std::int64_t>& dim) {
  std::vector<std::int64_t> s(dim.size(), 1);
  std::int64_t acc = 1;
  for (std::size_t i = dim.size(); i-- > 0;) {
    s[i] = acc;
    if (__builtin_mul_overflow(acc, dim[i] > 0 ? dim[i] : 1, &acc)) acc = INT64_MAX;
  }
  return s;
}

}  // namespace opgraph
