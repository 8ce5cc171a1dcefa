"""tsm_cts.worker: the bridge's runs for the pytest plugin, in a process of their own.

  python -m tsm_cts.worker --peer SPEC [--peer SPEC...] [--cases SEL...]
                           [--expectations FILE] [--profile P] [--large]

Reads one JSON request a line on stdin and answers each with one JSON line on the
stdout it started with (what the frameworks print goes to stderr):

  {"list": true}        -> {"peers": [...], "jobs": [...], "errors": [...]}: the runs
                           of every capsule-level case in which a peer under test takes
                           part (the reference's runs with itself are the suite's own)
  {"run": JOB}          -> {"result": R}: one run, graded as the bridge grades it
                           (bridge.judge_result: strength, then the expectations)
  {"report": RESULTS, "seconds": S}
                        -> {"report": DOC, "unused": [...]}: the judge's JSON report of
                           the results (bridge.report_document) with the warnings
                           attributed, and the expectation lines no result matched

A crash of a framework kills this process only; the plugin reports the run it was in
as Crash and starts another worker. The bridge's own modules have short top-level names
(bridge, peers, dl, ...): they are imported here, never into pytest's process.

SPEC is a peer: a peer module file or a folder of them named with a path separator
(harness/python/peers/README.md, "Writing a peer"), the name or import name of a peer the bridge knows (numpy, jax, mlx,
onnxruntime, tvm-ffi, torch), or any other importable array module, judged through the
array API's calls (its asarray, from_dlpack, __dlpack__: _array_api_peer.py).
"""
import argparse
import functools
import gc
import json
import os
import sys
import time
import types

from . import layout

ARRAY_MODULES = "TSM_CTS_ARRAY_MODULES"


def is_path(spec):
    """Whether a peer spec names a peer module file or folder rather than a module: a
    .py file, or a name with a path separator (./peers), so that `numpy` stays the
    module where a folder of that name is at hand (numpy's own checkout)."""
    return spec.endswith(".py") or os.sep in spec or (os.altsep or os.sep) in spec


def setup(specs):
    """Puts the bridge on the path and resolves the peer specs: RETURN (the bridge
    module, the names of the peers under test). Sets the environment that the bridge's
    peer search reads, so that every later process resolves them the same way."""
    lay = layout()
    for p in (lay.bridge, lay.ext):
        if p not in sys.path:
            sys.path.insert(0, p)
    os.environ["TSM_CTS_BUILD"] = lay.build
    paths = [p for p in os.environ.get("TSM_CTS_PEERS", "").split(os.pathsep) if p]
    files, modules = [], []
    for spec in specs:
        if is_path(spec):
            files.append(os.path.abspath(spec))
        else:
            modules.append(spec)
    os.environ["TSM_CTS_PEERS"] = os.pathsep.join(paths + [f for f in files if f not in paths])
    import bridge
    import peers
    names = []
    for f in files:  # the peers a user's module defines
        names += [n for n in peers.classes() if os.path.abspath(peers.source(n)) == f or
                  os.path.abspath(peers.source(n)).startswith(f.rstrip(os.sep) + os.sep)]
    generic = []
    for m in modules:
        known = peers.classes()
        hit = [n for n, c in known.items() if m in (n, c.module)]
        if hit:
            names.append(hit[0])
        else:
            generic.append(m)
    if generic:
        os.environ[ARRAY_MODULES] = ",".join(generic)
        os.environ["TSM_CTS_PEERS"] += os.pathsep + lay.array_api_peer
        peers._CLASSES = None  # found again, with the generic peers
        names += generic
    for n in names:
        cls = peers.classes()[n]
        if not peers.installed(cls):
            raise SystemExit(f"tsm_cts: peer {n} needs the Python module {cls.module}, "
                             "which is not installed")
    if not names:
        raise SystemExit(f"tsm_cts: no peer in {', '.join(specs)}")
    return bridge, list(dict.fromkeys(names))


def expectations(bridge, lay, files, under_test):
    """The suite's own known failures (python-<peer>.txt), then a library's files:
    each line of a library's file is counted against its peer (python-<peer>.txt), else
    against the first peer under test."""
    exps = []
    for f in files:
        base = os.path.basename(f)
        peer = base[len("python-"):-len(".txt")] if base.startswith("python-") else None
        exps += bridge.expectation_file(f, peer if peer in under_test else under_test[0])
    return exps + bridge.load_expectations(lay.expectations)


class Worker:
    def __init__(self, args):
        self.lay = layout()
        self.bridge, self.under_test = setup(args.peer)
        import caselang
        import grading
        self.caselang, self.grading = caselang, grading
        self.args = args
        self.peers = ["tsmref"] + [p for p in self.under_test if p != "tsmref"]
        self.exps = expectations(self.bridge, self.lay, args.expectations, self.under_test)
        self.strengths = grading.load_strengths(os.path.join(self.lay.root, "spec"))
        self.cache = {}
        # A case of the library has its id relative to the library (dlpack/python/x.pytsm);
        # a library's own case, relative to the folder --cases named (or its file's
        # folder), so that its expectation lines do not depend on where it is checked out.
        lib = os.path.abspath(self.lay.cases)
        own = [os.path.abspath(c) for c in args.cases if os.path.exists(c)]
        own = [c if os.path.isdir(c) else os.path.dirname(c) for c in own
               if not (c + os.sep).startswith(lib + os.sep)]
        library_id = self.bridge.case_id

        def case_id(path):
            ap = os.path.abspath(path)
            for base in own:
                if ap.startswith(base + os.sep):
                    return os.path.relpath(ap, base)
            return library_id(path)
        self.bridge.case_id = case_id  # judge_result reads it through the module

    def case_paths(self):
        sel = self.args.cases or [self.lay.cases]
        return self.caselang.collect([s if os.path.isabs(s) or os.path.exists(s) else
                                      os.path.join(self.lay.cases, s) for s in sel])

    def list(self):
        cases, errors = [], []
        for path, parsed in self.caselang.parse_files(self.case_paths()):
            if isinstance(parsed, self.caselang.ParseError):
                errors.append(str(parsed))
            else:
                self.cache[path] = parsed
                cases.append(parsed)
        jobs = []
        for j in self.bridge.jobs_for(cases, self.peers, self.args.large):
            if not {j["producer"], j["consumer"]} & set(self.under_test):
                continue  # the reference with itself: the suite's own check
            j["case"] = self.bridge.case_id(j["path"])
            j["description"] = self.cache[j["path"]]["description"]
            j["profile"] = self.bridge.profile_for(j, self.args.profile)
            jobs.append(j)
        return {"peers": self.peers, "under_test": self.under_test, "jobs": jobs,
                "errors": errors}

    def run(self, j):
        t0 = time.time()
        if j["skip"]:
            r = dict(j, status="Skip", message="large (run with --tsm-large)")
        elif j["lacks"]:
            r = dict(j, status="NotSupported", message=j["lacks"][1],
                     attributed_to=j["lacks"][0])
        else:
            if j["path"] not in self.cache:
                self.cache[j["path"]] = self.caselang.parse_file(j["path"])
            p = "tsmref" if j["producer"] == "-" else j["producer"]
            c = "tsmref" if j["consumer"] == "-" else j["consumer"]
            soft = functools.partial(self.grading.is_soft, strengths=self.strengths,
                                     profile=j["profile"])
            status, msg, peer = self.bridge.run_one(self.cache[j["path"]], p, c, soft)
            r = dict(j, status=status, message=msg, attributed_to=peer,
                     seconds=round(time.time() - t0, 3))
            # What outlives a case is frozen out of later collections, as the bridge's
            # workers do (bridge.worker_main).
            gc.freeze()
        self.bridge.judge_result(r, self.exps, self.strengths, self.args.profile)
        return r

    def report(self, results, secs):
        self.bridge.attribute_warnings(results)
        exps = expectations(self.bridge, self.lay, self.args.expectations, self.under_test)
        for r in results:
            if r["status"] not in ("Skip", "NotSupported"):
                e = self.bridge.match_expectation(exps, r["case"], r["producer"],
                                                  r["consumer"])
                if e:
                    e["used"] = True
        doc = self.bridge.report_document(results, self.peers,
                                          # the plugin's runs are on the CPU
                                          types.SimpleNamespace(profile=self.args.profile,
                                                                device="cpu"),
                                          secs)
        doc.update({"peers": self.peers, "score": self.grading.score(results, self.strengths),
                    "peer_scores": {p: self.grading.score(
                        self.grading.peer_results(results, p), self.strengths)
                        for p in self.under_test}})
        unused = [f"{e['file']} {e['case']} {e['producer']}->{e['consumer']}" for e in exps
                  if not e["used"] and e["peer"] in self.under_test]
        return {"report": doc, "unused": unused}


def parser():
    ap = argparse.ArgumentParser(prog="python -m tsm_cts.worker")
    ap.add_argument("--peer", action="append", required=True)
    ap.add_argument("--cases", action="append", default=[])
    ap.add_argument("--expectations", action="append", default=[])
    ap.add_argument("--profile", choices=("standard", "strict"), default="standard")
    ap.add_argument("--large", action="store_true")
    return ap


def main(argv=None):
    args = parser().parse_args(argv)
    # Replies go to the stdout this process started with; anything a framework prints
    # goes to stderr instead, so that it cannot break a reply.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    w = Worker(args)
    for line in sys.stdin:
        req = json.loads(line)
        if "list" in req:
            reply = w.list()
        elif "run" in req:
            reply = {"result": w.run(req["run"])}
        else:
            reply = w.report(req["report"], req.get("seconds", 0))
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
