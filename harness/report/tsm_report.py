#!/usr/bin/env python3
"""harness/report/tsm_report.py: one self-contained HTML page of a tsm-cts run.

  tsm_report.py RESULTS.json [INTEROP.json] [BENCH.json] [FUZZ.json] -o FILE
                [--baseline OLD.json] [--spec DIR] [--root DIR]

RESULTS.json is a judge's report (tsm-cts run --json, or tsm-cts merge --json),
INTEROP.json the bridge's (harness/python/bridge.py run --json, with its matrix),
BENCH.json the bench figures (harness/report/bench_text.py), FUZZ.json a nightly fuzz
summary (ci/nightly-fuzz); the optional inputs are told apart by their keys. The page
(harness/report/report.html.j2, rendered by Jinja2 with every text escaped; figures by
harness/report/figures.py as inline SVG) fetches nothing and needs no script: run
identity with its profile and conformance score, counts by status, family x device x
status, the interop heatmap, every result that is not Pass (failures with the failing line
of the case source and the cited clauses' text and source from --spec), the Warnings (a
broken SHOULD clause, or a TSM rule under --profile standard: counted apart from the
failures, each with the clauses that graded it), expected failures with their reason and
reference, clause coverage per spec chapter, bench plots and the fuzz summary, and README's
third-party table (--readme; harness/report/third_parties.py writes it).

--baseline OLD.json compares the runs (case, device, repeat) with an older report: new
failures, fixes and other changed statuses go at the top of the page and to stdout.
"""
import argparse
import collections
import datetime
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import jinja2
    from markupsafe import Markup

    import figures
    import inputs
    import third_parties
except ImportError as missing:
    sys.exit(f"missing {missing.name}: it is pinned in deps.mk (PIP_PINS); run 'make deps'")

STATUSES = ["Pass", "Fail", "Warning", "Crash", "Timeout", "NotSupported", "Skip", "XFail",
            "XPass", "Error"]
# What fails a run; a Warning never does (harness/schema/results.schema.json, 3.0).
BAD = {"Fail", "Crash", "Timeout", "XPass", "Error"}
ROOT = os.path.dirname(os.path.dirname(HERE))
INTEROP_COLUMN = "producer->consumer pairs"
# The kinds of change against a baseline, as the page and stdout name them.
DIFF_TITLES = {"new_failures": "new failure", "fixes": "fixed", "changed": "changed",
               "gone": "no longer run"}


def run_key(r):
    return (r["case"], r["device"], r.get("repeat", 0))


def status_counts(results):
    counts = collections.Counter(r["status"] for r in results)
    return [(s, counts.get(s, 0)) for s in STATUSES]


def family_table(results, devices):
    """[(family, [(device, [(status, count)])], warnings)] and the devices as columns;
    warnings: the family's Warnings on every device, its own column."""
    cells = collections.defaultdict(collections.Counter)
    for r in results:
        # An interop run's device is its producer->consumer pair: one column for them all.
        device = INTEROP_COLUMN if "producer" in r else r["device"]
        cells[(r["family"], device)][r["status"]] += 1
    columns = list(devices) + sorted({d for _, d in cells} - set(devices))
    rows = []
    for family in sorted({f for f, _ in cells}):
        row = [(d, [(s, cells[(family, d)][s]) for s in STATUSES if cells[(family, d)][s]])
               for d in columns]
        warned = sum(cells[(family, d)]["Warning"] for d in columns)
        rows.append((family, row, warned))
    return rows, columns


def split_expected(text):
    """An expectation's "reason | upstream reference"."""
    reason, _, reference = (text or "").partition("|")
    return reason.strip(), reference.strip()


def detail(r, clauses, root, profile=None):
    """What the page shows of one result that is not Pass."""
    line = inputs.failing_line(r.get("message"))
    reason, reference = split_expected(r.get("expected"))
    # The clauses that graded it first (a message may name a clause the case does not
    # cite), then the rest the case cites.
    graders = [g.split()[0] for g in (r.get("graded_by") or "").split(",") if g.strip()]
    ids = graders + [c for c in r.get("clauses", []) if c not in graders]
    cited = [(c, clauses.get(c)) for c in ids]
    return dict(r, line=line, source=inputs.source_excerpt(root, r.get("path", ""), line),
                reason=reason, reference=reference, cited=cited,
                graded_by=r.get("graded_by", ""), profile=profile)


def not_supported(results, absent):
    """(count per absent device, the other NotSupported results): a device that is not
    present is one line, not hundreds."""
    per_device = collections.Counter()
    others = []
    for r in results:
        if r["status"] != "NotSupported":
            continue
        if r["device"] in absent or not r.get("device_present", True):
            per_device[r["device"]] += 1
        else:
            others.append(r)
    return sorted(per_device.items()), others


def chapter_of(clause_id, clauses):
    return clauses[clause_id]["chapter"] if clause_id in clauses else "(not in spec/)"


def coverage(results, clauses):
    """[(chapter, covered, total, [(clause id, info, [(case, [(device, status)])])])]."""
    by_clause = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in results:
        for c in r.get("clauses", []):
            by_clause[c][r["case"]].append((r["device"], r["status"]))
    chapters = collections.defaultdict(list)
    for cid in list(clauses) + sorted(set(by_clause) - set(clauses)):
        cases = sorted(by_clause.get(cid, {}).items())
        chapters[chapter_of(cid, clauses)].append((cid, clauses.get(cid), cases))
    return [(ch, sum(1 for _, _, cases in rows if cases), len(rows), rows)
            for ch, rows in sorted(chapters.items())]


def compare(current, baseline):
    """{"new_failures", "fixes", "changed", "gone"}: lists of (key, old, new)."""
    old = {run_key(r): r["status"] for r in baseline["results"]}
    diff = {kind: [] for kind in DIFF_TITLES}
    seen = set()
    for r in current:
        key, now = run_key(r), r["status"]
        seen.add(key)
        before = old.get(key)
        if before == now or (before is None and now not in BAD):
            continue
        if now in BAD and before not in BAD:
            diff["new_failures"].append((key, before or "(new run)", now))
        # A failure that is now a Warning (a clause regraded, another profile) is a
        # change, not a fix.
        elif before in BAD and now not in BAD and now != "Warning":
            diff["fixes"].append((key, before, now))
        else:
            diff["changed"].append((key, before, now))
    diff["gone"] = [(k, s, None) for k, s in old.items() if k not in seen]
    return diff


def print_comparison(diff, out):
    for kind, title in DIFF_TITLES.items():
        for (case, device, repeat), before, now in diff[kind]:
            print(f"{title}: {case} [{device}] {before} -> {now or '-'}", file=out)
    print("baseline: " + ", ".join(f"{len(diff[k])} {t}" for k, t in DIFF_TITLES.items()), file=out)


def commit_of(root):
    """The commit of the checkout that renders the page (the JSON report has none)."""
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return head + (" with local changes" if dirty else "")


def score_view(doc):
    """The run's profile and conformance score as its report states them (format 3.0:
    the profile, and MUST clauses passed of applicable, and the Warnings); None for a
    field an older report lacks. counted: the Warnings among its results."""
    score = doc.get("score") or {}
    return {"profile": doc.get("profile"), "stated": bool(score), "format": doc.get("tsm_cts"),
            "must_applicable": score.get("must_applicable"),
            "must_passed": score.get("must_passed"), "warnings": score.get("warnings"),
            "counted": sum(1 for r in doc["results"] if r["status"] == "Warning")}


def interop_view(doc):
    if not doc:
        return None
    # Peers in the bridge's order, then "-" (one-role cases); a row or column without a
    # cell (no consumer-only case, say) is left out.
    order = doc.get("peers", []) + ["-"]
    used_rows = {p for p, cells in doc["matrix"].items() if cells}
    used_cols = {c for cells in doc["matrix"].values() for c in cells}
    rows = [p for p in order if p in used_rows] + sorted(used_rows - set(order))
    cols = [c for c in order if c in used_cols] + sorted(used_cols - set(order))
    cells = sum(len(v) for v in doc["matrix"].values())
    return {"doc": doc, "counts": status_counts(doc["results"]), "cells": cells,
            "score": score_view(doc),
            "peer_scores": sorted((doc.get("peer_scores") or {}).items()),
            "svg": Markup(figures.heatmap_svg(rows, cols, doc["matrix"])),
            "legend": [(o, figures.OUTCOME_STYLE[o], figures.OUTCOME_LABEL[o])
                       for o in figures.OUTCOME_STYLE]}


def bench_view(doc):
    if not doc:
        return None
    series = [dict(s, svg=Markup(figures.series_svg(i, s)))
              for i, s in enumerate(doc.get("series", []))]
    ratios = doc.get("ratios", [])
    return {"doc": doc, "series": series, "ratios": ratios,
            "ratios_svg": Markup(figures.ratios_svg(ratios)) if ratios else None}


def third_party_view(readme):
    """README's third-party table (harness/report/third_parties.py writes it from the
    third parties' lanes, today's PyTorch included; lane third-party-table checks it):
    {"readme", "head", "rows"}, or None without one."""
    found = third_parties.readme_table(readme) if readme else None
    if not found:
        return None
    head, rows = found
    return {"readme": os.path.relpath(readme, ROOT) if os.path.isabs(readme) else readme,
            "head": head, "rows": rows}


def extra_rows(results, interop):
    """The interop rows the results report does not already hold (a merged all.json
    holds them)."""
    if not interop:
        return []
    have = {run_key(r) for r in results}
    return [r for r in interop["results"] if run_key(r) not in have]


def page_model(found, args):
    results = found["results"]["results"]
    rows = results + extra_rows(results, found.get("interop"))
    clauses = inputs.load_clauses(args.spec)
    devices = found["results"]["adapter"].get("devices", [])
    absent = {d["name"] for d in devices if not d.get("available", True)}
    table, columns = family_table(results, [d["name"] for d in devices])
    absent_counts, other_ns = not_supported(rows, absent)

    def shown(status):
        """The rows of one status, each with the profile of the run that judged it."""
        interop_profile = (found.get("interop") or {}).get("profile")
        return [detail(r, clauses, args.root,
                       interop_profile if "producer" in r else found["results"].get("profile"))
                for r in rows if r["status"] in status]

    return {
        "run": found["results"], "commit": commit_of(args.root),
        "rendered": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "counts": status_counts(results), "table": table, "columns": columns,
        "score": score_view(found["results"]),
        "interop": interop_view(found.get("interop")),
        "failures": shown(BAD), "warnings": shown({"Warning"}), "xfails": shown({"XFail"}),
        "absent": absent_counts, "not_supported": other_ns,
        "skipped": [r for r in rows if r["status"] == "Skip"],
        "coverage": coverage(rows, clauses),
        "third_parties": third_party_view(args.readme),
        "bench": bench_view(found.get("bench")), "fuzz": found.get("fuzz"),
        "diff": args.diff, "statuses": STATUSES, "diff_titles": DIFF_TITLES,
    }


def render(model):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    return env.get_template("report.html.j2").render(**model)


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="tsm_report.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", help="RESULTS.json [INTEROP.json] [BENCH.json] [FUZZ.json]")
    ap.add_argument("-o", "--output", required=True, help="the HTML file to write")
    ap.add_argument("--baseline", help="an older results JSON to compare with")
    ap.add_argument("--spec", default=os.path.join(ROOT, "spec"), help="the spec chapters")
    ap.add_argument("--root", default=ROOT, help="where the reports' case paths start")
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"),
                    help="the README whose third-party table the page shows ('' for none)")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    found = inputs.load_inputs(args.inputs)
    args.diff = None
    if args.baseline:
        baseline = inputs.load_json(args.baseline)
        current = found["results"]["results"]
        # Interop runs are compared only with a baseline that has them (a merged report).
        if any(r["family"] == "interop" for r in baseline["results"]):
            current = current + extra_rows(current, found.get("interop"))
        args.diff = compare(current, baseline)
        print_comparison(args.diff, sys.stdout)
    html = render(page_model(found, args))
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(html)
    print(f"report: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
