"""The six SDPA methods with cudnn.pygraph's keywords: attn_scale as a float or a tensor,
dropout tuples, is_inference/generate_stats, the returned outputs and their order."""
import inspect

import numpy as np
import pytest

import opgraph

pytestmark = pytest.mark.skipif("sdpa" not in {s["name"] for s in opgraph.op_specs()},
                                reason="no sdpa record in this build")
F32 = np.float32
B, H, S, D = 2, 4, 8, 16


def qkv(g, dtype=F32):
    return [g.tensor(dim=[B, H, S, D], data_type=dtype, name=n) for n in ("q", "k", "v")]


def graph():
    return opgraph.pygraph(io_data_type=np.float16, intermediate_data_type=F32, compute_data_type=F32)


def test_six_sdpa_methods_exist():
    for name in ("sdpa", "sdpa_backward", "sdpa_fp8", "sdpa_fp8_backward", "sdpa_mxfp8", "sdpa_mxfp8_backward"):
        assert callable(getattr(opgraph.pygraph, name))
    params = inspect.signature(opgraph.pygraph.sdpa).parameters
    for kw in ("q", "k", "v", "attn_scale", "bias", "use_causal_mask", "seq_len_q", "seq_len_kv",
               "use_padding_mask", "generate_stats", "paged_attention_k_table", "sink_token"):
        assert kw in params, kw


def test_sdpa_outputs_follow_generate_stats():
    g = graph()
    q, k, v = qkv(g, np.float16)
    o, stats = g.sdpa(q=q, k=k, v=v, attn_scale=D ** -0.5, use_causal_mask=True, generate_stats=True)
    o2, stats2 = g.sdpa(q, k, v, is_inference=True)
    g.validate()
    assert o.dims == [B, H, S, D] and stats.dims == [B, H, S, 1] and stats2 is None
    n0 = g.nodes[0]
    assert n0.inputs["Q"] is q and n0.attributes["attn_scale"] == D ** -0.5
    assert n0.attributes["use_causal_mask"] is True and n0.attributes["generate_stats"] is True
    assert g.nodes[1].attributes["generate_stats"] is False


def test_attn_scale_tensor_goes_to_the_port():
    g = graph()
    q, k, v = qkv(g, np.float16)
    scale = g.tensor_scalar(0.25)
    g.sdpa(q=q, k=k, v=v, attn_scale=scale, generate_stats=False)
    node = g.nodes[0]
    assert node.inputs["Attn_scale"] is scale and "attn_scale" not in node.attributes


def test_dropout_tuple_binds_seed_and_offset():
    g = graph()
    q, k, v = qkv(g, np.float16)
    seed = g.tensor(dim=[1, 1, 1, 1], data_type=np.int64, name="seed")
    offset = g.tensor(dim=[1, 1, 1, 1], data_type=np.int64, name="offset")
    g.sdpa(q=q, k=k, v=v, generate_stats=True, dropout=(0.1, seed, offset))
    node = g.nodes[0]
    assert node.inputs["Seed"] is seed and node.inputs["Offset"] is offset
    assert node.attributes["dropout_probability"] == 0.1


def test_sdpa_backward_returns_dq_dk_dv():
    g = graph()
    q, k, v = qkv(g, np.float16)
    o = g.tensor(dim=[B, H, S, D], data_type=np.float16, name="o")
    do = g.tensor(dim=[B, H, S, D], data_type=np.float16, name="dO")
    stats = g.tensor(dim=[B, H, S, 1], data_type=F32, name="stats")
    dq, dk, dv = g.sdpa_backward(q=q, k=k, v=v, o=o, dO=do, stats=stats, attn_scale=D ** -0.5,
                                 use_causal_mask=True)
    g.validate()
    assert dq.dims == dk.dims == dv.dims == [B, H, S, D]
    node = g.nodes[0]
    assert node.inputs["dO"] is do and node.inputs["Stats"] is stats
