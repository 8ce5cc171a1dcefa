#!/usr/bin/env python3
"""third_parties.py: the README's table of third parties and their counts, generated from
the JSON reports their lanes write, never typed.

  third_parties.py --readme README.md [--check]
                   [--adapter NAME:TARGET:REPORT ...] [--interop REPORT]

--adapter: a third party judged by `tsm-cts run` through its C adapter (the make
target TARGET writes REPORT); its row counts the report's results. --interop: the
bridge's report (`make interop`); one row per Python peer but the reference and the
optional peers (`bridge.py peers`; an optional peer is not pinned, so the table would
depend on the machine). A peer's row counts every run it takes part in, as producer or
consumer; XFail, Warning and NotSupported only where the run is counted against it (the
report's `attributed_to`: the peer whose python-<peer>.txt lists the failure, the peer
that lacks what the case needs, the side that shows a Warning with the reference on the
other side), and a Warning seen only between two peers against both.

Each row counts the report's profile, standard for a third party (what the sources
require: a broken SHOULD or TSM clause is a Warning), then its conformance score (the
MUST clauses its runs cite, and how many no failure broke: harness/python/grading.py)
and, beside them, the Fail and XFail counts under the strict profile (the suite's own
TSM rules judged too), derived from the same results (grading.strict_status).

The table goes between the BEGIN and END markers of the README; --check writes nothing
and fails when the README's table differs from the one the reports give (lane
third-party-table of `make check`, after the lanes that write the reports).
"""
import argparse
import collections
import difflib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "harness", "python"))
import grading  # noqa: E402
BEGIN = ("<!-- third-party table: written by `make third-party-table` from the lanes' JSON "
         "reports; do not edit -->")
END = "<!-- end of the third-party table -->"
BAD = ("Fail", "Crash", "Timeout", "Error", "XPass")  # the Fail column
COLUMNS = ("Pass", "Fail", "Warning", "XFail", "NotSupported", "MUSTs passed", "strict: Fail",
           "strict: XFail")


def load(path, target):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise SystemExit(f"third_parties.py: no report {path} ({e.strerror}): run 'make {target}'")


def counts(results, strengths):
    c = collections.Counter(r["status"] for r in results)
    strict = collections.Counter(grading.strict_status(r) for r in results)
    sc = grading.score(results, strengths)
    return {"Pass": c["Pass"], "Fail": sum(c[s] for s in BAD), "Warning": c["Warning"],
            "XFail": c["XFail"], "NotSupported": c["NotSupported"],
            "MUSTs passed": f"{sc['must_passed']} of {sc['must_applicable']}",
            "strict: Fail": sum(strict[s] for s in BAD), "strict: XFail": strict["XFail"]}


def standard_results(doc, path):
    """The results of a report judged under the standard profile (a third party's)."""
    if doc.get("profile") != "standard":
        raise SystemExit(f"third_parties.py: {path} was judged under the "
                         f"{doc.get('profile', 'unknown')} profile; a third party's row "
                         "counts the standard one (--profile standard)")
    return doc["results"]


def expectations_file(name):
    rel = os.path.join("harness", "expectations", f"{name}.txt")
    return f"`{rel}`" if os.path.isfile(os.path.join(ROOT, rel)) else "none"


def adapter_row(spec, strengths):
    name, target, path = spec.split(":", 2)
    doc = load(path, target)
    return {"name": f"{name} (C adapter)", "version": doc["adapter"].get("version", ""),
            "lane": f"`make {target}`", **counts(standard_results(doc, path), strengths),
            "known": expectations_file(doc["adapter"]["name"])}


def peer_rows(path, strengths):
    doc = load(path, "interop")
    standard_results(doc, path)
    modules = doc.get("peer_modules", {})
    rows = []
    for peer in doc["peers"]:
        info = modules.get(peer, {})
        if peer == "tsmref" or info.get("optional"):
            continue
        own = grading.peer_results(doc["results"], peer)
        rows.append({"name": f"{peer} (Python peer)", "version": info.get("version") or "",
                     "lane": "`make interop`", **counts(own, strengths),
                     "known": expectations_file(f"python-{peer}")})
    return rows


def table(rows):
    head = ["third party", "version", "lane", *COLUMNS, "known failures"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["name"], r["version"], r["lane"], *(str(r[c]) for c in COLUMNS), r["known"]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def replace_between_markers(text, body, readme):
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise SystemExit(f"third_parties.py: {readme} needs the markers, once each, in order:\n"
                         f"{BEGIN}\n{END}")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{body}\n{END}{tail}"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="third_parties.py")
    ap.add_argument("--readme", required=True)
    ap.add_argument("--adapter", action="append", default=[], metavar="NAME:TARGET:REPORT")
    ap.add_argument("--interop", metavar="REPORT")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    strengths = grading.load_strengths(os.path.join(ROOT, "spec"))
    rows = [adapter_row(a, strengths) for a in args.adapter]
    if args.interop:
        rows += peer_rows(args.interop, strengths)
    with open(args.readme) as f:
        text = f.read()
    new = replace_between_markers(text, table(rows), args.readme)
    if not args.check:
        with open(args.readme, "w") as f:
            f.write(new)
        print(f"third_parties.py: {len(rows)} third parties written into {args.readme}")
        return 0
    if new == text:
        print(f"third_parties.py: {args.readme}'s table of {len(rows)} third parties is current")
        return 0
    sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                               args.readme, "from the reports"))
    print(f"third_parties.py: {args.readme}'s third-party table differs from the lanes' "
          "reports: run 'make third-party-table'", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
