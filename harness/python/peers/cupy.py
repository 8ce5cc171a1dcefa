"""cupy: CuPy's cupy.ndarray (GPU memory alone), cupy.from_dlpack.

Optional and not pinned in deps.mk: CuPy's wheels are built per CUDA major version
(cupy-cuda12x, cupy-cuda13x), and a CuPy without a GPU can import but make no array, so
it joins only the matrix of a GPU machine (`bridge.py run --device cuda:0`, lane
interop-cuda of ci/check-gpu.sh) in whatever Python that machine has. Its arrays are on
cuda:N alone: on a CPU run (the default) it is NotSupported as a producer; as a consumer
it takes what cupy.from_dlpack takes. tolist copies to the host (ndarray.get).
"""
from importlib import metadata

import numpy as np

from peers import ALL_DTYPES, COMPLEX, Peer, slice_index


def _dist():
    """The installed CuPy distribution: one wheel per CUDA major version."""
    for name in ("cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x", "cupy"):
        try:
            metadata.version(name)
            return name
        except metadata.PackageNotFoundError:
            continue
    return "cupy"


class CupyPeer(Peer):
    name = "cupy"
    module = "cupy"
    dist = _dist()
    optional = True
    # CuPy has no bfloat16 or float8 arrays
    dtypes = imports = ALL_DTYPES - {"bfloat16"} | COMPLEX

    def __init__(self):
        import cupy
        self.cp = cupy
        # from_dlpack takes copy= and device= in CuPy 14 (the array API's 2023.12); a
        # probe needs a GPU, and without one there is nothing to import anyway
        try:
            cupy.from_dlpack(cupy.zeros(1), copy=None, device=None)
            self.from_keywords = frozenset({"copy", "device"})
        except Exception:  # noqa: BLE001 - TypeError (no keywords) or no GPU
            self.from_keywords = frozenset()

    def devices(self):
        try:
            n = self.cp.cuda.runtime.getDeviceCount()
        except Exception:  # noqa: BLE001 - CUDARuntimeError: no driver or no GPU
            n = 0
        return [(2, i) for i in range(n)]

    def make(self, values, shape, dtype):
        raise NotImplementedError("CuPy has no host arrays: make_on a cuda device")

    def make_on(self, values, shape, dtype, device):
        if tuple(device)[0] != 2:
            raise NotImplementedError(f"CuPy makes no arrays on {device}")
        with self.cp.cuda.Device(device[1]):
            arr = self.cp.asarray(np.ascontiguousarray(values).reshape(shape))
            self.cp.cuda.Device(device[1]).synchronize()
        return arr

    def new_stream(self, device):
        if tuple(device)[0] != 2:
            raise NotImplementedError(f"CuPy makes no streams on {device}")
        with self.cp.cuda.Device(device[1]):
            s = self.cp.cuda.Stream()
        return s.ptr, s

    def from_dlpack(self, obj, **kw):
        return self.cp.from_dlpack(obj, **kw)

    def device_object(self, pair):
        return self.cp.cuda.Device(pair[1]) if tuple(pair)[0] == 2 else None

    def tolist(self, arr):
        return arr.get().tolist()

    def dtype(self, arr):
        return arr.dtype.name

    def data_ptr(self, arr):
        return arr.data.ptr

    def writeable(self, arr):
        return True  # CuPy arrays have no read-only flag

    def view(self, arr, how):
        if how[0] == "transpose":
            return arr.T
        if how[0] == "slice":
            return arr[slice_index(how)]
        return None
