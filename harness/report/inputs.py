"""harness/report/inputs.py: what the HTML report reads, made safe to show.

- JSON reports (harness/schema/results.schema.json, format 3.x, and 2.x, which has no
  Warning, profile or score: the judge's results.json, the bridge's interop.json with
  its matrix, a merged all.json), the nightly fuzz summary
  (ci/nightly-fuzz: {"runs": [...]}) and the bench figures (harness/report/bench_text.py:
  {"bench": ...}), each recognised by its keys.
- The clauses of spec/*.md: a paragraph opening with its bold id (spec/README.md), its
  level (strength) and text, and in its block (up to the next clause or heading) the
  note (`>` lines) and the `Source: ` line naming the text that governs it.
- The lines of a case file around the line a failure message names.

Every string that comes from a case file, an adapter or a report is made valid UTF-8
here (invalid bytes and lone surrogates become visible escapes), so that the template,
which escapes all text, can show it as text.
"""
import json
import os
import re

# The message of a failure at a statement starts with "PATH:LINE: " (harness/src/exec/,
# harness/src/family/).
MESSAGE_LINE = re.compile(r"^(?P<path>[^:\n]+):(?P<line>[0-9]+):")
CLAUSE_HEAD = re.compile(r"^\*\*(?P<id>[A-Z]+(?:\.[A-Z0-9]+)+)\*\*\s*(?:\((?P<level>[A-Z]+)\))?\s*(?P<text>.*)$")
SOURCE_CONTEXT = 4


def clean(value):
    """value with every string valid UTF-8: lone surrogates (from \\udcXX escapes or
    surrogateescape decoding) become the visible text \\udcXX."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, list):
        return [clean(v) for v in value]
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}
    return value


def read_text(path, errors="backslashreplace"):
    """A file's text; bytes that are not UTF-8 become \\xNN (in JSON, where a backslash
    would start an escape: U+FFFD, as the judge writes them), shown as text."""
    with open(path, "rb") as f:
        return f.read().decode("utf-8", errors)


def load_json(path):
    return clean(json.loads(read_text(path, "replace")))


def kind_of(doc):
    """Which input a JSON document is: results, interop, bench or fuzz."""
    if not isinstance(doc, dict):
        return None
    if "matrix" in doc and "results" in doc:
        return "interop"
    if "results" in doc and "tsm_cts" in doc:
        return "results"
    if "bench" in doc:
        return "bench"
    if isinstance(doc.get("runs"), list):
        return "fuzz"
    return None


def load_inputs(paths):
    """{kind: document} for the positional inputs; a second input of a kind, or one of
    no known kind, is an error naming the file."""
    found = {}
    for path in paths:
        doc = load_json(path)
        kind = kind_of(doc)
        if kind is None:
            raise SystemExit(f"{path}: not a tsm-cts results, interop, bench or fuzz summary JSON")
        if kind in found:
            raise SystemExit(f"{path}: a second {kind} input")
        found[kind] = doc
    if "results" not in found:
        raise SystemExit("no results JSON (tsm-cts run --json) among the inputs")
    return found


def clause_blocks(lines):
    """(id, level, text lines, block lines) for each clause of one chapter's lines: the
    paragraph its bold id opens, and the lines after it up to the next clause or heading
    (where its `>` notes and its `Source: ` line are)."""
    current = None
    in_paragraph = False
    for line in lines:
        head = CLAUSE_HEAD.match(line)
        if head or line.startswith("#"):
            if current:
                yield current
            current = (head["id"], head["level"] or "", [head["text"]], []) if head else None
            in_paragraph = bool(head)
        elif current and in_paragraph and line.strip():
            current[2].append(line.strip())
        elif current:
            in_paragraph = False
            if line.strip():
                current[3].append(line.strip())
    if current:
        yield current


def load_clauses(spec_dir):
    """{clause id: {"chapter", "level", "text", "note", "source"}} from every spec/*.md
    (source: its `Source: ` line without that prefix, "" when it has none)."""
    clauses = {}
    for name in sorted(os.listdir(spec_dir)):
        if not name.endswith(".md"):
            continue
        lines = read_text(os.path.join(spec_dir, name)).splitlines()
        for cid, level, body, block in clause_blocks(lines):
            text = " ".join([b for b in body if not b.startswith(">")] +
                            [b for b in block if b.startswith("Variants: ")])
            notes = [b for b in body + block if b.startswith(">")]
            note = " ".join(b.lstrip("> ") for b in notes)
            source = " ".join(b[len("Source: "):] for b in block if b.startswith("Source: "))
            clauses[cid] = {"chapter": name, "level": level, "text": text, "note": note,
                            "source": source}
    return clauses


def failing_line(message):
    """The line number a message starts with (PATH:LINE:), or None."""
    match = MESSAGE_LINE.match(message or "")
    return int(match["line"]) if match else None


def source_excerpt(root, path, line):
    """[(number, text, is_failing_line)] around `line` of the case file (all of it, up to
    a screen, when the message names no line); [] when the file cannot be read."""
    full = path if os.path.isabs(path) else os.path.join(root, path)
    try:
        lines = read_text(full).splitlines()
    except OSError:
        return []
    if line is None:
        first, last = 1, min(len(lines), 2 * SOURCE_CONTEXT + 1)
    else:
        first, last = max(1, line - SOURCE_CONTEXT), min(len(lines), line + SOURCE_CONTEXT)
    return [(n, lines[n - 1], n == line) for n in range(first, last + 1)]
