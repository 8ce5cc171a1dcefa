"""harness/tests/check_metrics.py: lane metrics. The C functions of the tree stay small
enough to read: none longer than 50 lines, fewer than 2% with a cyclomatic complexity
above 15, fewer than 2% with 6 or more parameters (the adapter ABI's slots, whose
parameters harness/include/tsm/adapter.h fixes, count like any other). lizard (pinned in
deps.mk) measures every .c and .h file git tracks; the report lists each function over a
limit, worst first, so the next refactoring knows where to start.

    python3 harness/tests/check_metrics.py            # the tree; exit 1 past a limit
    python3 harness/tests/check_metrics.py --self-test  # a planted file past each limit fails

Run it with the .venv's python (make deps installs lizard there); a missing lizard
names the package.
"""
import os
import subprocess
import sys
import tempfile

MAX_LENGTH = 50
MAX_CCN = 15
MAX_PARAMS = 5
MAX_SHARE = 0.02  # of all functions, for CCN and parameters


def load_lizard():
    try:
        import lizard  # noqa: PLC0415 (a clear message when it is missing)
    except ImportError:
        sys.exit("check_metrics.py: lizard is missing: run `make deps` (PyPI lizard, "
                 "pinned in deps.mk) and use .venv/bin/python")
    return lizard


def functions(paths):
    lizard = load_lizard()
    for info in lizard.analyze_files(paths, exts=lizard.get_extensions([])):
        for f in info.function_list:
            yield {"where": f"{info.filename}:{f.start_line}", "name": f.name,
                   "length": f.length, "ccn": f.cyclomatic_complexity,
                   "params": len(f.parameters)}


def judge(funcs, out):
    """Prints the over-limit functions and the shares; RETURN the number of broken limits."""
    n = len(funcs)
    long_ = [f for f in funcs if f["length"] > MAX_LENGTH]
    complex_ = [f for f in funcs if f["ccn"] > MAX_CCN]
    wide = [f for f in funcs if f["params"] > MAX_PARAMS]
    broken = 0
    for title, items, key, limit_ok in (
            (f"longer than {MAX_LENGTH} lines", long_, "length", not long_),
            (f"CCN above {MAX_CCN}", complex_, "ccn", len(complex_) < MAX_SHARE * n),
            (f"{MAX_PARAMS + 1} or more parameters", wide, "params", len(wide) < MAX_SHARE * n)):
        share = 100.0 * len(items) / n if n else 0.0
        verdict = "ok" if limit_ok else "OVER THE LIMIT"
        print(f"{title}: {len(items)} of {n} functions ({share:.2f}%): {verdict}", file=out)
        for f in sorted(items, key=lambda f: -f[key]):
            print(f"  {f[key]:4d}  {f['name']}  {f['where']}", file=out)
        broken += not limit_ok
    return broken


def tracked_c_files():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    os.chdir(root)
    listed = subprocess.run(["git", "ls-files", "*.c", "*.h"], capture_output=True,
                            text=True, check=True).stdout.split()
    return [p for p in listed if os.path.exists(p)]


PLANTED = """
static int planted_long(int a) {
%s  return a;
}
static int planted_complex(int a) {
%s  return a;
}
static int planted_wide(int a, int b, int c, int d, int e, int f) { return a + b + c + d + e + f; }
"""


def self_test():
    """A file with one function past each limit, judged alone: every limit must break."""
    body_long = "".join(f"  a += {i};\n" for i in range(MAX_LENGTH + 5))
    body_complex = "".join(f"  if (a == {i}) a++;\n" for i in range(MAX_CCN + 5))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "planted.c")
        with open(path, "w") as f:
            f.write(PLANTED % (body_long, body_complex))
        with open(os.devnull, "w") as null:
            broken = judge(list(functions([path])), null)
    if broken != 3:
        print(f"check_metrics.py --self-test: FAIL: {broken} of 3 planted breaks seen")
        return 1
    print("check_metrics.py --self-test: ok: a planted long, complex and wide function "
          "each break their limit")
    return 0


def main():
    if "--self-test" in sys.argv[1:]:
        return self_test()
    broken = judge(list(functions(tracked_c_files())), sys.stdout)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
