// python/src/bind_buffers.cpp — normalize_buffer (see buffers.h) and its Python view,
// opgraph._C._describe_buffer (used by pygraph.tensor_like and the tests).
#include "buffers.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace opgraph::py {
namespace {

DataType from_dlpack(nb::dlpack::dtype t) {
  using C = nb::dlpack::dtype_code;
  const auto code = static_cast<C>(t.code);
  if (t.lanes != 1) return DataType::NOT_SET;
  if (code == C::Float) return t.bits == 32 ? DataType::FLOAT : t.bits == 64 ? DataType::DOUBLE
                               : t.bits == 16 ? DataType::HALF : DataType::NOT_SET;
  if (code == C::Bfloat && t.bits == 16) return DataType::BFLOAT16;
  if (code == C::Int) return t.bits == 8 ? DataType::INT8 : t.bits == 32 ? DataType::INT32
                             : t.bits == 64 ? DataType::INT64 : DataType::NOT_SET;
  if (code == C::UInt && t.bits == 8) return DataType::UINT8;
  if (code == C::Bool) return DataType::BOOLEAN;
  return DataType::NOT_SET;
}

DataType from_typestr(const std::string& s) {
  if (s.size() < 3) return DataType::NOT_SET;
  const std::string k = s.substr(1);
  if (k == "f4") return DataType::FLOAT;
  if (k == "f8") return DataType::DOUBLE;
  if (k == "f2") return DataType::HALF;
  if (k == "i1") return DataType::INT8;
  if (k == "u1") return DataType::UINT8;
  if (k == "i4") return DataType::INT32;
  if (k == "i8") return DataType::INT64;
  if (k == "b1") return DataType::BOOLEAN;
  return DataType::NOT_SET;
}

// __cuda_array_interface__ / __array_interface__ dicts (strides in bytes, None = packed).
Buffer from_interface(nb::dict d, BufferDevice dev, const std::string& what) {
  Buffer b;
  b.device = dev;
  nb::tuple data = nb::cast<nb::tuple>(d["data"]);
  b.data = reinterpret_cast<void*>(nb::cast<std::uintptr_t>(data[0]));
  for (nb::handle e : nb::cast<nb::tuple>(d["shape"])) b.dims.push_back(nb::cast<std::int64_t>(e));
  std::string typestr = nb::cast<std::string>(d["typestr"]);
  b.dtype = from_typestr(typestr);
  std::int64_t item = std::stoll(typestr.substr(2));
  nb::object st = d.contains("strides") ? nb::borrow(d["strides"]) : nb::none();
  if (st.is_none()) {
    b.strides = Tensor::packed_strides(b.dims);
  } else {
    for (nb::handle e : nb::cast<nb::tuple>(st)) {
      std::int64_t bytes = nb::cast<std::int64_t>(e);
      if (bytes % item) throw nb::value_error((what + ": byte stride not a multiple of the element size").c_str());
      b.strides.push_back(bytes / item);
    }
  }
  std::int64_t n = 1;
  for (auto x : b.dims) n *= x;
  b.nbytes = n * item;
  if (b.dims.empty()) b.dims.push_back(1), b.strides.push_back(1);  // a 0-d array is one element
  return b;
}

// torch.Tensor once torch has been imported by the caller (a leaked reference: it
// lives as long as the interpreter), else null.
PyObject* g_torch_tensor_type = nullptr;

}  // namespace

bool is_torch_tensor(nb::handle v) {
  if (!g_torch_tensor_type) {  // until torch is imported: one sys.modules lookup per call, no string built
    static PyObject* s_torch = PyUnicode_InternFromString("torch");
    PyObject* torch = PyImport_GetModule(s_torch);  // only if already imported
    if (!torch) {
      PyErr_Clear();
      return false;
    }
    g_torch_tensor_type = PyObject_GetAttrString(torch, "Tensor");
    Py_DECREF(torch);
    if (!g_torch_tensor_type) {
      PyErr_Clear();
      return false;
    }
  }
  return PyObject_IsInstance(v.ptr(), g_torch_tensor_type) == 1;
}

static std::string operand_name(std::int64_t uid) {
  return uid < 0 ? std::string("buffer") : "variant pack entry for uid " + std::to_string(uid);
}

Buffer normalize_buffer(nb::handle v, std::int64_t uid, bool fast) {
  if (PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr())) {
    Buffer b;
    b.data = reinterpret_cast<void*>(nb::cast<std::uintptr_t>(v));
    return b;
  }
  if (fast && is_torch_tensor(v)) {  // two C-level calls, interned names, no DLPack capsule
    static PyObject* s_data_ptr = PyUnicode_InternFromString("data_ptr");
    static PyObject* s_is_cuda = PyUnicode_InternFromString("is_cuda");
    Buffer b;
    PyObject* ptr = PyObject_CallMethodNoArgs(v.ptr(), s_data_ptr);
    if (!ptr) throw nb::python_error();
    b.data = PyLong_AsVoidPtr(ptr);
    Py_DECREF(ptr);
    PyObject* cuda = PyObject_GetAttr(v.ptr(), s_is_cuda);
    if (!cuda) throw nb::python_error();
    b.device = cuda == Py_True ? BufferDevice::CUDA : BufferDevice::HOST;
    Py_DECREF(cuda);
    return b;
  }
  if (nb::hasattr(v, "__cuda_array_interface__"))
    return from_interface(nb::cast<nb::dict>(v.attr("__cuda_array_interface__")), BufferDevice::CUDA,
                          operand_name(uid));
  nb::ndarray<> a;
  if (nb::try_cast(v, a)) {
    Buffer b;
    b.data = a.data();
    b.dtype = from_dlpack(a.dtype());
    for (std::size_t i = 0; i < a.ndim(); ++i) {
      b.dims.push_back(static_cast<std::int64_t>(a.shape(i)));
      b.strides.push_back(static_cast<std::int64_t>(a.stride(i)));
    }
    if (b.dims.empty()) b.dims.push_back(1), b.strides.push_back(1);
    b.device = a.device_type() == nb::device::cpu::value ? BufferDevice::HOST
               : a.device_type() == nb::device::cuda::value ? BufferDevice::CUDA : BufferDevice::UNKNOWN;
    b.device_id = static_cast<int>(a.device_id());
    b.nbytes = static_cast<std::int64_t>(a.nbytes());
    return b;
  }
  if (nb::hasattr(v, "__array_interface__"))
    return from_interface(nb::cast<nb::dict>(v.attr("__array_interface__")), BufferDevice::HOST, operand_name(uid));
  throw nb::type_error((operand_name(uid) + ": expected an int address, a torch tensor, a numpy array, a __dlpack__ producer or "
                               "an object with __cuda_array_interface__, got " +
                        nb::cast<std::string>(nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(v.ptr()))))))
                           .c_str());
}

void bind_buffers(nb::module_& m) {
  m.def(
      "_describe_buffer",
      [](nb::handle v) {
        Buffer b = normalize_buffer(v, -1, false);
        nb::dict d;
        d["data"] = reinterpret_cast<std::uintptr_t>(b.data);
        d["dims"] = b.dims;
        d["strides"] = b.strides;
        d["data_type"] = nb::cast(b.dtype);
        d["device"] = b.device == BufferDevice::HOST ? "cpu" : b.device == BufferDevice::CUDA ? "cuda" : "unknown";
        d["nbytes"] = b.nbytes;
        d["device_id"] = b.device_id;
        return d;
      },
      nb::arg("obj"), "What execute() reads from a buffer: address, dims/strides (elements), dtype, device (and its ordinal, "
      "-1 when the buffer does not say), bytes.");
}

}  // namespace opgraph::py
