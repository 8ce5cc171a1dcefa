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

    # tvm_ffi.Tensor publishes no exchange table: DLTensorTestWrapper, the wrapper tvm-ffi
    # ships to test its own consumer, is its only producer of one; testing.echo hands its
    # argument in through its type's table and back through the same table's
    # managed_tensor_to_py_object_no_sync.
    def exchange_type(self):
        return self.m.core.DLTensorTestWrapper

    def exchange_object(self, arr):
        return self.m.core.DLTensorTestWrapper(arr)

    def echo(self, obj):
        return self.m.get_global_func("testing.echo")(obj)
