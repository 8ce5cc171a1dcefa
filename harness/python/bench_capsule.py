#!/usr/bin/env python3
"""bench_capsule.py: capsule round-trip micro-benchmark (export + import + release).

  tsmref -> tsmref : tsmref.from_dlpack(t.__dlpack__(max_version=...)), then the import is
                     dropped (deleter runs); given t itself, from_dlpack would take the
                     exchange table of its type, no capsule
  numpy  -> numpy  : numpy.from_dlpack(a), then dropped
Both on a [16] float32 array, same run; prints ns per round trip and the ratio.
"""
import json
import sys
import time

import numpy as np
import tsmref


def bench(fn, n):
    for _ in range(n // 10):
        fn()
    best = None
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        dt = (time.perf_counter_ns() - t0) / n
        best = dt if best is None else min(best, dt)
    return best


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    t = tsmref.tensor(list(range(16)), shape=(16,), dtype="float32")
    a = np.arange(16, dtype=np.float32)
    version = (1, tsmref.DLPACK_MINOR)
    ref = bench(lambda: tsmref.from_dlpack(t.__dlpack__(max_version=version)), n)
    npy = bench(lambda: np.from_dlpack(a), n)
    assert tsmref.live_count() == 1, "imports leaked"
    res = {"tsmref_ns": round(ref, 1), "numpy_ns": round(npy, 1), "ratio": round(ref / npy, 2),
           "iterations": n}
    print(f"capsule round trip: tsmref->tsmref {ref:.0f} ns, numpy->numpy {npy:.0f} ns, "
          f"ratio {ref / npy:.2f}")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
