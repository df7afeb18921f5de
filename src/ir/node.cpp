// ir/node.cpp — node ports and attribute lookup (set value, else the spec default).
#include "opgraph/node.h"

#include <sstream>

namespace opgraph {

std::string_view to_string(AttrType t) noexcept {
  switch (t) {
    case AttrType::BOOL: return "bool";
    case AttrType::INT: return "int";
    case AttrType::FLOAT: return "float";
    case AttrType::STRING: return "string";
    case AttrType::ENUM: return "enum";
    case AttrType::INT_LIST: return "int list";
    case AttrType::FLOAT_LIST: return "float list";
  }
  return "?";
}

std::string_view to_string(OpMechanism m) noexcept {
  switch (m) {
    case OpMechanism::POINTWISE: return "pointwise";
    case OpMechanism::STRUCTURED: return "structured";
    case OpMechanism::CAPTURED: return "captured";
    case OpMechanism::ENGINE_ONLY: return "engine-only";
  }
  return "?";
}

const AttrValue* Attributes::find(std::string_view key) const {
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

std::string attr_value_to_string(const AttrValue& v) {
  std::ostringstream os;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) os << (x ? "true" : "false");
        else if constexpr (std::is_same_v<T, std::vector<std::int64_t>> || std::is_same_v<T, std::vector<double>>) {
          os << '[';
          for (std::size_t i = 0; i < x.size(); ++i) os << (i ? ", " : "") << x[i];
          os << ']';
        } else os << x;
      },
      v);
  return os.str();
}

static const std::vector<TensorPtr> kNoTensors;

const std::vector<TensorPtr>* Node::port_tensors(const ops::PortRef& port, bool input) const {
  using Kind = ops::PortRef::Kind;
  if (port.kind != Kind::STRING) ops::detail::check_port(*this, port, input);
  const auto& side = input ? inputs_ : outputs_;
  if (port.kind == Kind::TYPED) return &side[port.position];
  int i = input ? spec_->input_index(port.name) : spec_->output_index(port.name);
  return i < 0 ? nullptr : &side[static_cast<std::size_t>(i)];
}
TensorPtr Node::input(const ops::PortRef& port) const {
  const auto* v = port_tensors(port, true);
  return !v || v->empty() ? nullptr : v->front();
}
TensorPtr Node::output(const ops::PortRef& port) const {
  const auto* v = port_tensors(port, false);
  return !v || v->empty() ? nullptr : v->front();
}
const std::vector<TensorPtr>& Node::inputs_of(const ops::PortRef& port) const {
  const auto* v = port_tensors(port, true);
  return v ? *v : kNoTensors;
}

const AttrValue* Node::attr(std::string_view key) const {
  if (const AttrValue* v = attrs_.find(key)) return v;
  const AttrSpec* s = spec_->find_attr(key);
  return s && s->default_value ? &*s->default_value : nullptr;
}

bool Node::get_bool(std::string_view key, bool dflt) const {
  const AttrValue* v = attr(key);
  return v && std::holds_alternative<bool>(*v) ? std::get<bool>(*v) : dflt;
}
std::int64_t Node::get_int(std::string_view key, std::int64_t dflt) const {
  const AttrValue* v = attr(key);
  if (!v) return dflt;
  if (auto p = std::get_if<std::int64_t>(v)) return *p;
  if (auto p = std::get_if<bool>(v)) return *p ? 1 : 0;
  return dflt;
}
double Node::get_float(std::string_view key, double dflt) const {
  const AttrValue* v = attr(key);
  if (!v) return dflt;
  if (auto p = std::get_if<double>(v)) return *p;
  if (auto p = std::get_if<std::int64_t>(v)) return static_cast<double>(*p);
  return dflt;
}
std::string Node::get_string(std::string_view key, std::string dflt) const {
  const AttrValue* v = attr(key);
  return v && std::holds_alternative<std::string>(*v) ? std::get<std::string>(*v) : dflt;
}
std::vector<std::int64_t> Node::get_int_list(std::string_view key) const {
  const AttrValue* v = attr(key);
  return v && std::holds_alternative<std::vector<std::int64_t>>(*v) ? std::get<std::vector<std::int64_t>>(*v)
                                                                     : std::vector<std::int64_t>{};
}
std::vector<double> Node::get_float_list(std::string_view key) const {
  const AttrValue* v = attr(key);
  return v && std::holds_alternative<std::vector<double>>(*v) ? std::get<std::vector<double>>(*v)
                                                               : std::vector<double>{};
}

void Node::check_mutable(std::string_view what) const {
  if (frozen_) throw FrozenError("node '" + name_ + "' (" + std::string(op()) + ") is frozen by planning: cannot " +
                                 std::string(what));
}
void Node::bind_input(std::size_t port_index, TensorPtr t) {
  check_mutable("bind an input");
  inputs_.at(port_index).push_back(std::move(t));
}
void Node::bind_output(std::size_t port_index, TensorPtr t) {
  check_mutable("bind an output");
  outputs_.at(port_index).assign(1, std::move(t));
}
void Node::set_attributes(Attributes a) { check_mutable("set attributes"); attrs_ = std::move(a); }
void Node::set_compute_data_type(DataType t) { check_mutable("set compute_data_type"); compute_data_type_ = t; }

}  // namespace opgraph
