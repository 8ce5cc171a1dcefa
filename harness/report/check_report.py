#!/usr/bin/env python3
"""harness/report/check_report.py: the HTML report as a browser shows it.

  check_report.py --html PAGE --results RESULTS.json [--interop INTEROP.json]
                  [--hostile TEXT]... [--baseline] [--screenshot PNG] [--dom FILE]

Checks, printing one TAP line each:
- the inputs validate against harness/schema/results.schema.json;
- the HTML references nothing outside itself: no script or link element, no event
  handler attribute, no src/href/url() that is not a fragment or data: URL, nothing
  with http(s)://, ftp:// or a protocol-relative //;
- Debian's headless Chromium loads it with no network (a fresh network namespace,
  `unshare -rn`, where the kernel allows it; the host resolver mapped to nothing and a
  dead proxy in any case) and dumps its DOM, in which:
  - the summary tables hold the counts of each status of RESULTS.json (and its summary
    field) and INTEROP.json, Warning among them, and the family table's Warning column
    the Warnings of each family;
  - each report's profile and conformance score (format 3.0: MUST clauses passed of
    applicable, and the Warnings, which must be the report's count of Warning results)
    are shown as the report states them; a report without them is said to have none;
  - the warnings section lists each Warning of the reports once, with the clauses that
    graded it (graded_by);
  - the heatmap has one cell per producer/consumer entry of INTEROP.json's matrix, and
    each cell whose worst outcome is a Warning carries the Warning's label, which is
    neither the Fail's nor the XFail's;
  - every failure whose message names a line of a readable case file shows that line
    highlighted;
  - each --hostile TEXT (a case name with markup, text with invalid UTF-8 as the reader
    shows it) appears as text, and the DOM has no script element;
  - with --baseline, the baseline section is there;
  - the third-party table shows README's rows (harness/report/third_parties.py);
- a screenshot of the page is written to PNG (--screenshot).
Exit status 0 only when every check passed. A missing chromium names the Debian
package and `make deps`.
"""
import argparse
import collections
import html.parser
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import inputs  # noqa: E402

SCHEMA = os.path.join(ROOT, "harness", "schema", "results.schema.json")
STATUSES = ["Pass", "Fail", "Warning", "Crash", "Timeout", "NotSupported", "Skip", "XFail",
            "XPass", "Error"]
# What a heatmap cell with these counts shows: a failure, else a Warning, else ...
CELL_BAD = ("Fail", "XPass", "Crash", "Error", "Timeout")
SCORE_LINE = re.compile(r"conformance \(profile (?P<profile>\w+)\): MUST clauses passed "
                        r"(?P<passed>\d+) of (?P<applicable>\d+) applicable, (?P<warnings>\d+) Warnings")
EXTERNAL = re.compile(r"(?:https?|ftp):|^\s*//")
URL_IN_CSS = re.compile(r"url\(\s*['\"]?([^'\")]*)", re.I)
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-extensions", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-default-apps",
                  "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=socks5://127.0.0.1:9"]
CHROMIUM_TIMEOUT = 60


class Tap:
    """The TAP lines of this check; owns the count and the failures."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, what, why=""):
        self.n += 1
        self.failed += 0 if cond else 1
        print(f"{'ok' if cond else 'not ok'} {self.n} - {what}" + ("" if cond else f"\n  # {why}"))
        return cond


class Dom(html.parser.HTMLParser):
    """What the checks read from a page: every element (tag, attributes), the count
    cells of each summary table, the ids of heatmap cells and the text of its labels,
    the score lines (attributes and text), the warnings section's entries (their
    data-graded-by), the text of highlighted source lines and all text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements = []
        self.counts = collections.defaultdict(dict)
        self.heatmap_cells = []
        self.hits = []
        self.text = []
        self.scores = {}
        self.score_text = collections.defaultdict(str)
        self.warnings = []
        self.family_warnings = {}
        self.heatmap_text = []
        self._table = None
        self._open = []
        self._score = None
        self._figure = False
        self._svg_text = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        if tag == "table":
            self._table = a.get("id")
        ident = a.get("id") or ""
        if ident.startswith("heatmap-cell-"):
            self.heatmap_cells.append(a["id"])
        if ident.startswith("score-"):
            self.scores[ident] = a
            self._score = ident
        if tag == "td" and "data-family" in a:
            self.family_warnings[a["data-family"]] = int(a["data-warnings"])
        if re.fullmatch(r"warning-[0-9]+", ident):
            self.warnings.append(a.get("data-graded-by"))
        if tag == "figure" and ident == "heatmap":
            self._figure = True
        if tag == "text" and self._figure:
            self.heatmap_text.append("")
            self._svg_text = True
        if tag == "td" and "data-status" in a and self._table:
            self.counts[self._table][a["data-status"]] = int(a["data-count"])
        if tag == "span" and a.get("class") == "hit":
            self.hits.append("")
            self._open.append("hit")
        elif tag == "span" and self._open:
            self._open.append("no" if a.get("class") == "no" else "span")

    def handle_endtag(self, tag):
        if tag == "span" and self._open:
            self._open.pop()
        if tag == "p":
            self._score = None
        if tag == "figure":
            self._figure = False
        if tag == "text":
            self._svg_text = False

    def handle_data(self, data):
        self.text.append(data)
        if self._score:
            self.score_text[self._score] += data
        if self._svg_text:
            self.heatmap_text[-1] += data
        if self._open and self._open[0] == "hit" and self._open[-1] != "no":
            self.hits[-1] += data


def static_references(page):
    """Every reference in the page source that leaves it: (what, value)."""
    dom = Dom()
    dom.feed(page)
    found = []
    for tag, attrs in dom.elements:
        if tag in ("script", "link", "iframe", "object", "embed", "base"):
            found.append((tag, "element"))
        for name, value in attrs.items():
            value = value or ""
            if name.startswith("on"):
                found.append((f"{tag} {name}", value))
            elif name in ("src", "href", "xlink:href", "action", "srcset", "poster", "data"):
                if not (value.startswith("#") or value.startswith("data:")):
                    found.append((f"{tag} {name}", value))
    found += [("css url()", u) for u in URL_IN_CSS.findall(page) if not u.startswith(("#", "data:"))]
    found += [("text", m) for m in re.findall(r"(?:src|href)\s*=\s*['\"]?(?:https?:|ftp:|//)[^'\" >]*", page, re.I)]
    return found


def chromium_command():
    path = shutil.which("chromium")
    if not path:
        return None
    isolate = ["unshare", "-rn"]
    try:
        usable = subprocess.run(isolate + ["true"], capture_output=True).returncode == 0
    except OSError:
        usable = False
    return (isolate if usable else []) + [path]


def run_chromium(cmd, page, extra):
    """stdout of chromium on the page with a throwaway profile, or None when it ran past
    CHROMIUM_TIMEOUT (a page whose script opens a dialog blocks it): then chromium and
    its helpers, in their own process group, are killed."""
    with tempfile.TemporaryDirectory() as profile:
        argv = cmd + CHROMIUM_FLAGS + [f"--user-data-dir={profile}"] + extra + \
            ["file://" + os.path.abspath(page)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=CHROMIUM_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return None
    return out.decode("utf-8", "replace")


def shrink(png):
    """Rewrites png with an adaptive 64-colour palette (Pillow, matplotlib's dependency)."""
    from PIL import Image
    with Image.open(png) as im:
        small = im.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    small.save(png, optimize=True)


def counted(results):
    counts = collections.Counter(r["status"] for r in results)
    return {s: counts.get(s, 0) for s in STATUSES}


def check_counts(tap, dom, table, doc, label):
    want = counted(doc["results"])
    have = {s: dom.counts[table].get(s) for s in STATUSES}
    tap.ok(have == want, f"{label}: the summary's counts are those of the report ({want})",
           f"the page shows {have}")
    if "summary" in doc:
        tap.ok(want == {s: doc["summary"].get(s, 0) for s in STATUSES},
               f"{label}: the report's own summary field agrees", f"summary {doc['summary']}")
    total = dom.counts[table].get("total")
    tap.ok(total == len(doc["results"]), f"{label}: total {len(doc['results'])}", f"page: {total}")


def expected_hits(docs):
    """The text of each failing line the page must highlight."""
    lines = []
    for doc in docs:
        for r in doc["results"]:
            line = inputs.failing_line(r.get("message"))
            if r["status"] in ("Pass", "NotSupported", "Skip") or line is None:
                continue
            excerpt = inputs.source_excerpt(ROOT, r["path"], line)
            lines += [text for n, text, hit in excerpt if hit]
    return lines


def check_score(tap, dom, doc, label):
    """The profile and the conformance score of one report, as the page shows them."""
    ident = f"score-{label}"
    attrs, text = dom.scores.get(ident), " ".join(dom.score_text.get(ident, "").split())
    if not tap.ok(attrs is not None, f"{label}: the page has its score line ({ident})",
                  "no such element"):
        return
    warned = sum(1 for r in doc["results"] if r["status"] == "Warning")
    score = doc.get("score")
    if score is None:  # a format 2.x report
        tap.ok("no conformance score" in text and attrs.get("data-profile") == (doc.get("profile") or ""),
               f"{label}: the report states no score, and the page says so", f"the page says {text!r}")
        return
    tap.ok(score["warnings"] == warned,
           f"{label}: the report's score counts its {warned} Warning results",
           f"score {score}")
    want = {"profile": doc.get("profile"), "passed": str(score["must_passed"]),
            "applicable": str(score["must_applicable"]), "warnings": str(score["warnings"])}
    have_attrs = {"profile": attrs.get("data-profile"), "passed": attrs.get("data-must-passed"),
                  "applicable": attrs.get("data-must-applicable"),
                  "warnings": attrs.get("data-warnings")}
    line = SCORE_LINE.search(text)
    have_text = line.groupdict() if line else None
    tap.ok(have_attrs == want and have_text == want,
           f"{label}: profile {want['profile']}, MUST clauses passed {want['passed']} of "
           f"{want['applicable']} applicable, {want['warnings']} Warnings shown",
           f"the page's attributes {have_attrs}, its text {text!r}")


def check_peer_scores(tap, dom, doc):
    """Each peer's conformance score in the interop report, as the page's table rows."""
    want = {p: {k: str(v) for k, v in s.items()} for p, s in (doc.get("peer_scores") or {}).items()}
    have = {a["data-peer"]: {"must_passed": a.get("data-must-passed"),
                             "must_applicable": a.get("data-must-applicable"),
                             "warnings": a.get("data-warnings")}
            for tag, a in dom.elements if tag == "tr" and "data-peer" in a}
    tap.ok(have == want, f"interop: the score of each of {len(want)} peers shown",
           f"the page shows {have}, the report says {want}")


def shown_rows(docs):
    """The results the page lists: the results report's, then the interop runs it does
    not already hold (a merged report holds them), as tsm_report.py does."""
    rows = list(docs["results"]["results"])
    have = {(r["case"], r["device"], r.get("repeat", 0)) for r in rows}
    if "interop" in docs:
        rows += [r for r in docs["interop"]["results"]
                 if (r["case"], r["device"], r.get("repeat", 0)) not in have]
    return rows


def check_warnings(tap, dom, docs):
    want = sorted(r.get("graded_by") or "" for r in shown_rows(docs) if r["status"] == "Warning")
    have = sorted(g or "" for g in dom.warnings)
    tap.ok(any(a.get("id") == "warnings" for _, a in dom.elements),
           "the page has its warnings section", "no element with id warnings")
    tap.ok(have == want, f"the warnings section lists {len(want)} Warnings, each graded by "
           f"the clauses its report names ({'; '.join(want) or 'none'})",
           f"the page lists {have}")


def check_heatmap(tap, dom, doc):
    import figures  # the labels the page uses (matplotlib, in the .venv)
    cells = [c for row in doc["matrix"].values() for c in row.values()]
    tap.ok(len(dom.heatmap_cells) == len(cells), f"heatmap: {len(cells)} cells, one per matrix entry",
           f"the page has {len(dom.heatmap_cells)}")
    label = figures.OUTCOME_LABEL["warning"]
    warned = sum(1 for c in cells if c.get("Warning", 0) and not sum(c.get(s, 0) for s in CELL_BAD))
    distinct = label not in (figures.OUTCOME_LABEL["fail"], figures.OUTCOME_LABEL["xfail"]) and \
        figures.OUTCOME_STYLE["warning"][:2] not in [figures.OUTCOME_STYLE[o][:2] for o in figures.OUTCOME_STYLE if o != "warning"]
    shown = sum(1 for t in dom.heatmap_text if t.strip() == label)
    tap.ok(distinct and shown == warned,
           f"heatmap: {warned} cells whose worst outcome is a Warning labelled {label!r}, "
           "a colour and hatch of its own", f"{shown} cells so labelled; distinct: {distinct}")


def check_family_warnings(tap, dom, doc):
    want = collections.Counter(r["family"] for r in doc["results"] if r["status"] == "Warning")
    have = {f: n for f, n in dom.family_warnings.items() if n}
    tap.ok(have == dict(want), f"the family table counts the Warnings apart ({dict(want)})",
           f"the page's Warning column: {have}")


def check_third_parties(tap, dom):
    """The page shows README's third-party table, row for row (today's PyTorch's rows,
    from the committed record of lane torch, among them)."""
    import third_parties
    found = third_parties.readme_table(os.path.join(ROOT, "README.md"))
    want = [row[0] for row in found[1]] if found else []
    have = [a.get("data-third-party") for t, a in dom.elements
            if t == "tr" and a.get("data-third-party")]
    tap.ok(have == want, f"the third-party table shows README's {len(want)} rows "
           f"({', '.join(want) or 'none'})", f"the page shows {have}")


def check_dom(tap, dom, args, docs):
    check_counts(tap, dom, "summary-results", docs["results"], "results")
    check_family_warnings(tap, dom, docs["results"])
    check_score(tap, dom, docs["results"], "results")
    if "interop" in docs:
        check_counts(tap, dom, "summary-interop", docs["interop"], "interop")
        check_score(tap, dom, docs["interop"], "interop")
        check_peer_scores(tap, dom, docs["interop"])
        check_heatmap(tap, dom, docs["interop"])
    check_warnings(tap, dom, docs)
    check_third_parties(tap, dom)
    hits = expected_hits(docs.values())
    shown = [h.strip() for h in dom.hits]
    missing = [h for h in hits if h.strip() not in shown]
    if hits:
        tap.ok(not missing, f"{len(hits)} failing lines of case sources highlighted",
               f"not highlighted: {missing}; highlighted: {shown}")
    else:  # a run with no failure that names a line (the reference's, today)
        tap.ok(not shown, "no failing line to highlight, and none highlighted",
               f"highlighted: {shown}")
    text = "".join(dom.text)
    for hostile in args.hostile:
        tap.ok(hostile in text, f"shown as text: {hostile!r}", "not in the page's text")
    scripts = [t for t, _ in dom.elements if t == "script"]
    tap.ok(not scripts, "the DOM has no script element", f"{len(scripts)} script elements")
    if args.baseline:
        tap.ok(any(a.get("id") == "baseline" for _, a in dom.elements),
               "the baseline comparison is shown", "no element with id baseline")


def validate(tap, docs):
    try:
        import jsonschema
    except ImportError:
        tap.ok(False, "jsonschema importable", "run 'make deps'")
        return
    schema = json.load(open(SCHEMA))
    for kind, doc in docs.items():
        errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]
        tap.ok(not errors, f"{kind} input valid against {os.path.relpath(SCHEMA, ROOT)}", errors[:3])


def main(argv=None):
    ap = argparse.ArgumentParser(prog="check_report.py")
    ap.add_argument("--html", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--interop")
    ap.add_argument("--hostile", action="append", default=[])
    ap.add_argument("--baseline", action="store_true")
    ap.add_argument("--screenshot")
    ap.add_argument("--dom", help="also write the dumped DOM here")
    ap.add_argument("--palette", action="store_true",
                    help="store the screenshot with a 64-colour palette (a small PNG to commit)")
    args = ap.parse_args(argv)
    docs = {"results": inputs.load_json(args.results)}
    if args.interop:
        docs["interop"] = inputs.load_json(args.interop)
    tap = Tap()
    validate(tap, docs)
    page = open(args.html, encoding="utf-8").read()
    refs = static_references(page)
    tap.ok(not refs, "the page references nothing outside itself", refs[:5])
    cmd = chromium_command()
    if not cmd:
        print("missing chromium: install the Debian package chromium (apt-get install chromium), "
              "or run 'make deps'", file=sys.stderr)
        return 1
    dumped = run_chromium(cmd, args.html, ["--dump-dom"])
    if not tap.ok(dumped is not None, f"{cmd[-1]} loaded the page within {CHROMIUM_TIMEOUT} s",
                  "timed out (a script dialog?)"):
        dumped = ""
    tap.ok(len(dumped) > 1000, f"{cmd[-1]} dumped the DOM ({len(dumped)} characters)", "empty dump")
    if args.dom:
        with open(args.dom, "w", encoding="utf-8") as f:
            f.write(dumped)
    dom = Dom()
    dom.feed(dumped)
    check_dom(tap, dom, args, docs)
    if args.screenshot and dumped:
        run_chromium(cmd, args.html, ["--window-size=1280,1600", "--hide-scrollbars",
                                      f"--screenshot={os.path.abspath(args.screenshot)}"])
        written = os.path.exists(args.screenshot) and os.path.getsize(args.screenshot) > 10000
        if written and args.palette:
            shrink(args.screenshot)
        tap.ok(written, f"screenshot {args.screenshot}", "not written")
    print(f"1..{tap.n}")
    print(f"# report check: {tap.n - tap.failed} of {tap.n} passed"
          + (" (no network namespace: resolver and proxy only)" if cmd[0] != "unshare" else ""))
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
