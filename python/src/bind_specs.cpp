// python/src/bind_specs.cpp — the op records and graph nodes, read from Python.
//
// opgraph._C.op_specs() lists every OpSpec (ports, outputs, attributes with their
// types, defaults and domains): opgraph/_builders.py generates the pygraph builder
// methods from it. pointwise_builders() is the 54-name pointwise table.
// opgraph.node is the read-only view of one node (op, name, ports, attributes).
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "common.h"
#include "opgraph/builders/pointwise.h"

namespace opgraph::py {

// An AttrValue as the natural Python value (bool, int, float, str, list).
nb::object attr_to_python(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> nb::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return nb::bool_(x);
        else if constexpr (std::is_same_v<T, std::int64_t>) return nb::int_(x);
        else if constexpr (std::is_same_v<T, double>) return nb::float_(x);
        else if constexpr (std::is_same_v<T, std::string>) return nb::str(x.c_str());
        else {
          nb::list l;
          for (auto e : x) l.append(e);
          return l;
        }
      },
      v);
}

namespace {

nb::dict spec_to_python(const OpSpec& s) {
  nb::dict d;
  d["name"] = nb::str(std::string(s.name).c_str());
  d["mechanism"] = nb::str(std::string(to_string(s.mechanism)).c_str());
  d["backend_lowerable"] = s.backend_lowerable;
  d["summary"] = nb::str(std::string(s.summary).c_str());
  nb::list ins, outs, attrs;
  for (const auto& p : s.inputs) {
    nb::dict pd;
    pd["name"] = nb::str(std::string(p.name).c_str());
    pd["optional"] = p.optional;
    pd["list"] = p.list;
    ins.append(pd);
  }
  for (const auto& o : s.outputs) {
    nb::dict od;
    od["name"] = nb::str(std::string(o.name).c_str());
    od["conditional"] = o.present != nullptr;
    outs.append(od);
  }
  for (const auto& a : s.attrs) {
    nb::dict ad;
    ad["name"] = nb::str(std::string(a.name).c_str());
    ad["type"] = nb::str(std::string(to_string(a.type)).c_str());
    ad["default"] = a.default_value ? attr_to_python(*a.default_value) : nb::none();
    ad["required"] = a.required;
    nb::list dom;
    for (auto e : a.enum_values) dom.append(nb::str(std::string(e).c_str()));
    ad["enum_values"] = dom;
    attrs.append(ad);
  }
  d["inputs"] = ins;
  d["outputs"] = outs;
  d["attrs"] = attrs;
  return d;
}

nb::dict ports_to_python(const std::vector<PortSpec>& specs, const std::vector<std::vector<TensorPtr>>& bound) {
  nb::dict d;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& ts = bound[i];
    if (ts.empty()) continue;
    nb::str key(std::string(specs[i].name).c_str());
    if (specs[i].list) d[key] = nb::cast(ts);
    else d[key] = nb::cast(ts.front());
  }
  return d;
}

}  // namespace

void bind_specs(nb::module_& m) {
  m.def("op_specs", [] {
    nb::list l;
    for (const OpSpec* s : all_op_specs()) l.append(spec_to_python(*s));
    return l;
  }, "Every op record: name, mechanism, inputs, outputs, attrs (type, default, domain).");

  m.def("pointwise_builders", [] {
    nb::list l;
    for (const auto& e : pointwise_builder_table()) {
      const auto& info = pointwise_mode_info(e.mode);
      nb::dict d;
      d["builder"] = nb::str(std::string(e.builder).c_str());
      d["mode"] = nb::str(std::string(info.name).c_str());
      d["arity"] = info.arity;
      d["is_backward"] = info.traits.is_backward;
      d["is_comparison"] = info.traits.is_comparison;
      d["is_logical"] = info.traits.is_logical;
      d["uses_axis"] = info.traits.uses_axis;
      d["uses_relu_clip"] = info.traits.uses_relu_clip;
      d["uses_swish_beta"] = info.traits.uses_swish_beta;
      d["uses_elu_alpha"] = info.traits.uses_elu_alpha;
      d["uses_softplus_beta"] = info.traits.uses_softplus_beta;
      l.append(d);
    }
    return l;
  }, "The 54 pointwise builder names with their mode, arity and traits.");

  nb::class_<Node>(m, "node")
      .def_prop_ro("op", [](const Node& n) { return std::string(n.op()); })
      .def_prop_ro("name", &Node::name)
      .def_prop_ro("compute_data_type", &Node::compute_data_type)
      .def_prop_ro("mechanism", [](const Node& n) { return std::string(to_string(n.spec().mechanism)); })
      .def_prop_ro("inputs", [](const Node& n) { return ports_to_python(n.spec().inputs, n.inputs()); },
                   "Bound inputs by port name (a list for a list port).")
      .def_prop_ro("outputs",
                   [](const Node& n) {
                     nb::dict d;
                     for (std::size_t i = 0; i < n.spec().outputs.size(); ++i)
                       if (!n.outputs()[i].empty())
                         d[nb::str(std::string(n.spec().outputs[i].name).c_str())] = nb::cast(n.outputs()[i].front());
                     return d;
                   },
                   "Produced outputs by port name (a conditional output not produced is absent).")
      .def_prop_ro("attributes",
                   [](const Node& n) {
                     nb::dict d;
                     for (const auto& [k, v] : n.attributes().values()) d[nb::str(k.c_str())] = attr_to_python(v);
                     return d;
                   },
                   "Attributes as set by the builder (defaults not filled in).")
      .def("get_attribute",
           [](const Node& n, const std::string& key) -> nb::object {
             const AttrValue* v = n.attr(key);
             return v ? attr_to_python(*v) : nb::none();
           },
           nb::arg("key"), "The attribute as set, else the record's default, else None.")
      .def("__repr__", [](const Node& n) { return "<opgraph.node " + std::string(n.op()) + " '" + n.name() + "'>"; });
}

}  // namespace opgraph::py
