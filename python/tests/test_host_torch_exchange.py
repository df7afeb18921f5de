"""execute reads a plain torch.Tensor through torch's DLPack C exchange table (DLPack 1.3's
DLPackExchangeAPI, the class attribute __dlpack_c_exchange_api__ of torch >= 2.10) with one C
call, instead of its data_ptr / is_cuda / is_contiguous / nbytes / shape / stride attributes.
Both reads must judge a buffer alike: this test runs every case twice, through the table and
through the attributes (_C._torch_exchange_api(False)), and compares outcomes and messages.

No torch here: a stand-in `torch` module (in a subprocess, since the binding resolves
torch.Tensor once per process) whose Tensor wraps a numpy array, answers the attributes, and
offers the exchange table built with ctypes (its dltensor_from_py_object_no_sync a ctypes
callback filling the DLTensor from the array), on the host reference engine.
"""
import os
import subprocess
import sys
import textwrap

from _host_helpers import DLPACK_STANDIN

SCRIPT = DLPACK_STANDIN + textwrap.dedent(r'''
DTYPES = {np.dtype(np.float32): dtype("float32"), np.dtype(np.float64): dtype("float64"),
          np.dtype(np.float16): dtype("float16")}
CALLS = {"attributes": 0, "exchange": 0, "refuse": False}

class Tensor:
    def __init__(self, arr, cuda=False):
        self._a, self._cuda = arr, cuda
    def _count(self): CALLS["attributes"] += 1
    def data_ptr(self): self._count(); return self._a.ctypes.data
    @property
    def is_cuda(self): self._count(); return self._cuda
    @property
    def dtype(self): return DTYPES[self._a.dtype]
    def is_contiguous(self): self._count(); return self._a.flags.c_contiguous or self._a.size == 0
    @property
    def nbytes(self): self._count(); return self._a.nbytes
    @property
    def shape(self): self._count(); return tuple(self._a.shape)
    def stride(self): self._count(); return tuple(s // self._a.itemsize for s in self._a.strides)
torch.Tensor = Tensor

def dl_from(obj, out):
    t = c.cast(obj, c.py_object).value
    if CALLS["refuse"]:
        c.pythonapi.PyErr_SetString(c.py_object(BufferError), b"refused by the stand-in")
        return -1
    CALLS["exchange"] += 1
    a = t._a
    t._shape = (c.c_int64 * max(a.ndim, 1))(*a.shape)
    t._strides = (c.c_int64 * max(a.ndim, 1))(*(s // a.itemsize for s in a.strides))
    d = out.contents
    d.data = a.ctypes.data
    d.device = DLDevice(2 if t._cuda else 1, 0)
    d.ndim = a.ndim
    d.dtype = DLDataType(2, a.itemsize * 8, 1)
    d.shape = c.cast(t._shape, c.POINTER(c.c_int64))
    d.strides = c.cast(t._strides, c.POINTER(c.c_int64))
    d.byte_offset = 0
    return 0
callback = FROM(dl_from)
api = Api(Header(1, 3, None), None, None, None, callback, None)
new_capsule = c.pythonapi.PyCapsule_New
new_capsule.restype = c.py_object
new_capsule.argtypes = [c.c_void_p, c.c_void_p, c.c_void_p]
CAPSULE_NAME = c.create_string_buffer(b"dlpack_exchange_api")  # the capsule keeps a pointer to it
Tensor.__dlpack_c_exchange_api__ = new_capsule(c.addressof(api), c.addressof(CAPSULE_NAME), None)
sys.modules["torch"] = torch

import opgraph

F32 = np.float32
def graph(n=8):
    g = opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    a, b = (g.tensor(name=x, dim=[1, n], stride=[n, 1], data_type=opgraph.data_type.FLOAT) for x in "ab")
    y = g.add(a=a, b=b)
    y.set_output(True).set_name("y").set_data_type(opgraph.data_type.FLOAT)
    g.build([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    return g, a, b, y

rng = np.random.default_rng(7)
def case(name, make):
    """(outcome, output) of one execute, fresh graph and buffers each time."""
    g, a, b, y = graph()
    x1 = rng.standard_normal((1, 8)).astype(F32)
    x2 = rng.standard_normal((1, 8)).astype(F32)
    out = np.full((1, 8), -1, F32)
    pack = make(a, b, y, x1, x2, out)
    try:
        g.execute(pack)
        ok = np.allclose(out, x1 + x2, rtol=1e-6)
        return "ran, %s" % ("correct" if ok else "WRONG"), out
    except Exception as e:  # the message is compared between the two reads
        return "%s: %s" % (type(e).__name__, e), out

wide = np.zeros((1, 16), F32)
CASES = {
    "contiguous": lambda a, b, y, x1, x2, o: {a: Tensor(x1), b: Tensor(x2), y: Tensor(o)},
    "uid keys": lambda a, b, y, x1, x2, o: {a.get_uid(): Tensor(x1), b.get_uid(): Tensor(x2), y.get_uid(): Tensor(o)},
    "strided input": lambda a, b, y, x1, x2, o: {a: Tensor(np.repeat(x1, 2, axis=1)[:, ::2]), b: Tensor(x2),
                                                y: Tensor(o)},
    "too small": lambda a, b, y, x1, x2, o: {a: Tensor(x1[:, :4].copy()), b: Tensor(x2), y: Tensor(o)},
    "larger contiguous": lambda a, b, y, x1, x2, o: {a: Tensor(np.concatenate([x1, x1], 1)), b: Tensor(x2),
                                                    y: Tensor(o)},
    "other dtype": lambda a, b, y, x1, x2, o: {a: Tensor(x1.astype(np.float64)), b: Tensor(x2), y: Tensor(o)},
    "cuda on a host plan": lambda a, b, y, x1, x2, o: {a: Tensor(x1, cuda=True), b: Tensor(x2), y: Tensor(o)},
    "0-d and 3-d views": lambda a, b, y, x1, x2, o: {a: Tensor(x1.reshape(1, 1, 8)), b: Tensor(x2), y: Tensor(o)},
}
found, enabled = opgraph._C._torch_exchange_api()
assert found and enabled, (found, enabled)
for name, make in CASES.items():
    rng = np.random.default_rng(11)
    CALLS.update(attributes=0, exchange=0)
    fast, out_fast = case(name, make)
    fast_calls = dict(CALLS)
    opgraph._C._torch_exchange_api(False)
    rng = np.random.default_rng(11)
    CALLS.update(attributes=0, exchange=0)
    slow, out_slow = case(name, make)
    slow_calls = dict(CALLS)
    opgraph._C._torch_exchange_api(True)
    print("CASE %s | %s | %s | exchange %d attributes %d | exchange %d attributes %d | %s" % (
        name, fast, slow, fast_calls["exchange"], fast_calls["attributes"], slow_calls["exchange"],
        slow_calls["attributes"], "same output" if np.array_equal(out_fast, out_slow) else "OUTPUTS DIFFER"))

# A refusal from the table (a tensor DLPack cannot describe) falls back to the attributes.
CALLS.update(attributes=0, exchange=0, refuse=True)
print("REFUSED |", case("contiguous", CASES["contiguous"])[0], "| attributes %d" % CALLS["attributes"])
CALLS["refuse"] = False
# A subclass is read through its attributes (the table is for the exact type).
class Sub(Tensor):
    pass
CALLS.update(attributes=0, exchange=0)
print("SUBCLASS |", case("sub", lambda a, b, y, x1, x2, o: {a: Sub(x1), b: Sub(x2), y: Sub(o)})[0],
      "| exchange %d attributes %d" % (CALLS["exchange"], CALLS["attributes"]))
''')


def run_script():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.splitlines()


def test_the_exchange_table_and_the_attributes_judge_every_buffer_alike():
    lines = run_script()
    cases = {l.split("|")[0][5:].strip(): [f.strip() for f in l.split("|")[1:]] for l in lines if l.startswith("CASE ")}
    assert len(cases) == 8, lines
    for name, (fast, slow, fast_calls, slow_calls, outputs) in cases.items():
        assert fast == slow, name  # the same outcome, the same message
        assert outputs == "same output", name
        assert fast_calls.startswith("exchange ") and " attributes 0" in fast_calls, (name, fast_calls)
        assert slow_calls.startswith("exchange 0 "), (name, slow_calls)
    assert cases["contiguous"][0] == "ran, correct"
    assert cases["uid keys"][0] == "ran, correct"
    assert cases["larger contiguous"][0] == "ran, correct"  # a contiguous buffer covering the span binds by address
    assert cases["0-d and 3-d views"][0].startswith("ValueError") or cases["0-d and 3-d views"][0] == "ran, correct"
    assert "buffer_span" in cases["too small"][0] and "'a'" in cases["too small"][0]
    assert "DOUBLE" in cases["other dtype"][0] and "'a'" in cases["other dtype"][0]
    assert "strides" in cases["strided input"][0]
    assert "cuda" in cases["cuda on a host plan"][0].lower() or "device" in cases["cuda on a host plan"][0]


def test_a_refusal_from_the_table_falls_back_and_a_subclass_reads_its_attributes():
    lines = run_script()
    refused = next(l for l in lines if l.startswith("REFUSED"))
    assert "ran, correct" in refused and "attributes 0" not in refused
    sub = next(l for l in lines if l.startswith("SUBCLASS"))
    assert "ran, correct" in sub and "exchange 0 " in sub and "attributes 0" not in sub
