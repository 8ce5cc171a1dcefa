"""peers: the frameworks the bridge exchanges capsules between, one plug-in module each.

A peer is a producer (make an array from values, export it through its own __dlpack__)
and a consumer (its own from_dlpack). Each is one module holding one subclass of Peer;
the bridge finds them in this folder and in every folder or file named by the
environment variable TSM_CTS_PEERS (os.pathsep-separated; bridge.py's --peer-path
adds to it), so a user's peer is a module of their own, outside the checkout.
Modules are loaded by file path under private names, so a module named after its
framework (jax.py) does not shadow the framework. README.md beside this file says how
to write one.

Peers are imported lazily, once per process (jax's import is slow): discovering a
module imports the module, not its framework.
"""
import importlib.util
import inspect
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ENV_PATH = "TSM_CTS_PEERS"

# jax on the CPU alone; a run on a device (bridge.py run --device cuda:0) sets it to "" (every
# platform jax finds) before this, unless the user set it.
os.environ.setdefault("JAX_PLATFORMS", "cpu")


ALL_DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                        "uint64", "float16", "bfloat16", "float32", "float64"})
# DLPack's complex types: exchanged at the capsule level, held by no implementation of the
# spec (MGR.DTYPE.1 has none); a peer that has them adds them to dtypes and imports.
COMPLEX = frozenset({"complex64", "complex128"})
# DLPack's float8 types (kDLFloat8_e4m3fn, kDLFloat8_e5m2, ml_dtypes' names): the same.
FLOAT8 = frozenset({"float8_e4m3fn", "float8_e5m2"})


def slice_index(how):
    """The index of a ("slice", dim, start, stop, step) view: Python's slice along dim."""
    dim, start, stop, step = how[1:]
    return (slice(None),) * dim + (slice(start, stop, step),)


class Peer:
    """One framework. Subclasses set the class attributes and implement make,
    from_dlpack and tolist (and dtype; shape and data_ptr when the defaults do not fit).
    """
    name = "?"            # the matrix's row and column label
    module = None         # the import name of the framework, checked before a run
    dist = None           # its PyPI distribution, whose version the report names
    optional = False      # True: left out, with a note, when `module` is not installed
    reference = False     # True only for tsmref: first row and column of the matrix
    # role -> why the framework lacks it ("producer" or "consumer"): such runs are
    # NotSupported with the reason, instead of run.
    lacks = {}

    # The dtypes make takes, by numpy's names (bfloat16: ml_dtypes'), and those
    # from_dlpack takes: a case that makes another is NotSupported for this peer, and one
    # that imports another must see the import refused (DLP.IMPORT.6), whatever the
    # consumer took given back (DLP.IMPORT.2), and is then NotSupported.
    dtypes = imports = ALL_DTYPES

    def make(self, values, shape, dtype):
        """A fresh array of the framework holding values, shaped shape. values is a
        flat C-contiguous numpy array of dtype (numpy's name: "float32", "bfloat16")
        made for this call alone: the peer may keep it as its array's storage."""
        raise NotImplementedError

    def devices(self):
        """The DLPack device pairs (device_type, device_id) this framework makes arrays
        on, asked of it at run time (kDLCPU (1, 0); kDLCUDA (2, N) where a GPU is there):
        the CPU alone unless the peer says more. A run on another device (bridge.py run
        --device cuda:0) is NotSupported for this peer as producer, and a consumer
        without the device that refuses a tensor there is NotSupported too."""
        return [(1, 0)]

    def make_on(self, values, shape, dtype, device):
        """make's array on device, a pair of devices(). The default makes CPU arrays
        alone (make); a peer with other devices overrides it."""
        if tuple(device) == (1, 0):
            return self.make(values, shape, dtype)
        raise NotImplementedError(f"{self.name} makes no arrays on {device}")

    def new_stream(self, device):
        """(its integer, the object that keeps it alive) of a stream the framework makes
        on device, a pair of devices(): what a consumer on that device passes as
        `__dlpack__(stream=...)` (a case's `stream new`). The default makes none."""
        raise NotImplementedError(f"{self.name} makes no streams on {device}")

    def from_dlpack(self, obj):
        """The framework's own DLPack import of obj (an object with __dlpack__)."""
        raise NotImplementedError

    def tolist(self, arr):
        """arr's elements as a nested list; an array on a device is copied to the host."""
        raise NotImplementedError

    def dtype(self, arr):
        """The numpy name of arr's dtype ("float32")."""
        raise NotImplementedError

    def shape(self, arr):
        return tuple(int(s) for s in arr.shape)

    # The keywords of from_dlpack it takes beyond the object (`tensor T = from A copy
    # true`); a case that passes another is NotSupported for this consumer.
    from_keywords = frozenset()

    def view(self, arr, how):
        """A view of arr sharing its memory: ("slice", dim, start, stop, step), Python's
        slice along dim; ("transpose",), the dimensions reversed (numpy's .T);
        ("readonly",), the same elements not writeable; or ("strided", shape, strides),
        arr's memory from its element 0 with that shape and those strides in bytes
        (numpy's as_strided; the bridge has checked that it stays inside arr). None when
        the framework has no such view of its arrays (the case is NotSupported)."""
        return None

    def unexportable(self, what):
        """An array of the framework that no DLTensor describes (DLP.PY.EXPORT.1), by
        what: "dtype" (an element type DLPack has no code for), "byteorder" (not the
        native byte order), "layout" (not strided: sparse), "conj" (a lazily
        conjugated view) or "grad" (tracked by autograd). None when the framework has no
        such array (the case is NotSupported)."""
        return None

    def device_object(self, pair):
        """What from_dlpack's device= takes for the DLPack device pair (type, id), None
        when the framework cannot name that device (the case is NotSupported)."""
        return None

    def writeable(self, arr):
        """Whether a consumer's result may be written through, None when the
        framework's arrays are never writeable (jax) or it has no Python write at all."""
        return None

    def data_ptr(self, arr):
        """Address of element 0 of a consumer's result, None when unknown."""
        return None

    # The DLPack 1.3 exchange table (spec/dlpack.md DLP.XAPI.*, harness/python/xapi.py).
    def exchange_type(self):
        """The type that publishes this peer's exchange table, None when none does."""
        return None

    def exchange_object(self, arr):
        """The object of exchange_type standing for arr; None without a table."""
        return None

    def echo(self, obj):
        """obj through one of this consumer's calls that returns its argument, with an
        exchange table; NotImplementedError when the consumer has none."""
        raise NotImplementedError(f"{self.name} has no call that returns its argument")


# bridge.py run --device: the device names a run takes, and their DLPack pairs.
DEVICE_TYPES = {"cpu": 1, "cuda": 2}


def device_pair(name):
    """(device_type, device_id) of a device name: "cpu" -> (1, 0), "cuda:N" -> (2, N)
    ("cuda" alone is cuda:0); ValueError for another."""
    kind, _, index = name.partition(":")
    if kind not in DEVICE_TYPES or (index and not index.isdigit()) or (kind == "cpu" and index not in ("", "0")):
        raise ValueError(f"device {name!r}: expected cpu or cuda:N")
    return DEVICE_TYPES[kind], int(index or 0)


def device_name(pair):
    """The name of a DLPack device pair: (1, 0) -> "cpu", (2, N) -> "cuda:N"."""
    kinds = {v: k for k, v in DEVICE_TYPES.items()}
    kind = kinds.get(pair[0], f"type{pair[0]}")
    return "cpu" if tuple(pair) == (1, 0) else f"{kind}:{pair[1]}"


def search_path():
    """This folder, then TSM_CTS_PEERS's entries, each a folder of modules or one module."""
    extra = [p for p in os.environ.get(ENV_PATH, "").split(os.pathsep) if p]
    return [HERE] + extra


def _modules(entry):
    if os.path.isdir(entry):
        return [os.path.join(entry, f) for f in sorted(os.listdir(entry))
                if f.endswith(".py") and not f.startswith("_")]
    if entry.endswith(".py") and os.path.isfile(entry):
        return [entry]
    raise SystemExit(f"{ENV_PATH}: {entry!r} is neither a folder nor a .py file")


def _load(path, index):
    spec = importlib.util.spec_from_file_location(f"tsm_cts_peer_{index}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return [c for _, c in inspect.getmembers(mod, inspect.isclass)
            if issubclass(c, Peer) and c is not Peer and c.__module__ == mod.__name__]


_CLASSES = None  # name -> (class, module path), filled by classes()


def classes():
    """Every peer class found on the search path, by name; a name defined twice is an
    error naming both modules."""
    global _CLASSES
    if _CLASSES is None:
        found = {}
        paths = [m for entry in search_path() for m in _modules(entry)]
        for i, path in enumerate(paths):
            for cls in _load(path, i):
                if cls.name in found:
                    raise SystemExit(f"peer {cls.name!r} is defined twice: "
                                     f"{found[cls.name][1]} and {path}")
                found[cls.name] = (cls, path)
        _CLASSES = found
    return {n: c for n, (c, _) in _CLASSES.items()}


def source(name):
    classes()
    return _CLASSES[name][1]


def installed(cls):
    return cls.module is None or importlib.util.find_spec(cls.module) is not None


def default_names():
    """(the peers a run takes by default, notes): the reference first, then the others
    by name; an optional peer whose framework is missing is left out with a note."""
    found = classes()
    names, notes = [], []
    for n in sorted(found, key=lambda n: (not found[n].reference, n)):
        if found[n].optional and not installed(found[n]):
            notes.append(f"optional peer {n} left out: its module {found[n].module} is not "
                         f"installed ({source(n)})")
        else:
            names.append(n)
    return names, notes


_CACHE = {}
EXTRA = {}  # name -> Peer instance: deliberately broken consumers of the self-tests


def get(name):
    if name in EXTRA:
        return EXTRA[name]
    if name not in _CACHE:
        found = classes()
        if name not in found:
            raise SystemExit(f"no peer named {name!r} (known: {', '.join(sorted(found))}; "
                             f"a peer of your own goes on {ENV_PATH})")
        _CACHE[name] = found[name]()
    return _CACHE[name]
