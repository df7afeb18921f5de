// python/src/bind_handle.cpp — create_handle / destroy_handle / set_stream / get_stream.
//
// create_handle(device=None) binds the handle to a CUDA device as cudnn.pygraph's does:
// `device` is an int ordinal or a torch.device; None is torch's current device when
// torch is imported and CUDA is available there, else device 0. When the device
// cannot be read (no libcuda, no GPU) the handle is host-only, not an error, so
// host code keeps working on machines without a GPU.
// set_stream accepts an integer stream address, or any object with a
// `cuda_stream` attribute (torch.cuda.Stream) or a `__cuda_stream__` protocol
// method (returns (version, address)).
#include <map>
#include <mutex>

#include <nanobind/stl/string.h>

#include "buffers.h"
#include "handle.h"
#include "opgraph/device.h"
#include "opgraph/engine_info.h"

namespace opgraph::py {

const Result<DeviceProperties>& device_properties_of(int ordinal) {
  static std::mutex mu;
  static std::map<int, Result<DeviceProperties>> cache;  // lives as long as the process
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(ordinal);
  if (it == cache.end()) it = cache.emplace(ordinal, read_device(ordinal)).first;
  return it->second;
}

namespace {

std::uintptr_t stream_address(nb::handle s) {
  static constexpr BufferRole kWho{nullptr, -1, "set_stream: stream"};
  auto address = [](nb::handle a) {
    if (!PyLong_Check(a.ptr())) throw nb::type_error("set_stream: a stream address must be an int");
    return reinterpret_cast<std::uintptr_t>(address_of(a, kWho));
  };
  if (s.is_none()) return 0;
  if (nb::isinstance<nb::int_>(s)) return address(s);
  if (nb::hasattr(s, "__cuda_stream__")) {
    nb::tuple t;
    if (!nb::try_cast(s.attr("__cuda_stream__")(), t) || t.size() != 2)
      throw nb::type_error("set_stream: __cuda_stream__() must return (version, address)");
    return address(t[1]);
  }
  if (nb::hasattr(s, "cuda_stream")) return address(s.attr("cuda_stream"));
  throw nb::type_error("set_stream: stream must be an int address, a torch.cuda.Stream or a __cuda_stream__ object");
}

// torch's current CUDA device when torch is imported and has CUDA, else -1.
int torch_current_device() {
  PyObject* torch = PyImport_GetModule(nb::str("torch").ptr());
  if (!torch) {
    PyErr_Clear();
    return -1;
  }
  nb::object t = nb::steal(torch);
  try {
    nb::object cuda = t.attr("cuda");
    if (!nb::cast<bool>(cuda.attr("is_available")())) return -1;
    return nb::cast<int>(cuda.attr("current_device")());
  } catch (const nb::python_error&) {
    return -1;
  }
}

int ordinal_of(nb::handle device) {
  if (device.is_none()) {
    int d = torch_current_device();
    return d < 0 ? 0 : d;
  }
  if (nb::isinstance<nb::int_>(device)) return nb::cast<int>(device);
  if (nb::hasattr(device, "index")) {  // torch.device("cuda:1"); torch.device("cuda") is the current one
    nb::object idx = device.attr("index");
    if (idx.is_none()) return ordinal_of(nb::none());
    return nb::cast<int>(idx);
  }
  throw nb::type_error("create_handle: device must be None, an int ordinal or a torch.device");
}

PyHandle* make_handle(nb::handle device) {
  auto* h = new PyHandle();
  const int ordinal = ordinal_of(device);
  const auto& props = device_properties_of(ordinal);
  if (props.is_good()) {
    h->device_props = props.value();
    h->ordinal = ordinal;
  } else {
    h->device_error = props.status().message();
  }
  if (h->ordinal < 0 && !device.is_none()) {  // an explicit device that cannot be read is an error
    std::string why = h->device_error;
    delete h;
    throw StatusError{Status(ErrorCode::INVALID_CUDA_DEVICE,
                             "create_handle: device " + std::to_string(ordinal) + " cannot be used: " + why)};
  }
  return h;
}

}  // namespace

void bind_handle(nb::module_& m) {
  nb::class_<PyHandle>(m, "handle")
      .def_prop_ro("stream", [](const PyHandle& h) { return h.stream_value; })
      .def_prop_ro("device", [](const PyHandle& h) -> nb::object {
        if (h.ordinal < 0) return nb::none();
        return nb::int_(h.ordinal);
      }, "The CUDA device ordinal the handle drives; None for a host-only handle.")
      .def_prop_ro("device_name", [](const PyHandle& h) { return h.device_props ? h.device_props->name : std::string(); })
      .def_prop_ro("device_error", [](const PyHandle& h) { return h.device_error; },
                   "Why the handle is host-only (\"\" when it drives a device).")
      .def("__repr__", [](const PyHandle& h) {
        return "<opgraph.handle device=" + (h.ordinal < 0 ? std::string("host") : std::to_string(h.ordinal)) +
               " stream=" + std::to_string(h.stream_value) + (h.destroyed ? " destroyed>" : ">");
      });
  // The cuDNN library the runtime's loader finds (and loads; the process keeps it): its
  // version in cuDNN's own encoding (91400 for 9.14.0), 0 when none loads. Asked once.
  m.def("_backend_version", [] {
    static const std::int64_t version = [] {
      for (const LibraryInfo& lib : probe_gpu_libraries())
        if (lib.name == "libcudnn" && lib.found) return lib.version;
      return std::int64_t{0};
    }();
    return version;
  });
  // create_device_properties: device `ordinal`'s properties as JSON, and JSON read back
  // into the canonical spelling (UNSUPPORTED_GRAPH_FORMAT naming a bad key).
  m.def("_device_properties_of", [](int ordinal) {
          Result<DeviceProperties> r = device_properties_of(ordinal);
          return unwrap(std::move(r)).to_json();
        },
        nb::arg("ordinal"));
  m.def("_canonical_device_properties",
        [](const std::string& text) { return unwrap(DeviceProperties::from_json(text)).to_json(); }, nb::arg("json"));
  m.def("_device_properties_for_arch",
        [](const std::string& arch) { return unwrap(DeviceProperties::for_arch(arch)).to_json(); }, nb::arg("arch"));
  m.def("create_handle", &make_handle, nb::arg("device").none() = nb::none(), nb::rv_policy::take_ownership,
        "A handle on the current CUDA device (torch's current device, or `device`) carrying a stream (the "
        "default stream until set_stream); host-only, without error, when no device can be read and none was named.");
  m.def("destroy_handle", [](PyHandle& h) { h.destroyed = true; }, nb::arg("handle"));
  m.def("set_stream",
        [](PyHandle& h, nb::handle stream) { h.stream_value = stream_address(stream); },
        nb::arg("handle"), nb::arg("stream"));
  m.def("get_stream", [](const PyHandle& h) { return h.stream_value; }, nb::arg("handle"));
}

}  // namespace opgraph::py
