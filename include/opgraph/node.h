// opgraph/node.h — one op instance: its spec, named ports and typed attributes.
//
// Ports are addressed by the typed port enums of opgraph/ops.h (ops::Sdpa::In::Q:
// the record's position, checked against the node's op) or, at the JSON / Python
// boundary, by cudnn-frontend's port names (the spec's PortSpec::name). Inputs and
// outputs are held in the spec's port order; a list port holds any number of
// tensors, any other port at most one. Attributes are read through the typed
// accessors of opgraph/ops.h (ops::Layernorm::forward_phase(node)); the string
// getters below serve the JSON / Python boundary.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "opgraph/attributes.h"
#include "opgraph/op_spec.h"
#include "opgraph/op_typed.h"
#include "opgraph/tensor.h"

namespace opgraph {

class Node {
 public:
  Node(const OpSpec* spec, std::string name) : spec_(spec), name_(std::move(name)) {
    inputs_.resize(spec->inputs.size());
    outputs_.resize(spec->outputs.size());
  }

  const OpSpec& spec() const noexcept { return *spec_; }
  std::string_view op() const noexcept { return spec_->name; }
  const std::string& name() const noexcept { return name_; }
  DataType compute_data_type() const noexcept { return compute_data_type_; }

  // The tensor bound to a single port (nullptr when unbound), all tensors of a
  // (list) port. `port` is a port enum of opgraph/ops.h (indexed by position; one
  // of another op than the node's, or an output enum asked as an input, throws
  // std::logic_error), a shared name (ops::in::X / ops::out::Y: unbound when the
  // op lacks the port), or a string at the JSON / Python boundary (likewise).
  TensorPtr input(const ops::PortRef& port) const;
  TensorPtr output(const ops::PortRef& port) const;
  const std::vector<TensorPtr>& inputs_of(const ops::PortRef& port) const;
  // An output enum asked as an input (and the other way round) does not compile.
  template <ops::OutputPort E>
  TensorPtr input(E) const = delete;
  template <ops::OutputPort E>
  const std::vector<TensorPtr>& inputs_of(E) const = delete;
  template <ops::InputPort E>
  TensorPtr output(E) const = delete;
  const std::vector<std::vector<TensorPtr>>& inputs() const noexcept { return inputs_; }
  const std::vector<std::vector<TensorPtr>>& outputs() const noexcept { return outputs_; }

  // Attribute as set, else the spec's default, else nullptr. The typed accessors of
  // opgraph/ops.h read through this; the get_* below are for the JSON / Python boundary.
  const AttrValue* attr(std::string_view key) const;
  bool attr_is_set(std::string_view key) const { return attrs_.find(key) != nullptr; }
  bool get_bool(std::string_view key, bool dflt = false) const;
  std::int64_t get_int(std::string_view key, std::int64_t dflt = 0) const;
  double get_float(std::string_view key, double dflt = 0.0) const;
  std::string get_string(std::string_view key, std::string dflt = {}) const;  // STRING and ENUM
  std::vector<std::int64_t> get_int_list(std::string_view key) const;
  std::vector<double> get_float_list(std::string_view key) const;
  const Attributes& attributes() const noexcept { return attrs_; }

  bool is_frozen() const noexcept { return frozen_; }

  // --- mutation: used by the graph's builders and deserializer; refused when frozen ---
  void bind_input(std::size_t port_index, TensorPtr t);
  void bind_output(std::size_t port_index, TensorPtr t);
  void set_attributes(Attributes a);
  void set_compute_data_type(DataType t);
  void freeze() noexcept { frozen_ = true; }

 private:
  void check_mutable(std::string_view what) const;
  const std::vector<TensorPtr>* port_tensors(const ops::PortRef& port, bool input) const;

  const OpSpec* spec_;
  std::string name_;
  DataType compute_data_type_ = DataType::NOT_SET;
  Attributes attrs_;
  std::vector<std::vector<TensorPtr>> inputs_;
  std::vector<std::vector<TensorPtr>> outputs_;
  bool frozen_ = false;
};

using NodePtr = std::shared_ptr<Node>;

}  // namespace opgraph
