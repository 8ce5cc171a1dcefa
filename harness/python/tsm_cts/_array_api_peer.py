"""A peer for any array module the bridge has no peer module of: one class per module
named on $TSM_CTS_ARRAY_MODULES (comma-separated; tsm_cts.worker and `python -m tsm_cts
run --peer MODULE` set it), each judged through the calls the array API standard gives
every conforming library: xp.asarray (producer), x.__dlpack__ and xp.from_dlpack
(consumer), x.shape, x.dtype compared with xp's dtype objects, xp.permute_dims.

Loaded by the bridge's peer search (peers/__init__.py) like a user's peer module, so it
imports `peers` as they do. What the array API leaves open is left out, and the cases
that need it are NotSupported: read-only and strided views, unexportable arrays, the
writeable flag. The data pointer (the bridge's use-after-free check) is read where the
array offers numpy's __array_interface__ or a data_ptr() method.
"""
import importlib
import os

import numpy as np

from peers import ALL_DTYPES, COMPLEX, FLOAT8, Peer

ENV = "TSM_CTS_ARRAY_MODULES"
# what numpy (values arrive as numpy arrays) can hand to xp.asarray
MAKEABLE = (ALL_DTYPES - {"bfloat16"}) | COMPLEX


def _dist(module):
    """The PyPI distribution that provides the top-level module, for the report."""
    from importlib import metadata
    try:
        return (metadata.packages_distributions().get(module.split(".")[0]) or [None])[0]
    except Exception:  # noqa: BLE001 - no metadata: the report names no version
        return None


class _ArrayApi:
    """What every generated peer class does; `module` names the array module."""

    def __init__(self):
        xp = importlib.import_module(self.module)
        self.xp = xp
        have = {d for d in ALL_DTYPES | COMPLEX | FLOAT8 if hasattr(xp, d)}
        self.dtypes = have & MAKEABLE
        self.imports = have
        probe = xp.asarray(np.zeros(1, "float32"))
        self.from_keywords = frozenset()
        if hasattr(xp, "from_dlpack") and hasattr(probe, "__dlpack__"):
            try:  # copy= and device= came with the array API's 2023.12 revision
                xp.from_dlpack(probe, copy=None, device=None)
                self.from_keywords = frozenset({"copy", "device"})
            except TypeError:
                pass
        self.cpu = getattr(probe, "device", None)
        self.cpu_pair = tuple(int(i) for i in probe.__dlpack_device__()) \
            if hasattr(probe, "__dlpack_device__") else None
        self.array_type = type(probe)

    def make(self, values, shape, dtype):
        return self.xp.asarray(values.reshape(shape), dtype=getattr(self.xp, dtype))

    def from_dlpack(self, obj, **kw):
        return self.xp.from_dlpack(obj, **kw)

    def tolist(self, arr):
        if hasattr(arr, "tolist"):
            return arr.tolist()
        return np.asarray(arr).tolist()

    def dtype(self, arr):
        for name in sorted(self.imports):
            try:
                if arr.dtype == getattr(self.xp, name):
                    return name
            except TypeError:
                continue
        return str(arr.dtype)

    def view(self, arr, how):
        if how[0] == "slice":
            from peers import slice_index
            return arr[slice_index(how)]
        if how[0] == "transpose" and hasattr(self.xp, "permute_dims"):
            return self.xp.permute_dims(arr, tuple(reversed(range(len(arr.shape)))))
        return None

    def device_object(self, pair):
        if self.cpu is not None and tuple(pair) == self.cpu_pair == (1, 0):
            return self.cpu
        return None

    def data_ptr(self, arr):
        face = getattr(arr, "__array_interface__", None)
        if face:
            return face["data"][0]
        ptr = getattr(arr, "data_ptr", None)
        return ptr() if callable(ptr) else None

    def exchange_type(self):
        return self.array_type if hasattr(self.array_type, "__dlpack_c_exchange_api__") \
            else None

    def exchange_object(self, arr):
        return arr if self.exchange_type() is not None else None


def _lacks(module):
    """The roles the module has no call for (the bridge reads Peer.lacks from the class,
    before any run, so the module is imported here; a missing one lacks nothing here, and
    the run stops naming it)."""
    try:
        xp = importlib.import_module(module)
        arr = xp.asarray(np.zeros(1, "float32"))
    except Exception:  # noqa: BLE001
        return {}
    lacks = {}
    if not hasattr(arr, "__dlpack__"):
        lacks["producer"] = f"{module}'s arrays have no __dlpack__"
    if not hasattr(xp, "from_dlpack"):
        lacks["consumer"] = f"{module} has no from_dlpack"
    return lacks


for _m in [m for m in os.environ.get(ENV, "").split(",") if m]:
    _cls = "ArrayApi_" + "".join(ch if ch.isalnum() else "_" for ch in _m)
    globals()[_cls] = type(_cls, (_ArrayApi, Peer), {
        "name": _m, "module": _m, "dist": _dist(_m), "optional": False, "lacks": _lacks(_m),
        "__module__": __name__, "__doc__": f"{_m} through the array API's calls"})
