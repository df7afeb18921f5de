"""Execute-time shape overrides from Python (docs/dynamic_shapes.md): execute and
execute_plan_at_index pass override_uids / override_shapes / override_strides to the
core, which keeps each override inside the tensor's layout class (refusals name the
tensor, its port and the rule; nothing runs); the host reference engine runs the
call's extents (checked against numpy) and refuses extents that disagree. The gemm
engine running overrides on the H200: tests/gemm_gpu/test_gemm_gpu_overrides.cpp."""
import numpy as np
import pytest

import opgraph

F32 = np.float32


def matmul_graph(m=8, n=6, k=4):
    g = opgraph.pygraph(io_data_type=opgraph.data_type.FLOAT, compute_data_type=opgraph.data_type.FLOAT)
    a = g.tensor(name="A", dim=[1, m, k], stride=[m * k, k, 1], data_type=opgraph.data_type.FLOAT)
    b = g.tensor(name="B", dim=[1, k, n], stride=[k * n, 1, k], data_type=opgraph.data_type.FLOAT)  # column-major
    c = g.matmul(a, b, name="mm")
    c.set_output(True).set_name("C")
    g.build([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    return g, a, b, c


def buffers(rng, m=8, n=6, k=4):
    a = rng.standard_normal((1, m, k)).astype(F32)
    b = np.asfortranarray(rng.standard_normal((k, n)).astype(F32))  # column-major storage
    return a, b, np.full((1, m, n), np.nan, F32)


def b_flat(b):
    return b.ravel(order="F")  # the bytes, in the declared column-major order


def test_no_override_and_empty_lists_run_as_before():
    rng = np.random.default_rng(1)
    g, A, B, C = matmul_graph()
    a, b, c = buffers(rng)
    g.execute({A: a, B: b_flat(b), C: c})
    np.testing.assert_allclose(c[0], a[0] @ b, rtol=1e-5, atol=1e-5)
    c[:] = np.nan
    g.execute({A: a, B: b_flat(b), C: c}, None, None, override_uids=[], override_shapes=[], override_strides=[])
    np.testing.assert_allclose(c[0], a[0] @ b, rtol=1e-5, atol=1e-5)


def test_one_plan_runs_other_extents_of_its_class():
    rng = np.random.default_rng(2)
    g, A, B, C = matmul_graph()
    for m, n, k in [(3, 5, 7), (16, 2, 9), (8, 6, 4), (40, 33, 12)]:
        a, b, c = buffers(rng, m, n, k)
        # Keyed by tensor or by uid; strides given or packed (None).
        g.execute({A: a, B: b_flat(b), C: c}, override_uids=[A, B.get_uid(), C],
                  override_shapes=[[1, m, k], [1, k, n], [1, m, n]], override_strides=[None, [k * n, 1, k], None])
        np.testing.assert_allclose(c[0], a[0] @ b, rtol=1e-5, atol=1e-5)
        c[:] = np.nan
        g.execute_plan_at_index({A: a, B: b_flat(b), C: c}, None, 0, override_uids=[A, B, C],
                                override_shapes=[[1, m, k], [1, k, n], [1, m, n]],
                                override_strides=[[m * k, k, 1], [k * n, 1, k], [m * n, n, 1]])
        np.testing.assert_allclose(c[0], a[0] @ b, rtol=1e-5, atol=1e-5)
        c[:] = np.nan
        pack = g.prepare_variant_pack({A: a, B: b_flat(b), C: c})
        g.execute(pack, override_uids=[A, B, C], override_shapes=[[1, m, k], [1, k, n], [1, m, n]],
                  override_strides=[None, [k * n, 1, k], None])
        np.testing.assert_allclose(c[0], a[0] @ b, rtol=1e-5, atol=1e-5)


def test_extents_that_disagree_are_refused_and_nothing_runs():
    rng = np.random.default_rng(3)
    g, A, B, C = matmul_graph()
    a, b, c = buffers(rng)
    with pytest.raises(ValueError) as e:  # A's M changed, C's not
        g.execute({A: a, B: b_flat(b), C: c}, override_uids=[A], override_shapes=[[1, 4, 4]])
    for part in ("engine reference", "operand 'C'", "override it to [1, 4, 6]", "nothing was launched"):
        assert part in str(e.value), (part, str(e.value))
    with pytest.raises(ValueError, match="does not validate at the overridden extents"):  # K of A only
        g.execute({A: a, B: b_flat(b), C: c}, override_uids=[A], override_shapes=[[1, 8, 2]])
    assert np.isnan(c).all()


def test_an_override_outside_the_layout_class_is_refused_naming_port_and_rule():
    rng = np.random.default_rng(4)
    g, A, B, C = matmul_graph()
    a, b, c = buffers(rng)
    cases = [
        ([A], [[8, 4]], None, "rule layout_class: the override has 2 dims"),
        ([A], [[2, 8, 4]], None, "axis 0 has extent 2 where the declaration has 1"),
        ([B], [[1, 4, 6]], [[24, 6, 1]], "declaration's axis order"),
        ([C], [[1, 8, 6]], [[64, 8, 1]], "do not pack the extents"),
    ]
    for uids, shapes, strides, rule in cases:
        with pytest.raises(ValueError) as e:
            g.execute({A: a, B: b_flat(b), C: c}, override_uids=uids, override_shapes=shapes,
                      override_strides=strides)
        msg = str(e.value)
        assert rule in msg, (rule, msg)
        assert "shape override of operand" in msg and "of node 'mm'" in msg, msg
    assert np.isnan(c).all()


def test_bad_override_arguments():
    rng = np.random.default_rng(5)
    g, A, B, C = matmul_graph()
    a, b, c = buffers(rng)
    with pytest.raises(ValueError, match="parallel"):
        g.execute({A: a, B: b_flat(b), C: c}, override_uids=[A], override_shapes=[])
    with pytest.raises(ValueError, match="parallel"):
        g.execute({A: a, B: b_flat(b), C: c}, override_uids=[A], override_shapes=[[1, 8, 4]],
                  override_strides=[[1], [2]])
    with pytest.raises(ValueError, match="sequence of ints"):
        g.execute({A: a, B: b_flat(b), C: c}, override_uids=[A], override_shapes=[["x", 8, 4]])
    with pytest.raises(ValueError, match="not an operand of this graph"):
        g.execute({A: a, B: b_flat(b), C: c}, override_uids=[999], override_shapes=[[1, 8, 4]])
    assert np.isnan(c).all()


def test_workspace_size_of_a_call_with_overrides():
    # get_workspace_size(pack, override_...) answers for the call's extents (the reference's is 0 at
    # every extent; an engine whose scratch follows the shapes answers more: tests/exec/
    # test_workspace_for_overrides.cpp), and refuses what execute refuses, naming the rule.
    rng = np.random.default_rng(5)
    g, A, B, C = matmul_graph()
    assert g.get_workspace_size() == 0
    a, b, c = buffers(rng)
    assert g.get_workspace_size({A: a, B: b_flat(b), C: c}) == 0
    m, n, k = 16, 5, 7
    a, b, c = buffers(rng, m, n, k)
    assert g.get_workspace_size({A: a, B: b_flat(b), C: c}, override_uids=[A, B, C],
                                override_shapes=[[1, m, k], [1, k, n], [1, m, n]],
                                override_strides=[None, [k * n, 1, k], None]) == 0
    with pytest.raises(ValueError, match="override"):  # rank 2 for a rank-3 tensor: outside the class
        g.get_workspace_size({A: a, B: b_flat(b), C: c}, override_uids=[A], override_shapes=[[m, k]])
    with pytest.raises(ValueError, match="variant_pack"):
        g.get_workspace_size(override_uids=[A], override_shapes=[[1, m, k]])
