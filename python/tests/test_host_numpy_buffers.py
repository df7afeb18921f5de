"""numpy arrays are read through the buffer protocol on execute's per-call path (one
PyObject_GetBuffer instead of nanobind's DLPack import, which builds a capsule per array):
both reads must describe every array alike, and what the buffer protocol cannot describe
plainly (complex, long double, byte-swapped, structured, object arrays, subclasses) takes the
general path as before. Each case is described with the buffer protocol on and off
(_C._numpy_buffer_protocol) and the two descriptions, or the two errors, compared.
"""
import numpy as np
import pytest

import opgraph

_C = opgraph._C


def _arrays():
    rng = np.random.default_rng(3)
    base = rng.standard_normal((4, 6)).astype(np.float32)
    ro = base.copy()
    ro.flags.writeable = False
    raw = np.zeros(64, np.uint8)
    cases = {
        "float32 2-d": base,
        "float64": base.astype(np.float64),
        "float16": base.astype(np.float16),
        "transposed": base.T,
        "reversed": base[::-1, ::2],
        "sliced": base[1:3, 2:5],
        "0-d": np.array(2.5, np.float32),
        "empty": np.zeros((0, 3), np.float32),
        "read-only": ro,
        "bool": base > 0,
        "complex64": base.astype(np.complex64),
        "long double": base.astype(np.longdouble),
        "byte-swapped": base.astype(">f4"),
        "structured": np.zeros(3, dtype=[("a", np.int32), ("b", np.float32)]),
        "unaligned strides": np.lib.stride_tricks.as_strided(raw[1:].view(np.uint8), shape=(5,), strides=(3,)),
        "broadcast": np.broadcast_to(base[:1], (4, 6)),
        "misaligned": np.frombuffer(raw.data, dtype=np.float32, count=4, offset=1),
        "read-only bytes": np.frombuffer(bytes(16), dtype=np.int32),
    }
    for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
        cases[np.dtype(t).name] = (base * 10).astype(t)
    return cases


def _describe(x):
    try:
        return ("ok", _C._describe_buffer(x))
    except Exception as e:  # the message is compared between the two reads
        return (type(e).__name__, str(e))


@pytest.fixture
def both_reads():
    assert _C._numpy_buffer_protocol() is True  # the default

    def run(x):
        _C._numpy_buffer_protocol(False)
        try:
            general = _describe(x)
        finally:
            _C._numpy_buffer_protocol(True)
        return _describe(x), general
    return run


@pytest.mark.parametrize("name", sorted(_arrays()))
def test_the_buffer_protocol_describes_each_array_as_the_general_path(name, both_reads):
    fast, general = both_reads(_arrays()[name])
    assert fast == general


def test_an_object_array_and_a_subclass_take_the_general_path(both_reads):
    fast, general = both_reads(np.array([1, "a"], dtype=object))
    assert fast == general and fast[0] == "TypeError"

    class Sub(np.ndarray):
        pass
    sub = np.ones((2, 2), np.float32).view(Sub)
    fast, general = both_reads(sub)
    assert fast == general and fast[0] == "ok"


def test_execute_judges_numpy_buffers_alike_through_both_reads(rng):
    g = opgraph.pygraph(io_data_type=np.float32, intermediate_data_type=np.float32, compute_data_type=np.float32)
    a = g.tensor(name="a", dim=[2, 4], stride=[4, 1], data_type=opgraph.data_type.FLOAT)
    y = g.relu(input=a)
    y.set_output(True).set_name("y").set_data_type(opgraph.data_type.FLOAT)
    g.build([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    x = rng.standard_normal((2, 4)).astype(np.float32)
    ro = np.zeros((2, 4), np.float32)
    ro.flags.writeable = False
    packs = {
        "good": lambda out: {a: x, y: out},
        "float64 input": lambda out: {a: x.astype(np.float64), y: out},
        "read-only output": lambda out: {a: x, y: ro},
        "strided input": lambda out: {a: np.repeat(x, 2, axis=1)[:, ::2], y: out},
    }
    for name, make in packs.items():
        outcomes = []
        for enabled in (True, False):
            _C._numpy_buffer_protocol(enabled)
            out = np.full((2, 4), -1, np.float32)
            try:
                g.execute(make(out))
                outcomes.append(("ran", out.tobytes()))
            except Exception as e:
                outcomes.append((type(e).__name__, str(e), out.tobytes()))
        _C._numpy_buffer_protocol(True)
        assert outcomes[0] == outcomes[1], name
    np.testing.assert_array_equal(np.frombuffer(outcomes[0][-1], np.float32).reshape(2, 4),
                                  np.full((2, 4), -1, np.float32))  # the refused call wrote nothing
