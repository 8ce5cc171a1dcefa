#!/usr/bin/env python3
"""harness/python/fuzz_capsules.py: the Python capsule protocol fuzzed with Hypothesis (fuzz/README.md,
target `capsules`) between the reference (`tsmref`, impl/python) and the peers of the
interop matrix numpy, apache-tvm-ffi and jax (harness/python/peers/).
clauses: [DLP.DEL.1, DLP.EXPORT.1, DLP.EXPORT.2, DLP.EXPORT.3, DLP.EXPORT.4, DLP.EXPORT.5,
          DLP.IMPORT.1, DLP.IMPORT.2, DLP.IMPORT.3, DLP.IMPORT.4, DLP.IMPORT.5, DLP.IMPORT.6,
          DLP.IMPORT.8, DLP.MGR.1, DLP.MGR.3, DLP.PY.NAME.1, DLP.PY.NAME.2, DLP.PY.DTOR.1,
          DLP.PY.USED.1, DLP.PY.ARGS.1, DLP.PY.STREAM.1, DLP.PY.ROUND.1, DLP.PY.UNWIND.1,
          MGR.COUNT.4]

  fuzz_capsules.py [--examples N] [--seconds S] [--derandomize] [--steps K]
                   [--peers tsmref,numpy,...] [--json FILE] [--database DIR]
                   [--reproduce BLOB]

A Hypothesis state machine (CapsuleExchange) makes arrays on the peers (random shapes
with zero extents, every dtype the peer has (jax's float8 types included), views with
steps, negative and zero strides, transposes, read-only), exports them (legacy and versioned, max_version from (0, 8) to
(2, 0), copy None/False/True, refused stream= and dl_device=), rewrites unconsumed
capsules into equivalent or refused descriptions (byte_offset, NULL strides, any stride
on an extent-1 dimension, major version 0 or 2, minor 2 without strides), consumes them
on any peer (through a holder of the capsule, or by full negotiation), consumes used
capsules again, drops capsules unconsumed or in a frame that raises (with an array of a
peer), re-exports what a consumer got, and releases everything in random order.

The oracle is spec/dlpack.md, never the reference's answers: values are compared bit for
bit with the producer's elements as numpy computed them before the export; every capsule
deleter is wrapped (dl.Probe) and must run exactly once by the end, never while a
consumer aliases the memory, never from the destructor of a consumed capsule; the
reference's live bytes (tsmref.live_bytes) must equal what DLP.EXPORT.3-5 and DLP.MGR.3
say after every step (a tensor's storage counts while the tensor or an unreleased export
of it lives; an aliased import adds nothing, a copied one its size) and return to where
the example started; the reference's refusals carry the error code the spec names
(EDTYPE, EDLPACK, EVERSION). Known deviations of real peers are those listed in
harness/expectations/python-<peer>.txt (the same lines the interop matrix reads) and the
few no case can carry (PEER_DEVIATIONS, each with its reason); a check they cover is
counted as "known", not failed. Peers that cannot run here are skipped with the reason.
jax runs with jax_enable_x64: without it jax narrows 64-bit imports to 32 bits, which
DLP.PY.ROUND.1 forbids.

--examples N runs N examples (with --derandomize: the same N every run, the
fuzz-capsules-check lane of `make check`); --seconds S runs random batches until S
seconds have passed (`make fuzz`, ci/nightly-fuzz), saving failing examples in
--database. A failure prints Hypothesis's shrunk steps and its @reproduce_failure line;
--reproduce BLOB (the line's second argument) replays that example.
The last line gives the counts; --json writes them. Exit status 1 on any failure.
"""
import argparse
import ctypes
import gc
import json
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

try:
    import hypothesis  # noqa: F401
except ImportError:
    sys.exit("fuzz_capsules.py: missing the PyPI package hypothesis (deps.mk PIP_PINS): run 'make deps'")
from hypothesis import HealthCheck, reproduce_failure, settings, strategies as st  # noqa: E402
from hypothesis.database import DirectoryBasedExampleDatabase  # noqa: E402
from hypothesis.stateful import (Bundle, RuleBasedStateMachine, consumes, invariant,  # noqa: E402
                                 multiple, rule, run_state_machine_as_test)

import bridge  # noqa: E402
import dl  # noqa: E402
import grading  # noqa: E402
import peers  # noqa: E402

LEGACY_NAMES = ("dltensor", "used_dltensor")
REF_MAKES = ("float32", "int32")  # what tsmref.tensor makes
# what the reference holds, so imports (MGR.DTYPE.1, DLP.IMPORT.6): every real dtype
REF_HOLDS = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "bfloat16", "float32", "float64")
ALL_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "float16", "float32", "float64", "complex64", "complex128")
FLOAT8 = ("float8_e3m4", "float8_e4m3fn", "float8_e5m2")  # DLPack codes 7, 10, 12 (jax)
# Per peer: the dtypes it makes arrays of, whether it makes views (strides, offsets) and
# whether it can export the versioned form (DLP.PY.NAME.1: "when the producer supports it").
PRODUCERS = {
    "tsmref": dict(dtypes=REF_MAKES, views=False, versioned=True),
    "numpy": dict(dtypes=ALL_DTYPES, views=True, versioned=True),
    "tvm-ffi": dict(dtypes=ALL_DTYPES[:12], views=True, versioned=True),
    "jax": dict(dtypes=ALL_DTYPES[:13] + ("bfloat16",) + FLOAT8, views=False, versioned=False),
}
# Counters of the whole run: known = checks a line of harness/expectations covers;
# peer_refusals = exchanges a peer declined (a dtype or layout it does not take), which
# the spec allows; lenient = refused forms a peer accepted (the spec binds the reference).
STATS = dict(examples=0, steps=0, known=0, peer_refusals=0, ref_refusals=0, lenient=0,
             warnings=0)


class SpecViolation(AssertionError):
    def __init__(self, clause, msg):
        super().__init__(f"{clause}: {msg}")


def check(cond, clause, msg):
    if not cond:
        raise SpecViolation(clause, msg)


# ---- peers --------------------------------------------------------------------------

def available_peers(wanted):
    """(usable peer names, {skipped name: reason}). CUDA variants need a CUDA device."""
    usable, skipped = [], {}
    for name in wanted:
        try:
            peers.get(name)
            usable.append(name)
        except Exception as e:  # noqa: BLE001 - a missing peer is skipped, with its reason
            skipped[name] = f"cannot import: {type(e).__name__}: {e}"
    if "jax" in usable:
        import jax
        jax.config.update("jax_enable_x64", True)
        try:
            jax.devices("cuda")
        except RuntimeError as e:
            skipped["jax (CUDA)"] = f"no CUDA backend on this machine ({e})"
    skipped["tvm-ffi (CUDA)"] = "CUDA peers run only where a CUDA device and producer exist"
    return usable, skipped


def np_dtype(name):
    return dl.np_dtype(name)  # ml_dtypes' for bfloat16 and the float8 types


def random_values(seed, dtype, n):
    """n values of dtype with the awkward ones mixed in (signed zeros, infinities, quiet
    NaN, subnormals, integer extremes); reproducible from seed."""
    rng = np.random.default_rng(seed)
    dt = np_dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 3.0e38, -1.5])
    pick = rng.random(n) < 0.3
    vals = np.where(pick, special[rng.integers(0, len(special), n)],
                    rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n))
    if dt.kind == "c":
        vals = vals + 1j * rng.standard_normal(n)
    with np.errstate(over="ignore", invalid="ignore"):
        return vals.astype(dt)


def numpy_view(spec):
    """A numpy view of random values as spec says: extents, per-dimension step (negative:
    reversed), start offset, a zero-stride dimension, a permutation, read-only."""
    shape, steps, starts = spec["shape"], spec["steps"], spec["starts"]
    full = [s0 + abs(k) * max(n, 1) for n, k, s0 in zip(shape, steps, starts)]
    base = random_values(spec["seed"], spec["dtype"], int(np.prod(full)) if full else 1)
    base = base.reshape(full)
    view = base[tuple(slice(s0, s0 + abs(k) * n, abs(k)) for n, k, s0 in zip(shape, steps, starts))]
    view = view[tuple(slice(None, None, -1 if k < 0 else 1) for k in steps)]
    if not shape:  # indexing a 0-d array with () gives a numpy scalar, not an array
        view = base.view()
    z = spec["zero_dim"]
    if z is not None and z < view.ndim:
        strides = list(view.strides)
        strides[z] = 0
        view = np.lib.stride_tricks.as_strided(view, view.shape, strides)
    if view.ndim > 1 and spec["permute"]:
        view = view.transpose(np.roll(np.arange(view.ndim), 1))
    if spec["readonly"]:
        view.flags.writeable = False
    return view


def make_array(peer, spec):
    """(array on peer, the expected elements as a compact numpy array)."""
    dt = spec["dtype"]
    if not PRODUCERS[peer]["views"]:
        spec = dict(spec, steps=[1] * len(spec["shape"]), starts=[0] * len(spec["shape"]),
                    zero_dim=None, permute=False, readonly=False)
    view = numpy_view(spec)
    expected = np.array(view, order="C")  # a compact copy (ascontiguousarray makes 0-d 1-d)
    if peer == "numpy":
        return view, expected
    if peer == "tvm-ffi":
        return peers.get(peer).m.from_dlpack(view), expected
    if peer == "jax":
        return peers.get(peer).jnp.asarray(view, dtype=np_dtype(dt)), expected
    return peers.get(peer).m.tensor(expected.reshape(-1).tolist(), shape=tuple(view.shape),
                                    dtype=dt), expected


def as_numpy(peer, obj):
    """A consumer's (or producer's) array as a numpy array, read without DLPack."""
    if peer == "tsmref":
        return np.array(obj.tolist(), dtype=obj.dtype).reshape(obj.shape)
    if peer == "tvm-ffi":
        shape = tuple(int(s) for s in obj.shape)
        dt = np_dtype(str(obj.dtype))
        if 0 in shape:
            return np.empty(shape, dt)
        strides = [int(s) * dt.itemsize for s in obj.strides]
        lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
        hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides)) + dt.itemsize
        buf = (ctypes.c_char * (hi - lo)).from_address(peers.get(peer).data_ptr(obj) + lo)
        return np.ndarray(shape, dt, buffer=buf, offset=-lo, strides=strides).copy()
    return np.array(obj)


def same_elements(got, want):
    return (got.shape == want.shape and got.dtype == want.dtype and
            got.tobytes() == want.tobytes())


# ---- capsules -----------------------------------------------------------------------

class FuzzProbe(dl.Probe):
    """dl.Probe that undoes this fuzzer's rewrites of the managed tensor before the
    producer's deleter runs, and checks that a READ_ONLY buffer was not written
    (DLP.IMPORT.8). Owns the replacement strides arrays it installed."""

    def __init__(self, cap):
        super().__init__(cap)
        self.undo = []  # (struct, field, original value), replayed in reverse
        self.keep = []  # ctypes arrays a rewritten struct points at
        self.readonly_bytes = None

    def _called(self, ptr):
        try:
            if self.calls == 0:
                for obj, field, old in reversed(self.undo):
                    setattr(obj, field, old)
                t = dl.managed(ptr, self.versioned).dl_tensor
                if self.readonly_bytes is not None and raw_bytes(t) != self.readonly_bytes:
                    self.violations.append("a READ_ONLY buffer changed before its deleter ran "
                                           "(DLP.IMPORT.8)")
        except Exception as e:  # noqa: BLE001 - the deleter must run whatever happens here
            self.violations.append(f"fuzzer's deleter wrapper: {type(e).__name__}: {e}")
        super()._called(ptr)


def pointer_copy(ptr):
    """A ctypes pointer to what ptr points at that does not alias the struct field ptr
    was read from (reading a POINTER field gives a view of the field itself)."""
    return ctypes.cast(ctypes.cast(ptr, ctypes.c_void_p).value, type(ptr))


def raw_bytes(t):
    """The elements of a CPU DLTensor, row-major, as bytes (any dtype: read as opaque
    items of bits * lanes / 8 bytes; honours byte_offset and strides)."""
    shape = [t.shape[i] for i in range(t.ndim)]
    isz = t.dtype.bits * t.dtype.lanes // 8
    if 0 in shape:
        return b""
    strides = [t.strides[i] * isz for i in range(t.ndim)] if t.strides else \
        list(np.empty(shape, f"V{isz}").strides)
    lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides)) + isz
    buf = (ctypes.c_char * (hi - lo)).from_address(t.data + t.byte_offset + lo)
    return np.ndarray(shape, f"V{isz}", buf, -lo, strides).tobytes()


class Cap:
    """An exported capsule and what the spec says of it. Owns the capsule object until
    dropped (Hypothesis keeps every step's result alive, so the reference is cleared)."""

    def __init__(self, cap, probe, src, expected):
        self.cap, self.probe, self.src, self.expected = cap, probe, src, expected
        self.obj = None  # teardown clears obj and cap of every record alike
        self.refusal = None  # the code the reference must refuse it with, once rewritten

    @property
    def consumed(self):
        return dl.capsule_name(self.cap).startswith("used_")

    def __repr__(self):
        return f"<capsule {self.probe.name_at_export} of {self.src!r}>"


class Arr:
    """An array of a peer (made, or a consumer's result) with its expected elements.
    handle: the reference's accounting when peer is tsmref (Handle), else None.
    aliases: the probe of the capsule this consumer's result may alias."""

    def __init__(self, peer, obj, expected, handle=None, aliases=None):
        self.peer, self.obj, self.expected = peer, obj, expected
        self.handle, self.aliases = handle, aliases
        self.cap = None

    def __repr__(self):
        return f"<{self.peer} {self.expected.dtype.name}{list(self.expected.shape)}>"


class Handle:
    """The reference's storage accounting for one tsmref tensor (DLP.EXPORT.3-5,
    DLP.MGR.1, DLP.MGR.3). nbytes: what its storage adds to live bytes (0 when it aliases
    memory of another producer); storage: the identity shared by tensors aliasing the
    same buffer; exports: probes of its uncopied exports; upstream: the probe of the
    capsule it aliases, whose deleter runs once nothing pins this handle."""

    def __init__(self, nbytes, storage=None, upstream=None, alive=True):
        self.nbytes, self.upstream, self.alive = nbytes, upstream, alive
        self.storage = storage if storage is not None else object()
        self.exports = []

    def pinned(self):
        return self.alive or any(p.calls == 0 for p in self.exports)


def compact(shape, strides):
    """spec/dlpack.md Terms; a tensor without elements is compact (no element to place)."""
    if strides is None or 0 in shape:
        return True
    expect = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def tensor_desc(cap, versioned):
    t = dl.managed(dl.capsule_pointer(cap), versioned).dl_tensor
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = [t.strides[i] for i in range(t.ndim)] if t.strides else None
    return t, shape, strides


def known(peer, case):
    """The expectation line of harness/expectations covering (case, peer as producer), or
    the reason of a deviation that comes and goes (UNSTABLE). case: a name under
    cases/dlpack/python, or a case id with its folder (peers/pytorch/max-version.pytsm)."""
    case_id = case if "/" in case else f"dlpack/python/{case}.pytsm"
    return (PEER_DEVIATIONS.get((peer, case)) or
            bridge.match_expectation(EXPECTATIONS, case_id, peer, "-") or
            bridge.match_expectation(EXPECTATIONS, case_id, peer, "*"))


def tolerated(peer, case, clause):
    """Whether a peer's deviation on `clause` is no failure: a known one, or one of a third
    party that breaks no requirement under the standard profile (a SHOULD or TSM clause,
    spec/README.md "Strengths": a Warning, counted). The reference is held to every clause."""
    if known(peer, case):
        return True
    if peer != "tsmref" and not grading.breaks_as_fail([clause], STRENGTHS, "standard"):
        STATS["warnings"] += 1
        return True
    return False


# Deviations of real peers that no case of cases/dlpack/python can carry as an expectation
# line: one depends on timing (the case passes or fails from run to run, and Hypothesis
# needs every check to answer the same when it replays an example), one needs a dtype the
# case language lacks.
PEER_DEVIATIONS = {
    ("tvm-ffi", "read-complex"): "apache-tvm-ffi 0.1.15.post2 from_dlpack takes a complex "
    "(kDLComplex) capsule, then Tensor.dtype raises ValueError('DLDataType contains unknown "
    "type_code=5'): it neither refuses the tensor nor can say what it holds (DLP.PY.ROUND.1)",
    ("jax", "stream-cpu"): "jaxlib 0.10.2 on CPU refuses stream != None with UNIMPLEMENTED "
    "(WaitUntilBufferReadyOnStream is only implemented for GPU) only when it has to wait for "
    "the buffer; an array that is ready is served (DLP.PY.STREAM.1)",
}


EXPECTATIONS = bridge.load_expectations(os.path.join(bridge.ROOT, "harness", "expectations"))
STRENGTHS = grading.load_strengths(os.path.join(bridge.ROOT, "spec"))


# ---- the state machine ----------------------------------------------------------------

def view_specs(dtypes):
    ndim = st.integers(0, 3)
    return ndim.flatmap(lambda n: st.fixed_dictionaries(dict(
        dtype=st.sampled_from(dtypes),
        shape=st.lists(st.integers(0, 4), min_size=n, max_size=n),
        steps=st.lists(st.sampled_from([1, 2, -1, -2]), min_size=n, max_size=n),
        starts=st.lists(st.integers(0, 2), min_size=n, max_size=n),
        zero_dim=st.one_of(st.none(), st.integers(0, 2)),
        permute=st.booleans(), readonly=st.booleans(),
        seed=st.integers(0, 2**32 - 1))))


REWRITE_KINDS = ["offset", "null-strides", "unit-stride", "major-0", "major-2",
                 "minor-2-null-strides"]
REWRITES = st.sampled_from(REWRITE_KINDS)
EXPORT_KW = st.fixed_dictionaries({}, optional=dict(
    max_version=st.sampled_from([(0, 8), (1, 0), (1, 3), (2, 0)]),
    copy=st.sampled_from([None, False, True])))


class CapsuleExchange(RuleBasedStateMachine):
    """One example: a random exchange of arrays and capsules between the peers. Owns the
    records it made (self.records) and clears their objects at teardown, because
    Hypothesis keeps every step's result alive."""
    PEERS = ["tsmref"]  # the usable peers, set by main()
    arrays = Bundle("arrays")
    capsules = Bundle("capsules")

    def __init__(self):
        super().__init__()
        STATS["examples"] += 1
        if STATS["examples"] % 100 == 1:
            # What is alive between examples belongs to the peers (jax grows caches as it
            # meets dtypes) or to Hypothesis: frozen, so that collecting, which settled()
            # does whenever a deleter is missing, costs milliseconds instead of a third
            # of a second.
            gc.collect()
            gc.freeze()
        self.ref = peers.get("tsmref").m
        self.base_bytes, self.base_count = self.ref.live_bytes(), self.ref.live_count()
        self.handles, self.probes, self.records = [], [], []

    # -- accounting
    def new_probe(self, cap, kw=None):
        """Wraps a capsule's deleter; bridge.Holder calls it for each capsule it fetches."""
        probe = FuzzProbe(cap)
        probe.label = "a capsule fetched by the consumer"
        self.probes.append(probe)
        return probe

    def keep(self, rec):
        self.records.append(rec)
        return rec

    def register_export(self, src, probe, copied):
        """A tsmref export: a copy owns a storage of its own until its deleter runs
        (DLP.EXPORT.5), an uncopied one pins its source's storage (DLP.EXPORT.3-4)."""
        if src.peer != "tsmref":
            return
        if copied:
            h = Handle(src.expected.nbytes, alive=False)
            self.handles.append(h)
        else:
            h = src.handle
        h.exports.append(probe)

    def model_bytes(self):
        seen, total = set(), 0
        for h in self.handles:
            if h.pinned() and id(h.storage) not in seen:
                seen.add(id(h.storage))
                total += h.nbytes
        return total

    # -- checks of one export
    def export_from(self, src, kw):
        """src.__dlpack__(**kw): (capsule, probe), or (None, the exception) if refused."""
        try:
            cap = src.obj.__dlpack__(**kw)
        except Exception as e:  # noqa: BLE001 - judged by the caller
            return None, e.with_traceback(None)
        probe = self.new_probe(cap)
        probe.label = f"{src!r}.__dlpack__(**{kw})"
        mv = kw.get("max_version")
        wants_v = mv is not None and tuple(mv) >= (1, 0)
        check(probe.versioned == (wants_v and PRODUCERS[src.peer]["versioned"]),
              "DLP.PY.NAME.1", f"{src.peer} returned {probe.name_at_export!r} for {kw}")
        check(not probe.versioned or probe.version[0] == 1, "DLP.EXPORT.2",
              f"versioned capsule of version {probe.version}")
        return cap, probe

    def check_capsule(self, src, probe, kw):
        """What the capsule describes (DLP.EXPORT.1, DLP.PY.ARGS.1); returns IS_COPIED."""
        want = src.expected
        check(probe.shape == list(want.shape), "DLP.EXPORT.1",
              f"capsule shape {probe.shape}, the array's {list(want.shape)}")
        check(probe.dtype.startswith("code") or probe.dtype == want.dtype.name, "DLP.EXPORT.1",
              f"capsule dtype {probe.dtype}, the array's {want.dtype.name}")
        check(probe.device == (1, 0), "DLP.EXPORT.1", f"device {probe.device} for a CPU array")
        if probe.values is not None and not isinstance(probe.values, str):
            got = np.array(probe.values, dtype=want.dtype).reshape(want.shape)
            check(same_elements(got, want), "DLP.EXPORT.1",
                  f"capsule elements {got.tolist()} differ from {want.tolist()}")
        copied = bool(probe.flags and probe.flags & dl.FLAG_IS_COPIED)
        if probe.versioned and kw.get("copy") is True and not copied:
            check(tolerated(src.peer, "copy-true", "DLP.PY.ARGS.1"), "DLP.PY.ARGS.1",
                  "copy=True without IS_COPIED")
            STATS["known"] += 1
        check(not (kw.get("copy") is False and copied), "DLP.PY.ARGS.1", "copy=False gave IS_COPIED")
        if src.peer == "tsmref":
            self.check_ref_export(probe, kw)
        return copied

    def check_ref_export(self, probe, kw):
        if probe.versioned:
            check(probe.ndim == 0 or probe.strides is not None, "DLP.EXPORT.2",
                  "versioned export with NULL strides")
            want = dl.FLAG_IS_COPIED if kw.get("copy") else 0
            check(probe.flags == want, "DLP.EXPORT.2", f"flags {probe.flags} for copy={kw.get('copy')}")
        else:
            check(compact(probe.shape, probe.strides), "DLP.EXPORT.2",
                  f"legacy strides {probe.strides} for shape {probe.shape}")

    # -- rules
    @rule(target=arrays, data=st.data())
    def make(self, data):
        peer = data.draw(st.sampled_from(self.PEERS), label="peer")
        spec = data.draw(view_specs(PRODUCERS[peer]["dtypes"]), label="view")
        try:
            obj, expected = make_array(peer, spec)
        except Exception:  # noqa: BLE001 - a peer that cannot hold this view or dtype
            if peer == "tsmref":
                raise
            STATS["peer_refusals"] += 1
            return multiple()
        device = tuple(int(i) for i in obj.__dlpack_device__())
        check(device == (1, 0), "DLP.PY.ARGS.1", f"{peer}.__dlpack_device__() = {device} on CPU")
        handle = None
        if peer == "tsmref":
            handle = Handle(expected.nbytes)
            self.handles.append(handle)
        return self.keep(Arr(peer, obj, expected, handle))

    @rule(target=capsules, src=arrays, kw=EXPORT_KW)
    def export(self, src, kw):
        legacy = tuple(kw.get("max_version", (0, 0))) < (1, 0)
        if src.obj is None or ("max_version" in kw and legacy and (
                known(src.peer, "max-version-old") or known(src.peer, "peers/pytorch/max-version.pytsm"))):
            return multiple()
        cap, probe = self.export_from(src, kw)
        if cap is None:
            self.export_refused(src, kw, legacy, probe)
            return multiple()
        check(not (src.peer == "tsmref" and legacy and kw.get("copy") is True), "DLP.EXPORT.5",
              "a legacy export with copy=True was served (a legacy capsule has no IS_COPIED)")
        copied = self.check_capsule(src, probe, kw)
        self.register_export(src, probe, copied)
        if probe.versioned and probe.flags and probe.flags & dl.FLAG_READ_ONLY:
            probe.readonly_bytes = src.expected.tobytes()
        return self.keep(Cap(cap, probe, src, src.expected))

    def export_refused(self, src, kw, legacy, exc):
        """Refusals the spec allows: copy=True on the legacy form (DLP.EXPORT.5 for the
        reference; a peer may instead copy into a legacy capsule, which cannot say so), a
        read-only array on the legacy form (no flag to say so)."""
        if kw.get("copy") is True and known(src.peer, "copy-true"):
            STATS["known"] += 1
            return
        readonly = src.peer == "numpy" and not src.obj.flags.writeable
        check(legacy and (kw.get("copy") is True or readonly), "DLP.PY.ARGS.1",
              f"{src!r}.__dlpack__(**{kw}) refused: {type(exc).__name__}: {exc}")
        if src.peer == "tsmref":
            check(isinstance(exc, BufferError), "DLP.EXPORT.5",
                  f"refusal raised {type(exc).__name__}, not BufferError")
            STATS["ref_refusals"] += 1
        else:
            STATS["peer_refusals"] += 1

    @rule(src=arrays, stream=st.sampled_from([0, 1, 2, -1, 7]), versioned=st.booleans())
    def export_stream(self, src, stream, versioned):
        """DLP.PY.STREAM.1: a CPU producer refuses every stream but None."""
        kw = dict(stream=stream, **({"max_version": (1, 3)} if versioned else {}))
        self.expect_refusal(src, kw, "stream-cpu", Exception, "DLP.PY.STREAM.1")

    @rule(src=arrays, device=st.sampled_from([(2, 0), (10, 0), (13, 0)]), versioned=st.booleans())
    def export_device(self, src, device, versioned):
        """DLP.PY.ARGS.1: a dl_device the producer cannot serve raises BufferError."""
        kw = dict(dl_device=device, **({"max_version": (1, 3)} if versioned else {}))
        self.expect_refusal(src, kw, "device-unsupported", BufferError, "DLP.PY.ARGS.1")

    def expect_refusal(self, src, kw, case, exc_class, clause):
        if src.obj is None:
            return
        before = self.ref.live_bytes()
        try:
            cap = src.obj.__dlpack__(**kw)
        except exc_class:
            check(self.ref.live_bytes() == before, "MGR.COUNT.4", "a refused export changed live bytes")
            return
        except Exception as e:  # noqa: BLE001
            check(tolerated(src.peer, case, clause), clause, f"{src.peer}.__dlpack__(**{kw}) raised "
                  f"{type(e).__name__}: {e}, not {exc_class.__name__}")
            STATS["known"] += 1
            return
        self.new_probe(cap)  # served: its deleter must still run exactly once
        del cap
        check(tolerated(src.peer, case, clause), clause, f"{src.peer}.__dlpack__(**{kw}) was served")
        STATS["known"] += 1

    @rule(c=capsules, how=REWRITES, k=st.integers(1, 64))
    def rewrite(self, c, how, k):
        """Rewrites an unconsumed capsule's tensor in place into an equivalent description
        (byte_offset, DLP.IMPORT.3; NULL strides for a compact tensor, any stride on an
        extent-1 dimension, DLP.IMPORT.4) or into one the spec refuses (NULL strides on a
        versioned minor >= 2 capsule, DLP.IMPORT.4: EDLPACK; major version 0 or 2: EVERSION,
        DLP.IMPORT.1).
        The probe undoes it before the producer's deleter runs."""
        if c.cap is None or c.consumed:
            return
        p = c.probe
        m = dl.managed(dl.capsule_pointer(c.cap), p.versioned)
        _, shape, strides = tensor_desc(c.cap, p.versioned)
        t = m.dl_tensor
        if how == "offset" and t.data:
            p.undo += [(t, "data", t.data), (t, "byte_offset", t.byte_offset)]
            t.data, t.byte_offset = t.data - k, t.byte_offset + k
        elif how.endswith("null-strides") and strides is not None and shape and compact(shape, strides):
            if how.startswith("minor-2"):
                if not p.versioned:
                    return
                p.undo.append((m.version, "minor", m.version.minor))
                m.version.minor = max(2, m.version.minor)
            p.undo.append((t, "strides", pointer_copy(t.strides)))
            t.strides = None
            if p.versioned and m.version.minor >= 2 and not c.refusal:
                c.refusal = "EDLPACK"
        elif how == "unit-stride" and strides is not None and 1 in shape:
            new = (ctypes.c_int64 * t.ndim)(*[k * 7 - 100 if n == 1 else s
                                              for n, s in zip(shape, strides)])
            p.keep.append(new)
            p.undo.append((t, "strides", pointer_copy(t.strides)))
            t.strides = ctypes.cast(new, ctypes.POINTER(ctypes.c_int64))
        elif how.startswith("major-") and p.versioned:
            p.undo.append((m.version, "major", m.version.major))
            m.version.major = int(how[-1])
            c.refusal = "EVERSION"

    def take(self, consumer, holder):
        """consumer.from_dlpack(holder): the result, or None when refused (the exception
        in self.refused); NotSupported (a consumer asking only for legacy capsules, given
        a versioned one) propagates."""
        self.refused = None
        try:
            out = peers.get(consumer).from_dlpack(holder)
            if holder.probe is not None:
                holder.probe.label += f", consumed by {consumer}"
            return out
        except bridge.CaseFail as e:
            raise SpecViolation("DLP.PY.NAME.1", str(e))
        except Exception as e:  # noqa: BLE001
            unsupported = holder.unsupported(consumer)
            if unsupported:
                raise unsupported from None
            self.refused = e.with_traceback(None)  # its frames would hold the capsule
            if holder.probe is not None:
                holder.probe.label += f", refused by {consumer}"
            return None

    @rule(target=arrays, c=capsules, consumer=st.sampled_from(list(PRODUCERS)),
          how=st.sampled_from([None] + REWRITE_KINDS), k=st.integers(1, 64))
    def consume(self, c, consumer, how, k):
        """A consumer takes an unconsumed capsule (through a holder returning it), after
        a rewrite (how) or not."""
        if c.cap is None or c.consumed or consumer not in self.PEERS:
            return multiple()
        if how:
            self.rewrite(c, how, k)
        _, shape, strides = tensor_desc(c.cap, c.probe.versioned)
        before = self.ref.live_bytes()
        try:
            out = self.take(consumer, bridge.Holder(self, cap=c.cap, probe=c.probe))
        except bridge.NotSupported:
            return multiple()
        if out is None:
            self.import_refused(c.probe, c.expected, consumer, c.refusal, self.refused)
            return multiple()
        check(c.consumed, "DLP.PY.NAME.2",
              f"{consumer} took the capsule, which is still named {dl.capsule_name(c.cap)!r}")
        return self.imported(c.probe, c.src, c.refusal, consumer, out,
                             compact(shape, strides), before)

    @rule(target=arrays, src=arrays, consumer=st.sampled_from(list(PRODUCERS)))
    def negotiate(self, src, consumer):
        """The consumer's from_dlpack on the array itself (its own max_version
        negotiation). On a consumer's result this is the re-export (DLP.MGR.1)."""
        if src.obj is None or consumer not in self.PEERS:
            return multiple()
        before = self.ref.live_bytes()
        holder = bridge.Holder(self, array=src.obj)
        out = self.take(consumer, holder)
        probe, cap = holder.probe, holder.cap
        del holder
        if probe is None:  # the producer refused the consumer's request
            STATS["peer_refusals"] += 1
            return multiple()
        probe.label = f"{src!r}.__dlpack__ negotiated by {consumer}"
        copied = bool(probe.flags and probe.flags & dl.FLAG_IS_COPIED)
        self.register_export(src, probe, copied)
        if out is None:
            del cap
            self.import_refused(probe, src.expected, consumer, None, self.refused)
            return multiple()
        check(dl.capsule_name(cap).startswith("used_"), "DLP.PY.NAME.2",
              f"{consumer} took the capsule, which is still named {dl.capsule_name(cap)!r}")
        del cap
        return self.imported(probe, src, None, consumer, out,
                             compact(probe.shape, probe.strides), before)

    def imported(self, probe, src, refusal, consumer, out, is_compact, before):
        """consumer took the capsule of probe, made by src, and returned out."""
        if refusal:
            check(consumer != "tsmref", "DLP.IMPORT.2",
                  f"the reference accepted a capsule it must refuse with {refusal}")
            STATS["lenient"] += 1
        want = src.expected
        try:
            got = as_numpy(consumer, out)
        except Exception as e:  # noqa: BLE001
            check(want.dtype.kind == "c" and known(consumer, "read-complex"), "DLP.PY.ROUND.1",
                  f"{consumer} took {src!r} and cannot read it: {type(e).__name__}: {e}")
            STATS["known"] += 1
            self.keep(Arr(consumer, out, want, None, aliases=probe))  # released at teardown
            return multiple()
        check(same_elements(got, want), "DLP.PY.ROUND.1",
              f"{consumer} read {got.dtype.name}{list(got.shape)} {got.tolist()!r}, the producer "
              f"{src.peer} holds {want.dtype.name}{list(want.shape)} {want.tolist()!r}")
        handle = None
        if consumer == "tsmref":
            handle = self.ref_import(probe, src, is_compact, before)
        return self.keep(Arr(consumer, out, want, handle, aliases=probe))

    def ref_import(self, probe, src, is_compact, before):
        """The reference took the capsule: alias or copy (DLP.MGR.3, DLP.IMPORT.4)."""
        grew = self.ref.live_bytes() - before
        if not is_compact:
            check(probe.calls == 1, "DLP.IMPORT.4",
                  f"a non-compact import ran the deleter {probe.calls} times, not once at once")
            n = src.expected.nbytes
            check(grew == n, "DLP.MGR.3", f"a copied import added {grew} live bytes, not {n}")
            h = Handle(n)
        else:
            check(probe.calls == 0, "DLP.MGR.3", "a compact import's deleter ran before its release")
            check(grew == 0, "DLP.MGR.3", f"an aliased import added {grew} live bytes")
            # One of the reference's own exports: the exported storage, counted once.
            own = next((h for h in self.handles if probe in h.exports), None)
            h = Handle(own.nbytes, own.storage, upstream=probe) if own else Handle(0, upstream=probe)
        self.handles.append(h)
        return h

    def import_refused(self, probe, expected, consumer, refusal, exc):
        """A consumer refused a capsule. A peer may (a dtype or layout it does not take);
        the reference only with the code the spec names (DLP.IMPORT.1-2, .6), its deleter
        run exactly once."""
        if consumer != "tsmref":
            STATS["peer_refusals"] += 1
            return
        STATS["ref_refusals"] += 1
        code = refusal or ("EDTYPE" if expected.dtype.name not in REF_HOLDS else None)
        check(code is not None, "DLP.PY.ROUND.1",
              f"the reference refused a {expected.dtype.name}{list(expected.shape)} capsule: "
              f"{type(exc).__name__}: {exc}")
        check(f"({code})" in str(exc), "DLP.IMPORT.2", f"refusal {exc!r}, the spec says {code}")
        check(probe.calls == 1, "DLP.IMPORT.2",
              f"the deleter ran {probe.calls} times after a refused import, not once")

    @rule(c=capsules, consumer=st.sampled_from(list(PRODUCERS)))
    def reconsume(self, c, consumer):
        """DLP.PY.USED.1: a consumed capsule is refused and nothing changes."""
        if c.cap is None or not c.consumed or consumer not in self.PEERS:
            return
        name, calls = dl.capsule_name(c.cap), c.probe.calls
        try:
            out = self.take(consumer, bridge.Holder(self, cap=c.cap, probe=c.probe))
        except bridge.NotSupported:
            return
        check(out is None, "DLP.PY.USED.1", f"{consumer} consumed a used capsule again")
        check(dl.capsule_name(c.cap) == name, "DLP.PY.USED.1",
              f"refusing a used capsule renamed it to {dl.capsule_name(c.cap)!r}")
        check(c.probe.calls == calls, "DLP.PY.USED.1", "refusing a used capsule ran its deleter")

    @rule(c=consumes(capsules))
    def drop_capsule(self, c):
        """DLP.PY.DTOR.1: an unconsumed capsule's destructor runs the deleter; a consumed
        one's does not."""
        if c.cap is None:
            return
        consumed, calls = c.consumed, c.probe.calls
        c.cap = None
        want = calls if consumed else calls + 1
        check(self.settled(lambda: c.probe.calls == want), "DLP.PY.DTOR.1",
              f"dropping a{' consumed' if consumed else 'n unconsumed'} capsule left its "
              f"deleter at {c.probe.calls} calls, not {want}")

    @rule(c=consumes(capsules), a=st.one_of(st.none(), consumes(arrays)))
    def unwind(self, c, a):
        """DLP.PY.UNWIND.1: a capsule (and an array of a peer) whose last references are
        a frame's that raises die when the handler drops the exception: the exception
        arrives as raised, no destructor raises, and the capsule's deleter runs as
        dropping it would (DLP.PY.DTOR.1)."""
        if c.cap is None:
            return
        consumed, calls = c.consumed, c.probe.calls
        box = [(c.cap, None)]
        c.cap = None
        if a is not None and a.obj is not None and a.peer != "tsmref":  # tsmref: release
            box[0], a.obj = (box[0][0], a.obj), None
        array_dropped = box[0][1] is not None

        def in_flight():
            held = box.pop()  # noqa: F841 -- the frame's own reference, gone with it
            raise bridge.Unwound("fuzz_capsules unwind")

        unraisable, hook = [], sys.unraisablehook
        sys.unraisablehook = unraisable.append
        replaced = None
        try:
            in_flight()
        except bridge.Unwound:
            pass
        except Exception as e:  # noqa: BLE001
            replaced = f"{type(e).__name__}: {e}"
        finally:
            sys.unraisablehook = hook
        check(replaced is None, "DLP.PY.UNWIND.1", f"the exception in flight became {replaced}")
        check(not unraisable, "DLP.PY.UNWIND.1", "a destructor raised while the exception "
              f"unwound: {unraisable[0].exc_value if unraisable else ''}")
        if array_dropped:
            return  # the array may be this capsule's import: teardown counts its deleter
        want = calls if consumed else calls + 1
        check(self.settled(lambda: c.probe.calls == want), "DLP.PY.UNWIND.1",
              f"a{' consumed' if consumed else 'n unconsumed'} capsule dropped by an unwinding "
              f"frame left its deleter at {c.probe.calls} calls, not {want}")

    @rule(a=consumes(arrays))
    def release(self, a):
        """Drops an array; a tsmref tensor is released at once (Tensor.release)."""
        if a.obj is None:
            return
        if a.peer == "tsmref":
            a.obj.release()
            a.handle.alive = False
        a.obj = None

    # -- after every step
    @invariant()
    def deleters_and_bytes(self):
        STATS["steps"] += 1
        for p in self.probes:
            check(not p.violations, "DLP.DEL.1", p.violations[0] if p.violations else "")
        for a in self.records:
            if isinstance(a, Arr) and a.obj is not None and a.aliases is not None and a.aliases.calls:
                ptr = peers.get(a.peer).data_ptr(a.obj) if a.peer != "tsmref" else None
                check(not (ptr and ptr == a.aliases.data), "DLP.DEL.1",
                      f"the deleter ran while {a!r} still aliases the memory (use after free)")
        self.upstream_deleters_right()
        live = self.settled(lambda: self.ref.live_bytes() - self.base_bytes == self.model_bytes())
        check(live, "MGR.COUNT.4", f"the reference has {self.ref.live_bytes() - self.base_bytes} "
              f"live bytes, the spec says {self.model_bytes()} (DLP.EXPORT.3-5, DLP.MGR.3)")

    @staticmethod
    def settled(cond):
        """cond() once true, or false after every collection and a short wait (a peer's
        reference cycle may hold a capsule, a peer may release on another thread). A full
        collection takes a third of a second with jax loaded: the young generations first."""
        for gen in (0, 1, 2):
            if cond():
                return True
            gc.collect(gen)
        for _ in range(20):
            if cond():
                return True
            time.sleep(0.002)
        return cond()

    def upstream_deleters_right(self):
        """DLP.MGR.1: an aliased import's deleter runs once neither the import nor an
        export of it lives, and not before."""
        for h in self.handles:
            if h.upstream is not None:
                right = self.settled(lambda: h.upstream.calls == (0 if h.pinned() else 1))
                check(right, "DLP.MGR.1", f"an aliased import's deleter ran {h.upstream.calls} "
                      f"times while the import or an export of it is "
                      f"{'alive' if h.pinned() else 'gone'}")

    def teardown(self):
        """Everything dropped: every deleter ran exactly once, live bytes back to start.
        Skipped after a failed step (its own message is the finding)."""
        failed = sys.exc_info()[0] is not None
        for rec in self.records:
            if isinstance(rec, Arr) and rec.peer == "tsmref" and rec.obj is not None:
                rec.obj.release()
            rec.obj = rec.cap = None
        self.records.clear()
        self.settled(lambda: all(p.calls for p in self.probes))
        if failed:
            return
        for p in self.probes:
            check(not p.violations, "DLP.DEL.1", p.violations[0] if p.violations else "")
            check(p.calls == 1, "DLP.DEL.1",
                  f"the deleter of {p.label or p.name_at_export} ran {p.calls} times by the end "
                  f"(capsule {p.name_at_destruction or 'alive'})")
        left = self.ref.live_bytes() - self.base_bytes
        check(left == 0, "MGR.COUNT.4", f"{left} live bytes left at the end")
        left = self.ref.live_count() - self.base_count
        check(left == 0, "MGR.COUNT.4", f"{left} live resources left at the end")


# ---- driver ---------------------------------------------------------------------------

def hypothesis_settings(args, examples, derandomize):
    db = None if derandomize else DirectoryBasedExampleDatabase(args.database)
    return settings(max_examples=examples, stateful_step_count=args.steps, deadline=None,
                    derandomize=derandomize, database=db, print_blob=True,
                    suppress_health_check=list(HealthCheck))


def run_batch(args, examples, derandomize):
    """One Hypothesis run; False when it found a failure (already printed)."""
    try:
        run_state_machine_as_test(CapsuleExchange,
                                  settings=hypothesis_settings(args, examples, derandomize))
        return True
    except Exception as e:  # noqa: BLE001 - the finding, printed with its shrunk steps
        # The traceback ends with Hypothesis's notes: the shrunk steps and the
        # @reproduce_failure line that replays them.
        print("".join(traceback.format_exception(e)), flush=True)
        print(f"fuzz-capsules: FAILURE: {type(e).__name__}: {e}", flush=True)
        return False


def main(argv=None):
    ap = argparse.ArgumentParser(prog="fuzz_capsules.py")
    ap.add_argument("--examples", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--derandomize", action="store_true")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--peers", default=",".join(PRODUCERS))
    ap.add_argument("--json")
    ap.add_argument("--reproduce", metavar="BLOB",
                    help="replay a failure: the blob of its @reproduce_failure line")
    ap.add_argument("--database", default=os.path.join(bridge.ROOT, "build", "fuzz", "corpus", "capsules"))
    args = ap.parse_args(argv)
    usable, skipped = available_peers(args.peers.split(","))
    if "tsmref" not in usable:
        print(f"fuzz-capsules: the reference is needed: {skipped.get('tsmref')}", file=sys.stderr)
        return 1
    CapsuleExchange.PEERS = usable
    if args.reproduce:
        reproduce_failure(hypothesis.__version__, args.reproduce.encode())(CapsuleExchange)
    for name, why in skipped.items():
        print(f"fuzz-capsules: skip peer {name}: {why}")
    t0, failures = time.time(), 0
    if args.seconds > 0:
        while time.time() - t0 < args.seconds:
            failures += not run_batch(args, args.examples, False)
    else:
        failures += not run_batch(args, args.examples, args.derandomize)
    secs = time.time() - t0
    counts = dict(STATS, failures=failures, seconds=round(secs, 1), peers=usable,
                  skipped=skipped, examples_per_s=round(STATS["examples"] / max(secs, 1e-9), 1))
    print(f"fuzz-capsules: {STATS['examples']} examples, {STATS['steps']} steps in {secs:.1f} s "
          f"({counts['examples_per_s']} examples/s), {failures} failures; peers "
          f"{','.join(usable)}; known deviations {STATS['known']}, peer refusals "
          f"{STATS['peer_refusals']}, reference refusals {STATS['ref_refusals']}, "
          f"lenient peers {STATS['lenient']}, Warnings (a SHOULD or TSM clause of a third "
          f"party) {STATS['warnings']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(counts, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
