#!/usr/bin/env python3
"""bench/results.py FIGURES.jsonl RESULTS.json: gathers the figures the benchmarks
appended (one JSON object per line, bench_util.h's bench_figure and
bench_capsule.py) into RESULTS.json, a JSON array of objects {name, value, unit,
baseline_name, baseline_value, ratio, goal, met} (bench/README.md). Prints the
summary table, and exits 1 when a figure the README names is missing (a benchmark
that stopped early), never for a goal not met. A figure present with value null is
not missing: the instruction figures (NAME_instructions) are null where no valgrind
counted them (bench/count_instructions.sh), and
bench-xapi's figures where Python's embedding library is missing (bench/bench_xapi.c).
"""
import json
import sys

# Each instruction figure follows its wall-time figure, so that the table shows them
# side by side.
NAMES = [
    "create_release_vs_malloc", "create_release_vs_malloc_instructions",
    "create_release_vs_malloc_2managers", "create_release_vs_malloc_2managers_instructions",
    "create_release_vs_malloc_1manager_2threads",
    "create_release_vs_malloc_1manager_2threads_instructions",
    "manager_close_ns_per_resource", "manager_close_vs_free",
    "manager_close_vs_free_instructions", "manager_close_vs_walk_floor",
    "walk_floor_vs_free", "dlpack_c_roundtrip_ns",
    "dlpack_c_roundtrip_vs_create_release",
    "dlpack_c_roundtrip_vs_create_release_instructions",
    "dlpack_xapi_roundtrip_ns", "dlpack_xapi_roundtrip_ns_instructions",
    "capsule_roundtrip_vs_numpy", "planner_peak_vs_bound_max",
    "planner_peak_vs_bound_mean", "planner_time_growth_5000_vs_100",
    "planner_time_growth_5000_vs_100_instructions",
    "planner_time_vs_gallocr_5000", "planner_time_vs_gallocr_50000",
    "planner_peak_vs_gallocr_sum",
    "iree_cpu_loop_vs_c_floor", "judge_steps_per_s_1k", "judge_steps_per_s_10k",
    "judge_steps_per_s_100k", "judge_s_per_gib_vs_memcmp", "iree_seed_full_cpu_s_estimate",
    "suite_cases_per_s",
]
FIELDS = ["name", "value", "unit", "baseline_name", "baseline_value", "ratio", "goal", "met"]


def main():
    src, dst = sys.argv[1], sys.argv[2]
    figures = {}
    with open(src) as f:
        for line in f:
            if line.strip():
                fig = json.loads(line)
                figures[fig["name"]] = {k: fig.get(k) for k in FIELDS}
    ordered = [figures[n] for n in NAMES if n in figures]
    ordered += [v for k, v in figures.items() if k not in NAMES]
    with open(dst, "w") as f:
        json.dump(ordered, f, indent=1)
        f.write("\n")
    print(f"{'figure':55} {'value':>12} {'unit':14} {'ratio':>8} {'goal':>8}  met")
    for fig in ordered:
        value = "null" if fig["value"] is None else f"{fig['value']:.6g}"
        ratio = "-" if fig["ratio"] is None else f"{fig['ratio']:.3f}"
        met = {True: "yes", False: "NO", None: "-"}[fig["met"]]
        print(f"{fig['name']:55} {value:>12} {fig['unit']:14} {ratio:>8} "
              f"{fig['goal'] or '-':>8}  {met}")
    missing = [n for n in NAMES if n not in figures]
    if missing:
        sys.exit(f"results.py: missing figures: {', '.join(missing)}")
    print(f"written: {dst}")


if __name__ == "__main__":
    main()
