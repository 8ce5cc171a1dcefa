"""tinyarray: a small array module of a user's, for the wheel's lane (check_wheel.sh) and
the plugin's self-tests (test_plugin.py), which copy it outside the checkout and name it
to the plugin as `--tsm-peer=tinyarray`. The plugin has no peer module of it, so it is
judged through the array API's calls alone (tsm_cts/_array_api_peer.py): asarray,
from_dlpack, __dlpack__, __dlpack_device__, shape, dtype, permute_dims. Its arrays hold
a numpy array and export and import through numpy's DLPack, as a thin library over
another's memory does.
"""
import numpy as np

bool = np.bool_  # noqa: A001 - the array API's names of the dtypes
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128


class Array:
    def __init__(self, data):
        self._data = data

    def __dlpack__(self, **kw):
        return self._data.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    @property
    def shape(self):
        return self._data.shape

    @property
    def dtype(self):
        return self._data.dtype

    @property
    def device(self):
        return "cpu"

    @property
    def __array_interface__(self):
        return self._data.__array_interface__

    def __getitem__(self, index):
        return Array(self._data[index])

    def tolist(self):
        return self._data.tolist()


def asarray(obj, dtype=None):
    return Array(np.asarray(obj, dtype=dtype))


def from_dlpack(x, *, device=None, copy=None):
    return Array(np.from_dlpack(x, device=device, copy=copy))


def permute_dims(x, axes):
    return Array(np.permute_dims(x._data, axes))
