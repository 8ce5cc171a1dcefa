"""onnxruntime: an OrtValue in memory of ONNX Runtime's CPU allocator
(OrtValue.ortvalue_from_shape_and_type, then update_inplace with the values),
OrtValue.from_dlpack."""
import numpy as np

import dl
from peers import ALL_DTYPES, FLOAT8, Peer


class OnnxruntimePeer(Peer):
    name = "onnxruntime"
    module = "onnxruntime"
    # made through numpy, which has no bfloat16; OrtValue.from_dlpack takes one, and
    # float8 and (packed) float4 tensors
    dtypes = ALL_DTYPES - {"bfloat16"}
    imports = ALL_DTYPES | FLOAT8 | {"float4_e2m1fn"}
    dist = "onnxruntime"

    def __init__(self):
        import onnxruntime
        self.OrtValue = onnxruntime.OrtValue

    def make(self, values, shape, dtype):
        v = self.OrtValue.ortvalue_from_shape_and_type(list(shape), np.dtype(dtype), "cpu", 0)
        v.update_inplace(values.reshape(shape))
        return v

    def from_dlpack(self, obj):
        return self.OrtValue.from_dlpack(obj)

    def tolist(self, arr):
        dtype = self.dtype(arr)
        if dtype in dl.ML_DTYPES:  # ml_dtypes' types: OrtValue.numpy() has no numpy type
            return dl.read_memory(arr.data_ptr(), self.shape(arr), dtype)
        return arr.numpy().tolist()

    def dtype(self, arr):
        name = arr.data_type()  # "tensor(float)"
        name = name[len("tensor("):-1] if name.startswith("tensor(") else name
        return {"float": "float32", "double": "float64", "float8e4m3fn": "float8_e4m3fn",
                "float8e5m2": "float8_e5m2", "float4e2m1": "float4_e2m1fn"}.get(name, name)

    def shape(self, arr):
        return tuple(arr.shape())

    def data_ptr(self, arr):
        return arr.data_ptr()
