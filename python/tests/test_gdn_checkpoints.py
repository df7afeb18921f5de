"""gdn's third output, state_checkpoints (checkpoint_every_n_tokens = c > 0), through the Python
binding on the CPU reference: the builder returns cudnn's three outputs (FlashInfer unpacks
``O, fs, _checkpoints = graph.gdn(...)``); sequence i's j-th row is its state after its first j c
tokens, which must equal the final state of the same tokens cut there (run as a graph of their
own). Tolerance: 1e-6 relative and absolute (both sides are the same float64 recurrence rounded
once to float32); a batch needing more rows than declared is refused naming the rule."""
import numpy as np
import pytest

import opgraph

F32 = np.float32
H, K, V, EVERY = 1, 4, 4, 64


def _inputs(rng, t):
    return {"q": rng.uniform(-1, 1, (t, H, K)).astype(F32), "k": rng.uniform(-0.6, 0.6, (t, H, K)).astype(F32),
            "v": rng.uniform(-1, 1, (t, H, V)).astype(F32), "g": rng.uniform(-0.2, -0.01, (t, H)).astype(F32),
            "beta": rng.uniform(0.2, 0.9, (t, H)).astype(F32)}


def _run(x, cu, every=0, rows=None):
    """(O, final_state, state_checkpoints or None) of gdn over x, cu on the CPU reference."""
    g = opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    t = {n: g.tensor_like(a, name=n) for n, a in x.items()}
    cu_a = np.asarray(cu, np.int32)
    t["cu_seqlens"] = g.tensor_like(cu_a, name="cu_seqlens")
    attrs = {"checkpoint_every_n_tokens": every} if every else {}
    o, fs, ck = g.gdn(**t, output_final_state=True, **attrs)
    n, total = len(cu) - 1, cu[-1]
    bufs = {t[k]: a for k, a in x.items()}
    bufs[t["cu_seqlens"]] = cu_a
    out = {"o": np.full((total, H, V), 7, F32), "fs": np.full((n, H, V, K), 7, F32)}
    for name, tensor in (("o", o), ("fs", fs)):
        tensor.set_output(True).set_data_type(opgraph.data_type.FLOAT)
        bufs[tensor] = out[name]
    if every:
        assert ck is not None
        ck.set_output(True).set_data_type(opgraph.data_type.FLOAT)
        if rows is not None:
            ck.set_dim([rows, H, V, K]).set_stride([H * V * K, V * K, K, 1])
    else:
        assert ck is None
    g.validate()
    if every:
        out["ck"] = np.full(ck.dims, 7, F32)
        bufs[ck] = out["ck"]
    g.build_operation_graph()
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    g.build_plans()
    g.execute(bufs)
    return out["o"], out["fs"], out.get("ck")


def test_rows_are_the_states_of_the_tokens_cut_there():
    rng = np.random.default_rng()
    x = _inputs(rng, 200)
    cu = [0, 130, 130, 200]  # 2, 0 and 1 checkpoints; floor(200 / 64) = 3 rows inferred
    o, fs, ck = _run(x, cu, EVERY)
    assert ck.shape == (3, H, V, K)
    o_plain, fs_plain, _ = _run(x, cu)
    np.testing.assert_array_equal(o, o_plain)  # the cadence changes no other output
    np.testing.assert_array_equal(fs, fs_plain)
    for row, (start, end) in enumerate([(0, 64), (0, 128), (130, 194)]):
        _, cut_fs, _ = _run({n: a[start:end] for n, a in x.items()}, [0, end - start])
        np.testing.assert_allclose(ck[row], cut_fs[0], rtol=1e-6, atol=1e-6, err_msg="row %d" % row)


def test_too_few_declared_rows_are_refused_by_name():
    x = _inputs(np.random.default_rng(), 200)
    with pytest.raises(Exception, match="checkpoints:"):
        _run(x, [0, 130, 130, 200], EVERY, rows=2)


def _grads(x, cu, d_o, ck=None, every=0):
    """(dQ, dK, dV, dG, dBeta) of gdn_bwd over x, cu on the CPU reference; ck: the forward's checkpoints, bound
    as the backward's state_checkpoints input at cadence `every`."""
    g = opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    t = {n: g.tensor_like(a, name=n) for n, a in x.items()}
    cu_a = np.asarray(cu, np.int32)
    t["cu_seqlens"] = g.tensor_like(cu_a, name="cu_seqlens")
    t["dO"] = g.tensor_like(d_o, name="dO")
    extra = {}
    if ck is not None:
        t["state_checkpoints"] = g.tensor_like(ck, name="state_checkpoints")
        extra = {"state_checkpoints": t["state_checkpoints"], "checkpoint_every_n_tokens": every}
    ins = {n: v for n, v in t.items() if n != "state_checkpoints"}
    outs = g.gdn_bwd(**ins, **extra)[:5]
    bufs = {t[k]: a for k, a in x.items()}
    bufs[t["cu_seqlens"]] = cu_a
    bufs[t["dO"]] = d_o
    if ck is not None:
        bufs[t["state_checkpoints"]] = ck
    for tensor in outs:
        tensor.set_output(True).set_data_type(opgraph.data_type.FLOAT)
    g.validate()
    got = [np.full(tensor.dims, 7, F32) for tensor in outs]  # poisoned; dims inferred by validate()
    bufs.update(zip(outs, got))
    g.build_operation_graph()
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    g.build_plans()
    g.execute(bufs)
    return got


def test_backward_takes_the_forwards_checkpoints():
    """gdn_bwd's state_checkpoints input: the forward's own rows give the gradients without them (up to the
    float32 rounding of the rows); other rows change them (the recompute starts from the rows)."""
    rng = np.random.default_rng()
    x = _inputs(rng, 200)
    cu = [0, 130, 130, 200]
    d_o = rng.uniform(-1, 1, (200, H, V)).astype(F32)
    _, _, ck = _run(x, cu, EVERY)
    plain = _grads(x, cu, d_o)
    seeded = _grads(x, cu, d_o, ck, EVERY)
    for name, a, b in zip(("dQ", "dK", "dV", "dG", "dBeta"), seeded, plain):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=name)
    other = _grads(x, cu, d_o, (ck + 0.25).astype(F32), EVERY)
    assert np.max(np.abs(other[0] - plain[0])) > 1e-3  # dQ after the checkpoints moved
