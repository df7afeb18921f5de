"""A graph planned dynamic from the start (Graph::set_dynamic_shapes): pygraph's
is_dynamic_shape_enabled constructor argument sets it (is_override_shape_enabled alone does not), it is
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


def test_is_override_shape_enabled_alone_does_not_set_it():
    # cudnn-frontend keeps the two apart; an override-enabled graph's cuDNN plans are deselected beside
    # gemm plans or refused at check_support (test_cudnn_override_shape.py), its plans stay static.
    g = graph(is_override_shape_enabled=True)
    assert g.dynamic_shapes is False
    assert graph(is_override_shape_enabled=True, is_dynamic_shape_enabled=True).dynamic_shapes is True


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
    for kw, want in (({"is_dynamic_shape_enabled": True}, True), ({"is_override_shape_enabled": True}, False),
                     ({}, False)):
        g = graph(**kw)
        g.deserialize(text)
        assert g.dynamic_shapes is want, kw


def test_a_graph_rebuilt_for_a_pass_by_value_keeps_it(rng):
    # execute builds the graph again for a pass-by-value given only at execute: that graph is
    # planned dynamic too (the plan it replays was ranked on the dynamic graph).
    g = graph(is_dynamic_shape_enabled=True)
    x_np = rng.standard_normal((2, 8)).astype(F32)
    x = g.tensor(name="x", dim=[2, 8], data_type=F32)
    alpha = g.tensor(name="alpha", dim=[1, 1], stride=[1, 1], is_pass_by_value=True, data_type=F32)
    y = g.mul(a=x, b=alpha)
    y.set_output(True).set_data_type(F32)
    g.build()
    for value in (2.5, -0.75):
        out = np.full((2, 8), np.nan, F32)
        g.execute({x: x_np, alpha: np.array([value], F32), y: out}, None)
        np.testing.assert_allclose(out, x_np.astype(np.float64) * np.float32(value), rtol=1e-6, atol=1e-6)
    rebuilt = list(g._rebuilt.values())
    assert rebuilt, "a value other than the declared one rebuilds the graph"
    assert all(r.dynamic_shapes is True for r in rebuilt)


def test_a_built_graph_serialized_and_read_back_is_planned_dynamic_again(rng):
    # serialize() of a built graph carries its plan record, which says the graph was planned
    # dynamic; opgraph.deserialize (a plain pygraph) plans the graph read back so.
    for kw, want in (({"is_dynamic_shape_enabled": True}, True), ({}, False)):
        g = graph(**kw)
        a_np = rng.standard_normal((1, 4, 6)).astype(F32)
        b_np = rng.standard_normal((1, 6, 3)).astype(F32)
        a, b = g.tensor_like(a_np, name="a"), g.tensor_like(b_np, name="b")
        c = g.matmul(A=a, B=b)
        c.set_output(True)
        g.build()
        back = opgraph.deserialize(g.serialize())
        assert back.dynamic_shapes is want, kw
        out = np.full((1, 4, 3), np.nan, F32)
        ws = np.empty(max(back.get_workspace_size(), 1), np.uint8)
        back.execute({a.get_uid(): a_np, b.get_uid(): b_np, c.get_uid(): out}, ws)
        np.testing.assert_allclose(out, a_np.astype(np.float64) @ b_np.astype(np.float64), rtol=1e-5, atol=1e-5)
