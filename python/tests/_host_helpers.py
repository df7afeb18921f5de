"""Shared by the host-execute tests: the add graph they run, and the ctypes stand-in for torch's DLPack
C exchange table (its structs and a bare `torch` module with a dtype class) their subprocess scripts start
from."""
import numpy as np

import opgraph

F32 = np.float32


def add_graph(n=8):
    """A built graph c = a + b over [1, n] float32 host tensors (the reference engine runs it)."""
    g = opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)
    proto = np.zeros((1, n), F32)
    a, b = g.tensor_like(proto, name="a"), g.tensor_like(proto, name="b")
    c = g.add(a=a, b=b)
    c.set_output(True).set_name("c").set_data_type(opgraph.data_type.FLOAT)
    g.build([opgraph.heur_mode.A, opgraph.heur_mode.FALLBACK])
    return g, a, b, c


DLPACK_STANDIN = """import ctypes, sys, types
import numpy as np

c = ctypes

class DLDevice(c.Structure): _fields_ = [("device_type", c.c_int32), ("device_id", c.c_int32)]
class DLDataType(c.Structure): _fields_ = [("code", c.c_uint8), ("bits", c.c_uint8), ("lanes", c.c_uint16)]
class DLTensor(c.Structure):
    _fields_ = [("data", c.c_void_p), ("device", DLDevice), ("ndim", c.c_int32), ("dtype", DLDataType),
                ("shape", c.POINTER(c.c_int64)), ("strides", c.POINTER(c.c_int64)), ("byte_offset", c.c_uint64)]
class Header(c.Structure): _fields_ = [("major", c.c_uint32), ("minor", c.c_uint32), ("prev", c.c_void_p)]
FROM = c.CFUNCTYPE(c.c_int, c.c_void_p, c.POINTER(DLTensor))
class Api(c.Structure):
    _fields_ = [("header", Header), ("alloc", c.c_void_p), ("mfrom", c.c_void_p), ("mto", c.c_void_p),
                ("dlfrom", FROM), ("stream", c.c_void_p)]

torch = types.ModuleType("torch")
class dtype:
    def __init__(self, name): self.name = name
    def __str__(self): return "torch." + self.name
"""
