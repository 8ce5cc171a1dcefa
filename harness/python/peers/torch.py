"""torch: PyTorch as Debian 12 ships it (python3-torch 1.13, in /usr/bin/python3: `make
interop-system`); optional, so the .venv's matrix, which has no torch, leaves it out.
Producer: torch.tensor, exported by Tensor.__dlpack__(stream), which has no max_version
and returns legacy capsules only. Consumer: torch.utils.dlpack.from_dlpack, which calls
__dlpack__() with no arguments."""
import numpy as np

from peers import ALL_DTYPES, COMPLEX, Peer, slice_index


class TorchPeer(Peer):
    name = "torch"
    module = "torch"
    # torch 1.13 has no uint16, uint32 or uint64; bfloat16 it has, but makes it here
    # through numpy, which has none
    dtypes = ALL_DTYPES - {"uint16", "uint32", "uint64", "bfloat16"} | COMPLEX
    imports = ALL_DTYPES - {"uint16", "uint32", "uint64"} | COMPLEX
    dist = "torch"
    optional = True

    def __init__(self):
        import torch
        import torch.utils.dlpack
        self.torch = torch
        # torch 1.13's DLPack (aten/src/ATen/DLConvertor.cpp, DLPack 0.6) predates
        # kDLBool: it exports no bool tensor (RuntimeError "Bool type is not supported by
        # dlpack") and imports none ("Unsupported code 6"). A dtype the vendored DLPack
        # has no code for is refused, which DLPack allows: without bool, a bool case is
        # NotSupported for it and a bool import must be refused.
        try:
            torch.utils.dlpack.to_dlpack(torch.zeros(1, dtype=torch.bool))
        except RuntimeError:
            self.dtypes = self.dtypes - {"bool"}
            self.imports = self.imports - {"bool"}

    def make(self, values, shape, dtype):
        return self.torch.tensor(np.array(values, dtype=dtype).reshape(shape))

    def from_dlpack(self, obj):
        return self.torch.utils.dlpack.from_dlpack(obj)

    def unexportable(self, what):
        t = self.torch
        if what == "dtype":
            return t.quantize_per_tensor(t.arange(5.0), 1.0, 0, t.quint8)
        if what == "layout":
            return t.arange(5.0).to_sparse()
        if what == "conj":
            return t.tensor([1 + 2j, 3 - 1j]).conj()
        if what == "grad":
            return t.arange(5.0, requires_grad=True)
        return None  # byteorder: torch has native byte order alone

    def writeable(self, arr):
        return True  # torch tensors have no read-only flag

    def view(self, arr, how):  # a negative step raises ValueError: torch has none
        if how[0] == "readonly":
            return None  # torch tensors have no read-only flag
        if how[0] == "strided":  # torch's strides count elements
            size = arr.element_size()
            if any(s % size for s in how[2]):
                return None
            return arr.as_strided(how[1], [s // size for s in how[2]])
        if how[0] == "transpose":
            return arr.permute(*reversed(range(arr.dim())))
        return arr[slice_index(how)]

    def tolist(self, arr):
        return arr.tolist()

    def dtype(self, arr):
        return str(arr.dtype).replace("torch.", "")

    def data_ptr(self, arr):
        return arr.data_ptr()
