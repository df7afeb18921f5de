"""A binding that refuses what it cannot read.

Each buffer handed to execute is checked against the graph's declaration before anything
reads or writes it: its element type must be the declared one (uint8 storage for the fp8 /
fp4 types is the one exception), an output must be writable, a tensor key must be this
graph's, an int address must fit 64 bits unsigned, a torch tensor bound by its address must
cover the declared span (strided torch tensors are judged by their strides). Every refusal
is a mapped exception (ValueError for caller errors) whose message names the operand and
the rule.
"""
import numpy as np
import pytest

import opgraph

F32 = np.float32


def neg_graph():
    g = opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    a = g.tensor(dim=[2, 3], data_type=F32, name="a")
    y = g.neg(input=a)
    y.set_output(True).set_name("y")
    g.build([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    return g, a, y


# ------------------------------------------------------------------ dtypes --
@pytest.mark.parametrize("dtype,name", [(np.complex64, "complex64"), (np.int32, "INT32"), (np.float64, "DOUBLE"),
                                        (np.uint8, "UINT8"), (np.float16, "HALF"), (np.uint32, "uint32")])
def test_an_input_of_another_dtype_is_refused_naming_both_types(dtype, name):
    g, a, y = neg_graph()
    x = np.ones((2, 3), dtype) if dtype is not np.uint8 else np.ones((2, 12), dtype)  # uint8: 24 bytes cover it
    out = np.full((2, 3), 7, F32)
    with pytest.raises(ValueError, match=rf"tensor 'a'.*{name}.*declared FLOAT") as e:
        g.execute({a: x, y: out})
    assert "uid" in str(e.value)
    assert (out == 7).all()  # nothing ran
    with pytest.raises(ValueError, match=rf"tensor 'a'.*{name}"):  # prepare_variant_pack checks the same
        g.prepare_variant_pack({a: x, y: out})


def test_an_output_of_another_dtype_is_refused():
    g, a, y = neg_graph()
    with pytest.raises(ValueError, match=r"tensor 'y'.*INT32.*declared FLOAT"):
        g.execute({a: np.ones((2, 3), F32), y: np.zeros((2, 3), np.int32)})


def test_a_same_width_integer_is_not_read_as_float_through_array_interface():
    class HostArray:  # only __array_interface__ (no DLPack, no buffer protocol)
        def __init__(self, arr):
            self._arr = arr
            self.__array_interface__ = arr.__array_interface__

    g, a, y = neg_graph()
    with pytest.raises(ValueError, match=r"tensor 'a'.*INT32.*declared FLOAT"):
        g.execute({a: HostArray(np.ones((2, 3), np.int32)), y: np.zeros((2, 3), F32)})
    with pytest.raises(ValueError, match=r"tensor 'a'.*<c8.*declared FLOAT"):
        g.execute({a: HostArray(np.ones((2, 3), np.complex64)), y: np.zeros((2, 3), F32)})


def test_a_byte_swapped_float_is_not_read_as_the_hosts_float():
    g, a, y = neg_graph()
    swapped = np.ones((2, 3), np.dtype(F32).newbyteorder())
    with pytest.raises(ValueError, match=r"tensor 'a'.*f4.*declared FLOAT"):
        g.execute({a: swapped, y: np.zeros((2, 3), F32)})


def test_the_declared_dtype_in_other_dense_extents_still_runs(rng):
    # The dtype rule is about element types; the extent rules are unchanged: a flat buffer of
    # the declared type covering the declared bytes is read as declared.
    g, a, y = neg_graph()
    x = rng.standard_normal(6).astype(F32)
    out = np.zeros(6, F32)
    g.execute({a: x, y: out})
    np.testing.assert_array_equal(out, -x)


def dequant_graph(m=128, k=64):
    g = opgraph.pygraph(io_data_type=F32, compute_data_type=F32)
    x = g.tensor(dim=[1, m, k], data_type="fp4_e2m1", name="x")
    s = g.tensor(dim=[1, m, k // 16], data_type="fp8_e4m3", name="s",
                 reordering_type=opgraph.tensor_reordering.F8_128x4)
    alpha = g.tensor(dim=[1, 1, 1], data_type=F32, name="alpha")
    y = g.mul(a=g.block_scale_dequantize(X=x, scale=s, block_size=[1, 1, 16]), b=alpha)
    y.set_output(True).set_name("y")
    g.build([opgraph.heur_mode.FALLBACK])
    return g, x, s, alpha, y


def test_uint8_storage_for_fp4_data_and_e4m3_scales_keeps_working(rng):
    m, k = 128, 64
    g, x, s, alpha, y = dequant_graph(m, k)
    data = rng.integers(0, 256, (1, m, k // 2), dtype=np.uint8)
    scales = (0x30 + rng.integers(0, 0x20, m * k // 16)).astype(np.uint8)  # finite e4m3 in [2^-3, 2^1)
    al = np.array([[[1.5]]], F32)
    want = np.full((1, m, k), np.nan, F32)
    g.execute({x: data, s: scales.reshape(1, m, k // 16), alpha: al, y: want})
    got = np.full((m, k), np.nan, F32)  # FlashInfer's shapes: 2-D data, flat scale blob, 0-d scalar, 2-D output
    g.execute({x: data.reshape(m, k // 2), s: scales, alpha: np.array(1.5, F32), y: got})
    np.testing.assert_array_equal(got, want.reshape(m, k))
    assert np.count_nonzero(want) > m * k // 2


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.bool_])
def test_other_byte_types_for_fp4_or_fp8_are_refused(rng, dtype):
    m, k = 128, 64
    g, x, s, alpha, y = dequant_graph(m, k)
    data = np.zeros((m, k // 2), np.uint8)
    scales = np.zeros(m * k // 16, np.uint8)
    bad = np.zeros(m * k // 16, dtype)
    with pytest.raises(ValueError, match=r"tensor 's'.*declared FP8_E4M3.*uint8"):
        g.execute({x: data, s: bad, alpha: np.array(1.0, F32), y: np.zeros((m, k), F32)})
    g.execute({x: data, s: scales, alpha: np.array(1.0, F32), y: np.zeros((m, k), F32)})


# -------------------------------------------------------------- read-only --
def test_a_read_only_numpy_output_is_refused(rng):
    g, a, y = neg_graph()
    x = rng.standard_normal((2, 3)).astype(F32)
    out = np.zeros((2, 3), F32)
    out.setflags(write=False)
    with pytest.raises(ValueError, match=r"tensor 'y'.*read-only"):
        g.execute({a: x, y: out})
    assert (out == 0).all()
    x.setflags(write=False)  # a read-only INPUT is fine
    w = np.zeros((2, 3), F32)
    g.execute({a: x, y: w})
    np.testing.assert_array_equal(w, -x)


def test_immutable_bytes_and_read_only_memoryviews_are_refused_as_outputs(rng):
    g, a, y = neg_graph()
    x = rng.standard_normal((2, 3)).astype(F32)
    blob = bytes(24)
    with pytest.raises(ValueError, match=r"tensor 'y'.*read-only"):
        g.execute({a: x, y: blob})
    assert blob == bytes(24)
    ro = memoryview(bytearray(24)).cast("f").toreadonly()
    with pytest.raises(ValueError, match=r"tensor 'y'.*read-only"):
        g.execute({a: x, y: ro})
    rw = bytearray(24)  # writable bytes-like: fine, read as declared... but it is uint8, so refused by type
    with pytest.raises(ValueError, match=r"tensor 'y'.*UINT8.*declared FLOAT"):
        g.execute({a: x, y: rw})
    f = memoryview(bytearray(24)).cast("f")  # a writable float32 view: runs
    g.execute({a: x, y: f})
    np.testing.assert_array_equal(np.frombuffer(f, F32), -x.ravel())


def test_a_read_only_workspace_is_refused():
    g, a, y = neg_graph()
    ws = np.zeros(max(g.get_workspace_size(), 16), np.uint8)
    ws.setflags(write=False)
    with pytest.raises(ValueError, match="workspace.*read-only"):
        g.execute({a: np.zeros((2, 3), F32), y: np.zeros((2, 3), F32)}, ws)
    with pytest.raises(ValueError, match="workspace.*read-only"):
        g.execute({a: np.zeros((2, 3), F32), y: np.zeros((2, 3), F32)}, bytes(64))


class DLPackOnly:
    """A producer with only __dlpack__ / __dlpack_device__ (DLPack 1.x: versioned capsule, flags)."""

    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, **kw):
        return self._arr.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


def test_a_dlpack_read_only_output_is_refused(rng):
    g, a, y = neg_graph()
    x = rng.standard_normal((2, 3)).astype(F32)
    out = np.zeros((2, 3), F32)
    out.setflags(write=False)
    with pytest.raises(ValueError, match=r"tensor 'y'.*read-only"):
        g.execute({a: x, y: DLPackOnly(out)})
    assert (out == 0).all()
    x.setflags(write=False)
    w = np.zeros((2, 3), F32)
    g.execute({a: DLPackOnly(x), y: DLPackOnly(w)})
    np.testing.assert_array_equal(w, -x)


def test_describe_buffer_reports_read_only():
    a = np.zeros(3, F32)
    assert opgraph._C._describe_buffer(a)["read_only"] is False
    a.setflags(write=False)
    assert opgraph._C._describe_buffer(a)["read_only"] is True
    assert opgraph._C._describe_buffer(b"abcd")["read_only"] is True


# ------------------------------------------------------- another graph --
def test_a_tensor_of_another_graph_with_the_same_uid_is_refused(rng):
    g, a, y = neg_graph()
    h, b, z = neg_graph()
    assert (a.uid, y.uid) == (b.uid, z.uid)
    x = rng.standard_normal((2, 3)).astype(F32)
    out = np.zeros((2, 3), F32)
    with pytest.raises(ValueError, match=rf"uid {b.uid}.*tensor of another graph"):
        g.execute({b: x, y: out})
    with pytest.raises(ValueError, match="another graph"):
        g.prepare_variant_pack({a: x, z: out})
    g.execute({a.uid: x, y.uid: out})  # uids are this graph's by definition
    np.testing.assert_array_equal(out, -x)


# -------------------------------------------------------------- addresses --
@pytest.mark.parametrize("addr", [-1, -(2 ** 63), 2 ** 64, 2 ** 70])
def test_an_address_outside_64_bits_unsigned_is_a_value_error(addr):
    g, a, y = neg_graph()
    out = np.zeros((2, 3), F32)
    with pytest.raises(ValueError, match=r"tensor 'a'.*address"):
        g.execute({a: addr, y: out})
    with pytest.raises(ValueError, match="workspace.*address"):
        g.execute({a: np.zeros((2, 3), F32), y: out}, addr)
    with pytest.raises(ValueError, match="address"):
        opgraph._C._describe_buffer(addr)


def test_an_array_interface_address_outside_64_bits_is_a_value_error():
    class Dev:
        __cuda_array_interface__ = {"data": (-5, False), "shape": (2, 3), "typestr": "<f4", "version": 3}

    with pytest.raises(ValueError, match="address"):
        opgraph._C._describe_buffer(Dev())


@pytest.mark.parametrize("stream", [-1, 2 ** 64])
def test_a_stream_address_outside_64_bits_is_a_value_error(stream):
    h = opgraph.create_handle()

    class TorchLikeStream:
        cuda_stream = stream

    for s in (stream, TorchLikeStream()):
        with pytest.raises(ValueError, match="stream.*address"):
            opgraph.set_stream(h, s)


@pytest.mark.parametrize("key", [2 ** 70, -(2 ** 70)])
def test_a_uid_key_outside_64_bits_is_a_value_error(key):
    g, a, y = neg_graph()
    with pytest.raises(ValueError, match="uid"):
        g.execute({key: np.zeros((2, 3), F32), y: np.zeros((2, 3), F32)})


# ------------------------------------------------------- scalars, json --
@pytest.mark.parametrize("value", ["x", 1j, [1.0], 2 ** 70, -(2 ** 64)])
def test_a_pass_by_value_scalar_that_is_not_a_number_is_a_value_error(value):
    g = opgraph.pygraph(io_data_type=F32)
    with pytest.raises(ValueError, match="tensor 'eps'.*value"):
        g.tensor_scalar(value, name="eps")


def test_numpy_scalars_are_numbers():
    g = opgraph.pygraph(io_data_type=F32)
    assert g.tensor_scalar(np.float32(0.5)).get_pass_by_value() == 0.5
    assert g.tensor_scalar(np.int64(3), data_type=opgraph.data_type.INT64).get_pass_by_value() == 3


@pytest.mark.parametrize("data", [b"\xff\xfe{}", bytearray(b'{"a": "\xc3"}'), memoryview(b"\x80"), "{\udcff}"])
def test_deserialize_of_bytes_that_are_not_utf8_is_not_supported(data):
    with pytest.raises(opgraph.GraphNotSupportedError, match="UTF-8"):
        opgraph.deserialize(data)
    with pytest.raises(opgraph.GraphNotSupportedError, match="UTF-8"):
        opgraph.pygraph().deserialize(data)


# ------------------------------------------------------------------ torch --
def test_torch_tensors_have_their_dtype_checked_on_the_fast_path():
    torch = pytest.importorskip("torch")
    g, a, y = neg_graph()
    out = torch.zeros(2, 3)
    with pytest.raises(ValueError, match=r"tensor 'a'.*INT32.*declared FLOAT"):
        g.execute({a: torch.ones(2, 3, dtype=torch.int32), y: out})
    with pytest.raises(ValueError, match=r"tensor 'a'.*torch.complex64.*declared FLOAT"):
        g.execute({a: torch.ones(2, 3, dtype=torch.complex64), y: out})
    with pytest.raises(ValueError, match=r"tensor 'y'.*HALF.*declared FLOAT"):
        g.execute({a: torch.ones(2, 3), y: torch.zeros(2, 3, dtype=torch.float16)})
    g.execute({a: torch.ones(2, 3), y: out})
    assert (out == -1).all()


def test_torch_uint8_and_float8_storage_for_fp4_data_and_e4m3_scales(rng):
    torch = pytest.importorskip("torch")
    m, k = 128, 64
    g, x, s, alpha, y = dequant_graph(m, k)
    data = torch.from_numpy(rng.integers(0, 256, (m, k // 2), dtype=np.uint8))
    scales = torch.from_numpy((0x30 + rng.integers(0, 0x20, m * k // 16)).astype(np.uint8))
    al = torch.tensor(1.25)
    want, got = torch.zeros(m, k), torch.zeros(m, k)
    g.execute({x: data, s: scales, alpha: al, y: want})
    if hasattr(torch, "float8_e4m3fn"):
        g.execute({x: data, s: scales.view(torch.float8_e4m3fn), alpha: al, y: got})
        assert torch.equal(got, want)
        with pytest.raises(ValueError, match=r"tensor 's'.*FP8_E5M2.*declared FP8_E4M3"):
            g.execute({x: data, s: scales.view(torch.float8_e5m2), alpha: al, y: got})
    with pytest.raises(ValueError, match=r"tensor 'x'.*INT8.*declared FP4_E2M1.*uint8"):
        g.execute({x: data.view(torch.int8), s: scales, alpha: al, y: got})


# ---------------------------------------------------------- torch extents --
# execute reads a contiguous torch tensor by its address alone (data_ptr, is_cuda, dtype,
# is_contiguous(), nbytes: the execute hot path). Its bytes must cover the declared span,
# else ValueError naming the uid, the tensor and the rule; any other torch tensor (strided,
# expanded, transposed) is described by its shape and strides, so it is judged as the same
# memory handed over as a numpy array is. The checks take `as_tensor` (a numpy array -> a
# torch tensor over the same memory) so they run with torch and, without it, on a stand-in
# that speaks the same attributes (test_torch_extent_rules_on_a_stand_in).
def _outcome(fn):
    try:
        fn()
        return "ran"
    except ValueError as e:
        return f"ValueError: {e}"


def torch_extent_checks(as_tensor):
    g, a, y = neg_graph()
    T = as_tensor
    store = np.full(10, 7, F32)
    # Too short: an input of 5 elements, an output view of 4 over a longer storage.
    with pytest.raises(ValueError, match=r"uid \d+ \(tensor 'a'\).*buffer_span.*covers 20 bytes.*"
                                         r"declaration spans 24 bytes"):
        g.execute({a: T(np.ones(5, F32)), y: T(store[:6])})
    with pytest.raises(ValueError, match=r"tensor 'a'.*covers 20 bytes"):
        g.prepare_variant_pack({a: T(np.ones(5, F32)), y: T(store[:6])})
    with pytest.raises(ValueError, match=r"uid \d+ \(tensor 'y'\).*covers 16 bytes.*spans 24 bytes"):
        g.execute({a: T(np.ones((2, 3), F32)), y: T(store[:4])})
    with pytest.raises(ValueError, match=r"tensor 'y'.*covers 0 bytes"):
        g.execute({a: T(np.ones((2, 3), F32)), y: T(store[:0])})
    assert (store == 7).all()  # nothing ran, nothing written past a view
    # Dense and covering: read as declared (a flat view, the declared extents, a larger one).
    g.execute({a: T(np.arange(1, 7, dtype=F32)), y: T(store[2:8])})
    assert store.tolist() == [7, 7, -1, -2, -3, -4, -5, -6, 7, 7]
    g.execute(g.prepare_variant_pack({a: T(np.ones((2, 3), F32)), y: T(store[:6].reshape(2, 3))}))
    assert store.tolist() == [-1] * 6 + [-5, -6, 7, 7]
    store[:] = 7

    # Strided tensors are judged by their own strides, as the same numpy arrays are: never read
    # (or written) by the declaration's layout past their storage or in the wrong order.
    base = np.array([1, 2, 3, 99, 99, 99], F32)
    st = np.lib.stride_tricks.as_strided
    inputs = {
        "stride-0 rows (12 bytes of storage, 24 of elements)": st(base, (2, 3), (0, 4)),
        "transposed": np.arange(6, dtype=F32).reshape(3, 2).T,
        "every other column": np.arange(12, dtype=F32).reshape(2, 6)[:, ::2],
    }
    for what, x in inputs.items():
        want_out, got_out = np.full((2, 3), 7, F32), np.full((2, 3), 7, F32)
        want = _outcome(lambda: g.execute({a: x, y: want_out}))
        got = _outcome(lambda: g.execute({a: T(x), y: T(got_out)}))
        assert got == want, what
        np.testing.assert_array_equal(got_out, want_out, err_msg=what)
        assert not (got_out == -99).any(), what
    # An expanded output (stride 0 over one element) writes nothing past its element.
    want = _outcome(lambda: g.execute({a: np.ones((2, 3), F32), y: st(np.full(6, 7, F32), (2, 3), (0, 0))}))
    got = _outcome(lambda: g.execute({a: T(np.ones((2, 3), F32)), y: T(st(store, (2, 3), (0, 0)))}))
    assert got == want
    assert (store[1:] == 7).all()
    # A workspace too: an expanded tensor's nbytes (numel x 4) is not its memory (4 bytes).
    with pytest.raises(ValueError, match=r"workspace.*not contiguous"):
        g.execute({a: T(np.ones((2, 3), F32)), y: T(store[:6])}, workspace=T(st(store, (1 << 20,), (0,))))
    assert (store == 7).all()

    # A declaration that is not row-major (column-major `a`): a tensor is never bound by its
    # address alone; its strides decide, as for numpy.
    g2 = opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    a2 = g2.tensor(dim=[2, 3], stride=[1, 2], data_type=F32, name="a")
    y2 = g2.neg(input=a2)
    y2.set_output(True).set_name("y")
    g2.build([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    col = np.arange(6, dtype=F32).reshape(3, 2).T  # column-major memory of the declared extents
    for what, x in {"column-major": col, "row-major": np.ascontiguousarray(col)}.items():
        want_out, got_out = np.full((3, 2), 7, F32).T, np.full((3, 2), 7, F32).T
        want = _outcome(lambda: g2.execute({a2: x, y2: want_out}))
        got = _outcome(lambda: g2.execute({a2: T(x), y2: T(got_out)}))
        assert got == want, what
        np.testing.assert_array_equal(got_out, want_out, err_msg=what)
    np.testing.assert_array_equal(got_out, want_out)
    g2.execute({a2: T(col), y2: T(got_out)})
    np.testing.assert_array_equal(got_out, -col)


def test_torch_tensors_must_cover_the_declared_span_and_strided_ones_keep_their_strides():
    torch = pytest.importorskip("torch")
    torch_extent_checks(torch.from_numpy)


def test_torch_fp4_pairs_are_judged_as_their_uint8_bytes(rng):
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float4_e2m1fn_x2"):
        pytest.skip("torch without float4_e2m1fn_x2")
    m, k = 128, 64
    g, x, s, alpha, y = dequant_graph(m, k)
    wide = rng.integers(0, 256, (m, k), dtype=np.uint8)  # the data is its left half: a strided view
    scales = (0x30 + rng.integers(0, 0x20, m * k // 16)).astype(np.uint8)
    al = np.array(1.25, F32)
    for what, data in {"contiguous": np.ascontiguousarray(wide[:, :k // 2]), "strided": wide[:, :k // 2]}.items():
        want_out, got_out = np.full((m, k), np.nan, F32), np.full((m, k), np.nan, F32)
        want = _outcome(lambda: g.execute({x: data, s: scales, alpha: al, y: want_out}))
        fp4 = torch.from_numpy(data).view(torch.float4_e2m1fn_x2)
        got = _outcome(lambda: g.execute({x: fp4, s: torch.from_numpy(scales), alpha: torch.from_numpy(al),
                                          y: torch.from_numpy(got_out)}))
        assert got == want, what
        np.testing.assert_array_equal(got_out, want_out, err_msg=what)
    with pytest.raises(ValueError, match=r"tensor 'x'.*covers 2048 bytes.*spans 4096 bytes"):
        g.execute({x: torch.from_numpy(wide[: m // 2, : k // 2].copy()).view(torch.float4_e2m1fn_x2),
                   s: torch.from_numpy(scales), alpha: torch.from_numpy(al), y: torch.from_numpy(got_out)})


# A stand-in for torch (run in a subprocess: the binding remembers the first torch.Tensor type
# it sees): a torch.Tensor class speaking the attributes execute reads, over a numpy array.
_STAND_IN = '''
import numpy as np

class dtype:
    def __init__(self, name):
        self._name = name
    def __str__(self):
        return "torch." + self._name

float32 = dtype("float32")

class Tensor:
    is_cuda = False
    def __init__(self, arr):
        assert arr.dtype == np.float32
        self._a = arr
    def data_ptr(self):
        return self._a.__array_interface__["data"][0]
    @property
    def dtype(self):
        return float32
    @property
    def nbytes(self):
        return self._a.nbytes
    def is_contiguous(self):
        return self._a.flags.c_contiguous
    @property
    def shape(self):
        return tuple(self._a.shape)
    def stride(self):
        return tuple(s // self._a.itemsize for s in self._a.strides)
'''


def test_torch_extent_rules_on_a_stand_in(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "torch.py").write_text(_STAND_IN)
    script = ("import torch, test_buffer_trust as t\n"
              "t.torch_extent_checks(torch.Tensor)\n"
              "print('stand-in checks passed')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), os.path.dirname(__file__)] + sys.path)
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "stand-in checks passed" in r.stdout, r.stdout + r.stderr


# ------------------------------------------------- the "cudnn" binding policy --
@pytest.fixture
def cudnn_binding():
    before = opgraph.get_binding_policy()
    opgraph.set_binding_policy("cudnn")
    yield
    opgraph.set_binding_policy(before)


def test_the_default_policy_is_strict():
    assert opgraph.get_binding_policy() == "strict"
    with pytest.raises(ValueError, match="set_binding_policy"):
        opgraph.set_binding_policy("loose")


def test_cudnn_policy_binds_a_same_width_type_by_address_with_a_warning(rng, cudnn_binding):
    # cuDNN binds every entry by its address: an INT32 buffer for a FLOAT input is read as the
    # FLOAT bits it holds. Under the "cudnn" policy opgraph does the same and warns, naming both.
    g, a, y = neg_graph()
    x = rng.standard_normal((2, 3)).astype(F32)
    out = np.full((2, 3), 7, F32)
    with pytest.warns(opgraph.BindingWarning, match=r"tensor 'a'.*bind_by_address.*INT32.*declared FLOAT"):
        g.execute({a: x.view(np.int32), y: out})
    np.testing.assert_array_equal(out, -x)
    out16 = np.full((2, 3), 7, F32)  # another width stays refused: the plan would read past it
    with pytest.raises(ValueError, match=r"tensor 'a'.*DOUBLE.*declared FLOAT"):
        g.execute({a: x.astype(np.float64), y: out16})
    assert (out16 == 7).all()


def test_cudnn_policy_warning_as_error_leaves_the_outputs_untouched(rng, cudnn_binding):
    import warnings

    g, a, y = neg_graph()
    out = np.full((2, 3), 7, F32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", opgraph.BindingWarning)
        with pytest.raises(opgraph.BindingWarning, match="tensor 'a'"):
            g.execute({a: np.ones((2, 3), np.int32), y: out})
    assert (out == 7).all()


def test_strict_policy_refuses_what_cudnn_policy_binds():
    g, a, y = neg_graph()
    with pytest.raises(ValueError, match=r"tensor 'a'.*INT32.*declared FLOAT.*set_binding_policy"):
        g.execute({a: np.ones((2, 3), np.int32), y: np.zeros((2, 3), F32)})


def test_the_environment_sets_the_cudnn_policy_at_import():
    import os
    import subprocess
    import sys

    code = "import opgraph; print(opgraph.get_binding_policy())"
    for value, want in [("cudnn", "cudnn"), ("strict", "strict"), ("", "strict")]:
        env = dict(os.environ, OPGRAPH_BINDING=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == want
