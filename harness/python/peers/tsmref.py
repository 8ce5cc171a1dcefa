"""tsmref: the reference library's extension (impl/python), producer and consumer."""
from peers import Peer


class TsmrefPeer(Peer):
    name = "tsmref"
    module = "tsmref"
    reference = True

    def __init__(self):
        import tsmref
        self.m = tsmref

    def make(self, values, shape, dtype):
        # values is a flat numpy array of dtype: handed over as a buffer of its bytes (a
        # bfloat16 array has no buffer format of its own), not a list
        return self.m.tensor(values.view("uint8"), shape=tuple(shape), dtype=dtype)

    def from_dlpack(self, obj):
        return self.m.from_dlpack(obj)

    def tolist(self, arr):
        return arr.tolist()

    def dtype(self, arr):
        return arr.dtype

    def exchange_type(self):
        return self.m.Tensor

    def exchange_object(self, arr):
        return arr
