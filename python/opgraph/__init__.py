"""opgraph: one op graph, many engines, one ranked plan list — with cudnn.pygraph's Python surface.

    import opgraph
    g = opgraph.pygraph(io_data_type=opgraph.data_type.FLOAT, compute_data_type=opgraph.data_type.FLOAT)
    a = g.tensor(dim=[1, 4, 8], data_type=numpy.float32)
    ...

Code written for cudnn.pygraph ports by changing the import (see README.md, "Python").
"""
from . import _C
from ._C import (  # noqa: F401
    FRONTEND_KNOB_TYPE_BASE,
    BindingWarning,
    FrozenGraphError,
    GraphNotSupportedError,
    behavior_note,
    bits_of,
    build_plan_policy,
    create_handle,
    cudnnGraphNotSupportedError,
    data_type,
    destroy_handle,
    get_binding_policy,
    get_stream,
    handle,
    heur_mode,
    is_frontend_knob_type,
    knob_type,
    node,
    numerical_note,
    op_specs,
    pointwise_builders,
    scalar_type,
    set_binding_policy,
    set_stream,
    tensor,
    tensor_reordering,
)
from ._dtypes import to_data_type  # noqa: F401
from ._enums import (  # noqa: F401
    attention_implementation,
    convolution_mode,
    diagonal_alignment,
    moe_grouped_matmul_mode,
    norm_forward_phase,
    padding_mode,
    reduction_mode,
    resample_mode,
    reshape_mode,
    rng_distribution,
)
from ._graph import BUILDERS, deserialize, pygraph  # noqa: F401
from ._porting import (  # noqa: F401
    MISSING,
    backend_version,
    backend_version_string,
    create_device_properties,
    create_kernel_cache,
    device_properties,
    get_last_error_string,
    graph,
    graph_cache,
    jit,
    kernel_cache,
    knob,
    sdpa_capabilities,
)

globals().update(MISSING)  # cudnn's names for ops opgraph lacks: each raises NotImplementedError

Graph = pygraph
Tensor = tensor
Handle = handle
Node = node


def _set_data_type(self, data_type):
    """set_data_type accepting opgraph/torch/numpy dtypes; returns the tensor."""
    return self._set_data_type(to_data_type(data_type))


def _get_ragged_offset_multiplier(self):
    """The unit of this tensor's ragged offsets, in elements: always 1 in opgraph."""
    return 1


def _set_ragged_offset_multiplier(self, multiplier):
    """Accepts 1 (offsets in elements); any other unit is refused."""
    from ._graph import _check_multiplier

    _check_multiplier(self.get_name(), multiplier)
    return self


def _get_vector_count(self):
    """Elements packed per vector (cudnn's vectorised layouts): 1, opgraph has none."""
    return 1


def _get_vector_dimension(self):
    """The vectorised axis: -1 (none)."""
    return -1


def _set_vector_count_and_dimension(self, count, dimension):
    """Accepts count 1 (no vectorisation); vectorised layouts (INT8x4, INT8x32) are refused."""
    if count != 1:
        raise ValueError(f"tensor '{self.get_name()}': vector count {count} (axis {dimension}) is not supported; "
                         "opgraph has no vectorised layouts (INT8x4 / INT8x32): declare the unpacked tensor")
    return self


def _set_is_pass_by_value(self, is_pass_by_value):
    """A tensor is pass-by-value when it is declared with its value (tensor(..., is_pass_by_value=True,
    value=v), tensor_scalar, tensor_like of a host scalar); this setter accepts what the tensor already is."""
    if bool(is_pass_by_value) != self.get_is_pass_by_value():
        raise ValueError(
            f"tensor '{self.get_name()}': set_is_pass_by_value({bool(is_pass_by_value)}) cannot change what the "
            "tensor is; declare a pass-by-value tensor with its value (tensor(..., is_pass_by_value=True, value=v) "
            "or tensor_like(host_scalar))")
    return self


tensor.set_data_type = _set_data_type
tensor.get_ragged_offset_multiplier = _get_ragged_offset_multiplier
tensor.set_ragged_offset_multiplier = _set_ragged_offset_multiplier
tensor.get_vector_count = _get_vector_count
tensor.get_vector_dimension = _get_vector_dimension
tensor.set_vector_count_and_dimension = _set_vector_count_and_dimension
tensor.set_is_pass_by_value = _set_is_pass_by_value

__version__ = "0.1.0"
