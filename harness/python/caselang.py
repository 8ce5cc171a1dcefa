"""caselang.py: parser of capsule-level cases (cases/dlpack/python/*.pytsm).

Grammar: cases/dlpack/python/README.md. Errors name file:line:col.
"""
import os
import re


class ParseError(Exception):
    pass


TOKEN = re.compile(r"\s*(?:(#.*)|(==|[\[\](){},:|])|(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
                   r"|([A-Za-z_][A-Za-z0-9_\-]*))")
EXCEPTIONS = {"BufferError", "ValueError", "TypeError", "RuntimeError", "any"}
FRONT_KEYS = {"description", "clauses", "origin", "requires", "roles", "tags", "timeout",
              "devices"}


class Tok:
    def __init__(self, kind, text, col):
        self.kind, self.text, self.col = kind, text, col

    def __repr__(self):
        return self.text


def tokenize(line, path, lineno):
    out, pos = [], 0
    while pos < len(line):
        m = TOKEN.match(line, pos)
        if not m or m.end() == pos:
            if line[pos:].strip() == "":
                break
            col = pos + len(line[pos:]) - len(line[pos:].lstrip()) + 1
            raise ParseError(f"{path}:{lineno}:{col}: unexpected character {line[col - 1]!r}")
        if m.group(1):
            break
        if m.group(2):
            out.append(Tok("p", m.group(2), m.start(2) + 1))
        elif m.group(3):
            out.append(Tok("n", m.group(3), m.start(3) + 1))
        elif m.group(4):
            out.append(Tok("w", m.group(4), m.start(4) + 1))
        pos = m.end()
    return out


class Cursor:
    def __init__(self, toks, path, lineno, line):
        self.t, self.i, self.path, self.lineno, self.line = toks, 0, path, lineno, line

    def err(self, msg, tok=None):
        tok = tok or (self.t[self.i] if self.i < len(self.t) else None)
        col = tok.col if tok else len(self.line.rstrip()) + 1
        raise ParseError(f"{self.path}:{self.lineno}:{col}: {msg}")

    def peek(self, k=0):
        return self.t[self.i + k].text if self.i + k < len(self.t) else None

    def next(self, what="a token"):
        if self.i >= len(self.t):
            self.err(f"expected {what}, got end of line")
        self.i += 1
        return self.t[self.i - 1]

    def word(self, *choices):
        t = self.next(" or ".join(choices) if choices else "a word")
        if choices and t.text not in choices:
            self.err(f"expected {' or '.join(choices)}, got {t.text!r}", t)
        if not choices and t.kind != "w":
            self.err(f"expected a name, got {t.text!r}", t)
        return t.text

    def name(self):
        t = self.next("a name")
        if t.kind != "w" or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", t.text):
            self.err(f"expected a name, got {t.text!r}", t)
        return t.text

    def number(self, integer=True):
        t = self.next("a number")
        if t.kind != "n":
            self.err(f"expected a number, got {t.text!r}", t)
        if integer:
            if not re.fullmatch(r"-?\d+", t.text):
                self.err(f"expected an integer, got {t.text!r}", t)
            return int(t.text)
        return float(t.text)

    def nlist(self, integer=False):
        """[1, 2.5, [3, 4]] -> nested list of numbers."""
        t = self.next("'['")
        if t.text != "[":
            self.err(f"expected '[', got {t.text!r}", t)
        out = []
        while self.peek() != "]":
            if self.peek() == "[":
                out.append(self.nlist(integer))
            else:
                out.append(self.number(integer))
            if self.peek() == ",":
                self.next()
            elif self.peek() != "]":
                self.err("expected ',' or ']'")
        self.next()
        return out

    def pair(self):
        t = self.next("'('")
        if t.text != "(":
            self.err(f"expected '(', got {t.text!r}", t)
        a = self.number()
        if self.next("','").text != ",":
            self.err("expected ','")
        b = self.number()
        if self.next("')'").text != ")":
            self.err("expected ')'")
        return (a, b)

    def end(self):
        if self.i < len(self.t):
            self.err(f"unexpected {self.t[self.i].text!r}")


def parse_export_opts(c, st):
    st["form"] = "none"
    while c.peek() is not None:
        w = c.word("versioned", "legacy", "none", "max_version", "copy", "stream", "device")
        if w in ("versioned", "legacy", "none"):
            st["form"] = w
        elif w == "max_version":
            st["max_version"] = c.pair()
        elif w == "copy":
            st["copy"] = {"true": True, "false": False}[c.word("true", "false")]
        elif w == "stream":
            st["stream"] = c.number()
        elif w == "device":
            st["dl_device"] = c.pair()


def parse_statement(c):
    """One statement (not a block opener/closer)."""
    ln = c.lineno
    w = c.word("array", "capsule", "tensor", "drop", "expect", "reconsume", "collect")
    st = {"line": ln}
    if w == "array":                        # array A = make SHAPE DTYPE (arange | values LIST)
        st["op"] = "make"
        st["name"] = c.name()
        c.word("=") if c.peek() != "==" else c.err("expected '='")
        return _make(c, st)
    if w == "capsule":                      # capsule C = export A OPTS
        st["op"] = "export"
        st["name"] = c.name()
        _eq(c)
        c.word("export")
        st["src"] = c.name()
        parse_export_opts(c, st)
        return st
    if w == "tensor":                       # tensor T = consume C | from A [as C]
        st["name"] = c.name()
        _eq(c)
        how = c.word("consume", "from")
        st["op"] = how
        st["src"] = c.name()
        if how == "from" and c.peek() == "as":
            c.next()
            st["as"] = c.name()
        c.end()
        return st
    if w == "reconsume":                    # reconsume C: consumer takes a used capsule
        st["op"] = "consume"
        st["name"] = None
        st["src"] = c.name()
        c.end()
        return st
    if w == "drop":                         # drop X [Y ...]
        st["op"] = "drop"
        st["names"] = [c.name()]
        while c.peek() is not None:
            st["names"].append(c.name())
        return st
    if w == "collect":
        c.end()
        return {"line": ln, "op": "collect"}
    # expect ...
    if c.peek() == "error":
        c.next()
        st["op"] = "expect_error"
        excs = [c.word()]
        while c.peek() == "|":
            c.next()
            excs.append(c.word())
        for e in excs:
            if e not in EXCEPTIONS:
                c.err(f"unknown exception {e!r} (one of {', '.join(sorted(EXCEPTIONS))})")
        st["exc"] = excs
        if c.next("':'").text != ":":
            c.err("expected ':'")
        st["stmt"] = parse_statement(c)
        return st
    kind = c.word("name", "version", "flag", "not", "deleted", "values", "shape", "dtype",
                  "device", "strides", "offset", "alive")
    st["op"] = "expect"
    st["kind"] = kind
    if kind == "not":
        c.word("flag")
        st["kind"] = "noflag"
        st["x"] = c.name()
        st["flag"] = c.word("copied", "readonly")
        c.end()
        return st
    st["x"] = c.name()
    if kind == "flag":
        st["flag"] = c.word("copied", "readonly")
        c.end()
        return st
    if kind == "alive":
        c.end()
        return st
    _eqeq(c)
    if kind == "name":
        st["v"] = c.word("dltensor", "dltensor_versioned", "used_dltensor",
                         "used_dltensor_versioned")
    elif kind == "version":
        st["v"] = c.number()
    elif kind == "deleted":
        st["v"] = c.number()
    elif kind == "values":
        st["v"] = c.nlist() if c.peek() == "[" else c.number(integer=False)
    elif kind in ("shape", "strides"):
        st["v"] = c.nlist(integer=True)
    elif kind == "dtype":
        st["v"] = c.word("float32", "int32")
    elif kind == "device":
        st["v"] = c.pair()
    elif kind == "offset":
        st["v"] = c.number()
    c.end()
    return st


def _eq(c):
    t = c.next("'='")
    if t.text != "=":
        c.err(f"expected '=', got {t.text!r}", t)


def _eqeq(c):
    t = c.next("'=='")
    if t.text != "==":
        c.err(f"expected '==', got {t.text!r}", t)


def _make(c, st):
    c.word("make")
    st["shape"] = c.nlist(integer=True)
    st["dtype"] = c.word("float32", "int32")
    how = c.word("arange", "values", "zeros")
    if how == "values":
        st["values"] = c.nlist()
    else:
        st["fill"] = how
    c.end()
    return st


def parse_file(path, spec_ids=None):
    with open(path) as f:
        lines = f.read().split("\n")
    if not lines or lines[0].strip() != "---":
        raise ParseError(f"{path}:1:1: a case starts with a '---' frontmatter line")
    front, i = {}, 1
    while i < len(lines) and lines[i].strip() != "---":
        ln = lines[i]
        if ln.strip() and not ln.lstrip().startswith("#"):
            if ":" not in ln:
                raise ParseError(f"{path}:{i + 1}:1: expected 'key: value'")
            k, v = ln.split(":", 1)
            k = k.strip()
            if k not in FRONT_KEYS:
                raise ParseError(f"{path}:{i + 1}:1: unknown frontmatter key {k!r}")
            v = v.strip()
            if v.startswith("["):
                if not v.endswith("]"):
                    raise ParseError(f"{path}:{i + 1}:{len(ln)}: list lacks ']'")
                v = [x.strip() for x in v[1:-1].split(",") if x.strip()]
            front[k] = (v, i + 1, ln.index(":") + 2)
        i += 1
    if i >= len(lines):
        raise ParseError(f"{path}:{len(lines)}:1: frontmatter lacks its closing '---'")
    for k in ("description", "clauses"):
        if k not in front:
            raise ParseError(f"{path}:1:1: frontmatter lacks {k!r}")
    clauses, cl_line, cl_col = front["clauses"]
    if not isinstance(clauses, list) or not clauses:
        raise ParseError(f"{path}:{cl_line}:{cl_col}: clauses is a non-empty list")
    for cid in clauses:
        if not re.fullmatch(r"[A-Z]+(\.[A-Z0-9]+)+\.\d+", cid):
            raise ParseError(f"{path}:{cl_line}:{cl_col}: malformed clause id {cid!r}")
        if spec_ids is not None and cid not in spec_ids:
            raise ParseError(f"{path}:{cl_line}:{cl_col}: unknown clause {cid!r} (not in spec/)")
    roles = front.get("roles", (["producer", "consumer"], 0, 0))[0]
    for r in roles:
        if r not in ("producer", "consumer"):
            raise ParseError(f"{path}:{front['roles'][1]}:1: unknown role {r!r}")
    case = {
        "path": path, "description": front["description"][0], "clauses": clauses,
        "origin": front.get("origin", ("", 0, 0))[0],
        "requires": front.get("requires", ([], 0, 0))[0],
        "tags": front.get("tags", ([], 0, 0))[0], "roles": roles,
    }
    if "dlpack-py" not in case["requires"]:
        raise ParseError(f"{path}:1:1: a capsule-level case requires [dlpack-py]")
    # body
    stack = [[]]
    openers = []
    for j in range(i + 1, len(lines)):
        raw = lines[j]
        lineno = j + 1
        toks = tokenize_raw(raw, path, lineno)
        if not toks:
            continue
        c = Cursor(toks, path, lineno, raw)
        head = c.peek()
        if head == "}":
            c.next()
            c.end()
            if not openers:
                c.err("'}' without an open block", toks[0])
            blk = openers.pop()
            blk["body"] = stack.pop()
            continue
        if head == "repeat":
            c.next()
            n = c.number()
            if n < 1:
                c.err("repeat count must be >= 1")
            if c.next("'{'").text != "{":
                c.err("expected '{'")
            c.end()
            blk = {"line": lineno, "op": "repeat", "n": n}
        elif head == "flat":                  # flat memory N MiB {
            c.next()
            c.word("memory")
            n = c.number()
            c.word("MiB")
            if c.next("'{'").text != "{":
                c.err("expected '{'")
            c.end()
            blk = {"line": lineno, "op": "flat", "mib": n}
        else:
            stack[-1].append(parse_statement(c))
            continue
        stack[-1].append(blk)
        openers.append(blk)
        stack.append([])
    if openers:
        raise ParseError(f"{path}:{openers[-1]['line']}:1: block is never closed")
    case["body"] = stack[0]
    return case


RAW_TOKEN = re.compile(r"\s*(?:(#.*)|(==|[\[\](){},:|=])|(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
                       r"|([A-Za-z_][A-Za-z0-9_\-]*))")


def tokenize_raw(line, path, lineno):
    out, pos = [], 0
    while pos < len(line):
        if line[pos:].strip() == "":
            break
        m = RAW_TOKEN.match(line, pos)
        if not m or m.end() == pos:
            col = pos + len(line[pos:]) - len(line[pos:].lstrip()) + 1
            raise ParseError(f"{path}:{lineno}:{col}: unexpected character {line[col - 1]!r}")
        if m.group(1):
            break
        for g, kind in ((2, "p"), (3, "n"), (4, "w")):
            if m.group(g):
                text = m.group(g)
                out.append(Tok("w" if text == "=" else kind, text, m.start(g) + 1))
        pos = m.end()
    return out


def spec_clause_ids(spec_dir):
    ids = set()
    for fn in os.listdir(spec_dir):
        if fn.endswith(".md"):
            with open(os.path.join(spec_dir, fn)) as f:
                ids.update(re.findall(r"\*\*([A-Z]+(?:\.[A-Z0-9]+)+\.\d+)\*\*", f.read()))
    return ids


def collect(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                out += [os.path.join(root, f) for f in files if f.endswith(".pytsm")]
        else:
            out.append(p)
    return sorted(out)
