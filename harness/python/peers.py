"""peers.py: the frameworks the bridge exchanges capsules between.

Each peer is a producer (make an array from values, export it through its own
__dlpack__) and a consumer (its own from_dlpack). Peers are imported lazily, once per
process (jax's import is slow).

  name      producer                               consumer
  tsmref    tsmref.tensor (impl/python)            tsmref.from_dlpack
  numpy     numpy.ndarray                          numpy.from_dlpack
  tvm-ffi   tvm_ffi.Tensor (tvm_ffi.from_dlpack    tvm_ffi.from_dlpack
            of a fresh numpy array)
  jax       jax.Array on CPU (jnp.asarray)         jax.dlpack.from_dlpack
  torch     torch.tensor (Debian's python3-torch   torch.utils.dlpack.from_dlpack
            1.13; only in `make interop-system`)

The DLPack 1.3 exchange table (spec/dlpack.md DLP.XAPI.*, harness/python/xapi.py): a
peer's exchange_type is the type that publishes its table, exchange_object the object
of that type for one of its arrays, echo its call that hands an object to C and back.

  name      table published by                     echo
  tsmref    tsmref.Tensor                          -
  numpy     - (numpy 2.4 publishes none)           -
  tvm-ffi   tvm_ffi.core.DLTensorTestWrapper, the  tvm_ffi's testing.echo: the argument
            wrapper of a tvm_ffi.Tensor that       goes in through its type's table and
            tvm-ffi ships to test its consumer     comes back through the same table's
            (tvm_ffi.Tensor publishes none)        managed_tensor_to_py_object_no_sync
  jax       - (jaxlib 0.10 publishes none)         -
"""
import os

import numpy as np

import dl

PEERS = ["tsmref", "numpy", "tvm-ffi", "jax"]

os.environ.setdefault("JAX_PLATFORMS", "cpu")


class Peer:
    name = "?"

    def make(self, values, shape, dtype):
        raise NotImplementedError

    def from_dlpack(self, obj):
        raise NotImplementedError

    def tolist(self, arr):
        raise NotImplementedError

    def shape(self, arr):
        return tuple(int(s) for s in arr.shape)

    def data_ptr(self, arr):
        """Address of element 0 of a consumer's result, None when unknown."""
        return None

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


class TsmrefPeer(Peer):
    name = "tsmref"

    def __init__(self):
        import tsmref
        self.m = tsmref

    def make(self, values, shape, dtype):
        return self.m.tensor(values.tolist(), shape=tuple(shape), dtype=dtype)

    def from_dlpack(self, obj):
        return self.m.from_dlpack(obj)

    def tolist(self, arr):
        return arr.tolist()

    def dtype(self, arr):
        return arr.dtype

    def exchange_type(self):
        return self.m.Tensor

    def exchange_object(self, arr):
        return arr


class NumpyPeer(Peer):
    name = "numpy"

    def make(self, values, shape, dtype):
        return np.array(values, dtype=dtype).reshape(shape)

    def from_dlpack(self, obj):
        return np.from_dlpack(obj)  # noqa: E501

    def tolist(self, arr):
        return arr.tolist()

    def dtype(self, arr):
        return arr.dtype.name

    def data_ptr(self, arr):
        return arr.__array_interface__["data"][0]


class TvmFfiPeer(Peer):
    name = "tvm-ffi"

    def __init__(self):
        import tvm_ffi
        self.m = tvm_ffi

    def make(self, values, shape, dtype):
        return self.m.from_dlpack(np.array(values, dtype=dtype).reshape(shape))

    def from_dlpack(self, obj):
        return self.m.from_dlpack(obj)

    def tolist(self, arr):
        return dl.read_memory(self.data_ptr(arr), self.shape(arr), self.dtype(arr),
                              list(arr.strides))

    def dtype(self, arr):
        return str(arr.dtype)

    def data_ptr(self, arr):
        p = arr.data_ptr
        return p() if callable(p) else p

    def exchange_type(self):
        return self.m.core.DLTensorTestWrapper

    def exchange_object(self, arr):
        return self.m.core.DLTensorTestWrapper(arr)

    def echo(self, obj):
        return self.m.get_global_func("testing.echo")(obj)


class JaxPeer(Peer):
    name = "jax"

    def __init__(self):
        import jax
        import jax.numpy as jnp
        import jax.dlpack
        self.jax, self.jnp = jax, jnp

    def make(self, values, shape, dtype):
        return self.jnp.asarray(np.array(values, dtype=dtype).reshape(shape))

    def from_dlpack(self, obj):
        return self.jax.dlpack.from_dlpack(obj)

    def tolist(self, arr):
        return np.asarray(arr).tolist()

    def dtype(self, arr):
        return arr.dtype.name

    def data_ptr(self, arr):
        try:
            return arr.unsafe_buffer_pointer()
        except Exception:  # noqa: BLE001
            return None


class TorchPeer(Peer):
    """PyTorch as Debian 12 ships it (python3-torch 1.13, in /usr/bin/python3: `make
    interop-system`); the .venv has no torch, so its matrix does not list this peer.
    Producer: torch.tensor, exported by Tensor.__dlpack__(stream), which has no
    max_version and returns legacy capsules only. Consumer: torch.utils.dlpack.from_dlpack,
    which calls __dlpack__() with no arguments."""
    name = "torch"

    def __init__(self):
        try:
            import torch
            import torch.utils.dlpack
        except ImportError as e:
            raise ImportError(f"the torch peer needs PyTorch in this interpreter ({e}); it "
                              "is Debian's python3-torch in /usr/bin/python3, run by "
                              "`make interop-system`") from e
        self.torch = torch

    def make(self, values, shape, dtype):
        return self.torch.tensor(np.array(values, dtype=dtype).reshape(shape))

    def from_dlpack(self, obj):
        return self.torch.utils.dlpack.from_dlpack(obj)

    def tolist(self, arr):
        return arr.tolist()

    def dtype(self, arr):
        return str(arr.dtype).replace("torch.", "")

    def data_ptr(self, arr):
        return arr.data_ptr()


_CLASSES = {"tsmref": TsmrefPeer, "numpy": NumpyPeer, "tvm-ffi": TvmFfiPeer, "jax": JaxPeer,
            "torch": TorchPeer}
_CACHE = {}
EXTRA = {}  # name -> Peer instance: deliberately broken consumers of the self-tests


def get(name):
    if name in EXTRA:
        return EXTRA[name]
    if name not in _CACHE:
        _CACHE[name] = _CLASSES[name]()
    return _CACHE[name]
