"""opgraph: one op graph, many engines, one ranked plan list — with cudnn.pygraph's Python surface.

    import opgraph
    g = opgraph.pygraph(io_data_type=opgraph.data_type.FLOAT, compute_data_type=opgraph.data_type.FLOAT)
    a = g.tensor(dim=[1, 4, 8], data_type=numpy.float32)
    ...

Code written for cudnn.pygraph ports by changing the import (see README.md, "Python").
"""
from . import _C
from ._C import (  # noqa: F401
    FrozenGraphError,
    GraphNotSupportedError,
    behavior_note,
    bits_of,
    build_plan_policy,
    create_handle,
    cudnnGraphNotSupportedError,
    data_type,
    destroy_handle,
    get_stream,
    handle,
    heur_mode,
    knob_type,
    node,
    numerical_note,
    op_specs,
    pointwise_builders,
    scalar_type,
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

Graph = pygraph
Tensor = tensor


def _set_data_type(self, data_type):
    """set_data_type accepting opgraph/torch/numpy dtypes; returns the tensor."""
    return self._set_data_type(to_data_type(data_type))


tensor.set_data_type = _set_data_type

__version__ = "0.1.0"
