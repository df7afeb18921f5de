"""The names and rules code written for cudnn-frontend's `cudnn` package relies on (docs/porting.md):
module functions (backend version, last error, kernel cache, device properties, the decorator API,
the names of ops opgraph lacks), pygraph introspection, tensor methods, data_type members, and the
semantics: None keys, uid 0, host scalars given at execute, output tensors given to sdpa, a BOOLEAN
mask in MUL, execute's override arguments, the not-supported error on device targets.

Host numpy buffers (the CPU reference engine); numerics against numpy in float64."""
import json
import re

import numpy as np
import pytest

import opgraph

F32 = np.float32
DT = opgraph.data_type


def graph(**kw):
    return opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32, **kw)


def build(g):
    g.build([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    return g


# ------------------------------------------------------------------ module names --
# cudnn-frontend 1.32's __all__ names that belong to the op-graph API (docs/porting.md).
OP_GRAPH_NAMES = [
    "backend_version", "backend_version_string", "get_last_error_string", "norm_forward_phase", "reduction_mode",
    "behavior_note", "knob_type", "create_kernel_cache", "create_device_properties", "numerical_note",
    "build_plan_policy", "data_type", "tensor_reordering", "heur_mode", "tensor", "cudnnGraphNotSupportedError",
    "diagonal_alignment", "attention_implementation", "moe_grouped_matmul_mode", "scalar_type", "reshape_mode",
    "create_handle", "destroy_handle", "get_stream", "set_stream", "Tensor", "pygraph", "graph", "jit",
    "graph_cache", "sdpa_capabilities", "Graph", "__version__", "FRONTEND_KNOB_TYPE_BASE", "is_frontend_knob_type",
    "Handle", "Node",
]


# cudnn-frontend 1.32's public pygraph methods and properties opgraph offers (docs/porting.md lists the rest).
PYGRAPH_NAMES = (
    "tensor tensor_like tensor_scalar validate build_operation_graph create_execution_plans create_execution_plan "
    "get_execution_plan_count get_plan_name_at_index select_plan deselect_workspace_greater_than deselect_engines "
    "deselect_behavior_notes select_behavior_notes deselect_numeric_notes select_numeric_notes check_support "
    "build_plans build get_workspace_size get_workspace_size_plan_at_index build_plan_at_index "
    "get_engine_and_knobs_at_index get_behavior_notes_for_plan_at_index get_behavior_notes populate_cuda_graph "
    "update_cuda_graph key execute_plan_at_index execute get_cuda_graph_retention serialize deserialize nodes "
    "tensors context find_tensor get_node get_inputs get_outputs inspect plans selected_engine matmul relu "
    "leaky_relu swish gen_index relu_backward leaky_relu_backward swish_backward query_tensor_attributes_of_uid"
).split()


def test_every_pygraph_method_of_cudnn_frontend_listed_is_here():
    assert [n for n in PYGRAPH_NAMES if not hasattr(opgraph.pygraph, n)] == []


def test_frontend_knob_band():
    assert opgraph.is_frontend_knob_type(opgraph.knob_type.SPLIT_KV)
    assert opgraph.knob_type.SPLIT_KV.value >= opgraph.FRONTEND_KNOB_TYPE_BASE
    assert not opgraph.is_frontend_knob_type(opgraph.knob_type.SPLIT_K_SLC)
    assert opgraph.knob_type.SPLIT_K_SLC.value < opgraph.FRONTEND_KNOB_TYPE_BASE


def test_every_op_graph_name_of_cudnn_frontend_is_here():
    missing = [n for n in OP_GRAPH_NAMES if not hasattr(opgraph, n)]
    assert missing == []


def test_backend_version_is_cudnns_encoding_of_the_loaded_library():
    v = opgraph.backend_version()
    s = opgraph.backend_version_string()
    assert isinstance(v, int) and v >= 0
    assert re.fullmatch(r"\d+\.\d+\.\d+", s)
    if v == 0:
        assert s == "0.0.0"
    else:  # cuDNN 9: major*10000 + minor*100 + patch
        major, minor, patch = (int(x) for x in s.split("."))
        assert v == major * 10000 + minor * 100 + patch and major >= 9


def test_get_last_error_string_holds_the_last_errors_message():
    g = graph()
    a = g.tensor(dim=[2], data_type=F32, name="a")
    with pytest.raises(ValueError) as e:
        g.tensor(dim=[2], data_type=F32, name="b", uid=-5)
    assert opgraph.get_last_error_string() == str(e.value)
    assert "'b'" in opgraph.get_last_error_string()
    y = g.relu(a)
    y.set_output(True)
    g.validate()
    with pytest.raises(opgraph.FrozenGraphError) as e:
        g.freeze()
        a.set_dim([3])
    assert opgraph.get_last_error_string() == str(e.value)


@pytest.mark.parametrize("name", sorted(opgraph.MISSING))
def test_names_of_ops_opgraph_lacks_raise_not_implemented(name):
    f = getattr(opgraph, name)
    with pytest.raises(NotImplementedError, match=f"{name}: opgraph has no .* op yet"):
        f(1, 2, x=3)


def test_sdpa_capabilities_is_an_empty_frozenset():
    assert opgraph.sdpa_capabilities() == frozenset()


# ------------------------------------------------------------- device properties --
def test_device_properties_round_trip_through_their_json():
    p = opgraph.create_device_properties("sm_90")
    text = p.serialize()
    q = opgraph.create_device_properties(text)
    assert q.serialize() == text and q.sm_version == 90
    assert opgraph.create_device_properties(json.loads(text)).serialize() == text
    assert opgraph.create_device_properties(text.encode()).serialize() == text
    with pytest.raises(opgraph.GraphNotSupportedError, match="bogus"):
        opgraph.create_device_properties('{"major": 9, "minor": 0, "sm_count": 1, "l2_bytes": 0, '
                                         '"smem_per_block_optin": 0, "bogus": 1}')
    with pytest.raises(TypeError):
        opgraph.create_device_properties(True)


def test_a_graph_plans_for_the_device_properties_object():
    p = opgraph.create_device_properties("sm_90")
    g = graph(device_property=p)
    a = g.tensor(dim=[4, 8], data_type=F32, name="a")
    g.relu(a).set_output(True)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    assert g.get_execution_plan_count() >= 1
    assert g.get_host_plan_index() >= 0  # the device target is sm_90: the reference is the host's plan


# ------------------------------------------------------------------ kernel cache --
def test_kernel_cache_records_the_graphs_built_with_it_and_round_trips(rng):
    cache = opgraph.create_kernel_cache()
    g = graph(kernel_cache=cache)
    a = g.tensor(dim=[2, 3], data_type=F32, name="a", uid=0)
    y = g.relu(a)
    y.set_output(True).set_uid(1)
    build(g)
    assert cache.graph_keys == [g.key()]
    text = cache.serialize()
    fresh = opgraph.create_kernel_cache()
    fresh.deserialize(text)
    assert fresh.graph_keys == [g.key()]
    with pytest.raises(RuntimeError, match="already holds"):
        fresh.deserialize(text)  # as cudnn: deserialize into a used cache is refused
    with pytest.raises(opgraph.GraphNotSupportedError, match="not a serialized opgraph kernel cache"):
        opgraph.create_kernel_cache().deserialize('{"format": "x"}')
    # the deserialized cache serves a new graph
    h = graph(kernel_cache=fresh)
    b = h.tensor(dim=[2, 3], data_type=F32, name="a", uid=0)
    h.relu(b).set_output(True).set_uid(1)
    build(h)
    x = rng.standard_normal((2, 3)).astype(F32)
    out = np.full((2, 3), np.nan, F32)
    h.execute({0: x, 1: out}, None)
    np.testing.assert_array_equal(out, np.maximum(x, 0))


# ------------------------------------------------------------- decorator-style API --
def test_graph_context_and_jit_build_and_return_uids(rng):
    calls = []

    @opgraph.jit(heur_modes=[opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    def make(x):
        calls.append(1)
        with opgraph.graph(None, io_data_type=DT.FLOAT) as (g, tensors):
            assert tensors == [] and isinstance(g, opgraph.pygraph)
            X = g.tensor_like(x)
            Y = g.relu(X)
            Y.set_output(True)
            return g, [X, Y]

    x = rng.standard_normal((3, 5)).astype(F32)
    g, (ux, uy) = make(x)
    assert g.is_planned and g.get_execution_plan_count() >= 1
    out = np.full_like(x, np.nan)
    g.execute({ux: x, uy: out}, None)
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    assert g.context["io_data_type"] == DT.FLOAT
    assert g.context["compute_data_type"] == DT.FLOAT


def test_graph_context_defaults_to_half_io_and_float_compute():
    with opgraph.graph(None) as (g, _):
        ctx = g.context
    assert ctx["io_data_type"] == DT.HALF
    assert ctx["intermediate_data_type"] == DT.FLOAT and ctx["compute_data_type"] == DT.FLOAT
    assert ctx["name"] == "cudnn_graph"


def test_graph_cache_memoises_on_the_key_and_evicts_the_oldest():
    made = []

    @opgraph.graph_cache(key_fn=lambda n, tag=None: n, maxsize=2)
    def make(n, tag=None):
        made.append(n)
        return object()

    a = make(1)
    assert make(1, tag="other") is a and made == [1]
    make(2)
    make(3)  # evicts 1
    assert made == [1, 2, 3]
    assert make(1) is not a and made == [1, 2, 3, 1]
    with pytest.raises(ValueError):
        opgraph.graph_cache(key_fn=lambda: 0, maxsize=0)


# -------------------------------------------------------------- introspection --
def test_inputs_outputs_nodes_and_tensor_lookup():
    g = graph()
    a = g.tensor(dim=[2, 3], data_type=F32, name="a", uid=7)
    b = g.tensor(dim=[2, 3], data_type=F32, name="b")
    t = g.add(a, b, name="sum")
    y = g.relu(t, name="act")
    y.set_output(True).set_name("y")
    g.validate()
    assert g.get_inputs() == [a, b]
    assert g.get_outputs() == [y]
    assert g.get_node("act").op == "pointwise" and g.get_node("nope") is None
    assert g.find_tensor(7) is a and g.find_tensor("y") is y and g.find_tensor("zz") is None
    assert g.find_tensor(a) is a
    c = g.tensor(dim=[1], data_type=F32, name="a")
    with pytest.raises(ValueError, match="2 tensors are named 'a'"):
        g.find_tensor("a")
    assert c in g.tensors
    view = g.inspect()
    assert [n["name"] for n in view["nodes"]] == ["sum", "act"]
    assert view["nodes"][1]["outputs"] == {"OUT_0": "y"}


def test_plans_selected_engine_and_behavior_notes():
    g = graph()
    a = g.tensor(dim=[2, 3], data_type=F32, name="a")
    g.relu(a).set_output(True)
    assert g.plans == [] and g.selected_engine is None
    build(g)
    assert g.plans == [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
    e = g.selected_engine
    assert e is not None and g.plans[g.get_selected_plan_index()].startswith(e.name)
    assert e.id == g.get_engine_and_knobs_at_index(g.get_selected_plan_index())[0]
    assert g.get_behavior_notes() == g.get_behavior_notes_for_plan_at_index(g.get_selected_plan_index())


def test_cuda_graph_population_checks_its_arguments_and_refuses_without_native_support(rng):
    g = graph()
    a = g.tensor(dim=[4], data_type=F32, name="a", uid=1)
    y = g.relu(a)
    y.set_output(True).set_uid(2)
    x = rng.standard_normal(4).astype(F32)
    out = np.empty(4, F32)
    with pytest.raises(ValueError, match="build the graph first"):
        g.populate_cuda_graph(None, {1: x, 2: out}, None, 1234)
    build(g)
    with pytest.raises(TypeError, match="cudaGraph_t"):
        g.populate_cuda_graph(None, {1: x, 2: out}, None, 0)
    with pytest.raises(TypeError, match="cudaGraph_t"):
        g.update_cuda_graph(None, {1: x, 2: out}, None, "graph")
    with pytest.raises(opgraph.GraphNotSupportedError, match="SUPPORTS_CUDA_GRAPH_NATIVE_API"):
        g.populate_cuda_graph(None, {1: x, 2: out}, None, 1234)
    with pytest.raises(opgraph.GraphNotSupportedError, match="SUPPORTS_CUDA_GRAPH_NATIVE_API"):
        g.update_cuda_graph(None, {1: x, 2: out}, None, 1234)


# ------------------------------------------------------------------ tensor methods --
def test_tensor_methods_of_cudnn_frontend():
    g = graph()
    a = g.tensor(dim=[2, 3], data_type=F32, name="a")
    assert a.get_ragged_offset_multiplier() == 1
    assert a.set_ragged_offset_multiplier(1) is a
    with pytest.raises(ValueError, match="'a': ragged_offset_multiplier 4 is not supported"):
        a.set_ragged_offset_multiplier(4)
    with pytest.raises(ValueError, match="ragged_offset_multiplier 2"):
        g.tensor(dim=[2], data_type=F32, name="r", ragged_offset_multiplier=2)
    assert a.get_vector_count() == 1 and a.get_vector_dimension() == -1
    assert a.set_vector_count_and_dimension(1, -1) is a
    with pytest.raises(ValueError, match="'a': vector count 4"):
        a.set_vector_count_and_dimension(4, 1)
    assert a.set_is_pass_by_value(False) is a
    with pytest.raises(ValueError, match="declare a pass-by-value tensor with its value"):
        a.set_is_pass_by_value(True)
    s = g.tensor_scalar(0.5)
    assert s.set_is_pass_by_value(True) is s


@pytest.mark.parametrize("name", ["INT4", "FP8_E5M3", "INT8x4", "UINT8x4", "INT8x32", "FAST_FLOAT_FOR_FP8"])
def test_cudnn_only_data_types_exist_and_are_refused_naming_the_tensor(name):
    t = getattr(DT, name)
    assert t in opgraph._C._unsupported_data_types
    g = graph()
    with pytest.raises(ValueError, match=f"tensor 'w': data_type {name} has no element type in opgraph's IR"):
        g.tensor(dim=[4], data_type=t, name="w")
    a = g.tensor(dim=[4], data_type=F32, name="v")
    with pytest.raises(ValueError, match=f"tensor 'v': data_type {name}"):
        a.set_data_type(t)
    assert a.get_data_type() == DT.FLOAT


# -------------------------------------------------------------------- semantics --
def relu_graph(uid_in, uid_out):
    g = graph()
    a = g.tensor(dim=[3, 4], data_type=F32, name="a", uid=uid_in)
    y = g.relu(a)
    y.set_output(True).set_uid(uid_out)
    return build(g), a, y


def test_none_keys_in_a_variant_pack_are_ignored(rng):
    g, a, y = relu_graph(3, 4)
    x = rng.standard_normal((3, 4)).astype(F32)
    out = np.full_like(x, np.nan)
    g.execute({a: x, y: out, None: np.zeros(1, F32)}, None)
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    out[:] = np.nan
    g.execute_plan_at_index({3: x, None: None, 4: out}, None, g.get_selected_plan_index())
    np.testing.assert_array_equal(out, np.maximum(x, 0))


def test_uid_zero_is_a_real_uid(rng):
    g, a, y = relu_graph(0, 1)
    assert a.get_uid() == 0 and a.has_uid() and a.get_uid_assigned_by_user()
    x = rng.standard_normal((3, 4)).astype(F32)
    out = np.full_like(x, np.nan)
    g.execute({0: x, 1: out}, None)
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    back = opgraph.deserialize(g.serialize())
    assert back.tensor_by_uid(0).get_name() == "a"
    # the default is "no uid" (-1 / None), and a second 0 collides
    h = graph()
    b = h.tensor(dim=[1], data_type=F32, name="b")
    assert not b.has_uid()
    h.tensor(dim=[1], data_type=F32, name="c", uid=0)
    d = h.tensor(dim=[1], data_type=F32, name="d", uid=0)
    h.add(b, d).set_output(True)
    with pytest.raises(ValueError, match="uid 0 is set on two tensors"):
        h.validate()


class _TorchLikeCpuScalar:
    """A stand-in for a one-element CPU torch tensor (torch is not installed on the CPU runner):
    its type lives in a module named torch.*, it has .device.type == 'cpu', .shape, .item() and
    the buffer protocols, as torch's tensors do."""

    class _Device:
        type = "cpu"

    def __init__(self, value, dtype=np.float32):
        self._a = np.full((1, 1, 1, 1), value, dtype)
        self.shape = self._a.shape
        self.dtype = self._a.dtype
        self.device = self._Device()

    def item(self):
        return self._a.item()

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()

    @property
    def __array_interface__(self):
        return self._a.__array_interface__


_TorchLikeCpuScalar.__module__ = "torch.fake"


def test_tensor_like_of_a_host_scalar_is_pass_by_value_and_execute_takes_it(rng):
    eps_cpu = _TorchLikeCpuScalar(1e-3)
    g = graph()
    x = rng.standard_normal((4, 16)).astype(F32)
    scale = rng.standard_normal((1, 16)).astype(F32)
    X = g.tensor_like(x, name="x")
    S = g.tensor_like(scale, name="scale")
    E = g.tensor_like(eps_cpu, name="eps")
    assert E.is_pass_by_value and E.get_pass_by_value() == pytest.approx(1e-3)
    assert not X.is_pass_by_value  # numpy host arrays stay buffers
    Y, inv = g.rmsnorm(norm_forward_phase=opgraph.norm_forward_phase.TRAINING, input=X, scale=S, epsilon=E)
    Y.set_output(True)
    inv.set_output(True).set_data_type(F32)
    build(g)
    y = np.full_like(x, np.nan)
    iv = np.full((4, 1), np.nan, F32)
    g.execute({X: x, S: scale, E: eps_cpu, Y: y, inv: iv}, None)  # the host scalar rides in the pack
    ref_inv = 1.0 / np.sqrt((x.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + np.float32(1e-3))
    np.testing.assert_allclose(iv, ref_inv, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y, x * ref_inv * scale, rtol=1e-5, atol=1e-6)
    # keyed by uid too; another value builds the graph again for it
    g.execute({X: x, S: scale, E.get_uid(): np.float32(1e-3), Y: y, inv: iv}, None)
    assert not g.__dict__.get("_rebuilt")
    g.execute({X: x, S: scale, E: _TorchLikeCpuScalar(5e-2), Y: y, inv: iv}, None)
    ref_inv = 1.0 / np.sqrt((x.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + np.float32(5e-2))
    np.testing.assert_allclose(iv, ref_inv, rtol=1e-5, atol=1e-6)
    assert len(g._rebuilt) == 1
    # a value that changes every call builds each time but keeps a bounded number of graphs,
    # the most recently used; each result is still right
    from opgraph import _graph
    for i in range(_graph._REBUILT_KEPT + 4):
        e = 1e-2 * (i + 2)
        g.execute({X: x, S: scale, E: _TorchLikeCpuScalar(e), Y: y, inv: iv}, None)
        ref_inv = 1.0 / np.sqrt((x.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + np.float32(e))
        np.testing.assert_allclose(iv, ref_inv, rtol=1e-5, atol=1e-6)
    assert len(g._rebuilt) == _graph._REBUILT_KEPT
    last = list(g._rebuilt)[-1]
    assert dict(last)[E.get_uid()] == pytest.approx(1e-2 * (_graph._REBUILT_KEPT + 5))
    # a value given at declaration (value=) is fixed: another value at execute is refused, naming it
    h = graph()
    a = h.tensor(dim=[3], data_type=F32, name="a", uid=1)
    k = h.tensor(dim=[1], data_type=F32, name="k", is_pass_by_value=True, value=2.0)
    o = h.mul(a, k)
    o.set_output(True).set_uid(2)
    build(h)
    xa, out = np.ones(3, F32), np.empty(3, F32)
    h.execute({1: xa, 2: out, k: np.float32(2.0)}, None)
    np.testing.assert_array_equal(out, 2 * xa)
    with pytest.raises(ValueError, match="pass-by-value tensor 'k' .* was built with the value 2.0"):
        h.execute({1: xa, 2: out, k: np.float32(3.0)}, None)
    # explicit is_pass_by_value for a numpy scalar; a many-element buffer is refused
    h = graph()
    assert h.tensor_like(np.array([2.0], F32), name="s", is_pass_by_value=True).is_pass_by_value
    with pytest.raises(ValueError, match="'m': a pass-by-value tensor holds one value; this buffer has 3"):
        h.tensor_like(np.zeros(3, F32), name="m", is_pass_by_value=True)


def test_mul_takes_a_boolean_mask(rng):
    g = graph()
    x = rng.standard_normal((3, 8)).astype(F32)
    m = rng.random((3, 8)) < 0.5
    X = g.tensor_like(x)
    M = g.tensor_like(m)
    assert M.get_data_type() == DT.BOOLEAN
    Y = g.mul(a=X, b=M)
    Y.set_output(True).set_data_type(F32)
    build(g)
    y = np.full_like(x, np.nan)
    g.execute({X: x, M: m, Y: y}, None)
    np.testing.assert_array_equal(y, np.where(m, x, 0).astype(F32))


def test_execute_takes_override_arguments(rng):
    g, a, y = relu_graph(1, 2)
    x = rng.standard_normal((3, 4)).astype(F32)
    out = np.full_like(x, np.nan)
    g.execute({1: x, 2: out}, None, None, override_uids=[], override_shapes=[], override_strides=[])
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    # The declared extents as an override change nothing.
    out[:] = np.nan
    g.execute({1: x, 2: out}, None, override_uids=[1], override_shapes=[[3, 4]], override_strides=[[4, 1]])
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    # New extents of the same layout class: the reference (the host plan) runs them.
    x2 = rng.standard_normal((2, 4)).astype(F32)
    out2 = np.full_like(x2, np.nan)
    g.execute({1: x2, 2: out2}, None, override_uids=[1, 2], override_shapes=[[2, 4], [2, 4]])
    np.testing.assert_array_equal(out2, np.maximum(x2, 0))
    out2[:] = np.nan
    g.execute_plan_at_index({1: x2, 2: out2}, None, 0, override_uids=[1, 2], override_shapes=[[2, 4], [2, 4]])
    np.testing.assert_array_equal(out2, np.maximum(x2, 0))
    with pytest.raises(ValueError, match="parallel"):
        g.execute_plan_at_index({1: x, 2: out}, None, 0, override_uids=[1])


def sdpa_inputs(g, b=1, h=2, s=8, d=16):
    shape = [b, h, s, d]
    q = g.tensor(dim=shape, data_type=DT.HALF, name="q")
    k = g.tensor(dim=shape, data_type=DT.HALF, name="k")
    v = g.tensor(dim=shape, data_type=DT.HALF, name="v")
    return q, k, v


def test_sdpa_rng_dump_takes_the_output_tensor():
    g = opgraph.pygraph(io_data_type=DT.HALF, intermediate_data_type=DT.FLOAT, compute_data_type=DT.FLOAT)
    q, k, v = sdpa_inputs(g)
    seed = g.tensor(dim=[1, 1, 1, 1], data_type=DT.INT64, name="seed")
    offset = g.tensor(dim=[1, 1, 1, 1], data_type=DT.INT64, name="offset")
    dump = g.tensor(dim=[1, 2, 8, 8], data_type=DT.FLOAT, name="rng_dump", uid=50)
    o, stats = g.sdpa(q=q, k=k, v=v, attn_scale=0.25, generate_stats=True,
                      dropout=(0.1, seed, offset), rng_dump=dump)
    o.set_output(True)
    g.validate()
    node = g.nodes[-1]
    produced = node.outputs["RNG_DUMP"]
    assert produced is not None and not produced.is_virtual
    assert produced.get_uid() == 50 and produced.get_name() == "rng_dump"
    assert produced.get_dim() == [1, 2, 8, 8] and produced.get_data_type() == DT.FLOAT
    assert g._host_pack({dump: "buf"}) == {produced: "buf"}  # the user's tensor keys the output


def test_sdpa_backward_dbias_takes_the_output_tensor():
    g = opgraph.pygraph(io_data_type=DT.HALF, intermediate_data_type=DT.FLOAT, compute_data_type=DT.FLOAT)
    q, k, v = sdpa_inputs(g)
    o = g.tensor(dim=[1, 2, 8, 16], data_type=DT.HALF, name="o")
    do = g.tensor(dim=[1, 2, 8, 16], data_type=DT.HALF, name="do")
    stats = g.tensor(dim=[1, 2, 8, 1], data_type=DT.FLOAT, name="stats")
    bias = g.tensor(dim=[1, 2, 8, 8], data_type=DT.HALF, name="bias")
    dbias = g.tensor(dim=[1, 2, 8, 8], data_type=DT.HALF, name="dbias")
    dq, dk, dv = g.sdpa_backward(q=q, k=k, v=v, o=o, dO=do, stats=stats, attn_scale=0.25, bias=bias, dBias=dbias)
    for t in (dq, dk, dv):
        t.set_output(True)
    g.validate()
    produced = g.nodes[-1].outputs["dBias"]
    assert produced.get_name() == "dbias" and not produced.is_virtual
    assert g._host_pack({dbias: "buf", None: "x"}) == {produced: "buf"}


def test_sdpa_fp8_takes_left_bound():
    g = opgraph.pygraph(io_data_type=DT.FP8_E4M3, intermediate_data_type=DT.FLOAT, compute_data_type=DT.FLOAT)
    shape = [1, 2, 64, 64]
    q, k, v = (g.tensor(dim=shape, data_type=DT.FP8_E4M3, name=n) for n in "qkv")
    sc = {n: g.tensor(dim=[1, 1, 1, 1], data_type=DT.FLOAT, name=n)
          for n in ("dq", "dk", "dv", "ds", "ss", "so")}
    o, stats, amax_s, amax_o = g.sdpa_fp8(q=q, k=k, v=v, descale_q=sc["dq"], descale_k=sc["dk"], descale_v=sc["dv"],
                                          descale_s=sc["ds"], scale_s=sc["ss"], scale_o=sc["so"],
                                          attn_scale=0.125, generate_stats=True, use_causal_mask=True,
                                          left_bound=16)
    node = g.nodes[-1]
    assert node.get_attribute("diagonal_band_left_bound") == 16
    assert amax_s is not None and amax_o is not None
    h = opgraph.pygraph(io_data_type=DT.HALF, intermediate_data_type=DT.FLOAT, compute_data_type=DT.FLOAT)
    q, k, v = sdpa_inputs(h)
    h.sdpa(q=q, k=k, v=v, attn_scale=0.25, generate_stats=False, use_causal_mask=True, left_bound=4, right_bound=0)
    assert h.nodes[-1].get_attribute("diagonal_band_left_bound") == 4
    assert h.nodes[-1].get_attribute("diagonal_band_right_bound") == 0


def test_a_device_graph_no_device_engine_accepts_raises_cudnns_error_through_jit():
    @opgraph.jit(heur_modes=[opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    def make():
        g = graph(sm_version=90, sm_count=132)
        a = g.tensor(dim=[4, 8], data_type=F32, name="a")
        g.sin(a).set_output(True)  # no device engine offers a lone sin on this machine
        return g, [a]

    g = graph(sm_version=90, sm_count=132)
    a = g.tensor(dim=[4, 8], data_type=F32, name="a")
    g.sin(a).set_output(True)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    if any(not g.get_plan_name_at_index(i).startswith("reference") for i in range(g.get_execution_plan_count())):
        pytest.skip("a device engine is offered on this machine")
    with pytest.raises(opgraph.cudnnGraphNotSupportedError):
        make()


def test_a_pass_by_value_tensor_declared_without_a_value_takes_it_at_execute(rng):
    # cudnn-frontend's test_layernorm: tensor(..., is_pass_by_value=True) and the value in the pack
    g = graph()
    x = rng.standard_normal((4, 32)).astype(F32)
    scale = rng.standard_normal((1, 32)).astype(F32)
    bias = rng.standard_normal((1, 32)).astype(F32)
    X = g.tensor(name="X", dim=[4, 32], data_type=F32)
    S = g.tensor(name="scale", dim=[1, 32], data_type=F32)
    B = g.tensor(name="bias", dim=[1, 32], data_type=F32)
    E = g.tensor(name="epsilon", dim=[1, 1], stride=[1, 1], is_pass_by_value=True, data_type=F32)
    Y, mean, inv = g.layernorm(name="LN", norm_forward_phase=opgraph.norm_forward_phase.TRAINING, input=X,
                               scale=S, bias=B, epsilon=E)
    for t in (Y, mean, inv):
        t.set_output(True).set_data_type(F32)
    build(g)

    def run(eps):
        y, m, iv = np.full_like(x, np.nan), np.full((4, 1), np.nan, F32), np.full((4, 1), np.nan, F32)
        g.execute({X: x, S: scale, B: bias, E: _TorchLikeCpuScalar(eps), Y: y, mean: m, inv: iv}, None)
        x64 = x.astype(np.float64)
        ref_mean = x64.mean(axis=1, keepdims=True)
        ref_inv = 1 / np.sqrt(x64.var(axis=1, keepdims=True) + np.float32(eps))
        np.testing.assert_allclose(m, ref_mean, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(iv, ref_inv, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(y, (x64 - ref_mean) * ref_inv * scale + bias, rtol=1e-5, atol=1e-5)

    run(1e-5)
    run(0.5)  # a second value: the graph is built again for it, same engine
    run(1e-5)
    assert len(g._rebuilt) == 2
    with pytest.raises(ValueError, match="'epsilon' was declared without a value; execute needs it"):
        g.execute({X: x, S: scale, B: bias, Y: np.empty_like(x), mean: np.empty((4, 1), F32),
                   inv: np.empty((4, 1), F32)}, None)


def test_sdpa_score_mod_writes_the_composite():
    # score_mod=callable: the SDPA composite written out of IR ops around the callable's subgraph
    # (numerics: test_flexible_sdpa.py); None: the sdpa node, no modifier.
    g = opgraph.pygraph(io_data_type=DT.HALF, intermediate_data_type=DT.FLOAT, compute_data_type=DT.FLOAT)
    q, k, v = sdpa_inputs(g)
    o, stats = g.sdpa(q=q, k=k, v=v, attn_scale=0.25, generate_stats=False, score_mod=lambda graph, score: score)
    assert o is not None and stats is None
    assert "sdpa" not in [n.op for n in g.nodes] and {"matmul", "reduction", "pointwise"} <= {n.op for n in g.nodes}
    o, _ = g.sdpa(q=q, k=k, v=v, attn_scale=0.25, generate_stats=False, score_mod=None)  # None: no modifier
    assert o is not None and g.nodes[-1].op == "sdpa"


def test_a_graph_built_again_for_a_pass_by_value_value_keeps_its_planning_target(rng):
    # On the H200, cudnn-frontend's test_layernorm failed here: the graph built again for the
    # epsilon given at execute had lost its device target ("the cuDNN backend needs a device").
    # Planned for an sm_90 target with the host fallback, the graph built again must still plan for
    # sm_90. The host buffers run on the reference: where a GPU lists cuDNN plans first (the H200),
    # they are deselected, and the graph built again keeps the same engine.
    g = graph(sm_version=90, sm_count=132)
    g.set_host_fallback(True)
    x = rng.standard_normal((4, 8)).astype(F32)
    X = g.tensor(name="X", dim=[4, 8], data_type=F32)
    S = g.tensor(name="s", dim=[1, 1], stride=[1, 1], is_pass_by_value=True, data_type=F32)
    Y = g.mul(X, S, name="scale")
    Y.set_output(True).set_data_type(F32)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    g.deselect_engines(["cudnn"])
    g.check_support()
    g.build_plans()
    assert g.get_plan_name_at_index(g.get_selected_plan_index()).startswith("reference")
    assert g._has_device_target
    y = np.full_like(x, np.nan)
    g.execute({X: x, S: _TorchLikeCpuScalar(2.5), Y: y}, None)
    np.testing.assert_allclose(y, x.astype(np.float64) * 2.5, rtol=1e-6)
    (rebuilt,) = g._rebuilt.values()
    assert rebuilt._has_device_target and rebuilt.host_fallback
    assert rebuilt.get_engine_and_knobs_at_index(0) == g.get_engine_and_knobs_at_index(g.get_selected_plan_index())


def test_a_built_graph_serializes_with_its_plan_and_runs_once_deserialized(rng):
    # cudnn-frontend's test_deviceless_aot_compilation: build, serialize, deserialize(handle, data),
    # execute at once with a variant pack keyed by the FIRST graph's tensors.
    g = graph()
    X = g.tensor(name="X", dim=[3, 5], data_type=F32)
    Y = g.relu(X, name="relu")
    Y.set_output(True).set_data_type(F32)
    g.validate()
    unbuilt = g.serialize()
    build(g)
    data = g.serialize()
    assert json.loads(data)["format"] == "opgraph.built_graph" and json.loads(unbuilt) == json.loads(data)["graph"]
    h = opgraph.pygraph()
    h.deserialize(None, data)
    assert h.is_planned and h.plans == g.plans and h.get_workspace_size() == 0
    x = rng.standard_normal((3, 5)).astype(F32)
    y = np.full_like(x, np.nan)
    h.execute({X: x, Y: y}, None)  # g's tensors, read as their uids
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    assert h.serialize() == data and opgraph.deserialize(data).is_planned
    # a tensor of another graph whose uid names a tensor of another name is still refused
    other = graph()
    Z = other.tensor(name="Z", dim=[3, 5], data_type=F32, uid=X.get_uid())
    with pytest.raises(ValueError, match="another graph"):
        h.execute({Z: x, Y: y}, None)
    # an unbuilt graph's data is the graph JSON, and deserializes unplanned
    assert not opgraph.deserialize(unbuilt).is_planned
    bad = json.loads(data)
    bad["version"] = 2
    with pytest.raises(opgraph.GraphNotSupportedError, match="not a serialized built opgraph graph"):
        opgraph.pygraph().deserialize(json.dumps(bad))


def test_tensor_like_of_a_planned_graphs_tensor_makes_a_new_tensor(rng):
    # cudnn-frontend's test_layernorm makes its backward graph's inputs with
    # bwd_graph.tensor_like(X) of the planned forward graph's tensors.
    g = graph()
    X = g.tensor(name="X", dim=[2, 3, 4], stride=[12, 1, 3], data_type=F32, uid=7)
    Y = g.relu(X, name="relu")
    Y.set_output(True).set_data_type(F32)
    build(g)
    h = graph()
    Xb = h.tensor_like(X, name="X_bwd")
    assert Xb is not X and Xb.get_name() == "X_bwd" and not Xb.get_uid_assigned_by_user()
    assert (Xb.get_dim(), Xb.get_stride(), Xb.get_data_type()) == ([2, 3, 4], [12, 1, 3], DT.FLOAT)
    Xb.set_uid(3)  # the new tensor is not frozen
    Z = h.relu(Xb, name="relu_bwd")
    Z.set_output(True).set_data_type(F32).set_stride([12, 4, 1])
    build(h)
    x = rng.standard_normal(12 * 2).astype(F32)
    view = np.lib.stride_tricks.as_strided(x, shape=(2, 3, 4), strides=(48, 4, 12))
    z = np.full((2, 3, 4), np.nan, F32)
    h.execute({Xb: view, Z: z}, None)
    np.testing.assert_array_equal(z, np.maximum(view, 0))
    assert X.get_uid() == 7 and X.get_name() == "X"  # the source is untouched
    # a pass-by-value tensor stays one, with its value
    s = g.find_tensor(X.get_uid())
    S = graph().tensor(name="s", dim=[1], data_type=F32, is_pass_by_value=True, value=0.5)
    assert graph().tensor_like(S).get_pass_by_value() == 0.5 and s is not None


@pytest.mark.parametrize("mask_type", [np.int32, np.int8, np.uint8, np.int64, np.bool_])
def test_binary_select_takes_an_integer_mask(rng, mask_type):
    # cudnn-frontend's test_gemm_silu_and_mul selects with an INT32 mask: not zero picks the first input.
    g = graph()
    a = rng.standard_normal((2, 3, 4)).astype(F32)
    b = rng.standard_normal((2, 3, 4)).astype(F32)
    m = rng.integers(-2, 3, size=(2, 1, 4)).astype(mask_type)
    A, B = g.tensor_like(a, name="a"), g.tensor_like(b, name="b")
    M = g.tensor_like(m, name="mask")
    Y = g.binary_select(A, B, M, name="sel")
    Y.set_output(True)
    build(g)
    y = np.full_like(a, np.nan)
    g.execute({A: a, B: b, M: m, Y: y}, None)
    np.testing.assert_array_equal(y, np.where(m != 0, a, b))
    assert Y.get_data_type() == DT.FLOAT


def test_binary_select_refuses_a_floating_mask():
    g = graph()
    A = g.tensor(name="a", dim=[4], data_type=F32)
    B = g.tensor(name="b", dim=[4], data_type=F32)
    M = g.tensor(name="m", dim=[4], data_type=np.float16)
    g.binary_select(A, B, M, name="sel").set_output(True)
    with pytest.raises(opgraph.GraphNotSupportedError, match="tensor 'm'.*mask must be BOOLEAN or an integer type"):
        g.validate()
