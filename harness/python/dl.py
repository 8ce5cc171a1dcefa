"""dl.py: capsule internals through ctypes, for the Python bridge (spec/dlpack.md DLP.PY.*).

The DLManagedTensor / DLManagedTensorVersioned layouts are declared in ctypes from the
offsets of dmlc/dlpack's dlpack.h (x86-64: DLTensor 48 bytes, legacy
dl_tensor 0 / manager_ctx 48 / deleter 56; versioned version 0 / manager_ctx 8 /
deleter 16 / flags 24 / dl_tensor 32); a self-check asserts them at import.

Probe: wraps the deleter of a producer's managed tensor with a counting trampoline
that forwards the first call to the original deleter and refuses (and records) any
further call, so a double release is observed instead of crashing the process.

The managed tensors of the DLPack 1.3 exchange table (harness/python/xapi.py) come
without a capsule: the bridge wraps one it owns in a capsule of its own (capsule_of),
so that the capsule statements apply to it, and probes one it only passes on
(Probe(managed_ptr=...)). forge makes a versioned managed tensor in ctypes memory.
"""
import ctypes
import struct as _struct

import numpy as np

FLAG_READ_ONLY = 1 << 0
FLAG_IS_COPIED = 1 << 1
FLAG_SUBBYTE_PADDED = 1 << 2

KDLCPU = 1


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


assert ctypes.sizeof(DLTensor) == 48 and DLTensor.byte_offset.offset == 40
assert ctypes.sizeof(DLManagedTensor) == 64 and DLManagedTensor.deleter.offset == 56
assert ctypes.sizeof(DLManagedTensorVersioned) == 80
assert DLManagedTensorVersioned.deleter.offset == 16
assert DLManagedTensorVersioned.flags.offset == 24
assert DLManagedTensorVersioned.dl_tensor.offset == 32

_api = ctypes.pythonapi
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetDestructor.restype = ctypes.c_void_p
_api.PyCapsule_GetDestructor.argtypes = [ctypes.py_object]
_api.PyCapsule_SetDestructor.restype = ctypes.c_int
_api.PyCapsule_SetDestructor.argtypes = [ctypes.py_object, ctypes.c_void_p]
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
# Inside a destructor the capsule is dying: never wrap it into a py_object again.
_GetNameRaw = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.c_void_p)(("PyCapsule_GetName", _api))
_GetPointerRaw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))
DESTRUCTOR = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)

# PyCapsule keeps the const char* it is given: the names must outlive the capsules.
_NAMES = {n: ctypes.create_string_buffer(n.encode())
          for n in ("dltensor", "dltensor_versioned", "used_dltensor", "used_dltensor_versioned")}


def is_capsule(obj):
    return type(obj).__name__ == "PyCapsule"


def capsule_name(cap):
    n = _api.PyCapsule_GetName(cap)
    return None if n is None else n.decode()


def capsule_pointer(cap):
    """Pointer of a capsule under its current name (no ownership taken)."""
    name = _api.PyCapsule_GetName(cap)
    return _api.PyCapsule_GetPointer(cap, name)


def set_capsule_name(cap, name):
    """Renames a capsule (what a consumer does when it takes ownership)."""
    if _api.PyCapsule_SetName(cap, ctypes.cast(_NAMES[name], ctypes.c_char_p)) != 0:
        raise RuntimeError("PyCapsule_SetName failed")


def managed(ptr, versioned):
    cls = DLManagedTensorVersioned if versioned else DLManagedTensor
    return cls.from_address(ptr)


def _run_unconsumed(capptr):
    """The destructor of the bridge's capsules: DLP.PY.DTOR.1, as a producer's."""
    name = _GetNameRaw(capptr)
    if name != b"dltensor_versioned":
        return
    ptr = _GetPointerRaw(capptr, name)
    m = managed(ptr, True)
    if m.deleter:
        DELETER(m.deleter)(ptr)


_BRIDGE_DESTRUCTOR = DESTRUCTOR(_run_unconsumed)


def capsule_of(ptr):
    """A `dltensor_versioned` capsule around a versioned managed tensor the bridge owns;
    consuming the capsule hands the tensor over, and an unconsumed capsule's death runs
    its deleter."""
    return _api.PyCapsule_New(ptr, ctypes.cast(_NAMES["dltensor_versioned"], ctypes.c_char_p),
                              ctypes.cast(_BRIDGE_DESTRUCTOR, ctypes.c_void_p).value)


class Forged:
    """A versioned managed tensor the bridge makes (`forge`): elements 0, 1, 2, ... of a
    dtype, compact strides, any major version and device. Its memory stays in `live`
    until its deleter runs."""
    live = {}

    def __init__(self, shape, dtype, major, device, code=None):
        npdt = np.dtype(dtype)
        n_elems = int(np.prod(shape)) if shape else 1
        # with code, the dtype field says (code, bits) over bits / 8 bytes each
        self.values = (np.arange(n_elems, dtype=npdt) if code is None else
                       np.arange(n_elems * code[1] // 8, dtype=np.uint8))
        n = len(shape)
        self.shape = (ctypes.c_int64 * max(n, 1))(*shape)
        self.strides = (ctypes.c_int64 * max(n, 1))(*compact_strides(shape))
        mt = self.mt = DLManagedTensorVersioned()
        mt.version.major, mt.version.minor = major, 3
        mt.deleter = ctypes.cast(_FORGED_DELETER, ctypes.c_void_p).value
        t = mt.dl_tensor
        t.data = self.values.ctypes.data
        t.device.device_type, t.device.device_id = device
        t.ndim = n
        code_bits = tuple(code) if code is not None else (_DL_CODES[npdt.kind], npdt.itemsize * 8)
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code_bits[0], code_bits[1], 1
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        self.ptr = ctypes.addressof(mt)
        Forged.live[self.ptr] = self


_FORGED_DELETER = DELETER(lambda ptr: Forged.live.pop(ptr, None))
_DL_CODES = {"i": 0, "u": 1, "f": 2, "c": 5}


def compact_strides(shape):
    """Row-major strides in elements (an extent 0 counts as 1, as exporters do)."""
    out, acc = [], 1
    for extent in reversed(shape):
        out.insert(0, acc)
        acc *= max(extent, 1)
    return out


_NP_DTYPES = {(0, 8): np.int8, (0, 16): np.int16, (0, 32): np.int32, (0, 64): np.int64,
              (1, 8): np.uint8, (1, 16): np.uint16, (1, 32): np.uint32, (1, 64): np.uint64,
              (2, 16): np.float16, (2, 32): np.float32, (2, 64): np.float64, (6, 8): np.bool_,
              (5, 64): np.complex64, (5, 128): np.complex128}


# ml_dtypes' types (a dependency of jax; numpy has none) by DLPack code: kDLBfloat 4,
# kDLFloat8_e3m4 7, kDLFloat8_e4m3fn 10, kDLFloat8_e5m2 12, kDLFloat4_e2m1fn 17 (4 bits,
# held a byte each by ml_dtypes)
ML_DTYPES = {"bfloat16": (4, 16), "float8_e3m4": (7, 8), "float8_e4m3fn": (10, 8),
              "float8_e5m2": (12, 8), "float4_e2m1fn": (17, 4)}
try:
    import ml_dtypes
    for _name, _code in ML_DTYPES.items():
        _NP_DTYPES[_code] = np.dtype(getattr(ml_dtypes, _name))
except ImportError:
    ml_dtypes = None


def np_dtype(name):
    """numpy's dtype of a name numpy gives ("float32", "bfloat16"); LookupError for
    an ml_dtypes type without ml_dtypes (the case is then NotSupported)."""
    if name not in ML_DTYPES:
        return np.dtype(name)
    if ml_dtypes is None:
        raise LookupError(f"{name} needs the ml_dtypes package in this interpreter")
    return _NP_DTYPES[ML_DTYPES[name]]


def dtype_name(dt):
    t = _NP_DTYPES.get((dt.code, dt.bits))
    return np.dtype(t).name if t is not None and dt.lanes == 1 else f"code{dt.code}/{dt.bits}x{dt.lanes}"


def read_dltensor(t, padded=False):
    """Elements of a CPU DLTensor as a nested list (honours byte_offset and strides)."""
    return copy_dltensor(t, padded).tolist()


def copy_dltensor(t, padded=False):
    """Elements of a CPU DLTensor as a compact numpy array of its own (honours byte_offset
    and strides). A sub-byte dtype is packed little bit-endian unless padded (the
    versioned IS_SUBBYTE_TYPE_PADDED flag, DLP.IMPORT.10); packed, it must be compact."""
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = [t.strides[i] for i in range(t.ndim)] if t.strides else None
    npdt = np.dtype(_NP_DTYPES[(t.dtype.code, t.dtype.bits)])
    return _elements((t.data or 0) + t.byte_offset, shape, npdt, t.dtype.bits, strides,
                     padded).copy()


def read_memory(ptr, shape, dtype, strides=None):
    """Elements at a raw data pointer (a consumer's storage) as a nested list; a
    sub-byte dtype packed, as it arrived (DLP.IMPORT.10)."""
    bits = ML_DTYPES[dtype][1] if dtype in ML_DTYPES else 8
    return _elements(ptr, shape, np_dtype(dtype), bits, strides).tolist()


def _elements(ptr, shape, npdt, bits, strides, padded=False):
    """The elements at ptr: a view (strides in elements, None: compact), or for a
    sub-byte dtype that is not padded its packed elements unpacked."""
    if bits >= 8 or padded:
        return _at(ptr, 0, shape, npdt, strides)
    return _unpack_subbyte(ptr, shape, npdt, bits, strides)


def _unpack_subbyte(ptr, shape, npdt, bits, strides):
    """The elements of a packed sub-byte tensor at ptr (little bit-endian, compact), one
    byte each as ml_dtypes holds them."""
    n = int(np.prod(shape)) if shape else 1
    if strides is not None and n > 1 and list(strides) != compact_strides(shape):
        raise ValueError("a packed sub-byte tensor with strides that are not compact")
    per_byte = 8 // bits
    raw = (np.frombuffer((ctypes.c_uint8 * ((n + per_byte - 1) // per_byte)).from_address(ptr),
                         dtype=np.uint8) if n else np.zeros(0, np.uint8))
    codes = (raw[np.arange(n) // per_byte] >> ((np.arange(n) % per_byte) * bits)) & ((1 << bits) - 1)
    return codes.astype(np.uint8).view(npdt).reshape(shape)


def _at(data, byte_offset, shape, npdt, strides):
    """A numpy view of the elements at data + byte_offset, strides in elements (None:
    compact); a negative stride puts elements before element 0."""
    n = int(np.prod(shape)) if shape else 1
    if n == 0:
        return np.empty(shape, npdt)
    if strides is None:
        strides = list(np.empty(shape, npdt).strides)
    else:
        strides = [s * npdt.itemsize for s in strides]
    lo = sum(min(0, (s - 1) * st) for s, st in zip(shape, strides))
    hi = sum(max(0, (s - 1) * st) for s, st in zip(shape, strides)) + npdt.itemsize
    buf = (ctypes.c_char * (hi - lo)).from_address(data + byte_offset + lo)
    return np.ndarray(shape, npdt, buffer=buf, offset=-lo, strides=strides)


class Probe:
    """One managed tensor (a producer's capsule, or one passing through an exchange
    table), with its deleter wrapped by a counting trampoline.

    calls: how many times anyone called the deleter. A second call is recorded in
    `violations` and NOT forwarded (the original deleter already freed the struct).
    """
    snapshot_values = True
    registry = []  # probes stay alive: their trampolines must outlive every caller

    def __init__(self, cap=None, label="", managed_ptr=None):
        """Probes cap, a producer's capsule, or managed_ptr, a versioned managed tensor
        that passes through a table without a capsule (its destructor is not wrapped)."""
        self.label = label
        self.name_at_export = capsule_name(cap) if cap is not None else "dltensor_versioned"
        if self.name_at_export not in ("dltensor", "dltensor_versioned"):
            raise ValueError(f"capsule named {self.name_at_export!r} is not a DLPack export")
        self.versioned = self.name_at_export == "dltensor_versioned"
        self.ptr = capsule_pointer(cap) if cap is not None else managed_ptr
        m = managed(self.ptr, self.versioned)
        # Snapshot what checks need while the struct is alive.
        t = m.dl_tensor
        self.version = (m.version.major, m.version.minor) if self.versioned else None
        self.flags = m.flags if self.versioned else None
        self.ndim = t.ndim
        self.shape = [t.shape[i] for i in range(t.ndim)] if t.shape else []
        self.strides = [t.strides[i] for i in range(t.ndim)] if t.strides else None
        self.byte_offset = t.byte_offset
        self.device = (t.device.device_type, t.device.device_id)
        self.dtype = dtype_name(t.dtype)
        self.data = (t.data or 0) + t.byte_offset
        try:
            small = Probe.snapshot_values and (int(np.prod(self.shape)) <= 4096 if self.shape else True)
            padded = bool(self.flags and self.flags & FLAG_SUBBYTE_PADDED)
            self.values = (read_dltensor(t, padded)
                           if t.device.device_type == KDLCPU and small else None)
        except Exception as e:  # noqa: BLE001 - recorded, checked by expectations
            self.values = f"unreadable: {e}"
        self.calls = 0
        self.violations = []
        self._orig = m.deleter
        self._tramp = DELETER(self._called)
        m.deleter = ctypes.cast(self._tramp, ctypes.c_void_p).value if self._orig else None
        self.dtor_runs = 0
        self.name_at_destruction = None
        self.capsule_alive = cap is not None
        Probe.registry.append(self)
        if cap is None:
            return
        # Wrap the capsule destructor too: some producers (jaxlib) free an unconsumed
        # capsule's tensor by calling their deleter function directly, not through the
        # struct's field; that counts as the deleter call. A destructor that runs the
        # deleter of a consumed capsule breaks DLP.PY.DTOR.1.
        self._orig_dtor = _api.PyCapsule_GetDestructor(cap)
        self._dtor = DESTRUCTOR(self._destroyed)
        _api.PyCapsule_SetDestructor(cap, ctypes.cast(self._dtor, ctypes.c_void_p).value)

    def _destroyed(self, capptr):
        self.capsule_alive = False
        n = _GetNameRaw(capptr)
        self.name_at_destruction = n.decode() if n is not None else None
        before = self.calls
        if self._orig_dtor:
            self.dtor_runs += 1
            DESTRUCTOR(self._orig_dtor)(capptr)
        unconsumed = self.name_at_destruction in ("dltensor", "dltensor_versioned")
        if self.calls > before and not unconsumed:
            self.violations.append(
                f"capsule destructor ran the deleter of a capsule named "
                f"{self.name_at_destruction!r} (DLP.PY.DTOR.1)")
        if unconsumed and self.calls == before and self._orig_dtor:
            # Freed directly by the producer's destructor: count it as the deleter call.
            self.calls += 1
            if self.calls > 1:
                self.violations.append(f"deleter called {self.calls} times (double release)")

    def _called(self, ptr):
        self.calls += 1
        if self.calls > 1:
            self.violations.append(f"deleter called {self.calls} times (double release)")
            return
        if self._orig:
            DELETER(self._orig)(ptr)

    def destructor_cleared(self, cap):
        """Whether cap's destructor is no longer the one the probe wrapped at export: a
        consumer took the tensor by clearing (or replacing) it instead of renaming the
        capsule (DLP.PY.NAME.4 allows it, DLP.PY.NAME.2 recommends the rename)."""
        if cap is None or not hasattr(self, "_dtor"):
            return False
        return _api.PyCapsule_GetDestructor(cap) != ctypes.cast(self._dtor, ctypes.c_void_p).value

    @property
    def deleted(self):
        return self.calls


def outstanding():
    """Probes whose deleter has not run yet."""
    return sum(1 for p in Probe.registry if p.calls == 0)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def pack_i64(values):
    return _struct.pack(f"{len(values)}q", *values)
