"""The pytest plugin of tsm-cts (entry point pytest11 `tsm_cts`): every capsule-level case
(.pytsm) of the case library as pytest items, for the array modules a test run names.

  pytest --tsm-peer=MODULE [--tsm-peer=MODULE2] [--tsm-expectations FILE]
         [--tsm-cases PATH] [--tsm-profile standard|strict] [--tsm-large]
         [--tsm-json FILE] [--tsm-timeout S]

or, in the library's pyproject.toml (command-line options win):

  [tool.tsm-cts]
  peer = "mylib"                      # or a list; a peer module file works too
  expectations = "tests/tsm-known.txt"  # or a list; relative to pyproject.toml
  cases = ["dlpack/python"]           # optional: a part of the case library
  profile = "standard"

Each case is a collector (its id, as in the judge's reports: dlpack/python/x.pytsm) under
one collector named tsm-cts, and each run of it an item named for its pair:
`numpy-to-tsmref` (numpy produces, the reference consumes), or `numpy-as-producer` /
`numpy-as-consumer` for a case of one role. Every run a peer under test takes part in is
collected, with the reference (tsmref) and with itself, as `make interop` runs it; the
clauses a case cites are keywords (`-k DLP.PY.NAME`), and every item has the marker
tsm_cts (`-m "not tsm_cts"`).

Outcomes, by the bridge's status (spec/README.md, "Strengths"): Pass passes; Warning (a
broken SHOULD, or a TSM rule under the standard profile) passes with a TsmCtsWarning in
the warnings summary; NotSupported and Skip skip with their reason; XFail (a known
failure: a line of the expectations) is xfailed with the line's reason; Fail, XPass,
Crash, Timeout and Error fail. The status, pair, clauses and grading are junit-xml
properties of the test case (tsm_status, ...), and --tsm-json writes the judge's JSON
report (harness/schema/results.schema.json).

The runs happen in a worker process (worker.py) that a crash of the framework ends
without ending pytest: that run is a Crash, and the next run gets a new worker.
"""
import json
import os
import select
import subprocess
import sys
import tempfile
import time
import warnings

import pytest

from . import layout, version
from .worker import is_path

PASSING = ("Pass", "Warning")
SKIPPING = ("NotSupported", "Skip")
FAILING = ("Fail", "XPass", "Crash", "Timeout", "Error")
STATUSES = ("Pass", "Warning", "XFail", "NotSupported", "Skip") + FAILING


class TsmCtsWarning(UserWarning):
    """A run whose only failed checks break clauses that are no failure under the run's
    profile: a SHOULD, or a TSM rule under the standard profile."""


class TsmCtsFailure(Exception):
    """A run that failed: its status and the bridge's message."""


def pytest_addoption(parser):
    g = parser.getgroup("tsm-cts", "tsm-cts: the DLPack capsule-level conformance cases")
    g.addoption("--tsm-peer", action="append", default=[], metavar="MODULE",
                help="judge this array module: an importable module, a peer module file "
                "(.py) or a folder of them (./peers), or a peer the suite knows (numpy, jax, mlx, torch, ...); "
                "repeatable. Without it (and without [tool.tsm-cts] peer) the plugin "
                "collects nothing")
    g.addoption("--tsm-expectations", action="append", default=[], metavar="FILE",
                help="known failures (CASE PRODUCER->CONSUMER STATUS reason | reference "
                "lines): those runs are xfailed with the reason; repeatable")
    g.addoption("--tsm-cases", action="append", default=[], metavar="PATH",
                help="only these cases: a folder or file of the case library "
                "(dlpack/python) or of your own .pytsm cases; repeatable")
    g.addoption("--tsm-profile", choices=("standard", "strict"), default=None,
                help="standard (default; $TSM_CTS_PROFILE sets another): a broken SHOULD "
                "or TSM clause is a Warning; strict: a broken TSM clause fails")
    g.addoption("--tsm-large", action="store_true", default=None,
                help="also run the cases tagged large")
    g.addoption("--tsm-json", metavar="FILE", default=None,
                help="write the judge's JSON report of the runs to FILE")
    g.addoption("--tsm-timeout", type=float, default=None, metavar="S",
                help="a run that takes longer is a Timeout (default 300)")


def _pyproject(config):
    """[tool.tsm-cts] of the rootdir's pyproject.toml, {} without one."""
    path = os.path.join(str(config.rootpath), "pyproject.toml")
    if not os.path.isfile(path):
        return {}, None
    try:
        import tomllib
    except ImportError:  # Python < 3.11: pytest itself depends on tomli there
        import tomli as tomllib
    with open(path, "rb") as f:
        return tomllib.load(f).get("tool", {}).get("tsm-cts", {}), os.path.dirname(path)


def _listed(value):
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


class Settings:
    def __init__(self, config):
        table, base = _pyproject(config)
        opt = config.getoption
        here = lambda p: p if os.path.isabs(p) or base is None else os.path.join(base, p)  # noqa: E731
        self.peers = opt("--tsm-peer") or _listed(table.get("peer"))
        if not opt("--tsm-peer"):  # a peer module file named in pyproject.toml
            self.peers = [here(p) if is_path(p) else p for p in self.peers]
        self.expectations = [os.path.abspath(p) for p in opt("--tsm-expectations")] or \
            [os.path.abspath(here(p)) for p in _listed(table.get("expectations"))]
        self.cases = opt("--tsm-cases") or _listed(table.get("cases"))
        self.profile = opt("--tsm-profile") or table.get("profile") or \
            os.environ.get("TSM_CTS_PROFILE") or "standard"
        self.large = bool(opt("--tsm-large") or table.get("large"))
        self.json = opt("--tsm-json")
        self.timeout = opt("--tsm-timeout") or float(table.get("timeout", 300))

    def worker_args(self):
        args = []
        for p in self.peers:
            args += ["--peer", os.path.abspath(p) if is_path(p) else p]
        for e in self.expectations:
            args += ["--expectations", e]
        for c in self.cases:
            args += ["--cases", os.path.abspath(c) if os.path.exists(c) else c]
        args += ["--profile", self.profile] + (["--large"] if self.large else [])
        return args


class WorkerDied(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Worker:
    """One tsm_cts.worker process: requests in, one JSON line out each."""

    def __init__(self, args):
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "tsm_cts.worker"] + args,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, env=layout().env())

    def stderr_since(self, offset):
        self.err.seek(offset)
        return self.err.read().decode(errors="replace")

    def offset(self):
        self.err.seek(0, os.SEEK_END)
        return self.err.tell()

    def request(self, req, timeout):
        start = self.offset()
        try:
            self.proc.stdin.write((json.dumps(req) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.close(kill=True)
            raise WorkerDied("Timeout", f"no result after {timeout:.0f} s (--tsm-timeout); "
                             "the worker was killed" + self._tail(start))
        line = self.proc.stdout.readline()
        if not line:
            rc = self.proc.wait()
            raise WorkerDied("Crash", f"worker died (rc {rc})" + self._tail(start))
        return json.loads(line), self.stderr_since(start)

    def _tail(self, start):
        text = self.stderr_since(start).strip()
        return (": " + text[-1500:]) if text else ""

    def close(self, kill=False):
        if self.proc.poll() is None:
            if kill:
                self.proc.kill()
            else:
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()


class TsmCtsSession:
    """The plugin's state for one test session (registered when a peer is named)."""

    def __init__(self, config, settings):
        self.config, self.s = config, settings
        self.worker = None
        self.listing = None
        self.results = []
        self.t0 = time.time()
        self.report = None

    def _worker(self):
        if self.worker is None or self.worker.proc.poll() is not None:
            self.worker = Worker(self.s.worker_args())
        return self.worker

    def request(self, req):
        w = self._worker()
        try:
            return w.request(req, self.s.timeout)
        except WorkerDied:
            self.worker = None
            raise

    def jobs(self):
        if self.listing is None:
            try:
                self.listing, _ = self.request({"list": True})
            except WorkerDied as e:
                raise pytest.UsageError(f"tsm-cts: the worker could not list the cases: {e}")
        return self.listing

    def run(self, job):
        try:
            r, err = self.request({"run": job})
            r = r["result"]
        except WorkerDied as e:
            r, err = dict(job, status=e.status, message=str(e)), ""
        self.results.append(r)
        return r, err

    # hooks
    def pytest_report_header(self, config):
        peers = ", ".join(self.s.peers)
        return [f"tsm-cts {version() or '(checkout)'}: peers {peers}, profile "
                f"{self.s.profile}" + (f", expectations {', '.join(self.s.expectations)}"
                                       if self.s.expectations else "")]

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector):
        rep = yield
        if isinstance(collector, pytest.Session) and rep.passed:
            rep.result.append(TsmLibrary.from_parent(collector, name="tsm-cts", nodeid="tsm-cts",
                                                     plugin=self))
        return rep

    def pytest_sessionfinish(self, session):
        if self.results:
            try:
                self.report, _ = self.request({"report": self.results,
                                               "seconds": time.time() - self.t0})
            except WorkerDied as e:
                self.report = {"error": str(e)}
            if self.s.json and "report" in self.report:
                os.makedirs(os.path.dirname(os.path.abspath(self.s.json)), exist_ok=True)
                with open(self.s.json, "w") as f:
                    json.dump(self.report["report"], f, indent=1)
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    def pytest_terminal_summary(self, terminalreporter):
        if not self.results:
            return
        tr = terminalreporter
        tr.section("tsm-cts")
        count = {}
        for r in self.results:
            count[r["status"]] = count.get(r["status"], 0) + 1
        tr.write_line(", ".join(f"{k} {count[k]}" for k in STATUSES if k in count) +
                      f"  (profile {self.s.profile})")
        rep = (self.report or {}).get("report")
        for peer, sc in ((rep or {}).get("peer_scores") or {}).items():
            tr.write_line(f"{peer}: MUST clauses passed {sc['must_passed']} of "
                          f"{sc['must_applicable']} applicable, {sc['warnings']} Warnings")
        complete = len(self.results) == len(self.jobs()["jobs"])
        for line in (self.report or {}).get("unused", []) if complete else []:
            tr.write_line(f"expectation never matched: {line}")
        if self.s.json and rep:
            tr.write_line(f"JSON report: {self.s.json}")
        if (self.report or {}).get("error"):
            tr.write_line(f"no report: {self.report['error']}")


class TsmLibrary(pytest.Collector):
    """The case library: one TsmCase per capsule-level case file."""

    def __init__(self, *, plugin, **kw):
        super().__init__(**kw)
        self.plugin = plugin

    def collect(self):
        listing = self.plugin.jobs()
        for e in listing["errors"]:
            yield TsmParseError.from_parent(self, name=e.split(":", 1)[0], message=e)
        by_case = {}
        for j in listing["jobs"]:
            by_case.setdefault(j["case"], []).append(j)
        for case, jobs in by_case.items():
            # a node id like a test file's: tsm-cts/dlpack/python/x.pytsm::numpy-to-tsmref
            yield TsmCase.from_parent(self, name=case, nodeid=f"{self.nodeid}/{case}", jobs=jobs)


class TsmCase(pytest.Collector):
    def __init__(self, *, jobs, **kw):
        super().__init__(**kw)
        self.jobs = jobs
        self.plugin = self.parent.plugin

    def collect(self):
        for j in self.jobs:
            yield TsmRun.from_parent(self, name=pair_name(j), job=j)


def pair_name(j):
    p, c = j["producer"], j["consumer"]
    if c == "-":
        return f"{p}-as-producer"
    if p == "-":
        return f"{c}-as-consumer"
    return f"{p}-to-{c}"


class TsmRun(pytest.Item):
    """One run of a case: a producer and a consumer, or one peer in its role."""

    def __init__(self, *, job, **kw):
        super().__init__(**kw)
        self.job = job
        self.add_marker("tsm_cts")
        for clause in job["clauses"]:
            self.extra_keyword_matches.add(clause)
        self.extra_keyword_matches.update({job["producer"], job["consumer"]} - {"-"})

    def runtest(self):
        j = self.job
        r, err = self.parent.plugin.run(j)
        st = r["status"]
        props = [("tsm_status", st), ("tsm_case", r.get("case", j["case"])),
                 ("tsm_producer", j["producer"]), ("tsm_consumer", j["consumer"]),
                 ("tsm_clauses", ", ".join(j["clauses"]))]
        for key in ("graded_by", "expectation", "attributed_to"):
            if r.get(key):
                props.append(("tsm_" + key, r[key]))
        self.user_properties.extend(props)
        msg = r.get("message", "")
        if err.strip():
            self.add_report_section("call", "tsm-cts worker stderr", err)
        if st == "Pass":
            if msg:
                self.add_report_section("call", "tsm-cts", msg)
            return
        if st == "Warning":
            warnings.warn(TsmCtsWarning(f"{j['case']} [{pair_name(j)}], graded by "
                                        f"{r.get('graded_by') or 'its clauses'}: {msg}"))
            return
        if st in SKIPPING:
            pytest.skip(f"{st}: {msg.splitlines()[0] if msg else ''}")
        if st == "XFail":
            pytest.xfail(r.get("expectation") or msg)
        if st == "XPass":
            raise TsmCtsFailure(f"XPass: listed as a known failure ({r.get('expectation')}), "
                                "but passed: remove the line from the expectations file")
        raise TsmCtsFailure(f"{st}: {msg}" + (f"\ngraded by {r['graded_by']} (profile "
                                              f"{j['profile']})" if r.get("graded_by") else ""))

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, TsmCtsFailure):
            return f"{self.job['case']} [{self.job['producer']}->{self.job['consumer']}]\n" \
                   f"{excinfo.value}\n{self.job['description']}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.job["path"], None, f"{self.job['case']} [{pair_name(self.job)}]"


class TsmParseError(pytest.Item):
    """A case file the judge's front end refused."""

    def __init__(self, *, message, **kw):
        super().__init__(**kw)
        self.message = message

    def runtest(self):
        raise TsmCtsFailure(f"Error: {self.message}")

    def repr_failure(self, excinfo):
        return str(excinfo.value)

    def reportinfo(self):
        return self.name, None, self.name


def pytest_configure(config):
    config.addinivalue_line("markers", "tsm_cts: a run of a tsm-cts capsule-level case")
    settings = Settings(config)
    if settings.peers:
        config.pluginmanager.register(TsmCtsSession(config, settings), "tsm-cts-session")
