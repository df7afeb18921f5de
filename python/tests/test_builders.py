"""The builder surface: cudnn.pygraph's 54 pointwise names and their keyword names, the
structured ops generated from the C++ records, keyword resolution and its errors."""
import inspect

import numpy as np
import pytest

import opgraph

# cudnn.pygraph's pointwise method names and keyword names (research/cudnn_frontend.md §1.3).
UNARY = ["abs", "ceil", "cos", "elu", "erf", "exp", "floor", "gelu", "gelu_approx_tanh", "gen_index", "identity",
         "leaky_relu", "log", "logical_not", "neg", "reciprocal", "relu", "rsqrt", "sigmoid", "sin", "softplus",
         "sqrt", "swish", "tan", "tanh"]
AB = ["add", "add_square", "div", "logical_and", "logical_or", "mul", "sub"]
IN01 = ["max", "min", "mod", "pow"]
CMP = ["cmp_eq", "cmp_ge", "cmp_gt", "cmp_le", "cmp_lt", "cmp_neq"]
BWD = ["elu_backward", "gelu_approx_tanh_backward", "gelu_backward", "leaky_relu_backward", "relu_backward",
       "sigmoid_backward", "softplus_backward", "swish_backward", "tanh_backward"]
OTHER = {"bias": ("input", "bias"), "scale": ("input", "scale"), "binary_select": ("input0", "input1", "mask")}
EXPECTED = {**{n: ("input",) for n in UNARY}, **{n: ("a", "b") for n in AB}, **{n: ("input0", "input1") for n in IN01},
            **{n: ("input", "comparison") for n in CMP}, **{n: ("loss", "input") for n in BWD}, **OTHER}


def test_fifty_four_pointwise_names():
    assert len(EXPECTED) == 54
    table = {row["builder"] for row in opgraph.pointwise_builders()}
    assert table == set(EXPECTED)


@pytest.mark.parametrize("method", sorted(EXPECTED))
def test_pointwise_keywords_and_node(method):
    names = EXPECTED[method]
    params = [p for p in inspect.signature(getattr(opgraph.pygraph, method)).parameters if p != "self"]
    assert tuple(params[: len(names)]) == names
    g = opgraph.pygraph(io_data_type=np.float32, compute_data_type=np.float32)
    dtype = np.bool_ if method.startswith("logical") else np.float32
    kwargs = {}
    for n in names:
        kwargs[n] = g.tensor(dim=[2, 3], data_type=np.bool_ if n == "mask" else dtype, name=n)
    if method == "gen_index":
        kwargs["axis"] = 1
    if method.startswith("leaky_relu"):
        kwargs["negative_slope"] = 0.25
    out = getattr(g, method)(**kwargs, name="n0")
    out.set_output(True)
    g.validate()
    node = g.nodes[-1]
    assert node.name == "n0" and node.op == "pointwise"
    for i, n in enumerate(names):
        assert node.inputs[f"IN_{i}"] is kwargs[n]
    assert out.dims == [2, 3]
    if method.startswith("leaky_relu"):
        assert node.attributes["relu_lower_clip_slope"] == 0.25


def test_pointwise_scalar_keywords():
    g = opgraph.pygraph(io_data_type=np.float32, compute_data_type=np.float32)
    x = g.tensor(dim=[4], data_type=np.float32)
    g.relu(input=x, lower_clip=-1.0, upper_clip=6.0)
    g.swish(input=x, swish_beta=1.5)
    g.gen_index(input=x, axis=0)
    relu, swish, gi = g.nodes
    assert relu.attributes == {"mode": "RELU_FWD", "relu_lower_clip": -1.0, "relu_upper_clip": 6.0}
    assert swish.attributes["swish_beta"] == 1.5
    assert gi.attributes["axis"] == 0


def test_unknown_keyword_and_missing_argument():
    g = opgraph.pygraph()
    x = g.tensor(dim=[4], data_type=np.float32)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        g.relu(input=x, bogus=1)
    with pytest.raises(TypeError, match="missing required argument 'b'"):
        g.add(a=x)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        g.matmul(A=x, B=x, bogus=2)


def test_every_record_has_a_method():
    for spec in opgraph.op_specs():
        if spec["name"] != "pointwise":
            assert callable(getattr(opgraph.pygraph, spec["name"])), spec["name"]


def test_matmul_positional_and_kwargs_match():
    g = opgraph.pygraph(io_data_type=np.float32, compute_data_type=np.float32)
    a = g.tensor(dim=[3, 4], data_type=np.float32)
    b = g.tensor(dim=[4, 2], data_type=np.float32)
    c1 = g.matmul(a, b)
    c2 = g.matmul(A=a, B=b, padding=0.0)
    g.validate()
    assert c1.dims == c2.dims == [3, 2]
    assert g.nodes[1].attributes == {"padding": 0.0}


def test_structured_ops_with_enums_lists_and_slices():
    g = opgraph.pygraph(io_data_type=np.float32, compute_data_type=np.float32)
    x = g.tensor(dim=[2, 6, 8], data_type=np.float32, name="x")
    r = g.reduction(input=x, mode=opgraph.reduction_mode.MAX)
    r.set_dim([2, 6, 1])
    t = g.transpose(input=x, permutation=[2, 0, 1])
    s = g.slice(x, [slice(None), slice(1, 5, 2), slice(0, 8)])
    cat = g.concatenate(input=[x, x], axis=1)
    g.validate()
    assert r.dims == [2, 6, 1]
    assert g.nodes[0].attributes["mode"] == "MAX"
    assert t.dims == [8, 2, 6]
    assert s.dims == [2, 2, 8]
    assert g.nodes[2].attributes["slices"] == [0, 2, 1, 5, 0, 8]
    assert g.nodes[2].attributes["strides"] == [1, 2, 1]
    assert cat.dims == [2, 12, 8]


def test_attribute_type_errors_name_the_attribute():
    g = opgraph.pygraph()
    x = g.tensor(dim=[2, 6], data_type=np.float32)
    with pytest.raises(TypeError, match="permutation"):
        g.transpose(input=x, permutation="not a list")


def norm_graph():
    g = opgraph.pygraph(io_data_type=np.float32, intermediate_data_type=np.float32, compute_data_type=np.float32)
    x = g.tensor(dim=[4, 16, 1, 1], data_type=np.float32, name="x")
    scale = g.tensor(dim=[1, 16, 1, 1], data_type=np.float32, name="scale")
    bias = g.tensor(dim=[1, 16, 1, 1], data_type=np.float32, name="bias")
    return g, x, scale, bias


def test_rmsnorm_phase_decides_conditional_output():
    g, x, scale, _ = norm_graph()
    y, inv_var = g.rmsnorm(opgraph.norm_forward_phase.INFERENCE, x, scale, epsilon=1e-5)
    assert inv_var is None
    eps = g.nodes[-1].inputs["EPSILON"]
    assert eps.is_pass_by_value and abs(eps.get_pass_by_value() - 1e-5) < 1e-12
    y2, inv_var2 = g.rmsnorm(norm_forward_phase=opgraph.norm_forward_phase.TRAINING, input=x, scale=scale,
                             epsilon=g.tensor_scalar(1e-6))
    g.validate()
    assert y.dims == y2.dims == [4, 16, 1, 1]
    assert inv_var2.dims == [4, 1, 1, 1]
    assert g.nodes[-1].attributes["forward_phase"] == "TRAINING"


def test_norm_backward_keywords_and_optional_dbias():
    g, x, scale, _ = norm_graph()
    dy = g.tensor(dim=[4, 16, 1, 1], data_type=np.float32, name="dy")
    inv_var = g.tensor(dim=[4, 1, 1, 1], data_type=np.float32, name="inv_var")
    dx, dscale, dbias = g.rmsnorm_backward(grad=dy, input=x, scale=scale, inv_variance=inv_var, has_dbias=False)
    assert dbias is None
    dx2, _, dbias2 = g.rmsnorm_backward(dy, x, scale, inv_var)
    g.validate()
    assert dbias2 is not None and dx.dims == dx2.dims == [4, 16, 1, 1] and dscale.dims == [1, 16, 1, 1]
    node = g.nodes[0]
    assert node.inputs["DY"] is dy and node.inputs["X"] is x and node.inputs["INV_VARIANCE"] is inv_var


def test_layernorm_and_batchnorm_outputs():
    g, x, scale, bias = norm_graph()
    y, mean, inv_var = g.layernorm(norm_forward_phase=opgraph.norm_forward_phase.TRAINING, input=x,
                                   scale=scale, bias=bias, epsilon=1e-5)
    rm = g.tensor(dim=[1, 16, 1, 1], data_type=np.float32, name="rm")
    rv = g.tensor(dim=[1, 16, 1, 1], data_type=np.float32, name="rv")
    outs = g.batchnorm(input=x, scale=scale, bias=bias, in_running_mean=rm, in_running_var=rv,
                       epsilon=1e-5, momentum=0.1)
    outs_plain = g.batchnorm(input=x, scale=scale, bias=bias, epsilon=1e-5)
    g.validate()
    assert mean.dims == [4, 1, 1, 1] and inv_var.dims == [4, 1, 1, 1]
    assert len(outs) == 5 and all(t is not None for t in outs)
    assert outs[1].dims == [1, 16, 1, 1]
    assert outs_plain[3] is None and outs_plain[4] is None  # no running stats in, none out


def test_conv_fprop_cudnn_keywords():
    g = opgraph.pygraph(io_data_type=np.float32, compute_data_type=np.float32)
    x = g.tensor(dim=[2, 3, 9, 9], data_type=np.float32)
    w = g.tensor(dim=[4, 3, 3, 3], data_type=np.float32)
    y = g.conv_fprop(image=x, weight=w, padding=[1, 1], stride=[2, 2], dilation=[1, 1])
    g.validate()
    assert y.dims == [2, 4, 5, 5]
    node = g.nodes[0]
    assert node.inputs["X"] is x and node.inputs["W"] is w and node.attributes["stride"] == [2, 2]


def _conv2d_int(x, w, pad):
    """Integer cross-correlation in int64 (numpy): x [N, C, H, W], w [K, C, R, S], stride 1."""
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad), np.int64)
    xp[:, :, pad:pad + h, pad:pad + wd] = x
    ho, wo = h + 2 * pad - r + 1, wd + 2 * pad - s + 1
    y = np.zeros((n, k, ho, wo), np.int64)
    for i in range(r):
        for j in range(s):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + ho, j:j + wo], w[:, :, i, j].astype(np.int64))
    return y


def test_conv_fprop_int8_accumulates_exactly_in_int32():
    # cudnn-frontend's int8 convolution graph (test_conv_bias.py::test_conv_int8's shape):
    # INT8 image and filter, INT32 intermediate and compute, identity to an INT32 output.
    rng = np.random.default_rng(11)
    x = rng.integers(-127, 128, size=(2, 16, 6, 5), dtype=np.int8)
    w = rng.integers(-127, 128, size=(4, 16, 3, 3), dtype=np.int8)
    g = opgraph.pygraph(io_data_type=opgraph.data_type.INT8, intermediate_data_type=opgraph.data_type.INT32,
                        compute_data_type=opgraph.data_type.INT32)
    X = g.tensor_like(x)
    W = g.tensor_like(w)
    conv = g.conv_fprop(image=X, weight=W, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
    Y = g.identity(input=conv)
    Y.set_output(True).set_data_type(opgraph.data_type.INT32)
    g.build([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    y = np.full(Y.dims, -7, np.int32)
    g.execute({X: x, W: w, Y: y}, None)
    want = _conv2d_int(x, w, 1)
    assert np.abs(want).max() > 2 ** 16  # sums far past int8 and int16
    np.testing.assert_array_equal(y, want.astype(np.int32))


def test_conv_fprop_mixed_integer_and_float_operands_are_refused():
    g = opgraph.pygraph(io_data_type=np.float32, compute_data_type=np.float32)
    x = g.tensor(dim=[1, 4, 5, 5], data_type=opgraph.data_type.INT8, name="x8")
    w = g.tensor(dim=[2, 4, 3, 3], data_type=np.float32, name="wf")
    g.conv_fprop(image=x, weight=w, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
    with pytest.raises(opgraph.GraphNotSupportedError, match=r"(?s)conv_operand_types.*got X INT8 and W FLOAT"):
        g.validate()
