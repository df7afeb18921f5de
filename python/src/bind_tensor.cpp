// python/src/bind_tensor.cpp — opgraph.tensor: cudnn.pygraph's tensor object.
//
// Getters/setters with cudnn's names (get_dim/set_dim, ...; setters return the
// tensor for chaining and raise FrozenGraphError once planning froze the graph)
// plus read-only properties (dims, strides, dtype, uid, name, ...). Dims and
// strides are in ELEMENTS. Identity: one Python object per C++ tensor, so a
// tensor is a dict key (variant packs) by identity.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.h"

namespace opgraph::py {
namespace {

std::string tensor_repr(const Tensor& t) {
  auto list = [](const std::vector<std::int64_t>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  std::string s = "{\"name\": \"" + t.get_name() + "\", \"uid\": " + std::to_string(t.get_uid()) +
                  ", \"dim\": " + list(t.get_dim()) + ", \"stride\": " + list(t.get_stride()) +
                  ", \"data_type\": \"" + std::string(to_string(t.get_data_type())) +
                  "\", \"is_virtual\": " + (t.get_is_virtual() ? "true" : "false");
  if (t.get_is_pass_by_value()) s += ", \"pass_by_value\": " + std::to_string(t.get_pass_by_value()->as_double());
  return s + "}";
}

}  // namespace

void bind_tensor(nb::module_& m) {
  nb::class_<Tensor> t(m, "tensor");
  t.def("get_dim", &Tensor::get_dim)
      .def("set_dim", &Tensor::set_dim, nb::arg("dim"), nb::rv_policy::reference)
      .def("get_stride", &Tensor::get_stride)
      .def("set_stride", &Tensor::set_stride, nb::arg("stride"), nb::rv_policy::reference)
      .def("get_data_type", &Tensor::get_data_type)
      .def("_set_data_type",
           [](Tensor& x, DataType t) -> Tensor& {
             if (is_unsupported_dtype(t))
               throw StatusError{Status(ErrorCode::INVALID_VALUE,
                                        unsupported_dtype_rule("tensor '" + x.get_name() + "'",
                                                               nb::cast<std::string>(nb::cast(t).attr("name"))))};
             return x.set_data_type(t);
           },
           nb::arg("data_type"), nb::rv_policy::reference)
      .def("get_name", &Tensor::get_name)
      .def("set_name", &Tensor::set_name, nb::arg("name"), nb::rv_policy::reference)
      .def("get_uid", &Tensor::get_uid)
      .def("set_uid", &Tensor::set_uid, nb::arg("uid"), nb::rv_policy::reference)
      .def("clear_uid", &Tensor::clear_uid, nb::rv_policy::reference)
      .def("has_uid", &Tensor::has_uid, "Whether the tensor has a uid (a user's, 0 included, or validate's).")
      .def("get_uid_assigned_by_user", &Tensor::get_uid_assigned_by_user)
      .def("get_is_virtual", &Tensor::get_is_virtual)
      .def("set_is_virtual", &Tensor::set_is_virtual, nb::arg("is_virtual"), nb::rv_policy::reference)
      .def("set_output", &Tensor::set_output, nb::arg("is_output"), nb::rv_policy::reference)
      .def("get_is_pass_by_value", &Tensor::get_is_pass_by_value)
      .def("get_pass_by_value",
           [](const Tensor& x) -> nb::object {
             const auto& v = x.get_pass_by_value();
             if (!v) return nb::none();
             if (is_floating(v->data_type)) return nb::float_(v->f);
             return nb::int_(v->i);
           })
      .def("get_ragged_offset", &Tensor::get_ragged_offset)
      .def("set_ragged_offset", &Tensor::set_ragged_offset, nb::arg("ragged_offset"), nb::rv_policy::reference)
      .def("get_reordering_type", &Tensor::get_reordering_type)
      .def("set_reordering_type", &Tensor::set_reordering_type, nb::arg("reordering_type"),
           nb::rv_policy::reference)
      .def("get_alignment", &Tensor::get_alignment)
      .def("set_alignment", &Tensor::set_alignment, nb::arg("alignment"), nb::rv_policy::reference)
      .def("get_element_count", &Tensor::element_count)
      .def_prop_ro("dims", &Tensor::get_dim)
      .def_prop_ro("dim", &Tensor::get_dim)
      .def_prop_ro("shape", [](const Tensor& x) {
        nb::list l;
        for (auto d : x.get_dim()) l.append(d);
        return nb::tuple(l);
      })
      .def_prop_ro("strides", &Tensor::get_stride)
      .def_prop_ro("stride", &Tensor::get_stride)
      .def_prop_ro("dtype", &Tensor::get_data_type)
      .def_prop_ro("data_type", &Tensor::get_data_type)
      .def_prop_ro("uid", &Tensor::get_uid)
      .def_prop_ro("name", &Tensor::get_name)
      .def_prop_ro("is_virtual", &Tensor::get_is_virtual)
      .def_prop_ro("is_pass_by_value", &Tensor::get_is_pass_by_value)
      .def_prop_ro("is_frozen", &Tensor::is_frozen)
      .def("__repr__", &tensor_repr);
  m.attr("Tensor") = t;
}

}  // namespace opgraph::py
