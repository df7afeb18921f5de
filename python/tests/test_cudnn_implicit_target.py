"""A graph made with no handle and no architecture from another graph's tensors (tensor_like) plans
where that graph does: cudnn-frontend's test_layernorm makes its backward graph so, from the
forward graph's tensors, and executes it with device buffers (cudnn.pygraph's own handle is on the
current device, where the forward graph's handle is). Without a GPU the forward graph is planned
for an sm_90 architecture; a graph made only from its own declarations keeps the host target."""
import numpy as np

import opgraph

F32 = opgraph.data_type.FLOAT


def layernorm_forward(**target):
    g = opgraph.pygraph(intermediate_data_type=F32, compute_data_type=F32, **target)
    x = g.tensor(name="X", dim=[4, 1024, 1, 1], stride=[1024, 1, 1024, 1024], data_type=F32)
    scale = g.tensor(name="scale", dim=[1, 1024, 1, 1], stride=[1024, 1, 1024, 1024], data_type=F32)
    bias = g.tensor(name="bias", dim=[1, 1024, 1, 1], stride=[1024, 1, 1024, 1024], data_type=F32)
    eps = g.tensor(name="epsilon", dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], is_pass_by_value=True, data_type=F32)
    y, mean, inv_var = g.layernorm(name="LN", norm_forward_phase=opgraph.norm_forward_phase.TRAINING, input=x,
                                   scale=scale, bias=bias, epsilon=eps)
    for t in (y, mean, inv_var):
        t.set_output(True).set_data_type(F32)
    g.validate()
    return g, (x, scale, mean, inv_var)


def layernorm_backward_graph(fwd_tensors):
    """test_layernorm's backward graph: no handle, tensor_like of the forward graph's tensors."""
    x, scale, mean, inv_var = fwd_tensors
    g = opgraph.pygraph(intermediate_data_type=F32, compute_data_type=F32)
    dy = g.tensor(name="DY", dim=x.get_dim(), stride=x.get_stride(), data_type=F32)
    dx, dscale, dbias = g.layernorm_backward(name="DLN", grad=dy, input=g.tensor_like(x, name="X"),
                                             scale=g.tensor_like(scale, name="scale"),
                                             mean=g.tensor_like(mean, name="mean"),
                                             inv_variance=g.tensor_like(inv_var, name="inv_var"))
    for t in (dx, dscale, dbias):
        t.set_output(True).set_data_type(F32)
    g.validate()
    g.build_operation_graph()
    return g


def test_a_graph_made_from_a_device_graphs_tensors_plans_for_that_device():
    fwd, tensors = layernorm_forward(sm_version=90, sm_count=132)
    assert fwd._has_device_target
    g = layernorm_backward_graph(tensors)
    assert g._has_device_target, "planned for the host: device buffers would be refused at execute"
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    assert g._has_device_target


def test_a_graph_made_from_a_host_graphs_tensors_plans_for_the_host():
    _, tensors = layernorm_forward()
    g = layernorm_backward_graph(tensors)
    assert not g._has_device_target
    g.create_execution_plans([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    assert g.get_plan_name_at_index(0) == "reference[]"


def test_a_graph_of_its_own_declarations_keeps_the_host_target():
    _fwd, _ = layernorm_forward(sm_version=90, sm_count=132)  # another graph on a device, alive
    g = opgraph.pygraph()
    x = g.tensor_like(np.zeros((4, 32), np.float32), name="x")
    g.relu(input=g.tensor(name="y", dim=[4, 32], data_type=F32))
    g.relu(input=x).set_output(True)
    assert not g._has_device_target
