#!/usr/bin/env python3
"""bench/callgrind_ir.py: the instruction figures of bench/README.md (NAME_instructions,
beside each wall-time figure of bench-managers, bench-dlpack and bench-xapi, and beside
bench-graphs' planner_time_growth_5000_vs_100), from a callgrind run of a program's
--count-instructions mode (bench/count_instructions.sh, bench_util.h).

  callgrind_ir.py figures PROGRAM N CALLGRIND_OUT [PROGRAM_STDOUT]
      reads the inclusive instruction count (Ir) of each bench_ir_* function of the
      callgrind output, divides it by the operations it ran, and appends PROGRAM's
      figures to the file $BENCH_JSON names (one JSON object per line, as
      bench_util.h's bench_figure); prints a table on stdout. A function runs N
      operations times its figure's operations per N; where a program decides how many
      it runs (bench-graphs: the tensors of the DAGs it plans), it prints them, a line
      "bench_ir_ops FUNCTION COUNT" each, and PROGRAM_STDOUT is that output.
  callgrind_ir.py null PROGRAM
      appends PROGRAM's figures with value, ratio and met null: no count was made
      (no valgrind), and results.py still finds every figure.

PROGRAM is managers, dlpack, graphs or xapi. Exits 1 when a counted function, or the
operations a program was to print for it, is missing (the program stopped early, or the
compiler renamed a loop past bench_ir_*).
"""
import json
import os
import sys

# Per program: (figure, counted function, baseline function, baseline name, operations
# per N or None, unit, goal or None). Goals and baseline names are those of the
# wall-time figure beside it (bench/README.md; the planner's baseline says Ir where its
# wall-time one says ns). Bench 5's functions run on 2 threads of N operations each,
# so 2 N operations: callgrind runs the threads one at a time, so this is the
# instructions per operation of each thread, not a time. None: the program prints each
# function's operations (bench_ir_ops lines, above).
FIGURES = {
    "managers": [
        ("create_release_vs_malloc_instructions", "bench_ir_create_release",
         "bench_ir_malloc", "malloc_memset_free", 1, "Ir/op", 1.3),
        ("create_release_vs_malloc_2managers_instructions", "bench_ir_threads_2managers",
         "bench_ir_threads_malloc", "malloc_memset_free_2threads", 2, "Ir/op", 1.3),
        ("create_release_vs_malloc_1manager_2threads_instructions",
         "bench_ir_threads_1manager", "bench_ir_threads_malloc",
         "malloc_memset_free_2threads", 2, "Ir/op", None),
        ("manager_close_vs_free_instructions", "bench_ir_close", "bench_ir_free", "free", 1,
         "Ir/resource", 1.3),
    ],
    "dlpack": [
        ("dlpack_c_roundtrip_vs_create_release_instructions", "bench_ir_round_trip",
         "bench_ir_create_release", "create_release", 1, "Ir/round trip", 1.5),
    ],
    # One reuse plan of each of the three DAGs of 100 nodes and of 5000 (bench_graphs.c),
    # per tensor planned (the tensors of the three summed, the Ir of their three plans
    # summed: the wall-time figure averages the three DAGs' ns per tensor instead, the
    # same within 0.02% here, as their tensor counts differ by one or two).
    "graphs": [
        ("planner_time_growth_5000_vs_100_instructions", "bench_ir_plan_5000",
         "bench_ir_plan_100", "ir_per_tensor_100_nodes", None, "Ir/tensor", 2.0),
    ],
    # No goal: the wall-time figure's goal is in nanoseconds (<= 80 ns), which an
    # instruction count does not bound.
    "xapi": [
        ("dlpack_xapi_roundtrip_ns_instructions", "bench_ir_xapi_round_trip",
         "bench_ir_c_round_trip", "dlpack_c_roundtrip", 1, "Ir/round trip", None),
    ],
}


def base_name(fn):
    """A function's name without the suffix of a compiler's clone (.constprop.0, .isra.0,
    .part.0): the clone is the loop, under another symbol."""
    return fn.split(".", 1)[0]


def inclusive_ir(path):
    """{function: inclusive Ir} of a callgrind output file (format: valgrind's
    callgrind/docs, "Callgrind Format Specification"). A function's inclusive count is
    its own cost lines plus the inclusive cost line that follows each calls= line of its
    body. Names are compressed: "fn=(id) name" defines id, "fn=(id)" reuses it. Only the
    first event (Ir) is read."""
    names, incl = {}, {}
    fn = None

    def name_of(spec):
        # "(id) name" defines id (in fn= or cfn= lines alike), "(id)" reuses it.
        if not spec.startswith("("):
            return spec
        ident, _, name = spec.partition(")")
        if name.strip():
            names[ident] = name.strip()
        return names[ident]

    with open(path) as f:
        for line in f:
            if line.startswith("fn="):
                fn = base_name(name_of(line[3:].strip()))
            elif line.startswith("cfn="):
                name_of(line[4:].strip())
            elif line[:1] in "0123456789+-*" and fn is not None:
                # a cost line: "position Ir ...", the function's own or, after a calls=
                # line, the call's inclusive cost; both count in fn's inclusive cost
                parts = line.split()
                if len(parts) >= 2:
                    incl[fn] = incl.get(fn, 0) + int(parts[1])
    return incl


def emit(fig):
    path = os.environ.get("BENCH_JSON")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(fig) + "\n")


def printed_ops(path):
    """{function: operations} of a program's "bench_ir_ops FUNCTION COUNT" lines."""
    ops = {}
    if path:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[0] == "bench_ir_ops":
                    ops[parts[1]] = int(parts[2])
    return ops


def figures(program, n, out, stdout=None):
    incl = inclusive_ir(out)
    printed = printed_ops(stdout)
    missing = [fn for fig in FIGURES[program] for fn in fig[1:3] if fn not in incl]
    if missing:
        sys.exit(f"callgrind_ir.py: {out}: no count for {', '.join(sorted(set(missing)))}")
    missing = [fn for fig in FIGURES[program] if fig[4] is None for fn in fig[1:3]
               if fn not in printed]
    if missing:
        sys.exit(f"callgrind_ir.py: {stdout}: no bench_ir_ops line for "
                 f"{', '.join(sorted(set(missing)))}")
    if printed:
        print("  instructions (callgrind, per operation the program printed, inclusive)")
    else:
        print(f"  instructions (callgrind, N = {n} operations a loop, inclusive)")
    for name, fn, base_fn, base, ops, unit, goal in FIGURES[program]:
        value = incl[fn] / (printed[fn] if ops is None else ops * n)
        baseline = incl[base_fn] / (printed[base_fn] if ops is None else ops * n)
        ratio = value / baseline
        print(f"  {fn:28} {value:9.1f} {unit:13} {base_fn:26} {baseline:8.1f}  "
              f"{ratio:6.3f} x")
        emit({"name": name, "value": round(value, 2), "unit": unit,
              "baseline_name": base, "baseline_value": round(baseline, 2),
              "ratio": round(ratio, 4), "goal": None if goal is None else f"<= {goal:g}",
              "met": None if goal is None else ratio <= goal})


def nulls(program):
    for name, _, _, base, _, unit, goal in FIGURES[program]:
        emit({"name": name, "value": None, "unit": unit, "baseline_name": base,
              "baseline_value": None, "ratio": None,
              "goal": None if goal is None else f"<= {goal:g}", "met": None})


def main():
    args = sys.argv[1:]
    if len(args) in (4, 5) and args[0] == "figures" and args[1] in FIGURES:
        figures(args[1], int(args[2]), args[3], args[4] if len(args) == 5 else None)
    elif len(args) == 2 and args[0] == "null" and args[1] in FIGURES:
        nulls(args[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
