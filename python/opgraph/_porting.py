"""The module-level names of cudnn-frontend's Python package that opgraph offers by their cudnn names.

backend_version / backend_version_string (the cuDNN the process loads), get_last_error_string,
create_kernel_cache, create_device_properties, the decorator-style API (graph, jit, graph_cache)
and the names of ops opgraph does not have yet, which raise NotImplementedError when called
(docs/porting.md lists them).
"""
from __future__ import annotations

import contextlib
import functools
import json
import math

from . import _C

# ------------------------------------------------------------------ backend --


def backend_version() -> int:
    """The cuDNN library this process loads, in cuDNN's own encoding (91900 for 9.19.0); 0 when
    none can be loaded. Asking loads it (the runtime's loader: OPGRAPH_LIBCUDNN first)."""
    return int(_C._backend_version())


def backend_version_string() -> str:
    """backend_version() as "major.minor.patch" ("0.0.0" without a cuDNN)."""
    v = backend_version()
    if v >= 10000:  # cuDNN 9+: major*10000 + minor*100 + patch
        return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    return f"{v // 1000}.{v // 100 % 10}.{v % 100}"  # cuDNN 8: major*1000 + minor*100 + patch


get_last_error_string = _C.get_last_error_string

# ---------------------------------------------------------- device properties --


class device_properties:
    """A planning target as cudnn's DeviceProperties object: serialize() gives its JSON, which
    create_device_properties(json) and pygraph(device_property=...) read back."""

    def __init__(self, text: str):
        self._json = _C._canonical_device_properties(text)

    def serialize(self) -> str:
        return self._json

    def deserialize(self, text) -> "device_properties":
        self._json = _C._canonical_device_properties(_text(text))
        return self

    @property
    def sm_version(self) -> int:
        d = json.loads(self._json)
        return d["major"] * 10 + d["minor"]

    def __repr__(self):
        return f"<opgraph.device_properties {self._json}>"


def create_device_properties(source=0) -> device_properties:
    """The properties of CUDA device `source` (an int ordinal), or read from their JSON (a str or
    bytes from serialize(), or a dict); "sm_90" names a device-less target by architecture."""
    if isinstance(source, bool):
        raise TypeError("create_device_properties: expects a device ordinal, a JSON string or a dict")
    if isinstance(source, int):
        return device_properties(_C._device_properties_of(source))
    if isinstance(source, dict):
        return device_properties(json.dumps(source))
    text = _text(source)
    if text.startswith("sm_"):
        return device_properties(_C._device_properties_for_arch(text))
    return device_properties(text)


def _text(x) -> str:
    if isinstance(x, (bytes, bytearray, memoryview)):
        return bytes(x).decode("utf-8")
    if not isinstance(x, str):
        raise TypeError(f"expected JSON text (str or bytes), got {type(x).__name__}")
    return x


# -------------------------------------------------------------- kernel cache --

_KERNEL_CACHE_FORMAT = "opgraph.kernel_cache"


class kernel_cache:
    """cudnn's KernelCache object. opgraph compiles every kernel into its on-disk kernel cache
    (OPGRAPH_CACHE_DIR; `opgraph cache`) whichever graph asks, so this object does not hold
    kernels: it records the graphs built with it (pygraph(kernel_cache=...)), by key, and
    serialize() / deserialize() carry that record. A graph built again finds its kernels in the
    disk cache. deserialize() into a cache that already holds a record is refused, as in cudnn."""

    def __init__(self):
        self._keys = []

    def _record(self, graph):
        key = graph.key()
        if key not in self._keys:
            self._keys.append(key)

    @property
    def graph_keys(self):
        return list(self._keys)

    def serialize(self) -> str:
        return json.dumps({"format": _KERNEL_CACHE_FORMAT, "version": 1, "graph_keys": self._keys})

    def deserialize(self, data) -> "kernel_cache":
        if self._keys:
            raise RuntimeError("kernel_cache.deserialize: this cache already holds graphs; deserialize into a "
                               "new cache (create_kernel_cache())")
        try:
            d = json.loads(_text(data))
        except ValueError as e:
            raise _C.GraphNotSupportedError(f"kernel_cache.deserialize: not JSON ({e})") from None
        if not isinstance(d, dict) or d.get("format") != _KERNEL_CACHE_FORMAT or d.get("version") != 1 \
                or not isinstance(d.get("graph_keys"), list) \
                or not all(isinstance(k, int) and not isinstance(k, bool) for k in d["graph_keys"]):
            raise _C.GraphNotSupportedError(
                "kernel_cache.deserialize: not a serialized opgraph kernel cache "
                f"(expected {{'format': '{_KERNEL_CACHE_FORMAT}', 'version': 1, 'graph_keys': [int, ...]}})")
        self._keys = list(d["graph_keys"])
        return self

    def __repr__(self):
        return f"<opgraph.kernel_cache {len(self._keys)} graphs>"


def create_kernel_cache() -> kernel_cache:
    """A new, empty kernel cache object (see kernel_cache)."""
    return kernel_cache()


# ------------------------------------------------------- decorator-style API --


def graph_cache(key_fn, maxsize=256):
    """Memoises a graph-making function on key_fn(*args, **kwargs); at most `maxsize` entries, the
    oldest entry leaving first."""
    if maxsize < 1:
        raise ValueError(f"graph_cache: maxsize must be at least 1, got {maxsize}")

    def decorate(make):
        entries = {}

        @functools.wraps(make)
        def cached(*args, **kwargs):
            key = key_fn(*args, **kwargs)
            if key not in entries:
                if len(entries) >= maxsize:
                    del entries[next(iter(entries))]
                entries[key] = make(*args, **kwargs)
            return entries[key]

        cached.cache = entries
        return cached

    return decorate


def jit(heur_modes=None, **options):
    """Decorates a function returning (graph, [tensors]): the call builds the graph (plans for
    `heur_modes`, default heur_mode.A; a graph that already has plans is left as it is) and
    returns (graph, [uid of each tensor])."""
    modes = [_C.heur_mode.A] if heur_modes is None else heur_modes
    if not isinstance(modes, (list, tuple)):
        modes = [modes]
    modes = list(modes)
    if options:
        raise TypeError(f"jit: unexpected options {sorted(options)}")

    def decorate(make):
        @functools.wraps(make)
        def built(*args, **kwargs):
            g, tensors = make(*args, **kwargs)
            if not g.is_planned or g.get_execution_plan_count() <= 0:
                g.build(modes)
            return g, [t.get_uid() for t in tensors]

        return built

    return decorate


@contextlib.contextmanager
def graph(handle, name="cudnn_graph", io_data_type=None, intermediate_data_type=None, compute_data_type=None):
    """`with graph(handle) as (g, tensors):` a new pygraph on `handle` (io HALF, intermediate and
    compute FLOAT unless given) and an empty list for the caller's tensors."""
    from ._graph import pygraph

    g = pygraph(handle=handle, name=name,
                io_data_type=_C.data_type.HALF if io_data_type is None else io_data_type,
                intermediate_data_type=_C.data_type.FLOAT if intermediate_data_type is None
                else intermediate_data_type,
                compute_data_type=_C.data_type.FLOAT if compute_data_type is None else compute_data_type)
    yield g, []


# ---------------------------------------------------- ops opgraph lacks yet --

# cudnn-frontend 1.32's functions for op families opgraph has no op for yet.
MISSING_OPS = {
    "causal conv1d": ("causal_conv1d_forward", "causal_conv1d_backward", "causal_conv1d_nwh_forward",
                      "causal_conv1d_nwh_backward", "b2b_causal_conv1d_forward", "b2b_causal_conv1d_backward",
                      "fft_causal_conv1d_forward", "fft_causal_conv1d_backward",
                      "long_fft_causal_conv1d_get_buffer_sizes", "long_fft_causal_conv1d_forward",
                      "long_fft_causal_conv1d_backward"),
    "graph neural network": ("gnn_agg_op", "gnn_agg_simple_forward", "gnn_agg_simple_backward", "gnn_activation_op",
                             "gnn_mha_gat_forward", "gnn_mha_gat_backward", "gnn_mha_gat_v2_forward",
                             "gnn_mha_gat_v2_backward"),
}


def _missing(name, family):
    def missing(*args, **kwargs):
        raise NotImplementedError(f"{name}: opgraph has no {family} op yet (docs/porting.md lists what is missing)")

    missing.__name__ = missing.__qualname__ = name
    missing.__doc__ = f"Not available: opgraph has no {family} op yet; calling it raises NotImplementedError."
    return missing


MISSING = {name: _missing(name, family) for family, names in MISSING_OPS.items() for name in names}


def sdpa_capabilities() -> frozenset:
    """cudnn's packed (THD) SDPA binder capabilities: opgraph has no such binder, so none."""
    return frozenset()


# ------------------------------------------- engine enumeration (cudnn's) --
#
# cudnn's pygraph numbers the engines that can run a graph 0 .. get_engine_count()-1 and lists
# each one's knobs (get_knobs_for_engine: type, min, max, stride), then plans one with
# create_execution_plan(index, {knob: value}). opgraph plans by engine id over ONE ranked plan
# list, so the numbering is that list's: engine i is the i-th distinct engine of the ranked
# plans create_execution_plans([A, FALLBACK]) gives this graph (found on a copy, so the graph
# itself stays unplanned), and its knobs are the values its plans in that list take.


class knob:
    """One knob of an engine, as cudnn's `knob`: its type and the values min_value .. max_value
    in steps of `stride` (opgraph: the values the engine's ranked plans take; a value between
    them that no plan takes is refused by create_execution_plan)."""

    def __init__(self, knob_type=None, max_value=None, min_value=None, stride=None):
        self._type = _C.knob_type.NOT_SET if knob_type is None else knob_type
        self._max, self._min, self._stride = max_value, min_value, stride

    type = property(lambda self: self._type)
    max_value = property(lambda self: self._max)
    min_value = property(lambda self: self._min)
    stride = property(lambda self: self._stride)

    def __repr__(self):
        return json.dumps({"knob_type": self._type.name, "max_value": self._max, "min_value": self._min,
                           "stride": self._stride})


def _ranked_configs(g):
    """[(engine_id, {knob_type: value})] of graph g's ranked plans: those of a copy of g planned
    with heur_mode A and FALLBACK (kept on g, so the numbering stays once g is planned), or g's own
    when it was planned before anything was counted."""
    cached = g.__dict__.get("_ranked_copy")  # the numbering stays that of the first count
    if cached is not None:
        return cached
    if g.is_planned:
        return [g.get_engine_and_knobs_at_index(i) for i in range(g.get_execution_plan_count())]
    if not g.is_validated:
        g.validate()
    from ._graph import _retarget_like, pygraph

    copy = pygraph()
    copy._deserialize_into(g._serialize())
    _retarget_like(copy, g)  # g's planning target, after the graph (deserializing resets it)
    copy.set_host_fallback(g.host_fallback)
    copy.set_dynamic_shapes(g.dynamic_shapes)  # a graph planned dynamic ranks the dynamic graph's plans
    copy.create_execution_plans([_C.heur_mode.A, _C.heur_mode.FALLBACK])
    configs = [copy.get_engine_and_knobs_at_index(i) for i in range(copy.get_execution_plan_count())]
    g._ranked_copy = configs
    return configs


def _engines(g):
    """The distinct engine ids of g's ranked plans, best first."""
    out = []
    for engine_id, _ in _ranked_configs(g):
        if engine_id not in out:
            out.append(engine_id)
    return out


def get_engine_count(self) -> int:
    """How many engines can run this graph (cudnn's get_engine_count): the distinct engines of its
    ranked plan list. Engine i (0 <= i < count) is the i-th best; create_execution_plan(i, knobs)
    and get_knobs_for_engine(i) take that index."""
    n = len(_engines(self))
    self._engine_indices = True  # create_execution_plan reads small ints as engine indices from now on
    return n


def _engine_at(g, index):
    engines = _engines(g)
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(engines):
        raise _C.GraphNotSupportedError(
            f"engine index {index!r}: this graph has {len(engines)} engines (get_engine_count()), indexed from 0")
    return engines[index]


def get_knobs_for_engine(self, engine_index):
    """The knobs of engine `engine_index` (0 .. get_engine_count()-1) as `knob` objects: per knob
    type, the smallest and largest value its plans take and the step between them (the greatest
    common divisor of their differences; 1 for a single value)."""
    engine_id = _engine_at(self, engine_index)
    values = {}
    for eid, knobs in _ranked_configs(self):
        if eid == engine_id:
            for k, v in knobs.items():
                values.setdefault(k, set()).add(int(v))
    out = []
    for k in sorted(values, key=lambda t: t.value):
        vs = sorted(values[k])
        step = 0
        for a, b in zip(vs, vs[1:]):
            step = math.gcd(step, b - a)
        out.append(knob(k, vs[-1], vs[0], step or 1))
    return out


def create_execution_plan(self, engine, knobs=None):
    """Plans this graph with one engine and knob values (cudnn's create_execution_plan).

    After get_engine_count(), an `engine` in 0 .. count-1 is an engine index (cudnn's numbering);
    the knobs given pick the best-ranked plan of that engine taking those values, and the knobs not
    given take that plan's values. A value no plan of the engine takes is refused with
    GraphNotSupportedError. Otherwise `engine` is an opgraph engine id and `knobs` names every knob
    of the engine (the plan records' form). A graph holds one such plan: a second call is refused
    (GraphNotSupportedError); cudnn appends to its plan list."""
    knobs = dict(knobs or {})
    if self.is_planned:
        raise _C.GraphNotSupportedError(
            "create_execution_plan: this graph is planned already; opgraph holds one plan made by "
            "create_execution_plan (or the ranked list of create_execution_plans) per graph")
    if self.__dict__.get("_engine_indices") and isinstance(engine, int) and not isinstance(engine, bool) \
            and 0 <= engine < len(_engines(self)):
        engine_id = _engines(self)[engine]
        match = next((k for eid, k in _ranked_configs(self) if eid == engine_id
                      and all(int(k.get(t, -1)) == int(v) for t, v in knobs.items())), None)
        if match is None:
            raise _C.GraphNotSupportedError(
                f"create_execution_plan: engine {engine} (opgraph engine {engine_id}) has no plan for this graph "
                f"with knobs {_knob_text(knobs)}; get_knobs_for_engine({engine}) gives the values its plans take")
        knobs = dict(match)
        engine = engine_id
    return _C._GraphBase.create_execution_plan(self, engine, knobs)


def _knob_text(knobs):
    return "{" + ", ".join(f"{getattr(k, 'name', k)}: {v}" for k, v in knobs.items()) + "}"


def _install_engine_enumeration(cls):
    cls.get_engine_count = get_engine_count
    cls.get_knobs_for_engine = get_knobs_for_engine
    cls.create_execution_plan = create_execution_plan


# ------------------------------------------------ pointwise output strides (cudnn's) --
#
# The IR gives a pointwise output whose strides nobody set dense strides in the axis order of
# its first input of the output's dims (ops/output_layout.h), so an output never has holes.
# cudnn-frontend copies that input's strides exactly, holes included: test_apply_rope binds its
# outputs to strided views of the input (in place) and relies on it. The Python package follows
# cudnn-frontend: at validate, each NON-VIRTUAL pointwise output whose strides the user did not
# set takes the strides cudnn-frontend would give it (those of its first input of the same dims,
# through virtual intermediates as cudnn-frontend infers them), set explicitly on the tensor,
# unless those strides would give two elements one address (an input broadcast by stride 0).
# Virtual tensors keep the IR's strides (no buffer sees them). C++ users keep the IR's rule.


def _one_to_one(dims, strides):
    """Whether strides give every element of dims its own address (no broadcast / overlap)."""
    axes = sorted((st, d) for d, st in zip(dims, strides) if d > 1)
    reach = 1
    for st, d in axes:
        if st < reach:
            return False
        reach = st * d
    return True


def _cudnn_pointwise_strides(g, unset):
    """Sets cudnn-frontend's strides on the non-virtual pointwise outputs in `unset` (ids of
    outputs whose strides were not set before validate); returns whether any changed."""
    inferred = {}  # id(tensor) -> the strides cudnn-frontend would have given it
    changed = False
    for n in g.nodes:
        if n.op != "pointwise":
            continue
        out = n.outputs.get("OUT_0")
        if out is None:
            continue
        ins = [n.inputs[p] for p in ("IN_0", "IN_1", "IN_2") if n.inputs.get(p) is not None]
        same = next((t for t in ins if list(t.dims) == list(out.dims)), None)
        if id(out) not in unset and (not out.is_virtual or same is None):
            continue  # strides the user set (or virtual without a same-dims input): as they are
        if same is None:
            continue
        strides = inferred.get(id(same), list(same.strides))
        inferred[id(out)] = strides
        if not out.is_virtual and list(out.strides) != strides and _one_to_one(out.dims, strides):
            out.set_stride(strides)  # (an input broadcast by stride 0 is not copied: the output keeps its own)
            changed = True
    return changed


def _check_alibi_band(n):
    """cudnn-frontend's rule (its SDPA forward and backward validation): ALiBi only with a right
    bound of 0, which use_causal_mask / use_causal_mask_bottom_right set. Its tests waive on it."""
    a = n.attributes
    if a.get("use_alibi_mask") and not (a.get("diagonal_band_right_bound") == 0 or a.get("use_causal_mask")
                                        or a.get("use_causal_mask_bottom_right")):
        raise _C.GraphNotSupportedError(
            f"op '{n.op}' (node '{n.name}'): attribute 'use_alibi_mask': rule alibi_needs_right_bound_0: "
            f"cudnn-frontend supports ALiBi only with diagonal_band_right_bound = 0 (a causal band); "
            f"this node's right bound is {a.get('diagonal_band_right_bound', 'not set')}")


def validate(self):
    """validate(), then the non-virtual pointwise outputs nobody gave strides take cudnn-frontend's
    (their first same-dims input's, holes included; see above), and validate again if any did."""
    unset = set()
    if not self.is_validated:
        for n in self.nodes:
            if n.op in ("sdpa", "sdpa_backward"):
                _check_alibi_band(n)
            out = n.outputs.get("OUT_0") if n.op == "pointwise" else None
            if out is not None and not out.is_virtual and not list(out.strides):
                unset.add(id(out))
    result = _C._GraphBase.validate(self)
    if unset and _cudnn_pointwise_strides(self, unset):
        result = _C._GraphBase.validate(self)
    return result


def create_execution_plans(self, *args, **kwargs):
    """Validates first (the Python validate, with cudnn's pointwise output strides), then plans.
    A graph made with is_override_shape_enabled=True promises execute-time shape overrides, which
    a cuDNN plan takes only where cuDNN finalises its engine config on the dynamic-shape graph (the
    H200's cuDNN 9.14 refused that for matmul and SDPA): where the list also holds device plans that
    take them (the gemm engine's, microseconds a new shape), the cuDNN plans are deselected, as
    cuDNN itself lists only override-capable engines for such a graph. A list of cuDNN plans alone is left to
    check_support, which declines it naming why."""
    if not self.is_validated:
        self.validate()
    result = _C._GraphBase.create_execution_plans(self, *args, **kwargs)
    if getattr(self, "is_override_shape_enabled", False) and self._has_device_target:
        names = [self.get_plan_name_at_index(i) for i in range(self.get_execution_plan_count())]
        device = [n for n in names if not n.startswith("reference")]
        if any(n.startswith("cudnn_eng") for n in device) and not all(n.startswith("cudnn_eng") for n in device):
            self.deselect_engines(["cudnn_eng"])
    return result


def _install():
    from ._graph import pygraph

    _install_engine_enumeration(pygraph)
    pygraph.validate = validate
    pygraph.create_execution_plans = create_execution_plans


_install()


# ------------------------------------------------- built graphs, serialized --
#
# cudnn's serialize() of a built graph holds its execution plan, and deserialize(handle, data)
# gives a graph that executes at once, its variant pack keyed by the tensors of the graph that
# was serialized (cudnn reads a tensor key as its uid). opgraph's serialized graph is the graph
# JSON; a built graph's is an envelope holding that JSON and the selected plan's record
# (serialize_plan), and deserializing one plans the graph from that record and builds it.

_BUILT_FORMAT = "opgraph.built_graph"


def serialize_built(g) -> bytes:
    """g's graph JSON, or for a built graph the envelope {format, version, graph, plan}."""
    graph_json = g._serialize()
    if not (g.is_planned and g.is_frozen):
        return graph_json.encode()
    try:
        record = g.serialize_plan()
    except ValueError:  # planned, no plan built yet
        return graph_json.encode()
    return json.dumps({"format": _BUILT_FORMAT, "version": 1, "graph": json.loads(graph_json),
                       "plan": json.loads(record)}, sort_keys=True, separators=(",", ":")).encode()


def deserialize_into(g, text, handle=None):
    """Replaces graph g with the serialized one (text: str). A built graph's envelope is planned
    from its plan record and built, for the device of `handle` when one is given; g then reads a
    tensor key of another graph as its uid when g's tensor of that uid has the same name."""
    doc = None
    if text.lstrip().startswith("{") and _BUILT_FORMAT in text:
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
    if not (isinstance(doc, dict) and doc.get("format") == _BUILT_FORMAT):
        g._deserialize_into(text)
        if handle is not None:
            g.handle = handle
            g._target_handle_device(handle)
        return g
    if doc.get("version") != 1 or not isinstance(doc.get("graph"), dict) or not isinstance(doc.get("plan"), dict):
        raise _C.GraphNotSupportedError(
            f"deserialize: not a serialized built opgraph graph (expected {{'format': '{_BUILT_FORMAT}', "
            "'version': 1, 'graph': {...}, 'plan': {...}})")
    g._deserialize_into(json.dumps(doc["graph"]))
    if handle is not None:
        g.handle = handle
        g._target_handle_device(handle)
    elif doc["plan"].get("engine") != "reference":
        from ._graph import _current_cuda_device

        g._target_device(_current_cuda_device())  # a device plan: the current device
    g.deserialize_plan(json.dumps(doc["plan"]))
    g.check_support()
    g.build_plans()
    g._mark_python_hooks()  # execute looks _keys_by_uid up from now on
    g._keys_by_uid = functools.partial(_key_by_uid, g)
    return g


def _key_by_uid(g, t):
    """A variant-pack key: t itself when it is g's, else its uid when g's tensor of that uid has
    t's name (cudnn's reading of a tensor key), else t (execute then names the mismatch)."""
    uid = t.get_uid()
    mine = g.find_tensor(uid)
    if mine is None or mine is t or mine.get_name() != t.get_name():
        return t
    return uid


# ------------------------------------------------ flexible attention (score_mod) --
#
# cudnn's sdpa(..., score_mod=fn) calls fn(graph, S) while it expands SDPA into its composite:
# S = attn_scale * Q K^T is a virtual tensor of the graph, fn adds ops reading it (and any other
# tensors of the graph) and returns the modified scores, which go on to bias, masks and softmax.
# sdpa_backward(score_mod=fn, score_mod_bprop=fn_b) recomputes the forward scores through fn and
# passes the softmax gradient dS through fn_b before the attn_scale and the dQ / dK matmuls.
# opgraph's sdpa node has no subgraph inside, so with a callable the graph builder writes the
# composite itself out of IR ops (transpose, matmul, pointwise, reduction, paged_cache_load) in
# the same order, and the callable works on that S. Engines then take the graph as any other: the
# reference runs it, a device engine runs it where it accepts every node.

_FLEX_FWD_KEYS = {"q", "k", "v", "attn_scale", "bias", "generate_stats", "is_inference", "seq_len_q", "seq_len_kv",
                  "paged_attention_k_table", "paged_attention_v_table", "paged_attention_max_seq_len_kv",
                  "use_causal_mask", "use_padding_mask", "use_alibi_mask", "use_causal_mask_bottom_right",
                  "score_mod"}
_FLEX_BWD_KEYS = {"q", "k", "v", "o", "do", "stats", "attn_scale", "bias", "seq_len_q", "seq_len_kv",
                  "use_causal_mask", "use_padding_mask", "use_alibi_mask", "use_causal_mask_bottom_right",
                  "use_deterministic_algorithm", "score_mod", "score_mod_bprop"}
_FLEX_OFF = {"use_causal_mask", "use_padding_mask", "use_alibi_mask", "use_causal_mask_bottom_right"}
# use_deterministic_algorithm is taken either way: the composite backward writes dQ with its matmul, the form
# cudnn-frontend's deterministic backward has on Hopper.


def _flex_args(op, kw, allowed):
    """kw with lower-case keys; a keyword the composite does not write (a set flag, a tensor for a
    feature it lacks) raises NotImplementedError naming it."""
    out = {}
    for key, value in kw.items():
        k = key.lower()
        if value is None or (k in _FLEX_OFF and value is False):
            continue
        if k not in allowed or k in _FLEX_OFF:
            raise NotImplementedError(
                f"{op}(score_mod=...) with '{key}': opgraph writes flexible attention as its composite (Q K^T, "
                "attn_scale, score_mod, bias, softmax, P V) and does not add this feature to it; express it in the "
                "score_mod callable (a mask is gen_index / cmp / binary_select) or call without score_mod")
        out[k] = value
    return out


def _flex_tensor(g, op, name, value):
    if not isinstance(value, _C.tensor):
        raise TypeError(f"{op}(score_mod=...): '{name}' expects an opgraph.tensor, got {type(value).__name__}")
    return value


def _flex_seq_lens(g, op, a):
    """seq_len_q, seq_len_kv of the call's arguments (each an opgraph.tensor, or None)."""
    return tuple(_flex_tensor(g, op, x, a[x]) if a.get(x) is not None else None for x in ("seq_len_q", "seq_len_kv"))


def _flex_call(g, op, fn, scores, what):
    out = fn(g, scores)
    if not isinstance(out, _C.tensor):
        raise TypeError(f"{op}({what}=...): the callable must return the modified score tensor (an opgraph.tensor "
                        f"built from graph ops), got {type(out).__name__}")
    return out


def _flex_scale(g, scores, attn_scale, name):
    if attn_scale is None:
        return scores
    if not isinstance(attn_scale, _C.tensor):
        if isinstance(attn_scale, bool) or not isinstance(attn_scale, (int, float)):
            raise TypeError(f"attn_scale expects a float or an opgraph.tensor, got {type(attn_scale).__name__}")
        attn_scale = g.tensor(dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], data_type=_C.data_type.FLOAT,
                              is_pass_by_value=True, value=float(attn_scale), name=f"{name}::attn_scale")
    return g.mul(a=scores, b=attn_scale, name=f"{name}::mul_attn_scale")


def _flex_heads(op, q, k, v):
    for t, what in ((k, "k"), (v, "v")):
        if t.dims[1] not in (1, q.dims[1]):
            raise NotImplementedError(
                f"{op}(score_mod=...): '{what}' has {t.dims[1]} heads for {q.dims[1]} query heads; the composite "
                "takes as many K/V heads as query heads, or one (MQA), not grouped query attention")


def _flex_matmul(g, a, b, name, m=None, n=None, k=None):
    """A matmul of the composite with cudnn-frontend's GEMM overrides: the sequence lengths
    ([b, 1, 1, 1], broadcast over the heads) bound to M / N / K where given. Rows and columns past
    an M / N override hold the matmul's padding (0); a K override sums the first K terms only."""
    kw = {name_: t for name_, t in (("M_override", m), ("N_override", n), ("K_override", k)) if t is not None}
    return g.matmul(A=a, B=b, name=name, **kw)


def _flex_scores(g, op, a, name, q, k, fn, seq_len_q, seq_len_kv, bias):
    """The modified scores: score_mod(attn_scale * Q K^T), then bias. As cudnn-frontend's composite,
    SEQ_LEN_Q / SEQ_LEN_KV are the Q K^T matmul's M / N overrides: scores past a batch's lengths
    hold the padding 0 before attn_scale and the score_mod (which masks them if it wants them out)."""
    kt = g.transpose(input=k, permutation=[0, 1, 3, 2], name=f"{name}::k_transpose")
    kt.set_data_type(k.get_data_type())  # K^T is K read the other way (cudnn: K's own descriptor)
    s = _flex_matmul(g, q, kt, f"{name}::matmul_q_kt", m=seq_len_q, n=seq_len_kv)
    shape = [q.dims[0], q.dims[1], q.dims[2], k.dims[2]]
    s.set_dim(shape)
    s = _flex_scale(g, s, a.get("attn_scale"), name)
    s.set_dim(shape)  # the callable sees the scores' dims, as cudnn's composite sets them before calling it
    if fn is not None:
        s = _flex_call(g, op, fn, s, "score_mod")
    if bias is not None:
        s = g.add(a=s, b=_flex_tensor(g, op, "bias", bias), name=f"{name}::add_bias")
    return s


def _rows(t):
    d = t.dims
    return [d[0], d[1], d[2], 1]


def flexible_sdpa(g, op, kw, compute, name):
    """sdpa(..., score_mod=fn) written as its composite in graph g; returns [O, Stats or None]."""
    name = name or "sdpa"
    a = _flex_args(op, kw, _FLEX_FWD_KEYS)
    q, k, v = (_flex_tensor(g, op, x, a.get(x)) for x in ("q", "k", "v"))
    fn = a["score_mod"]
    if not callable(fn):
        raise TypeError(f"{op}: score_mod must be a callable (graph, score tensor) -> tensor")
    stats_wanted = bool(a.get("generate_stats", not a.get("is_inference", True)))
    seq_q, seq_kv = a.get("seq_len_q"), a.get("seq_len_kv")
    tables = a.get("paged_attention_k_table"), a.get("paged_attention_v_table")
    if any(t is not None for t in tables):
        if not all(isinstance(t, _C.tensor) for t in tables) or seq_kv is None:
            raise ValueError(f"{op}(score_mod=...): paged K/V need both page tables and seq_len_kv")
        s_kv = a.get("paged_attention_max_seq_len_kv")
        for which, table in (("k", tables[0]), ("v", tables[1])):
            cont = k if which == "k" else v
            per_table = table.dims[2] * cont.dims[2]
            rows = int(s_kv) if s_kv else per_table
            y = g.paged_cache_load(container=cont, seqLen=seq_kv, pageTable=table, name=f"{name}::paged_{which}")
            y.set_dim([table.dims[0], cont.dims[1], rows, cont.dims[3]])
            if which == "k":
                k = y
            else:
                v = y
    _flex_heads(op, q, k, v)
    seq_q, seq_kv = _flex_seq_lens(g, op, a)
    s = _flex_scores(g, op, a, name, q, k, fn, seq_q, seq_kv, a.get("bias"))
    m = g.reduction(input=s, mode="MAX", name=f"{name}::max")
    m.set_dim(_rows(q))
    e = g.exp(input=g.sub(a=s, b=m, name=f"{name}::sub_max"), name=f"{name}::exp")
    z = g.reduction(input=e, mode="ADD", name=f"{name}::sum_exp")
    z.set_dim(_rows(q))
    # Stats = max + log(sum), computed as cudnn's softmax does also when nobody reads it (virtual then).
    stats = g.add(a=m, b=g.log(input=z, name=f"{name}::log_sum_exp"), name=f"{name}::stats")
    stats.set_data_type(_C.data_type.FLOAT).set_dim(_rows(q))
    p = g.div(a=e, b=z, name=f"{name}::softmax")
    p.set_data_type(q.get_data_type())  # the P V matmul takes P in the io type, as cudnn's composite
    # O = P V over the first SEQ_LEN_KV keys (K override), rows past SEQ_LEN_Q 0 (M override), as cudnn's bmm2
    o = _flex_matmul(g, p, v, f"{name}::matmul_p_v", m=seq_q, k=seq_kv)
    o.set_data_type(q.get_data_type()).set_dim([q.dims[0], q.dims[1], q.dims[2], v.dims[3]])
    del compute  # the composite's math runs in the graph's compute type
    return [o, stats if stats_wanted else None]


def flexible_sdpa_backward(g, op, kw, compute, name):
    """sdpa_backward(..., score_mod=fn, score_mod_bprop=fn_b) written as its composite; returns
    [dQ, dK, dV]."""
    name = name or "sdpa_backward"
    a = _flex_args(op, kw, _FLEX_BWD_KEYS)
    q, k, v, o, do, stats = (_flex_tensor(g, op, x, a.get(x)) for x in ("q", "k", "v", "o", "do", "stats"))
    fn, fn_b = a.get("score_mod"), a.get("score_mod_bprop")
    for f, what in ((fn, "score_mod"), (fn_b, "score_mod_bprop")):
        if f is not None and not callable(f):
            raise TypeError(f"{op}: {what} must be a callable (graph, tensor) -> tensor")
    if k.dims[1] != q.dims[1] or v.dims[1] != q.dims[1]:
        raise NotImplementedError(
            f"{op}(score_mod=...): the composite backward takes as many K/V heads as query heads "
            f"(q {q.dims[1]}, k {k.dims[1]}, v {v.dims[1]}); grouped or multi-query backward is not written")
    io = q.get_data_type()
    swap = [0, 1, 3, 2]
    # softmax_sum = rowsum(dO * O) (times 1, where cudnn's dropout scale inverse stands)
    prod = g.mul(a=do, b=o, name=f"{name}::do_o")
    prod.set_dim([q.dims[0], q.dims[1], q.dims[2], v.dims[3]])
    rowdot = g.reduction(input=prod, mode="ADD", name=f"{name}::sum_do_o")
    rowdot.set_dim(_rows(q))
    one = g.tensor(dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], data_type=_C.data_type.FLOAT, is_pass_by_value=True,
                   value=1.0, name=f"{name}::one")
    rowdot = g.mul(a=rowdot, b=one, name=f"{name}::softmax_sum")
    # the scores again, through the same score_mod; K is read transposed (cudnn: K's own descriptor).
    # Every matmul takes the sequence lengths as cudnn-frontend's backward composite gives them.
    sq, skv = _flex_seq_lens(g, op, a)
    s = _flex_scores(g, op, a, name, q, k, fn, sq, skv, a.get("bias"))
    kt = next(n for n in reversed(g.nodes) if n.name == f"{name}::k_transpose").outputs["Y"]
    p = g.exp(input=g.sub(a=s, b=stats, name=f"{name}::sub_stats"), name=f"{name}::p")
    pt = g.transpose(input=p, permutation=swap, name=f"{name}::p_transpose")
    pt.set_data_type(io)  # P^T in the io type for the dV matmul, as cudnn's reshape_p
    dv = _flex_matmul(g, pt, do, f"{name}::matmul_pt_do", m=skv, k=sq)
    vt = g.transpose(input=v, permutation=swap, name=f"{name}::v_transpose")
    vt.set_data_type(v.get_data_type())
    dp = _flex_matmul(g, do, vt, f"{name}::matmul_do_vt", m=sq, n=skv)
    ds = g.mul(a=g.sub(a=dp, b=rowdot, name=f"{name}::sub_dp_sum"), b=p, name=f"{name}::ds")
    if fn_b is not None:
        ds = _flex_call(g, op, fn_b, ds, "score_mod_bprop")
    ds = _flex_scale(g, ds, a.get("attn_scale"), name + "::ds")
    dst = g.transpose(input=ds, permutation=swap, name=f"{name}::ds_transpose")
    dst.set_data_type(io)  # dS^T in the io type, as cudnn's reshape_dS
    dk = _flex_matmul(g, dst, q, f"{name}::matmul_dst_q", m=skv, k=sq)
    k_back = g.transpose(input=kt, permutation=swap, name=f"{name}::k_back")  # cudnn's reshape_k
    k_back.set_data_type(k.get_data_type())
    dq = _flex_matmul(g, ds, k_back, f"{name}::matmul_ds_k", m=sq, k=skv)
    for t, like in ((dq, q), (dk, k), (dv, v)):
        t.set_data_type(io).set_dim(list(like.dims))
    del compute
    return [dq, dk, dv]
