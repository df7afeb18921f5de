"""Pointwise output strides in the Python package follow cudnn-frontend: a non-virtual pointwise output
whose strides nobody set takes the strides of its first input of the same dims, holes included (through
virtual intermediates, as cudnn-frontend infers them), so an output can be bound to a strided view of
an input, in place, as cudnn-frontend's test_apply_rope does. The C++ IR keeps its own rule (dense
strides in that input's axis order); virtual tensors keep the IR's strides. Reference engine, host
buffers, float64 references."""
import numpy as np

import opgraph

F32 = np.float32
F16 = np.float16


def rope_graph(x1, x2, cos, sin):
    g = opgraph.pygraph(io_data_type=F16, intermediate_data_type=F32, compute_data_type=F32)
    X1, X2, C, S = (g.tensor_like(a) for a in (x1, x2, cos, sin))
    a = g.mul(a=X1, b=C)
    y1 = g.sub(a=a, b=g.mul(a=X2, b=S))
    y1.set_output(True).set_data_type(F16)
    y2 = g.add(a=g.mul(a=X2, b=C), b=g.mul(a=X1, b=S))
    y2.set_output(True).set_data_type(F16)
    return g, (X1, X2, C, S), (y1, y2), a


def test_rotary_embedding_in_place_on_strided_views(rng):
    b, t, head, n = 3, 6, 32, 8  # rotate the first n of each head's `head` features, in place
    x = rng.standard_normal((b, t, head)).astype(F16)
    before = x.astype(np.float64)
    x1, x2 = x[..., : n // 2], x[..., n // 2:n]  # strided views of x: strides (t*head, head, 1)
    angle = rng.standard_normal((1, t, n // 2))
    cos, sin = np.cos(angle).astype(F32), np.sin(angle).astype(F32)
    g, (X1, X2, C, S), (y1, y2), virtual = rope_graph(x1, x2, cos, sin)
    g.build()
    elem = x.itemsize
    assert y1.strides == y2.strides == [s // elem for s in x1.strides] == [t * head, head, 1]
    assert virtual.strides == [t * n // 2, n // 2, 1]  # a virtual intermediate keeps the IR's dense strides
    g.execute({X1: x1, X2: x2, C: cos, S: sin, y1: x1, y2: x2}, None)  # outputs written over their inputs

    a, bb = before[..., : n // 2], before[..., n // 2:n]
    np.testing.assert_allclose(x[..., : n // 2], a * cos - bb * sin, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(x[..., n // 2:n], bb * cos + a * sin, rtol=2e-3, atol=2e-3)
    np.testing.assert_array_equal(x[..., n:], before[..., n:].astype(F16))  # the rest untouched


def test_user_set_strides_and_dense_inputs_are_kept(rng):
    x = rng.standard_normal((4, 6)).astype(F32)
    g = opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    X = g.tensor_like(x)
    dense = g.relu(input=X)
    dense.set_output(True)
    given = g.relu(input=X)
    given.set_output(True).set_stride([1, 4])  # column-major, set by the user: kept
    g.validate()
    assert dense.strides == [6, 1] and given.strides == [1, 4]
    out_dense = np.full((4, 6), np.nan, F32)
    out_given = np.full((6, 4), np.nan, F32).T  # a column-major (4, 6) view
    g.build()
    g.execute({X: x, dense: out_dense, given: out_given}, None)
    np.testing.assert_array_equal(out_dense, np.maximum(x, 0))
    np.testing.assert_array_equal(out_given, np.maximum(x, 0))


def test_strided_input_view_gives_its_strides_to_a_new_output(rng):
    # Not in place: a new output buffer with the input view's strides (holes between rows).
    base = rng.standard_normal((5, 10)).astype(F32)
    view = base[:, 2:6]  # strides (10, 1)
    g = opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    X = g.tensor_like(view)
    y = g.mul(a=X, b=X)
    y.set_output(True)
    g.build()
    assert y.strides == [10, 1]
    holder = np.full((5, 10), np.nan, F32)
    g.execute({X: view, y: holder[:, 0:4]}, None)
    np.testing.assert_allclose(holder[:, 0:4], view.astype(np.float64) ** 2, rtol=1e-6)
    assert np.isnan(holder[:, 4:]).all()  # the holes are not written


def test_a_broadcast_input_does_not_give_its_zero_strides(rng):
    # An input view broadcast by stride 0 (numpy broadcast_to / torch expand) of the output's dims:
    # copying its strides would give many elements one address, so the output keeps the IR's.
    row = rng.standard_normal((1, 6)).astype(F32)
    wide = np.broadcast_to(row, (4, 6))  # strides (0, 4 bytes)
    g = opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    X = g.tensor_like(wide)
    assert X.strides == [0, 1]
    y = g.exp(input=X)
    y.set_output(True)
    g.build()
    assert y.strides == [1, 4]  # the IR's rule: dense, in the input's axis order (its stride-0 axis innermost)
    out = np.full((6, 4), np.nan, F32).T
    g.execute({X: wide, y: out}, None)
    np.testing.assert_allclose(out, np.exp(np.broadcast_to(row.astype(np.float64), (4, 6))), rtol=1e-6)
