"""test_plugin.py: self-tests of the tsm-cts pytest plugin (harness/python/tsm_cts/plugin.py)
as a user of the installed wheel runs it. The lane (harness/tests/check_wheel.sh) copies
this file and tinyarray.py beside it into a folder outside the checkout and runs
`pytest -p pytester test_plugin.py` with the fresh venv's python; each test runs pytest
in a subprocess in a scratch folder of its own.

  collection     the library's runs as items with their node ids, one role too; nothing
                 without a peer; -k on a pair and on a clause; [tool.tsm-cts] in pyproject
  xfail          a failing case of the user's own, its runs xfailed from an expectations
                 file with the line's reason, an XPass failing, -x stopping at the first
  junit-xml      the report's counts and each test case's tsm_* properties
  peers          a peer module file of the user's (a Peer subclass) and an array module
                 of the user's judged through the array API's calls
"""
import os
import xml.etree.ElementTree as ET

pytest_plugins = ["pytester"]

HERE = os.path.dirname(os.path.abspath(__file__))
COPY = "peers/numpy/copy.pytsm"  # numpy's own test translated: passes between all pairs
PRODUCER_ONLY = "dlpack/python/device-query.pytsm"  # roles: [producer]

# A case of the user's whose check is wrong on purpose: every run of it fails.
WRONG = """---
description: a value check that cannot hold (the plugin's self-test)
clauses: [DLP.PY.FROM.1]
origin: harness/tests/wheel/test_plugin.py
requires: [dlpack-py]
tags: [selftest]
---
array x = make [3] f32 arange
tensor y = from x
expect values y == [9, 9, 9]
"""

TINY_PEER = '''
"""A peer module of the user's: tinyarray through a Peer subclass."""
import tinyarray
from peers import ALL_DTYPES, Peer


class TinyPeer(Peer):
    name = "tiny"
    module = "tinyarray"
    dtypes = imports = ALL_DTYPES - {"bfloat16"}
    from_keywords = frozenset({"copy", "device"})

    def device_object(self, pair):
        return "cpu" if tuple(pair) == (1, 0) else None

    def make(self, values, shape, dtype):
        return tinyarray.asarray(values.reshape(shape))

    def from_dlpack(self, obj, **kw):
        return tinyarray.from_dlpack(obj, **kw)

    def tolist(self, arr):
        return arr.tolist()

    def dtype(self, arr):
        return arr.dtype.name

    def data_ptr(self, arr):
        return arr.__array_interface__["data"][0]
'''


def run(pytester, *args):
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


def with_tinyarray(pytester, monkeypatch):
    with open(os.path.join(HERE, "tinyarray.py")) as f:
        pytester.makepyfile(tinyarray=f.read())
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))


def wrong_case(pytester):
    own = pytester.mkdir("mycases")
    (own / "wrong.pytsm").write_text(WRONG)
    return str(own)


# ---- collection -------------------------------------------------------------------------

def test_collects_each_pair_as_an_item(pytester):
    r = run(pytester, "--tsm-peer=numpy", "--tsm-cases", COPY, "--tsm-cases", PRODUCER_ONLY,
            "--collect-only", "-q")
    assert r.ret == 0
    ids = [ln for ln in r.outlines if ln.startswith("tsm-cts/")]
    assert ids == [f"tsm-cts/{PRODUCER_ONLY}::numpy-as-producer",
                   f"tsm-cts/{COPY}::tsmref-to-numpy", f"tsm-cts/{COPY}::numpy-to-tsmref",
                   f"tsm-cts/{COPY}::numpy-to-numpy"]


def test_nothing_without_a_peer(pytester):
    pytester.makepyfile(test_mine="def test_mine():\n    pass\n")
    r = run(pytester)
    r.assert_outcomes(passed=1)
    assert "tsm-cts" not in r.stdout.str().split("test session starts")[1].split("\n")[1]


def test_keyword_selects_pairs_and_clauses(pytester):
    r = run(pytester, "--tsm-peer=numpy", "--tsm-cases", "peers/numpy", "-k",
            "numpy-to-numpy and DLP.PY.ARGS.1", "--collect-only", "-q")
    ids = [ln for ln in r.outlines if ln.startswith("tsm-cts/")]
    assert f"tsm-cts/{COPY}::numpy-to-numpy" in ids
    assert ids and all(i.endswith("::numpy-to-numpy") for i in ids)


def test_pyproject_names_the_peer(pytester):
    pytester.makefile(".toml", pyproject=f'[tool.tsm-cts]\npeer = "numpy"\ncases = ["{COPY}"]\n')
    r = run(pytester)
    r.assert_outcomes(passed=3)
    r.stdout.fnmatch_lines(["tsm-cts *: peers numpy, profile *", "Pass 3*"])


# ---- xfail from an expectations file ----------------------------------------------------

def test_expectations_make_xfail_with_their_reason(pytester):
    own = wrong_case(pytester)
    known = pytester.makefile(".txt", known="wrong.pytsm numpy->numpy Fail DLP.PY.FROM.1 MUST: "
                              "y reads [0, 1, 2] | self-test: the reason shown by -rx\n")
    r = run(pytester, "--tsm-peer=numpy", "--tsm-cases", own, "--tsm-expectations",
            str(known), "-rx")
    r.assert_outcomes(failed=2, xfailed=1)
    r.stdout.fnmatch_lines(["XFAIL *wrong.pytsm::numpy-to-numpy*self-test: the reason shown*"])


def test_a_known_failure_that_passes_fails(pytester):
    known = pytester.makefile(".txt", known=f"{COPY} numpy->numpy Fail DLP.PY.FROM.1 MUST: "
                              "stale | self-test\n")
    r = run(pytester, "--tsm-peer=numpy", "--tsm-cases", COPY, "--tsm-expectations", str(known))
    r.assert_outcomes(passed=2, failed=1)
    r.stdout.fnmatch_lines(["*XPass: listed as a known failure*remove the line*"])


def test_exitfirst_stops_at_the_first_failure(pytester):
    own = wrong_case(pytester)
    r = run(pytester, "--tsm-peer=numpy", "--tsm-cases", own, "-x")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*stopping after 1 failures*"])


# ---- junit-xml --------------------------------------------------------------------------

def test_junit_xml(pytester):
    own = wrong_case(pytester)
    known = pytester.makefile(".txt", known="wrong.pytsm numpy->numpy Fail DLP.PY.FROM.1 MUST: "
                              "y reads [0, 1, 2] | self-test\n")
    xml = pytester.path / "junit.xml"
    run(pytester, "--tsm-peer=numpy", "--tsm-cases", own, "--tsm-cases", COPY,
        "--tsm-expectations", str(known), f"--junitxml={xml}")
    suite = ET.parse(xml).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("6", "2", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")
             if c.get("classname").endswith("copy.pytsm")}
    assert set(cases) == {"tsmref-to-numpy", "numpy-to-tsmref", "numpy-to-numpy"}
    props = {p.get("name"): p.get("value") for p in cases["numpy-to-numpy"].iter("property")}
    assert props["tsm_status"] == "Pass" and props["tsm_case"] == COPY
    assert props["tsm_producer"] == props["tsm_consumer"] == "numpy"
    assert "DLP.PY.FROM.1" in props["tsm_clauses"]


# ---- peers of the user's ----------------------------------------------------------------

def test_a_peer_module_of_the_users(pytester, monkeypatch):
    with_tinyarray(pytester, monkeypatch)
    peer = pytester.makepyfile(tinypeer=TINY_PEER)
    r = run(pytester, f"--tsm-peer={peer}", "--tsm-cases", COPY, "-v")
    r.assert_outcomes(passed=3)
    r.stdout.fnmatch_lines([f"*{COPY}::tiny-to-tiny PASSED*", "tiny: MUST clauses passed *"])


def test_an_array_module_of_the_users(pytester, monkeypatch):
    # (the lane runs every case with it and compares each run with the bridge's)
    with_tinyarray(pytester, monkeypatch)
    r = run(pytester, "--tsm-peer=tinyarray", "--tsm-cases", COPY, "-v")
    r.assert_outcomes(passed=3)
    r.stdout.fnmatch_lines([f"*{COPY}::tinyarray-to-tsmref PASSED*",
                            "tinyarray: MUST clauses passed *"])
