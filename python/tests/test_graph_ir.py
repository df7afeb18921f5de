"""The IR surface of opgraph.pygraph: context, tensors, builders, validate, JSON, key, introspection."""
import json

import numpy as np
import pytest

import opgraph


def mlp_graph(m=3, k=4, n=5, batch=2):
    g = opgraph.pygraph(name="mlp", io_data_type=opgraph.data_type.FLOAT, compute_data_type=np.float32)
    a = g.tensor(dim=[batch, m, k], data_type=np.float32, name="a")
    b = g.tensor(dim=[batch, k, n], data_type="float32", name="b")
    bias = g.tensor(dim=[1, 1, n], data_type=opgraph.data_type.FLOAT, name="bias")
    c = g.matmul(A=a, B=b, name="mm")
    y = g.gelu(input=g.bias(input=c, bias=bias, name="add_bias"), name="act")
    y.set_output(True).set_name("y")
    return g, a, b, bias, c, y


def test_constructor_context_and_dtypes():
    g = opgraph.pygraph(name="ctx", io_data_type=np.float16, intermediate_data_type="float",
                        compute_data_type=opgraph.data_type.FLOAT, sm_version=90)
    ctx = g.context
    assert ctx["name"] == "ctx"
    assert ctx["io_data_type"] == opgraph.data_type.HALF
    assert ctx["intermediate_data_type"] == opgraph.data_type.FLOAT
    assert g.sm_version == 90
    assert opgraph.Graph is opgraph.pygraph


@pytest.mark.parametrize("spelling,expected", [
    (np.float32, "FLOAT"), (np.dtype("float16"), "HALF"), ("bf16", "BFLOAT16"), (np.int8, "INT8"),
    (np.bool_, "BOOLEAN"), ("torch.float8_e4m3fn", "FP8_E4M3"), (np.int64, "INT64"), ("double", "DOUBLE"),
])
def test_data_type_spellings(spelling, expected):
    assert opgraph.to_data_type(spelling) == getattr(opgraph.data_type, expected)


def test_data_type_rejects_unknown():
    with pytest.raises(TypeError):
        opgraph.to_data_type("complex512")


def test_matmul_bias_gelu_shapes_and_nodes():
    g, a, b, bias, c, y = mlp_graph(m=3, k=4, n=5, batch=2)
    g.validate()
    assert g.is_validated
    assert y.dims == [2, 3, 5] and y.shape == (2, 3, 5)
    assert y.strides == [15, 5, 1]
    assert y.dtype == opgraph.data_type.FLOAT
    assert not y.is_virtual and c.is_virtual
    ops = [n.op for n in g.nodes]
    assert ops == ["matmul", "pointwise", "pointwise"]
    mm, add, act = g.nodes
    assert mm.name == "mm" and mm.inputs["A"] is a and mm.inputs["B"] is b and mm.outputs["C"] is c
    assert add.attributes == {"mode": "ADD"} and add.inputs["IN_1"] is bias
    assert act.get_attribute("mode") == "GELU_FWD"
    assert g.producer_of(y) is act and g.producer_of(a) is None
    uids = sorted(t.uid for t in g.tensors)
    assert len(set(uids)) == len(uids) and uids[0] > 0
    assert g.tensor_by_uid(y.uid) is y
    assert g.query_tensor_attributes_of_uid(a.uid).name == "a"


def test_serialize_round_trip_and_key():
    g, *_ = mlp_graph()
    g.validate()
    data = g.serialize()
    assert isinstance(data, bytes)
    doc = json.loads(repr(g))
    assert [n["op"] for n in doc["nodes"]] == ["matmul", "pointwise", "pointwise"]
    h = opgraph.deserialize(data)
    assert h.serialize() == data
    assert h.key() == g.key()
    h2 = opgraph.pygraph().deserialize(None, data)  # cudnn's (handle, data) form
    assert h2.key() == g.key()
    other, *_ = mlp_graph(n=6)
    other.validate()
    assert other.key() != g.key()


def test_tensor_getters_setters_chain():
    g = opgraph.pygraph()
    t = g.tensor(dim=[4, 6], stride=[1, 4], data_type=np.float16, name="t", uid=7)
    assert t.get_dim() == [4, 6] and t.get_stride() == [1, 4] and t.get_uid() == 7
    assert t.set_name("u").set_dim([2, 3]).set_stride([3, 1]) is t
    assert t.name == "u" and t.dims == [2, 3]
    assert t.set_data_type(np.float32) is t and t.dtype == opgraph.data_type.FLOAT
    s = g.tensor_scalar(0.5, name="eps")
    assert s.is_pass_by_value and s.get_pass_by_value() == 0.5 and s.dims == [1]
    like = g.tensor_like(t, name="like")
    assert like.dims == [2, 3] and like.uid == 0 and like.name == "like"


def test_tensor_like_from_numpy_view(rng):
    g = opgraph.pygraph()
    base = rng.standard_normal((6, 8)).astype(np.float16)
    view = base[::2, 1::3]
    t = g.tensor_like(view, name="v")
    assert t.dims == list(view.shape)
    assert t.strides == [s // view.itemsize for s in view.strides]
    assert t.dtype == opgraph.data_type.HALF


def test_pass_by_value_value_now_or_at_execute():
    g = opgraph.pygraph()
    # without a value: cudnn's runtime scalar, given with execute (test_porting.py runs one)
    later = g.tensor(dim=[1], data_type=np.float32, is_pass_by_value=True)
    assert later.is_pass_by_value and g._deferred == [later]
    t = g.tensor(dim=[1], data_type=np.float32, is_pass_by_value=True, value=2.0)
    assert t.get_pass_by_value() == 2.0 and g._deferred == [later]
    with pytest.raises(ValueError, match="value= is only meaningful with is_pass_by_value=True"):
        g.tensor(dim=[1], data_type=np.float32, value=2.0)


def test_conditional_output_is_none():
    # gdn's final_state exists only with output_final_state.
    def build(final):
        g = opgraph.pygraph(io_data_type=np.float32, compute_data_type=np.float32)
        T, H, K, V = 8, 2, 4, 4
        q = g.tensor(dim=[T, H, K], data_type=np.float32)
        k = g.tensor(dim=[T, H, K], data_type=np.float32)
        v = g.tensor(dim=[T, H, V], data_type=np.float32)
        gate = g.tensor(dim=[T, H], data_type=np.float32)
        beta = g.tensor(dim=[T, H], data_type=np.float32)
        cu = g.tensor(dim=[3], data_type=np.int32)
        return g, g.gdn(q=q, k=k, v=v, g=gate, beta=beta, cu_seqlens=cu, output_final_state=final)
    g, (o, fs, ck) = build(False)  # cudnn's three outputs (FlashInfer unpacks O, fs, _checkpoints)
    assert o is not None and fs is None and ck is None
    g.validate()
    g, (o, fs, ck) = build(True)
    g.validate()
    assert fs.dims == [2, 2, 4, 4] and ck is None


def test_freeze_blocks_every_mutation():
    g, a, *_ = mlp_graph()
    g.validate()
    g.freeze()
    assert g.is_frozen and a.is_frozen
    with pytest.raises(opgraph.FrozenGraphError):
        g.tensor(dim=[1], data_type=np.float32)
    with pytest.raises(opgraph.FrozenGraphError):
        g.relu(input=a)
    with pytest.raises(opgraph.FrozenGraphError):
        a.set_dim([9, 9, 9])
    assert a.dims == [2, 3, 4]
