"""caselang.py: capsule-level cases (cases/dlpack/python/*.pytsm) as the bridge runs them.

The case language has one front end, the judge's (harness/src/lang/case_*.c): this module runs
`tsm-cts parse --json` and turns its statement tree into the dicts bridge.py executes.
Grammar: cases/README.md and cases/dlpack/python/README.md. Errors name file:line:col.

The judge is $TSM_CTS_BUILD/bin/tsm-cts (python.mk sets TSM_CTS_BUILD to the build
folder), else build/bin/tsm-cts of this checkout, else `tsm-cts` on the PATH.
"""
import json
import os
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DTYPES = {"bool": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
          "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
          "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
          "c64": "complex64", "c128": "complex128", "f8e3m4": "float8_e3m4",
          "f8e4m3fn": "float8_e4m3fn",
          "f8e5m2": "float8_e5m2", "f4e2m1fn": "float4_e2m1fn"}
# the judge's names (MGR.DTYPE.1, and the capsule level's complex and float8 types) ->
# numpy's (bfloat16 and the float8 types: ml_dtypes')


class ParseError(Exception):
    pass


def judge():
    build = os.environ.get("TSM_CTS_BUILD")
    for exe in ([os.path.join(build, "bin", "tsm-cts")] if build else []) + \
            [os.path.join(ROOT, "build", "bin", "tsm-cts")]:
        if os.access(exe, os.X_OK):
            return exe
    exe = shutil.which("tsm-cts")
    if not exe:
        raise ParseError("tsm-cts not found: run make, or set TSM_CTS_BUILD to its build folder")
    return exe


def _body(j):
    return [_stmt(s) for s in j["body"]]


def _make(j):
    st = {"op": "make", "name": j["dst"], "shape": j["shape"], "dtype": DTYPES[j["dtype"]]}
    if j["fill"] == "values":
        st["values"] = j["values"]
    else:
        st["fill"] = j["fill"]
    return st


def _export(j):
    st = {"op": "export", "name": j["dst"], "src": j["a"], "form": j["form"]}
    if "max_version" in j:
        st["max_version"] = tuple(j["max_version"])
    for key, to in (("copy", "copy"), ("stream", "stream")):
        if key in j:
            st[to] = j[key]
    if "device" in j:
        st["dl_device"] = tuple(j["device"])
    return st


def _from(j):
    st = {"op": "from", "name": j["dst"], "src": j["a"]}
    if j["out"]:
        st["as"] = j["out"]
    if "copy" in j:
        st["copy"] = j["copy"]
    if "device" in j:
        st["device"] = tuple(j["device"])
    return st


def _xapi(op):
    """The exchange-table statements with options: xalloc, forge, exchange."""
    def convert(j):
        st = {"op": op, "name": j["dst"], "chain": j["chain"]}
        if j["a"]:
            st["src"] = j["a"]
        if "shape" in j:
            st["shape"], st["dtype"] = j["shape"], DTYPES[j["dtype"]]
        if "device" in j:
            st["device"] = tuple(j["device"])
        if "major" in j:
            st["major"] = j["major"]
        if "code" in j:
            st["code"] = tuple(j["code"])
        return st
    return convert


def _expect(j):
    st = {"op": "expect", "kind": j["what"], "x": j["a"]}
    if j["b"]:
        st["y"] = j["b"]
    if "flag" in j:
        st["flag"] = j["flag"]
    if "device" in j:
        st["device"] = tuple(j["device"])
    if "v" in j:
        v = j["v"]
        st["v"] = (DTYPES[v] if j["what"] == "dtype" else
                   tuple(v) if j["what"] == "device" else v)
    return st


CONVERT = {
    "PY_MAKE": _make,
    "PY_EXPORT": _export,
    "PY_CONSUME": lambda j: {"op": "consume", "name": j["dst"], "src": j["a"]},
    "PY_FROM": _from,
    "PY_SLICE": lambda j: {"op": "view", "name": j["dst"], "src": j["a"],
                           "how": ("slice", j["dim"], j["start"], j["stop"], j["step"])},
    "PY_TRANSPOSE": lambda j: {"op": "view", "name": j["dst"], "src": j["a"],
                               "how": ("transpose",)},
    "PY_STRIDED": lambda j: {"op": "view", "name": j["dst"], "src": j["a"],
                             "how": ("strided", tuple(j["shape"]), tuple(j["bytes"]))},
    "PY_UNEXPORTABLE": lambda j: {"op": "unexportable", "name": j["dst"], "what": j["what"]},
    "PY_UNWIND": lambda j: {"op": "unwind", "body": _body(j)},
    "PY_READONLY": lambda j: {"op": "view", "name": j["dst"], "src": j["a"],
                              "how": ("readonly",)},
    "PY_RECONSUME": lambda j: {"op": "consume", "name": None, "src": j["a"]},
    "PY_DROP": lambda j: {"op": "drop", "names": j["list"]},
    "PY_COLLECT": lambda j: {"op": "collect"},
    "PY_EXPECT_ERROR": lambda j: {"op": "expect_error", "exc": j["exc"],
                                  "stmt": _stmt(j["inner"])},
    "PY_EXPECT": _expect,
    "PY_XFROM": lambda j: {"op": "xfrom", "name": j["dst"], "src": j["a"]},
    "PY_XALLOC": _xapi("xalloc"),
    "PY_FORGE": _xapi("forge"),
    "PY_XTO": lambda j: {"op": "xto", "name": j["dst"], "src": j["a"]},
    "PY_ECHO": lambda j: {"op": "echo", "name": j["dst"], "src": j["a"]},
    "PY_EXCHANGE": _xapi("exchange"),
    "REPEAT": lambda j: {"op": "repeat", "n": j["times"], "body": _body(j)},
    "PY_FLAT": lambda j: {"op": "flat", "mib": j["mib"], "body": _body(j)},
}


def _stmt(j):
    st = {"line": j["line"]}
    st.update(CONVERT[j["kind"]](j))
    return st


def _case(j):
    return {"path": j["path"], "description": j["description"], "clauses": j["clauses"],
            "origin": j["origin"] or "", "requires": j["requires"], "tags": j["tags"],
            "roles": j["roles"], "devices": j["devices"], "timeout": j["timeout"],
            "warnings": [f"{j['path']}:{w}" for w in j["warnings"]], "body": _body(j)}


def parse_files(paths):
    """One judge run for all paths: [(path, case dict or ParseError)] in their order."""
    if not paths:
        return []
    p = subprocess.run([judge(), "parse", "--json", "--spec", os.path.join(ROOT, "spec"),
                        *paths], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise ParseError(f"tsm-cts parse failed ({p.returncode}): {p.stderr.strip()}")
    parsed, errors = {}, {}
    for line in p.stdout.splitlines():
        j = json.loads(line)
        if j["dialect"] != "pytsm":
            errors[j["path"]] = ParseError(f"{j['path']}:1:1: error: not a capsule-level "
                                           "case (.pytsm): tsm-cts runs .tsm cases")
        else:
            parsed[j["path"]] = _case(j)
    for line in p.stderr.splitlines():
        for path in paths:
            if line.startswith(path + ":") and ": error: " in line and path not in errors:
                errors[path] = ParseError(line)
    return [(f, parsed.get(f) or errors.get(f) or ParseError(f"{f}: not parsed"))
            for f in paths]


def parse_file(path):
    """The case at path, or ParseError naming file:line:col."""
    result = parse_files([path])[0][1]
    if isinstance(result, ParseError):
        raise result
    return result


def collect(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                out += [os.path.join(root, f) for f in files if f.endswith(".pytsm")]
        else:
            out.append(p)
    return sorted(out)
