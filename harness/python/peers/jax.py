"""jax: a jax.Array on CPU (jnp.asarray), jax.dlpack.from_dlpack.

jax runs with jax_enable_x64 on. Its default (x64 off) is a documented 32-bit mode
(jax-ml/jax docs/default_dtypes.md, "Default dtypes and the X64 flag": the flag "controls
whether 64-bit values can be created at all"): jnp.asarray and
jax.dlpack.from_dlpack give float32, int32, uint32 and complex64 for 64-bit input, so an
import of a 64-bit tensor would be a narrowing copy. That is a configuration of jax, not a
deviation of its DLPack support, and the matrix judges jax with 64-bit types enabled, as
a user exchanging 64-bit tensors runs it. The flag is process-wide, but only jax reads it.
"""
import numpy as np

from peers import ALL_DTYPES, COMPLEX, FLOAT8, Peer


class JaxPeer(Peer):
    name = "jax"
    module = "jax"
    # with jax_enable_x64 on (the module docstring) jax makes every dtype of MGR.DTYPE.1
    # and both complex types; jax exports float4_e2m1fn packed (DLP.IMPORT.10), and
    # refuses its own export of it ("PjRt CPU buffers only support default layout"), as
    # DLP.IMPORT.6 lets it
    dtypes = ALL_DTYPES | COMPLEX | {"float8_e3m4", "float4_e2m1fn"} | FLOAT8
    imports = ALL_DTYPES | COMPLEX | FLOAT8 | {"float8_e3m4"}
    dist = "jax"

    def __init__(self):
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        import jax.dlpack
        self.jax, self.jnp = jax, jnp
        # The CPU client comes with the first array: made now, its ~50 MiB are not
        # counted by the RSS bound (DLP.PY.ROUND.1) of a case whose first flat loop
        # would make it.
        jnp.zeros(1).block_until_ready()

    def make(self, values, shape, dtype):
        return self.jnp.asarray(values.reshape(shape))

    # jax.dlpack.from_dlpack takes copy=, but whether copy=False shares or raises depends
    # on the producer's buffer being 64-byte aligned, which changes from run to run: left
    # out, so that the matrix's counts are the same every run (README's table is checked)
    from_keywords = frozenset({"device"})

    def device_object(self, pair):
        return self.jax.devices("cpu")[0] if tuple(pair) == (1, 0) else None

    def from_dlpack(self, obj, **kw):
        arr = self.jax.dlpack.from_dlpack(obj, **kw)
        # jaxlib copies an import whose data is not aligned as XLA wants (mlx's, the
        # reference's) on its own threads and keeps the capsule, deleter unrun, until
        # the copy is done (jax/_src/dlpack.py from_dlpack, dlpack_managed_tensor_to_buffer).
        # Waiting for the array, as any reader of it does, ends the exchange here: a
        # loop of imports otherwise outruns the copies, and DLP.PY.ROUND.1 would see the
        # backlog as deleters that never ran.
        arr.block_until_ready()
        return arr

    def tolist(self, arr):
        return np.asarray(arr).tolist()

    def dtype(self, arr):
        return arr.dtype.name

    def data_ptr(self, arr):
        try:
            return arr.unsafe_buffer_pointer()
        except Exception:  # noqa: BLE001
            return None

    # bridge.py run --device cuda:N: arrays on jax's GPU devices (jax.devices("gpu")),
    # where jaxlib has CUDA and the run let jax find it (the bridge sets JAX_PLATFORMS
    # to "" on a device unless the user set it); tolist copies them back.
    def devices(self):
        try:
            gpus = [(2, d.id) for d in self.jax.devices("gpu")]
        except RuntimeError:  # no GPU backend in this jaxlib, or none enabled
            gpus = []
        return [(1, 0)] + gpus

    def make_on(self, values, shape, dtype, device):
        if tuple(device) == (1, 0):
            return self.make(values, shape, dtype)
        gpu = next(d for d in self.jax.devices("gpu") if d.id == device[1])
        arr = self.jax.device_put(values.reshape(shape), gpu)
        arr.block_until_ready()
        return arr
