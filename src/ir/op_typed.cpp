// ir/op_typed.cpp — the checks behind the typed ports and attribute accessors of
// opgraph/ops.h (see opgraph/op_typed.h).
#include "opgraph/op_typed.h"

#include <stdexcept>

#include "opgraph/node.h"

namespace opgraph::ops::detail {

namespace {

const OpSpec& spec_at(std::size_t op_index) {
  auto all = all_op_specs();
  if (op_index >= all.size()) throw std::logic_error("typed op index " + std::to_string(op_index) + " is out of the registry");
  return *all[op_index];
}

}  // namespace

void wrong_op(const Node& n, std::size_t op_index, std::string_view what) {
  throw std::logic_error("node '" + n.name() + "' is op '" + std::string(n.op()) + "', not '" +
                         std::string(spec_at(op_index).name) + "': " + std::string(what) + " belongs to op '" +
                         std::string(spec_at(op_index).name) + "'");
}

void check_port(const Node& n, const PortRef& p, bool want_input) {
  if (p.kind == PortRef::Kind::STRING) return;
  if (p.input != want_input)
    throw std::logic_error("node '" + n.name() + "' (op '" + std::string(n.op()) + "'): port " + std::string(p.name) +
                           " is an " + (p.input ? "input" : "output") + ", asked as an " +
                           (want_input ? "input" : "output"));
  if (p.kind == PortRef::Kind::TYPED && &n.spec() != &spec_at(p.op_index))
    wrong_op(n, p.op_index, "port " + std::string(p.name));
}

const AttrValue* attr_at(const Node& n, std::size_t op_index, std::size_t pos) {
  const OpSpec& s = spec_at(op_index);
  if (&n.spec() != &s) wrong_op(n, op_index, "attribute " + std::string(s.attrs.at(pos).name));
  return n.attr(s.attrs[pos].name);
}

const AttrValue* attr_named(const Node& n, std::string_view name) {
  if (!n.spec().find_attr(name))
    throw std::logic_error("node '" + n.name() + "': op '" + std::string(n.op()) + "' has no attribute " +
                           std::string(name));
  return n.attr(name);
}

const AttrValue& attr_default(std::size_t op_index, std::size_t pos) {
  const AttrSpec& a = spec_at(op_index).attrs.at(pos);
  if (!a.default_value) throw std::logic_error("attribute " + std::string(a.name) + " has no default in its record");
  return *a.default_value;
}

const AttrValue& attr_default_named(const Node& n, std::string_view name) {
  const AttrSpec* a = n.spec().find_attr(name);
  if (!a || !a->default_value)
    throw std::logic_error("op '" + std::string(n.op()) + "': attribute " + std::string(name) + " has no default in its record");
  return *a->default_value;
}

}  // namespace opgraph::ops::detail
