"""Plan and run graphs on host numpy arrays (the reference engine) against numpy references,
and the planning surface around it (at-index API, one-shot planning, freeze, variant-pack errors).

Tolerances: the reference accumulates in float64 and rounds to the float32 outputs, numpy
computes in float64 here: |err| <= 1e-5 + 1e-5 * |ref| (a few float32 ulps).
"""
import gc
import math
import weakref

import numpy as np
import pytest

import opgraph

F32 = np.float32


def plan(g):
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    g.build_plans()
    return np.empty(max(g.get_workspace_size(), 1), np.uint8)


def graph():
    return opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)


def assert_close(out, ref, tol=1e-5):
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol)


def test_matmul(rng):
    g = graph()
    a_np = rng.standard_normal((2, 5, 7)).astype(F32)
    b_np = rng.standard_normal((2, 7, 3)).astype(F32)
    a, b = g.tensor_like(a_np, name="a"), g.tensor_like(b_np, name="b")
    c = g.matmul(A=a, B=b)
    c.set_output(True)
    ws = plan(g)
    out = np.full(c.dims, np.nan, F32)
    g.execute({a: a_np, b: b_np, c: out}, ws)
    assert_close(out, a_np.astype(np.float64) @ b_np.astype(np.float64))


def test_matmul_bias_gelu_with_uid_keys(rng):
    g = graph()
    a_np = rng.standard_normal((1, 6, 8)).astype(F32)
    w_np = rng.standard_normal((1, 8, 4)).astype(F32)
    bias_np = rng.standard_normal((1, 1, 4)).astype(F32)
    a, w, bias = (g.tensor_like(x) for x in (a_np, w_np, bias_np))
    y = g.gelu(input=g.bias(input=g.matmul(A=a, B=w), bias=bias))
    y.set_output(True)
    ws = plan(g)
    out = np.full(y.dims, np.nan, F32)
    g.execute({a.uid: a_np, w.uid: w_np, bias.uid: bias_np, y.uid: out}, ws)
    z = a_np.astype(np.float64) @ w_np + bias_np
    erf = np.vectorize(math.erf)
    assert_close(out, 0.5 * z * (1.0 + erf(z / math.sqrt(2.0))))


def test_rmsnorm(rng):
    g = graph()
    x_np = rng.standard_normal((4, 16, 1, 1)).astype(F32)
    s_np = rng.standard_normal((1, 16, 1, 1)).astype(F32)
    x, s = g.tensor_like(x_np), g.tensor_like(s_np)
    eps = 1e-5
    y, inv_var = g.rmsnorm(norm_forward_phase=opgraph.norm_forward_phase.TRAINING, input=x, scale=s, epsilon=eps)
    y.set_output(True)
    inv_var.set_output(True)
    ws = plan(g)
    out = np.full(y.dims, np.nan, F32)
    iv = np.full(inv_var.dims, np.nan, F32)
    g.execute({x: x_np, s: s_np, y: out, inv_var: iv}, ws)
    xd = x_np.astype(np.float64)
    r = 1.0 / np.sqrt((xd * xd).mean(axis=1, keepdims=True) + eps)
    assert_close(iv, r)
    assert_close(out, xd * r * s_np)


def test_pointwise_chain(rng):
    # y = max(a * b - exp(-|c|), sigmoid(a) / (1 + c*c)); every input fresh and random.
    g = graph()
    arrs = [rng.standard_normal((3, 4, 5)).astype(F32) for _ in range(3)]
    a, b, c = (g.tensor_like(x) for x in arrs)
    one = g.tensor_scalar(1.0)
    left = g.sub(a=g.mul(a=a, b=b), b=g.exp(input=g.neg(input=g.abs(input=c))))
    right = g.div(a=g.sigmoid(input=a), b=g.add_square(a=one, b=c))
    y = g.max(input0=left, input1=right)
    y.set_output(True)
    ws = plan(g)
    out = np.full(y.dims, np.nan, F32)
    g.execute({a: arrs[0], b: arrs[1], c: arrs[2], y: out}, ws)
    ad, bd, cd = (x.astype(np.float64) for x in arrs)
    ref = np.maximum(ad * bd - np.exp(-np.abs(cd)), (1.0 / (1.0 + np.exp(-ad))) / (1.0 + cd * cd))
    assert_close(out, ref)


def test_at_index_api_and_one_shot_planning(rng):
    g = graph()
    a_np = rng.standard_normal((4, 4)).astype(F32)
    a = g.tensor_like(a_np)
    y = g.relu(input=a)
    y.set_output(True)
    g.create_execution_plans([opgraph.heur_mode.A])
    n = g.get_execution_plan_count()
    assert n >= 1
    names = [g.get_plan_name_at_index(i) for i in range(n)]
    assert any("reference" in s for s in names)
    ref_index = next(i for i, s in enumerate(names) if "reference" in s)
    engine_id, knobs = g.get_engine_and_knobs_at_index(ref_index)
    assert isinstance(engine_id, int) and isinstance(knobs, dict)
    with pytest.raises(ValueError):
        g.get_plan_name_at_index(n)
    with pytest.raises(ValueError):
        g.create_execution_plans([opgraph.heur_mode.A])  # one-shot
    with pytest.raises(opgraph.FrozenGraphError):
        g.relu(input=a)
    g.select_plan(ref_index)
    g.build_plans()
    assert g.get_selected_plan_index() == ref_index
    out = np.full(y.dims, np.nan, F32)
    g.execute_plan_at_index({a: a_np, y: out}, None, ref_index)
    assert_close(out, np.maximum(a_np, 0))


def test_variant_pack_errors(rng):
    g = graph()
    a_np = rng.standard_normal((2, 3)).astype(F32)
    a = g.tensor_like(a_np)
    y = g.neg(input=a)
    y.set_output(True)
    ws = plan(g)
    out = np.empty(y.dims, F32)
    with pytest.raises(ValueError):  # missing output buffer
        g.execute({a: a_np}, ws)
    with pytest.raises(ValueError, match="FLOAT"):  # float64 array for a FLOAT tensor
        g.execute({a: a_np.astype(np.float64), y: out}, ws)
    with pytest.raises(TypeError):
        g.execute({a: "not a buffer", y: out}, ws)
    g.execute({a: a_np, y: out}, ws)
    assert_close(out, -a_np)


def relu_graph(**ctx):
    g = opgraph.pygraph(io_data_type=F32, compute_data_type=F32, **ctx)
    a = g.tensor(dim=[3, 5], data_type=F32, name="a")
    y = g.relu(input=a)
    y.set_output(True)
    return g, a, y


def test_replay_recorded_plan(rng):
    g, a, y = relu_graph()
    g.create_execution_plans([opgraph.heur_mode.A])
    engine_id, knobs = g.get_engine_and_knobs_at_index(0)
    g2, a2, y2 = relu_graph()
    g2.create_execution_plan(engine_id, knobs)
    assert g2.get_execution_plan_count() == 1
    assert g2.get_plan_name_at_index(0) == g.get_plan_name_at_index(0)
    g2.build_plans()
    x = rng.standard_normal((3, 5)).astype(F32)
    out = np.full((3, 5), np.nan, F32)
    g2.execute({a2: x, y2: out})
    assert_close(out, np.maximum(x, 0))
    g3, *_ = relu_graph()
    with pytest.raises(ValueError, match="TILE_M"):  # a knob the engine does not declare
        g3.create_execution_plan(engine_id, {opgraph.knob_type.TILE_M: 64})


def test_deselecting_every_engine_is_not_supported():
    g, a, y = relu_graph()
    g.create_execution_plans([opgraph.heur_mode.A])
    g.deselect_engines(["reference"])
    assert "deselected" in g.get_plan_status_at_index(0)
    with pytest.raises(opgraph.GraphNotSupportedError, match="reference"):
        g.build_plans()


class FakeDeviceArray:
    """Device memory as __cuda_array_interface__ describes it (never dereferenced)."""

    def __init__(self, shape):
        self.__cuda_array_interface__ = {"data": (0xD000, False), "shape": shape, "strides": None,
                                         "typestr": "<f4", "version": 3}


def test_device_buffer_refused_by_host_plan(rng):
    g, a, y = relu_graph()
    g.build()
    out = np.empty((3, 5), F32)
    with pytest.raises(ValueError, match=r"uid \d+ \(tensor 'a'\) is device memory .*planned for the host"):
        g.execute({a: FakeDeviceArray((3, 5)), y: out})


def reference_index(g):
    names = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
    assert any(n.startswith("reference") for n in names), names
    return next(i for i, n in enumerate(names) if n.startswith("reference"))


def test_deviceless_planning_for_sm90_still_offers_the_host_reference(rng):
    # The reference is in the list; on a GPU machine where this process loaded libcuda, the
    # cuDNN backend may rank above it. Host arrays run on the reference's plan either way
    # (the host fallback policy lets build() take it where no device engine accepts).
    g, a, y = relu_graph(sm_version=90, sm_count=132)
    g.set_host_fallback(True)
    assert g.host_fallback
    g.build()
    assert g.get_host_plan_index() == reference_index(g)
    x = rng.standard_normal((3, 5)).astype(F32)
    out = np.full((3, 5), np.nan, F32)
    g.execute({a: x, y: out}, None, opgraph.create_handle())
    assert_close(out, np.maximum(x, 0))


def numpy_sdpa(q, k, v, scale, causal):
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    if causal:
        sq, sk = s.shape[-2:]
        s = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None], s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("bhqk,bhkd->bhqd", p, v)


@pytest.mark.skipif("sdpa" not in {s["name"] for s in opgraph.op_specs()}, reason="no sdpa record in this build")
@pytest.mark.parametrize("causal", [False, True])
def test_small_sdpa_against_numpy_softmax(rng, causal):
    b, h, s, d = 1, 2, 6, 4
    q_np, k_np, v_np = (rng.standard_normal((b, h, s, d)).astype(F32) for _ in range(3))
    g = graph()
    q, k, v = (g.tensor_like(x) for x in (q_np, k_np, v_np))
    o, stats = g.sdpa(q=q, k=k, v=v, attn_scale=d ** -0.5, use_causal_mask=causal, is_inference=True)
    assert stats is None
    o.set_output(True)
    try:
        ws = plan(g)
    except opgraph.GraphNotSupportedError as e:
        if "no reference kernel" in str(e):
            pytest.skip("the reference engine has no sdpa kernel yet")
        raise
    out = np.full(o.dims, np.nan, F32)
    g.execute({q: q_np, k: k_np, v: v_np, o: out}, ws)
    assert_close(out, numpy_sdpa(q_np.astype(np.float64), k_np, v_np, d ** -0.5, causal))


def test_normalize_only_counts_entries_and_checks_like_execute(rng):
    g, a, y = relu_graph()
    g.build()
    x = rng.standard_normal((3, 5)).astype(F32)
    out = np.empty((3, 5), F32)
    assert g._normalize_only({a: x, y: out}) == 2
    assert g._normalize_only({a.uid: x.ctypes.data, y.uid: out}, np.empty(8, np.uint8)) == 3
    # A float64 buffer for a FLOAT tensor: the binding's normalisation refuses it, as execute
    # does, naming both types (a dtype other than the declared one is never read).
    for call in (g._normalize_only, g.execute):
        with pytest.raises(ValueError, match="DOUBLE is not the declared FLOAT"):
            call({a: x.astype(np.float64), y: out})


def only_the_reference_is_offered(g):
    return all(g.get_plan_name_at_index(i).startswith("reference[") for i in range(g.get_execution_plan_count()))


def test_a_device_graph_no_device_engine_accepts_is_not_supported():
    # cudnn-frontend's behaviour: planned for sm_90 with no device engine that accepts it, the
    # graph is not supported at check_support / build_plans (it used to plan the host reference
    # and fail at execute on device buffers). The reference stays one select_plan away.
    g, a, y = relu_graph(sm_version=90, sm_count=132)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    if not only_the_reference_is_offered(g):
        pytest.skip("a device engine is offered on this machine")
    assert g.get_host_plan_index() == reference_index(g)
    with pytest.raises(opgraph.GraphNotSupportedError, match="reference.* runs host buffers only"):
        g.check_support()
    with pytest.raises(opgraph.GraphNotSupportedError, match="set_host_fallback"):
        g.build_plans()
    g.select_plan(g.get_host_plan_index())  # asked for: pinned, it builds
    g.check_support()
    g.build_plans()
    assert g.get_selected_plan_index() == g.get_host_plan_index()


def test_host_plan_index_is_minus_one_before_planning():
    g, _, _ = relu_graph(sm_version=90, sm_count=132)
    assert g.get_host_plan_index() == -1
    assert not g.host_fallback


def test_device_buffers_are_refused_by_the_host_reference_on_a_device_target():
    # Planned for sm_90 with the host reference's plan selected: device buffers are refused by
    # the binding, naming the operand, before anything reads them (never staged).
    g, a, y = relu_graph(sm_version=90, sm_count=132)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    g.select_plan(reference_index(g))
    g.build_plans()
    # On a GPU machine cuDNN's plans may rank first: name the reference's plan.
    ref = reference_index(g)
    with pytest.raises(ValueError, match=r"uid \d+ \(tensor 'a'\) is device memory .*reference.*host buffers"):
        g.execute_plan_at_index({a: FakeDeviceArray((3, 5)), y: FakeDeviceArray((3, 5))}, None, ref)


def sm90_reference_record():
    g, _, _ = relu_graph(sm_version=90, sm_count=132)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    i = reference_index(g)
    g.build_plan_at_index(i)
    return g.get_engine_and_knobs_at_index(i), g.serialize_plan(i)


@pytest.mark.parametrize("planning", ["create_execution_plans", "create_execution_plan", "deserialize_plan"])
def test_an_execute_before_planning_does_not_pin_the_host_plan(rng, planning):
    # An execute on an unplanned graph (refused) looks for the host reference's plan in an
    # empty list; planning afterwards must find it again, or device buffers reach the
    # reference unrefused by the binding.
    (engine_id, knobs), record = sm90_reference_record()
    g, a, y = relu_graph(sm_version=90, sm_count=132)
    g.set_host_fallback(True)  # the reference may be the only plan here: build_plans takes it
    x = rng.standard_normal((3, 5)).astype(F32)
    with pytest.raises(ValueError, match="no plans"):
        g.execute_plan_at_index({a: x, y: np.empty((3, 5), F32)}, None, 0)
    if planning == "create_execution_plans":
        g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    elif planning == "create_execution_plan":
        g.create_execution_plan(engine_id, knobs)
    else:
        g.deserialize_plan(record)
    g.build_plans()
    # On a GPU machine cuDNN's plans may rank first: name the reference's plan.
    ref = reference_index(g)
    with pytest.raises(ValueError, match=r"uid \d+ \(tensor 'a'\) is device memory .*reference.*host buffers"):
        g.execute_plan_at_index({a: FakeDeviceArray((3, 5)), y: FakeDeviceArray((3, 5))}, None, ref)
    out = np.full((3, 5), np.nan, F32)
    g.execute({a: x, y: out})
    assert_close(out, np.maximum(x, 0))


def test_prepared_pack_and_the_cpp_repeat_run_like_execute(rng):
    g, a, y = relu_graph()
    ws = plan(g)
    x = rng.standard_normal((3, 5)).astype(F32)
    out = np.full((3, 5), np.nan, F32)
    pack = g.prepare_variant_pack({a: x, y: out})
    assert len(pack) == 2
    g.execute(pack, ws)
    assert_close(out, np.maximum(x, 0))
    x[:] = rng.standard_normal((3, 5)).astype(F32)  # same buffers, new contents: the pack reads them
    g.execute(pack, ws)
    assert_close(out, np.maximum(x, 0))
    out[:] = np.nan
    g._execute_repeat({a.uid: x, y.uid: out}, ws, 3)
    assert_close(out, np.maximum(x, 0))
    other, _, _ = relu_graph()
    other.build()
    with pytest.raises(ValueError, match="another graph"):
        other.execute(pack)
    with pytest.raises(TypeError, match="dict"):
        g.execute([(a, x)], ws)


def test_prepared_pack_keeps_its_graph_alive(rng):
    # The pack checks its graph by address: it must hold the graph, or a dropped graph's
    # address could be taken by a later one while the pack still names it.
    g, a, y = relu_graph()
    ws = plan(g)
    x = rng.standard_normal((3, 5)).astype(F32)
    out = np.full((3, 5), np.nan, F32)
    pack = g.prepare_variant_pack({a: x, y: out})
    ref = weakref.ref(g)
    del g, a, y
    gc.collect()
    kept = ref()
    assert kept is not None, "the prepared pack let its graph go"
    x[:] = rng.standard_normal((3, 5)).astype(F32)
    kept.execute(pack, ws)
    assert_close(out, np.maximum(x, 0))
    fresh, _, _ = relu_graph()  # a later graph never takes the pack: it is not the pack's graph
    plan(fresh)
    with pytest.raises(ValueError, match="another graph"):
        fresh.execute(pack, ws)
    del kept, pack
    gc.collect()
    assert ref() is None, "the graph outlived its last pack (a leak)"


def test_prepared_pack_the_core_refuses_raises_at_execute_and_runs_nothing(rng):
    # The binding takes a 13-d array; the core's normalisation refuses it (at most 12 dims)
    # and leaves no prepared pack, so execute normalises again and raises the same reason.
    g, a, y = relu_graph()
    ws = plan(g)
    x = rng.standard_normal((1,) * 11 + (3, 5)).astype(F32)
    out = np.full((3, 5), np.nan, F32)
    pack = g.prepare_variant_pack({a: x, y: out})
    with pytest.raises(ValueError, match="13 dims; at most 12") as prepared:
        g.execute(pack, ws)
    with pytest.raises(ValueError) as per_call:
        g.execute({a: x, y: out}, ws)
    assert str(prepared.value) == str(per_call.value)
    assert np.isnan(out).all()


def test_host_only_handle_and_host_arrays_keep_the_host_target(rng):
    h = opgraph.create_handle()
    g, a, y = relu_graph(handle=h)
    # A handle on a device makes the graph plan for it; a host-only one (no GPU here) does not.
    assert g._has_device_target == (h.device is not None)
    g.build()
    x = rng.standard_normal((3, 5)).astype(F32)
    out = np.full((3, 5), np.nan, F32)
    g.execute({a: x, y: out})  # host arrays run on the reference either way
    assert_close(out, np.maximum(x, 0))
    assert g.get_plan_name_at_index(g.get_selected_plan_index()).startswith("reference") or h.device is not None
