"""numpy: numpy.ndarray's __dlpack__, numpy.from_dlpack."""
import numpy as np

from peers import ALL_DTYPES, COMPLEX, Peer, slice_index


class NumpyPeer(Peer):
    name = "numpy"
    module = "numpy"
    # numpy has no bfloat16 (ml_dtypes' arrays it cannot export: "DLPack only supports
    # signed/unsigned integers, float and complex dtypes"), nor imports one
    dtypes = imports = ALL_DTYPES - {"bfloat16"} | COMPLEX
    dist = "numpy"

    def make(self, values, shape, dtype):
        return values.reshape(shape)

    def __init__(self):
        # numpy before 1.25 (Debian's 1.24) exports and imports no bool array: its DLPack
        # header predates kDLBool (DLPack 0.8), and __dlpack__ of a bool array raises
        # BufferError ("DLPack only supports signed/unsigned integers, float and complex
        # dtypes"), as the array API asks for a dtype DLPack cannot describe. Without
        # bool, a bool case is NotSupported for it and a bool import must be refused.
        try:
            np.zeros(1, dtype=bool).__dlpack__()
        except BufferError:
            self.dtypes = self.imports = self.dtypes - {"bool"}
        # np.from_dlpack takes copy= and device= since numpy 2.1 (Debian's 1.24 takes
        # no keyword)
        try:
            np.from_dlpack(np.zeros(1), copy=None, device=None)
            self.from_keywords = frozenset({"copy", "device"})
        except TypeError:
            self.from_keywords = frozenset()

    def unexportable(self, what):
        if what == "dtype":
            return np.array([0, 1, 2, 3, 4], dtype="datetime64[s]")
        if what == "byteorder":
            return np.arange(5, dtype=np.dtype("int32").newbyteorder())
        return None

    def device_object(self, pair):
        return "cpu" if tuple(pair) == (1, 0) else None

    def writeable(self, arr):
        return bool(arr.flags.writeable)

    def from_dlpack(self, obj, **kw):
        return np.from_dlpack(obj, **kw)

    def view(self, arr, how):
        if how[0] == "transpose":
            return arr.T
        if how[0] == "readonly":
            view = arr.view()
            view.flags.writeable = False
            return view
        if how[0] == "strided":
            return np.lib.stride_tricks.as_strided(arr, how[1], how[2])
        return arr[slice_index(how)]

    def tolist(self, arr):
        return arr.tolist()

    def dtype(self, arr):
        return arr.dtype.name

    def data_ptr(self, arr):
        return arr.__array_interface__["data"][0]
