// ir/infer_context.cpp — error sentences and common shape rules for infer() hooks.
#include "ir/infer_context.h"

#include <sstream>

namespace opgraph {

static const Dims kEmpty;

const Dims& InferContext::dims(ops::PortRef port) const {
  auto t = in(port);
  return t ? t->get_dim() : kEmpty;
}
DataType InferContext::dtype(ops::PortRef port) const {
  auto t = in(port);
  return t ? t->get_data_type() : DataType::NOT_SET;
}

std::string InferContext::dims_str(const Dims& d) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < d.size(); ++i) os << (i ? ", " : "") << d[i];
  os << ']';
  return os.str();
}

std::string InferContext::where(std::string_view port) const {
  std::string s = "op '" + std::string(node_.op()) + "' (node '" + node_.name() + "')";
  if (!port.empty()) {
    s += ", port " + std::string(port);
    TensorPtr t = node_.input(port);
    if (!t) t = node_.output(port);
    if (t) s += " (tensor '" + t->get_name() + "')";
  }
  return s;
}

Status InferContext::fail_code(ErrorCode code, ops::PortRef port, const std::string& rule) const {
  return {code, where(port.name) + ": " + rule};
}
Status InferContext::fail(ops::PortRef port, const std::string& rule) const {
  return fail_code(ErrorCode::GRAPH_NOT_SUPPORTED, port, rule);
}
Status InferContext::fail_attr(std::string_view attr, const std::string& rule) const {
  return {ErrorCode::GRAPH_NOT_SUPPORTED, where({}) + ", attribute '" + std::string(attr) + "': " + rule};
}
Status InferContext::fail_op(const std::string& rule) const {
  return {ErrorCode::GRAPH_NOT_SUPPORTED, where({}) + ": " + rule};
}

Status InferContext::require(ops::PortRef port) const {
  if (!has(port)) return fail_code(ErrorCode::ATTRIBUTE_NOT_SET, port, "input is required but not bound");
  return Status::ok();
}

Status InferContext::require_rank(ops::PortRef port, std::int64_t rank) const {
  OPGRAPH_CHECK(require(port));
  if (in(port)->rank() != rank)
    return fail(port, "rank must be " + std::to_string(rank) + ", got " + std::to_string(in(port)->rank()) + " " +
                          dims_str(dims(port)));
  return Status::ok();
}

Status InferContext::require_rank_between(ops::PortRef port, std::int64_t lo, std::int64_t hi) const {
  OPGRAPH_CHECK(require(port));
  auto r = in(port)->rank();
  if (r < lo || r > hi)
    return fail(port, "rank must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                          std::to_string(r) + " " + dims_str(dims(port)));
  return Status::ok();
}

Status InferContext::require_dtype_in(ops::PortRef port, std::initializer_list<DataType> allowed) const {
  OPGRAPH_CHECK(require(port));
  DataType t = dtype(port);
  for (DataType a : allowed)
    if (a == t) return Status::ok();
  std::string list;
  for (DataType a : allowed) list += (list.empty() ? "" : ", ") + std::string(to_string(a));
  return fail(port, "data type must be one of {" + list + "}, got " + std::string(to_string(t)));
}

Status InferContext::require_floating(ops::PortRef port) const {
  OPGRAPH_CHECK(require(port));
  if (!is_floating(dtype(port)))
    return fail(port, "data type must be floating point, got " + std::string(to_string(dtype(port))));
  return Status::ok();
}

Status InferContext::require_integer_index(ops::PortRef port) const {
  return require_dtype_in(port, {DataType::INT32, DataType::INT64});
}

Status InferContext::require_same_dims(ops::PortRef port, ops::PortRef other) const {
  OPGRAPH_CHECK(require(port));
  OPGRAPH_CHECK(require(other));
  if (dims(port) != dims(other))
    return fail(port, "dims " + dims_str(dims(port)) + " must equal those of port " + std::string(other.name) + " " +
                          dims_str(dims(other)));
  return Status::ok();
}

Status InferContext::require_dim(ops::PortRef port, std::int64_t axis, std::int64_t expected,
                                 const std::string& what) const {
  OPGRAPH_CHECK(require(port));
  const Dims& d = dims(port);
  if (axis < 0) axis += static_cast<std::int64_t>(d.size());
  if (axis < 0 || axis >= static_cast<std::int64_t>(d.size()))
    return fail(port, "has no axis " + std::to_string(axis) + " for " + what + " (dims " + dims_str(d) + ")");
  if (d[axis] != expected)
    return fail(port, "axis " + std::to_string(axis) + " must be " + what + " = " + std::to_string(expected) +
                          ", got " + std::to_string(d[axis]) + " (dims " + dims_str(d) + ")");
  return Status::ok();
}

Status InferContext::require_numel(ops::PortRef port, std::int64_t n, const std::string& what) const {
  OPGRAPH_CHECK(require(port));
  if (in(port)->element_count() != n)
    return fail(port, "must hold " + std::to_string(n) + " elements (" + what + "), got dims " +
                          dims_str(dims(port)));
  return Status::ok();
}

Status InferContext::set_output(ops::PortRef port, Dims d, DataType dtype) {
  TensorPtr t = out(port);
  if (!t) return Status::ok();  // conditional output not produced
  for (auto x : d)
    if (x < 0) return fail_code(ErrorCode::SHAPE_DEDUCTION_FAILED, port, "inferred negative extent " + dims_str(d));
  if (t->dim_set_by_user()) {
    if (t->get_dim() != d)
      return fail(port, "user-set dims " + dims_str(t->get_dim()) + " disagree with the inferred dims " + dims_str(d));
  } else {
    Tensor::Internal::infer_dim(*t, d);
  }
  if (!t->stride_set_by_user()) Tensor::Internal::infer_stride(*t, Tensor::packed_strides(t->get_dim()));
  if (!t->data_type_set_by_user() && dtype != DataType::NOT_SET) Tensor::Internal::infer_data_type(*t, dtype);
  return Status::ok();
}

Status InferContext::require_user_output_dims(ops::PortRef port, Dims* d) {
  TensorPtr t = out(port);
  if (!t) return Status::ok();
  if (!t->dim_set_by_user() || t->get_dim().empty())
    return fail_code(ErrorCode::SHAPE_DEDUCTION_FAILED, port,
                     "output dims cannot be inferred for this op: set them on the output tensor");
  if (!t->stride_set_by_user()) Tensor::Internal::infer_stride(*t, Tensor::packed_strides(t->get_dim()));
  if (d) *d = t->get_dim();
  return Status::ok();
}

std::optional<Dims> InferContext::broadcast(const Dims& a, const Dims& b) {
  std::size_t n = std::max(a.size(), b.size());
  Dims r(n, 1);
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    std::int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    r[i] = x == 1 ? y : x;
  }
  return r;
}

}  // namespace opgraph
