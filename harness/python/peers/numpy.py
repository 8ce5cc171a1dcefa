"""numpy: numpy.ndarray's __dlpack__, numpy.from_dlpack."""
import numpy as np

from peers import ALL_DTYPES, Peer


class NumpyPeer(Peer):
    name = "numpy"
    module = "numpy"
    # numpy has no bfloat16 (ml_dtypes' arrays it cannot export: "DLPack only supports
    # signed/unsigned integers, float and complex dtypes"), nor imports one
    dtypes = imports = ALL_DTYPES - {"bfloat16"}
    dist = "numpy"

    def make(self, values, shape, dtype):
        return values.reshape(shape)

    def from_dlpack(self, obj):
        return np.from_dlpack(obj)

    def tolist(self, arr):
        return arr.tolist()

    def dtype(self, arr):
        return arr.dtype.name

    def data_ptr(self, arr):
        return arr.__array_interface__["data"][0]
