// python/src/bind_buffers.cpp — normalize_buffer (see buffers.h) and its Python view,
// opgraph._C._describe_buffer (used by pygraph.tensor_like and the tests).
#include "buffers.h"
#include "dtype_names.h"

#include <bit>
#include <string_view>

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace opgraph::py {
namespace {

// The core's one DLPack type table (opgraph/variant_pack.h), for nanobind's spelling.
DataType from_dlpack(nb::dlpack::dtype t) {
  return data_type_of(DLDataType{t.code, t.bits, t.lanes}).value_or(DataType::NOT_SET);
}

// A DLPack type's name for messages: "complex64", "uint32", "float16x2", "DLPack code 9 (8 bits)".
std::string dlpack_name(nb::dlpack::dtype t) {
  using C = nb::dlpack::dtype_code;
  const char* base = nullptr;
  switch (static_cast<C>(t.code)) {
    case C::Int: base = "int"; break;
    case C::UInt: base = "uint"; break;
    case C::Float: base = "float"; break;
    case C::Bfloat: base = "bfloat"; break;
    case C::Complex: base = "complex"; break;
    case C::Bool: base = "bool"; break;
    default: break;
  }
  std::string s;
  if (base) {
    s = base;
    s += std::to_string(t.bits);
  } else {
    s = "DLPack code ";
    s += std::to_string(t.code);
    s += " (";
    s += std::to_string(t.bits);
    s += " bits)";
  }
  if (t.lanes != 1) {
    s += 'x';
    s += std::to_string(t.lanes);
  }
  return s;
}

// numpy typestr ('<f4', '|u1'): the type when opgraph has one (the spelling table,
// dtype_names.h) and the byte order is the host's.
DataType from_typestr(const std::string& s) {
  if (s.size() < 3) return DataType::NOT_SET;
  const char order = s[0];
  const char foreign_order = std::endian::native == std::endian::little ? '>' : '<';
  if (order == foreign_order) return DataType::NOT_SET;  // bytes swapped: never read as the host's type
  return dtype_from(std::string_view(s).substr(1), kTypestr);
}

// A torch tensor's dtype, through a cache keyed by the torch.dtype object (torch's dtypes
// are singletons that live as long as the interpreter; the cache holds a reference).
void read_torch_dtype(PyObject* v, Buffer& b) {
  static PyObject* s_dtype = PyUnicode_InternFromString("dtype");
  struct Seen {
    PyObject* dtype;
    DataType type;
    std::string name;  // "torch.int16" when opgraph has no type for it
  };
  static std::vector<Seen> seen;  // a handful of entries; guarded by the GIL
  nb::object dt = nb::steal(PyObject_GetAttr(v, s_dtype));
  if (!dt.is_valid()) throw nb::python_error();
  for (const Seen& s : seen)
    if (s.dtype == dt.ptr()) {
      b.dtype = s.type;
      if (s.type == DataType::NOT_SET) b.foreign_dtype = s.name;
      return;
    }
  std::string name = nb::cast<std::string>(nb::str(dt));
  DataType t = dtype_from(std::string_view(name).substr(name.rfind('.') + 1), kTorchName);
  seen.push_back({dt.release().ptr(), t, name});
  b.dtype = t;
  if (t == DataType::NOT_SET) b.foreign_dtype = name;
}

// __cuda_array_interface__ / __array_interface__ dicts (strides in bytes, None = packed;
// data = (address, readonly)). A malformed dict is a TypeError naming `who`.
Buffer from_interface(nb::handle iface, BufferDevice dev, const BufferRole& who, const char* kind) {
  auto malformed = [&](const std::string& why) {
    return nb::type_error((who.text() + ": malformed " + kind + " (" + why + ")").c_str());
  };
  Buffer b;
  b.device = dev;
  nb::dict d;
  if (!nb::try_cast(iface, d)) throw malformed("not a dict");
  if (!d.contains("data") || !d.contains("shape") || !d.contains("typestr")) throw malformed("needs data, shape, typestr");
  nb::sequence data;  // tuples by the protocols' word; any sequence is read
  if (!nb::try_cast(d["data"], data) || nb::len(data) != 2) throw malformed("data must be (address, readonly)");
  if (!PyLong_Check(data[0].ptr())) throw malformed("data's address must be an int");
  b.data = address_of(data[0], who);
  b.read_only = PyObject_IsTrue(data[1].ptr()) == 1;
  nb::sequence shape;
  if (!nb::try_cast(d["shape"], shape)) throw malformed("shape must be a tuple");
  for (nb::handle e : shape) {
    std::int64_t x;
    if (!nb::try_cast(e, x) || x < 0) throw malformed("shape entries must be non-negative ints");
    b.dims.push_back(x);
  }
  std::string typestr;
  if (!nb::try_cast(d["typestr"], typestr) || typestr.size() < 3) throw malformed("typestr must be like '<f4'");
  b.dtype = from_typestr(typestr);
  if (b.dtype == DataType::NOT_SET) b.foreign_dtype = typestr;
  std::int64_t item = 0;
  for (char c : typestr.substr(2)) {
    if (c < '0' || c > '9' || item > (1 << 20)) throw malformed("typestr must be like '<f4'");
    item = item * 10 + (c - '0');
  }
  if (item <= 0) throw malformed("typestr must be like '<f4'");
  nb::object st = d.contains("strides") ? nb::borrow(d["strides"]) : nb::none();
  if (st.is_none()) {
    b.strides = Tensor::packed_strides(b.dims);
  } else {
    nb::sequence strides;
    if (!nb::try_cast(st, strides) || nb::len(strides) != b.dims.size()) throw malformed("strides must match shape");
    for (nb::handle e : strides) {
      std::int64_t bytes;
      if (!nb::try_cast(e, bytes)) throw malformed("strides must be ints");
      if (bytes % item) throw nb::value_error((who.text() + ": byte stride not a multiple of the element size").c_str());
      b.strides.push_back(bytes / item);
    }
  }
  std::int64_t n = 1;
  for (auto x : b.dims) n *= x;
  b.nbytes = n * item;
  if (b.dims.empty()) b.dims.push_back(1), b.strides.push_back(1);  // a 0-d array is one element
  return b;
}

// A buffer nanobind imported (DLPack or the buffer protocol).
template <class Array>
Buffer from_ndarray(const Array& a, bool read_only) {
  Buffer b;
  b.data = const_cast<void*>(static_cast<const void*>(a.data()));
  b.dtype = from_dlpack(a.dtype());
  if (b.dtype == DataType::NOT_SET) b.foreign_dtype = dlpack_name(a.dtype());
  for (std::size_t i = 0; i < a.ndim(); ++i) {
    b.dims.push_back(static_cast<std::int64_t>(a.shape(i)));
    b.strides.push_back(static_cast<std::int64_t>(a.stride(i)));
  }
  if (b.dims.empty()) b.dims.push_back(1), b.strides.push_back(1);
  b.device = a.device_type() == nb::device::cpu::value ? BufferDevice::HOST
             : a.device_type() == nb::device::cuda::value ? BufferDevice::CUDA : BufferDevice::UNKNOWN;
  b.device_id = static_cast<int>(a.device_id());
  b.nbytes = static_cast<std::int64_t>(a.nbytes());
  b.read_only = read_only;
  return b;
}

// torch.Tensor once torch has been imported by the caller (a leaked reference: it
// lives as long as the interpreter), else null.
PyObject* g_torch_tensor_type = nullptr;

// DLPack 1.3's C exchange table (DLPackExchangeAPI, the spec's C layout): a producer type
// offers it as a class attribute so a consumer reads a tensor's DLTensor with one C call
// instead of several Python attribute calls. Only its non-owning view is used here.
struct ExchangeHeader {
  std::uint32_t major, minor;  // DLPackVersion
  ExchangeHeader* prev_api;
};
using DLTensorFromPy = int (*)(void* py_object, DLTensor* out);  // 0, or -1 with a Python error set
struct ExchangeApi {
  ExchangeHeader header;
  void* managed_tensor_allocator;
  void* managed_tensor_from_py_object_no_sync;
  void* managed_tensor_to_py_object_no_sync;
  DLTensorFromPy dltensor_from_py_object_no_sync;  // may be null
  void* current_work_stream;
};

// torch.Tensor's dltensor_from_py_object_no_sync, looked up once (torch >= 2.10:
// __dlpack_c_exchange_api__, a capsule named "dlpack_exchange_api"; the earlier spelling
// __c_dlpack_exchange_api__, a capsule or the table's address as an int), or null (an
// older torch: execute reads the tensor's attributes instead, read_torch).
DLTensorFromPy g_torch_dl = nullptr;
bool g_torch_dl_looked = false;
bool g_torch_dl_enabled = true;  // _C._torch_exchange_api(False) turns it off (tests, bench A/B)

DLTensorFromPy torch_exchange() {
  if (!g_torch_dl_looked && g_torch_tensor_type) {
    g_torch_dl_looked = true;
    for (const char* name : {"__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"}) {
      PyObject* a = PyObject_GetAttrString(g_torch_tensor_type, name);
      if (!a) {
        PyErr_Clear();
        continue;
      }
      const ExchangeApi* api = nullptr;
      if (PyCapsule_CheckExact(a)) api = static_cast<const ExchangeApi*>(PyCapsule_GetPointer(a, "dlpack_exchange_api"));
      else if (PyLong_Check(a)) api = static_cast<const ExchangeApi*>(PyLong_AsVoidPtr(a));
      if (!api) PyErr_Clear();
      Py_DECREF(a);  // the table itself is static in the producer, alive for the process
      if (api && api->header.major == 1 && api->dltensor_from_py_object_no_sync) {
        g_torch_dl = api->dltensor_from_py_object_no_sync;
        break;
      }
    }
  }
  return g_torch_dl_enabled ? g_torch_dl : nullptr;
}

// read_torch from the exchange table's DLTensor: the same Buffer the attribute reads give
// (data_ptr, is_cuda, is_contiguous() and nbytes, or shape and stride()), the dtype already
// read from the tensor. False: a view it does not describe as they would (an element size
// other than the dtype's, no shape): read_torch reads the attributes instead.
bool from_exchange(const DLTensor& dl, Buffer& b, bool by_address) {
  if (dl.ndim < 0 || dl.ndim > 64 || (dl.ndim > 0 && !dl.shape)) return false;
  if (dl.dtype.lanes != 1 || dl.dtype.bits != bits_of(b.dtype)) return false;
  b.data = static_cast<char*>(dl.data) + dl.byte_offset;
  b.device = dl.device.device_type == kDLCUDA || dl.device.device_type == kDLROCM ? BufferDevice::CUDA
                                                                                   : BufferDevice::HOST;
  const int rank = static_cast<int>(dl.ndim);
  std::int64_t numel = 1;
  bool contiguous = true;  // torch's is_contiguous(): extents of 1 and empty tensors ignore strides
  for (int i = 0; i < rank; ++i)
    if (dl.shape[i] < 0 || __builtin_mul_overflow(numel, dl.shape[i], &numel)) return false;
  if (numel != 0 && dl.strides) {
    std::int64_t expected = 1;
    for (int i = rank - 1; i >= 0; --i) {
      if (dl.shape[i] == 1) continue;
      if (dl.strides[i] != expected) {
        contiguous = false;
        break;
      }
      expected *= dl.shape[i];
    }
  }
  if (by_address && contiguous) {
    std::int64_t bytes = 0;
    if (__builtin_mul_overflow(numel, static_cast<std::int64_t>(dl.dtype.bits / 8), &bytes)) return false;
    b.nbytes = bytes;
    return true;
  }
  b.dims.assign(dl.shape, dl.shape + rank);
  if (dl.strides) b.strides.assign(dl.strides, dl.strides + rank);
  else b.strides = Tensor::packed_strides(b.dims);
  if (b.dims.empty()) b.dims.push_back(1), b.strides.push_back(1);  // a 0-d tensor is one element
  return true;
}

// numpy.ndarray once numpy is imported (a leaked reference), else null; numpy arrays of
// that exact type are read through the buffer protocol (from_numpy) unless turned off.
PyTypeObject* g_numpy_ndarray = nullptr;
bool g_numpy_buffer_enabled = true;  // _C._numpy_buffer_protocol(False): nanobind's DLPack import instead

bool is_numpy_array(PyObject* v) {
  if (!g_numpy_ndarray) {
    static PyObject* s_numpy = PyUnicode_InternFromString("numpy");
    PyObject* np = PyImport_GetModule(s_numpy);  // only if already imported
    if (!np) {
      PyErr_Clear();
      return false;
    }
    PyObject* t = PyObject_GetAttrString(np, "ndarray");
    Py_DECREF(np);
    if (!t || !PyType_Check(t)) {
      Py_XDECREF(t);
      PyErr_Clear();
      return false;
    }
    g_numpy_ndarray = reinterpret_cast<PyTypeObject*>(t);
  }
  return Py_TYPE(v) == g_numpy_ndarray;
}

// A numpy array through the buffer protocol: what nanobind's DLPack import of it gives
// (from_ndarray: address, extents, strides in elements, the dtype by the same DLPack table,
// host, device 0, bytes, read-only), without a DLPack capsule. False: one it may not
// describe alike (a format that is not one native-order integer, bool or float character,
// a byte stride that is no multiple of the element size, no elements): the general path reads it.
bool from_numpy(PyObject* v, Buffer& b) {
  Py_buffer view;
  if (PyObject_GetBuffer(v, &view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    return false;
  }
  struct Release {
    Py_buffer* view;
    ~Release() { PyBuffer_Release(view); }
  } release{&view};
  using C = nb::dlpack::dtype_code;
  const char* f = view.format;
  if (!f || !f[0] || f[1] || view.itemsize <= 0 || view.itemsize > 8 || view.ndim < 0) return false;
  C code;
  switch (f[0]) {
    case '?': code = C::Bool; break;
    case 'b': case 'h': case 'i': case 'l': case 'q': code = C::Int; break;
    case 'B': case 'H': case 'I': case 'L': case 'Q': code = C::UInt; break;
    case 'e': case 'f': case 'd': code = C::Float; break;
    default: return false;
  }
  const nb::dlpack::dtype dt{static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(view.itemsize * 8), 1};
  std::int64_t numel = 1;
  for (int i = 0; i < view.ndim; ++i) {
    if (view.strides[i] % view.itemsize != 0) return false;
    b.dims.push_back(static_cast<std::int64_t>(view.shape[i]));
    b.strides.push_back(static_cast<std::int64_t>(view.strides[i] / view.itemsize));
    numel *= view.shape[i];
  }
  if (numel == 0) return false;  // numpy's DLPack export zeroes an empty array's strides
  if (b.dims.empty()) b.dims.push_back(1), b.strides.push_back(1);
  b.data = view.buf;
  b.dtype = from_dlpack(dt);
  if (b.dtype == DataType::NOT_SET) b.foreign_dtype = dlpack_name(dt);
  b.device = BufferDevice::HOST;
  b.device_id = 0;
  b.nbytes = numel * static_cast<std::int64_t>(view.itemsize);
  b.read_only = view.readonly != 0;
  return true;
}

}  // namespace

std::string Buffer::dtype_name() const {
  if (!foreign_dtype.empty()) return foreign_dtype;
  return std::string(to_string(dtype));
}

std::string operand_label(const CoreGraph& g, std::int64_t uid) {
  std::string s = "uid " + std::to_string(uid);
  if (TensorPtr t = g.tensor_by_uid(uid); t && !t->get_name().empty()) s += " (tensor '" + t->get_name() + "')";
  return s;
}

std::string BufferRole::text() const {
  if (graph) return std::string(what) + " for " + operand_label(*graph, uid);
  if (uid >= 0) return std::string(what) + " for uid " + std::to_string(uid);
  return what;
}

void* address_of(nb::handle v, const BufferRole& who) {
  const unsigned long long x = PyLong_AsUnsignedLongLong(v.ptr());  // OverflowError for < 0 and >= 2^64
  if (x == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    throw nb::value_error((who.text() + ": address " + nb::cast<std::string>(nb::str(v)) +
                           " is not a 64-bit unsigned address (0 <= address < 2**64)")
                              .c_str());
  }
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(x));
}

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

Buffer read_torch(nb::handle v, const BufferRole& who, bool by_address, bool bytes_only) {
  auto get = [&](PyObject* name, bool call) {
    nb::object o = nb::steal(call ? PyObject_CallMethodNoArgs(v.ptr(), name) : PyObject_GetAttr(v.ptr(), name));
    if (!o.is_valid()) throw nb::python_error();
    return o;
  };
  auto as_int = [&](nb::handle o, const char* what) {
    const long long x = PyLong_AsLongLong(o.ptr());
    if (x == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      throw nb::type_error((who.text() + ": torch tensor's " + what + " is not a 64-bit int").c_str());
    }
    return static_cast<std::int64_t>(x);
  };
  Buffer b;
  // A plain torch.Tensor with an element type opgraph has (fp4's byte geometry aside): one C
  // call through torch's exchange table where it offers one; a call it refuses (a tensor
  // DLPack cannot describe) falls back to the attributes below, as does any subclass.
  // The element type: the DLTensor's own where the one DLPack table names an opgraph type
  // that only one torch dtype exports (a plain tensor exports its own scalar type), else
  // tensor.dtype, read as the attributes read it. Not 8-bit ints: torch exports its
  // sub-byte uint1..uint7 / int1..int7 as 8-bit kDLUInt / kDLInt too; not fp4 (its bytes).
  if (Py_TYPE(v.ptr()) == reinterpret_cast<PyTypeObject*>(g_torch_tensor_type)) {
    if (DLTensorFromPy dl_of = torch_exchange()) {
      DLTensor dl{};
      if (dl_of(v.ptr(), &dl) != 0) {
        PyErr_Clear();
      } else {
        const std::optional<DataType> t = data_type_of(dl.dtype);
        if (t && *t != DataType::FP4_E2M1 && (bytes_only || (*t != DataType::UINT8 && *t != DataType::INT8)))
          b.dtype = *t;
        else read_torch_dtype(v.ptr(), b);
        if (b.dtype != DataType::NOT_SET && b.dtype != DataType::FP4_E2M1 && from_exchange(dl, b, by_address))
          return b;
      }
      b = Buffer{};
    }
  }
  // (The names below are made at the first call that reads attributes: the exchange table's
  // path above passes no initialisation guard.)
  static PyObject* s_data_ptr = PyUnicode_InternFromString("data_ptr");
  static PyObject* s_is_cuda = PyUnicode_InternFromString("is_cuda");
  static PyObject* s_is_contiguous = PyUnicode_InternFromString("is_contiguous");
  static PyObject* s_nbytes = PyUnicode_InternFromString("nbytes");
  static PyObject* s_shape = PyUnicode_InternFromString("shape");
  static PyObject* s_stride = PyUnicode_InternFromString("stride");
  b.data = PyLong_AsVoidPtr(get(s_data_ptr, true).ptr());
  if (!b.data && PyErr_Occurred()) throw nb::python_error();
  b.device = get(s_is_cuda, false).ptr() == Py_True ? BufferDevice::CUDA : BufferDevice::HOST;
  read_torch_dtype(v.ptr(), b);  // the element type is checked against the declaration
  // Contiguous: its memory is [data_ptr, data_ptr + nbytes), and a row-major declaration
  // reads it by address exactly as it would by its shape and strides.
  if (by_address && get(s_is_contiguous, true).ptr() == Py_True) {
    b.nbytes = as_int(get(s_nbytes, false), "nbytes");
    return b;
  }
  // Strided, expanded, transposed (or a declaration that is not row-major): its own geometry.
  nb::object shape = get(s_shape, false), stride = get(s_stride, true);
  for (nb::handle e : shape) b.dims.push_back(as_int(e, "shape"));
  for (nb::handle e : stride) b.strides.push_back(as_int(e, "stride()"));
  if (b.dims.size() != b.strides.size())
    throw nb::type_error((who.text() + ": torch tensor's shape and stride() differ in length").c_str());
  if (b.dims.empty()) b.dims.push_back(1), b.strides.push_back(1);  // a 0-d tensor is one element
  b.byte_geometry = b.dtype == DataType::FP4_E2M1;  // float4_e2m1fn_x2: one element a byte
  return b;
}

Buffer normalize_buffer(nb::handle v, const BufferRole& who) {
  if (PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr())) {
    Buffer b;
    b.data = address_of(v, who);
    return b;
  }
  // numpy.ndarray itself (not a subclass, which may add __cuda_array_interface__): its buffer.
  if (g_numpy_buffer_enabled && is_numpy_array(v.ptr())) {
    Buffer b;
    if (from_numpy(v.ptr(), b)) return b;
  }
  if (nb::hasattr(v, "__cuda_array_interface__"))
    return from_interface(v.attr("__cuda_array_interface__"), BufferDevice::CUDA, who, "__cuda_array_interface__");
  // Writable first; a buffer that only imports read-only (numpy writeable=False, a DLPack 1.x
  // read-only tensor, bytes, a read-only memoryview) is marked so.
  if (nb::ndarray<> a; nb::try_cast(v, a)) return from_ndarray(a, false);
  if (nb::ndarray<nb::ro> a; nb::try_cast(v, a)) return from_ndarray(a, true);
  if (nb::hasattr(v, "__array_interface__"))
    return from_interface(v.attr("__array_interface__"), BufferDevice::HOST, who, "__array_interface__");
  throw nb::type_error((who.text() + ": expected an int address, a torch tensor, a numpy array, a __dlpack__ producer, "
                                     "a buffer-protocol object or an object with __cuda_array_interface__, got " +
                        nb::cast<std::string>(nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(v.ptr()))))))
                           .c_str());
}

void bind_buffers(nb::module_& m) {
  m.def(
      "_numpy_buffer_protocol",
      [](std::optional<bool> enable) {
        if (enable) g_numpy_buffer_enabled = *enable;
        return g_numpy_buffer_enabled;
      },
      nb::arg("enable").none() = nb::none(),
      "Whether numpy arrays are read through the buffer protocol (the default) rather than nanobind's DLPack "
      "import; enable=False / True turns it off / on (tests: both reads describe every array alike).");
  m.def(
      "_torch_exchange_api",
      [](std::optional<bool> enable) {
        (void)is_torch_tensor(nb::none());  // finds torch.Tensor when torch is imported
        const bool was = g_torch_dl_enabled;
        g_torch_dl_enabled = true;
        const bool found = torch_exchange() != nullptr;
        g_torch_dl_enabled = enable ? *enable : was;
        return nb::make_tuple(found, g_torch_dl_enabled);
      },
      nb::arg("enable").none() = nb::none(),
      "(found, enabled): whether torch.Tensor offers DLPack's C exchange table, which execute then reads plain "
      "torch tensors through (one C call instead of the attribute reads), and whether its use is on; "
      "enable=False / True turns it off / on (tests, bench A/B).");
  m.def(
      "_describe_buffer",
      [](nb::handle v) {
        Buffer b = normalize_buffer(v, BufferRole{});
        nb::dict d;
        d["data"] = reinterpret_cast<std::uintptr_t>(b.data);
        d["dims"] = b.dims;
        d["strides"] = b.strides;
        d["data_type"] = nb::cast(b.dtype);
        d["foreign_dtype"] = b.foreign_dtype;
        d["device"] = b.device == BufferDevice::HOST ? "cpu" : b.device == BufferDevice::CUDA ? "cuda" : "unknown";
        d["nbytes"] = b.nbytes;
        d["device_id"] = b.device_id;
        d["read_only"] = b.read_only;
        return d;
      },
      nb::arg("obj"), "What execute() reads from a buffer: address, dims/strides (elements), dtype (foreign_dtype: "
      "the buffer's own type name when opgraph has none for it), device (and its ordinal, -1 when the buffer does "
      "not say), bytes, read_only.");
}

}  // namespace opgraph::py
