// engines/cudnn/lowering_lowerer.cpp — the Lowerer's shared helpers (see
// lowering_internal.h): records and attributes, the TENSOR record of an IR
// tensor (padding, permutation, by-value bytes, ragged offset, reordering),
// port binding, composite virtual tensors and pointwise operations, version
// requirements. No cuDNN call happens here (see lowering.h).
#include <algorithm>
#include <bit>
#include <cstring>

#include "engines/cudnn/lowering_internal.h"

namespace opgraph::engines::cudnn {
namespace detail {  // shared with the SDPA lowering (lowering_internal.h)
// The scalar's bytes in `t`'s data type; false when the type cannot hold a by-value scalar here.
bool scalar_bytes(const ScalarValue& v, DataType t, std::array<unsigned char, 8>& out) {
  out.fill(0);
  switch (t) {
    case DataType::FLOAT: { float f = static_cast<float>(v.as_double()); std::memcpy(out.data(), &f, 4); return true; }
    case DataType::DOUBLE: { double d = v.as_double(); std::memcpy(out.data(), &d, 8); return true; }
    case DataType::INT32: { auto i = static_cast<std::int32_t>(v.i); std::memcpy(out.data(), &i, 4); return true; }
    case DataType::INT64: { std::int64_t i = v.i; std::memcpy(out.data(), &i, 8); return true; }
    case DataType::BOOLEAN: out[0] = v.i != 0 || v.f != 0.0; return true;
    case DataType::BFLOAT16: {  // round to nearest even
      std::uint32_t u = std::bit_cast<std::uint32_t>(static_cast<float>(v.as_double()));
      u += 0x7FFFu + ((u >> 16) & 1u);
      auto h = static_cast<std::uint16_t>(u >> 16);
      std::memcpy(out.data(), &h, 2);
      return true;
    }
    default: return false;
  }
}

int Lowerer::add(cudnnBackendDescriptorType_t type, std::string label, std::string op) {
  DescriptorRecord r;
  r.type = type;
  r.label = std::move(label);
  r.op = std::move(op);
  plan_.records.push_back(std::move(r));
  return static_cast<int>(plan_.records.size()) - 1;
}

void Lowerer::set_ints(int i, cudnnBackendAttributeName_t n, cudnnBackendAttributeType_t ty, std::vector<std::int64_t> v) {
  AttrRecord a;
  a.name = n;
  a.type = ty;
  a.ints = std::move(v);
  rec(i).attrs.push_back(std::move(a));
}

void Lowerer::set_real(int i, cudnnBackendAttributeName_t n, cudnnBackendAttributeType_t ty, double v) {
  AttrRecord a;
  a.name = n;
  a.type = ty;
  a.reals = {v};
  rec(i).attrs.push_back(std::move(a));
}

void Lowerer::set_refs(int i, cudnnBackendAttributeName_t n, std::vector<int> refs) {
  AttrRecord a;
  a.name = n;
  a.type = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  a.refs = std::move(refs);
  rec(i).attrs.push_back(std::move(a));
}

Status Lowerer::bind_in(int i, cudnnBackendAttributeName_t n, const Node& node, const ops::PortRef& port) {
  TensorPtr t = node.input(port);
  if (!t) return Status::ok();
  auto r = tensor(t);
  if (r.is_bad()) return r.status();
  set_refs(i, n, {r.value()});
  return Status::ok();
}

Status Lowerer::bind_out(int i, cudnnBackendAttributeName_t n, const Node& node, const ops::PortRef& port) {
  TensorPtr t = node.output(port);
  if (!t) return Status::ok();
  auto r = tensor(t);
  if (r.is_bad()) return r.status();
  set_refs(i, n, {r.value()});
  return Status::ok();
}

Result<int> Lowerer::virtual_like(const TensorPtr& like, const std::string& name) {
  auto lr = tensor(like);
  if (lr.is_bad()) return lr.status();
  if (next_uid_ < 0) {
    next_uid_ = 0;
    for (const auto& t : g_.tensors())
      if (t->has_uid()) next_uid_ = std::max(next_uid_, t->get_uid());
    ++next_uid_;
  }
  // Copies: add() below may move the records.
  const std::vector<std::int64_t> dims = rec(lr.value()).find(CUDNN_ATTR_TENSOR_DIMENSIONS)->ints;
  const std::vector<std::int64_t> strides = rec(lr.value()).find(CUDNN_ATTR_TENSOR_STRIDES)->ints;
  DataType dt = g_.context().intermediate_data_type;
  if (dt == DataType::NOT_SET) dt = DataType::FLOAT;
  std::int64_t uid = next_uid_++;
  int i = add(CUDNN_BACKEND_TENSOR_DESCRIPTOR, "tensor '" + name + "' (uid " + std::to_string(uid) + ", lowering's own)");
  set_int(i, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, to_cudnn_data_type(dt));
  set_ints(i, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims);
  set_ints(i, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides);
  set_int(i, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid);
  set_int(i, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16);
  set_int(i, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1);
  return i;
}

void Lowerer::pointwise(const Node& node, cudnnPointwiseMode_t mode, int x, int b, int y, const std::string& what) {
  int desc = add(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, node_label(node) + " " + what + " descriptor", std::string(node.op()));
  set_int(desc, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode);
  set_int(desc, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, compute_type(node));
  int op = add(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, node_label(node) + " " + what, std::string(node.op()));
  set_refs(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, {desc});
  set_refs(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, {x});
  if (b >= 0) set_refs(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, {b});
  set_refs(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, {y});
  plan_.operations.push_back(op);
}

void Lowerer::require_version(const Node& node, std::int64_t v) {
  if (v <= plan_.min_cudnn_version) return;
  plan_.min_cudnn_version = v;
  plan_.min_version_reason = node_label(node) + " needs cuDNN >= " + cudnn_version_string(v);
}

std::int64_t Lowerer::plan_axis(std::int64_t axis, std::int64_t tensor_rank) const {
  if (axis < 0) axis += tensor_rank;
  return axis + (plan_.rank - tensor_rank);
}

std::int64_t Lowerer::compute_type(const Node& node) const {
  DataType t = node.compute_data_type();
  if (t == DataType::NOT_SET) t = g_.context().compute_data_type;
  if (t == DataType::NOT_SET) t = DataType::FLOAT;
  return to_cudnn_data_type(t);
}

Status Lowerer::decline(const Node& node, const std::string& why) {
  return {ErrorCode::GRAPH_NOT_SUPPORTED, "cudnn lowering: " + node_label(node) + ": " + why};
}

std::string Lowerer::node_label(const Node& node) {
  return "op '" + std::string(node.op()) + "' (node '" + node.name() + "')";
}

Result<int> Lowerer::tensor(const TensorPtr& t) {
  if (auto it = tensor_records_.find(t.get()); it != tensor_records_.end()) return it->second;
  if (!t->has_uid())
    return Status{ErrorCode::INTERNAL_ERROR, "cudnn lowering: tensor '" + t->get_name() + "' has no uid (graph not planned?)"};
  TensorRecord tr;
  tr.uid = t->get_uid();
  tr.is_virtual = t->get_is_virtual();
  tr.by_value = t->get_is_pass_by_value();
  tr.dims_from_user = t->dim_set_by_user();
  tr.strides_from_user = t->stride_set_by_user();
  const auto& d = t->get_dim();
  auto s = t->get_stride().size() == d.size() ? t->get_stride() : Tensor::packed_strides(d);
  std::size_t pad = static_cast<std::size_t>(plan_.rank) > d.size() ? plan_.rank - d.size() : 0;
  std::int64_t outer = d.empty() ? 1 : d[0] * s[0];
  tr.dims.assign(pad, 1);
  tr.strides.assign(pad, std::max<std::int64_t>(outer, 1));
  tr.dims.insert(tr.dims.end(), d.begin(), d.end());
  tr.strides.insert(tr.strides.end(), s.begin(), s.end());
  if (!plan_.axis_permutation.empty()) {
    std::vector<std::int64_t> pd, ps;
    for (int a : plan_.axis_permutation) {
      pd.push_back(tr.dims[static_cast<std::size_t>(a)]);
      ps.push_back(tr.strides[static_cast<std::size_t>(a)]);
    }
    tr.dims = std::move(pd);
    tr.strides = std::move(ps);
  }
  DataType dt = t->get_data_type();
  if (dt == DataType::NOT_SET)
    dt = tr.is_virtual ? g_.context().intermediate_data_type : g_.context().io_data_type;
  if (dt == DataType::NOT_SET) dt = DataType::FLOAT;
  if (tr.by_value && !scalar_bytes(*t->get_pass_by_value(), dt, tr.scalar_bytes))
    return Status{ErrorCode::GRAPH_NOT_SUPPORTED, "cudnn lowering: by-value tensor '" + t->get_name() + "' of type " +
                                                      std::string(to_string(dt)) + " has no host scalar encoding here"};
  int ragged = -1;
  if (const auto& ro = t->get_ragged_offset()) {
    auto r = tensor(ro);
    if (r.is_bad()) return r.status();
    ragged = r.value();
  }
  int i = add(CUDNN_BACKEND_TENSOR_DESCRIPTOR, "tensor '" + t->get_name() + "' (uid " + std::to_string(tr.uid) + ")");
  set_int(i, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, to_cudnn_data_type(dt));
  set_ints(i, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, tr.dims);
  set_ints(i, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, tr.strides);
  set_int(i, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, tr.uid);
  set_int(i, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, t->get_alignment());
  set_int(i, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, tr.is_virtual);
  if (tr.by_value) set_int(i, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1);
  if (t->get_reordering_type() != TensorReordering::NONE) {
    static constexpr cudnnBackendTensorReordering_t kReorder[] = {CUDNN_TENSOR_REORDERING_NONE, CUDNN_TENSOR_REORDERING_INT8x32,
                                                                  CUDNN_TENSOR_REORDERING_F16x16,
                                                                  CUDNN_TENSOR_REORDERING_F8_128x4};
    set_int(i, CUDNN_ATTR_TENSOR_REORDERING_MODE, CUDNN_TYPE_TENSOR_REORDERING_MODE,
            kReorder[static_cast<int>(t->get_reordering_type())]);
  }
  if (ragged >= 0) set_refs(i, CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, {ragged});
  tr.record = i;
  plan_.tensors.push_back(std::move(tr));
  tensor_records_[t.get()] = i;
  return i;
}

}  // namespace detail

}  // namespace opgraph::engines::cudnn
