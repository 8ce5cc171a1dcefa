#!/usr/bin/env python3
"""check_expectations.py: every known failure of a third party carries its claim whole
(harness/expectations/README.md, "What a line says"). For each line of the expectations
files: the clauses it names exist, each with the strength spec/ gives it; a sourced
clause (MUST, SHOULD, MAY) quotes the sentence of its source and links an upstream
report (docs/upstream/*.md that exists, or an upstream issue or pull request); a TSM
clause says why the suite decides (`source: tsm:`) and links no report, since breaking
the suite's own rule is no deviation from any source; and the upstream location is given
at the judged version and at upstream HEAD. A line that fails the check is printed as
FILE:LINE: why; the exit status is 1 when there is one.

  check_expectations.py [FILE_OR_DIR ...]   (default: harness/expectations)
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "python"))
import grading  # noqa: E402

CLAIM = re.compile(
    r"^(?P<clauses>[A-Z]+(?:\.[A-Z]+)+\.[0-9]+ [A-Za-z]+(?:, [A-Z]+(?:\.[A-Z]+)+\.[0-9]+ [A-Za-z]+)*)"
    r": (?P<observed>.+?) \| source: (?P<source>.+?) \| upstream: (?P<upstream>.+?); "
    r"HEAD (?P<head>.+?) \| report: (?P<report>.+)$")
FORMAT = ("'CLAUSE STRENGTH[, CLAUSE STRENGTH]: what is observed | source: TEXT: \"sentence\" "
          "| upstream: LOCATION; HEAD REF: still holds|fixed ... | report: docs/upstream/X.md|URL"
          "|none (TSM rule)'")


def files_of(paths):
    for p in paths:
        if os.path.isdir(p):
            for dirpath, _, names in sorted(os.walk(p)):
                for n in sorted(names):
                    if n.endswith(".txt"):
                        yield os.path.join(dirpath, n)
        else:
            yield p


def reason_of(line):
    """The reason of an expectations line (after CASE DEVICE STATUS), or None."""
    parts = line.split(None, 3)
    return parts[3].strip() if len(parts) == 4 else None


def check_reason(reason, strengths):
    """The problems of one line's reason, as a list of strings."""
    m = CLAIM.match(reason)
    if not m:
        return [f"the reason does not read {FORMAT}"]
    problems = []
    graded = []
    for part in m.group("clauses").split(", "):
        cid, strength = part.split(" ")
        if cid not in strengths:
            problems.append(f"{cid} is no clause of spec/")
        elif strengths[cid] != strength:
            problems.append(f"{cid} is {strengths[cid] or 'ungraded'} in spec/, not {strength}")
        graded.append(strength)
    source, report = m.group("source"), m.group("report").strip()
    if all(s == "TSM" for s in graded):
        if not source.startswith("tsm:"):
            problems.append("a TSM clause's source is `tsm:` and why the suite decides")
        if report != "none (TSM rule)":
            problems.append("a TSM clause is no deviation from a source: its report is "
                            "`none (TSM rule)`")
    else:
        if source.startswith("tsm:") or not re.search(r'"[^"]{8,}"', source):
            problems.append("a sourced clause quotes the sentence of its source in double quotes")
        target = report.split()[0] if report else ""
        if target.startswith("docs/upstream/"):
            if not os.path.isfile(os.path.join(ROOT, target)):
                problems.append(f"{target} does not exist")
        elif not re.match(r"https://github\.com/[^/ ]+/[^/ ]+/(issues|pull)/[0-9]+", target):
            problems.append("the report is docs/upstream/<slug>.md or an upstream issue or "
                            "pull request URL")
    if not re.search(r"(still holds|fixed)", m.group("head")):
        problems.append("HEAD says `still holds` or `fixed ...`")
    return problems


def main(argv):
    paths = argv or [os.path.join(ROOT, "harness", "expectations")]
    strengths = grading.load_strengths(os.path.join(ROOT, "spec"))
    bad = lines = 0
    for path in files_of(paths):
        with open(path, encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                s = line.strip()
                if not s or s.startswith("#"):
                    continue
                lines += 1
                reason = reason_of(s)
                problems = ["no reason"] if reason is None else check_reason(reason, strengths)
                for p in problems:
                    print(f"{os.path.relpath(path, ROOT)}:{i}: {p}")
                bad += bool(problems)
    print(f"check_expectations.py: {lines} known failures, {bad} that do not carry their "
          "claim whole", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
