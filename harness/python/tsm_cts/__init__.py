"""tsm_cts: the conformance suite for scoped tensor memory as a Python package.

What a wheel of it holds (pyproject.toml, CMakeLists.txt, wheel.mk), under this folder:

  bin/tsm-cts                the judge (the console script `tsm-cts` runs it)
  lib/                       libtsmref.so, the reference, and its adapter tsmref_adapter.so
  python/                    tsmref, the reference's CPython extension (the bridge's
                             reference peer)
  share/tsm-cts/             spec/, cases/, expectations/, schema/: what `make install`
                             puts beside an installed judge, so the judge finds them itself;
                             and harness/python/: the capsule bridge (bridge.py and its
                             modules, peers/), whose ROOT this folder is

In a checkout (this folder is harness/python/tsm_cts) the same names point into the tree
and the build folder ($TSM_CTS_BUILD, else build/), so the plugin's self-tests and
`python -m tsm_cts` run from the sources too.

`python -m tsm_cts run --peer MODULE` judges an array module through the capsule
protocol and the exchange API (__main__.py); the pytest plugin (plugin.py) collects
every capsule-level case as a pytest item. Neither imports the bridge into the calling
process: its modules (bridge, peers, dl, ...) have short top-level names, so they run in
processes of their own (worker.py).
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


class Layout:
    """Where the judge, the bridge, the case library and the reference are."""

    def __init__(self):
        data = os.path.join(HERE, "share", "tsm-cts")
        if os.path.isfile(os.path.join(data, "harness", "python", "bridge.py")):
            self.installed = True
            self.root = data                      # the bridge's ROOT
            self.build = HERE                     # caselang's TSM_CTS_BUILD: bin/tsm-cts
            self.ext = os.path.join(HERE, "python")
            self.expectations = os.path.join(data, "expectations")
        else:
            self.installed = False
            self.root = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
            self.build = os.path.abspath(os.environ.get("TSM_CTS_BUILD") or
                                         os.path.join(self.root, "build"))
            self.ext = os.path.join(self.build, "python")
            self.expectations = os.path.join(self.root, "harness", "expectations")
        self.bridge = os.path.join(self.root, "harness", "python")
        self.cases = os.path.join(self.root, "cases")
        self.spec = os.path.join(self.root, "spec")
        self.judge = os.path.join(self.build, "bin", "tsm-cts")
        self.adapter = os.path.join(self.build, "lib", "tsmref_adapter.so")
        # the generic peer of an array module that has no peer module of its own
        self.array_api_peer = os.path.join(HERE, "_array_api_peer.py")

    def env(self, extra=None):
        """The environment of a bridge process: the reference extension and the bridge's
        modules importable, the judge found (caselang.judge), the case library's spec
        and cases for the judge itself."""
        env = dict(os.environ)
        path = [self.ext, self.bridge] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                          if p]
        env["PYTHONPATH"] = os.pathsep.join(path)
        env["TSM_CTS_BUILD"] = self.build
        env.setdefault("JAX_PLATFORMS", "cpu")
        env.update(extra or {})
        return env


def layout():
    return Layout()


def version():
    """The installed distribution's version, None in a checkout."""
    from importlib import metadata
    try:
        return metadata.version("tsm-cts")
    except metadata.PackageNotFoundError:
        return None
