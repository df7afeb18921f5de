"""Element types from anything a user holds: opgraph.data_type, torch/numpy dtypes, names.

`to_data_type(x)` accepts an opgraph.data_type, a torch.dtype (torch.float16), a numpy
dtype or scalar type (np.float32, np.dtype("int8")), an ml_dtypes type (bfloat16,
float8_e4m3fn) or a name ("half", "FLOAT", "bf16"); None means NOT_SET.
"""
from __future__ import annotations

from . import _C

data_type = _C.data_type

# Lower-case names (torch's and numpy's spellings included) -> data_type.
_BY_NAME = {
    "float": data_type.FLOAT, "float32": data_type.FLOAT, "f32": data_type.FLOAT, "fp32": data_type.FLOAT,
    "double": data_type.DOUBLE, "float64": data_type.DOUBLE, "f64": data_type.DOUBLE,
    "half": data_type.HALF, "float16": data_type.HALF, "f16": data_type.HALF, "fp16": data_type.HALF,
    "bfloat16": data_type.BFLOAT16, "bf16": data_type.BFLOAT16,
    "int8": data_type.INT8, "uint8": data_type.UINT8, "int32": data_type.INT32, "int64": data_type.INT64,
    "bool": data_type.BOOLEAN, "boolean": data_type.BOOLEAN, "bool_": data_type.BOOLEAN,
    "fp8_e4m3": data_type.FP8_E4M3, "float8_e4m3fn": data_type.FP8_E4M3, "float8_e4m3": data_type.FP8_E4M3,
    "fp8_e5m2": data_type.FP8_E5M2, "float8_e5m2": data_type.FP8_E5M2,
    "fp8_e8m0": data_type.FP8_E8M0, "float8_e8m0fnu": data_type.FP8_E8M0,
    "fp4_e2m1": data_type.FP4_E2M1, "float4_e2m1fn_x2": data_type.FP4_E2M1, "float4_e2m1fn": data_type.FP4_E2M1,
    "not_set": data_type.NOT_SET,
}

# numpy dtype.str codes without byte order (for __array_interface__ / __cuda_array_interface__ typestr).
_BY_TYPESTR = {
    "f4": data_type.FLOAT, "f8": data_type.DOUBLE, "f2": data_type.HALF, "i1": data_type.INT8,
    "u1": data_type.UINT8, "i4": data_type.INT32, "i8": data_type.INT64, "b1": data_type.BOOLEAN,
}


def to_data_type(x) -> "data_type":
    """The opgraph.data_type for `x` (TypeError when it names no supported type)."""
    if x is None:
        return data_type.NOT_SET
    if isinstance(x, data_type):
        return x
    if isinstance(x, str):
        key = x.lower()
        if key.startswith("torch."):
            key = key[len("torch."):]
        if key in _BY_NAME:
            return _BY_NAME[key]
        if key[1:] in _BY_TYPESTR:
            return _BY_TYPESTR[key[1:]]
        raise TypeError(f"unknown data type name {x!r}")
    mod = type(x).__module__
    if mod.startswith("torch"):  # torch.dtype: str() is 'torch.float16'
        return to_data_type(str(x))
    name = getattr(x, "name", None)  # numpy dtype, ml_dtypes
    if isinstance(name, str) and name.lower() in _BY_NAME:
        return _BY_NAME[name.lower()]
    try:  # numpy scalar types (np.float32) and anything np.dtype() understands
        import numpy as np

        return to_data_type(np.dtype(x).name)
    except (ImportError, TypeError):
        pass
    raise TypeError(f"cannot convert {x!r} to an opgraph.data_type")


def typestr_to_data_type(typestr: str) -> "data_type":
    """numpy typestr ('<f4', '|b1') -> data_type."""
    t = _BY_TYPESTR.get(typestr[1:])
    if t is None:
        raise TypeError(f"unsupported array typestr {typestr!r}")
    return t
