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
    field) and INTEROP.json;
  - the heatmap has one cell per producer/consumer entry of INTEROP.json's matrix;
  - every failure whose message names a line of a readable case file shows that line
    highlighted;
  - each --hostile TEXT (a case name with markup, text with invalid UTF-8 as the reader
    shows it) appears as text, and the DOM has no script element;
  - with --baseline, the baseline section is there;
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
STATUSES = ["Pass", "Fail", "Crash", "Timeout", "NotSupported", "Skip", "XFail", "XPass", "Error"]
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
    cells of each summary table, the ids of heatmap cells, the text of highlighted
    source lines and all text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements = []
        self.counts = collections.defaultdict(dict)
        self.heatmap_cells = []
        self.hits = []
        self.text = []
        self._table = None
        self._open = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        if tag == "table":
            self._table = a.get("id")
        if (a.get("id") or "").startswith("heatmap-cell-"):
            self.heatmap_cells.append(a["id"])
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

    def handle_data(self, data):
        self.text.append(data)
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


def check_dom(tap, dom, args, docs):
    check_counts(tap, dom, "summary-results", docs["results"], "results")
    if "interop" in docs:
        check_counts(tap, dom, "summary-interop", docs["interop"], "interop")
        cells = sum(len(v) for v in docs["interop"]["matrix"].values())
        tap.ok(len(dom.heatmap_cells) == cells, f"heatmap: {cells} cells, one per matrix entry",
               f"the page has {len(dom.heatmap_cells)}")
    hits = expected_hits(docs.values())
    shown = [h.strip() for h in dom.hits]
    missing = [h for h in hits if h.strip() not in shown]
    tap.ok(hits and not missing, f"{len(hits)} failing lines of case sources highlighted",
           f"not highlighted: {missing}; highlighted: {shown}")
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
