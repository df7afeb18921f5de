/* bench/torch_stand_in.c — a C stand-in for torch.Tensor, for bench/binding_cost.py (CPU only).

   The binding reads a plain torch.Tensor through torch's DLPack C exchange table
   (torch.Tensor.__dlpack_c_exchange_api__, DLPack 1.3's DLPackExchangeAPI): its `dtype`
   attribute and one C call. This module offers the same surface in C, so the binding's
   own cost of that path can be timed on a machine without torch: Tensor(array, dtype)
   wraps a host numpy array (kept alive; its address, extents and strides read once), with
   `dtype` a getset returning the given object, the exchange table's
   dltensor_from_py_object_no_sync filling a non-owning DLTensor, and the attributes the
   fallback reads (data_ptr(), is_cuda, is_contiguous(), nbytes, shape, stride()).
   bench/binding_cost.py builds it with the system C compiler and installs it as
   sys.modules["torch"] before importing opgraph. Not a model of torch's own costs. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  int32_t device_type, device_id;
} DLDevice;
typedef struct {
  uint8_t code, bits;
  uint16_t lanes;
} DLDataType;
typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;
typedef struct Header {
  uint32_t major, minor;
  struct Header* prev;
} Header;
typedef struct {
  Header header;
  void* managed_tensor_allocator;
  void* managed_tensor_from_py_object_no_sync;
  void* managed_tensor_to_py_object_no_sync;
  int (*dltensor_from_py_object_no_sync)(void*, DLTensor*);
  void* current_work_stream;
} ExchangeApi;

#define MAX_DIMS 8
typedef struct {
  PyObject_HEAD
  PyObject* array; /* the numpy array whose memory this is */
  PyObject* dtype; /* what .dtype answers */
  void* data;
  int ndim, itemsize;
  char kind; /* 'f', 'i', 'u', 'b' */
  int64_t shape[MAX_DIMS], strides[MAX_DIMS]; /* strides in elements */
} Tensor;

static int Tensor_init(Tensor* self, PyObject* args, PyObject* kw) {
  PyObject *array, *dtype;
  (void)kw;
  if (!PyArg_ParseTuple(args, "OO", &array, &dtype)) return -1;
  Py_buffer view;
  if (PyObject_GetBuffer(array, &view, PyBUF_RECORDS_RO) != 0) return -1;
  if (view.ndim > MAX_DIMS || view.itemsize <= 0) {
    PyBuffer_Release(&view);
    PyErr_SetString(PyExc_ValueError, "stand-in Tensor: too many dims");
    return -1;
  }
  self->data = view.buf;
  self->ndim = view.ndim;
  self->itemsize = (int)view.itemsize;
  const char f = view.format ? view.format[0] : 'B';
  self->kind = (f == 'e' || f == 'f' || f == 'd') ? 'f' : (f == '?') ? 'b' : (f >= 'a' && f <= 'z') ? 'i' : 'u';
  for (int i = 0; i < view.ndim; ++i) {
    self->shape[i] = view.shape[i];
    self->strides[i] = view.strides[i] / view.itemsize;
  }
  PyBuffer_Release(&view);
  Py_INCREF(array);
  Py_INCREF(dtype);
  Py_XSETREF(self->array, array);
  Py_XSETREF(self->dtype, dtype);
  return 0;
}

static void Tensor_dealloc(Tensor* self) {
  Py_XDECREF(self->array);
  Py_XDECREF(self->dtype);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static int is_contiguous(const Tensor* t) {
  int64_t expected = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] == 1) continue;
    if (t->strides[i] != expected) return 0;
    expected *= t->shape[i];
  }
  return 1;
}

static int64_t numel(const Tensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

static PyObject* get_dtype(Tensor* self, void* c) {
  (void)c;
  Py_INCREF(self->dtype);
  return self->dtype;
}
static PyObject* get_is_cuda(Tensor* self, void* c) {
  (void)self, (void)c;
  Py_RETURN_FALSE;
}
static PyObject* get_nbytes(Tensor* self, void* c) {
  (void)c;
  return PyLong_FromLongLong(numel(self) * self->itemsize);
}
static PyObject* get_shape(Tensor* self, void* c) {
  (void)c;
  PyObject* t = PyTuple_New(self->ndim);
  for (int i = 0; i < self->ndim; ++i) PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(self->shape[i]));
  return t;
}
static PyObject* m_data_ptr(Tensor* self, PyObject* unused) {
  (void)unused;
  return PyLong_FromVoidPtr(self->data);
}
static PyObject* m_is_contiguous(Tensor* self, PyObject* unused) {
  (void)unused;
  return PyBool_FromLong(is_contiguous(self));
}
static PyObject* m_stride(Tensor* self, PyObject* unused) {
  (void)unused;
  PyObject* t = PyTuple_New(self->ndim);
  for (int i = 0; i < self->ndim; ++i) PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(self->strides[i]));
  return t;
}

static PyGetSetDef Tensor_getset[] = {
    {"dtype", (getter)get_dtype, NULL, NULL, NULL},
    {"is_cuda", (getter)get_is_cuda, NULL, NULL, NULL},
    {"nbytes", (getter)get_nbytes, NULL, NULL, NULL},
    {"shape", (getter)get_shape, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};
static PyMethodDef Tensor_methods[] = {
    {"data_ptr", (PyCFunction)m_data_ptr, METH_NOARGS, NULL},
    {"is_contiguous", (PyCFunction)m_is_contiguous, METH_NOARGS, NULL},
    {"stride", (PyCFunction)m_stride, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyTypeObject TensorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "torch_stand_in.Tensor",
    .tp_basicsize = sizeof(Tensor),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Tensor_init,
    .tp_dealloc = (destructor)Tensor_dealloc,
    .tp_getset = Tensor_getset,
    .tp_methods = Tensor_methods,
};

static int dl_from(void* obj, DLTensor* out) {
  Tensor* t = (Tensor*)obj;
  out->data = t->data;
  out->device.device_type = 1; /* kDLCPU */
  out->device.device_id = 0;
  out->ndim = t->ndim;
  out->dtype.code = t->kind == 'f' ? 2 : t->kind == 'b' ? 6 : t->kind == 'i' ? 0 : 1;
  out->dtype.bits = (uint8_t)(t->itemsize * 8);
  out->dtype.lanes = 1;
  out->shape = t->shape;
  out->strides = t->strides;
  out->byte_offset = 0;
  return 0;
}

static ExchangeApi api = {{1, 3, NULL}, NULL, NULL, NULL, dl_from, NULL};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "torch_stand_in", NULL, -1, NULL, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_torch_stand_in(void) {
  if (PyType_Ready(&TensorType) < 0) return NULL;
  PyObject* capsule = PyCapsule_New(&api, "dlpack_exchange_api", NULL);
  if (!capsule || PyDict_SetItemString(TensorType.tp_dict, "__dlpack_c_exchange_api__", capsule) < 0) return NULL;
  Py_DECREF(capsule);
  PyType_Modified(&TensorType);
  PyObject* m = PyModule_Create(&module);
  if (!m) return NULL;
  Py_INCREF(&TensorType);
  PyModule_AddObject(m, "Tensor", (PyObject*)&TensorType);
  return m;
}
