"""tvm-ffi: apache-tvm-ffi's tvm_ffi.Tensor (made by tvm_ffi.from_dlpack of a fresh
numpy array), tvm_ffi.from_dlpack."""
import numpy as np

import dl
from peers import Peer


class TvmFfiPeer(Peer):
    name = "tvm-ffi"
    module = "tvm_ffi"
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
