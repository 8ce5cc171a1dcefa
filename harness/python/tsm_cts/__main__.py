"""python -m tsm_cts: the capsule bridge and the judge of an installed tsm-cts.

  python -m tsm_cts run --peer MODULE [--peer MODULE...] [--expectations FILE]
                        [--json FILE] [--junit FILE] [--tap FILE] [--profile P]
                        [-j N] [--large] [-v] [CASES...]
      every capsule-level case (default: all of the case library's .pytsm) for every
      producer x consumer pair of the reference (tsmref) and the peers, as `make interop`
      runs them (harness/python/bridge.py): the matrix on stdout; --json the judge's
      JSON report, --junit its JUnit XML (the judge's `merge` writes it), --tap TAP 13
      as the judge prints it. Exit status 1 on a Fail, XPass, Crash or Error.
  python -m tsm_cts peers [--peer MODULE...]   the peers found, their versions
  python -m tsm_cts judge ARGS...              the C judge (also the `tsm-cts` command):
      `judge run --adapter SO`, `judge lint`, `judge merge`, ... (`judge --help`)
  python -m tsm_cts paths                      where the judge, cases, spec and the
      reference adapter are, one `name: path` a line

MODULE: an importable array module (judged through the array API's asarray,
from_dlpack and __dlpack__), a peer the suite knows by name or module (numpy, jax, mlx,
onnxruntime, tvm-ffi, torch), or a peer module file or folder of your own
(harness/python/peers/README.md, "Writing a peer"). A library's own expectations file
(--expectations, repeatable) has the lines of harness/expectations/python-*.txt; its
lines are counted against its peer (python-<peer>.txt) or the first --peer.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

from . import layout


def _judge_env():
    lay = layout()
    env = dict(os.environ)
    if not lay.installed:  # a checkout's judge finds spec/ and cases/ from the root
        env.setdefault("TSM_CTS_SPEC", lay.spec)
        env.setdefault("TSM_CTS_CASES", lay.cases)
    return env


def judge_main(argv=None):
    """The C judge, with these arguments (the console script `tsm-cts`)."""
    lay = layout()
    argv = sys.argv[1:] if argv is None else argv
    if not os.access(lay.judge, os.X_OK):
        print(f"tsm_cts: no judge at {lay.judge}", file=sys.stderr)
        return 2
    os.execve(lay.judge, [lay.judge] + list(argv), _judge_env())
    return 2  # not reached


def bridge_cmd(lay, args, extra_env):
    """The bridge's command line and environment for `run` and `peers`."""
    from .worker import ARRAY_MODULES
    env = lay.env(extra_env)
    return [sys.executable, os.path.join(lay.bridge, "bridge.py")] + args, env, ARRAY_MODULES


def resolve(lay, specs):
    """(the bridge's --peers names, its --peer-path entries, environment): the peers,
    resolved in a worker-like process (worker.setup) so that the pytest plugin and this
    command name the same peers."""
    code = ("import json, sys; from tsm_cts.worker import setup; "
            "_, names = setup(sys.argv[1:]); import os; "
            "print(json.dumps([names, os.environ.get('TSM_CTS_PEERS', ''), "
            "os.environ.get('TSM_CTS_ARRAY_MODULES', '')]))")
    p = subprocess.run([sys.executable, "-c", code] + specs, capture_output=True, text=True,
                       env=lay.env())
    if p.returncode != 0:
        raise SystemExit(p.stderr.strip() or f"tsm_cts: resolving {specs} failed")
    names, peer_path, modules = json.loads(p.stdout.strip().splitlines()[-1])
    env = {"TSM_CTS_PEERS": peer_path}
    if modules:
        env["TSM_CTS_ARRAY_MODULES"] = modules
    return names, env


def expectations_dir(lay, files, names, tmp):
    """A folder of python-<peer>.txt files for the bridge's --expectations: the suite's
    own, then each of the library's files as its peer's (a file of the same peer replaces
    the suite's)."""
    out = os.path.join(tmp, "expectations")
    os.makedirs(out)
    for fn in sorted(os.listdir(lay.expectations)):
        if fn.startswith("python-") and fn.endswith(".txt"):
            shutil.copy(os.path.join(lay.expectations, fn), out)
    for f in files:
        base = os.path.basename(f)
        peer = base[len("python-"):-len(".txt")] if base.startswith("python-") else None
        peer = peer if peer in names else names[0]
        shutil.copy(f, os.path.join(out, f"python-{peer}.txt"))
    return out


def tap_lines(doc):
    """The results of a JSON report as the judge prints them (TAP 13)."""
    rows = doc["results"]
    out = ["TAP version 13", f"1..{len(rows)}",
           f"# tsm-cts bridge: {doc['adapter']['version']}, profile {doc['profile']}"]
    esc = lambda s: s.replace("\\", "\\\\").replace("#", "\\#").replace("\n", " ")  # noqa: E731
    count = {}
    for n, r in enumerate(rows, 1):
        st = r["status"]
        count[st] = count.get(st, 0) + 1
        ok = st in ("Pass", "Warning", "NotSupported", "Skip")
        line = f"{'ok' if ok else 'not ok'} {n} - {esc(r['case'])} [{r['device']}]"
        if st in ("NotSupported", "Skip"):
            line += f" # SKIP {st}: {esc(r['message'].splitlines()[0] if r['message'] else '')}"
        elif st == "XFail":
            line += f" # TODO XFail: {esc(r.get('expected', ''))}"
        out.append(line)
        if (not ok and st != "XFail") or st == "Warning":
            out += ["  ---", f"    status: {st}", f"    case: {json.dumps(r['path'])}",
                    f"    device: {json.dumps(r['device'])}", "    clauses:"]
            out += [f"      - {c}" for c in r["clauses"]]
            if r.get("graded_by"):
                out += [f"    graded_by: {json.dumps(r['graded_by'])}",
                        f"    profile: {doc['profile']}"]
            out += ["    message: |"] + [f"      {ln}" for ln in r["message"].splitlines()]
            out.append("  ...")
    out.append("# " + ", ".join(f"{k} {v}" for k, v in sorted(count.items())))
    return out


def run_main(args):
    lay = layout()
    names, env = resolve(lay, args.peer)
    cases = args.cases or [lay.cases]
    with tempfile.TemporaryDirectory(prefix="tsm-cts-") as tmp:
        json_out = args.json or os.path.join(tmp, "interop.json")
        cmd = ["run", "--peers", ",".join(["tsmref"] + [n for n in names if n != "tsmref"]),
               "--profile", args.profile, "-j", str(args.jobs),
               "--expectations", expectations_dir(lay, args.expectations, names, tmp),
               "--json", json_out] + (["--large"] if args.large else []) + \
            (["-v"] if args.verbose else []) + \
            [c if os.path.isabs(c) or os.path.exists(c) else os.path.join(lay.cases, c)
             for c in cases]
        argv, env, _ = bridge_cmd(lay, cmd, env)
        rc = subprocess.call(argv, env=env)
        if not os.path.exists(json_out):
            return rc or 2
        if args.junit:
            merged = subprocess.call([lay.judge, "merge", "--spec", lay.spec, "--json",
                                      os.path.join(tmp, "merged.json"), "--junit", args.junit,
                                      json_out], env=_judge_env(), stdout=subprocess.DEVNULL)
            rc = rc or (2 if merged > 1 else 0)
        if args.tap:
            with open(json_out) as f:
                doc = json.load(f)
            with open(args.tap, "w") as f:
                f.write("\n".join(tap_lines(doc)) + "\n")
    return rc


def peers_main(args):
    lay = layout()
    env = {}
    if args.peer:
        _, env = resolve(lay, args.peer)
    argv, env, _ = bridge_cmd(lay, ["peers"], env)
    return subprocess.call(argv, env=env)


def paths_main(_args):
    lay = layout()
    for name in ("judge", "adapter", "cases", "spec", "expectations", "bridge", "ext"):
        print(f"{name}: {getattr(lay, name)}")
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["judge"]:
        return judge_main(argv[1:])
    ap = argparse.ArgumentParser(prog="python -m tsm_cts", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="judge array modules through the capsule protocol")
    r.add_argument("cases", nargs="*", help="case files or folders (default: the library's)")
    r.add_argument("--peer", action="append", required=True, metavar="MODULE")
    r.add_argument("--expectations", action="append", default=[], metavar="FILE")
    r.add_argument("--json")
    r.add_argument("--junit")
    r.add_argument("--tap")
    r.add_argument("--profile", choices=("standard", "strict"),
                   default=os.environ.get("TSM_CTS_PROFILE") or "standard")
    r.add_argument("-j", dest="jobs", type=int, default=2)
    r.add_argument("--large", action="store_true")
    r.add_argument("-v", "--verbose", action="store_true")
    p = sub.add_parser("peers", help="the peers found")
    p.add_argument("--peer", action="append", default=[], metavar="MODULE")
    sub.add_parser("judge", help="the C judge: judge --help")
    sub.add_parser("paths", help="where the judge, cases and spec are")
    args = ap.parse_args(argv)
    return {"run": run_main, "peers": peers_main, "paths": paths_main}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
