// ir/validate.cpp — OpGraph::validate(): the generic rules every op shares, then
// each op's own infer() hook, in node order.
//
// Order of checks (the first failure is returned):
//   1. uids (user collisions refused, auto holders renumbered)
//   2. per tensor: dims non-negative, strides of the same rank and non-negative, the
//      span (below) within int64, ragged offsets integral
//   3. per node: attribute names, types and enum domains; required attributes;
//      list/single ports; every input produced by an EARLIER node or a graph input
//      that is not virtual and has dims; outputs produced once; every output the op
//      produces (OutputSpec::present) bound to one tensor, none it does not produce
//      (rule output_bound)
//   4. per node: the op's infer() (shape/dtype inference and semantic rules), then
//      per output: tensor sanity (2) and, for a non-virtual output, no stride 0 on an
//      axis of extent > 1 (rule output_stride_zero: such an axis writes every one of
//      its elements to one address)
//   5. fill unset data types from the graph context (virtual -> intermediate,
//      others -> io; no context type -> the node's first floating input type)
//   6. every F8_128x4 tensor has a 128x4 tile geometry (ir/scale_layout.h); after
//      the nodes, so an op's own rule about its scale port is reported first
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/infer_context.h"
#include "ir/scale_layout.h"
#include "opgraph/op_graph.h"

namespace opgraph {
namespace {

bool value_has_type(const AttrValue& v, AttrType t) {
  switch (t) {
    case AttrType::BOOL: return std::holds_alternative<bool>(v);
    case AttrType::INT: return std::holds_alternative<std::int64_t>(v);
    case AttrType::FLOAT: return std::holds_alternative<double>(v) || std::holds_alternative<std::int64_t>(v);
    case AttrType::STRING: case AttrType::ENUM: return std::holds_alternative<std::string>(v);
    case AttrType::INT_LIST: return std::holds_alternative<std::vector<std::int64_t>>(v);
    case AttrType::FLOAT_LIST:
      return std::holds_alternative<std::vector<double>>(v) || std::holds_alternative<std::vector<std::int64_t>>(v);
  }
  return false;
}

std::string node_where(const Node& n) { return "op '" + std::string(n.op()) + "' (node '" + n.name() + "')"; }

Status check_attributes(const Node& n) {
  const OpSpec& spec = n.spec();
  for (const auto& [key, value] : n.attributes().values()) {
    const AttrSpec* a = spec.find_attr(key);
    if (!a) {
      std::string known;
      for (const auto& s : spec.attrs) known += (known.empty() ? "" : ", ") + std::string(s.name);
      return {ErrorCode::GRAPH_NOT_SUPPORTED, node_where(n) + ": unknown attribute '" + key + "' (known: {" + known + "})"};
    }
    if (!value_has_type(value, a->type))
      return {ErrorCode::GRAPH_NOT_SUPPORTED, node_where(n) + ", attribute '" + key + "': expects a " +
                                                  std::string(to_string(a->type)) + ", got " +
                                                  attr_value_to_string(value)};
    if (a->type == AttrType::ENUM) {
      const auto& s = std::get<std::string>(value);
      if (std::find(a->enum_values.begin(), a->enum_values.end(), s) == a->enum_values.end()) {
        std::string dom;  // spelled out only for the refusal: validate() is per node
        for (auto e : a->enum_values) dom += (dom.empty() ? "" : ", ") + std::string(e);
        return {ErrorCode::GRAPH_NOT_SUPPORTED,
                node_where(n) + ", attribute '" + key + "': '" + s + "' is not one of {" + dom + "}"};
      }
    }
  }
  for (const auto& a : spec.attrs)
    if (a.required && !n.attr_is_set(a.name))
      return {ErrorCode::ATTRIBUTE_NOT_SET, node_where(n) + ": required attribute '" + std::string(a.name) + "' is not set"};
  return Status::ok();
}

// Rule span_overflow. A strided tensor reaches 1 + sum (dim - 1) * stride elements
// (strides are non-negative by then; an empty tensor reaches none), which at the
// type's width is span * bits / 8 bytes, rounded up (fp4 is 4 bits). Executors size
// and check buffers with these numbers, so both must fit in int64: a stride such as
// (2^64 + 5) / 7 on an extent of 8 would otherwise wrap to a span of 6 elements and a
// small buffer would seem to cover the tensor. Returns why, or nothing when it fits.
std::optional<std::string> span_overflow(const Tensor& t) {
  const auto& dim = t.get_dim();
  const auto& stride = t.get_stride();
  if (stride.size() != dim.size()) return std::nullopt;  // packed strides are filled later
  for (auto d : dim)
    if (d == 0) return std::nullopt;
  std::int64_t span = 1;
  for (std::size_t i = 0; i < dim.size(); ++i) {
    std::int64_t step = 0;
    if (__builtin_mul_overflow(dim[i] - 1, stride[i], &step) || __builtin_add_overflow(span, step, &span))
      return std::string("reach past 2^63 - 1 elements");
  }
  const std::int64_t bits = bits_of(t.get_data_type());
  std::int64_t bytes = 0;
  // span * bits / 8 rounded up, without forming span * bits.
  if (__builtin_mul_overflow(span / 8, bits, &bytes) || __builtin_add_overflow(bytes, (span % 8 * bits + 7) / 8, &bytes))
    return "span " + std::to_string(span) + " elements, whose bytes at " + std::to_string(bits) +
           " bits an element pass 2^63 - 1";
  return std::nullopt;
}

// Rule output_stride_zero: a non-virtual output is written, and stride 0 on an axis
// of extent > 1 writes all of that axis to one address (a broadcast input reads that
// way legitimately; an output cannot).
Status check_output_writes(const Node& n, const Tensor& o) {
  if (o.get_is_virtual() || o.get_stride().size() != o.get_dim().size()) return Status::ok();
  for (std::size_t i = 0; i < o.get_dim().size(); ++i)
    if (o.get_stride()[i] == 0 && o.get_dim()[i] > 1)
      return {ErrorCode::GRAPH_NOT_SUPPORTED,
              node_where(n) + ", output tensor '" + o.get_name() + "' (uid " + std::to_string(o.get_uid()) +
                  "): rule output_stride_zero: axis " + std::to_string(i) + " has extent " +
                  std::to_string(o.get_dim()[i]) + " and stride 0, so its elements would all be written to one address"};
  return Status::ok();
}

Status check_tensor(const Tensor& t) {
  std::string who = "tensor '" + t.get_name() + "' (uid " + std::to_string(t.get_uid()) + ")";
  std::int64_t numel = 1;
  for (auto d : t.get_dim()) {
    if (d < 0) return {ErrorCode::GRAPH_NOT_SUPPORTED, who + ": dims must be non-negative, got a negative extent"};
    if (__builtin_mul_overflow(numel, d, &numel) || numel > (std::int64_t{1} << 48))
      return {ErrorCode::GRAPH_NOT_SUPPORTED, who + ": element count exceeds 2^48"};
  }
  if (t.get_dim().size() > 12)
    return {ErrorCode::GRAPH_NOT_SUPPORTED, who + ": rank " + std::to_string(t.get_dim().size()) + " exceeds 12"};
  if (!t.get_stride().empty() && t.get_stride().size() != t.get_dim().size())
    return {ErrorCode::GRAPH_NOT_SUPPORTED, who + ": stride rank " + std::to_string(t.get_stride().size()) +
                                                " differs from dim rank " + std::to_string(t.get_dim().size())};
  for (auto s : t.get_stride())
    if (s < 0) return {ErrorCode::GRAPH_NOT_SUPPORTED, who + ": strides must be non-negative"};
  if (auto why = span_overflow(t))
    return {ErrorCode::GRAPH_NOT_SUPPORTED, who + ": rule span_overflow: dims " + InferContext::dims_str(t.get_dim()) +
                                                " with strides " + InferContext::dims_str(t.get_stride()) + " " + *why};
  if (t.get_alignment() <= 0 || (t.get_alignment() & (t.get_alignment() - 1)) != 0)
    return {ErrorCode::GRAPH_NOT_SUPPORTED, who + ": alignment must be a positive power of two, got " +
                                                std::to_string(t.get_alignment())};
  if (const auto& r = t.get_ragged_offset()) {
    if (r->get_data_type() != DataType::INT32 && r->get_data_type() != DataType::INT64)
      return {ErrorCode::GRAPH_NOT_SUPPORTED, who + ": ragged offset tensor '" + r->get_name() +
                                                  "' must be INT32 or INT64, got " +
                                                  std::string(to_string(r->get_data_type()))};
  }
  return Status::ok();
}

DataType first_floating_input(const Node& n) {
  for (const auto& port : n.inputs())
    for (const auto& t : port)
      if (t && is_floating(t->get_data_type()) && !t->get_is_pass_by_value()) return t->get_data_type();
  return DataType::NOT_SET;
}

}  // namespace

Status OpGraph::validate() {
  validated_ = false;
  OPGRAPH_CHECK(assign_uids());

  // Graph inputs: fill data types and packed strides before any node reads them.
  std::unordered_map<const Tensor*, const Node*> producer;
  producer.reserve(tensors_.size());
  for (const auto& n : nodes_)
    for (const auto& port : n->outputs())
      for (const auto& o : port) {
        auto [it, fresh] = producer.emplace(o.get(), n.get());
        if (!fresh)
          return {ErrorCode::GRAPH_NOT_SUPPORTED, "tensor '" + o->get_name() + "' is produced by two nodes, '" +
                                                      it->second->name() + "' and '" + n->name() + "'"};
      }
  for (const auto& t : tensors_) {
    if (producer.count(t.get())) continue;
    if (t->get_data_type() == DataType::NOT_SET && !frozen_) {
      if (ctx_.io_data_type == DataType::NOT_SET)
        return {ErrorCode::ATTRIBUTE_NOT_SET, "tensor '" + t->get_name() + "' (uid " + std::to_string(t->get_uid()) +
                                                  ") has no data type and the graph sets no io_data_type"};
      Tensor::Internal::infer_data_type(*t, ctx_.io_data_type);
    }
    if (t->get_stride().empty() && !t->get_dim().empty() && !frozen_)
      Tensor::Internal::infer_stride(*t, Tensor::packed_strides(t->get_dim()));
    OPGRAPH_CHECK(check_tensor(*t));
  }

  std::unordered_set<const Tensor*> available;  // graph inputs and outputs of earlier nodes
  available.reserve(tensors_.size());
  for (const auto& t : tensors_)
    if (!producer.count(t.get())) available.insert(t.get());

  for (const auto& n : nodes_) {
    OPGRAPH_CHECK(check_attributes(*n));
    const OpSpec& spec = n->spec();
    for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
      const PortSpec& p = spec.inputs[i];
      const auto& bound = n->inputs()[i];
      if (bound.empty() && !p.optional)
        return {ErrorCode::ATTRIBUTE_NOT_SET,
                node_where(*n) + ", port " + std::string(p.name) + ": input is required but not bound"};
      if (bound.size() > 1 && !p.list)
        return {ErrorCode::GRAPH_NOT_SUPPORTED,
                node_where(*n) + ", port " + std::string(p.name) + ": binds " + std::to_string(bound.size()) +
                    " tensors but takes one"};
      for (const auto& t : bound) {
        std::string who = node_where(*n) + ", port " + std::string(p.name) + " (tensor '" + t->get_name() + "')";
        if (!available.count(t.get()))
          return {ErrorCode::GRAPH_NOT_SUPPORTED,
                  who + ": is produced by a later node or by this node (the graph must be acyclic, nodes in order)"};
        if (!producer.count(t.get())) {
          if (t->get_is_virtual())
            return {ErrorCode::GRAPH_NOT_SUPPORTED, who + ": a virtual tensor that no node produces"};
          if (t->get_dim().empty())
            return {ErrorCode::ATTRIBUTE_NOT_SET, who + ": a graph input needs dims"};
        }
      }
    }
    for (std::size_t i = 0; i < spec.outputs.size(); ++i) {
      const OutputSpec& o = spec.outputs[i];
      const bool present = !o.present || o.present(*n);
      const auto& bound = n->outputs()[i];
      if (present && bound.empty())
        return {ErrorCode::ATTRIBUTE_NOT_SET, node_where(*n) + ", output port " + std::string(o.name) +
                                                  ": rule output_bound: the op produces it here, but no tensor is bound"};
      if (!present && !bound.empty())
        return {ErrorCode::GRAPH_NOT_SUPPORTED,
                node_where(*n) + ", output port " + std::string(o.name) + " (tensor '" + bound.front()->get_name() +
                    "'): rule output_bound: the op does not produce this output with its attributes and inputs"};
      if (bound.size() > 1)
        return {ErrorCode::GRAPH_NOT_SUPPORTED, node_where(*n) + ", output port " + std::string(o.name) + ": binds " +
                                                    std::to_string(bound.size()) + " tensors but writes one"};
    }
    if (n->compute_data_type() == DataType::NOT_SET && !frozen_)
      n->set_compute_data_type(ctx_.compute_data_type != DataType::NOT_SET ? ctx_.compute_data_type
                                                                            : DataType::FLOAT);
    InferContext ictx(ctx_, *n);
    if (spec.infer && !frozen_) OPGRAPH_CHECK(spec.infer(ictx));
    DataType fallback = first_floating_input(*n);
    for (const auto& port : n->outputs())
      for (const auto& o : port) {
        if (!frozen_) {
          if (o->get_data_type() == DataType::NOT_SET) {
            DataType ctx_type = o->get_is_virtual() ? ctx_.intermediate_data_type : ctx_.io_data_type;
            DataType fill = ctx_type != DataType::NOT_SET ? ctx_type : fallback;
            if (fill == DataType::NOT_SET)
              return {ErrorCode::ATTRIBUTE_NOT_SET, node_where(*n) + ": output '" + o->get_name() +
                                                        "' has no data type and the graph sets none to fill it"};
            Tensor::Internal::infer_data_type(*o, fill);
          }
          if (o->get_stride().empty()) Tensor::Internal::infer_stride(*o, Tensor::packed_strides(o->get_dim()));
        }
        OPGRAPH_CHECK(check_tensor(*o));
        OPGRAPH_CHECK(check_output_writes(*n, *o));
        available.insert(o.get());
      }
  }
  for (const auto& t : tensors_) {
    if (t->get_reordering_type() != TensorReordering::F8_128x4) continue;
    std::string why;
    if (!swizzle_128x4_of(t->get_dim(), t->get_stride(), &why))
      return {ErrorCode::GRAPH_NOT_SUPPORTED, "tensor '" + t->get_name() + "' (uid " + std::to_string(t->get_uid()) +
                                                  "): rule f8_128x4_layout: " + why};
  }
  validated_ = true;
  return Status::ok();
}

}  // namespace opgraph
