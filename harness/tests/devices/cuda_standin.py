"""cuda_standin.py: a CPU stand-in for a CUDA framework, for the bridge's device paths
without a GPU (harness/tests/check_bridge_devices.sh; never a GPU result).

Loaded with `bridge.py run --peer-path harness/tests/devices/cuda_standin.py --device
cuda:0`. Its arrays say they are on cuda:0 (`__dlpack_device__()` is (kDLCUDA, 0), and so
is their capsules' DLTensor device) while their memory is host memory (numpy arrays), so
that the bridge and the cases' device checks run end to end on a CPU:

  cuda-standin         a correct CUDA producer and consumer as the array API describes
                       it: stream None, -1, 1, 2 and > 2 accepted, 0 and a stream that
                       is no integer refused; dl_device (1, 0) answered with a host copy
                       (IS_COPIED on a versioned capsule), refused with BufferError under
                       copy=False; another dl_device refused with BufferError; copy=True
                       copies. Its from_dlpack passes copy and device on as dl_device and
                       refuses a capsule on another device than the one it asked for.
  cuda-standin-broken  the same, except that its __dlpack__ ignores dl_device (a kDLCUDA
                       capsule of its memory whatever was asked), hands out a host copy
                       for dl_device (1, 0) with copy=False instead of raising,
                       accepts stream 0 and refuses a real stream (an integer above 2):
                       the device cases must fail it.

The capsules are built with the ctypes structures of harness/python/dl.py: a versioned or
legacy managed tensor over the array's (or its copy's) memory, whose deleter drops that
memory and whose capsule destructor runs the deleter only while the capsule is unconsumed.
"""
import ctypes

import numpy as np

import dl
from peers import ALL_DTYPES, COMPLEX, Peer

KDLCPU, KDLCUDA = 1, 2
CUDA0 = (KDLCUDA, 0)
_api = ctypes.pythonapi
_NAMES = {n: ctypes.create_string_buffer(n.encode())  # PyCapsule keeps the pointer
          for n in ("dltensor", "dltensor_versioned", "used_dltensor", "used_dltensor_versioned")}
_LIVE = {}  # managed tensor address -> what it holds, until its deleter runs


def _deleter(ptr):
    _LIVE.pop(ptr, None)


_DELETER = dl.DELETER(_deleter)


def _destructor(capptr):
    """A producer's capsule destructor (DLP.PY.DTOR.1): the deleter of an unconsumed
    capsule only, through the struct's field (which the bridge's probe wraps)."""
    name = dl._GetNameRaw(capptr)
    if name not in (b"dltensor", b"dltensor_versioned"):
        return
    ptr = dl._GetPointerRaw(capptr, name)
    m = dl.managed(ptr, name == b"dltensor_versioned")
    if m.deleter:
        dl.DELETER(m.deleter)(ptr)


_DESTRUCTOR = dl.DESTRUCTOR(_destructor)


def capsule(host, device, versioned, copied, owner):
    """A capsule of host's memory (a numpy array) that says it is on device."""
    mt = dl.DLManagedTensorVersioned() if versioned else dl.DLManagedTensor()
    n = host.ndim
    shape = (ctypes.c_int64 * max(n, 1))(*host.shape)
    strides = (ctypes.c_int64 * max(n, 1))(*[s // host.itemsize for s in host.strides])
    t = mt.dl_tensor
    t.data = host.__array_interface__["data"][0] if host.size else None
    t.device.device_type, t.device.device_id = device
    t.ndim = n
    code = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}[host.dtype.kind]
    t.dtype.code, t.dtype.bits, t.dtype.lanes = code, host.itemsize * 8, 1
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    if versioned:
        mt.version.major, mt.version.minor = 1, 3
        mt.flags = dl.FLAG_IS_COPIED if copied else 0
    mt.deleter = ctypes.cast(_DELETER, ctypes.c_void_p).value
    ptr = ctypes.addressof(mt)
    _LIVE[ptr] = (mt, shape, strides, host, owner)
    name = _NAMES["dltensor_versioned" if versioned else "dltensor"]
    return _api.PyCapsule_New(ptr, ctypes.cast(name, ctypes.c_char_p),
                              ctypes.cast(_DESTRUCTOR, ctypes.c_void_p).value)


def check_stream(stream):
    """The array API's CUDA values of stream: None, -1, 1, 2 or > 2; 0 is ambiguous."""
    if stream is None:
        return
    if not isinstance(stream, int) or isinstance(stream, bool):
        raise TypeError(f"stream must be None or an integer on CUDA, not {type(stream).__name__}")
    if stream == 0 or stream < -1:
        raise ValueError(f"stream {stream} is not a CUDA stream value (0 is ambiguous)")


class StandinArray:
    """An array that says it is on `device` (cuda:0) over host memory, `host`."""

    def __init__(self, host, device=CUDA0, owner=None):
        self.host, self.device = host, tuple(device)
        self._owner = owner  # an import's managed tensor, released when this array goes

    @property
    def shape(self):
        return self.host.shape

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        versioned = max_version is not None and tuple(max_version) >= (1, 0)
        target = self.target(dl_device, copy)
        self.check_stream(stream)
        copied = bool(copy) or target != self.device
        if copied and not versioned:
            if copy:  # DLP.PY.ARGS.2 (b): no flag to say IS_COPIED on the legacy form
                raise BufferError("copy=True needs a versioned capsule (max_version >= (1, 0))")
        host = np.array(self.host, copy=True) if copied else self.host
        return capsule(host, target, versioned, copied, self)

    def target(self, dl_device, copy):
        """The device the capsule is to be on: this array's, or the host's by a copy."""
        if dl_device is None or tuple(dl_device) == self.device:
            return self.device
        if tuple(dl_device) != (KDLCPU, 0):
            raise BufferError(f"cannot export an array on {self.device} to {tuple(dl_device)}")
        if copy is False:
            raise BufferError(f"dl_device {tuple(dl_device)} needs a copy of an array on "
                              f"{self.device}, and copy=False")
        return (KDLCPU, 0)

    check_stream = staticmethod(check_stream)


class BrokenArray(StandinArray):
    """Ignores dl_device (its own device's capsule, shared, whatever was asked), except
    that dl_device (1, 0) with copy=False gets a host copy (copy=False across devices
    accepted); accepts stream 0 and refuses a real stream (above 2)."""

    def target(self, dl_device, copy):
        if dl_device is not None and tuple(dl_device) == (KDLCPU, 0) and copy is False:
            return (KDLCPU, 0)
        return self.device

    @staticmethod
    def check_stream(stream):
        if isinstance(stream, int) and stream > 2:
            raise ValueError(f"stream {stream}: only the default streams")
        if stream != 0:
            check_stream(stream)


class _Imported:
    """A managed tensor the stand-in took: runs its deleter once, when it goes."""

    def __init__(self, ptr, versioned):
        self.ptr, self.versioned = ptr, versioned

    def __del__(self):
        m = dl.managed(self.ptr, self.versioned)
        if m.deleter:
            dl.DELETER(m.deleter)(self.ptr)


DEVICE_OBJECTS = {"cpu": (KDLCPU, 0), "cuda:0": CUDA0}


class CudaStandinPeer(Peer):
    name = "cuda-standin"
    module = None  # nothing to import: numpy and ctypes
    dist = None
    optional = False
    dtypes = imports = ALL_DTYPES - {"bfloat16"} | COMPLEX
    from_keywords = frozenset({"copy", "device"})
    array_type = StandinArray

    def devices(self):
        return [CUDA0]  # like CuPy: no host arrays of its own

    def make(self, values, shape, dtype):
        raise NotImplementedError("the stand-in makes arrays on cuda:0 alone")

    def make_on(self, values, shape, dtype, device):
        if tuple(device) != CUDA0:
            raise NotImplementedError(f"the stand-in makes no arrays on {device}")
        return self.array_type(values.reshape(shape))

    def device_object(self, pair):
        return {v: k for k, v in DEVICE_OBJECTS.items()}.get(tuple(pair))

    def new_stream(self, device):
        # a stream's integer as a CUDA framework gives it (an address, above 2); the
        # stand-in's work is done when __dlpack__ returns, so it has nothing to wait for
        if tuple(device) != CUDA0:
            raise NotImplementedError(f"the stand-in has no streams on {device}")
        keep = object()
        return 0x7F0000000000 + (id(keep) & 0xFFFFF0), keep

    def from_dlpack(self, obj, copy=None, device=None):
        kw = {"max_version": (1, 3)}
        if copy is not None:
            kw["copy"] = copy
        want = DEVICE_OBJECTS[device] if device is not None else None
        if want is not None:
            kw["dl_device"] = want
        cap = obj.__dlpack__(**kw)
        name = dl.capsule_name(cap)
        if name not in ("dltensor", "dltensor_versioned"):
            raise BufferError(f"not an unconsumed DLPack capsule: {name!r}")
        versioned = name == "dltensor_versioned"
        ptr = dl.capsule_pointer(cap)
        t = dl.managed(ptr, versioned).dl_tensor
        got = (t.device.device_type, t.device.device_id)
        if got not in (CUDA0, (KDLCPU, 0)) or (want is not None and got != want):
            # refused before taking it: name and destructor as they were
            raise BufferError(f"the stand-in takes no tensor on {got}"
                              + (f" (it asked for {want})" if want is not None else ""))
        dl.set_capsule_name(cap, "used_" + name)
        owner = _Imported(ptr, versioned)
        shape = [t.shape[i] for i in range(t.ndim)]
        strides = [t.strides[i] for i in range(t.ndim)] if t.strides else None
        host = dl._at(t.data or 0, t.byte_offset, shape, dl.np_dtype(dl.dtype_name(t.dtype)),
                      strides)
        return self.array_type(host, got, owner)

    def tolist(self, arr):
        return arr.host.tolist()  # "copied to the host": it is there already

    def dtype(self, arr):
        return arr.host.dtype.name

    def data_ptr(self, arr):
        return arr.host.__array_interface__["data"][0]

    def writeable(self, arr):
        return True


class BrokenCudaStandinPeer(CudaStandinPeer):
    name = "cuda-standin-broken"
    array_type = BrokenArray
