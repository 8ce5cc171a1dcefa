#!/usr/bin/env python3
"""harness/report/bench_text.py: the bench figures of `make bench` as the report's JSON.

  bench_text.py BENCH.txt [-o BENCH.json]

Reads what bench-managers, bench-dlpack and bench-graphs print (bench/*.c; one file,
any order, each program's output after its "== PATH" line as `make bench` writes it)
and writes {"bench": "1", "source": ..., "series": [...], "ratios": [...]}:
- series: {"title", "x_label", "y_label", "x", "lines": [{"label", "y"}], "style"
  (line, bar or points), "log_x", "log_y", "note"}; from bench-graphs, the planner's
  bytes against the liveness bound and without reuse per graph, and the planning time
  per tensor against the graph's size;
- ratios: {"name", "value", "goal"}: each "(N x)" and "ratio : N x" figure, and the
  planner's mean planned/bound. The bench programs state no goal, so none is set here;
  a ratio's goal, where one is stated, goes in "goal".
"""
import argparse
import json
import re
import sys

GRAPH_ROW = re.compile(r"^(?P<name>\S+)\s+(?P<tensors>\d+)\s+(?P<steps>\d+)\s+(?P<naive>\d+)\s+"
                       r"(?P<bound>\d+)\s+(?P<planned>\d+)\s+(?P<p_bound>[0-9.]+)\s+"
                       r"(?P<p_none>[0-9.]+)\s+(?P<inplace>\d+)\s+(?P<ns>[0-9.]+)\s+\S+$")
# "  LABEL : 12.34 ns/op ..." (a measure), "(1.23 x)" at its end (a ratio to the baseline).
MEASURE = re.compile(r"^\s+(?P<name>.+?)\s*:\s*[0-9.]+ ns\b(?P<rest>.*)$")
RATIO_PAREN = re.compile(r"\((?P<value>[0-9.]+) x\)")
RATIO_LINE = re.compile(r"^\s*ratio\s*:\s*(?P<value>[0-9.]+) x")
OVERALL = re.compile(r"^overall: mean p/bound (?P<mean>[0-9.]+), sum planned / sum bound (?P<sum>[0-9.]+)")


def graph_series(rows):
    names = [r["name"] for r in rows]
    return [
        {"title": "Graph planner: planned bytes against the liveness lower bound, per graph",
         "x_label": "graph", "y_label": "bytes", "x": names, "style": "bar", "log_y": True,
         "lines": [{"label": "planned (reuse)", "y": [int(r["planned"]) for r in rows]},
                   {"label": "liveness bound", "y": [int(r["bound"]) for r in rows]},
                   {"label": "no reuse", "y": [int(r["naive"]) for r in rows]}]},
        {"title": "Graph planner: planning time per tensor against graph size",
         "x_label": "tensors in the graph", "y_label": "ns per tensor", "style": "points",
         "log_x": True, "log_y": True, "x": [int(r["tensors"]) for r in rows],
         "lines": [{"label": "reuse plan", "y": [float(r["ns"]) for r in rows]}]},
    ]


def measure_ratio(line, names):
    """A ratio of a measure line, named "measure / baseline"; names holds the last
    measure and the baseline label seen (the baseline line says "(baseline)")."""
    m = MEASURE.match(line)
    if m:
        label = m["name"].replace("(baseline)", "").strip()
        names["baseline" if "(baseline)" in m["name"] else "measure"] = label
        paren = RATIO_PAREN.search(m["rest"])
        if paren:
            return {"name": f"{label} / {names['baseline']}", "value": float(paren["value"]), "goal": None}
    m = RATIO_LINE.match(line)
    if m:
        return {"name": f"{names['measure']} / {names['baseline']}", "value": float(m["value"]),
                "goal": None}
    return None


def parse(text):
    rows, ratios, names = [], [], {"measure": "?", "baseline": "?"}
    for line in text.splitlines():
        if m := GRAPH_ROW.match(line):
            rows.append(m.groupdict())
        elif m := OVERALL.match(line):
            ratios.append({"name": "graph planner: mean planned bytes / liveness bound",
                           "value": float(m["mean"]), "goal": None})
        elif ratio := measure_ratio(line, names):
            ratios.append(ratio)
    return {"bench": "1", "source": "make bench (bench/*.c), ratios against a baseline of the same run",
            "series": graph_series(rows) if rows else [], "ratios": ratios}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench_text.py")
    ap.add_argument("text")
    ap.add_argument("-o", "--output")
    args = ap.parse_args(argv)
    with open(args.text, encoding="utf-8", errors="replace") as f:
        doc = parse(f.read())
    if not doc["series"] and not doc["ratios"]:
        print(f"{args.text}: no bench figures found", file=sys.stderr)
        return 1
    out = open(args.output, "w") if args.output else sys.stdout
    json.dump(doc, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
