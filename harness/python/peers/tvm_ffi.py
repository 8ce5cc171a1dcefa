"""tvm-ffi: apache-tvm-ffi's tvm_ffi.Tensor (made by tvm_ffi.from_dlpack of a fresh
numpy array), tvm_ffi.from_dlpack."""
import numpy as np

import dl
from peers import ALL_DTYPES, COMPLEX, FLOAT8, Peer


class TvmFfiPeer(Peer):
    name = "tvm-ffi"
    module = "tvm_ffi"
    # made from a numpy array (its DLPack), which has no bfloat16
    dtypes = ALL_DTYPES - {"bfloat16"}
    # tvm_ffi.from_dlpack takes complex tensors (whose dtype it cannot name:
    # harness/expectations/python-tvm-ffi.txt), float8 and float4 ones
    imports = ALL_DTYPES | COMPLEX | FLOAT8 | {"float8_e3m4", "float4_e2m1fn"}
    dist = "apache-tvm-ffi"

    def __init__(self):
        import tvm_ffi
        self.m = tvm_ffi

    def make(self, values, shape, dtype):
        return self.m.from_dlpack(values.reshape(shape))

    def from_dlpack(self, obj):
        return self.m.from_dlpack(obj)

    def tolist(self, arr):
        return dl.read_memory(self.data_ptr(arr), self.shape(arr), self.dtype(arr),
                              list(arr.strides))

    def dtype(self, arr):
        return str(arr.dtype)

    def data_ptr(self, arr):
        p = arr.data_ptr
        return p() if callable(p) else p

    # What is judged is tvm-ffi's product API. As a producer of the DLPack 1.3 exchange
    # table (DLP.XAPI.*) that is tvm_ffi.Tensor, which publishes none
    # (no __dlpack_c_exchange_api__ in 0.1.15.post2), so the producer-side table cases are
    # NotSupported for tvm-ffi. tvm_ffi.core.DLTensorTestWrapper publishes one, but it is
    # the fixture tvm-ffi ships to test its own consumer (python/tvm_ffi/cython/tensor.pxi,
    # "Module-level static DLPackExchangeAPI for DLTensorTestWrapper"), not a product
    # type, and is not judged. As a consumer of tables, tvm_ffi.from_dlpack and the
    # argument and result conversion of every tvm_ffi.Function call are product code;
    # testing.echo (a global function tvm-ffi registers for its tests) is only the call
    # that returns its argument, so that the conversions of a call run both ways.
    def exchange_type(self):
        return None

    def echo(self, obj):
        return self.m.get_global_func("testing.echo")(obj)
