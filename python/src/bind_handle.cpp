// python/src/bind_handle.cpp — create_handle / destroy_handle / set_stream / get_stream.
//
// set_stream accepts an integer stream address, or any object with a
// `cuda_stream` attribute (torch.cuda.Stream) or a `__cuda_stream__` protocol
// method (returns (version, address)).
#include "handle.h"

namespace opgraph::py {
namespace {

std::uintptr_t stream_address(nb::handle s) {
  if (s.is_none()) return 0;
  if (nb::isinstance<nb::int_>(s)) return nb::cast<std::uintptr_t>(s);
  if (nb::hasattr(s, "__cuda_stream__")) {
    nb::tuple t = nb::cast<nb::tuple>(s.attr("__cuda_stream__")());
    return nb::cast<std::uintptr_t>(t[1]);
  }
  if (nb::hasattr(s, "cuda_stream")) return nb::cast<std::uintptr_t>(s.attr("cuda_stream"));
  throw nb::type_error("set_stream: stream must be an int address, a torch.cuda.Stream or a __cuda_stream__ object");
}

}  // namespace

void bind_handle(nb::module_& m) {
  nb::class_<PyHandle>(m, "handle")
      .def_prop_ro("stream", [](const PyHandle& h) { return h.stream_value; })
      .def("__repr__", [](const PyHandle& h) {
        return "<opgraph.handle stream=" + std::to_string(h.stream_value) + (h.destroyed ? " destroyed>" : ">");
      });
  m.def("create_handle", [] { return new PyHandle(); }, nb::rv_policy::take_ownership,
        "A handle carrying a stream (the default stream until set_stream). Host-only until the GPU runtime lands.");
  m.def("destroy_handle", [](PyHandle& h) { h.destroyed = true; }, nb::arg("handle"));
  m.def("set_stream",
        [](PyHandle& h, nb::handle stream) { h.stream_value = stream_address(stream); },
        nb::arg("handle"), nb::arg("stream"));
  m.def("get_stream", [](const PyHandle& h) { return h.stream_value; }, nb::arg("handle"));
}

}  // namespace opgraph::py
