"""torch: PyTorch, as Debian 12 ships it (python3-torch 1.13, in /usr/bin/python3: `make
interop-system`) and as PyPI's newest release (`make deps-torch`, lane torch of `make check`,
harness/tests/check_torch.sh); optional, so the .venv's matrix, which has no torch, leaves
it out. What the installed torch offers is asked of it, not assumed from its version:
Producer: torch.tensor, exported by Tensor.__dlpack__ (1.13: stream only, legacy capsules;
2.x: max_version, dl_device, copy and versioned capsules). Consumer:
torch.utils.dlpack.from_dlpack (torch.from_dlpack in 2.x), with copy= and device= where it
takes them. Exchange table: torch.Tensor's __dlpack_c_exchange_api__ where it has one."""
import numpy as np

from peers import ALL_DTYPES, COMPLEX, FLOAT8, Peer, slice_index

# Made through numpy, which holds these only as ml_dtypes' types: made as their bits
# (an unsigned integer array of the same width) and viewed as torch's type.
BITS = {"bfloat16": np.uint16, "float8_e4m3fn": np.uint8, "float8_e5m2": np.uint8}


class TorchPeer(Peer):
    name = "torch"
    module = "torch"
    dist = "torch"
    optional = True

    def __init__(self):
        import torch
        import torch.utils.dlpack
        self.torch = torch
        # Each dtype that torch has and exports and imports through DLPack. torch 1.13
        # has no uint16, uint32, uint64 or float8 types, and its DLPack
        # (aten/src/ATen/DLConvertor.cpp, DLPack 0.6) predates kDLBool: it exports no bool
        # tensor (RuntimeError "Bool type is not supported by dlpack") and imports none
        # ("Unsupported code 6"). A dtype its DLPack has no code for is refused, which
        # DLPack allows: such a case is NotSupported for it, and an import of it must be
        # refused.
        have = set()
        for name in ALL_DTYPES | COMPLEX | FLOAT8:
            t = getattr(torch, name, None)
            if t is None:
                continue
            try:
                torch.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(torch.zeros(1, dtype=t)))
            except (RuntimeError, TypeError, BufferError):
                continue
            have.add(name)
        self.imports = frozenset(have)
        self.dtypes = frozenset(d for d in have if d not in BITS or self.ml_dtypes())
        # from_dlpack takes copy= and device= since torch 2.8 (the array API's 2023.12)
        try:
            torch.utils.dlpack.from_dlpack(np.zeros(1), copy=None, device=None)
            self.from_keywords = frozenset({"copy", "device"})
        except TypeError:
            self.from_keywords = frozenset()

    @staticmethod
    def ml_dtypes():
        try:
            import ml_dtypes  # noqa: F401 - the bridge's values of these types need it
            return True
        except ImportError:
            return False

    def make(self, values, shape, dtype):
        if dtype in BITS:
            bits = self.torch.from_numpy(np.ascontiguousarray(values).view(BITS[dtype]).copy())
            return bits.view(getattr(self.torch, dtype)).reshape(shape)
        return self.torch.tensor(np.array(values, dtype=dtype).reshape(shape))

    def from_dlpack(self, obj, **kw):
        return self.torch.utils.dlpack.from_dlpack(obj, **kw)

    def device_object(self, pair):
        return self.torch.device("cpu") if tuple(pair) == (1, 0) else None

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

    # DLPack 1.3's exchange table (spec/dlpack.md DLP.XAPI.*): torch.Tensor publishes one
    # where the installed torch has __dlpack_c_exchange_api__ (2.x); 1.13 has none.
    def exchange_type(self):
        return self.torch.Tensor if hasattr(self.torch.Tensor, "__dlpack_c_exchange_api__") \
            else None

    def exchange_object(self, arr):
        return arr if self.exchange_type() is not None else None

    # bridge.py run --device cuda:N: CUDA tensors where this torch has CUDA and a GPU
    # (torch.cuda.is_available()), made on the CPU and moved there with Tensor.to;
    # tolist copies them back.
    def devices(self):
        cuda = self.torch.cuda
        gpus = [(2, i) for i in range(cuda.device_count())] if cuda.is_available() else []
        return [(1, 0)] + gpus

    def new_stream(self, device):
        if tuple(device)[0] != 2:
            raise NotImplementedError(f"torch makes no streams on {device}")
        s = self.torch.cuda.Stream(device=f"cuda:{device[1]}")
        return s.cuda_stream, s

    def make_on(self, values, shape, dtype, device):
        arr = self.make(values, shape, dtype)
        if tuple(device) == (1, 0):
            return arr
        out = arr.to(f"cuda:{device[1]}")
        self.torch.cuda.synchronize(device[1])  # the copy is done before any export
        return out
