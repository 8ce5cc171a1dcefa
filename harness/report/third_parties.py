#!/usr/bin/env python3
"""third_parties.py: the README's table of third parties and their counts, generated from
the JSON reports their lanes write, never typed.

  third_parties.py --readme README.md [--check]
                   [--adapter NAME:TARGET:REPORT ...] [--interop REPORT] [--torch-summary FILE]

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

Today's PyTorch (lane torch, `make torch-check`: harness/tests/check_torch.sh) runs only
where its venv is (`make deps-torch`, 5.4 GB), so its two rows (torch as a Python peer, and
ATen through the libtorch adapter built against the wheel) come from --torch-summary, a
small committed record of that lane's last run (harness/expectations/torch-pypi/
summary.json: the torch version, the day recorded and each row's counts). The lane checks
the record against the reports it has just written and fails when it is stale:

  third_parties.py --torch-summary FILE --torch-interop REPORT --torch-adapter REPORT
                   (--write-torch-summary | --check-torch-summary)

(`make torch-summary` writes it from the reports the last `make torch-check` left).
"""
import argparse
import collections
import datetime
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


# Today's PyTorch: the rows of its lane, from its reports or from the committed record.
TORCH_EXPECTATIONS = os.path.join("harness", "expectations", "torch-pypi")
TORCH_LANE = "`make torch-check`"


def torch_rows(interop_path, adapter_path, strengths):
    """(torch's version, the two rows of lane torch) from the reports it wrote: torch as a
    peer of the bridge (the reference, numpy and torch) and ATen through the libtorch adapter
    built against the wheel (its name and version string are the Debian build's, so the
    row names the wheel's torch instead)."""
    doc = load(interop_path, "torch-check")
    results = standard_results(doc, interop_path)
    version = (doc.get("peer_modules", {}).get("torch") or {}).get("version")
    if not version:
        raise SystemExit(f"third_parties.py: {interop_path} has no torch peer")
    peer = {"name": "torch (Python peer)", "version": version, "lane": TORCH_LANE,
            **counts(grading.peer_results(results, "torch"), strengths),
            "known": f"`{TORCH_EXPECTATIONS}/python-torch.txt`"}
    adoc = load(adapter_path, "torch-check")
    aten = {"name": "libtorch (C adapter), torch wheel",
            "version": f"1.0 over ATen {version} of PyPI's torch wheel", "lane": TORCH_LANE,
            **counts(standard_results(adoc, adapter_path), strengths),
            "known": f"`{TORCH_EXPECTATIONS}/libtorch.txt`"}
    return version, [peer, aten]


def summary_rows(path):
    """The rows of the committed record, each version cell with the day it was recorded."""
    with open(path) as f:
        doc = json.load(f)
    return [dict(r, version=f"{r['version']} (recorded {doc['recorded']})")
            for r in doc["rows"]]


def torch_summary(args, strengths):
    """--write-torch-summary / --check-torch-summary: the record against fresh reports."""
    version, rows = torch_rows(args.torch_interop, args.torch_adapter, strengths)
    try:
        with open(args.torch_summary) as f:
            old = json.load(f)
    except OSError:
        old = {}
    if args.check_torch_summary:
        if old.get("rows") == rows:
            print(f"third_parties.py: {args.torch_summary} is this run's (torch {version})")
            return 0
        for before, now in zip(old.get("rows", []), rows):
            for k in now:
                if before.get(k) != now[k]:
                    print(f"  {now['name']}: {k} {before.get(k)!r} -> {now[k]!r}")
        print(f"third_parties.py: {args.torch_summary} is stale against this run (torch "
              f"{version}): run 'make torch-summary' and commit it", file=sys.stderr)
        return 1
    doc = {"about": "The last run of lane torch (make torch-check) that changed its counts, "
                    "written by make torch-summary (harness/report/third_parties.py); "
                    "README's third-party table reads its rows.",
           "torch": version, "recorded": datetime.date.today().isoformat(), "rows": rows}
    if old.get("rows") == rows and old.get("torch") == version:
        doc["recorded"] = old.get("recorded", doc["recorded"])
    with open(args.torch_summary, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"third_parties.py: {args.torch_summary} written (torch {version})")
    return 0


def readme_table(readme):
    """(header cells, rows of cells) of the table between the README's markers, for the
    HTML report; None when the README has no such table."""
    try:
        with open(readme) as f:
            text = f.read()
    except OSError:
        return None
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        return None
    body = text.split(BEGIN, 1)[1].split(END, 1)[0]
    lines = [ln.strip() for ln in body.splitlines() if ln.strip().startswith("|")]
    if len(lines) < 2:
        return None
    cells = [[c.strip() for c in ln.strip("|").split(" | ")] for ln in lines]
    return cells[0], cells[2:]


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
    ap.add_argument("--readme")
    ap.add_argument("--adapter", action="append", default=[], metavar="NAME:TARGET:REPORT")
    ap.add_argument("--interop", metavar="REPORT")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--torch-summary", metavar="FILE",
                    help="the committed record of lane torch's last run: its rows join the table")
    ap.add_argument("--torch-interop", metavar="REPORT")
    ap.add_argument("--torch-adapter", metavar="REPORT")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write-torch-summary", action="store_true")
    mode.add_argument("--check-torch-summary", action="store_true")
    args = ap.parse_args(argv)
    strengths = grading.load_strengths(os.path.join(ROOT, "spec"))
    if args.write_torch_summary or args.check_torch_summary:
        if not (args.torch_summary and args.torch_interop and args.torch_adapter):
            ap.error("--torch-summary, --torch-interop and --torch-adapter are needed")
        return torch_summary(args, strengths)
    rows = [adapter_row(a, strengths) for a in args.adapter]
    if args.interop:
        rows += peer_rows(args.interop, strengths)
    if args.torch_summary:
        rows += summary_rows(args.torch_summary)
    if not args.readme:
        ap.error("--readme is needed")
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
