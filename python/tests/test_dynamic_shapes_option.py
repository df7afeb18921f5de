"""A graph planned dynamic from the start (Graph::set_dynamic_shapes): pygraph's
is_dynamic_shape_enabled and is_override_shape_enabled constructor arguments set it, it is
frozen by planning, deserializing into the graph keeps it (it belongs to the Python object,
as its handle does), and a dynamic graph on the host plans, builds and runs as a static one
(checked against numpy on fresh inputs, the output poisoned first)."""
import numpy as np
import pytest

import opgraph

F32 = np.float32


def graph(**kw):
    return opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32, **kw)


def test_off_by_default():
    g = graph()
    assert g.dynamic_shapes is False
    assert g.is_dynamic_shape_enabled is False
    assert g.is_override_shape_enabled is False


def test_is_dynamic_shape_enabled_sets_it():
    g = graph(is_dynamic_shape_enabled=True)
    assert g.dynamic_shapes is True
    assert g.is_dynamic_shape_enabled is True


def test_is_override_shape_enabled_sets_it():
    g = graph(is_override_shape_enabled=True)
    assert g.dynamic_shapes is True
    assert g.is_dynamic_shape_enabled is False  # the argument as given; the graph is planned dynamic


def test_set_dynamic_shapes_round_trips_and_is_frozen_by_planning(rng):
    g = graph()
    g.set_dynamic_shapes(True)
    assert g.dynamic_shapes is True
    g.set_dynamic_shapes(False)
    assert g.dynamic_shapes is False
    g.set_dynamic_shapes(True)
    a_np = rng.standard_normal((1, 4, 6)).astype(F32)
    b_np = rng.standard_normal((1, 6, 3)).astype(F32)
    a, b = g.tensor_like(a_np, name="a"), g.tensor_like(b_np, name="b")
    c = g.matmul(A=a, B=b)
    c.set_output(True)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    with pytest.raises(opgraph.FrozenGraphError, match="set_dynamic_shapes comes before planning"):
        g.set_dynamic_shapes(False)
    assert g.dynamic_shapes is True
    g.build_plans()
    ws = np.empty(max(g.get_workspace_size(), 1), np.uint8)
    out = np.full(c.dims, np.nan, F32)
    g.execute({a: a_np, b: b_np, c: out}, ws)
    np.testing.assert_allclose(out, a_np.astype(np.float64) @ b_np.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_deserializing_into_the_graph_keeps_it():
    src = graph()
    a = src.tensor(dim=[1, 4, 6], stride=[24, 6, 1], data_type=F32, name="a")
    b = src.tensor(dim=[1, 6, 3], stride=[18, 3, 1], data_type=F32, name="b")
    src.matmul(A=a, B=b).set_output(True)
    src.validate()
    text = src.serialize()
    for kw, want in (({"is_dynamic_shape_enabled": True}, True), ({"is_override_shape_enabled": True}, True),
                     ({}, False)):
        g = graph(**kw)
        g.deserialize(text)
        assert g.dynamic_shapes is want, kw
