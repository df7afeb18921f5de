// opgraph/tensor.h — tensor attributes, as cudnn-frontend's Tensor_attributes.
//
// Units: dims and strides are in ELEMENTS, in the graph's axis order (never bytes).
// Ownership: tensors are shared (TensorPtr); a graph owns the uid namespace of the
// tensors it holds (see OpGraph::assign_uids).
// Mutators return *this for chaining and throw FrozenError once the owning graph
// is frozen by planning; every getter stays usable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "opgraph/data_type.h"

namespace opgraph {

enum class TensorReordering : std::uint8_t { NONE = 0, INT8x32, F16x16, F8_128x4 };
std::string_view to_string(TensorReordering r) noexcept;
std::optional<TensorReordering> tensor_reordering_from_string(std::string_view s) noexcept;

// How a pass-by-value scalar reaches the kernel.
enum class ScalarKind : std::uint8_t { RUNTIME_PARAM = 0, COMPILE_TIME_CONST };

// A pass-by-value scalar: the value travels in the tensor, not in a buffer.
// Integers are held exactly in `i`, floating values in `f`; `data_type` says which.
struct ScalarValue {
  DataType data_type = DataType::FLOAT;
  ScalarKind kind = ScalarKind::RUNTIME_PARAM;
  double f = 0.0;
  std::int64_t i = 0;
  double as_double() const noexcept;
  bool operator==(const ScalarValue&) const = default;
};

class Tensor;
using TensorPtr = std::shared_ptr<Tensor>;

class Tensor {
 public:
  Tensor() = default;

  // --- fluent setters (throw FrozenError when frozen) ---
  Tensor& set_name(std::string name);
  Tensor& set_dim(std::vector<std::int64_t> dim);
  Tensor& set_stride(std::vector<std::int64_t> stride);
  Tensor& set_data_type(DataType t);
  Tensor& set_is_virtual(bool v);
  Tensor& set_output(bool is_output);          // = set_is_virtual(!is_output)
  Tensor& set_uid(std::int64_t uid);           // a user uid; must be >= 0 (0 is a real uid)
  Tensor& clear_uid();
  Tensor& set_ragged_offset(TensorPtr offsets);
  Tensor& set_reordering_type(TensorReordering r);
  Tensor& set_alignment(std::int64_t bytes);
  Tensor& set_pass_by_value(ScalarValue v);    // makes the tensor a by-value scalar

  // --- getters ---
  const std::string& get_name() const noexcept { return name_; }
  const std::vector<std::int64_t>& get_dim() const noexcept { return dim_; }
  const std::vector<std::int64_t>& get_stride() const noexcept { return stride_; }
  DataType get_data_type() const noexcept { return data_type_; }
  bool get_is_virtual() const noexcept { return is_virtual_; }
  bool get_is_output() const noexcept { return !is_virtual_; }
  std::int64_t get_uid() const noexcept { return uid_; }
  // A user uid may be 0 (cudnn-frontend's uids start there); an automatic one is >= 1.
  bool has_uid() const noexcept { return uid_by_user_ || uid_ > 0; }
  bool get_uid_assigned_by_user() const noexcept { return uid_by_user_; }
  const TensorPtr& get_ragged_offset() const noexcept { return ragged_offset_; }
  TensorReordering get_reordering_type() const noexcept { return reordering_; }
  std::int64_t get_alignment() const noexcept { return alignment_; }
  bool get_is_pass_by_value() const noexcept { return pass_by_value_.has_value(); }
  const std::optional<ScalarValue>& get_pass_by_value() const noexcept { return pass_by_value_; }
  bool is_frozen() const noexcept { return frozen_; }

  // Whether the user (not shape inference) set dims / strides / data type.
  bool dim_set_by_user() const noexcept { return dim_by_user_; }
  bool stride_set_by_user() const noexcept { return stride_by_user_; }
  bool data_type_set_by_user() const noexcept { return data_type_by_user_; }

  std::int64_t rank() const noexcept { return static_cast<std::int64_t>(dim_.size()); }
  std::int64_t element_count() const noexcept;   // product of dims (1 for rank 0)

  // Row-major (last axis fastest) strides for `dim`.
  static std::vector<std::int64_t> packed_strides(const std::vector<std::int64_t>& dim);

  // --- used by the IR (shape inference, uid assignment, freeze) ---
  // These bypass the user flags; they still refuse a frozen tensor.
  struct Internal;

 private:
  friend struct Internal;
  void check_mutable(std::string_view what) const;

  std::string name_;
  std::vector<std::int64_t> dim_;
  std::vector<std::int64_t> stride_;
  DataType data_type_ = DataType::NOT_SET;
  bool is_virtual_ = false;
  std::int64_t uid_ = 0;
  bool uid_by_user_ = false;
  TensorPtr ragged_offset_;
  TensorReordering reordering_ = TensorReordering::NONE;
  std::int64_t alignment_ = 16;
  std::optional<ScalarValue> pass_by_value_;
  bool dim_by_user_ = false;
  bool stride_by_user_ = false;
  bool data_type_by_user_ = false;
  bool frozen_ = false;
};

// The IR's private door into a tensor (inference results, auto uids, freeze).
struct Tensor::Internal {
  static void infer_dim(Tensor& t, std::vector<std::int64_t> dim) { t.check_mutable("dim"); t.dim_ = std::move(dim); }
  static void infer_stride(Tensor& t, std::vector<std::int64_t> s) { t.check_mutable("stride"); t.stride_ = std::move(s); }
  static void infer_data_type(Tensor& t, DataType d) { t.check_mutable("data_type"); t.data_type_ = d; }
  static void auto_uid(Tensor& t, std::int64_t uid) { t.check_mutable("uid"); t.uid_ = uid; t.uid_by_user_ = false; }
  static void mark_user_flags(Tensor& t, bool dim, bool stride, bool dtype, bool uid) {
    t.dim_by_user_ = dim; t.stride_by_user_ = stride; t.data_type_by_user_ = dtype; t.uid_by_user_ = uid;
  }
  static void freeze(Tensor& t) { t.frozen_ = true; }
};

}  // namespace opgraph
