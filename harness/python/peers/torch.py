"""torch: PyTorch as Debian 12 ships it (python3-torch 1.13, in /usr/bin/python3: `make
interop-system`); optional, so the .venv's matrix, which has no torch, leaves it out.
Producer: torch.tensor, exported by Tensor.__dlpack__(stream), which has no max_version
and returns legacy capsules only. Consumer: torch.utils.dlpack.from_dlpack, which calls
__dlpack__() with no arguments."""
import numpy as np

from peers import ALL_DTYPES, Peer, slice_index


class TorchPeer(Peer):
    name = "torch"
    module = "torch"
    # torch 1.13 has no uint16, uint32 or uint64; bfloat16 it has, but makes it here
    # through numpy, which has none
    dtypes = ALL_DTYPES - {"uint16", "uint32", "uint64", "bfloat16"}
    imports = ALL_DTYPES - {"uint16", "uint32", "uint64"}
    dist = "torch"
    optional = True

    def __init__(self):
        import torch
        import torch.utils.dlpack
        self.torch = torch

    def make(self, values, shape, dtype):
        return self.torch.tensor(np.array(values, dtype=dtype).reshape(shape))

    def from_dlpack(self, obj):
        return self.torch.utils.dlpack.from_dlpack(obj)

    def view(self, arr, how):  # a negative step raises ValueError: torch has none
        if how[0] == "readonly":
            return None  # torch tensors have no read-only flag
        if how[0] == "transpose":
            return arr.permute(*reversed(range(arr.dim())))
        return arr[slice_index(how)]

    def tolist(self, arr):
        return arr.tolist()

    def dtype(self, arr):
        return str(arr.dtype).replace("torch.", "")

    def data_ptr(self, arr):
        return arr.data_ptr()
