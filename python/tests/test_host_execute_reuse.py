"""Two shortcuts of pygraph.execute's per-call path (docs/autotune.md "Measured host cost"), each
checked against the path without it:

* the dict walk compares each entry with the last call's entry at its position as it reads it
  (nothing is copied while they agree; from the first entry that differs the entries are kept).
  Every sequence of packs below runs on one graph (the comparison live) and, call by call, on a
  fresh graph built the same way (no last call: every entry kept); outcomes, messages and
  outputs must agree;
* a plain torch.Tensor read through torch's DLPack C exchange table takes its element type from
  the DLTensor when the DLPack type table names an opgraph type that one torch dtype alone
  exports, without reading tensor.dtype; any other (8-bit ints, which torch's sub-byte uint1..7
  and int1..7 export too, int16, complex, fp8 variants opgraph lacks, fp4) is read from
  tensor.dtype as before. A stand-in torch (ctypes, in a subprocess) exports each torch type's
  DLPack code as torch does; each case runs through the table and through the attributes, and
  the outcomes and messages must agree.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import opgraph
from _host_helpers import DLPACK_STANDIN, add_graph

F32 = np.float32


def outcome(g, pack, out):
    out[...] = np.nan
    try:
        g.execute(pack)
        return "ran", out.copy()
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return "%s: %s" % (type(e).__name__, e), out.copy()


def run_sequence(make_packs):
    """Each pack of make_packs(a, b, c) executed in turn on one graph, and each on a fresh graph."""
    live = add_graph()
    packs = make_packs(*live[1:])
    results = []
    for i, (pack, out) in enumerate(packs):
        got = outcome(live[0], pack, out)
        fresh = add_graph()
        by_name = {"a": fresh[1], "b": fresh[2], "c": fresh[3]}
        fresh_pack = {(by_name[k.get_name()] if isinstance(k, opgraph.tensor) else k): v for k, v in pack.items()}
        want = outcome(fresh[0], fresh_pack, out)
        assert got[0] == want[0], (i, got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        results.append(got[0])
    return results


@pytest.fixture
def bufs():
    rng = np.random.default_rng(5)
    x, y, x2, y2 = rng.standard_normal((4, 1, 8)).astype(F32)
    return x, y, x2, y2, np.zeros((1, 8), F32), np.zeros((1, 8), F32)


def test_an_entry_differing_at_each_position_is_read_anew(bufs):
    x, y, x2, y2, o1, o2 = bufs
    got = run_sequence(lambda a, b, c: [
        ({a: x, b: y, c: o1}, o1),
        ({a: x, b: y, c: o1}, o1),    # all the same
        ({a: x2, b: y, c: o1}, o1),   # the first differs
        ({a: x2, b: y2, c: o1}, o1),  # the middle differs
        ({a: x2, b: y2, c: o2}, o2),  # the last differs
        ({a: x, b: y, c: o1}, o1),    # all differ
        ({c: o1, a: x, b: y}, o1),    # the same entries in another order
        ({a: x, b: y, c: o1}, o1),
    ])
    assert got == ["ran"] * 8


def test_fewer_more_or_bad_entries_after_a_good_call_raise_as_on_a_fresh_graph(bufs):
    x, y, x2, y2, o1, o2 = bufs
    got = run_sequence(lambda a, b, c: [
        ({a: x, b: y, c: o1}, o1),
        ({a: x, b: y}, o1),                       # a prefix of the last call's entries: c missing
        ({a: x, b: y, c: o1}, o1),
        ({a: x, c: o1}, o1),                      # b missing
        ({a: x, b: y, c: o1, 987654: x2}, o1),    # one more: a uid the graph lacks
        ({a: x, b: y, c: o1}, o1),
        ({a: x, b: y.astype(np.float64), c: o1}, o1),  # the middle one of another dtype
        ({a: x, b: y, c: o1[:, :4]}, o1),         # the last one smaller
        ({a: x, b: y, c: o1}, o1),
    ])
    assert got[0] == got[2] == got[5] == got[8] == "ran"
    assert "'c'" in got[1] and "'b'" in got[3] and "987654" in got[4]
    assert "'b'" in got[6] and "DOUBLE" in got[6] and "'c'" in got[7]


def test_two_packs_alternating_each_write_their_own_output(bufs):
    x, y, x2, y2, o1, o2 = bufs
    g, a, b, c = add_graph()
    p1, p2 = {a: x, b: y, c: o1}, {a: x2, b: y2, c: o2}
    for _ in range(3):
        o1[...] = o2[...] = np.nan
        g.execute(p1)
        assert np.isnan(o2).all()
        g.execute(p2)
        np.testing.assert_allclose(o1, x + y, rtol=1e-6)
        np.testing.assert_allclose(o2, x2 + y2, rtol=1e-6)


def test_a_none_key_anywhere_is_dropped_as_the_hooks_drop_it(bufs):
    # The walk meets the None key and execute hands the pack to _execute_hooks; the outcome must
    # be the hooks' own: _host_pack drops the key, then the walk (_execute_direct) judges the rest.
    x, y, x2, y2, o1, o2 = bufs
    bad = x.astype(np.float64)
    for make in (lambda a, b, c: {None: 0, a: x, b: y, c: o1},
                 lambda a, b, c: {a: x, None: 0, b: y, c: o1},
                 lambda a, b, c: {a: x, b: y, c: o1, None: 0},
                 lambda a, b, c: {a: bad, None: 0, b: y, c: o1},   # a bad entry before the None key
                 lambda a, b, c: {a: x, None: 0, b: bad, c: o1},   # and after it
                 lambda a, b, c: {None: 0, a: x, c: o1}):          # an operand missing
        g, a, b, c = add_graph()
        got = outcome(g, make(a, b, c), o1)
        g2, a2, b2, c2 = add_graph()
        pack = make(a2, b2, c2)
        o1[...] = np.nan
        try:
            g2._execute_direct(g2._host_pack(pack))
            want = "ran", o1.copy()
        except Exception as e:  # noqa: BLE001
            want = "%s: %s" % (type(e).__name__, e), o1.copy()
        assert got[0] == want[0]
        np.testing.assert_array_equal(got[1], want[1])
    g, a, b, c = add_graph()
    with pytest.raises(TypeError, match="variant pack keys must be"):  # without the hooks: refused
        g._execute_direct({a: x, None: 0, b: y, c: o1})


def test_the_graph_handle_is_a_property_execute_reads():
    g = opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    assert g.handle is None and "handle" not in vars(g)
    h = opgraph.create_handle()
    g.handle = h
    assert g.handle is h
    g.handle = None
    assert g.handle is None
    g2 = opgraph.pygraph(handle=h)
    assert g2.handle is h
    g3, a, b, c = add_graph()
    x = np.ones((1, 8), F32)
    out = np.zeros((1, 8), F32)
    with pytest.raises(TypeError, match="pygraph.handle: expected a handle made by create_handle.*'str'"):
        g3.handle = "not a handle"
    assert g3.handle is None
    with pytest.raises(TypeError, match="handle: expected a handle made by create_handle.*'int'"):
        g3.execute({a: x, b: x, c: out}, None, 7)  # a call's handle of the wrong type: named, nothing runs
    assert (out == 0).all()
    g3.execute({a: x, b: x, c: out})
    np.testing.assert_allclose(out, 2 * x)


class Routed(Exception):
    pass


def route_of(g, pack):
    """'hooks' when execute sends `pack` through pygraph._execute_hooks, else what the C++ walk says."""
    def hooks(*args, **kwargs):
        raise Routed()
    g._execute_hooks = hooks  # the instance attribute: what the native execute looks up
    try:
        g.execute(pack)
        return "ran"
    except Routed:
        return "hooks"
    except Exception as e:  # noqa: BLE001
        return "walk: %s" % type(e).__name__
    finally:
        del g._execute_hooks


def test_every_writer_of_a_hook_attribute_sends_dict_packs_through_the_hooks():
    # The native execute looks _deferred / _aliases / _keys_by_uid up only once pygraph has
    # marked the graph where it writes them; each writer must mark it, planned or not.
    DT = opgraph.data_type
    g = opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    x = g.tensor(dim=[1, 8], data_type=DT.FLOAT, name="x")
    assert route_of(g, {x: np.zeros((1, 8), F32)}) == "walk: ValueError"  # nothing to handle: the walk
    s = g.tensor(dim=[1], stride=[1], data_type=DT.FLOAT, is_pass_by_value=True, name="s")  # no value: _deferred
    assert g._deferred == [s]
    assert route_of(g, {x: np.zeros((1, 8), F32), s: 2.0}) == "hooks"  # unvalidated: no uid, so the mark decides

    g2 = opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    y = g2.tensor(dim=[1, 8], data_type=DT.FLOAT, name="y")
    assert route_of(g2, {y: np.zeros((1, 8), F32)}).startswith("walk")
    g2.tensor_like(np.array([3.0], F32), name="k", is_pass_by_value=True)  # a host scalar: _deferred too
    assert route_of(g2, {y: np.zeros((1, 8), F32)}) == "hooks"

    g3 = opgraph.pygraph(io_data_type=DT.HALF, intermediate_data_type=DT.FLOAT, compute_data_type=DT.FLOAT)
    q, k, v = (g3.tensor(dim=[1, 2, 8, 16], data_type=DT.HALF, name=n) for n in "qkv")
    seed = g3.tensor(dim=[1, 1, 1, 1], data_type=DT.INT64, name="seed")
    offset = g3.tensor(dim=[1, 1, 1, 1], data_type=DT.INT64, name="offset")
    dump = g3.tensor(dim=[1, 2, 8, 8], data_type=DT.FLOAT, name="rng_dump", uid=50)
    pack = {q: np.zeros((1, 2, 8, 16), np.float16)}
    assert route_of(g3, pack).startswith("walk")
    o, _ = g3.sdpa(q=q, k=k, v=v, attn_scale=0.25, generate_stats=True, dropout=(0.1, seed, offset), rng_dump=dump)
    assert g3._aliases  # cudnn's output alias
    assert route_of(g3, pack) == "hooks"


SCRIPT = DLPACK_STANDIN + textwrap.dedent(r'''
# torch's name -> (numpy storage, the DLPack (code, bits, lanes) torch exports for it)
TYPES = {
    "float32": (np.float32, (2, 32, 1)), "float16": (np.float16, (2, 16, 1)), "float64": (np.float64, (2, 64, 1)),
    "bfloat16": (np.uint16, (4, 16, 1)), "int8": (np.int8, (0, 8, 1)), "int16": (np.int16, (0, 16, 1)),
    "int32": (np.int32, (0, 32, 1)), "int64": (np.int64, (0, 64, 1)), "uint8": (np.uint8, (1, 8, 1)),
    "uint16": (np.uint16, (1, 16, 1)), "bool": (np.bool_, (6, 8, 1)), "complex64": (np.complex64, (5, 64, 1)),
    "float8_e4m3fn": (np.uint8, (10, 8, 1)), "float8_e5m2": (np.uint8, (12, 8, 1)),
    "float8_e4m3fnuz": (np.uint8, (11, 8, 1)), "float8_e8m0fnu": (np.uint8, (14, 8, 1)),
    "float4_e2m1fn_x2": (np.uint8, (17, 4, 2)),
    "uint4": (np.uint8, (1, 8, 1)), "int2": (np.int8, (0, 8, 1)),  # torch's sub-byte types: 8-bit DLPack codes
}
DTYPES = {name: dtype(name) for name in TYPES}
CALLS = {"attributes": 0, "exchange": 0, "dtype": 0}

class Tensor:
    def __init__(self, arr, name, code=None):
        self._a, self._name = arr, name
        self._code = code or TYPES[name][1]
    def _count(self): CALLS["attributes"] += 1
    def data_ptr(self): self._count(); return self._a.ctypes.data
    @property
    def is_cuda(self): self._count(); return False
    @property
    def dtype(self): CALLS["dtype"] += 1; return DTYPES[self._name]
    def is_contiguous(self): self._count(); return self._a.flags.c_contiguous or self._a.size == 0
    @property
    def nbytes(self): self._count(); return self._a.nbytes
    @property
    def shape(self): self._count(); return tuple(self._a.shape)
    def stride(self): self._count(); return tuple(s // self._a.itemsize for s in self._a.strides)
torch.Tensor = Tensor

def dl_from(obj, out):
    t = c.cast(obj, c.py_object).value
    CALLS["exchange"] += 1
    a = t._a
    t._shape = (c.c_int64 * max(a.ndim, 1))(*a.shape)
    t._strides = (c.c_int64 * max(a.ndim, 1))(*(s // a.itemsize for s in a.strides))
    d = out.contents
    d.data, d.device, d.ndim = a.ctypes.data, DLDevice(1, 0), a.ndim
    d.dtype = DLDataType(*t._code)
    d.shape = c.cast(t._shape, c.POINTER(c.c_int64))
    d.strides = c.cast(t._strides, c.POINTER(c.c_int64))
    d.byte_offset = 0
    return 0
callback = FROM(dl_from)
api = Api(Header(1, 3, None), None, None, None, callback, None)
new_capsule = c.pythonapi.PyCapsule_New
new_capsule.restype = c.py_object
new_capsule.argtypes = [c.c_void_p, c.c_void_p, c.c_void_p]
CAPSULE_NAME = c.create_string_buffer(b"dlpack_exchange_api")
Tensor.__dlpack_c_exchange_api__ = new_capsule(c.addressof(api), c.addressof(CAPSULE_NAME), None)
sys.modules["torch"] = torch

import opgraph

def graph(dt):
    g = opgraph.pygraph(io_data_type=dt, intermediate_data_type=opgraph.data_type.FLOAT,
                        compute_data_type=opgraph.data_type.FLOAT)
    a, b = (g.tensor(name=x, dim=[1, 8], stride=[8, 1], data_type=dt) for x in "ab")
    y = g.add(a=a, b=b)
    y.set_output(True).set_name("y").set_data_type(dt)
    g.build([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    return g, a, b, y

def case(declared, storage_np, name, code):
    g, a, b, y = graph(declared)
    rng = np.random.default_rng(3)
    floating = np.issubdtype(storage_np, np.floating) or np.issubdtype(storage_np, np.complexfloating)
    x1, x2 = (rng.standard_normal((1, 8)) if floating else rng.integers(0, 4, (1, 8)) for _ in range(2))
    x1, x2 = x1.astype(storage_np), x2.astype(storage_np)
    ws = storage_np if name in ("float32", "float16") else np.float32
    w1, out = x2.astype(ws), np.zeros((1, 8), ws)
    pack = {a: Tensor(x1, name, code), b: Tensor(w1, "float32" if ws is np.float32 else name),
            y: Tensor(out, "float32" if ws is np.float32 else name)}
    try:
        g.execute(pack)
        return "ran, %s" % ("correct" if np.allclose(out.astype(np.float64), x1.astype(np.float64) + w1, rtol=1e-3)
                            else "WRONG"), out
    except Exception as e:
        return "%s: %s" % (type(e).__name__, e), out

F, H = opgraph.data_type.FLOAT, opgraph.data_type.HALF
CASES = [(F, name) for name in TYPES] + [(H, "float16"), (H, "float32")]
assert opgraph._C._torch_exchange_api() == (True, True)
for declared, name in CASES + [(F, "float4 one lane")]:
    storage, code = (np.uint8, (17, 4, 1)) if name == "float4 one lane" else (TYPES[name][0], None)
    tname = "float4_e2m1fn_x2" if name == "float4 one lane" else name
    CALLS.update(attributes=0, exchange=0, dtype=0)
    fast, out_fast = case(declared, storage, tname, code)
    fast_calls = dict(CALLS)
    opgraph._C._torch_exchange_api(False)
    CALLS.update(attributes=0, exchange=0, dtype=0)
    slow, out_slow = case(declared, storage, tname, code)
    opgraph._C._torch_exchange_api(True)
    print("CASE %s %s | %s | %s | dtype reads %d | exchange %d | %s" % (
        declared.name, name, fast, slow, fast_calls["dtype"], fast_calls["exchange"],
        "same output" if np.array_equal(out_fast, out_slow) else "OUTPUTS DIFFER"))

# The workspace: only its address and bytes are read (an 8-bit type is taken from the table as it is).
def ws_case(ws):
    g, a, b, y = graph(F)
    x = np.ones((1, 8), np.float32)
    out = np.zeros((1, 8), np.float32)
    try:
        g.execute({a: Tensor(x, "float32"), b: Tensor(x, "float32"), y: Tensor(out, "float32")}, ws)
        return "ran, %s" % ("correct" if (out == 2).all() else "WRONG")
    except Exception as e:
        return "%s: %s" % (type(e).__name__, e)
WS = {"uint8": lambda: Tensor(np.zeros(64, np.uint8), "uint8"), "uint4": lambda: Tensor(np.zeros(64, np.uint8), "uint4"),
      "int8": lambda: Tensor(np.zeros(64, np.int8), "int8"), "float32": lambda: Tensor(np.zeros(16, np.float32), "float32"),
      "strided uint8": lambda: Tensor(np.zeros(128, np.uint8)[::2], "uint8"),
      "complex64": lambda: Tensor(np.zeros(8, np.complex64), "complex64")}
for name, make in WS.items():
    CALLS.update(attributes=0, exchange=0, dtype=0)
    fast = ws_case(make())
    fast_calls = dict(CALLS)
    opgraph._C._torch_exchange_api(False)
    slow = ws_case(make())
    opgraph._C._torch_exchange_api(True)
    print("WS %s | %s | %s | dtype reads %d" % (name, fast, slow, fast_calls["dtype"]))
''')


def test_the_dlpack_element_type_and_torch_dtype_judge_every_buffer_alike():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    cases = {}
    for line in r.stdout.splitlines():
        if line.startswith("CASE "):
            head, fast, slow, dtype_reads, exchange, same = (f.strip() for f in line[5:].split("|"))
            cases[head] = (fast, slow, int(dtype_reads.split()[-1]), int(exchange.split()[-1]), same)
    assert len(cases) == 22, r.stdout
    # opgraph's types that one torch dtype alone exports (the DLPack table; not fp4, not the 8-bit
    # ints, which torch's sub-byte uint1..7 / int1..7 export too): no tensor.dtype read
    in_table = {"float32", "float16", "float64", "bfloat16", "int32", "int64", "bool",
                "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu"}
    for head, (fast, slow, dtype_reads, exchange, same) in cases.items():
        assert fast == slow, head  # the same outcome, the same message
        assert same == "same output", head
        declared, name = head.split(" ", 1)
        if name in in_table:
            assert dtype_reads == 0 and exchange >= 1, (head, dtype_reads, exchange)
        else:  # tensor.dtype names it: int8, uint8, int16, uint16, complex64, float8_e4m3fnuz, fp4, uint4
            assert dtype_reads >= 1, (head, dtype_reads)
    assert cases["FLOAT float32"][0] == "ran, correct"
    assert cases["HALF float16"][0] == "ran, correct"
    assert "INT32" in cases["FLOAT int32"][0] and "'a'" in cases["FLOAT int32"][0]
    assert "torch.int16" in cases["FLOAT int16"][0]
    assert "torch.uint4" in cases["FLOAT uint4"][0] and "torch.int2" in cases["FLOAT int2"][0]  # never read as 8-bit
    assert "UINT8" in cases["FLOAT uint8"][0] and "INT8" in cases["FLOAT int8"][0]
    assert "torch.complex64" in cases["FLOAT complex64"][0]
    assert "torch.float8_e4m3fnuz" in cases["FLOAT float8_e4m3fnuz"][0]
    assert "FP8_E4M3" in cases["FLOAT float8_e4m3fn"][0]
    assert "FP4_E2M1" in cases["FLOAT float4_e2m1fn_x2"][0] and "FP4_E2M1" in cases["FLOAT float4 one lane"][0]
    assert "FLOAT" in cases["HALF float32"][0] and "HALF" in cases["HALF float32"][0]
    ws = {line.split("|")[0][3:].strip(): [f.strip() for f in line.split("|")[1:]]
          for line in r.stdout.splitlines() if line.startswith("WS ")}
    assert len(ws) == 6, r.stdout
    for name, (fast, slow, reads) in ws.items():
        assert fast == slow, name  # the same outcome, the same message
    for name in ("uint8", "uint4", "int8", "float32"):
        assert ws[name][0] == "ran, correct" and ws[name][2] == "dtype reads 0", (name, ws[name])
    assert "not contiguous" in ws["strided uint8"][0]
    assert ws["complex64"][0] == "ran, correct" and ws["complex64"][2] != "dtype reads 0"  # not in the table
