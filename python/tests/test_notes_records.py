"""Plan notes, the note filters (cudnn.pygraph's select_/deselect_numeric_notes,
select_/deselect_behavior_notes) and plan records (serialize_plan / deserialize_plan).

Host-only: the reference engine declares no notes; the opt-in gemm engine, listed when
planning for sm_90 without a device, declares TENSOR_CORE and RUNTIME_COMPILATION.
Numerics: the reference accumulates in float64, |err| <= 1e-5 + 1e-5 * |ref|.
"""
import json

import numpy as np
import pytest

import opgraph

F32 = np.float32
NN, BN = opgraph.numerical_note, opgraph.behavior_note


def matmul_graph(dtype=F32, **ctx):
    g = opgraph.pygraph(io_data_type=dtype, intermediate_data_type=F32, compute_data_type=F32, **ctx)
    a = g.tensor(dim=[1, 16, 32], data_type=dtype, name="a")
    b = g.tensor(dim=[1, 32, 8], data_type=dtype, name="b")
    c = g.matmul(A=a, B=b)
    c.set_output(True).set_data_type(F32)
    return g, a, b, c


def test_note_enums_carry_cudnns_names_and_values():
    assert NN.TENSOR_CORE.value == 0 and NN.STRICT_NAN_PROP.value == 9
    assert BN.RUNTIME_COMPILATION.value == 0 and BN.SUPPORTS_CUDA_GRAPH_NATIVE_API.value == 3
    assert {n.name for n in NN} >= {"DOWN_CONVERT_INPUTS", "WINOGRAD_TILE_13x13", "NONDETERMINISTIC"}


def test_select_numeric_notes_deselects_note_less_reference_plans():
    g, *_ = matmul_graph()
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    n = g.get_execution_plan_count()
    assert n >= 1
    for i in range(n):
        assert g.get_numerical_notes_for_plan_at_index(i) == []
        assert g.get_behavior_notes_for_plan_at_index(i) == []
    g.deselect_numeric_notes([NN.TENSOR_CORE])  # nothing has it: nothing goes
    assert all(g.get_plan_status_at_index(i) == "" for i in range(n))
    g.select_numeric_notes([NN.TENSOR_CORE])
    for i in range(n):
        assert "lacks numerical note TENSOR_CORE" in g.get_plan_status_at_index(i)
    with pytest.raises(opgraph.GraphNotSupportedError, match="deselected"):
        g.build_plans()


def test_filters_remove_exactly_the_gemm_plans_planned_for_sm90(monkeypatch):
    monkeypatch.setenv("OPGRAPH_ENABLE_ENGINES", "gemm")
    g, *_ = matmul_graph(opgraph.data_type.BFLOAT16, sm_version=90, sm_count=132)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    names = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
    tensor_core = {i for i in range(len(names)) if NN.TENSOR_CORE in g.get_numerical_notes_for_plan_at_index(i)}
    gemm = {i for i, n in enumerate(names) if n.startswith("gemm")}
    # Ours declare TENSOR_CORE; the reference never; cuDNN's plans (listed when this
    # process has a GPU and loaded the driver) carry what cuDNN reports.
    assert gemm and gemm <= tensor_core, names
    assert not any(names[i].startswith("reference") for i in tensor_core), names
    assert tensor_core - gemm <= {i for i, n in enumerate(names) if n.startswith("cudnn_eng")}, names
    for i in gemm:
        assert BN.RUNTIME_COMPILATION in g.get_behavior_notes_for_plan_at_index(i)
    g.deselect_numeric_notes([NN.TENSOR_CORE])
    for i in range(len(names)):
        assert (g.get_plan_status_at_index(i) != "") == (i in tensor_core), names[i]


def test_behavior_filter_keeps_only_runtime_compiled_plans(monkeypatch):
    monkeypatch.setenv("OPGRAPH_ENABLE_ENGINES", "gemm")
    g, *_ = matmul_graph(opgraph.data_type.BFLOAT16, sm_version=90, sm_count=132)
    g.create_execution_plans([opgraph.heur_mode.A])
    g.select_behavior_notes([BN.RUNTIME_COMPILATION])
    for i in range(g.get_execution_plan_count()):
        kept = g.get_plan_status_at_index(i) == ""
        name = g.get_plan_name_at_index(i)
        assert kept == (BN.RUNTIME_COMPILATION in g.get_behavior_notes_for_plan_at_index(i)), name
        if name.startswith("gemm"):
            assert kept, name
        if name.startswith("reference"):
            assert not kept, name


def test_plan_record_replays_into_a_fresh_graph(rng):
    g, a, b, c = matmul_graph()
    g.create_execution_plans([opgraph.heur_mode.A])
    with pytest.raises(ValueError, match="not built"):
        g.serialize_plan(0)
    g.build_plans()
    record = g.serialize_plan()
    fields = json.loads(record)
    assert fields["format"] == "opgraph.plan" and fields["engine"] == "reference"
    assert "backend_plan" not in fields

    g2, a2, b2, c2 = matmul_graph()
    g2.deserialize_plan(record)
    assert g2.get_execution_plan_count() == 1
    assert g2.get_plan_name_at_index(0) == g.get_plan_name_at_index(g.get_selected_plan_index())
    g2.build_plans()
    a_np = rng.standard_normal((1, 16, 32)).astype(F32)
    b_np = rng.standard_normal((1, 32, 8)).astype(F32)
    out = np.full((1, 16, 8), np.nan, F32)
    g2.execute({a2: a_np, b2: b_np, c2: out}, np.empty(max(g2.get_workspace_size(), 1), np.uint8))
    np.testing.assert_allclose(out, a_np.astype(np.float64) @ b_np, rtol=1e-5, atol=1e-5)

    other = opgraph.pygraph(io_data_type=F32, compute_data_type=F32)
    x = other.tensor(dim=[3, 5], data_type=F32, name="x")
    other.relu(input=x).set_output(True)
    with pytest.raises(ValueError, match="graph key"):
        other.deserialize_plan(record)
    with pytest.raises(opgraph.GraphNotSupportedError, match="format"):
        matmul_graph()[0].deserialize_plan("{}")
