"""The per-call host path of pygraph.execute (docs/autotune.md "Measured host cost"), on the
host reference with numpy buffers:

* execute is the native method: a plain dict pack reaches the C++ walk without a Python frame,
  and a pack that needs pygraph's Python-level handling (None keys, pass-by-value entries,
  cudnn's output aliases) still gets it (_execute_hooks);
* a call whose buffers read exactly as the last call's reuses the core's normalised pack, keyed
  on what is checked (address, extents, strides, dtype, memory, read-only), never on the Python
  objects: a buffer swapped, resized in place or made read-only is judged again, a bad one still
  raises naming the tensor and the rule, and a refused call writes nothing.
"""
import numpy as np
import pytest

import opgraph
from _host_helpers import add_graph

F32 = np.float32


def test_execute_is_the_native_method():
    # No Python-level override: the frame per call is gone (the hooks live in _execute_hooks).
    assert opgraph.pygraph.execute is opgraph._C._GraphBase.execute
    assert "execute-time shapes" in opgraph.pygraph.execute.__doc__


def test_repeated_calls_on_the_same_buffers_compute_each_time(rng):
    g, a, b, c = add_graph()
    x, y = rng.standard_normal((2, 1, 8)).astype(F32)
    out = np.full((1, 8), np.nan, F32)
    pack = {a: x, b: y, c: out}
    for i in range(3):
        x[...] = rng.standard_normal((1, 8))  # new contents, same buffers: the reused pack reads them in place
        out[...] = np.nan
        g.execute(pack)
        np.testing.assert_allclose(out, x + y, rtol=1e-6)


def test_a_swapped_output_buffer_is_written_not_the_last_one(rng):
    g, a, b, c = add_graph()
    x, y = rng.standard_normal((2, 1, 8)).astype(F32)
    first, second = np.full((1, 8), np.nan, F32), np.full((1, 8), np.nan, F32)
    g.execute({a: x, b: y, c: first})
    first[...] = -1
    g.execute({a: x, b: y, c: second})
    np.testing.assert_allclose(second, x + y, rtol=1e-6)
    assert (first == -1).all()
    # The same dict object with a value replaced: judged by what it holds now.
    pack = {a: x, b: y, c: first}
    g.execute(pack)
    pack[c] = second
    second[...] = np.nan
    g.execute(pack)
    np.testing.assert_allclose(second, x + y, rtol=1e-6)


def test_a_buffer_resized_in_place_is_judged_again(rng):
    g, a, b, c = add_graph()
    x, y = (np.array(v) for v in rng.standard_normal((2, 1, 8)).astype(F32))  # arrays owning their data
    out = np.full((1, 8), np.nan, F32)
    pack = {a: x, b: y, c: out}
    g.execute(pack)
    # The same Python object, now [1, 4]: a cache keyed by identity would run it on the old facts.
    x.resize((1, 4), refcheck=False)
    out[...] = -1
    with pytest.raises(ValueError) as e:
        g.execute(pack)
    assert "'a'" in str(e.value)
    assert (out == -1).all()  # the refused call wrote nothing


def test_bad_buffers_after_a_good_call_still_raise_and_write_nothing(rng):
    g, a, b, c = add_graph()
    x, y = rng.standard_normal((2, 1, 8)).astype(F32)
    out = np.full((1, 8), np.nan, F32)
    g.execute({a: x, b: y, c: out})
    out[...] = -1
    with pytest.raises(ValueError) as e:  # the element type: float64 memory is never read as FLOAT
        g.execute({a: x.astype(np.float64), b: y, c: out})
    assert "'a'" in str(e.value) and "DOUBLE" in str(e.value)
    ro = out.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError) as e:  # a read-only output
        g.execute({a: x, b: y, c: ro})
    assert "read-only" in str(e.value) and "'c'" in str(e.value)
    with pytest.raises(ValueError) as e:  # an operand missing
        g.execute({a: x, c: out})
    assert "'b'" in str(e.value)
    assert (out == -1).all()
    g.execute({a: x, b: y, c: out})  # and the good pack runs again
    np.testing.assert_allclose(out, x + y, rtol=1e-6)


def test_a_strided_view_of_the_same_address_is_not_the_dense_buffer(rng):
    g, a, b, c = add_graph(4)
    base = rng.standard_normal((1, 8)).astype(F32)
    y = rng.standard_normal((1, 4)).astype(F32)
    out = np.full((1, 4), np.nan, F32)
    g.execute({a: base[:, :4], b: y, c: out})
    np.testing.assert_allclose(out, base[:, :4] + y, rtol=1e-6)
    out[...] = -1
    with pytest.raises(ValueError) as e:  # same address, other strides: the engine's stride rule
        g.execute({a: base[:, ::2], b: y, c: out})
    assert "'a'" in str(e.value) and "strides" in str(e.value)
    assert (out == -1).all()


def test_packs_needing_python_handling_still_get_it(rng):
    g, a, b, c = add_graph()
    x, y = rng.standard_normal((2, 1, 8)).astype(F32)
    out = np.full((1, 8), np.nan, F32)
    g.execute({a: x, b: y, c: out, None: np.zeros(1, F32)})  # None keys are ignored
    np.testing.assert_allclose(out, x + y, rtol=1e-6)
    # A pass-by-value tensor: its entry is checked against the built value and dropped.
    g2 = opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    a2 = g2.tensor_like(x, name="a")
    s = g2.tensor(dim=[1], stride=[1], data_type=opgraph.data_type.FLOAT, is_pass_by_value=True, value=2.0,
                  name="s")
    c2 = g2.mul(a=a2, b=s)
    c2.set_output(True).set_name("c").set_data_type(opgraph.data_type.FLOAT)
    g2.build([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    out[...] = np.nan
    g2.execute({a2: x, s: np.array([2.0], F32), c2: out})
    np.testing.assert_allclose(out, 2 * x, rtol=1e-6)
    with pytest.raises(ValueError) as e:
        g2.execute({a2: x, s: np.array([3.0], F32), c2: out})
    assert "'s'" in str(e.value) and "built with the value" in str(e.value)
