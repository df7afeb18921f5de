"""A graph made with no handle and no architecture plans, as cudnn.pygraph does, for the device its
own handle would drive: the current CUDA device where torch has one (cudnn-frontend's
test_layernorm declares its backward graph so, from the forward graph's tensors, and executes it
with device buffers). Without a GPU the decision is reproduced with the current device stubbed to
an sm_90 device-properties record; a host buffer given to tensor_like keeps the host target."""
import json

import numpy as np
import pytest

import opgraph
import opgraph._graph as graph_mod

H200 = {"major": 9, "minor": 0, "sm_count": 132, "l2_bytes": 62914560, "smem_per_block_optin": 232448,
        "name": "NVIDIA H200", "ordinal": 0}


@pytest.fixture
def cuda_in_torch(monkeypatch):
    """torch has CUDA device 0 (an H200), as on the conformance machine; records what was targeted."""
    targeted = []

    def target_device(self, ordinal):
        targeted.append(ordinal)
        self._set_device_properties(json.dumps(H200))
        return True

    monkeypatch.setattr(graph_mod, "_implicit_cuda_device", lambda: 0)
    monkeypatch.setattr(opgraph.pygraph, "_target_device", target_device)
    return targeted


def layernorm_forward():
    g = opgraph.pygraph(intermediate_data_type=opgraph.data_type.FLOAT, compute_data_type=opgraph.data_type.FLOAT,
                        sm_version=90, sm_count=132)
    x = g.tensor(name="X", dim=[4, 1024, 1, 1], stride=[1024, 1, 1024, 1024], data_type=opgraph.data_type.FLOAT)
    scale = g.tensor(name="scale", dim=[1, 1024, 1, 1], stride=[1024, 1, 1024, 1024],
                     data_type=opgraph.data_type.FLOAT)
    bias = g.tensor(name="bias", dim=[1, 1024, 1, 1], stride=[1024, 1, 1024, 1024],
                    data_type=opgraph.data_type.FLOAT)
    eps = g.tensor(name="epsilon", dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], is_pass_by_value=True,
                   data_type=opgraph.data_type.FLOAT)
    y, mean, inv_var = g.layernorm(name="LN", norm_forward_phase=opgraph.norm_forward_phase.TRAINING, input=x,
                                   scale=scale, bias=bias, epsilon=eps)
    for t in (y, mean, inv_var):
        t.set_output(True).set_data_type(opgraph.data_type.FLOAT)
    g.validate()
    return x, scale, mean, inv_var


def layernorm_backward_graph():
    """test_layernorm's backward graph: no handle, tensor_like of the forward graph's tensors."""
    x, scale, mean, inv_var = layernorm_forward()
    g = opgraph.pygraph(intermediate_data_type=opgraph.data_type.FLOAT, compute_data_type=opgraph.data_type.FLOAT)
    dy = g.tensor(name="DY", dim=x.get_dim(), stride=x.get_stride(), data_type=opgraph.data_type.FLOAT)
    dx, dscale, dbias = g.layernorm_backward(name="DLN", grad=dy, input=g.tensor_like(x, name="X"),
                                             scale=g.tensor_like(scale, name="scale"),
                                             mean=g.tensor_like(mean, name="mean"),
                                             inv_variance=g.tensor_like(inv_var, name="inv_var"))
    for t in (dx, dscale, dbias):
        t.set_output(True).set_data_type(opgraph.data_type.FLOAT)
    g.validate()
    g.build_operation_graph()
    return g


def test_a_graph_without_handle_plans_for_the_current_cuda_device(cuda_in_torch):
    g = layernorm_backward_graph()
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    assert g._has_device_target, "planned for the host: device buffers would be refused at execute"
    assert cuda_in_torch == [0]


def test_planning_settles_the_target_without_build_operation_graph(cuda_in_torch):
    g = opgraph.pygraph()
    x = g.tensor(name="x", dim=[4, 32], data_type=opgraph.data_type.FLOAT)
    g.relu(input=x).set_output(True)
    assert not g._has_device_target  # not settled before planning
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    assert g._has_device_target


def test_a_host_buffer_given_to_tensor_like_keeps_the_host_target(cuda_in_torch):
    g = opgraph.pygraph()
    x = g.tensor_like(np.zeros((4, 32), np.float32), name="x")
    g.relu(input=x).set_output(True)
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    assert not g._has_device_target
    assert cuda_in_torch == []


def test_without_cuda_in_torch_the_graph_plans_for_the_host(monkeypatch):
    monkeypatch.setattr(graph_mod, "_implicit_cuda_device", lambda: None)
    g = layernorm_backward_graph()
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    assert not g._has_device_target
    assert g.get_plan_name_at_index(0) == "reference[]"
