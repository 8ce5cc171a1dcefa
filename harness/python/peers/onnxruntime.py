"""onnxruntime: an OrtValue in memory of ONNX Runtime's CPU allocator
(OrtValue.ortvalue_from_shape_and_type, then update_inplace with the values),
OrtValue.from_dlpack."""
import numpy as np

from peers import ALL_DTYPES, Peer


class OnnxruntimePeer(Peer):
    name = "onnxruntime"
    module = "onnxruntime"
    # made and read through numpy, which has no bfloat16
    dtypes = imports = ALL_DTYPES - {"bfloat16"}
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
        return arr.numpy().tolist()

    def dtype(self, arr):
        return arr.numpy().dtype.name

    def shape(self, arr):
        return tuple(arr.shape())

    def data_ptr(self, arr):
        return arr.data_ptr()
