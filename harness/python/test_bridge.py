#!/usr/bin/env python3
"""test_bridge.py: the bridge must catch deliberately broken consumers.
clauses: [DLP.DEL.1, DLP.PY.NAME.2, DLP.PY.ROUND.1, DLP.PY.DTOR.1, DLP.XAPI.CONSUME.1,
DLP.XAPI.HEADER.2, DLP.PY.UNWIND.1, DLP.PY.EXPORT.1, DLP.PY.WRITE.1, DLP.IMPORT.6]

  iree-leak    renames the capsule to used_* and never runs the deleter
               (IREE before PR #20988, seeds/001): leak
  turbine      takes ownership properly, then renames the capsule back to "dltensor"
               (iree-turbine PR #522/#843, reverted in #887): the producer's destructor
               frees memory the consumer still aliases, and the consumer's release runs
               the deleter a second time
  no-rename    takes the pointer and runs the deleter, but never renames: double release
  good         a correct ctypes consumer (control: must pass)
  del-raises   a correct consumer whose tensor's release raises in __del__: harmless in
               a plain exchange, caught when it runs while an exception unwinds
               (DLP.PY.UNWIND.1)
  swallow      answers a producer's refusal (__dlpack__ raising) with an empty tensor
               instead of raising (DLP.PY.EXPORT.1)
  refuse-leak  takes a complex capsule (renames it used_*), then refuses it without running
               its deleter (DLP.DEL.1); refuse-clean: the same, running the deleter
               first (control)
  read-only    marks every import not writeable, a versioned one without READ_ONLY
               included (DLP.PY.WRITE.1); writeable: the same consumer marking it
               writeable (control)

Consumers of the DLPack 1.3 exchange table (xapi.py), run with tsmref producing (the
only peer whose own tensor type publishes one):
  xapi-good    takes the tensor through the table of the object's type, walking
               prev_api to major 1, else through __dlpack__ (control: must pass)
  xapi-leak    takes the table's managed tensor and never runs its deleter
  xapi-no-header  calls the table's functions without reading header.version, as
               tvm-ffi 0.1.15 does (harness/expectations/python-tvm-ffi.txt)

And the peer plug-in hook end to end: a module written outside the checkout, found
through --peer-path, run by the bridge's worker processes (where collections skip what
earlier cases left, gc.freeze): an IREE-style consumer that lacks the producer role
must give Fail on its leak and NotSupported, counted against it, as producer.
"""
import ctypes
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bridge  # noqa: E402
import caselang  # noqa: E402
import dl  # noqa: E402
import peers  # noqa: E402
import xapi  # noqa: E402

CASES = os.path.join(bridge.ROOT, "cases", "dlpack", "python")


class Imported:
    """A ctypes consumer's tensor: aliases the producer's data; runs the deleter at del."""

    def __init__(self, ptr, versioned, run_deleter, del_raises=False):
        self.ptr, self.versioned, self.run_deleter = ptr, versioned, run_deleter
        self.del_raises = del_raises
        m = dl.managed(ptr, versioned)
        t = m.dl_tensor
        self.shape = tuple(t.shape[i] for i in range(t.ndim))
        self.dtype = dl.dtype_name(t.dtype)
        self.data = (t.data or 0) + t.byte_offset
        self.values = dl.copy_dltensor(t)  # read now: the turbine hack frees it early

    def __del__(self):
        if self.run_deleter:
            m = dl.managed(self.ptr, self.versioned)
            if m.deleter:
                dl.DELETER(m.deleter)(self.ptr)
        if self.del_raises:
            raise RuntimeError("release failed after running the deleter")


class Swallowed:
    """What the swallow consumer returns for a refused export: no elements."""
    values, shape, dtype, data = dl.np.zeros(0), (0,), "float32", None


class CtypesConsumer(peers.Peer):
    rename, run_deleter, rename_back = True, True, False
    del_raises, swallow, writeable_flag, refuse = False, False, None, None

    def __init__(self, name):
        self.name = name

    def writeable(self, arr):
        return self.writeable_flag

    def from_dlpack(self, obj):
        try:
            cap = obj.__dlpack__(max_version=(1, 3))
        except BufferError:
            if self.swallow:
                return Swallowed()
            raise
        name = dl.capsule_name(cap)
        if name not in ("dltensor", "dltensor_versioned"):
            raise ValueError(f"capsule {name!r} cannot be consumed")
        ptr = dl.capsule_pointer(cap)
        if self.rename:
            dl.set_capsule_name(cap, "used_" + name)
        versioned = name == "dltensor_versioned"
        if self.refuse and dl.managed(ptr, versioned).dl_tensor.dtype.code == 5:  # complex
            m = dl.managed(ptr, versioned)
            if self.refuse == "clean" and m.deleter:
                dl.DELETER(m.deleter)(ptr)
            raise BufferError("no complex arrays here")
        out = Imported(ptr, name == "dltensor_versioned", self.run_deleter, self.del_raises)
        if self.rename_back:
            dl.set_capsule_name(cap, name)  # the turbine workaround
        return out

    def tolist(self, arr):
        return arr.values.tolist()

    def shape(self, arr):
        return arr.shape

    def dtype(self, arr):
        return arr.dtype

    def data_ptr(self, arr):
        return arr.data


class XapiConsumer(CtypesConsumer):
    """A ctypes consumer of the exchange table of the object's type (DLP.XAPI.CONSUME.1);
    without a table of major 1 it takes the capsule. walk: read header.version first and
    walk prev_api (DLP.XAPI.HEADER.2)."""
    walk = True

    def from_dlpack(self, obj):
        try:
            table = xapi.Table(type(obj), walk=self.walk)
        except xapi.NoTable:
            return super().from_dlpack(obj)
        return Imported(table.from_object(obj), True, self.run_deleter)


def consumer(name, cls=CtypesConsumer, **kw):
    c = cls(name)
    for k, v in kw.items():
        setattr(c, k, v)
    peers.EXTRA[name] = c
    return name


PLUGIN = '''
import dl
from peers import Peer


class PluginLeakPeer(Peer):
    """Takes the capsule (renames it used_*) and never runs its deleter."""
    name = "plugin-leak"
    lacks = {"producer": "a consumer only (test_bridge.py)"}

    def from_dlpack(self, obj):
        cap = obj.__dlpack__(max_version=(1, 3))
        name = dl.capsule_name(cap)
        dl.set_capsule_name(cap, "used_" + name)
        return name
'''


def plugin_run():
    """bridge.py run with PLUGIN as a user's peer module: (ok, what was seen)."""
    with tempfile.TemporaryDirectory() as tmp:
        module, report = os.path.join(tmp, "leak.py"), os.path.join(tmp, "interop.json")
        with open(module, "w") as f:
            f.write(PLUGIN)
        subprocess.run([sys.executable, os.path.join(HERE, "bridge.py"), "run",
                        "--peer-path", module, "--peers", "numpy,plugin-leak",
                        "--json", report, os.path.join(CASES, "consume-capsule-loop.pytsm")],
                       capture_output=True, text=True)
        with open(report) as f:
            got = {r["device"]: (r["status"], r.get("attributed_to"), r["message"])
                   for r in json.load(f)["results"]}
    want = {"numpy->numpy": ("Pass", None, ""),
            "numpy->plugin-leak": ("Fail", None, "deleters never ran"),
            "plugin-leak->numpy": ("NotSupported", "plugin-leak", "no producer"),
            "plugin-leak->plugin-leak": ("NotSupported", "plugin-leak", "no producer")}
    ok = set(got) == set(want) and all(
        got[k][:2] == want[k][:2] and want[k][2] in got[k][2] for k in want)
    return ok, {k: (v[0], v[1], v[2][:70]) for k, v in got.items()}


def main():
    load = lambda n: caselang.parse_file(os.path.join(CASES, n))  # noqa: E731
    checks = [
        # (case, consumer, expected status, substring of the message)
        ("roundtrip-f32.pytsm", consumer("good"), "Pass", ""),
        ("iree-leak-loop.pytsm", "good", "Pass", ""),
        ("iree-leak-loop.pytsm", consumer("iree-leak", run_deleter=False), "Fail",
         "deleters never ran"),
        ("roundtrip-f32.pytsm", "iree-leak", "Fail", "leak"),
        ("consume-legacy.pytsm", consumer("turbine", rename_back=True), "Fail",
         "DLP.PY.NAME.2"),
        ("roundtrip-f32.pytsm", "turbine", "Fail", "DLP.PY.NAME.2"),
        ("consume-legacy.pytsm", consumer("no-rename", rename=False), "Fail",
         "used_dltensor"),
    ]
    xapi_checks = [
        ("xapi-exchange.pytsm", consumer("xapi-good", XapiConsumer), "Pass", ""),
        ("xapi-exchange-future.pytsm", "xapi-good", "Pass", ""),
        ("xapi-exchange.pytsm", consumer("xapi-leak", XapiConsumer, run_deleter=False), "Fail",
         "leak"),
        ("xapi-exchange-future.pytsm", consumer("xapi-no-header", XapiConsumer, walk=False),
         "Fail", "DLP.XAPI.HEADER.2"),
    ]
    peer_case = lambda folder, n: os.path.join(bridge.ROOT, "cases", "peers", folder, n)  # noqa: E731
    numpy_checks = [
        ("unwind-consumed.pytsm", "good", "Pass", ""),
        ("unwind-consumed.pytsm", consumer("del-raises", del_raises=True), "Fail",
         "DLP.PY.UNWIND.1: a destructor raised"),
        ("roundtrip-f32.pytsm", "del-raises", "Pass", ""),
        ("unwind-consumed.pytsm", "iree-leak", "Fail", "leak"),
        (peer_case("numpy", "invalid-dtype.pytsm"), "good", "Pass", ""),
        (peer_case("numpy", "invalid-dtype.pytsm"), consumer("swallow", swallow=True), "Fail",
         "the statement succeeded"),
        ("roundtrip-dtype-c64.pytsm", consumer("refuse-clean", refuse="clean"), "NotSupported",
         "refused the import"),
        ("roundtrip-dtype-c64.pytsm", consumer("refuse-leak", refuse="leak"), "Fail",
         "DLP.DEL.1"),
        (peer_case("numpy", "writeable.pytsm"), consumer("writeable", writeable_flag=True),
         "Pass", ""),
        (peer_case("numpy", "writeable.pytsm"), consumer("read-only", writeable_flag=False),
         "Fail", "is not writeable"),
    ]
    bad = 0
    for producer, producer_checks in (("tsmref", checks + xapi_checks),
                                      ("numpy", checks + numpy_checks)):
        for case, cons, want, sub in producer_checks:
            hook = sys.unraisablehook
            if cons == "del-raises":  # its release raises by design: no traceback printed
                sys.unraisablehook = lambda unraisable: None
            try:
                status, msg, _ = bridge.run_one(load(case), producer, cons)
            finally:
                sys.unraisablehook = hook
            ok = status == want and sub in msg
            bad += not ok
            print(f"{'ok ' if ok else 'BAD'} {producer}->{cons:10} {case:28} {status}: {msg}")
    # The turbine hack, seen at the deleter: capsule destructor + consumer release.
    a = peers.get("numpy").make(dl.np.arange(4, dtype="float32"), [4], "float32")
    holder = bridge.Holder(bridge.Run(load("roundtrip-f32.pytsm"), "numpy", "turbine"), array=a)
    t = peers.get("turbine").from_dlpack(holder)
    probe = holder.probe
    del holder
    import gc
    gc.collect()
    del t
    gc.collect()
    ok = probe.calls == 2 and "double release" in " ".join(probe.violations)
    bad += not ok
    print(f"{'ok ' if ok else 'BAD'} turbine rename-back: deleter calls {probe.calls}, "
          f"{probe.violations}")
    ok, seen = plugin_run()
    bad += not ok
    print(f"{'ok ' if ok else 'BAD'} peer plug-in through --peer-path: {seen}")
    print(f"test_bridge: {'all ok' if not bad else f'{bad} failed'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
