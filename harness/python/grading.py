"""grading.py: what a failed check means, by the strength of the clause it breaks
(spec/README.md, "Strengths"), as the judge's harness/src/run/grade.c decides it for the C
cases: a broken MUST (or a behaviour outside a MAY's variants) is a Fail, a broken SHOULD
a Warning, a broken TSM rule a Fail under the strict profile and a Warning under the
standard one. A failure's clauses are those its message names, else those its case
cites. Also the conformance score of a run's results."""
import os
import re

PROFILES = ("standard", "strict")
STRENGTHS = ("MUST", "SHOULD", "MAY", "TSM", "withdrawn")
_CLAUSE_LINE = re.compile(r"^\*\*([A-Z]+(?:\.[A-Z]+)+\.[0-9]+)\*\* \(([A-Za-z]+)\)")
_ID = re.compile(r"(?<![A-Za-z0-9.])[A-Z]+(?:\.[A-Z]+)+\.[0-9]+")


def load_strengths(spec_dir):
    """{clause id: strength} of every clause of the chapters under spec_dir ("" when a
    clause names none: such a clause is judged as a MUST)."""
    out = {}
    for fn in sorted(os.listdir(spec_dir)):
        if not fn.endswith(".md"):
            continue
        with open(os.path.join(spec_dir, fn), encoding="utf-8") as f:
            for line in f:
                m = _CLAUSE_LINE.match(line)
                if m:
                    out[m.group(1)] = m.group(2) if m.group(2) in STRENGTHS else ""
                elif line.startswith("**") and "** " in line:
                    cid = line[2:].split("**", 1)[0]
                    if _ID.fullmatch(cid):
                        out.setdefault(cid, "")
    return out


def default_profile():
    """$TSM_CTS_PROFILE, else standard (what a third party is judged by)."""
    p = os.environ.get("TSM_CTS_PROFILE") or "standard"
    if p not in PROFILES:
        raise SystemExit(f"TSM_CTS_PROFILE={p!r}: want strict or standard")
    return p


def _breaks_as_fail(strength, profile):
    if strength == "SHOULD":
        return False
    if strength == "TSM":
        return profile == "strict"
    return True  # MUST, MAY (outside its variants), or ungraded


def _named(text, strengths):
    out = []
    for cid in _ID.findall(text or ""):
        if cid in strengths and cid not in out:
            out.append(cid)
    return out


def _statement_comment(path, message):
    """The comment of the statement a bridge message (`line N: ...`) stopped at."""
    m = re.match(r"line ([0-9]+): ", message or "")
    if not m or not path:
        return ""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError:
        return ""
    n = int(m.group(1))
    text = lines[n - 1] if 0 < n <= len(lines) else ""
    return text.split("#", 1)[1] if "#" in text else ""


def grade(status, message, cited, strengths, profile, path=None):
    """(status, graded_by) of a result: a Fail stays one when a clause it breaks is
    judged a Fail under the profile, else it becomes Warning; graded_by names the
    clauses that decided ("ID STRENGTH, ..."). The clauses a failure breaks: those its
    message names, else those the comment of the statement it stopped at names (the case
    file `path`), else those its case cites. Other statuses pass through."""
    if status != "Fail":
        return status, None
    ids = (_named(message, strengths) or _named(_statement_comment(path, message), strengths)
           or list(cited))
    if not ids:
        return status, None
    fail = breaks_as_fail(ids, strengths, profile)
    by = ", ".join(f"{c} {strengths.get(c) or 'ungraded'}" for c in ids
                   if _breaks_as_fail(strengths.get(c, ""), profile) == fail)
    return ("Fail" if fail else "Warning"), by


def score(results, strengths):
    """The conformance score of results (dicts with status, clauses, graded_by): the
    MUST clauses cited by results that ran (not NotSupported or Skip), how many of them
    no Fail or XFail graded by them and no Crash, Timeout or Error of a case citing them
    broke, and the Warnings."""
    applicable, broken = set(), set()
    for r in results:
        if r["status"] in ("NotSupported", "Skip") or not r.get("device_present", True):
            continue
        graded = {part.split(" ")[0] for part in (r.get("graded_by") or "").split(", ") if part}
        musts = {c for c in set(r.get("clauses", [])) | graded if strengths.get(c) == "MUST"}
        applicable |= musts
        if r["status"] in ("Fail", "XFail"):
            broken |= musts & graded
        elif r["status"] in ("Crash", "Timeout", "Error"):
            broken |= musts
    return {"must_applicable": len(applicable), "must_passed": len(applicable - broken),
            "warnings": sum(r["status"] == "Warning" for r in results)}


def strict_status(r):
    """The status a result of a standard-profile report would have had under the strict
    profile: a Warning that a TSM clause graded is a Fail there, or an XFail where an
    expectation line lists it (the report's `expected`). Grading is a function of the
    run's outcome, so no second run is needed to know it."""
    by = r.get("graded_by") or ""
    if r["status"] == "Warning" and any(p.endswith(" TSM") for p in by.split(", ")):
        return "XFail" if r.get("expected") else "Fail"
    return r["status"]


def is_soft(message, strengths, profile):
    """Whether a failed check whose message names clauses breaks none that is a Fail
    under the profile (a check whose message names no clause is never soft)."""
    ids = _named(message, strengths)
    return bool(ids) and not breaks_as_fail(ids, strengths, profile)


def breaks_as_fail(ids, strengths, profile):
    """Whether breaking the clauses ids is a Fail under the profile."""
    return any(_breaks_as_fail(strengths.get(c, ""), profile) for c in ids)


def peer_results(results, peer):
    """The interop runs counted against a peer: every run it takes part in, as producer
    or consumer, but an XFail, Warning or NotSupported only where the report attributes
    it to the peer (a Warning nobody is attributed, seen only between two peers, counts
    for both)."""
    return [r for r in results if peer in (r["producer"], r["consumer"]) and (
        r["status"] not in ("XFail", "Warning", "NotSupported") or r.get("attributed_to") == peer
        or (r["status"] == "Warning" and not r.get("attributed_to")))]
