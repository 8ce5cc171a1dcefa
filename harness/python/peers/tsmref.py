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

    from_keywords = frozenset({"copy", "device"})

    def device_object(self, pair):
        # the extension's one context is on the device $TSMREF_PY_DEVICE names (default
        # the CPU; cuda:N, or its simulation on the CPU, cuda-sim:N): only that one
        if tuple(pair) != tuple(self.m.device):
            return None
        return "cpu" if tuple(pair) == (1, 0) else tuple(pair)

    # bridge.py run --device: the context's device alone
    def devices(self):
        return [tuple(self.m.device)]

    def make_on(self, values, shape, dtype, device):
        return self.make(values, shape, dtype)

    def from_dlpack(self, obj, **kw):
        return self.m.from_dlpack(obj, **kw)

    def data_ptr(self, arr):
        # tsmref's Tensor shows no address: a CPU export aliases the storage (DLP.MGR.3),
        # so its DLTensor's data + byte_offset is the address; the capsule dies
        # unconsumed here, its deleter run by its destructor
        import dl
        cap = arr.__dlpack__(max_version=(1, 0))
        versioned = dl.capsule_name(cap).endswith("versioned")
        t = dl.managed(dl.capsule_pointer(cap), versioned).dl_tensor
        return (t.data or 0) + t.byte_offset

    def tolist(self, arr):
        return arr.tolist()

    def dtype(self, arr):
        return arr.dtype

    def exchange_type(self):
        return self.m.Tensor

    def exchange_object(self, arr):
        return arr
