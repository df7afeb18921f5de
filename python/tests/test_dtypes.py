"""The one table of element-type spellings (python/src/dtype_names.h): every data_type has
its canonical name, fp8 and fp4 have their torch / ml_dtypes names, every spelling resolves
through to_data_type, and the C++ side (an __array_interface__ / __cuda_array_interface__
typestr read by the binding) agrees with the table the Python side builds from."""
import numpy as np
import pytest

import opgraph
from opgraph import _dtypes

dt = opgraph.data_type
ROWS = opgraph._C._dtype_spellings()
# cudnn's members with no IR element type (INT4, FP8_E5M3, the vectorised ints; test_porting.py) aside.
MEMBERS = [getattr(dt, n) for n in dir(dt) if n[0].isupper() and isinstance(getattr(dt, n), dt)
           and getattr(dt, n) not in opgraph._C._unsupported_data_types]
LOW_PRECISION = [dt.FP8_E4M3, dt.FP8_E5M2, dt.FP8_E8M0, dt.FP4_E2M1]


def names_of(t, kind):
    return [name for name, u, kinds in ROWS if u == t and kind in kinds]


def test_every_type_has_its_canonical_name():
    assert len(MEMBERS) == 14  # NOT_SET and the 13 element types
    for t in MEMBERS:
        assert names_of(t, "canonical") == [t.name.lower()], t
        assert opgraph.to_data_type(t.name) == t and opgraph.to_data_type(t.name.lower()) == t


def test_every_element_type_has_a_torch_name_fp8_and_fp4_included():
    for t in MEMBERS:
        if t == dt.NOT_SET:
            continue
        assert len(names_of(t, "torch")) == 1, t
    torch_names = {names_of(t, "torch")[0]: t for t in LOW_PRECISION}
    assert torch_names == {"float8_e4m3fn": dt.FP8_E4M3, "float8_e5m2": dt.FP8_E5M2,
                           "float8_e8m0fnu": dt.FP8_E8M0, "float4_e2m1fn_x2": dt.FP4_E2M1}
    for t in LOW_PRECISION:
        assert names_of(t, "ml_dtypes"), t  # ml_dtypes spells every one of them


def test_every_spelling_resolves_to_its_type():
    seen = {}
    for name, t, kinds in ROWS:
        assert kinds, name
        key = ("typestr" in kinds, name)
        assert seen.setdefault(key, t) == t, f"{name!r} names two types"
        if "typestr" in kinds:
            assert _dtypes.typestr_to_data_type("<" + name) == t
            assert opgraph.to_data_type("<" + name) == t
        else:
            assert opgraph.to_data_type(name) == t
            assert opgraph.to_data_type(name.upper()) == t
            assert opgraph.to_data_type("torch." + name) == t


def test_numpy_names_and_typestrs_are_numpys_own():
    for name, t, kinds in ROWS:
        if "numpy" in kinds:
            assert np.dtype(name).name == name
            assert opgraph.to_data_type(np.dtype(name)) == t
        if "typestr" in kinds:
            assert np.dtype("<" + name).str[1:] == name
    # Every type numpy has is spelled, by name and by typestr.
    for t in MEMBERS:
        if names_of(t, "numpy"):
            assert names_of(t, "typestr"), t


class Interface:
    def __init__(self, typestr, cuda):
        d = {"data": (0x1000, False), "shape": (2,), "typestr": typestr, "version": 3}
        if cuda:
            self.__cuda_array_interface__ = d
        else:
            self.__array_interface__ = d


@pytest.mark.parametrize("cuda", [False, True])
def test_the_binding_reads_every_typestr_through_the_same_table(cuda):
    for name, t, kinds in ROWS:
        if "typestr" not in kinds:
            continue
        d = opgraph._C._describe_buffer(Interface("<" + name if name != "b1" else "|b1", cuda))
        assert d["data_type"] == t and d["foreign_dtype"] == "", name
    # A typestr the table does not hold is the buffer's own name, not a guess.
    d = opgraph._C._describe_buffer(Interface("<c8", cuda))
    assert d["data_type"] == dt.NOT_SET and d["foreign_dtype"] == "<c8"


def test_unknown_names_are_refused():
    with pytest.raises(TypeError):
        opgraph.to_data_type("float8_e4m3fnuz")
    with pytest.raises(TypeError):
        _dtypes.typestr_to_data_type("<c8")
