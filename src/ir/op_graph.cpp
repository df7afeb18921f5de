// ir/op_graph.cpp — graph construction, uid ownership and freeze.
#include "opgraph/op_graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace opgraph {

void OpGraph::check_mutable(std::string_view what) const {
  if (frozen_) throw FrozenError("graph '" + ctx_.name + "' is frozen by planning: cannot " + std::string(what));
}

OpGraph& OpGraph::set_name(std::string name) { check_mutable("set name"); ctx_.name = std::move(name); return *this; }
OpGraph& OpGraph::set_io_data_type(DataType t) { check_mutable("set io_data_type"); ctx_.io_data_type = t; return *this; }
OpGraph& OpGraph::set_intermediate_data_type(DataType t) {
  check_mutable("set intermediate_data_type"); ctx_.intermediate_data_type = t; return *this;
}
OpGraph& OpGraph::set_compute_data_type(DataType t) {
  check_mutable("set compute_data_type"); ctx_.compute_data_type = t; return *this;
}

void OpGraph::register_tensor(const TensorPtr& t) {
  if (!t) return;
  if (!registered_.insert(t.get()).second) return;
  tensors_.push_back(t);
  if (t->get_ragged_offset()) register_tensor(t->get_ragged_offset());
}

TensorPtr OpGraph::tensor(const Tensor& attrs) {
  check_mutable("add a tensor");
  auto t = std::make_shared<Tensor>(attrs);
  Tensor::Internal::mark_user_flags(*t, attrs.dim_set_by_user() || !attrs.get_dim().empty(),
                                    attrs.stride_set_by_user() || !attrs.get_stride().empty(),
                                    attrs.get_data_type() != DataType::NOT_SET, attrs.get_uid_assigned_by_user());
  validated_ = false;
  register_tensor(t);
  return t;
}

TensorPtr OpGraph::tensor(std::vector<std::int64_t> dim, DataType t, std::string name,
                          std::vector<std::int64_t> stride) {
  Tensor a;
  if (stride.empty()) stride = Tensor::packed_strides(dim);
  a.set_dim(std::move(dim)).set_stride(std::move(stride)).set_name(std::move(name));
  if (t != DataType::NOT_SET) a.set_data_type(t);
  return tensor(a);
}

TensorPtr OpGraph::tensor_scalar(double value, DataType t, ScalarKind kind) {
  Tensor a;
  ScalarValue v;
  v.data_type = t;
  v.kind = kind;
  v.f = value;
  a.set_dim({1}).set_stride({1}).set_data_type(t).set_pass_by_value(v);
  return tensor(a);
}

TensorPtr OpGraph::tensor_scalar_int(std::int64_t value, DataType t, ScalarKind kind) {
  Tensor a;
  ScalarValue v;
  v.data_type = t;
  v.kind = kind;
  v.i = value;
  a.set_dim({1}).set_stride({1}).set_data_type(t).set_pass_by_value(v);
  return tensor(a);
}

TensorPtr OpGraph::tensor_like(const TensorPtr& like, std::string name) {
  // A new tensor with like's attributes, not a copy: a copy of a planned graph's tensor
  // would be frozen (cudnn-frontend's backward graphs are made from forward tensors).
  Tensor a;
  a.set_name(std::move(name)).set_is_virtual(like->get_is_virtual());
  a.set_reordering_type(like->get_reordering_type()).set_alignment(like->get_alignment());
  if (like->get_ragged_offset()) a.set_ragged_offset(like->get_ragged_offset());
  Tensor::Internal::infer_dim(a, like->get_dim());
  Tensor::Internal::infer_stride(a, like->get_stride());
  Tensor::Internal::infer_data_type(a, like->get_data_type());
  if (like->get_pass_by_value()) a.set_pass_by_value(*like->get_pass_by_value());
  Tensor::Internal::mark_user_flags(a, like->dim_set_by_user(), like->stride_set_by_user(),
                                    like->data_type_set_by_user(), false);
  return tensor(a);
}

std::string OpGraph::unique_node_name(std::string_view op) {
  return std::string(op) + "_" + std::to_string(next_auto_name_++);
}

std::vector<TensorPtr> OpGraph::add_node(std::string_view op, std::vector<PortArg> inputs, const Attributes& attrs) {
  check_mutable("add a node");
  const OpSpec* spec = find_op_spec(op);
  if (!spec) throw std::logic_error("opgraph: builder names unknown op '" + std::string(op) + "'");
  auto node = std::make_shared<Node>(spec, attrs.name().empty() ? unique_node_name(op) : attrs.name());
  for (auto& arg : inputs) {
    int i = spec->input_index(arg.port);
    if (i < 0) throw std::logic_error("opgraph: builder binds unknown port '" + std::string(arg.port) + "' of " +
                                      std::string(op));
    for (auto& t : arg.tensors) {
      register_tensor(t);
      node->bind_input(static_cast<std::size_t>(i), t);
    }
  }
  node->set_attributes(attrs);
  node->set_compute_data_type(attrs.compute_data_type());
  std::vector<TensorPtr> outs(spec->outputs.size());
  for (std::size_t i = 0; i < spec->outputs.size(); ++i) {
    const OutputSpec& o = spec->outputs[i];
    if (o.present && !o.present(*node)) continue;
    auto t = std::make_shared<Tensor>();
    t->set_is_virtual(true).set_name(node->name() + "::" + std::string(o.name));
    node->bind_output(i, t);
    register_tensor(t);
    outs[i] = t;
  }
  nodes_.push_back(std::move(node));
  validated_ = false;
  return outs;
}

Status OpGraph::assign_uids() {
  // User uids first: they are kept, and two tensors claiming one uid is an error.
  std::map<std::int64_t, const Tensor*> user;
  for (const auto& t : tensors_) {
    if (!t->get_uid_assigned_by_user()) continue;
    if (t->get_uid() < 0)
      return {ErrorCode::INVALID_VALUE,
              "tensor '" + t->get_name() + "': uid must be 0 or more, got " + std::to_string(t->get_uid())};
    auto [it, fresh] = user.emplace(t->get_uid(), t.get());
    if (!fresh)
      return {ErrorCode::INVALID_VALUE, "uid " + std::to_string(t->get_uid()) + " is set on two tensors, '" +
                                            it->second->get_name() + "' and '" + t->get_name() +
                                            "': user uids must be unique"};
  }
  // Auto-assigned holders keep their uid unless a user uid (or an earlier holder)
  // landed on it; those are renumbered, in tensor order, from the lowest free uid.
  std::set<std::int64_t> taken;
  for (auto& [uid, _] : user) taken.insert(uid);
  std::vector<Tensor*> renumber;
  for (const auto& t : tensors_) {
    if (t->get_uid_assigned_by_user()) continue;
    if (t->has_uid() && taken.insert(t->get_uid()).second) continue;
    renumber.push_back(t.get());
  }
  std::int64_t next = 1;
  for (Tensor* t : renumber) {
    while (taken.count(next)) ++next;
    Tensor::Internal::auto_uid(*t, next);
    taken.insert(next);
  }
  return Status::ok();
}

void OpGraph::freeze() {
  if (frozen_) return;
  frozen_ = true;
  for (auto& t : tensors_) Tensor::Internal::freeze(*t);
  producer_.clear();
  for (auto& n : nodes_) {
    n->freeze();
    for (const auto& port : n->outputs())
      for (const auto& o : port) producer_.emplace(o.get(), n.get());  // the first producer, as the scan finds
  }
}

TensorPtr OpGraph::tensor_by_uid(std::int64_t uid) const {
  for (const auto& t : tensors_)
    if (t->get_uid() == uid) return t;
  return nullptr;
}

const Node* OpGraph::producer_of(const Tensor* t) const {
  if (frozen_) {
    auto it = producer_.find(t);
    return it == producer_.end() ? nullptr : it->second;
  }
  for (const auto& n : nodes_)
    for (const auto& port : n->outputs())
      for (const auto& o : port)
        if (o.get() == t) return n.get();
  return nullptr;
}

void OpGraph::adopt(OpGraph&& other) {
  ctx_ = std::move(other.ctx_);
  tensors_ = std::move(other.tensors_);
  nodes_ = std::move(other.nodes_);
  registered_ = std::move(other.registered_);
  producer_ = std::move(other.producer_);
  validated_ = other.validated_;
  frozen_ = other.frozen_;
  next_auto_name_ = other.next_auto_name_;
}

}  // namespace opgraph
