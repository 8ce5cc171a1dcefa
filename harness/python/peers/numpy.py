"""numpy: numpy.ndarray's __dlpack__, numpy.from_dlpack."""
import numpy as np

from peers import ALL_DTYPES, Peer, slice_index


class NumpyPeer(Peer):
    name = "numpy"
    module = "numpy"
    # numpy has no bfloat16 (ml_dtypes' arrays it cannot export: "DLPack only supports
    # signed/unsigned integers, float and complex dtypes"), nor imports one
    dtypes = imports = ALL_DTYPES - {"bfloat16"}
    dist = "numpy"

    def make(self, values, shape, dtype):
        return values.reshape(shape)

    def __init__(self):
        # np.from_dlpack takes copy= since numpy 2.1 (Debian's 1.24 takes no keyword)
        try:
            np.from_dlpack(np.zeros(1), copy=None)
            self.from_keywords = frozenset({"copy"})
        except TypeError:
            self.from_keywords = frozenset()

    def from_dlpack(self, obj, **kw):
        return np.from_dlpack(obj, **kw)

    def view(self, arr, how):
        if how[0] == "transpose":
            return arr.T
        if how[0] == "readonly":
            view = arr.view()
            view.flags.writeable = False
            return view
        return arr[slice_index(how)]

    def tolist(self, arr):
        return arr.tolist()

    def dtype(self, arr):
        return arr.dtype.name

    def data_ptr(self, arr):
        return arr.__array_interface__["data"][0]
