#!/usr/bin/env python3
"""bench/bench_capsule.py: the Python capsule round trip (spec/dlpack.md, DLP.PY.*):
export + import + drop of a [16] float32 tensor, the reference's extension against
numpy, measured in the same run.

  tsmref : tsmref.from_dlpack(t.__dlpack__(max_version=...))  (capsule -> import; given
           t itself, from_dlpack would take the exchange table of its type, no capsule)
  numpy  : numpy.from_dlpack(a)   (a.__dlpack__(...) -> capsule -> a new ndarray)
Rounds alternate between the two (pairs); the figures are the medians of the
rounds, and the ratio is the median of the pairs' ratios. Prints the table
line and, with $BENCH_JSON set, appends the figure capsule_roundtrip_vs_numpy there
(one JSON object per line, bench/results.py).
Usage: bench_capsule.py [iterations per round]   (default 100000)
"""
import json
import os
import statistics
import sys
import time

import numpy as np
import tsmref

ROUNDS = 9
GOAL = 1.0


def one_round(fn, n):
    t0 = time.perf_counter_ns()
    for _ in range(n):
        fn()
    return (time.perf_counter_ns() - t0) / n


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    t = tsmref.tensor(list(range(16)), shape=(16,), dtype="float32")
    a = np.arange(16, dtype=np.float32)
    version = (1, tsmref.DLPACK_MINOR)
    ref = lambda: tsmref.from_dlpack(t.__dlpack__(max_version=version))
    npy = lambda: np.from_dlpack(a)
    one_round(ref, n // 10)
    one_round(npy, n // 10)
    pairs = [(one_round(ref, n), one_round(npy, n)) for _ in range(ROUNDS)]
    if tsmref.live_count() != 1:
        sys.exit("bench_capsule: imports leaked")
    best_ref = statistics.median(r for r, _ in pairs)
    best_npy = statistics.median(p for _, p in pairs)
    ratio = statistics.median(r / p for r, p in pairs)
    print(f"bench capsule: {n} round trips per round, median of {ROUNDS} pairs, [16] float32")
    print(f"  tsmref.from_dlpack(capsule)        : {best_ref:8.1f} ns/round trip")
    print(f"  numpy.from_dlpack(ndarray)         : {best_npy:8.1f} ns/round trip")
    print(f"  ratio                              : {ratio:8.2f} x")
    path = os.environ.get("BENCH_JSON")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({
                "name": "capsule_roundtrip_vs_numpy", "value": round(best_ref, 1),
                "unit": "ns/round trip", "baseline_name": "numpy_from_dlpack",
                "baseline_value": round(best_npy, 1), "ratio": round(ratio, 4),
                "goal": f"<= {GOAL}", "met": ratio <= GOAL}) + "\n")


if __name__ == "__main__":
    main()
