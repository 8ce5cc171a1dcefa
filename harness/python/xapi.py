"""xapi.py: the DLPack 1.3 C exchange table (spec/dlpack.md DLP.XAPI.*) for the bridge.

Table: the DLPackExchangeAPI a producer's type publishes as `__dlpack_c_exchange_api__`,
its functions called through ctypes, each call checked as its clause asks: the allocator
without the GIL and reporting through SetError only, the others with the GIL and a
Python exception on failure, `*out` untouched by a failure (the bridge fills it with
SENTINEL first).

check_table: what DLP.XAPI.ATTR.1, LIFE.1, HEADER.1 and FUNCS.1 ask of a published table.

FrontTable: a table of the bridge's own, published on a holder type of its own, that
stands in front of a producer's: it forwards a consumer's calls to the producer's
functions and probes the managed tensors that pass (dl.Probe), so a case sees which
functions the consumer called and that every deleter runs once. With major > 1 the
table the consumer finds is one of a future major version, whose functions only record
that they were called (DLP.XAPI.HEADER.2); `chain` links it to the major-1 table.

Layouts are those of the DLPack 1.3 header (x86-64): DLPackExchangeAPIHeader 16 bytes,
DLPackExchangeAPI 56; a self-check asserts them at import.
"""
import builtins
import collections
import ctypes
import sys

import dl

ATTR = "__dlpack_c_exchange_api__"
CAPSULE_NAME = b"dlpack_exchange_api"
SENTINEL = 0x5A5A5A5A5A5A5A5A  # what *out holds before a call: a function that fails leaves it
FUNCTIONS = ("managed_tensor_allocator", "managed_tensor_from_py_object_no_sync",
             "managed_tensor_to_py_object_no_sync", "dltensor_from_py_object_no_sync",
             "current_work_stream")
MANDATORY = tuple(f for f in FUNCTIONS if f != "dltensor_from_py_object_no_sync")
CHAIN_MAX = 16  # a prev_api chain longer than this does not end


class NoTable(Exception):
    """The producer offers no table, or not the function asked for (a Skip)."""


class Violation(Exception):
    """A table or one of its functions broke its clause (a Fail)."""


class DLPackExchangeAPIHeader(ctypes.Structure):
    pass


DLPackExchangeAPIHeader._fields_ = [("version", dl.DLPackVersion),
                                    ("prev_api", ctypes.POINTER(DLPackExchangeAPIHeader))]


class DLPackExchangeAPI(ctypes.Structure):
    _fields_ = [("header", DLPackExchangeAPIHeader)] + [(f, ctypes.c_void_p) for f in FUNCTIONS]


assert ctypes.sizeof(DLPackExchangeAPIHeader) == 16 and ctypes.sizeof(DLPackExchangeAPI) == 56

SET_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
# The allocator is called with the GIL released (CFUNCTYPE): it must need none
# (DLP.XAPI.ALLOC.1). The others keep the GIL (PYFUNCTYPE), and ctypes raises the Python
# exception they set.
ALLOCATOR = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(dl.DLTensor),
                             ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, SET_ERROR)
FROM_PY_OBJECT = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.c_void_p))
TO_PY_OBJECT = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
VIEW_PY_OBJECT = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(dl.DLTensor))
WORK_STREAM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int32,
                                ctypes.POINTER(ctypes.c_void_p))
# What a front table's callbacks receive from a consumer: plain addresses.
CB_ALLOCATOR = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                ctypes.c_void_p)
CB_TWO = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
CB_STREAM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int32, ctypes.c_void_p)

_api = ctypes.pythonapi
_api.Py_IncRef.argtypes = _api.Py_DecRef.argtypes = [ctypes.py_object]
_api.PyErr_Occurred.restype = ctypes.c_void_p

_DL_DTYPES = {"float32": (2, 32), "int32": (0, 32)}


def pending_python_error():
    """The Python exception a C call left set without reporting it, else None: any
    pythonapi call raises it (ctypes checks PyErr_Occurred after each)."""
    try:
        _api.PyErr_Occurred()
    except BaseException as e:  # noqa: BLE001 - whatever was left set
        return e
    return None


def table_address(typ):
    """The address of the table typ publishes (DLP.XAPI.ATTR.1); NoTable without one."""
    cap = getattr(typ, ATTR, None)
    if cap is None:
        raise NoTable(f"{typ.__qualname__} publishes no {ATTR}")
    if not dl.is_capsule(cap) or dl.capsule_name(cap) != CAPSULE_NAME.decode():
        raise Violation(f"DLP.XAPI.ATTR.1: {typ.__qualname__}.{ATTR} is "
                        f"{type(cap).__name__} {cap!r}, not a capsule named 'dlpack_exchange_api'")
    return _api.PyCapsule_GetPointer(cap, CAPSULE_NAME)


def header_chain(address):
    """(major, minor, address) of each header from address along prev_api; at most
    CHAIN_MAX + 1 of them (more means the chain does not end)."""
    out, h = [], ctypes.cast(address, ctypes.POINTER(DLPackExchangeAPIHeader))
    while h and len(out) <= CHAIN_MAX:
        v = h.contents.version
        out.append((v.major, v.minor, ctypes.addressof(h.contents)))
        h = h.contents.prev_api
    return out


_published = {}  # type -> (address, the table's bytes) when first checked: DLP.XAPI.LIFE.1


def check_table(obj):
    """Violation naming every way the table of obj's type breaks DLP.XAPI.ATTR.1, LIFE.1,
    HEADER.1 or FUNCS.1."""
    typ = type(obj)
    address = table_address(typ)
    problems = []
    if getattr(typ, ATTR) is not getattr(typ, ATTR):
        problems.append(f"DLP.XAPI.ATTR.1: {typ.__qualname__}.{ATTR} is a new object on "
                        "every lookup")
    if getattr(obj, ATTR) is not getattr(typ, ATTR):
        problems.append(f"DLP.XAPI.ATTR.1: the instance's {ATTR} is not its type's")
    chain = header_chain(address)
    majors = [c[0] for c in chain]
    if len(chain) > CHAIN_MAX:
        problems.append("DLP.XAPI.HEADER.1: the prev_api chain does not end")
    elif majors != sorted(set(majors), reverse=True):
        problems.append(f"DLP.XAPI.HEADER.3: the prev_api chain's majors {majors} do not decrease")
    if chain[0][0] != 1:
        problems.append(f"DLP.XAPI.HEADER.1: header.version is {chain[0][:2]}, not (1, m)")
    elif chain[0][:2] < (1, 3):
        problems.append(f"DLP.XAPI.HEADER.3: header.version is {chain[0][:2]}, not (1, m >= 3)")
    api = DLPackExchangeAPI.from_address(address)
    problems += [f"DLP.XAPI.FUNCS.1: {f} is NULL" for f in MANDATORY if not getattr(api, f)]
    now = (address, ctypes.string_at(address, ctypes.sizeof(DLPackExchangeAPI)))
    if _published.setdefault(typ, now) != now:
        problems.append(f"DLP.XAPI.LIFE.1: {typ.__qualname__}'s table moved or changed since "
                        "it was first read")
    if problems:
        raise Violation("; ".join(problems))


class Table:
    """A producer's table of major 1 for the objects of typ, its functions called with
    their clauses' checks. walk: reach major 1 along prev_api, as DLP.XAPI.HEADER.2 asks
    of a consumer (the bridge's self-tests also make consumers that do not)."""

    def __init__(self, typ, walk=True, note=None):
        self.typ = typ
        # note(msg): a failed check of a clause after which the call can go on (the bridge
        # passes its Run.fail, which records a Warning where the profile makes it none);
        # without one it is a Violation.
        self.note = note or self._violation
        address = table_address(typ)
        if walk:
            ones = [c[2] for c in header_chain(address) if c[0] == 1]
            if not ones:
                raise NoTable(f"{typ.__qualname__}'s table has no major-1 version")
            address = ones[0]
        self.address = address
        self.api = DLPackExchangeAPI.from_address(address)

    @staticmethod
    def _violation(msg):
        raise Violation(msg)

    def function(self, name, proto):
        address = getattr(self.api, name)
        if not address:
            if name in MANDATORY:
                raise Violation(f"DLP.XAPI.FUNCS.1: {self.typ.__qualname__}'s {name} is NULL")
            raise NoTable(f"{self.typ.__qualname__}'s {name} is NULL (allowed: DLP.XAPI.FUNCS.1)")
        return proto(address)

    def allocate(self, shape, dtype, device):
        """A managed tensor of the allocator (DLP.XAPI.ALLOC.1) with 0, 1, 2, ... written
        into it; a refusal raises the exception class its SetError kind names."""
        fn = self.function("managed_tensor_allocator", ALLOCATOR)
        n = len(shape)
        extents = (ctypes.c_int64 * max(n, 1))(*shape)
        proto = dl.DLTensor()
        proto.ndim, proto.shape = n, ctypes.cast(extents, ctypes.POINTER(ctypes.c_int64))
        proto.dtype.code, proto.dtype.bits = _DL_DTYPES[dtype]
        proto.dtype.lanes = 1
        proto.device.device_type, proto.device.device_id = device
        out, errors = ctypes.c_void_p(SENTINEL), []
        set_error = SET_ERROR(lambda ctx, kind, msg: errors.append((kind, msg)))
        rc = fn(ctypes.byref(proto), ctypes.byref(out), None, set_error)
        if pending_python_error() is not None:
            raise Violation("DLP.XAPI.ALLOC.4: the allocator left a Python exception set")
        if rc != 0:
            return self._refused(rc, out, errors)
        if errors:
            raise Violation(f"DLP.XAPI.ALLOC.2: the allocator succeeded and called SetError "
                            f"{errors}")
        if out.value in (None, SENTINEL):
            raise Violation(f"DLP.XAPI.ALLOC.1: the allocator returned 0 with *out {out.value}")
        self._check_allocated(out.value, shape, dtype, device)
        return out.value

    def _refused(self, rc, out, errors):
        if len(errors) != 1:
            raise Violation(f"DLP.XAPI.ALLOC.2: the allocator returned {rc} with *out "
                            f"{out.value}, SetError called {len(errors)} times")
        if rc != -1 or out.value is not None:
            where = "untouched" if out.value == SENTINEL else f"{out.value}"
            self.note(f"DLP.XAPI.ALLOC.5: the allocator failed with {rc} and *out {where}, "
                      "not -1 and NULL")
        kind, msg = (b.decode(errors="replace") if b else "(NULL)" for b in errors[0])
        exc = getattr(builtins, kind, None)
        if not (isinstance(exc, type) and issubclass(exc, Exception)):
            raise Violation(f"DLP.XAPI.ALLOC.4: SetError's kind {kind!r} names no Python "
                            f"exception class (message {msg!r})")
        raise exc(f"{kind} from the allocator: {msg}")

    @staticmethod
    def _check_allocated(ptr, shape, dtype, device):
        m = dl.managed(ptr, True)
        t = m.dl_tensor
        n = 1
        for extent in shape:
            n *= extent
        got = {"version": m.version.major, "flags": m.flags, "byte_offset": t.byte_offset,
               "device": (t.device.device_type, t.device.device_id),
               "shape": [t.shape[i] for i in range(t.ndim)] if t.ndim else [],
               "dtype": dl.dtype_name(t.dtype),
               "strides": [t.strides[i] for i in range(t.ndim)] if t.strides else None}
        # Strides: compact, non-NULL when ndim > 0; an empty tensor is compact whatever
        # they are (spec/dlpack.md, Terms).
        want = {"version": 1, "flags": 0, "byte_offset": 0, "device": tuple(device),
                "shape": list(shape), "dtype": dtype,
                "strides": dl.compact_strides(shape) if shape and n else got["strides"]}
        if shape and got["strides"] is None:
            want["strides"] = "non-NULL"
        bad = {k: got[k] for k in want if got[k] != want[k]}
        # What dlpack.h asks (DLP.XAPI.ALLOC.1): the prototype's dtype, shape and device,
        # major 1, non-NULL strides; the rest (compact strides, byte_offset 0, flags 0)
        # is the suite's (DLP.XAPI.ALLOC.3).
        core = {k: v for k, v in bad.items()
                if k in ("version", "device", "shape", "dtype") or
                (k == "strides" and v is None and want["strides"] is not None)}
        clause = "DLP.XAPI.ALLOC.1" if core else "DLP.XAPI.ALLOC.3"
        if bad:
            raise Violation(f"{clause}: the allocated tensor has {core or bad}, expected "
                            f"{ {k: want[k] for k in (core or bad)} }")
        if n and not t.data:
            raise Violation("DLP.XAPI.ALLOC.1: the allocated tensor has NULL data")
        if n:  # writable: the bridge writes 0, 1, 2, ... and reads them back
            values = dl.np.arange(n, dtype=dtype)
            ctypes.memmove(t.data, values.ctypes.data, values.nbytes)
            back = dl.np.frombuffer(ctypes.string_at(t.data, values.nbytes), dtype)
            if back.tolist() != values.tolist():
                raise Violation("DLP.XAPI.ALLOC.3: what was written to the allocated tensor "
                                "did not read back")

    def from_object(self, obj):
        """managed_tensor_from_py_object_no_sync(obj): the managed tensor's address."""
        fn = self.function("managed_tensor_from_py_object_no_sync", FROM_PY_OBJECT)
        out = ctypes.c_void_p(SENTINEL)
        rc = self._call("DLP.XAPI.FROM.1", fn, out, obj, ctypes.byref(out))
        if out.value in (None, SENTINEL):
            raise Violation(f"DLP.XAPI.FROM.1: returned {rc} with *out {out.value}")
        return out.value

    def to_object(self, ptr):
        """managed_tensor_to_py_object_no_sync(ptr): the object made (its reference is ours)."""
        fn = self.function("managed_tensor_to_py_object_no_sync", TO_PY_OBJECT)
        out = ctypes.c_void_p(SENTINEL)
        self._call("DLP.XAPI.TO.1", fn, out, ptr, ctypes.byref(out))
        if out.value in (None, SENTINEL):
            raise Violation(f"DLP.XAPI.TO.1: returned 0 with *out {out.value}")
        obj = ctypes.cast(out.value, ctypes.py_object).value
        _api.Py_DecRef(obj)  # the function's new reference: obj holds ours now
        return obj

    def view(self, obj):
        """dltensor_from_py_object_no_sync(obj): the DLTensor it filled (NoTable if NULL)."""
        fn = self.function("dltensor_from_py_object_no_sync", VIEW_PY_OBJECT)
        out = dl.DLTensor()
        refs = sys.getrefcount(obj)
        rc = fn(obj, ctypes.byref(out))
        if rc != 0:
            raise Violation(f"DLP.XAPI.VIEW.1: returned {rc} without a Python exception")
        if sys.getrefcount(obj) != refs:
            raise Violation("DLP.XAPI.VIEW.1: the view took a reference on the object")
        return out

    def work_stream(self, device):
        """current_work_stream(device): what it wrote to *out (SENTINEL when nothing)."""
        fn = self.function("current_work_stream", WORK_STREAM)
        out = ctypes.c_void_p(SENTINEL)
        rc = fn(device[0], device[1], ctypes.byref(out))
        if rc != 0:
            raise Violation(f"DLP.XAPI.STREAM.1: current_work_stream{tuple(device)} returned {rc}")
        return out.value or 0

    @staticmethod
    def _call(clause, fn, out, *args):
        try:
            rc = fn(*args)
        except Exception:
            if out.value != SENTINEL:
                raise Violation(f"{clause}: a failing call wrote *out ({out.value:#x})") from None
            raise
        if rc != 0:
            raise Violation(f"{clause}: returned {rc} without a Python exception")
        return rc


class FrontTable:
    """A table of the bridge's own in front of producer's (a Table), published on
    holder_type, a subclass of base whose instances carry the producer's object as
    `target`. calls counts the consumer's calls by function; `sink` gets every probe
    made of a managed tensor that passes; `problems` collects what callbacks cannot
    raise (a ctypes callback has no way to set a Python exception for its caller).
    Front tables, their types and callbacks live for the process: consumers keep the
    pointer (DLP.XAPI.LIFE.1), tvm-ffi per type."""
    _cache = {}

    def __init__(self, producer, base, major, chain):
        self.producer, self.major = producer, major
        self.calls = collections.Counter()
        self.problems = []
        self.sink = lambda probe: None
        self.inner = DLPackExchangeAPI()
        self.inner.header.version.major, self.inner.header.version.minor = 1, 3
        p = producer.api
        self._callbacks = [CB_TWO(self._from), CB_TWO(self._to), CB_TWO(self._view)]
        self.inner.managed_tensor_allocator = p.managed_tensor_allocator
        self.inner.managed_tensor_from_py_object_no_sync = self._address(self._callbacks[0])
        self.inner.managed_tensor_to_py_object_no_sync = self._address(self._callbacks[1])
        if p.dltensor_from_py_object_no_sync:
            self.inner.dltensor_from_py_object_no_sync = self._address(self._callbacks[2])
        self.inner.current_work_stream = p.current_work_stream
        self.table = self.inner
        if major > 1:
            self.table = self._future(major, chain)
        self.capsule = _api.PyCapsule_New(ctypes.addressof(self.table), CAPSULE_NAME, None)
        self.holder_type = type(f"ExchangeHolder_{producer.typ.__name__}_{major}",
                                (base,), {ATTR: self.capsule, "front": self})

    @classmethod
    def get(cls, producer, base, major=1, chain=False):
        key = (producer.typ, base, major, chain)
        if key not in cls._cache:
            cls._cache[key] = cls(producer, base, major, chain)
        return cls._cache[key]

    @staticmethod
    def _address(callback):
        return ctypes.cast(callback, ctypes.c_void_p).value

    def _future(self, major, chain):
        """A table of major `major` whose functions only record that they were called."""
        future = DLPackExchangeAPI()
        future.header.version.major, future.header.version.minor = major, 0
        if chain:
            future.header.prev_api = ctypes.pointer(self.inner.header)

        def called(name):
            def record(*args):
                self.problems.append(f"DLP.XAPI.HEADER.2: the consumer called {name} of a "
                                     f"table of major {major}")
                return -1
            return record
        protos = {"managed_tensor_allocator": CB_ALLOCATOR, "current_work_stream": CB_STREAM}
        for name in FUNCTIONS:
            cb = protos.get(name, CB_TWO)(called(name))
            self._callbacks.append(cb)
            setattr(future, name, self._address(cb))
        return future

    def _from(self, obj_ptr, out):
        self.calls["from"] += 1
        try:
            holder = ctypes.cast(obj_ptr, ctypes.py_object).value
            ptr = self.producer.from_object(holder.target)
        except Exception as e:  # noqa: BLE001 - reported through problems
            self.problems.append(f"the producer's managed_tensor_from_py_object_no_sync failed: "
                                 f"{type(e).__name__}: {e}")
            return -1
        self.sink(dl.Probe(managed_ptr=ptr, label="from an exchange table, without a capsule"))
        ctypes.c_void_p.from_address(out).value = ptr
        return 0

    def _to(self, ptr, out):
        self.calls["to"] += 1
        self.sink(dl.Probe(managed_ptr=ptr, label="given to an exchange table, without a capsule"))
        try:
            obj = self.producer.to_object(ptr)
        except Exception as e:  # noqa: BLE001 - reported through problems
            self.problems.append(f"the producer's managed_tensor_to_py_object_no_sync failed: "
                                 f"{type(e).__name__}: {e}")
            return -1
        if type(obj) is not self.producer.typ:
            self.problems.append(type_problem(obj, self.producer.typ))
        _api.Py_IncRef(obj)  # the consumer's new reference
        ctypes.c_void_p.from_address(out).value = id(obj)
        return 0

    def _view(self, obj_ptr, out):
        self.calls["view"] += 1
        try:
            holder = ctypes.cast(obj_ptr, ctypes.py_object).value
            view = self.producer.view(holder.target)
        except Exception as e:  # noqa: BLE001 - reported through problems
            self.problems.append(f"the producer's dltensor_from_py_object_no_sync failed: "
                                 f"{type(e).__name__}: {e}")
            return -1
        ctypes.memmove(out, ctypes.addressof(view), ctypes.sizeof(view))
        return 0


def type_problem(obj, typ):
    return (f"DLP.XAPI.TO.1: managed_tensor_to_py_object_no_sync made a "
            f"{type(obj).__module__}.{type(obj).__qualname__}, not a {typ.__qualname__} "
            "(the type its table was found on)")
