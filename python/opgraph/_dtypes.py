"""Element types from anything a user holds: opgraph.data_type, torch/numpy dtypes, names.

`to_data_type(x)` accepts an opgraph.data_type, a torch.dtype (torch.float16), a numpy
dtype or scalar type (np.float32, np.dtype("int8")), an ml_dtypes type (bfloat16,
float8_e4m3fn) or a name ("half", "FLOAT", "bf16"); None means NOT_SET.
"""
from __future__ import annotations

from . import _C

data_type = _C.data_type


def _tables():
    """The name and typestr dicts, from the binding's one spelling table (_C._dtype_spellings:
    python/src/dtype_names.h). A spelling is added there, never here."""
    by_name, by_typestr = {}, {}
    for name, t, kinds in _C._dtype_spellings():
        if "typestr" in kinds:
            by_typestr[name] = t
        else:
            by_name[name] = t
    return by_name, by_typestr


# Lower-case names (canonical, torch's, numpy's, ml_dtypes' and short aliases) -> data_type;
# numpy typestr codes without byte order (for __array_interface__ / __cuda_array_interface__).
_BY_NAME, _BY_TYPESTR = _tables()


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
