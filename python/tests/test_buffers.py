"""Buffer normalisation (what execute reads from each kind of object) and handles/streams."""
import numpy as np
import pytest

import opgraph

describe = opgraph._C._describe_buffer


def test_int_is_bare_address():
    d = describe(0x1000)
    assert d["data"] == 0x1000 and d["dims"] == [] and d["device"] == "unknown"


def test_numpy_views(rng):
    a = rng.standard_normal((4, 6)).astype(np.float32)
    d = describe(a)
    assert d["data"] == a.__array_interface__["data"][0]
    assert d["dims"] == [4, 6] and d["strides"] == [6, 1] and d["device"] == "cpu" and d["nbytes"] == 96
    assert d["data_type"] == opgraph.data_type.FLOAT and d["device_id"] == 0  # DLPack's CPU device 0
    v = a.T[1:, ::2]
    dv = describe(v)
    assert dv["dims"] == list(v.shape) and dv["strides"] == [s // 4 for s in v.strides]
    assert dv["data"] == v.__array_interface__["data"][0]


@pytest.mark.parametrize("dtype,name", [(np.float16, "HALF"), (np.int8, "INT8"), (np.int32, "INT32"),
                                        (np.int64, "INT64"), (np.bool_, "BOOLEAN"), (np.float64, "DOUBLE"),
                                        (np.uint8, "UINT8")])
def test_numpy_dtypes(dtype, name):
    assert describe(np.zeros((2, 2), dtype=dtype))["data_type"] == getattr(opgraph.data_type, name)


def test_zero_d_is_one_element():
    d = describe(np.float32(3.0).reshape(()))
    assert d["dims"] == [1] and d["strides"] == [1]


class CudaArray:
    """A fake device array: only the __cuda_array_interface__ dict (never dereferenced)."""

    def __init__(self, shape, strides=None, typestr="<f2", ptr=0xDEAD000):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape, "strides": strides,
                                         "typestr": typestr, "version": 3}


def test_cuda_array_interface():
    d = describe(CudaArray((3, 5)))
    assert d["data"] == 0xDEAD000 and d["dims"] == [3, 5] and d["strides"] == [5, 1]
    assert d["device"] == "cuda" and d["data_type"] == opgraph.data_type.HALF and d["nbytes"] == 30
    assert d["device_id"] == -1  # the interface does not say which device
    d = describe(CudaArray((3, 5), strides=(2, 6)))
    assert d["strides"] == [1, 3]


class HostArray:
    """An object exposing only __array_interface__ (no DLPack, no buffer protocol)."""

    def __init__(self, arr):
        self._arr = arr
        self.__array_interface__ = arr.__array_interface__


def test_array_interface_only(rng):
    a = rng.standard_normal((2, 3))
    d = describe(HostArray(a))
    assert d["dims"] == [2, 3] and d["data_type"] == opgraph.data_type.DOUBLE and d["device"] == "cpu"


def test_unsupported_object_names_itself():
    with pytest.raises(TypeError, match="dict"):
        describe({"not": "a buffer"})


def test_handles_and_streams():
    h = opgraph.create_handle()
    # On the current CUDA device when one can be read; host-only (saying why) otherwise.
    assert (h.device is None) == (h.device_error != "")
    assert ("device=host" in repr(h)) == (h.device is None)
    with pytest.raises(RuntimeError, match="device 4096"):
        opgraph.create_handle(device=4096)
    assert opgraph.get_stream(h) == 0
    opgraph.set_stream(handle=h, stream=1234)
    assert opgraph.get_stream(h) == 1234

    class TorchLikeStream:
        cuda_stream = 777

    opgraph.set_stream(h, TorchLikeStream())
    assert h.stream == 777
    with pytest.raises(TypeError):
        opgraph.set_stream(h, "stream")
    opgraph.destroy_handle(h)
