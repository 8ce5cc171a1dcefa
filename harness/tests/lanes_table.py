#!/usr/bin/env python3
"""lanes_table.py: README.md's table of the lanes of `make check`, generated from
ci/check.sh, and the links of the top-level documents (lane docs of `make check`).

  lanes_table.py --write    rewrite the table between README.md's markers
  lanes_table.py [--check]  write nothing; exit 1 when README's table differs from the
                            one ci/check.sh gives, or when a link of README.md,
                            CONTRIBUTING.md, bench/README.md or docs/*.md leads to no
                            file of the repository

One row per `lane NAME COMMAND...` line of ci/check.sh, in its order. What the lane
checks is the first sentence of, in this order: the comment block right above the lane
line; the comment block above the shell function the lane calls (or, where that block
lists items, the item the lane names: `#   ITEM   what`); the item of a make target in
the comments of Makefile and the *.mk fragments (`#   TARGET   what`); the header
comment of the script the lane runs (`bash X`, `python3 X`). A lane with none of these
shows its command alone: give it a comment in ci/check.sh.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = "ci/check.sh"
README = "README.md"
BEGIN = ("<!-- lanes of `make check`: written by `python3 harness/tests/lanes_table.py "
         "--write` from ci/check.sh; do not edit -->")
END = "<!-- end of the lanes table -->"
DOCS = ["README.md", "CONTRIBUTING.md", "bench/README.md"]


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read().splitlines()


def comment_above(lines, i):
    """The contiguous `#` lines right above line i, without the `#`."""
    out = []
    j = i - 1
    while j >= 0 and lines[j].startswith("#") and not lines[j].startswith("#!"):
        out.insert(0, lines[j][1:])
        j -= 1
    return out


def item(comment, word, gap=r"\s{2,}"):
    """The text of `ITEM   what` (two or more spaces; one for a make target, whose
    items are aligned) naming word, with its continuation lines (indented further
    than ITEM)."""
    pat = re.compile(r"^(\s+)(?:make |bash \S+ )?" + re.escape(word) + gap + r"(\S.*)$")
    for k, line in enumerate(comment):
        m = pat.match(line)
        if not m:
            continue
        text = [m.group(2)]
        indent = len(m.group(1))
        for nxt in comment[k + 1:]:
            stripped = nxt.lstrip()
            if not stripped or len(nxt) - len(stripped) <= indent + 1:
                break
            text.append(stripped)
        return first_sentence(" ".join(text))
    return None


def first_sentence(text):
    """The first sentence, without the parentheses of over 60 characters when it is
    long, capitalised."""
    text = re.sub(r"\s+", " ", text).strip()
    depth = 0
    for k, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "." and depth == 0 and (k + 1 == len(text) or text[k + 1] == " ") \
                and not re.search(r"\b(e\.g|i\.e|cf|vs|etc)$", text[:k]):
            text = text[:k + 1]
            break
    text = re.sub(r"[:;,] \$\d.*$", "", text)  # "...: $1 the build folder"
    if len(text) > 160:
        text = re.sub(r" \((?:[^()]|\([^()]*\)){60,}\)", "", text)
    if len(text) > 200:  # a list follows: keep what comes before it
        depth = 0
        for k, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and k > 60 and text[k:k + 2] in (": ", "; "):
                text = text[:k]
                break
    text = text.rstrip(".;:, ") + "."
    if re.match(r"^[a-z]+[ ,]", text):
        text = text[:1].upper() + text[1:]
    return text


def make_items():
    comments = []
    for path in ["Makefile"] + sorted(glob.glob(os.path.join(ROOT, "*.mk"))) + \
            sorted(glob.glob(os.path.join(ROOT, "*/*.mk"))) + \
            sorted(glob.glob(os.path.join(ROOT, "*/*/*/*.mk"))):
        lines = read(os.path.relpath(path, ROOT) if os.path.isabs(path) else path)
        comments.append([ln[1:] for ln in lines if ln.startswith("#")])
    return comments


def script_header(path):
    try:
        lines = read(path)
    except OSError:
        return None
    text = []
    for line in lines[1:]:
        s = line.strip()
        if s.startswith("# shellcheck") or s in ('"""', "/*"):
            continue
        if s.startswith("#") or s.startswith("*"):
            s = s[1:].strip()
        elif s.startswith('"""'):
            s = s[3:].strip()
        else:
            break
        if not s:
            if text:
                break
            continue
        text.append(s)
    if not text:
        return None
    body = " ".join(text)
    body = re.sub(r"^\S+: ", "", body)  # "path/of/script: what it does"
    return first_sentence(body)


def lanes():
    lines = read(CHECK)
    funcs = {}
    for i, line in enumerate(lines):
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\(\) \{(.*)$", line)
        if m:
            body = m.group(2).strip().rstrip("}").strip().rstrip(";")
            funcs[m.group(1)] = (comment_above(lines, i), body)
    mk = make_items()
    out = []
    for i, line in enumerate(lines):
        m = re.match(r"^lane ((?:[^\s$]|\$\([^)]*\)|\$\w+)+) (.*)$", line)
        if not m:
            continue
        name, cmd = m.group(1), m.group(2)
        words = cmd.split()
        what = None
        above = comment_above(lines, i)
        if above:
            what = first_sentence(" ".join(above))
        if what is None and words[0] in funcs:
            comment, body = funcs[words[0]]
            for w in words[1:]:
                what = what or item(comment, w)
            if what is None and comment:
                what = first_sentence(" ".join(comment))
            if what is None and body.startswith("make "):
                words = body.split()
        if words[0] == "make":
            target = words[-1]
            how = "`make %s`" % target
            for c in mk:
                what = what or item(c, target, r"\s+")
            for c in mk:  # "... `make TARGET`: what"
                for k, ln in enumerate(c):
                    m2 = re.search(r"`make %s`: (.*)$" % re.escape(target), ln)
                    if m2 and what is None:
                        what = first_sentence(" ".join([m2.group(1)] + c[k + 1:k + 3]))
        elif words[0] in ("bash", "python3"):
            script = words[1]
            args = [w for w in words[2:] if not w.startswith('"$')]
            how = "`%s`" % " ".join([script] + args)
            if what is None and args:
                what = item(comment_of(script), args[0])
            what = what or script_header(script)
        elif words[0] in funcs:
            how = "`%s` in ci/check.sh" % words[0]
            if words[0] == "cts":
                how = "`tsm-cts %s`" % " ".join(words[1:])
        else:
            prog = os.path.basename(words[0].strip('"')).replace("-", "_")
            for src in glob.glob(os.path.join(ROOT, "*", "tests", prog + ".c")):
                what = what or script_header(os.path.relpath(src, ROOT))
            how = "`%s`" % " ".join(words)
        name = name.replace('$(basename "$CC")', "CC").replace("$other_cc", "OTHER")
        what = (what or "").replace("|", "\\|")
        out.append((name, what, how.replace('"$primary"', "BUILD").replace('"$', "$")
                    .replace('$primary', "BUILD").replace('"', "")))
    return out


def comment_of(path):
    try:
        return [ln[1:] for ln in read(path) if ln.startswith("#")]
    except OSError:
        return []


def table():
    rows = ["| lane | what it checks | runs |", "|---|---|---|"]
    for name, what, how in lanes():
        what = what.replace("$primary", "the primary build")
        rows.append("| %s | %s | %s |" % (name, what, how))
    return rows


def replace(lines, new):
    try:
        b = lines.index(BEGIN)
        e = lines.index(END)
    except ValueError:
        sys.exit("%s: the markers of the lanes table are missing:\n  %s\n  %s"
                 % (README, BEGIN, END))
    return lines[:b + 1] + new + lines[e:], lines[b + 1:e]


def broken_links():
    bad = []
    docs = DOCS + sorted(os.path.relpath(p, ROOT)
                         for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
    for doc in docs:
        if not os.path.exists(os.path.join(ROOT, doc)):
            bad.append("%s: missing" % doc)
            continue
        base = os.path.dirname(doc)
        for n, line in enumerate(read(doc), 1):
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                path = os.path.normpath(os.path.join(base, target.split("#")[0]))
                if path.startswith("..") or not os.path.exists(os.path.join(ROOT, path)):
                    bad.append("%s:%d: link to %s leads to no file of the repository"
                               % (doc, n, target))
    return bad


def main(argv):
    write = "--write" in argv
    lines = read(README)
    updated, old = replace(lines, table())
    if write:
        with open(os.path.join(ROOT, README), "w", encoding="utf-8") as f:
            f.write("\n".join(updated) + "\n")
        print("%s: the lanes table rewritten from %s" % (README, CHECK))
        return 0
    rc = 0
    if old != table():
        print("%s: the lanes table differs from %s; run "
              "`python3 harness/tests/lanes_table.py --write`" % (README, CHECK))
        rc = 1
    for b in broken_links():
        print(b)
        rc = 1
    if rc == 0:
        print("%s's lanes table matches %s; the documents' links lead to files" % (README, CHECK))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
