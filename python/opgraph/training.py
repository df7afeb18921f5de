"""Training Gated DeltaNet through opgraph: the forward (`gdn`) and the backward (`gdn_bwd`) as
opgraph graphs, each planned and built once per layout class and run at every call's extents
through execute-time shape overrides (docs/dynamic_shapes.md).

    layer = opgraph.training.GatedDeltaNet(use_qk_l2norm=True)
    o, final_state = layer.forward(q, k, v, g, beta, cu_seqlens, initial_state)
    grads = layer.backward(q, k, v, g, beta, cu_seqlens, initial_state, d_o, d_final_state)

    # torch: an autograd function over the same two graphs
    o, final_state = opgraph.training.gdn(q, k, v, g, beta, cu_seqlens, initial_state, layer=layer)

Buffers are numpy arrays (host: the float64 reference engine runs them) or torch tensors (a CUDA
tensor plans for its device; the backward runs the linear_attention family's GPU gdn_bwd, whose
numerics tests pass on the H200). Each call's workspace is the graph's answer
at the call's extents (get_workspace_size with the call's overrides). Layouts are the IR's: q [T, HQ, K], k [T, HK, K], v [T, HV, V], g and beta
[T, HO], cu_seqlens [N + 1], states [N, HO, V, K] (V-major), O [T, HO, V]; HO = max(HQ, HV).
The backward recomputes the forward from the saved inputs (gdn_bwd takes q, k, v, g, beta and the
initial state), so a training step saves only the inputs.

A layout class is what an execute-time override may not change: the dtypes, the head counts and
head dims, the attributes, which optional inputs are bound, and whether T or N is 1. A new T or N
of a known class runs the built plans with overrides; a new class plans and builds once more.
"""
from . import _C
from ._graph import pygraph

_IN = ("q", "k", "v", "g", "beta", "cu_seqlens", "initial_state", "a_log", "dt_bias")
_GRAD_OUT = ("dQ", "dK", "dV", "dG", "dBeta", "d_initial_state", "d_a_log", "d_dt_bias")
_GRAD_NAME = dict(zip(_GRAD_OUT, ("q", "k", "v", "g", "beta", "initial_state", "a_log", "dt_bias")))


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def _shape(x):
    return tuple(int(d) for d in x.shape)


def _empty(like, shape, float32=False):
    """An uninitialised buffer of `shape` beside `like` (its library, device and, unless float32, dtype)."""
    if _is_torch(like):
        import torch
        return torch.empty(shape, dtype=torch.float32 if float32 else like.dtype, device=like.device)
    import numpy as np
    return np.empty(shape, dtype=np.float32 if float32 else like.dtype)


def _zeros(like, shape):
    if _is_torch(like):
        import torch
        return torch.zeros(shape, dtype=torch.float32, device=like.device)
    import numpy as np
    return np.zeros(shape, dtype=np.float32)


def _class_key(kind, attrs, bufs):
    """What an override may not change (module docstring): per bound operand its dtype, rank,
    which extents are 1, and the extents past the first (heads, head dims)."""
    key = [kind, tuple(sorted(attrs.items()))]
    for name in sorted(bufs):
        x = bufs[name]
        s = _shape(x)
        key.append((name, str(x.dtype), len(s), tuple(d == 1 for d in s), s[1:] if name != "cu_seqlens" else ()))
    return tuple(key)


class _Built:
    """One graph of a layout class: its tensors by port name, the shapes it was declared with, and
    the workspace it needs at those shapes."""

    def __init__(self, graph, tensors, declared):
        self.graph, self.tensors, self.declared = graph, tensors, declared
        self._ws = None  # the last workspace, reused while it is big enough and beside the buffers

    def workspace(self, like, nbytes):
        ws = self._ws
        if ws is None or _is_torch(ws) != _is_torch(like) or ws.nbytes < nbytes or \
                (_is_torch(like) and ws.device != like.device):
            ws = self._ws = _workspace(like, nbytes)
        return ws

    def run(self, bufs, handle):
        """Executes with `bufs` ({port name: buffer}, outputs included); every buffer whose shape is not
        the declared one goes as an execute-time override."""
        uids, shapes = [], []
        for name, x in bufs.items():
            s = _shape(x)
            if s != self.declared[name]:
                uids.append(self.tensors[name])
                shapes.append(list(s))
        pack = {self.tensors[n]: x for n, x in bufs.items()}
        like = bufs["q"]
        over = dict(override_uids=uids or None, override_shapes=shapes or None)
        # The workspace this call needs at its extents (a two-pass plan's grows with T and N).
        ws_bytes = max(self.graph.get_workspace_size(pack, **over), 1)
        self.graph.execute(pack, self.workspace(like, ws_bytes), handle, **over)


def _workspace(like, nbytes):
    if _is_torch(like):
        import torch
        return torch.empty(nbytes, dtype=torch.uint8, device=like.device)
    import numpy as np
    return np.empty(nbytes, dtype=np.uint8)


class GatedDeltaNet:
    """gdn forward and backward on opgraph graphs, planned once per layout class (module docstring).

    Attributes are gdn's: scale (default K^-1/2), use_qk_l2norm, gate_domain ("log" or "linear"),
    safe_gate (with a_log / dt_bias), use_beta_sigmoid, allow_neg_eigval. `handle` (optional) is the
    opgraph handle whose device and stream the graphs run on; None plans for the buffers' device.
    """

    def __init__(self, handle=None, **attrs):
        self.handle = handle
        self.attrs = {k: v for k, v in attrs.items() if v is not None}
        self._graphs = {}

    @property
    def graph_count(self):
        """How many graphs were planned and built (one per kind and layout class)."""
        return len(self._graphs)

    def _graph(self, kind, bufs):
        key = _class_key(kind, self.attrs, bufs)
        built = self._graphs.get(key)
        if built is None:
            built = self._build(kind, bufs)
            self._graphs[key] = built
        return built

    def _build(self, kind, bufs):
        like = bufs["q"]
        io = _C.data_type.FLOAT
        g = pygraph(io_data_type=io, intermediate_data_type=_C.data_type.FLOAT,
                    compute_data_type=_C.data_type.FLOAT, handle=self.handle)
        t = {n: g.tensor_like(x, name=n) for n, x in bufs.items() if n in _IN or n in ("dO", "d_final_state")}
        declared = {n: _shape(x) for n, x in bufs.items()}
        ins = {n: t[n] for n in _IN if n in t}
        if kind == "forward":
            o, fs, _ = g.gdn(**ins, output_final_state=True, **self.attrs)  # state_checkpoints stays virtual
            o.set_output(True).set_data_type(_dtype_of(bufs["o"]))
            fs.set_output(True).set_data_type(_C.data_type.FLOAT)
            t["o"], t["final_state"] = o, fs
        else:
            outs = g.gdn_bwd(**ins, dO=t["dO"], d_final_state=t["d_final_state"], **self.attrs)
            for port, out in zip(_GRAD_OUT, outs):
                if out is None:
                    continue
                name = "d_" + _GRAD_NAME[port]
                out.set_output(True).set_data_type(_dtype_of(bufs[name]))
                t[name] = out
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([_C.heur_mode.A, _C.heur_mode.FALLBACK])
        g.build_plans()
        return _Built(g, t, declared)

    def forward(self, q, k, v, g, beta, cu_seqlens, initial_state=None, a_log=None, dt_bias=None):
        """(O [T, HO, V] in v's dtype, final_state [N, HO, V, K] float32)."""
        bufs = _inputs(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias)
        t, n = _shape(q)[0], _shape(cu_seqlens)[0] - 1
        ho, dv, dk = max(_shape(q)[1], _shape(v)[1]), _shape(v)[2], _shape(k)[2]
        bufs["o"] = _empty(v, (t, ho, dv))
        bufs["final_state"] = _empty(v, (n, ho, dv, dk), float32=True)
        self._graph("forward", bufs).run(bufs, self.handle)
        return bufs["o"], bufs["final_state"]

    def backward(self, q, k, v, g, beta, cu_seqlens, initial_state=None, d_o=None, d_final_state=None, a_log=None,
                 dt_bias=None):
        """{name: gradient} for q, k, v, g, beta (and initial_state, a_log, dt_bias where bound), from
        the forward's inputs and dO (and d_final_state; zero when None)."""
        bufs = _inputs(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias)
        n, ho, dv, dk = _shape(cu_seqlens)[0] - 1, max(_shape(q)[1], _shape(v)[1]), _shape(v)[2], _shape(k)[2]
        bufs["dO"] = d_o
        bufs["d_final_state"] = d_final_state if d_final_state is not None else _zeros(v, (n, ho, dv, dk))
        for name in ("q", "k", "v", "g", "beta", "initial_state", "a_log", "dt_bias"):
            if name in bufs:
                bufs["d_" + name] = _empty(bufs[name], _shape(bufs[name]))
        self._graph("backward", bufs).run(bufs, self.handle)
        return {name[2:]: x for name, x in bufs.items() if name.startswith("d_") and name != "d_final_state"}


def _dtype_of(x):
    from ._dtypes import to_data_type
    return to_data_type(x.dtype)


def _inputs(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias):
    bufs = {"q": q, "k": k, "v": v, "g": g, "beta": beta, "cu_seqlens": cu_seqlens}
    for name, x in (("initial_state", initial_state), ("a_log", a_log), ("dt_bias", dt_bias)):
        if x is not None:
            bufs[name] = x
    return bufs


def gdn(q, k, v, g, beta, cu_seqlens, initial_state=None, layer=None, **attrs):
    """Gated DeltaNet on torch tensors as an autograd function over opgraph graphs: returns
    (O, final_state); backward gives q, k, v, g, beta and initial_state their gradients
    (cu_seqlens is not differentiable). `layer` (a GatedDeltaNet) keeps the built graphs across
    calls; without one, a new layer is made from `attrs` (and its graphs are built per call)."""
    import torch

    layer = layer or GatedDeltaNet(**attrs)

    class _Gdn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, g, beta, h0):
            args = [x.contiguous() if x is not None else None for x in (q, k, v, g, beta, h0)]
            o, fs = layer.forward(*args[:5], cu_seqlens, args[5])
            ctx.save_for_backward(*[x for x in args if x is not None])
            ctx.has_h0 = h0 is not None
            return o, fs

        @staticmethod
        def backward(ctx, d_o, d_fs):
            saved = list(ctx.saved_tensors)
            h0 = saved[5] if ctx.has_h0 else None
            grads = layer.backward(*saved[:5], cu_seqlens, h0, d_o.contiguous(),
                                   d_fs.contiguous() if d_fs is not None else None)
            return (grads["q"], grads["k"], grads["v"], grads["g"], grads["beta"],
                    grads.get("initial_state") if ctx.has_h0 else None)

    return _Gdn.apply(q, k, v, g, beta, initial_state)
