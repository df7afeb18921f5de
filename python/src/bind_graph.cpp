// python/src/bind_graph.cpp — the IR half of the graph class (opgraph._C._GraphBase).
//
// opgraph.pygraph (opgraph/_graph.py) derives from this class and adds the
// cudnn.pygraph keyword surface. Here: context, tensors, the ONE generic node
// path (_add_node: op name, inputs by port, attributes by name, converted by the
// record's declared attribute types), validate, JSON, key, introspection.
// Planning/execution methods are added to the same class by bind_plans.cpp.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.h"

namespace opgraph::py {

nb::object attr_to_python(const AttrValue& v);  // bind_specs.cpp

namespace {

std::string type_error_text(std::string_view op, std::string_view attr, std::string_view want, nb::handle v) {
  return std::string(op) + ": attribute '" + std::string(attr) + "' expects " + std::string(want) + ", got " +
         nb::cast<std::string>(nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(v.ptr())))));
}

std::vector<std::int64_t> int_list(nb::handle v) {
  std::vector<std::int64_t> out;
  for (nb::handle e : v) out.push_back(nb::cast<std::int64_t>(e));
  return out;
}

// A Python value as the AttrValue the record declares (by its own Python type when undeclared:
// validate() then reports the unknown name, as the C++ builders do).
AttrValue to_attr(const OpSpec& spec, const std::string& name, nb::handle v) {
  const AttrSpec* a = spec.find_attr(name);
  // Enums (opgraph._enums or C++ enums) travel as their member name.
  if (nb::hasattr(v, "name") && nb::hasattr(v, "value") && !nb::isinstance<nb::str>(v))
    v = v.attr("name");
  if (!a) {
    if (nb::isinstance<nb::bool_>(v)) return nb::cast<bool>(v);
    if (nb::isinstance<nb::int_>(v)) return nb::cast<std::int64_t>(v);
    if (nb::isinstance<nb::float_>(v)) return nb::cast<double>(v);
    if (nb::isinstance<nb::str>(v)) return nb::cast<std::string>(v);
    return int_list(v);
  }
  try {
    switch (a->type) {
      case AttrType::BOOL: return nb::cast<bool>(v);
      case AttrType::INT:
        if (nb::isinstance<nb::float_>(v)) break;
        return nb::cast<std::int64_t>(v);
      case AttrType::FLOAT: return nb::cast<double>(v);
      case AttrType::STRING:
      case AttrType::ENUM: return nb::cast<std::string>(v);
      case AttrType::INT_LIST:
        if (nb::isinstance<nb::int_>(v)) return std::vector<std::int64_t>{nb::cast<std::int64_t>(v)};
        return int_list(v);
      case AttrType::FLOAT_LIST: {
        std::vector<double> out;
        if (nb::isinstance<nb::float_>(v) || nb::isinstance<nb::int_>(v)) return std::vector<double>{nb::cast<double>(v)};
        for (nb::handle e : v) out.push_back(nb::cast<double>(e));
        return out;
      }
    }
  } catch (const nb::cast_error&) {
  } catch (const nb::python_error&) {
  }
  throw nb::type_error(type_error_text(spec.name, name, to_string(a->type), v).c_str());
}

nb::list add_node(PyGraph& g, const std::string& op, nb::dict inputs, nb::dict attrs, DataType compute,
                  const std::string& name) {
  const OpSpec* spec = find_op_spec(op);
  if (!spec) throw nb::value_error(("unknown op '" + op + "'").c_str());
  std::vector<PortArg> args;
  for (auto [k, v] : inputs) {
    std::string port = nb::cast<std::string>(k);
    const PortSpec* ps = spec->find_input(port);
    if (!ps) throw nb::value_error((op + ": unknown input port '" + port + "'").c_str());
    if (v.is_none()) continue;
    if (ps->list) args.emplace_back(ps->name, nb::cast<std::vector<TensorPtr>>(v));
    else args.emplace_back(ps->name, nb::cast<TensorPtr>(v));
  }
  Attributes a;
  a.set_name(name).set_compute_data_type(compute);
  for (auto [k, v] : attrs) {
    if (v.is_none()) continue;
    std::string key = nb::cast<std::string>(k);
    a.set(key, to_attr(*spec, key, v));
  }
  std::vector<TensorPtr> outs = g.add_node(spec->name, std::move(args), a);
  nb::list l;
  for (auto& t : outs) l.append(t ? nb::cast(t) : nb::none());
  return l;
}

TensorPtr make_tensor(PyGraph& g, std::vector<std::int64_t> dim, std::vector<std::int64_t> stride, DataType dtype,
                      bool is_virtual, nb::object value, ScalarKind kind, TensorPtr ragged_offset,
                      TensorReordering reordering, const std::string& name, std::int64_t uid) {
  Tensor a;
  if (!dim.empty()) {
    if (stride.empty()) stride = Tensor::packed_strides(dim);
    a.set_dim(std::move(dim)).set_stride(std::move(stride));
  } else if (!stride.empty()) {
    a.set_stride(std::move(stride));
  }
  if (is_unsupported_dtype(dtype))
    throw StatusError{Status(ErrorCode::INVALID_VALUE,
                             unsupported_dtype_rule("tensor '" + name + "'", nb::cast<std::string>(nb::cast(dtype).attr("name"))))};
  if (dtype != DataType::NOT_SET) a.set_data_type(dtype);
  a.set_is_virtual(is_virtual).set_name(name).set_reordering_type(reordering);
  // -1: no user uid (cudnn's default); 0 is a real uid, as in cudnn-frontend.
  if (uid >= 0) a.set_uid(uid);
  else if (uid != -1)
    throw StatusError{Status(ErrorCode::INVALID_VALUE,
                             "tensor '" + name + "': uid must be 0 or more (-1: none), got " + std::to_string(uid))};
  if (ragged_offset) a.set_ragged_offset(std::move(ragged_offset));
  if (!value.is_none()) {
    ScalarValue v;
    v.data_type = dtype == DataType::NOT_SET ? DataType::FLOAT : dtype;
    v.kind = kind;
    auto refuse = [&](const std::string& why) {
      return StatusError{Status(ErrorCode::INVALID_VALUE, "tensor '" + name + "': pass-by-value value " +
                                                              nb::cast<std::string>(nb::repr(value)) + " " + why)};
    };
    if (PyLong_Check(value.ptr()) || PyIndex_Check(value.ptr())) {  // int, bool, numpy integers
      nb::object index = nb::steal(PyNumber_Index(value.ptr()));
      if (!index.is_valid()) throw nb::python_error();
      int overflow = 0;
      const long long i = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
      if (i == -1 && PyErr_Occurred()) throw nb::python_error();
      if (overflow) throw refuse("is outside the 64-bit integer range (pass a float for a floating scalar)");
      v.i = i;
      v.f = static_cast<double>(v.i);
    } else if (double f; !PyComplex_Check(value.ptr()) && nb::try_cast(value, f)) {  // float, numpy scalars, __float__
      v.f = f;
      v.i = static_cast<std::int64_t>(v.f);
    } else {
      throw refuse("is not a real number (a scalar is an int, float or bool, or a numpy scalar of one)");
    }
    a.set_pass_by_value(v);
  }
  return g.tensor(a);
}

}  // namespace

nb::class_<PyGraph> bind_graph(nb::module_& m) {
  nb::class_<PyGraph> cls(m, "_GraphBase");
  cls.def(nb::init<>())
      .def("_set_context",
           [](PyGraph& g, const std::string& name, DataType io, DataType inter, DataType compute) {
             g.set_name(name).set_io_data_type(io).set_intermediate_data_type(inter).set_compute_data_type(compute);
           })
      .def_prop_ro("context",
                   [](const PyGraph& g) {
                     nb::dict d;
                     d["name"] = g.context().name;
                     d["io_data_type"] = nb::cast(g.context().io_data_type);
                     d["intermediate_data_type"] = nb::cast(g.context().intermediate_data_type);
                     d["compute_data_type"] = nb::cast(g.context().compute_data_type);
                     return d;
                   })
      .def("_tensor", &make_tensor, nb::arg("dim"), nb::arg("stride"), nb::arg("data_type"), nb::arg("is_virtual"),
           nb::arg("value").none(), nb::arg("scalar_kind"), nb::arg("ragged_offset").none(),
           nb::arg("reordering_type"), nb::arg("name"), nb::arg("uid"))
      .def("_tensor_like", [](PyGraph& g, TensorPtr t, const std::string& name) { return g.tensor_like(t, name); })
      .def("_add_node", &add_node, nb::arg("op"), nb::arg("inputs"), nb::arg("attrs"), nb::arg("compute_data_type"),
           nb::arg("name"))
      .def("validate", [](PyGraph& g) { throw_if(g.validate()); },
           "Shape/dtype inference and every op's rules; GraphNotSupportedError or ValueError naming the "
           "op, node, port, tensor and rule.")
      .def("freeze", &PyGraph::freeze)
      .def_prop_ro("is_validated", &PyGraph::is_validated)
      .def_prop_ro("is_frozen", &PyGraph::is_frozen)
      .def_prop_ro("tensors", [](const PyGraph& g) { return g.tensors(); })
      .def_prop_ro("nodes", [](const PyGraph& g) { return g.nodes(); })
      .def("tensor_by_uid", [](const PyGraph& g, std::int64_t uid) { return g.tensor_by_uid(uid); }, nb::arg("uid"))
      .def("query_tensor_attributes_of_uid", [](const PyGraph& g, std::int64_t uid) {
             TensorPtr t = g.tensor_by_uid(uid);
             if (!t) throw StatusError{Status(ErrorCode::INVALID_VALUE, "no tensor has uid " + std::to_string(uid))};
             return t;
           }, nb::arg("uid"))
      .def("producer_of", [](const PyGraph& g, const TensorPtr& t) -> nb::object {
             for (const auto& n : g.nodes())
               if (n.get() == g.producer_of(t.get())) return nb::cast(n);
             return nb::none();
           }, nb::arg("tensor"))
      .def("_serialize", [](PyGraph& g) { return unwrap(g.serialize()); })
      .def("_deserialize_into", [](PyGraph& g, const std::string& text) {
             // Planned for shape overrides is the Python object's (its constructor's): kept.
             const bool dynamic = g.dynamic_shapes();
             g.replace_with(unwrap(CoreGraph::deserialize(text)));
             g.set_dynamic_shapes(dynamic);
           })
      .def("key", [](PyGraph& g) { return unwrap(g.key()); }, "64-bit hash of the canonical graph JSON.");
  return cls;
}

}  // namespace opgraph::py
