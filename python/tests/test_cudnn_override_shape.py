"""A graph made with is_override_shape_enabled=True promises execute-time shape and stride
overrides. opgraph's cuDNN plans take them only where cuDNN finalises the built engine config on
its dynamic-shape graph, which cuDNN 9.14 refused for matmul and SDPA on the H200, so such a graph whose device
plans are all cuDNN plans is not supported (GraphNotSupportedError at check_support, where
cudnn-frontend's test_sdpa_thd waives: cuDNN's Hopper engines decline it too); a graph the gemm
engine runs keeps its plans (that engine takes overrides). Without a GPU no cuDNN plan is listed,
so the cuDNN plan list the H200 gives is stood in for the first test."""
import pytest

import opgraph

BF16 = opgraph.data_type.BFLOAT16


def thd_sdpa_graph(override):
    """test_sdpa_thd's graph: Q and O packed THD (ragged offsets), K / V BHSD in BSHD strides."""
    b, h, s_q, s_kv, d = 4, 8, 256, 512, 128
    g = opgraph.pygraph(io_data_type=BF16, intermediate_data_type=opgraph.data_type.FLOAT,
                        compute_data_type=opgraph.data_type.FLOAT, sm_version=90, sm_count=132,
                        is_override_shape_enabled=override)
    q = g.tensor(dim=(b, h, s_q, d), stride=(h * d, d, h * d, 1), data_type=BF16, name="Q", uid=1)
    q.set_ragged_offset(g.tensor(dim=(b + 1, 1, 1, 1), stride=(1, 1, 1, 1), data_type=opgraph.data_type.INT64,
                                 name="Q_ragged_offset", uid=5))
    k = g.tensor(dim=(b, h, s_kv, d), stride=(h * s_kv * d, d, h * d, 1), data_type=BF16, name="K", uid=2)
    v = g.tensor(dim=(b, h, s_kv, d), stride=(h * s_kv * d, d, h * d, 1), data_type=BF16, name="V", uid=3)
    lq = g.tensor(dim=(b, 1, 1, 1), stride=(1, 1, 1, 1), data_type=opgraph.data_type.INT32, name="seq_len_q", uid=7)
    lkv = g.tensor(dim=(b, 1, 1, 1), stride=(1, 1, 1, 1), data_type=opgraph.data_type.INT32, name="seq_len_kv",
                   uid=8)
    o, _ = g.sdpa(name="sdpa_thd", q=q, k=k, v=v, attn_scale=d ** -0.5, use_padding_mask=True, seq_len_q=lq,
                  seq_len_kv=lkv, generate_stats=False)
    o.set_output(True).set_dim((b, h, s_q, d)).set_stride((h * d, d, h * d, 1)).set_data_type(BF16)
    o.set_uid(4)
    o.set_ragged_offset(g.tensor(dim=(b + 1, 1, 1, 1), stride=(1, 1, 1, 1), data_type=opgraph.data_type.INT64,
                                 name="O_ragged_offset", uid=6))
    g.validate()
    g.build_operation_graph()
    return g


@pytest.fixture
def h200_cudnn_plans(monkeypatch):
    """The plan list the H200 gives the THD graph: cuDNN engine plans, then the host reference."""
    names = ["cudnn_eng1[KERNEL_CFG=0]", "cudnn_eng3[KERNEL_CFG=1]", "reference[]"]
    monkeypatch.setattr(opgraph.pygraph, "get_execution_plan_count", lambda self: len(names))
    monkeypatch.setattr(opgraph.pygraph, "get_plan_name_at_index", lambda self, i: names[i])


def test_override_enabled_graph_with_only_cudnn_plans_is_not_supported(h200_cudnn_plans):
    g = thd_sdpa_graph(override=True)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    with pytest.raises(opgraph.cudnnGraphNotSupportedError, match="is_override_shape_enabled.*cuDNN engine"):
        g.check_support()


def test_without_override_the_same_plans_are_supported(h200_cudnn_plans, monkeypatch):
    g = thd_sdpa_graph(override=False)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    called = []
    monkeypatch.setattr(opgraph._C._GraphBase, "check_support", lambda self: called.append(1))
    g.check_support()
    assert called == [1]


def planned_matmul(override):
    """A 64^3 fp16 matmul for an sm_90 target, planned (create_execution_plans)."""
    g = opgraph.pygraph(io_data_type=opgraph.data_type.HALF, compute_data_type=opgraph.data_type.FLOAT,
                        sm_version=90, sm_count=132, is_override_shape_enabled=override)
    a = g.tensor(name="a", dim=[1, 64, 64], data_type=opgraph.data_type.HALF)
    b = g.tensor(name="b", dim=[1, 64, 64], data_type=opgraph.data_type.HALF)
    g.matmul(a, b).set_output(True)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    return g


def test_an_override_enabled_matmul_keeps_its_gemm_plans():
    g = planned_matmul(True)
    names = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
    assert any(n.startswith("gemm") for n in names), names
    # Where a GPU lists cuDNN plans too (the H200 ranks cudnn_eng0 first for this shape), they are
    # deselected: the first plan left is a gemm plan, and every cuDNN plan says why it is not used.
    usable = [i for i, n in enumerate(names) if not g.get_plan_status_at_index(i)]
    assert names[usable[0]].startswith("gemm"), names
    for i, n in enumerate(names):
        if n.startswith("cudnn_eng"):
            assert "cudnn_eng" in g.get_plan_status_at_index(i)
    g.check_support()


def test_an_override_enabled_graph_deselects_the_cudnn_plans_beside_gemm_plans(monkeypatch):
    # The H200's list for this graph, stood in on a machine without a GPU.
    names = ["cudnn_eng0[KERNEL_CFG=0]", "gemm_v2_128x64s4[TILE_M=128]", "reference[]"]
    monkeypatch.setattr(opgraph.pygraph, "get_execution_plan_count", lambda self: len(names))
    monkeypatch.setattr(opgraph.pygraph, "get_plan_name_at_index", lambda self, i: names[i])
    denied = []
    monkeypatch.setattr(opgraph._C._GraphBase, "deselect_engines", lambda self, s: denied.append(list(s)))
    for override, want in ((True, [["cudnn_eng"]]), (False, [])):
        denied.clear()
        planned_matmul(override)
        assert denied == want, override
