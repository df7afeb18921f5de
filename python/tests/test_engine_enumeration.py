"""cudnn's engine enumeration on opgraph's plan list: get_engine_count, get_knobs_for_engine (knob
objects), and create_execution_plan(engine index, some knobs) as cudnn-frontend's own
test_conv_bias (test_conv_relu_execution_plan_creation) uses them. Planned for a device-less
sm_90 target, so the GEMM engine's plans are listed on a machine without a GPU."""
import json

import pytest

import opgraph as cudnn


def matmul_graph(**target):
    g = cudnn.pygraph(io_data_type=cudnn.data_type.HALF, compute_data_type=cudnn.data_type.FLOAT, **target)
    a = g.tensor(name="A", dim=[1, 256, 128], stride=[256 * 128, 128, 1], data_type=cudnn.data_type.HALF)
    b = g.tensor(name="B", dim=[1, 128, 256], stride=[128 * 256, 256, 1], data_type=cudnn.data_type.HALF)
    c = g.matmul(a, b, name="mm")
    c.set_output(True).set_data_type(cudnn.data_type.HALF)
    g.validate()
    g.build_operation_graph()
    return g


def ranked(**target):
    g = matmul_graph(**target)
    g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    return [g.get_engine_and_knobs_at_index(i) for i in range(g.get_execution_plan_count())]


def test_engines_are_the_distinct_engines_of_the_ranked_plans_best_first():
    plans = ranked(sm_version=90, sm_count=132)
    engines = []
    for engine_id, _ in plans:
        if engine_id not in engines:
            engines.append(engine_id)
    g = matmul_graph(sm_version=90, sm_count=132)
    assert g.get_engine_count() == len(engines) >= 2
    assert not g.is_planned  # counting plans a copy, not the graph


def test_knobs_for_an_engine_span_the_values_its_plans_take():
    plans = ranked(sm_version=90, sm_count=132)
    g = matmul_graph(sm_version=90, sm_count=132)
    g.get_engine_count()
    # The GEMM engine's entry (first in the list without a GPU; after cuDNN's engines on the H200).
    engines = list(dict.fromkeys(e for e, _ in plans))
    first = next(i for i, (e, k) in enumerate(plans) if "TILE_M" in {t.name for t in k})
    gemm_id = plans[first][0]
    knobs = {k.type: k for k in g.get_knobs_for_engine(engines.index(gemm_id))}
    for t in plans[first][1]:
        taken = sorted({int(k[t]) for e, k in plans if e == gemm_id})
        assert knobs[t].min_value == taken[0] and knobs[t].max_value == taken[-1]
        assert all((v - taken[0]) % knobs[t].stride == 0 for v in taken)
        assert json.loads(repr(knobs[t]))["knob_type"] == t.name
    # the reference engine has no knobs
    named = matmul_graph(sm_version=90, sm_count=132)
    named.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    ref_id = next(plans[i][0] for i in range(len(plans)) if named.get_plan_name_at_index(i).startswith("reference"))
    ref = engines.index(ref_id)
    assert g.get_knobs_for_engine(ref) == []
    with pytest.raises(RuntimeError, match="get_engine_count"):
        g.get_knobs_for_engine(g.get_engine_count())


def test_cudnn_style_plan_creation_over_the_engine_knobs():
    # cudnn-frontend's loop: each engine, each value of a knob; refusals are RuntimeErrors.
    plans = ranked(sm_version=90, sm_count=132)
    g = matmul_graph(sm_version=90, sm_count=132)
    made = None
    for engine in range(g.get_engine_count()):
        for k in g.get_knobs_for_engine(engine):
            if k.type != cudnn.knob_type.TILE_M:
                continue
            for v in range(k.min_value, k.max_value + 1, k.stride):
                try:
                    g.create_execution_plan(engine, {cudnn.knob_type.TILE_M: v})
                    made = made or (engine, v)
                except RuntimeError:
                    continue
    assert made is not None and g.is_planned and g.get_execution_plan_count() == 1
    engine_id, knobs = g.get_engine_and_knobs_at_index(0)
    # the best-ranked plan of that engine with that value, its other knobs included
    want = next((e, k) for e, k in plans if e == engine_id and k[cudnn.knob_type.TILE_M] == made[1])
    assert (engine_id, knobs) == want
    g.check_support()


def test_a_value_no_plan_takes_is_refused_and_ids_still_work_without_counting():
    g = matmul_graph(sm_version=90, sm_count=132)
    g.get_engine_count()
    with pytest.raises(cudnn.GraphNotSupportedError, match="TILE_M: 96"):
        g.create_execution_plan(0, {cudnn.knob_type.TILE_M: 96})
    assert not g.is_planned
    # without get_engine_count, create_execution_plan takes an engine id and every knob (plan records)
    plans = ranked(sm_version=90, sm_count=132)
    h = matmul_graph(sm_version=90, sm_count=132)
    h.create_execution_plan(plans[0][0], plans[0][1])
    assert h.get_engine_and_knobs_at_index(0) == plans[0]


def test_a_host_graph_has_the_reference_engine():
    g = matmul_graph()
    assert g.get_engine_count() == 1 and g.get_knobs_for_engine(0) == []
    g.create_execution_plan(0, {})
    assert g.plans == ["reference[]"]


def test_knob_object_defaults():
    k = cudnn.knob()
    assert k.type == cudnn.knob_type.NOT_SET and k.min_value is None
    k = cudnn.knob(cudnn.knob_type.STAGES, 4, 2, 2)
    assert (k.max_value, k.min_value, k.stride) == (4, 2, 2)
