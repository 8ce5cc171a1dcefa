"""mlx: an mlx.core.array on mlx's CPU backend (the PyPI mlx with mlx-cpu),
mlx.core.from_dlpack."""
import numpy as np

from peers import ALL_DTYPES, COMPLEX, Peer


class MlxPeer(Peer):
    name = "mlx"
    module = "mlx"
    # mx.array of a float64 numpy array is float32 (mlx's default float type)
    dtypes = ALL_DTYPES - {"float64"} | {"complex64"}
    imports = ALL_DTYPES | COMPLEX
    dist = "mlx"

    def __init__(self):
        import mlx.core
        self.mx = mlx.core
        # mlx keeps freed buffers in a cache up to its memory limit, which RSS counts:
        # while a consumer releases late (jaxlib), the cache keeps the peak of buffers in
        # flight, and DLP.PY.ROUND.1's RSS bound would measure mlx's allocator policy,
        # not a leak. Without the cache a released buffer goes back to malloc.
        self.mx.set_cache_limit(0)

    def make(self, values, shape, dtype):
        arr = self.mx.array(values.reshape(shape))
        self.mx.eval(arr)  # mlx is lazy: the buffer exists once evaluated
        return arr

    def from_dlpack(self, obj):
        return self.mx.from_dlpack(obj)

    def tolist(self, arr):
        # numpy has no bfloat16 (np.asarray raises "'bfloat16' is not a valid PEP 3118
        # buffer format string"): its values are exactly float32's
        if arr.dtype == self.mx.bfloat16:
            arr = arr.astype(self.mx.float32)
        return np.asarray(arr).tolist()

    def dtype(self, arr):
        return str(arr.dtype).rsplit(".", 1)[-1]

    def data_ptr(self, arr):
        # The buffer protocol hands out mlx's own storage, not a copy; it has no format
        # for bfloat16, whose address is then unknown (None).
        if not arr.size or arr.dtype == self.mx.bfloat16:
            return None
        return np.asarray(arr).__array_interface__["data"][0]
