"""harness/tests/junit10.py: a JUnit report as Jenkins and other CI tools read it.

check_pair(XML, JSON) returns what is wrong with the JUnit file XML: an element or
attribute outside the Jenkins xunit plugin's junit-10 schema (checked element by
element, no third-party schema file), suite counts that disagree with its test cases,
or counts by PyPI's junitparser that disagree with the judge's JSON report JSON.
Used by check_reports.sh and check_hostile.sh; as a program,
`junit10.py XML JSON [XML JSON...]` prints the problems and exits 1 when there are any.
"""
import json
import sys
import xml.etree.ElementTree as ET

from junitparser import JUnitXml, Failure, Error, Skipped


# The junit-10 schema of the Jenkins xunit plugin, as rules: which attributes and
# children each element may have, and which attributes it must have.
RULES = {
    "testsuites": ({"name", "time", "tests", "failures", "disabled", "errors"}, set(), {"testsuite"}),
    "testsuite": ({"name", "tests", "failures", "errors", "time", "disabled", "skipped",
                   "timestamp", "hostname", "id", "package"}, {"name", "tests"},
                  {"properties", "testcase", "system-out", "system-err"}),
    "properties": (set(), set(), {"property"}),
    "property": ({"name", "value"}, {"name", "value"}, set()),
    "testcase": ({"name", "assertions", "time", "classname", "status"}, {"name"},
                 {"skipped", "error", "failure", "system-out", "system-err"}),
    "skipped": ({"message"}, set(), set()),
    "error": ({"message", "type"}, set(), set()),
    "failure": ({"message", "type"}, set(), set()),
    "system-out": (set(), set(), set()),
    "system-err": (set(), set(), set()),
}


def check(el, path, problems):
    allowed, required, children = RULES.get(el.tag, (None, None, None))
    if allowed is None:
        problems.append(f"{path}: element <{el.tag}> is not in junit-10")
        return
    for a in set(el.attrib) - allowed:
        problems.append(f"{path}: attribute {a!r} not allowed on <{el.tag}>")
    for a in required - set(el.attrib):
        problems.append(f"{path}: <{el.tag}> lacks {a!r}")
    for c in el:
        if c.tag not in children:
            problems.append(f"{path}: <{c.tag}> not allowed in <{el.tag}>")
        check(c, f"{path}/{c.tag}", problems)
    if el.tag == "testcase" and len([c for c in el if c.tag == "skipped"]) > 1:
        problems.append(f"{path}: more than one <skipped>")


def check_pair(xml, report):
    problems = []
    root = ET.parse(xml).getroot()
    if root.tag != "testsuites":
        problems.append(f"root is <{root.tag}>")
    check(root, "testsuites", problems)
    for s in root.iter("testsuite"):
        for k, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
            if int(s.get(k, -1)) != len(s.findall(f"testcase/{tag}")):
                problems.append(f"{xml}: suite {s.get('name')}: {k} is {s.get(k)}")
    with open(report, "rb") as f:
        counts(xml, json.loads(f.read().decode("utf-8")), problems)
    return problems


def counts(xml, doc, problems):
    want = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for r in doc["results"]:
        want["tests"] += 1
        st = r["status"]
        want["failures"] += st == "Fail"
        want["errors"] += st in ("Crash", "Timeout", "Error", "XPass")
        want["skipped"] += st in ("NotSupported", "Skip", "XFail")
    got = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in JUnitXml.fromfile(xml):
        for case in suite:
            got["tests"] += 1
            for res in case.result:
                got["failures"] += isinstance(res, Failure)
                got["errors"] += isinstance(res, Error)
                got["skipped"] += isinstance(res, Skipped)
    if got != want:
        problems.append(f"{xml}: junitparser counts {got}, the JSON report {want}")



if __name__ == "__main__":
    found = []
    for i in range(1, len(sys.argv), 2):
        found += check_pair(sys.argv[i], sys.argv[i + 1])
    print("\n".join(found[:20]))
    sys.exit(1 if found else 0)
