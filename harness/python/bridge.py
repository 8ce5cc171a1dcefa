#!/usr/bin/env python3
"""bridge.py: the capsule-level runner of the DLPack Python clauses (spec/dlpack.md DLP.PY.*).

  bridge.py run [--large] [--json FILE] [-j N] [--peers a,b] [--peer-path P]
                [--device cpu|cuda:N] PATH...
  bridge.py peers
  bridge.py lint PATH...

Every case (cases/dlpack/python/*.pytsm, cases/peers/numpy/*.pytsm and
cases/peers/pytorch/*.pytsm, grammar in cases/dlpack/python/README.md) runs for
every producer x consumer pair of the peers, one plug-in module each (harness/python/peers/
and its README.md, and the modules a user names on TSM_CTS_PEERS or --peer-path;
`bridge.py peers` lists them and whether their arrays offer the C exchange API);
`roles: [producer]` cases run once per producer (consumer column "-"), `roles: [consumer]`
cases once per consumer with tsmref producing (producer row "-").

The DLPack 1.3 exchange table (DLP.XAPI.*) is reached through harness/python/xapi.py:
a producer's table is called through ctypes (xfrom, xalloc, xto, expect xapi, view,
workstream), and a consumer takes a tensor (exchange, echo) from a holder whose type
publishes a probing table in front of the producer's. A pair where the producer
publishes no table, or the consumer takes none, is NotSupported, counted against it.

Each producer row runs in its own worker process (peers imported once per process; a
crash loses only that row's remaining cells, reported Crash). Known failures of real
peers are listed in harness/expectations/python-<peer>.txt; they report XFail, and an
XPass fails the run like a Fail, Crash or Error. A Fail is graded by the strength of the
clause it breaks (grading.py): under --profile standard a broken SHOULD or TSM clause is
a Warning, which fails nothing. A run that needs what a peer lacks (a
role it declares it lacks, versioned capsules for a consumer that asks only for legacy
ones) is NotSupported; the report counts it, and each XFail, against that peer
(`attributed_to`).

--device (default cpu) is where the producer makes its arrays (Peer.devices, Peer.make_on):
a run on cuda:N takes the cases whose `devices:` names that device (`[cuda]`, `[cuda:0]`),
and one on the CPU those that name `any` or `cpu`; the others are left out (a line on
stderr), since the capsule cases were written for CPU arrays and a case says where else
it holds. A producer without the device is NotSupported, counted against it; so is a
consumer without it that refuses a tensor there. The bridge itself needs only the Python
standard library and numpy (a GPU machine's own python, without the project's .venv).

While it runs, a line per finished producer row goes to stderr. --json writes the
judge's report format (harness/schema/results.schema.json: family "interop", the
producer->consumer pair as the device, "producer->consumer@cuda:0" on a device) plus the matrix, so that `tsm-cts merge` puts
these results into the same JSON, JUnit and summary as the C cases.
"""
import argparse
import collections
import functools
import gc
import json
import os
import re
import subprocess
import sys
import time
import traceback

# Before peers' import sets it to "cpu": whether the user chose jax's platforms.
USER_JAX_PLATFORMS = os.environ.get("JAX_PLATFORMS")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import caselang  # noqa: E402
import grading  # noqa: E402
import peers  # noqa: E402
import xapi  # noqa: E402

EXC_TYPES = {"BufferError": BufferError, "ValueError": ValueError, "TypeError": TypeError,
             "RuntimeError": RuntimeError, "any": Exception}


class NotSupported(Exception):
    """A peer lacks what the case needs (reported NotSupported, with the reason, and
    counted against that peer: `peer`)."""

    def __init__(self, msg, peer=None):
        super().__init__(msg)
        self.peer = peer


class Withheld(BufferError):
    """What a re-consumption raises when the bridge does not hand a capsule over again:
    its first consumer took it without renaming it (DLP.PY.NAME.2), so handing it over
    would free its tensor twice."""


class Unwound(RuntimeError):
    """What `unwind` raises after its body (DLP.PY.UNWIND.1)."""


class CaseFail(Exception):
    def __init__(self, line, msg):
        super().__init__(f"line {line}: {msg}")
        self.line = line


# ---- execution ------------------------------------------------------------------------

class Holder:
    """What a consumer is handed: __dlpack__ returns the capsule under test (consume C)
    or forwards to the producer's array, probing each capsule (from A)."""

    def __init__(self, run, cap=None, probe=None, array=None, readonly=False):
        self.run, self.cap, self.probe, self.array = run, cap, probe, array
        self.readonly = readonly  # a read-only array has no legacy form (DLP.PY.RO.1)
        self.calls = []
        self.refused_legacy = None  # the request of a refused legacy-only call
        self.handed = False
        self.probe_kw = None
        self.refused_device = None  # the request of a dl_device the producer refused

    def __dlpack__(self, **kw):
        self.calls.append(kw)
        if self.array is None:
            mv = kw.get("max_version")
            if self.probe.versioned and (mv is None or tuple(mv) < (1, 0)):
                # What a producer with only the versioned form does (array API): the
                # consumer may ask again with max_version (nanobind does).
                self.refused_legacy = kw
                raise BufferError("the capsule under test is versioned: ask with "
                                  "max_version >= (1, 0)")
            self.handed = True
            return self.cap
        try:
            cap = self.array.__dlpack__(**kw)
        except BufferError:
            mv = kw.get("max_version")
            if self.readonly and (mv is None or tuple(mv) < (1, 0)):
                self.refused_legacy = kw
            here = tuple(self.array.__dlpack_device__())
            if "dl_device" in kw and tuple(kw["dl_device"]) != here and \
                    kw.get("copy") is not False:
                self.refused_device = kw
            raise
        self.cap, self.probe = cap, self.run.new_probe(cap, kw)
        self.probe_kw = kw  # the request that made probe
        return cap

    def __dlpack_device__(self):
        if self.array is not None:
            return self.array.__dlpack_device__()
        return self.probe.device

    def unsupported(self, consumer):
        """NotSupported when the consumer failed after asking only for a legacy capsule
        of a versioned one: it cannot take versioned capsules, which DLPack allows."""
        if self.refused_legacy is not None and not self.handed:
            return NotSupported("the consumer asks only for legacy capsules (__dlpack__ "
                                f"called with {self.refused_legacy})", consumer)
        if self.refused_device is not None and not self.run.expecting_error:
            # DLP.PY.ARGS.1: a dl_device the producer cannot serve raises BufferError, as
            # in Run.export; the consumer's from_dlpack(device=) then has nothing to take
            producer = self.run.P.name
            return NotSupported(f"{producer} cannot export its arrays to dl_device "
                                f"{tuple(self.refused_device['dl_device'])} and raised "
                                "BufferError, as DLP.PY.ARGS.1 permits", producer)
        return None


class ExchangeHolder(Holder):
    """What a consumer is handed by `exchange` and `echo`: an instance of a type of the
    bridge's own whose table (xapi.FrontTable, the class attribute `front`) stands in
    front of the producer's table; target is the producer's object. With a table of
    major 1 the consumer is to use it: its __dlpack__ makes the pair NotSupported. With a
    future major (DLP.XAPI.HEADER.2) __dlpack__ serves the producer's array, probed."""
    front = None

    def __init__(self, run, target, array):
        super().__init__(run, array=array)
        self.target = target
        self.refused_table = None  # the request of a __dlpack__ call refused for the table

    def __dlpack__(self, **kw):
        if self.front.major == 1:
            # A BufferError, not the bridge's own exception: a consumer written with
            # nanobind turns any other into a TypeError of its argument conversion.
            self.refused_table = kw
            raise BufferError("take this tensor through the exchange table of its type")
        return super().__dlpack__(**kw)


def _flat(v):
    import numpy as np
    return np.asarray(v).reshape(-1).tolist() if isinstance(v, list) else [v]


def _f32(v, dtype):
    """A case's LIST as the elements of dtype: rounded to it, and for a complex dtype
    read as (real, imaginary) pairs."""
    import numpy as np
    import dl
    npdt = dl.np_dtype(dtype)
    if npdt.kind == "c":
        pairs = np.asarray(v, dtype=np.float64).reshape(-1, 2)
        return (pairs[:, 0] + 1j * pairs[:, 1]).astype(npdt).tolist()
    return np.asarray(v, dtype=npdt).tolist()


class Run:
    def __init__(self, case, producer, consumer, soft=lambda msg: False, device="cpu"):
        import dl
        # the device the producer makes its arrays on (bridge.py run --device)
        self.device, self.pair = device, peers.device_pair(device)
        # soft(msg): whether a failed check that msg names is no Fail under the run's
        # profile (a SHOULD, or a TSM rule under --profile standard): the case then goes
        # on, so that the MUST checks after it still run, and ends as a Warning.
        self.soft, self.warnings = soft, []
        self.variants = []  # the variant of each MAY clause the run observed
        self.dl, self.case = dl, case
        self.P = peers.get(producer)
        self.C = peers.get(consumer)
        self.env = {}
        self.views = {}  # producer-side views (slice, transpose, readonly): name -> how
        self.unexportable = set()  # names of arrays no DLTensor describes
        self.probes = []
        self.line = 0
        # Capsules a consumer took without renaming, by id; each kept alive here, so that
        # its id cannot come back as another capsule's while the run lasts.
        self.taken_unrenamed = {}
        self.expecting_error = False
        self.streams = []  # the streams new_stream made, alive until the run ends

    def on_device(self, peer, what):
        """The run's device pair, or NotSupported for a peer that lacks it."""
        have = [tuple(int(i) for i in d) for d in peer.devices()]
        if self.pair not in have:
            raise NotSupported(f"{peer.name} {what} no arrays on {self.device} (it has "
                               f"{', '.join(peers.device_name(d) for d in have) or 'none'})",
                               peer.name)
        return self.pair

    def fail(self, msg):
        if self.soft(msg):
            self.warnings.append(f"line {self.line}: {msg}")
            return
        raise CaseFail(self.line, msg)

    def stop(self, msg):
        """A failed check after which the statement cannot go on (msg names its clause,
        which grades it), whatever the profile."""
        raise CaseFail(self.line, msg)

    def new_probe(self, cap, kw):
        try:
            p = self.dl.Probe(cap)
        except ValueError as e:
            self.fail(f"DLP.PY.NAME.1: {e}")
        self.probes.append(p)
        # DLP.PY.NAME.3: legacy unless the caller asked for a version >= 1.0 (the array
        # API recommends it; the consumer must check the version it got).
        mv = kw.get("max_version")
        if p.versioned and (mv is None or tuple(mv) < (1, 0)):
            self.fail(f"DLP.PY.NAME.3: capsule 'dltensor_versioned' returned for max_version={mv}")
        if p.versioned and p.version[0] != 1:
            self.fail(f"DLP.EXPORT.2: versioned capsule with major version {p.version[0]}")
        return p

    def get(self, name, kinds):
        if name not in self.env:
            self.fail(f"{name!r} is not bound")
        v = self.env[name]
        if v[0] not in kinds:
            self.fail(f"{name!r} is a {v[0]}, not a {' or '.join(kinds)}")
        return v

    # statements
    def exec_block(self, body):
        for st in body:
            self.exec(st)

    def exec(self, st):
        self.line = st["line"]
        op = st["op"]
        if op == "repeat":
            for _ in range(st["n"]):
                self.exec_block(st["body"])
            return
        if op == "flat":
            return self.flat(st)
        if op == "unwind":
            return self.unwind(st)
        getattr(self, "op_" + op)(st)
        self.line = st["line"]
        self.invariants()

    def op_make(self, st):
        import numpy as np
        shape, dtype = st["shape"], st["dtype"]
        try:
            npdt = self.dl.np_dtype(dtype)
        except LookupError as e:
            raise NotSupported(str(e)) from None
        n = int(np.prod(shape)) if shape else 1
        if "values" in st:
            vals = np.asarray(_f32(st["values"], dtype), dtype=npdt).reshape(-1)
            if vals.size != n:
                self.fail(f"{vals.size} values for shape {shape}")
        elif st["fill"] == "arange" and npdt.kind == "c":  # element k is k - k·i
            vals = (np.arange(n) * (1 - 1j)).astype(npdt)
        elif st["fill"] == "arange":
            vals = np.arange(n).astype(npdt)
        else:
            vals = np.zeros(n, dtype=npdt)
        if dtype not in self.P.dtypes:
            raise NotSupported(f"{self.P.name} makes no {dtype} arrays", self.P.name)
        if self.pair == (1, 0):
            arr = self.P.make(vals, shape, dtype)
        else:
            arr = self.P.make_on(vals, shape, dtype, self.on_device(self.P, "makes"))
        self.env[st["name"]] = ("array", arr, None)

    def export_kwargs(self, st):
        kw = {}
        if st["form"] == "versioned":
            kw["max_version"] = (1, 3)
        if "max_version" in st:
            kw["max_version"] = st["max_version"]
        for k in ("copy", "stream", "dl_device"):
            if k in st:
                kw[k] = st[k]
        if kw.get("stream") == "object":  # DLP.PY.STREAM.1: a stream that is no integer
            kw["stream"] = object()
        elif kw.get("stream") == "new":  # a real stream, made by the producer's framework
            kw["stream"] = self.new_stream()
        return kw

    def new_stream(self):
        """The integer of a stream the producer's framework makes on the run's device
        (Peer.new_stream), kept alive for the rest of the run; NotSupported for a peer
        that makes none there."""
        try:
            handle, keep = self.P.new_stream(self.pair)
        except NotImplementedError as e:
            raise NotSupported(f"{self.P.name} makes no streams on {self.device} ({e})",
                               self.P.name) from None
        self.streams.append(keep)
        return handle

    def op_export(self, st):
        arr = self.get(st["src"], ["array", "tensor"])[1]
        kw = self.export_kwargs(st)
        mv = kw.get("max_version")
        legacy_copy = kw.get("copy") is True and (mv is None or tuple(mv) < (1, 0))
        try:
            cap = arr.__dlpack__(**kw)
        except BufferError as e:
            here = tuple(arr.__dlpack_device__())
            if ("dl_device" in kw and tuple(kw["dl_device"]) != here and not self.expecting_error
                    and kw.get("copy") is not False):
                # DLP.PY.ARGS.1: a dl_device the producer cannot serve raises BufferError;
                # the rest of the case needs the capsule that was not made.
                raise NotSupported(f"{self.P.name} cannot export its arrays on {here} to "
                                   f"dl_device {tuple(kw['dl_device'])} and raised BufferError, "
                                   f"as DLP.PY.ARGS.1 permits: {e}", self.P.name) from None
            if not legacy_copy:
                raise
            # A variant the MAY clause allows: nobody is blamed, and what follows in the
            # case needs the capsule that was not made.
            raise NotSupported(f"DLP.PY.ARGS.2 (MAY): variant (b) observed: {self.P.name} "
                               f"refused copy=True on the legacy form with BufferError ({e}); "
                               "the rest of the case needs that capsule") from None
        except TypeError as e:
            new = [k for k in ("max_version", "dl_device", "copy") if k in kw and k in str(e)]
            if not new or "argument" not in str(e):
                raise
            self.stop(f"DLP.PY.ARGS.3: __dlpack__ takes no {new[0]}= keyword (array API "
                      f"2023.12): TypeError: {e}")
        if legacy_copy:
            self.variants.append("DLP.PY.ARGS.2 (MAY): variant (a) observed: a legacy capsule "
                                 "of a copy")
        probe = self.new_probe(cap, kw)
        self.env[st["name"]] = ("capsule", cap, probe)
        if "dl_device" in kw and tuple(probe.device) != tuple(kw["dl_device"]):
            # served, or it would have raised BufferError: the capsule is on dl_device
            self.fail(f"DLP.PY.ARGS.1: dl_device {tuple(kw['dl_device'])} asked of an array "
                      f"on {tuple(arr.__dlpack_device__())}, and the capsule's DLTensor is on "
                      f"{tuple(probe.device)}")

    def _consume(self, holder, probe_before, name, **kw):
        cap = holder.cap
        if cap is not None and id(cap) in self.taken_unrenamed:
            # Its first consumer took it by clearing the destructor: it still reads
            # unconsumed, so DLP.PY.USED.1 cannot be asked of anyone, and handing it over
            # again would free its tensor twice (a capsule from __dlpack__ is never seen
            # twice in the protocol: python_spec.rst).
            self.fail(f"DLP.PY.NAME.2: the capsule is named {self.dl.capsule_name(cap)!r} "
                      "after its consumer took it (destructor cleared, no rename), so a "
                      "second consumer cannot tell it was consumed")
            raise Withheld("the bridge withholds a capsule its first consumer took without "
                           "renaming it (DLP.PY.NAME.2)")
        used_before = cap is not None and self.dl.capsule_name(cap).startswith("used_")
        calls_before = probe_before.calls if probe_before else 0
        try:
            out = self.C.from_dlpack(holder, **kw)
        except Exception as e:
            unsupported = holder.unsupported(self.C.name) or self.off_device(holder, kw, e)
            if unsupported:
                raise unsupported from None
            if self.wrong_device(holder):
                self.stop(f"{self.wrong_device(holder)}; {self.C.name} refused it: "
                          f"{type(e).__name__}: {str(e)[:160]}")
            if used_before:  # DLP.PY.USED.1: a refused re-consumption changes nothing
                if self.dl.capsule_name(cap) != probe_before.name_at_export.join(["used_", ""]):
                    self.fail(f"DLP.PY.USED.1: refusing a used capsule renamed it to "
                              f"{self.dl.capsule_name(cap)!r}")
                if probe_before.calls != calls_before:
                    self.fail("DLP.PY.USED.1: refusing a used capsule ran its deleter")
            probe = holder.probe
            if (not self.expecting_error and probe is not None and probe.strides is not None
                    and probe.shape and 0 not in probe.shape
                    and [s for n, s in zip(probe.shape, probe.strides) if n != 1] !=
                    [s for n, s in zip(probe.shape, self.dl.compact_strides(probe.shape))
                     if n != 1]):
                self.stop(f"DLP.IMPORT.13: {self.C.name} refused a tensor of shape "
                          f"{probe.shape} and strides {probe.strides} (not compact): "
                          f"{type(e).__name__}: {str(e)[:160]}")
            raise
        if used_before:
            self.fail("DLP.PY.USED.1: a consumed capsule was consumed again")
        if self.wrong_device(holder):
            self.fail(self.wrong_device(holder))
        probe = holder.probe
        if probe is not None:
            now = self.dl.capsule_name(holder.cap)
            want = "used_" + probe.name_at_export
            if now != want:
                cleared = probe.destructor_cleared(holder.cap)
                if cleared and now == probe.name_at_export:
                    self.taken_unrenamed[id(holder.cap)] = holder.cap
                self.fail(f"DLP.PY.NAME.2: after consumption the capsule is named {now!r}, "
                          f"expected {want!r}" + (" (its destructor cleared instead: the "
                                                  "ownership was taken)" if cleared else ""))
        if name:
            self.env[name] = ("tensor", out, probe)

    def wrong_device(self, holder):
        """What broke DLP.PY.ARGS.1 when the consumer's last __dlpack__ call (from)
        asked for a dl_device and the producer's capsule is on another; None when not."""
        asked = holder.calls[-1].get("dl_device") if holder.calls and holder.array is not None \
            else None
        if asked is None or holder.probe is None or holder.calls[-1] is not holder.probe_kw:
            return None
        if tuple(holder.probe.device) == tuple(int(i) for i in asked):
            return None
        return (f"DLP.PY.ARGS.1: the consumer asked {self.P.name} for dl_device "
                f"{tuple(asked)} and got a capsule on {tuple(holder.probe.device)}")

    def off_device(self, holder, kw, e):
        """NotSupported when, in a run on a device, a consumer without the device of the
        tensor it was handed (Peer.devices), asked for no other device, refused it:
        python_spec.rst recommends BufferError for a device the consumer does not support.
        None otherwise."""
        if self.expecting_error or "device" in kw or self.pair == (1, 0):
            return None  # a run on the CPU judges refusals as it always has
        where = tuple(holder.probe.device) if holder.probe is not None else \
            tuple(int(i) for i in holder.__dlpack_device__())
        if where[0] == self.dl.KDLCPU or where in [tuple(d) for d in self.C.devices()]:
            return None
        return NotSupported(f"{self.C.name} has no arrays on {peers.device_name(where)} and "
                            f"refused the tensor there ({type(e).__name__}: {str(e)[:120]})",
                            self.C.name)

    def refuses(self, dtype, holder):
        """A consumer without dtype must refuse it (DLP.IMPORT.6): holder's import raises,
        and a capsule it took (renamed used_*) has had its deleter run once, one it left
        has not (DLP.IMPORT.2); the case is then NotSupported for it. A consumer that
        takes it after all has its peer's imports wrong: the case fails."""
        try:
            self.C.from_dlpack(holder)
        except Exception as e:  # noqa: BLE001
            why = f"{type(e).__name__}: {e}"[:120]
        else:
            self.fail(f"{self.C.name} imported a {dtype} tensor, which its peer module says "
                      "it has none of (Peer.imports)")
        probe, cap = holder.probe, holder.cap
        if probe is not None:
            name = self.dl.capsule_name(cap)
            # Taken: renamed used_* (DLP.PY.NAME.2), or its destructor cleared (NAME.4).
            taken = name.startswith("used_") or probe.destructor_cleared(cap)
            holder.cap = cap = None  # only a name of the case's may keep the capsule now
            settle(self.probes)
            # A capsule still bound (consume C) has had its deleter run if the consumer
            # took it, and not if it left it; a dead one has had it run, by whichever.
            want = 1 if taken or not probe.capsule_alive else 0
            if probe.calls != want:
                self.fail(f"DLP.DEL.1: {self.C.name} refused a {dtype} capsule (named "
                          f"{name!r} after the refusal{', destructor cleared' if taken and not name.startswith('used_') else ''}) "
                          f"and its deleter has run {probe.calls} times, not {want}")
        raise NotSupported(f"{self.C.name} has no {dtype} arrays and refused the import "
                           f"({why}), as DLP.IMPORT.6 permits", self.C.name)

    def op_consume(self, st):
        _, cap, probe = self.get(st["src"], ["capsule"])
        holder = Holder(self, cap=cap, probe=probe)
        if probe.dtype not in self.C.imports and not probe.dtype.startswith("code"):
            self.refuses(probe.dtype, holder)  # a type code DLPack lacks: none is exempt
        self._consume(holder, probe, st["name"])

    def op_from(self, st):
        kind, arr, _ = self.get(st["src"], ["array", "tensor"])  # a tensor: re-imported
        owner = self.P if kind == "array" else self.C
        dtype = None if st["src"] in self.unexportable else owner.dtype(arr)
        if dtype is not None and dtype not in self.C.imports:
            self.refuses(dtype, Holder(self, array=arr))
        kw = {"copy": st["copy"]} if "copy" in st else {}
        if "device" in st:
            kw["device"] = st["device"]
        for key in kw.keys() - self.C.from_keywords:
            raise NotSupported(f"{self.C.name}'s from_dlpack takes no {key}=", self.C.name)
        if "device" in kw:
            pair, kw["device"] = kw["device"], self.C.device_object(kw["device"])
            if kw["device"] is None:  # None would ask for no device at all
                raise NotSupported(f"{self.C.name} has no name for device {pair}", self.C.name)
        readonly = self.views.get(st["src"]) == ("readonly",) or (
            kind == "tensor" and self.C.writeable(arr) is False)  # numpy's legacy imports
        h = Holder(self, array=arr, readonly=readonly)
        try:
            self._consume(h, None, st["name"], **kw)
        except (BufferError, ValueError) as e:
            if kw.get("copy") is not False or self.expecting_error:
                raise
            # DLP.PY.FROM.1: a consumer that cannot share this buffer may refuse copy=False
            raise NotSupported(f"{self.C.name} refused copy=False, as DLP.PY.FROM.1 permits: "
                               f"{e}", self.C.name) from None
        if "as" in st:
            self.env[st["as"]] = ("capsule", h.cap, h.probe)

    def op_unexportable(self, st):
        """An array of the producer that no DLTensor describes (DLP.PY.EXPORT.1)."""
        arr = self.P.unexportable(st["what"])
        if arr is None:
            raise NotSupported(f"{self.P.name} has no array that is unexportable by its "
                               f"{st['what']}", self.P.name)
        self.env[st["name"]] = ("array", arr, None)
        self.unexportable.add(st["name"])

    def check_strided(self, st):
        """A strided view must stay inside the bytes of the array it views (a case that
        reaches outside would read freed or foreign memory): a made array's span."""
        import numpy as np
        _, shape, strides = st["how"]
        if st["src"] in self.views:
            self.fail(f"strided: {st['src']} is a view; strided views an array of make")
        lo, hi = self.span(st["src"])
        arr = self.env[st["src"]][1]
        itemsize = self.dl.np_dtype(self.P.dtype(arr)).itemsize
        if 0 in shape:
            return
        first = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
        last = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides)) + itemsize
        if first < 0 or last > hi - lo:
            self.fail(f"strided {list(shape)} bytes {list(strides)} reaches bytes "
                      f"[{first}, {last}) of {st['src']}, which holds {hi - lo} "
                      f"({int(np.prod(self.P.shape(arr)))} elements of {itemsize})")

    def op_view(self, st):
        """A producer-side view (slice, transpose, strided): a strided export to come."""
        arr = self.get(st["src"], ["array"])[1]
        if st["how"][0] == "strided":
            self.check_strided(st)
        try:
            view = self.P.view(arr, st["how"])
        except Exception as e:  # noqa: BLE001
            raise NotSupported(f"{self.P.name} makes no view {st['how']}: {e}", self.P.name) from None
        if view is None:
            raise NotSupported(f"{self.P.name} has no {st['how'][0]} view of its arrays",
                               self.P.name)
        self.env[st["name"]] = ("array", view, None)
        self.views[st["name"]] = st["how"]

    def span(self, name):
        """[lo, hi) of the bytes a made array, a consumer's tensor or a capsule holds
        (compact)."""
        import numpy as np
        if name in self.views:
            self.fail(f"expect shares: {name} is a view; it takes arrays of make, tensors "
                      "and capsules")
        kind, obj, probe = self.get(name, ["array", "tensor", "capsule"])
        if kind == "capsule":
            n = int(np.prod(probe.shape)) * self.dl.np_dtype(probe.dtype).itemsize
            return probe.data, probe.data + n
        peer = self.P if kind == "array" else self.C
        ptr = peer.data_ptr(obj)
        if ptr is None:
            raise NotSupported(f"{peer.name} gives no data pointer of its arrays", peer.name)
        n = int(np.prod(peer.shape(obj))) * self.dl.np_dtype(peer.dtype(obj)).itemsize
        return ptr, ptr + n

    def expect_shares(self, st):
        (a0, a1), (b0, b1) = self.span(st["x"]), self.span(st["y"])
        shares = a0 < b1 and b0 < a1
        if shares != (st["kind"] == "shares"):
            self.fail(f"expect {'shares' if st['kind'] == 'shares' else 'not shares'}: "
                      f"{st['x']} holds [{a0:#x}, {a1:#x}), {st['y']} [{b0:#x}, {b1:#x})")

    # the DLPack 1.3 exchange table (xapi.py)
    def expect_writeable(self, x, want):
        """DLP.PY.WRITE.1: a versioned import's writeable flag. Not writeable is also
        met by arrays that are never writeable and by a writeable copy that shares
        nothing with the capsule."""
        _, obj, probe = self.get(x, ["tensor"])
        if probe is not None and not probe.versioned:
            raise NotSupported(f"{self.C.name} imported a legacy capsule, whose "
                               "writeability DLP.PY.WRITE.1 leaves to the consumer", self.C.name)
        w = self.C.writeable(obj)
        if w is None and want:
            raise NotSupported(f"{self.C.name}'s arrays are never writeable", self.C.name)
        if not w or want:
            if bool(w) != want:
                self.fail(f"DLP.PY.WRITE.1: expect {'' if want else 'not '}writeable {x}: "
                          f"{self.C.name}'s result is {'' if w else 'not '}writeable")
            return
        ptr = self.C.data_ptr(obj)  # writeable, and not wanted: a copy is fine
        if ptr is None:
            raise NotSupported(f"{self.C.name} gives no data pointer of its arrays", self.C.name)
        if probe is not None and ptr == probe.data:
            self.fail(f"DLP.PY.WRITE.1: expect not writeable {x}: {self.C.name}'s result is "
                      "writeable")

    def exchange_object(self, arr):
        obj = self.P.exchange_object(arr)
        if obj is None:
            raise NotSupported(f"{self.P.name} publishes no {xapi.ATTR}", self.P.name)
        return obj

    def table(self, typ):
        if typ is None:
            raise NotSupported(f"{self.P.name} publishes no {xapi.ATTR}", self.P.name)
        return xapi.Table(typ, note=self.fail)

    def xapi_call(self, fn, *args):
        """fn(*args) of xapi.py: a Violation fails the case, NoTable (the producer's) makes
        it NotSupported."""
        try:
            return fn(*args)
        except xapi.Violation as e:
            self.fail(str(e))
        except xapi.NoTable as e:
            raise NotSupported(str(e), self.P.name) from None

    def bind_managed(self, name, ptr, checked=True):
        """Binds the managed tensor at ptr, now the bridge's, as a capsule of its own;
        checked: probed with the checks of a producer's versioned capsule."""
        cap = self.dl.capsule_of(ptr)
        if checked:
            probe = self.new_probe(cap, {"max_version": (1, 3)})
        else:
            probe = self.dl.Probe(cap)
            self.probes.append(probe)
        probe.via_table = True  # its flags are DLP.XAPI.FLAGS.1's
        self.env[name] = ("capsule", cap, probe)

    def op_xfrom(self, st):
        obj = self.exchange_object(self.get(st["src"], ["array"])[1])
        table = self.xapi_call(self.table, type(obj))
        self.bind_managed(st["name"], self.xapi_call(table.from_object, obj))

    def op_xalloc(self, st):
        table = self.xapi_call(self.table, self.P.exchange_type())
        ptr = self.xapi_call(table.allocate, st["shape"], st["dtype"], st.get("device", (1, 0)))
        self.bind_managed(st["name"], ptr)

    def op_forge(self, st):
        f = self.dl.Forged(st["shape"], st["dtype"], st.get("major", 1), st.get("device", (1, 0)),
                           st.get("code"))
        self.bind_managed(st["name"], f.ptr, checked=False)

    def op_xto(self, st):
        """C's tensor through the producer's managed_tensor_to_py_object_no_sync: the
        capsule is the bridge's box; its tensor moves to the new object on success only
        (DLP.XAPI.TO.1), and then the capsule is marked used."""
        _, cap, probe = self.get(st["src"], ["capsule"])
        if self.dl.capsule_name(cap) != "dltensor_versioned":
            self.fail(f"xto takes an unconsumed versioned capsule, not one named "
                      f"{self.dl.capsule_name(cap)!r}")
        table = self.xapi_call(self.table, self.P.exchange_type())
        calls = probe.calls
        try:
            obj = self.xapi_call(table.to_object, self.dl.capsule_pointer(cap))
        except (CaseFail, NotSupported):
            raise
        except Exception:
            if probe.calls != calls:
                # The producer took the tensor on failure (DLPack is silent): the bridge's
                # capsule must not run its deleter again.
                self.dl.set_capsule_name(cap, "used_dltensor_versioned")
                self.fail("DLP.XAPI.TO.2: a refused tensor's deleter ran: the caller still "
                          "owns it")
            raise
        self.dl.set_capsule_name(cap, "used_dltensor_versioned")
        if type(obj) is not table.typ:
            self.fail(xapi.type_problem(obj, table.typ))
        self.env[st["name"]] = ("array", obj, None)

    def through_front(self, st, call):
        """call(holder) with a holder of A whose type publishes a front table; fails on
        what the table's callbacks saw. RETURN (result, the holder, the probes of the
        managed tensors that passed the table, the calls of its functions)."""
        arr = self.get(st["src"], ["array"])[1]
        obj = self.exchange_object(arr)
        table = self.xapi_call(self.table, type(obj))
        front = xapi.FrontTable.get(table, ExchangeHolder, st.get("major", 1),
                                    st.get("chain", False))
        seen, problems, calls = [], len(front.problems), collections.Counter(front.calls)
        front.sink = seen.append
        holder = front.holder_type(self, obj, arr)
        try:
            out = call(holder)
        except Exception:
            if holder.refused_table is None:
                raise
            raise NotSupported("the consumer takes no tensor through an exchange table (it "
                               f"called __dlpack__ with {holder.refused_table})",
                               self.C.name) from None
        finally:
            front.sink = lambda probe: None
            self.probes += seen
            if front.problems[problems:]:
                self.fail(front.problems[problems])
        return out, holder, seen, front.calls - calls

    def op_exchange(self, st):
        out, holder, seen, calls = self.through_front(st, self.C.from_dlpack)
        if not calls["from"] and st.get("major", 1) == 1:
            raise NotSupported("the consumer took the tensor without the table's "
                               "managed_tensor_from_py_object_no_sync", self.C.name)
        self.env[st["name"]] = ("tensor", out, seen[0] if seen else holder.probe)

    def op_echo(self, st):
        try:
            out, _, _, calls = self.through_front(st, self.C.echo)
        except NotImplementedError as e:
            raise NotSupported(str(e), self.C.name) from None
        if not calls["to"]:
            raise NotSupported(f"the consumer returned a {type(out).__qualname__} without the "
                               "table's managed_tensor_to_py_object_no_sync", self.C.name)
        self.env[st["name"]] = ("array", out, None)

    def expect_exchange(self, k, x, st):
        """expect xapi / workstream / view X: the producer's table for array X."""
        arr = self.get(x, ["array"])[1]
        obj = self.exchange_object(arr)
        if k == "xapi":
            return self.xapi_call(xapi.check_table, obj)
        table = self.xapi_call(self.table, type(obj))
        if k == "workstream":
            got = self.xapi_call(table.work_stream, st["device"])
            if got != st["v"]:
                unwritten = " (*out left unwritten)" if got == xapi.SENTINEL else ""
                self.fail(f"DLP.XAPI.STREAM.1: current_work_stream{st['device']} gave "
                          f"{got:#x}{unwritten}, expected {st['v']:#x}")
            return None
        view = self.xapi_call(table.view, obj)
        got = {"shape": [view.shape[i] for i in range(view.ndim)] if view.ndim else [],
               "device": (view.device.device_type, view.device.device_id),
               "strides": bool(view.strides) or view.ndim == 0}
        want = {"shape": list(self.P.shape(arr)), "device": tuple(obj.__dlpack_device__()),
                "strides": True}
        if got != want:
            self.fail(f"DLP.XAPI.VIEW.1: the view has {got}, expected {want}")
        values = _flat(self.dl.read_dltensor(view))
        if values != _flat(_f32(st["v"], self.dl.dtype_name(view.dtype))):
            self.fail(f"expect view {x}: expected {st['v']!r}, got {values!r}")
        return None

    def op_drop(self, st):
        for n in st["names"]:
            self.get(n, ["array", "capsule", "tensor"])
            del self.env[n]

    def op_collect(self, st):
        gc.collect()

    def op_expect_error(self, st):
        types = tuple(EXC_TYPES[e] for e in st["exc"])
        inner = st["stmt"]
        self.expecting_error = True
        try:
            getattr(self, "op_" + inner["op"])(inner)
        except (CaseFail, NotSupported):
            raise
        except types:
            return
        except Exception as e:  # noqa: BLE001
            if ("BufferError" in st["exc"] and inner.get("src") in self.unexportable
                    and inner["op"] in ("export", "from")):
                # It raised, as DLP.PY.EXPORT.1 asks; the class is DLP.PY.EXPORT.2's.
                return self.fail(f"DLP.PY.EXPORT.2: expected {'|'.join(st['exc'])}, got "
                                 f"{type(e).__name__}: {e}")
            # A refusal of the exchange table's functions with another class than the
            # case names: the class is a weaker clause's than the refusal.
            weaker = {"xto": "DLP.XAPI.TO.2", "xalloc": "DLP.XAPI.ALLOC.4",
                      "xfrom": "DLP.XAPI.FROM.2"}.get(inner["op"])
            if weaker:
                return self.fail(f"{weaker}: expected {'|'.join(st['exc'])}, got "
                                 f"{type(e).__name__}: {e}")
            self.fail(f"expected {'|'.join(st['exc'])}, got {type(e).__name__}: {e}")
        finally:
            self.expecting_error = False
        self.fail(f"expected {'|'.join(st['exc'])}, the statement succeeded")

    def values_of(self, name):
        kind, obj, probe = self.get(name, ["array", "tensor", "capsule"])
        if kind == "array":
            return self.P.tolist(obj), self.P.dtype(obj)
        if kind == "tensor":
            return self.C.tolist(obj), self.C.dtype(obj)
        if probe.values is None and probe.device[0] != self.dl.KDLCPU:
            self.stop(f"expect values {name}: a capsule on {peers.device_name(probe.device)} "
                      "is read on the host alone (consume it, or export it with device (1, 0))")
        return probe.values, probe.dtype

    def op_expect(self, st):
        k, x, v = st["kind"], st["x"], st.get("v")
        if k in ("xapi", "workstream", "view"):
            return self.expect_exchange(k, x, st)
        if k in ("shares", "noshares"):
            return self.expect_shares(st)
        if k in ("writeable", "nowriteable"):
            return self.expect_writeable(x, k == "writeable")
        if k in ("name", "version", "flag", "noflag", "deleted", "strides", "offset"):
            _, cap, probe = self.get(x, ["capsule"])
        if k == "name":
            got = self.dl.capsule_name(cap)
            if got != v:
                self.expect_name(x, cap, probe, got, v)
                return
        elif k == "version":
            got = probe.version[0] if probe.versioned else 0
        elif k in ("flag", "noflag"):
            bit = self.dl.FLAG_IS_COPIED if st["flag"] == "copied" else self.dl.FLAG_READ_ONLY
            has = bool(probe.flags and probe.flags & bit)
            if has != (k == "flag"):
                if not probe.versioned and k == "flag":
                    # A legacy capsule where the case asked for the versioned form: the
                    # "different version" the array API permits (DLP.PY.NAME.3).
                    return self.fail(f"DLP.PY.NAME.3: flag {st['flag']} expected, but the "
                                     f"capsule is legacy ({probe.name_at_export}), which has "
                                     "no flags")
                clause = ("DLP.XAPI.FLAGS.1" if getattr(probe, "via_table", False) else
                          "DLP.PY.ARGS.1" if st["flag"] == "copied" else "DLP.PY.RO.1")
                self.fail(f"{clause}: flag {st['flag']} is {'set' if has else 'not set'} "
                          f"(flags={probe.flags}, capsule {probe.name_at_export})")
            return
        elif k == "deleted":
            gc.collect()
            got = probe.calls
        elif k == "strides":
            got = probe.strides
        elif k == "offset":
            got = probe.byte_offset
        elif k == "values":
            got, dtype = self.values_of(x)
            v = _flat(_f32(v, dtype))
            got = _flat(got)
        elif k == "shape":
            kind, obj, probe = self.get(x, ["array", "tensor", "capsule"])
            got = list(probe.shape if kind == "capsule" else
                       (self.P if kind == "array" else self.C).shape(obj))
        elif k == "dtype":
            got = self.values_of(x)[1]
        elif k == "device":
            got = tuple(int(i) for i in self.get(x, ["array", "tensor"])[1].__dlpack_device__())
        if got != v:
            self.fail(f"expect {k} {x}: expected {v!r}, got {got!r}")

    def expect_name(self, x, cap, probe, got, want):
        """`expect name X == WANT` that does not hold: the clause it breaks."""
        msg = f"expect name {x}: expected {want!r}, got {got!r}"
        if want.startswith("used_") and got == want[len("used_"):]:
            if id(cap) in self.taken_unrenamed or probe.destructor_cleared(cap):
                # Taken by clearing the destructor: _consume has reported DLP.PY.NAME.2.
                return self.fail(f"DLP.PY.NAME.2: {msg} (destructor cleared instead)")
            return self.fail(f"DLP.PY.NAME.4: {msg}: the capsule's destructor still runs "
                             "the deleter of a tensor the consumer holds")
        if want.startswith("used_"):
            return self.fail(f"DLP.PY.NAME.2: {msg}")
        if {want, got} == {"dltensor", "dltensor_versioned"}:
            return self.fail(f"DLP.PY.NAME.3: {msg}")
        return self.fail(f"DLP.PY.NAME.1: {msg}")

    # checks
    def invariants(self):
        for p in self.probes:
            if p.violations:
                self.fail(f"DLP.DEL.1: {p.violations[0]}")
        for name, (kind, obj, probe) in self.env.items():
            if kind == "tensor" and probe is not None and probe.calls > 0:
                ptr = self.C.data_ptr(obj)
                if ptr and ptr == probe.data:
                    self.fail(f"DLP.DEL.1: the deleter of {name}'s capsule ran while the "
                              f"consumer's tensor still aliases it (use after free)")

    def flat(self, st):
        dl = self.dl
        before = set(self.env)
        gc.collect()
        o0, r0 = dl.outstanding(), dl.rss_bytes()
        dl.Probe.snapshot_values = False
        try:
            self.exec_block(st["body"])
        finally:
            dl.Probe.snapshot_values = True
        for n in set(self.env) - before:
            del self.env[n]
        settle(self.probes)
        o1, r1 = dl.outstanding(), dl.rss_bytes()
        self.line = st["line"]
        if o1 > o0:
            self.fail(f"DLP.PY.ROUND.1: {o1 - o0} capsule deleters never ran over the loop "
                      f"(leak; RSS grew {(r1 - r0) / 2**20:.1f} MiB)")
        if r1 - r0 > st["mib"] * 2**20:
            self.fail(f"DLP.PY.ROUND.1: RSS grew {(r1 - r0) / 2**20:.1f} MiB over the loop "
                      f"(limit {st['mib']} MiB)")

    def unwind(self, st):
        """`unwind { ... }` (DLP.PY.UNWIND.1): the body runs in a frame that then raises;
        what it bound is that frame's, and dies with it when the handler drops the
        exception (and its traceback). The exception that arrives must be the one raised,
        no destructor may raise (an unraisable exception), and every deleter of a capsule
        made inside must have run."""
        first_probe = len(self.probes)
        unraisable, hook = [], sys.unraisablehook
        outer, body_done = self.env, []

        def in_flight():
            local = dict(outer)  # the frame's own: what the body binds dies with it
            self.env = local
            try:
                self.exec_block(st["body"])
            finally:
                self.env = outer
            body_done.append(True)
            raise Unwound(id(local))

        sys.unraisablehook = unraisable.append
        try:
            in_flight()
        except Unwound:
            pass  # leaving the handler frees the traceback, the frame and its names
        except (CaseFail, NotSupported):
            raise
        except Exception as e:  # noqa: BLE001
            if not body_done:
                raise  # a statement of the body failed
            self.line = st["line"]
            self.fail(f"DLP.PY.UNWIND.1: the exception in flight was replaced by "
                      f"{type(e).__name__}: {e}")
        finally:
            sys.unraisablehook = hook
        settle(self.probes)
        self.line = st["line"]
        if unraisable:
            u = unraisable[0]
            self.fail(f"DLP.PY.UNWIND.1: a destructor raised while the exception unwound: "
                      f"{u.exc_type.__name__}: {u.exc_value}")
        for p in self.probes[first_probe:]:
            if p.calls != 1 and not p.capsule_alive:
                self.fail(f"DLP.DEL.1: a capsule made inside an unwound frame ran its deleter "
                          f"{p.calls} times once the exception unwound "
                          f"({'leak' if p.calls == 0 else 'double release'}; exported as "
                          f"{p.name_at_export}, now {p.name_at_destruction or 'alive'})")

    def finish(self):
        self.line = 0
        self.env.clear()
        settle(self.probes)
        self.invariants()
        for p in self.probes:
            if p.calls != 1:
                where = (f"{p.label}" if p.label else
                         f"exported as {p.name_at_export}, now "
                         f"{p.name_at_destruction or 'alive'}")
                self.fail(f"DLP.DEL.1: a {'capsule' if not p.label else 'managed tensor'}'s "
                          f"deleter ran {p.calls} times by the end "
                          f"({'leak' if p.calls == 0 else 'double release'}; {where})")


SETTLE_QUIET_S = 0.25  # no pending deleter ran for this long: the peer is done
SETTLE_MAX_S = 10.0


def settle(probes):
    """Collects garbage, then waits while a peer still runs deleters of dead capsules
    on another thread (jaxlib releases its buffers on its own threads, which on a loaded
    machine takes a while): until none is pending, or none ran for SETTLE_QUIET_S (a
    leak), at most SETTLE_MAX_S."""
    for _ in range(3):
        gc.collect()

    def pending():
        return sum(1 for p in probes if not p.calls and not p.capsule_alive)

    start = changed = time.monotonic()
    n = pending()
    while n and time.monotonic() - changed < SETTLE_QUIET_S and \
            time.monotonic() - start < SETTLE_MAX_S:
        time.sleep(0.002)
        if pending() != n:
            n, changed = pending(), time.monotonic()
    gc.collect()


def run_one(case, producer, consumer, soft=lambda msg: False, device="cpu"):
    """(status, message, the peer a NotSupported is counted against or None). A case
    whose only failed checks were soft ones (Run.soft) ran to its end: it is a Fail
    whose message names only their clauses, which grading.grade makes a Warning.
    device: where the producer makes its arrays (bridge.py run --device)."""
    r = Run(case, producer, consumer, soft, device)
    try:
        r.exec_block(case["body"])
        r.finish()
        if r.warnings:
            return "Fail", "\n".join(r.warnings) + "\n(the case ran to its end: these checks "\
                "are no failure under this profile)", None
        return "Pass", "\n".join(r.variants), None
    except CaseFail as e:
        return "Fail", str(e), None
    except NotSupported as e:
        return "NotSupported", f"{e.peer}: {e}", e.peer
    except Exception as e:  # noqa: BLE001
        tb = traceback.extract_tb(e.__traceback__)
        # A producer's __dlpack__ without a 2023.12 keyword, called with it by a consumer
        # that does not fall back (the array API's recommended logic): DLP.PY.ARGS.3.
        new = [k for k in ("max_version", "dl_device", "copy") if k in str(e)]
        clause = "DLP.PY.ARGS.3: " if isinstance(e, TypeError) and new and \
            tb[-1].name == "__dlpack__" and "argument" in str(e) else ""
        return "Fail", f"line {r.line}: {clause}unexpected {type(e).__name__}: {e} " \
            f"({tb[-1].name})", None
    finally:
        r.env.clear()
        gc.collect()


# ---- expectations, matrix ---------------------------------------------------------------

def load_expectations(folder):
    out = []
    if not os.path.isdir(folder):
        return out
    for fn in sorted(os.listdir(folder)):
        if not (fn.startswith("python-") and fn.endswith(".txt")):
            continue
        # python-<peer>.txt lists the failures counted against <peer>
        out += expectation_file(os.path.join(folder, fn), fn[len("python-"):-len(".txt")])
    return out


def expectation_file(path, peer):
    """The lines of one expectations file, each counted against peer (the pytest plugin,
    harness/python/tsm_cts, reads a library's own file of any name through this)."""
    out = []
    fn = os.path.basename(path)
    with open(path) as f:
        for i, ln in enumerate(f, 1):
            s = ln.strip()
            if not s or s.startswith("#"):
                continue
            parts = s.split(None, 3)
            if len(parts) < 4 or "->" not in parts[1] or "|" not in parts[3]:
                raise SystemExit(f"{fn}:{i}: expected 'CASE PRODUCER->CONSUMER STATUS "
                                 f"reason | reference'")
            p, c = parts[1].split("->")
            out.append({"case": parts[0], "producer": p, "consumer": c,
                        "status": parts[2], "reason": parts[3], "file": f"{fn}:{i}",
                        "peer": peer, "used": False})
    return out


def match_expectation(exps, case_id, p, c):
    """The line that decides a run: the most specific one that matches (a named peer
    before `*`, so that python-<producer>.txt can claim a pair another file's
    `*->consumer` line covers), then the first in file order."""
    hits = [e for e in exps if e["case"] == case_id and e["producer"] in ("*", p)
            and e["consumer"] in ("*", c)]
    return min(hits, key=lambda e: (e["producer"] == "*") + (e["consumer"] == "*"),
               default=None)


def attribute_warnings(results):
    """A Warning that no expectation line attributes is counted against the side that
    shows it: a Warning of a pair with the reference (which passes under the strict
    profile), or of a role-only run, is its other side's; else the consumer C's when
    tsmref->C gives the same Warning on the case, the producer P's when P->tsmref does;
    else C's when P passes the case with another consumer, P's when another producer
    passes it with C. One that none of these explains stays unattributed."""
    seen = {(r["case"], r["producer"], r["consumer"]): r for r in results}
    passes = {(r["case"], r["producer"], "P") for r in results if r["status"] == "Pass"} | \
        {(r["case"], r["consumer"], "C") for r in results if r["status"] == "Pass"}

    def same(key, r):
        o = seen.get(key)
        return o is not None and o["status"] == "Warning" and o.get("graded_by") == r.get("graded_by")

    ref = ("tsmref", "-")
    for r in results:
        if r["status"] != "Warning" or r.get("attributed_to"):
            continue
        p, c = r["producer"], r["consumer"]
        if p in ref and c not in ref:
            r["attributed_to"] = c
        elif c in ref and p not in ref:
            r["attributed_to"] = p
        elif same((r["case"], "tsmref", c), r):
            r["attributed_to"] = c
        elif same((r["case"], p, "tsmref"), r):
            r["attributed_to"] = p
        elif ((r["case"], p, "P") in passes) != ((r["case"], c, "C") in passes):
            r["attributed_to"] = c if (r["case"], p, "P") in passes else p


def case_id(path):
    rel = os.path.relpath(os.path.abspath(path), os.path.join(ROOT, "cases"))
    return rel


def lacked_role(producer, consumer):
    """(peer, reason) when a peer lacks its role in the pair (Peer.lacks), else None."""
    for peer, role in ((producer, "producer"), (consumer, "consumer")):
        if peer != "-" and role in peers.classes()[peer].lacks:
            return peer, f"{peer} is no {role}: {peers.classes()[peer].lacks[role]}"
    return None


def case_on(case, device):
    """Whether a case runs on device: its `devices:` names `any` (the default) or a
    prefix of the device's name (`cuda` or `cuda:0` for cuda:0), and on a device other
    than the CPU only a name of it: the capsule cases were written for CPU arrays, and
    one that holds on a device says so."""
    names = case.get("devices") or ["any"]
    if device != "cpu" and "any" in names:
        return False
    return any(n == "any" or device.startswith(n) for n in names)


def jobs_for(cases, peers_list, large, device="cpu"):
    jobs = []
    for c in cases:
        if not case_on(c, device):
            continue
        skip = "large" in c["tags"] and not large
        roles = set(c["roles"])
        if roles == {"producer", "consumer"}:
            pairs = [(p, q) for p in peers_list for q in peers_list]
        elif roles == {"producer"}:
            pairs = [(p, "-") for p in peers_list]
        else:
            pairs = [("-", q) for q in peers_list]
        for p, q in pairs:
            jobs.append({"path": c["path"], "producer": p, "consumer": q, "skip": skip,
                         "lacks": lacked_role(p, q), "clauses": c["clauses"],
                         "device": device})
    return jobs


def worker_main(args):
    """Runs the jobs of one producer row, one JSON line per result."""
    with open(args.jobs) as f:
        jobs = json.load(f)
    strengths = grading.load_strengths(os.path.join(ROOT, "spec"))
    cache = {}
    for j in jobs:
        if j["path"] not in cache:
            cache[j["path"]] = caselang.parse_file(j["path"])
        print(json.dumps({"start": j}), flush=True)
        p = "tsmref" if j["producer"] == "-" else j["producer"]
        c = "tsmref" if j["consumer"] == "-" else j["consumer"]
        t0 = time.time()
        soft = functools.partial(grading.is_soft, strengths=strengths, profile=j["profile"])
        status, msg, peer = run_one(cache[j["path"]], p, c, soft, j.get("device", "cpu"))
        print(json.dumps({"done": j, "status": status, "message": msg, "attributed_to": peer,
                          "seconds": round(time.time() - t0, 3)}), flush=True)
        # What outlives a finished case (the frameworks' modules and caches, the probes'
        # registry) is frozen out of later collections: a run collects five times, and
        # a full collection of a process holding jax, mlx and ONNX Runtime walks
        # ~100,000 objects (50 ms), which was half the matrix's time.
        gc.freeze()
    return 0


def progress(row, out, n_cells, secs, exps, grade_of):
    """One line on stderr per finished producer row, as the judge prints per family;
    a known failure (the expectations files) or a Warning is not counted as not ok."""
    bad = 0
    for ln in out.splitlines():
        rec = json.loads(ln) if '"done"' in ln else {}
        if rec.get("status", "Pass") in ("Pass", "Skip", "NotSupported"):
            continue
        j = rec["done"]
        if grade_of(dict(j, status=rec["status"], message=rec["message"])) == "Warning":
            continue
        e = match_expectation(exps, case_id(j["path"]), j["producer"], j["consumer"])
        bad += not (e and e["status"] == rec["status"])
    print(f"bridge.py: producer {row:<8} {n_cells:4d} cells done, {bad} not ok ({secs:.1f} s)",
          file=sys.stderr, flush=True)


def profile_for(r, profile):
    """The profile run r is graded by. The reference is judged strict whatever the
    profile: a pair of the reference with itself (or its role-only runs) is the suite's
    own check, not a third party (its jobs carry the profile they run under for the same
    reason)."""
    return "strict" if {r["producer"], r["consumer"]} <= {"tsmref", "-"} else profile


def judge_result(r, exps, strengths, profile):
    """Grades one run's raw result r in place, as run_main does every result (the pytest
    plugin, harness/python/tsm_cts, one at a time): its case id, the strength of what
    broke (grading.py), then the expectations exps."""
    cid = case_id(r["path"])
    r["case"] = cid
    r["status"], by = grading.grade(r["status"], r.get("message", ""), r.get("clauses", []),
                                    strengths, profile_for(r, profile), r["path"])
    if by:
        r["graded_by"] = by
    if r["status"] in ("Skip", "NotSupported"):
        return
    e = match_expectation(exps, cid, r["producer"], r["consumer"])
    if e:
        e["used"] = True
        r["expectation"] = e["reason"]
        r["attributed_to"] = e["peer"]
        if r["status"] == e["status"]:
            # graded by the clause its line names (reviewed against the source), not
            # by every clause the case cites: one that breaks no requirement under the
            # profile is a Warning
            r["status"] = "XFail"
            claimed = re.match(r"((?:[A-Z]+(?:\.[A-Z]+)+\.[0-9]+ [A-Za-z]+(?:, )?)+):",
                               e["reason"])
            if claimed:
                r["graded_by"] = claimed.group(1)
                ids = [p.split(" ")[0] for p in claimed.group(1).split(", ")]
                if not grading.breaks_as_fail(ids, strengths, profile_for(r, profile)):
                    r["status"] = "Warning"
        elif r["status"] == "Pass":
            r["status"] = "XPass"
        # A Warning under a Fail line still deviates: the profile or the clause's
        # strength makes it no failure, and the line stays in use.


def run_main(args):
    files = caselang.collect(args.paths)
    cases, errors = [], []
    for _, parsed in caselang.parse_files(files):
        if isinstance(parsed, caselang.ParseError):
            errors.append(str(parsed))
        else:
            cases.append(parsed)
    for e in errors:
        print(f"parse error: {e}", file=sys.stderr)
    peers_list = chosen_peers(args.peers)
    jobs = jobs_for(cases, peers_list, args.large, args.device)
    left = [c["path"] for c in cases if not case_on(c, args.device)]
    if left:
        print(f"bridge.py: {len(left)} cases left out on {args.device} (their devices: name "
              "another)", file=sys.stderr)
    exps = load_expectations(args.expectations)
    strengths = grading.load_strengths(os.path.join(ROOT, "spec"))

    def profile_of(r):
        return profile_for(r, args.profile)

    def grade_of(r):
        return grading.grade(r["status"], r.get("message", ""), r.get("clauses", []),
                             strengths, profile_of(r), r["path"])[0]

    results = []
    rows = {}
    for j in jobs:
        if j["skip"]:
            results.append(dict(j, status="Skip", message="large (run with --large)"))
        elif j["lacks"]:
            results.append(dict(j, status="NotSupported", message=j["lacks"][1],
                                attributed_to=j["lacks"][0]))
        else:
            rows.setdefault(j["producer"], []).append(dict(j, profile=profile_of(j)))
    procs = []
    import tempfile
    tmpdir = tempfile.mkdtemp(prefix="tsm-bridge-")
    pending = list(rows.items())
    running = []
    t0 = time.time()

    def start(row, rjobs):
        fn = os.path.join(tmpdir, f"jobs-{row}.json")
        with open(fn, "w") as f:
            json.dump(rjobs, f)
        pr = subprocess.Popen([sys.executable, os.path.abspath(__file__), "worker", "--jobs", fn],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return (row, rjobs, pr)

    while pending or running:
        while pending and len(running) < args.jobs_n:
            running.append(start(*pending.pop(0)))
        row, rjobs, pr = running.pop(0)
        out, err = pr.communicate()
        progress(row, out, len(rjobs), time.time() - t0, exps, grade_of)
        done, started = {}, None
        for ln in out.splitlines():
            try:
                rec = json.loads(ln)
            except ValueError:
                continue
            if "start" in rec:
                started = rec["start"]
            else:
                done[(rec["done"]["path"], rec["done"]["consumer"])] = rec
        rest = []  # after a crash: the jobs the dead worker did not reach, for a new one
        for j in rjobs:
            rec = done.get((j["path"], j["consumer"]))
            if rec:
                results.append(dict(j, status=rec["status"], message=rec["message"],
                                    attributed_to=rec["attributed_to"], seconds=rec["seconds"]))
            elif started and (started["path"], started["consumer"]) == (j["path"], j["consumer"]):
                results.append(dict(j, status="Crash", message=f"worker died (rc {pr.returncode}): "
                                    + err.strip()[-400:]))
            elif started:
                rest.append(j)
            else:  # died before its first job: a new worker would too
                results.append(dict(j, status="Error", message="not run: the worker died "
                                    "before its first job: " + err.strip()[-400:]))
        if rest:
            pending.insert(0, (row, rest))
    for r in results:
        judge_result(r, exps, strengths, args.profile)
    attribute_warnings(results)
    # a line of a peer that did not run (an optional one, --peers) is not stale
    unused = [e for e in exps if not e["used"] and e["peer"] in peers_list]
    return report(results, errors, peers_list, unused, args, time.time() - t0, strengths)


def report(results, errors, peers_list, unused, args, secs, strengths):
    cols = peers_list + ["-"]
    rows = peers_list + ["-"]
    cell = {}
    for r in results:
        c = cell.setdefault((r["producer"], r["consumer"]),
                            {"Pass": 0, "Fail": 0, "Warning": 0, "XFail": 0, "XPass": 0,
                             "Crash": 0, "Error": 0, "NotSupported": 0, "Skip": 0})
        c[r["status"]] += 1
    bad = [r for r in results if r["status"] in ("Fail", "XPass", "Crash", "Error")]
    on = "" if args.device == "cpu" else f"; the producer's arrays on {args.device}"
    print(f"\nDLPack Python interop matrix (rows: producer, columns: consumer; "
          f"pass/fail/warning/xfail/notsupported; '-' = role-only cases; profile {args.profile}"
          f"{on})")
    w = 14
    print("producer\\consumer".ljust(18) + "".join(c.ljust(w) for c in cols))
    for p in rows:
        line = p.ljust(18)
        for c in cols:
            v = cell.get((p, c))
            if not v:
                line += ".".ljust(w)
                continue
            f = v["Fail"] + v["XPass"] + v["Crash"] + v["Error"]
            line += f"{v['Pass']}/{f}/{v['Warning']}/{v['XFail']}/{v['NotSupported']}".ljust(w)
        print(line)
    tot = {}
    for r in results:
        tot[r["status"]] = tot.get(r["status"], 0) + 1
    print("\n" + ", ".join(f"{k} {v}" for k, v in sorted(tot.items())) + f"  ({secs:.1f} s)")
    sc = grading.score(results, strengths)
    print(f"conformance (profile {args.profile}): MUST clauses passed {sc['must_passed']} of "
          f"{sc['must_applicable']} applicable, {sc['warnings']} Warnings")
    for r in bad:
        print(f"{r['status']}: {r['case']} [{r['producer']}->{r['consumer']}] {r['message']}")
    for e in unused:
        print(f"warning: expectation never matched: {e['file']} {e['case']} "
              f"{e['producer']}->{e['consumer']}")
    if args.verbose:
        for r in results:
            if r["status"] == "XFail":
                print(f"XFail: {r['case']} [{r['producer']}->{r['consumer']}] {r['message']}")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        matrix = {p: {c: cell[(p, c)] for c in cols if (p, c) in cell} for p in rows}
        doc = report_document(results, peers_list, args, secs)
        peer_scores = {p: grading.score(grading.peer_results(results, p), strengths)
                       for p in peers_list if p != "tsmref"}
        doc.update({"peers": peers_list, "matrix": matrix, "totals": tot, "score": sc,
                    "peer_scores": peer_scores,
                    "parse_errors": errors,
                    "unused_expectations": [e["file"] for e in unused]})
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 1 if bad or errors else 0


REPORT_FORMAT = "3.0"  # harness/schema/results.schema.json, as the judge writes it


def peer_version(name):
    """The installed version of the peer's PyPI distribution; None when it has none or
    it is not installed."""
    from importlib import metadata
    dist = peers.classes()[name].dist
    try:
        return metadata.version(dist) if dist else None
    except metadata.PackageNotFoundError:
        return None


def peer_info(peers_list):
    """Per peer: version, module file and whether it is optional (the report's
    "peer_modules"; harness/report/third_parties.py leaves optional peers out)."""
    return {p: {"version": peer_version(p), "optional": peers.classes()[p].optional,
                "module": os.path.relpath(peers.source(p), ROOT)} for p in peers_list}


def report_document(results, peers_list, args, secs):
    """The interop results in the judge's report format, so that `tsm-cts merge` joins
    them with the C cases' into one JSON, JUnit and summary: family "interop", the
    producer->consumer pair as the device, with "@DEVICE" after it for a run whose
    producer's arrays are not on the CPU ("torch->cupy@cuda:0")."""
    now = time.time()
    stamp = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))  # noqa: E731
    spec = open(os.path.join(ROOT, "spec", "README.md")).read()
    spec_version = spec.split("Spec version **", 1)[1].split("**", 1)[0] if "Spec version **" in spec else "unknown"
    info = peer_info(peers_list)
    rows = []
    on = "" if args.device == "cpu" else f"@{args.device}"
    for r in results:
        rows.append({"case": r["case"], "family": "interop", "path": r["path"],
                     "device": f"{r['producer']}->{r['consumer']}{on}", "device_present": True,
                     "repeat": 0, "status": r["status"], "message": r.get("message", ""),
                     **({"expected": r["expectation"]} if "expectation" in r else {}),
                     **({"graded_by": r["graded_by"]} if r.get("graded_by") else {}),
                     "clauses": r.get("clauses", []),
                     "duration_ms": round(1000 * r.get("seconds", 0), 3),
                     "producer": r["producer"], "consumer": r["consumer"],
                     **({"attributed_to": r["attributed_to"]} if r.get("attributed_to") else {})})
    return {"tsm_cts": REPORT_FORMAT, "run_id": f"bridge-{os.getpid()}-{int(now * 1000):x}",
            "started": stamp(now - secs), "finished": stamp(now), "wall_seconds": round(secs, 3),
            "tool": {"name": "tsm-cts bridge.py", "abi": "python-capsule",
                     "report_format": REPORT_FORMAT, "spec": spec_version},
            "seed": 0, "shard": {"index": 1, "count": 1}, "profile": args.profile,
            "adapter": {"name": "python-interop", "version": ", ".join(
                            f"{p} {i['version']}" if i["version"] else p for p, i in info.items()),
                        "path": os.path.relpath(os.path.abspath(__file__), ROOT),
                        "devices": [{"name": f"python{on}", "available": True, "reason": ""}]},
            "results": rows, "peer_modules": info}


def chosen_peers(wanted):
    """The peers of a run: --peers, or every peer found less the optional ones whose
    framework is missing (noted on stderr). A peer that is not installed stops the run,
    naming its module: the pinned ones come from `make deps`."""
    if wanted:
        names = wanted.split(",")
    else:
        names, notes = peers.default_names()
        for n in notes:
            print(f"bridge.py: {n}", file=sys.stderr)
    found = peers.classes()
    for n in names:
        if n not in found:
            raise SystemExit(f"bridge.py: no peer named {n!r} (known: {', '.join(sorted(found))})")
        if not peers.installed(found[n]):
            raise SystemExit(f"bridge.py: peer {n} needs the Python module {found[n].module}, "
                             f"which is not installed" + ("" if found[n].optional else
                             " (pinned in deps.mk: run 'make deps')"))
    return names


def exchange_api(name):
    """Whether the type of the peer's arrays offers DLPack 1.3's C exchange API
    (`__dlpack_c_exchange_api__`, dlpack.h's DLPackExchangeAPI); None when the peer
    cannot be made."""
    import numpy as np
    try:
        arr = peers.get(name).make(np.zeros(1, "float32"), [1], "float32")
    except Exception:  # noqa: BLE001 - not installed, or no producer
        return None
    return hasattr(type(arr), "__dlpack_c_exchange_api__")


def peers_main():
    """Lists the peers found: name, version, whether their arrays offer the C exchange
    API, module file."""
    print(f"{'peer':14} {'version':14} {'exchange API':14} module")
    for n, cls in sorted(peers.classes().items()):
        version = peer_version(n) or ("-" if peers.installed(cls) else "not installed")
        api = {True: "yes", False: "no", None: "-"}[exchange_api(n) if peers.installed(cls) else None]
        print(f"{n:14} {version:14} {api:14} {os.path.relpath(peers.source(n), ROOT)}"
              f"{' (optional)' if cls.optional else ''}")
    return 0


def lint_main(args):
    bad = 0
    files = caselang.collect(args.paths)
    for _, parsed in caselang.parse_files(files):
        if isinstance(parsed, caselang.ParseError):
            print(parsed)
            bad += 1
        else:
            for w in parsed["warnings"]:
                print(w)
    print(f"bridge lint: {len(files)} case files, {bad} with errors", file=sys.stderr)
    return 1 if bad else 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bridge.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("paths", nargs="+")
    r.add_argument("--large", action="store_true")
    r.add_argument("--json")
    r.add_argument("-j", dest="jobs_n", type=int, default=2)
    r.add_argument("--peers", help="comma-separated peer names (default: every peer found, "
                   "less optional ones whose framework is not installed)")
    r.add_argument("--peer-path", action="append", default=[],
                   help="a folder of peer modules or one module (repeatable; added to "
                   f"${peers.ENV_PATH})")
    r.add_argument("--device", default="cpu",
                   help="where producers make their arrays: cpu (the default) or cuda:N; "
                   "the cases whose devices: names it run")
    r.add_argument("--expectations", default=os.path.join(ROOT, "harness", "expectations"))
    r.add_argument("-v", "--verbose", action="store_true")
    r.add_argument("--profile", choices=grading.PROFILES, default=grading.default_profile(),
                   help="standard (the default; $TSM_CTS_PROFILE sets another): a broken "
                   "SHOULD or TSM clause is a Warning; strict: a broken TSM clause fails")
    w = sub.add_parser("worker")
    w.add_argument("--jobs", required=True)
    li = sub.add_parser("lint")
    li.add_argument("paths", nargs="+")
    pe = sub.add_parser("peers")
    pe.add_argument("--peer-path", action="append", default=[])
    args = ap.parse_args(argv)
    if getattr(args, "peer_path", None):
        # On the environment, so that the worker processes find the same peers.
        os.environ[peers.ENV_PATH] = os.pathsep.join(
            [os.path.abspath(p) for p in args.peer_path] +
            [p for p in os.environ.get(peers.ENV_PATH, "").split(os.pathsep) if p])
    if args.cmd == "run":
        try:
            peers.device_pair(args.device)
        except ValueError as e:
            ap.error(str(e))
        if args.device != "cpu" and USER_JAX_PLATFORMS is None:
            os.environ["JAX_PLATFORMS"] = ""  # jax's GPU too, in the workers
        return run_main(args)
    if args.cmd == "peers":
        return peers_main()
    if args.cmd == "worker":
        return worker_main(args)
    return lint_main(args)


if __name__ == "__main__":
    sys.exit(main())
