"""The op builder methods of opgraph.pygraph, generated from the C++ op records.

ONE generic path: every builder turns its Python arguments into (input port ->
tensor, attribute -> value) and calls the native `_add_node(op, ...)`. What is
generated from the records (opgraph._C.op_specs()): the method of each op, its
ports and attributes. What is written here is the small part cudnn.pygraph's
names do not derive from the records:

* POINTWISE_KWARGS: the argument names of the 54 pointwise methods (cudnn.pygraph's
  `input`, `a, b`, `input0, input1`, `input, comparison`, `loss, input`, ...).
* POINTWISE_SCALARS / KWARG_ALIASES: cudnn keyword -> our port or attribute
  (`negative_slope` -> relu_lower_clip_slope, `norm_forward_phase` -> forward_phase,
  `image`/`weight`/`loss` of the convolutions, ...).
* POSITIONAL: the positional order where cudnn's differs from the record's required ports.
* RETURNS: which outputs a method returns where cudnn's order differs (the SDPA family).

Keyword resolution for structured ops, first match wins: the method's alias table,
the global aliases, an input port's exact or lower-case name, an attribute's name.
A keyword naming both a port and an attribute (sdpa's attn_scale) goes to the
port when given a tensor and to the attribute otherwise. A Python number given
for a port (epsilon=1e-5) becomes a pass-by-value scalar tensor. Returns: one
output -> the tensor; several -> a list in the record's order, None for a
conditional output the node does not produce.
"""
from __future__ import annotations

import enum
import inspect

from . import _C
from ._dtypes import to_data_type

# ---------------------------------------------------------------- pointwise --
_AB = ("a", "b")
_IN01 = ("input0", "input1")
_CMP = ("input", "comparison")
_BWD = ("loss", "input")

POINTWISE_KWARGS = {
    **{n: _AB for n in ("add", "add_square", "div", "logical_and", "logical_or", "mul", "sub")},
    **{n: _IN01 for n in ("max", "min", "mod", "pow")},
    **{n: _CMP for n in ("cmp_eq", "cmp_neq", "cmp_gt", "cmp_ge", "cmp_lt", "cmp_le")},
    "bias": ("input", "bias"),
    "scale": ("input", "scale"),
    "binary_select": ("input0", "input1", "mask"),
}  # unary methods take ("input",); backward methods ("loss", "input")

# Extra scalar keywords of pointwise methods -> the pointwise record's attributes.
POINTWISE_SCALARS = {
    "negative_slope": "relu_lower_clip_slope",
    "lower_clip": "relu_lower_clip",
    "upper_clip": "relu_upper_clip",
    "lower_clip_slope": "relu_lower_clip_slope",
    "swish_beta": "swish_beta",
    "beta": "swish_beta",
    "alpha": "elu_alpha",
    "elu_alpha": "elu_alpha",
    "softplus_beta": "softplus_beta",
    "axis": "axis",
}
_SCALAR_FOR_TRAIT = {
    "uses_relu_clip": ("negative_slope", "lower_clip", "upper_clip"),
    "uses_swish_beta": ("swish_beta",),
    "uses_elu_alpha": ("alpha",),
    "uses_softplus_beta": ("softplus_beta",),
    "uses_axis": ("axis",),
}

# ---------------------------------------------------------- structured ops --
# cudnn keyword -> our port (upper/mixed case as in the record) or attribute.
KWARG_ALIASES = {
    "norm_forward_phase": "forward_phase",
    "in_running_mean": "PREV_RUNNING_MEAN",
    "in_running_var": "PREV_RUNNING_VAR",
    "grad": "DY",
    "left_bound": "diagonal_band_left_bound",  # cudnn's short spelling (sdpa_fp8, the SDPA family)
    "right_bound": "diagonal_band_right_bound",
}
METHOD_ALIASES = {
    "conv_fprop": {"image": "X", "weight": "W", "filter": "W"},
    "conv_dgrad": {"loss": "DY", "filter": "W", "weight": "W"},
    "conv_wgrad": {"image": "X", "loss": "DY"},
    "sdpa": {"paged_attention_k_table": "Page_table_K", "paged_attention_v_table": "Page_table_V"},
    "sdpa_fp8": {"paged_attention_k_table": "Page_table_K", "paged_attention_v_table": "Page_table_V"},
    "sdpa_mxfp8": {"paged_attention_k_table": "Page_table_K", "paged_attention_v_table": "Page_table_V"},
    "sdpa_backward": {"dBias": "dbias", "dSink_token": "dsink_token"},
    "sdpa_fp8_backward": {"dSink_token": "dsink_token"},
    "sdpa_mxfp8_backward": {"dSink_token": "dsink_token"},
}
# cudnn's positional order where it differs from the record's required inputs.
POSITIONAL = {
    "matmul": ("A", "B"),
    "layernorm": ("norm_forward_phase", "input", "scale", "bias", "epsilon"),
    "adalayernorm": ("norm_forward_phase", "input", "scale", "bias", "epsilon"),
    "instancenorm": ("norm_forward_phase", "input", "scale", "bias", "epsilon"),
    "rmsnorm": ("norm_forward_phase", "input", "scale", "bias", "epsilon"),
    "conv_fprop": ("image", "weight"),
    "conv_dgrad": ("loss", "filter"),
    "conv_wgrad": ("image", "loss"),
}
# Output ports returned, in cudnn's order; further produced outputs are appended.
RETURNS = {
    "sdpa": ("O", "Stats"),
    "sdpa_fp8": ("O", "Stats", "Amax_S", "Amax_O"),
    "sdpa_mxfp8": ("O", "Stats", "Amax_O"),
    "sdpa_backward": ("dQ", "dK", "dV"),
    "sdpa_fp8_backward": ("dQ", "dK", "dV", "Amax_dQ", "Amax_dK", "Amax_dV", "Amax_dP"),
    "sdpa_mxfp8_backward": ("dQ", "dK", "dV", "Amax_dQ", "Amax_dK", "Amax_dV"),
}
_COMMON = ("compute_data_type", "name")
# A flag attribute cudnn also accepts as the output tensor itself -> the output port it asks for.
OUTPUT_OF_FLAG = {"rng_dump": "RNG_DUMP", "dbias": "dBias", "score_max": "Max", "score_sum_exp": "Sum_exp",
                  "dsink_token": "DSINK_TOKEN"}
# Positional parameter names of required ports where cudnn's differ from the lower-case port name.
_POSITIONAL_NAME = {"X": "input", "DY": "grad"}


def _attr_value(v):
    return v.name if isinstance(v, enum.Enum) else v


def _port_tensor(graph, op, port, v):
    """A tensor for an input port: tensors pass; numbers become pass-by-value scalars; lists stay lists."""
    if v is None or isinstance(v, _C.tensor):
        return v
    if isinstance(v, (list, tuple)):
        return [_port_tensor(graph, op, port, x) for x in v]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{op}: input '{port}' expects an opgraph.tensor, got {type(v).__name__}")
    dt = _C.data_type.INT64 if isinstance(v, int) and port.lower() in ("seed", "offset") else _C.data_type.FLOAT
    return graph.tensor(dim=[1], stride=[1], data_type=dt, is_pass_by_value=True, value=v)


def _sdpa_dropout(kw):
    """cudnn's dropout=(probability, seed, offset) or (mask, scale[, scale_inv]) -> ports/attrs."""
    d = kw.pop("dropout", None)
    if d is None:
        return
    if not isinstance(d, (tuple, list)) or len(d) not in (2, 3):
        raise TypeError("dropout expects (probability, seed, offset) or (mask, scale[, scale_inv])")
    if isinstance(d[0], (int, float)):
        kw["dropout_probability"], kw["Seed"], kw["Offset"] = d
    else:
        kw["Dropout_mask"], kw["Dropout_scale"] = d[0], d[1]
        if len(d) == 3:
            kw["Dropout_scale_inv"] = d[2]


class _Structured:
    """Keyword tables of one structured / captured / engine-only op, built from its record."""

    def __init__(self, spec):
        self.op = spec["name"]
        self.spec = spec
        self.ports = {p["name"]: p for p in spec["inputs"]}
        self.attrs = {a["name"]: a for a in spec["attrs"]}
        self.outputs = [o["name"] for o in spec["outputs"]]
        keys = {}
        for p in spec["inputs"]:
            keys.setdefault(p["name"].lower(), []).append(("port", p["name"]))
            keys.setdefault(p["name"], []).append(("port", p["name"]))
        for a in spec["attrs"]:
            keys.setdefault(a["name"], []).append(("attr", a["name"]))
        for table in (KWARG_ALIASES, METHOD_ALIASES.get(self.op, {})):
            for kw, target in table.items():
                kind = "port" if target in self.ports else "attr" if target in self.attrs else None
                if kind:
                    keys[kw] = [(kind, target)]
        for x in ("X", "x"):  # cudnn calls the data input `input` (grad, input, ... in backward ops)
            if x in self.ports and "input" not in keys:
                keys["input"] = [("port", x)]
        self.keys = keys
        required = [_POSITIONAL_NAME.get(p["name"], p["name"].lower()) for p in spec["inputs"] if not p["optional"]]
        if "DY" in self.ports:
            keys.setdefault("grad", [("port", "DY")])
        self.positional = [k for k in POSITIONAL.get(self.op, required) if k in keys]

    def call(self, graph, args, kw):
        if len(args) > len(self.positional):
            raise TypeError(f"{self.op}() takes {len(self.positional)} positional arguments, got {len(args)}")
        for k, v in zip(self.positional, args):
            if k in kw:
                raise TypeError(f"{self.op}() got multiple values for argument '{k}'")
            kw[k] = v
        compute = to_data_type(kw.pop("compute_data_type", None))
        name = kw.pop("name", "") or ""
        if self.op.startswith("sdpa"):
            if kw.get("score_mod") is not None or kw.get("score_mod_bprop") is not None:
                if self.op not in ("sdpa", "sdpa_backward"):
                    raise NotImplementedError(
                        f"{self.op}(score_mod=...): flexible attention is written for sdpa and sdpa_backward only")
                from . import _porting  # flexible attention: the composite with the user's score subgraph

                make = _porting.flexible_sdpa if self.op == "sdpa" else _porting.flexible_sdpa_backward
                return make(graph, self.op, kw, compute, name)
            kw.pop("score_mod", None)
            kw.pop("score_mod_bprop", None)
            _sdpa_dropout(kw)
            if "is_inference" in kw and "generate_stats" in self.attrs:  # cudnn's older spelling
                inference = kw.pop("is_inference")
                if inference is not None:
                    kw.setdefault("generate_stats", not inference)
        inputs, attrs, given_outputs = {}, {}, {}
        for k, v in kw.items():
            targets = self.keys.get(k)
            if targets is None:
                raise TypeError(f"{self.op}() got an unexpected keyword argument '{k}'")
            kind, target = targets[0]
            if len(targets) > 1:  # a port and an attribute share the keyword: tensors go to the port
                kind, target = next(((kd, t) for kd, t in targets if (kd == "port") == isinstance(v, _C.tensor)),
                                    targets[0])
            if kind == "port":
                inputs[target] = _port_tensor(graph, self.op, target, v)
            else:
                spec = self.attrs[target]
                if spec["type"].upper() == "BOOL" and isinstance(v, _C.tensor):
                    # cudnn passes the output tensor itself (rng_dump=T, dbias=T, score_max=T): ask for
                    # the output, then bind T to it
                    given_outputs[target] = v
                    v = True
                attrs[target] = _attr_value(v)
        outs = graph._add_node(self.op, inputs, attrs, compute, name)
        if given_outputs:
            by_port = dict(zip(self.outputs, outs))
            for attr, t in given_outputs.items():
                port = OUTPUT_OF_FLAG.get(attr)
                if port is None or port not in by_port:
                    raise TypeError(f"{self.op}(): '{attr}' takes a flag here, not a tensor")
                graph._bind_output(t, by_port[port], f"{self.op}({attr}=tensor '{t.get_name()}')")
            # the caller holds those outputs already (cudnn returns only the op's usual list)
            bound = {OUTPUT_OF_FLAG[a] for a in given_outputs}
            outs = [None if n in bound else t for n, t in zip(self.outputs, outs)]
        return self._returns(outs)

    def _returns(self, outs):
        if len(outs) == 1:
            return outs[0]
        order = RETURNS.get(self.op)
        if order is None:
            return outs
        by_name = dict(zip(self.outputs, outs))
        picked = [by_name.get(n) for n in order]
        picked += [t for n, t in zip(self.outputs, outs) if n not in order and t is not None]
        return picked

    def signature(self):
        params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)]
        params += [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
                   for k in self.positional]
        seen = set(self.positional)
        for k in list(self.keys) + list(_COMMON):
            if k != k.lower() and k.lower() in self.keys:
                continue  # the exact-case spelling of a port is accepted but not listed
            if k not in seen and k.isidentifier():
                seen.add(k)
                params.append(inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=None))
        return inspect.Signature(params)


def _make_structured(spec):
    table = _Structured(spec)

    def method(self, *args, **kwargs):
        return table.call(self, args, kwargs)

    method.__name__ = table.op
    method.__qualname__ = "pygraph." + table.op
    method.__signature__ = table.signature()
    method.__doc__ = (f"{spec['summary']}\n\nInputs: {', '.join(table.ports)}. "
                      f"Attributes: {', '.join(table.attrs) or 'none'}. Outputs: {', '.join(table.outputs)}.")
    return method


def _make_pointwise(row):
    builder, mode = row["builder"], row["mode"]
    if builder in POINTWISE_KWARGS:
        names = POINTWISE_KWARGS[builder]
    elif row["is_backward"]:
        names = _BWD
    else:
        names = ("input", "input1", "input2")[: row["arity"]]
    scalars = [s for trait, ss in _SCALAR_FOR_TRAIT.items() if row[trait] for s in ss]
    if builder in ("leaky_relu", "leaky_relu_backward"):
        scalars = ["negative_slope"] + [s for s in scalars if s != "negative_slope"]
    ports = ("IN_0", "IN_1", "IN_2")

    def method(self, *args, **kwargs):
        if len(args) > len(names) + len(scalars):
            raise TypeError(f"{builder}() takes at most {len(names) + len(scalars)} positional arguments")
        for k, v in zip(list(names) + scalars, args):
            if k in kwargs:
                raise TypeError(f"{builder}() got multiple values for argument '{k}'")
            kwargs[k] = v
        compute = to_data_type(kwargs.pop("compute_data_type", None))
        name = kwargs.pop("name", "") or ""
        inputs = {}
        for i, k in enumerate(names):
            if k not in kwargs:
                raise TypeError(f"{builder}() missing required argument '{k}'")
            inputs[ports[i]] = _port_tensor(self, builder, k, kwargs.pop(k))
        attrs = {"mode": mode}
        for k, v in kwargs.items():
            attr = POINTWISE_SCALARS.get(k)
            if attr is None:
                raise TypeError(f"{builder}() got an unexpected keyword argument '{k}'")
            if v is not None:
                attrs[attr] = v
        if builder.startswith("leaky_relu") and "relu_lower_clip_slope" not in attrs:
            raise TypeError(f"{builder}() missing required argument 'negative_slope'")
        return self._add_node("pointwise", inputs, attrs, compute, name)[0]

    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)]
    params += [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in names]
    params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=None) for k in scalars + list(_COMMON)]
    method.__name__ = builder
    method.__qualname__ = "pygraph." + builder
    method.__signature__ = inspect.Signature(params)
    method.__doc__ = f"Pointwise {mode} ({', '.join(names)}) -> output tensor."
    return method


def install(cls):
    """Adds every builder method to `cls` (pygraph). Returns the names added."""
    added = []
    for row in _C.pointwise_builders():
        setattr(cls, row["builder"], _make_pointwise(row))
        added.append(row["builder"])
    for spec in _C.op_specs():
        if spec["name"] == "pointwise":
            continue
        method = _make_structured(spec)
        setattr(cls, "_op_" + spec["name"], method)  # the generic path, for hand-written wrappers
        if spec["name"] not in cls.__dict__:
            setattr(cls, spec["name"], method)
        added.append(spec["name"])
    return added
