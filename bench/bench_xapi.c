/*
 * bench/bench_xapi.c: the round trip through the reference's DLPack 1.3 C exchange API
 * (spec/dlpack.md, DLP.XAPI.*; the table impl/python/exchange_api.c publishes as the
 * capsule tsmref.Tensor.__dlpack_c_exchange_api__), timed from C as a consumer
 * framework written in C or C++ uses it: no Python call in the loop. The program embeds
 * the interpreter the extension is built for (the .venv's: bench/python_embed.py),
 * imports tsmref from BUILD/python (beside this program's BUILD/bin), makes a tensor of
 * 16 float32, takes the table from the capsule on the type, checks its header (major 1,
 * minor >= 3) and one round trip (an alias of the same elements), then times
 *   round trip   managed_tensor_from_py_object_no_sync(obj) -> DLManagedTensorVersioned*
 *                -> managed_tensor_to_py_object_no_sync -> a new tsmref.Tensor -> Py_DECREF
 *                (its release runs the export's deleter)
 *   baseline     the C DLPack round trip of libtsmref on a tensor of the same shape:
 *                tsmr_dlpack_export (versioned) + tsmr_dlpack_import (aliased) +
 *                tsmr_res_release, what bench-dlpack times. The exchange functions are
 *                exactly these three calls wrapped in a Python object (its allocation,
 *                type checks; the import is tsmr_dlpack_try_import, which takes the
 *                export back as tsmr_dlpack_import does), so the ratio is the cost of
 *                the Python layer, and the baseline moves with the library as the
 *                round trip does.
 * in PAIRS pairs of rounds of N / 5 + 1 round trips, alternating, summarised by medians
 * (bench_util.h). The figure dlpack_xapi_roundtrip_ns (ns per round trip, goal <= 80 ns:
 * the issue "Performance by design", item 4) goes to $BENCH_JSON.
 *
 * The GIL. The _no_sync functions run with the GIL held (dlpack.h). This, the only
 * thread, holds it from Py_InitializeFromConfig to Py_FinalizeEx; the baseline needs no
 * GIL and keeps it too, so that neither loop pays a switch the other does not.
 *
 * --count-instructions N runs each loop once, N round trips, in a bench_ir_* function of
 * its own after a warm-up (bench_util.h), for callgrind to count
 * (bench/count_instructions.sh: figure dlpack_xapi_roundtrip_ns_instructions).
 *
 * Built without Python (BENCH_XAPI_MISSING defined by bench/bench.mk: the embedding
 * library is not installed, bench/python_embed.py says which), it says what is missing,
 * writes the figure with value null, so that `make bench` goes on, and exits 0; in
 * --count-instructions mode it exits 77 (nothing to count).
 * Usage: bench-xapi [N]   (default 1000000)
 *        bench-xapi --count-instructions N
 */
#ifndef BENCH_XAPI_MISSING
#define PY_SSIZE_T_CLEAN
#include <Python.h> /* before the system headers, as Python.h requires */
#endif

#include <dlpack/dlpack.h> /* DLPack 1.x header bundled with apache-tvm-ffi (deps.mk) */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

enum { XAPI_ELEMS = 16 }; /* the tensor: 16 float32 */
static const double XAPI_GOAL_NS = 80;
static const char XAPI_FIGURE[] = "dlpack_xapi_roundtrip_ns";
static const char XAPI_BASELINE[] = "dlpack_c_roundtrip";

/* The figure, as bench_util.h's bench_figure writes one, but with met = value <= goal
 * beside a baseline (bench_figure bounds the ratio when there is a baseline: here the
 * goal is the absolute 80 ns, the baseline says what the Python layer adds), and with
 * value, baseline_value, ratio and met null when value is NAN (nothing measured). */
static void xapi_figure(double value, double base, double ratio) {
  const char *path = getenv("BENCH_JSON");
  FILE *f = path ? fopen(path, "a") : NULL;
  if (!f) return;
  fprintf(f, "{\"name\": \"%s\", ", XAPI_FIGURE);
  if (isnan(value))
    fprintf(f, "\"value\": null, \"unit\": \"ns/round trip\", \"baseline_name\": \"%s\", "
               "\"baseline_value\": null, \"ratio\": null, \"goal\": \"<= %g\", "
               "\"met\": null}\n",
            XAPI_BASELINE, XAPI_GOAL_NS);
  else
    fprintf(f, "\"value\": %.6g, \"unit\": \"ns/round trip\", \"baseline_name\": \"%s\", "
               "\"baseline_value\": %.6g, \"ratio\": %.4f, \"goal\": \"<= %g\", "
               "\"met\": %s}\n",
            value, XAPI_BASELINE, base, ratio, XAPI_GOAL_NS,
            value <= XAPI_GOAL_NS ? "true" : "false");
  fclose(f);
}

#ifdef BENCH_XAPI_MISSING

int main(int argc, char **argv) {
  printf("bench xapi: not built with Python: missing %s; %s is null\n", BENCH_XAPI_MISSING,
         XAPI_FIGURE);
  if (argc > 1 && !strcmp(argv[1], "--count-instructions")) return 77;
  xapi_figure(NAN, 0, 0);
  return 0;
}

#else

/* Prints the Python exception that what left set, and exits 1. */
static _Noreturn void xapi_fail(const char *what) {
  fprintf(stderr, "bench-xapi: %s failed\n", what);
  if (PyErr_Occurred()) PyErr_Print();
  exit(1);
}

/* BUILD/python of the BUILD/bin this program runs from, where the Makefile puts the
 * extension (python.mk): the program runs the extension of its own build. */
static void python_dir(char *out, size_t size) {
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) {
    fprintf(stderr, "bench-xapi: cannot read /proc/self/exe\n");
    exit(1);
  }
  exe[len] = '\0';
  for (int up = 0; up < 2; up++) { /* .../BUILD/bin/bench-xapi -> .../BUILD */
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
  }
  if ((size_t)snprintf(out, size, "%s/python", exe) >= size) {
    fprintf(stderr, "bench-xapi: path too long: %s\n", exe);
    exit(1);
  }
}

/* The interpreter, isolated (no PYTHON* variable, no user site, no site import: what the
 * benchmark runs must not depend on the caller's environment), with its home set to the
 * prefix it was built with (BENCH_XAPI_HOME, bench/python_embed.py): left alone, the
 * prefix would be searched from this program's path and the PATH, and could find
 * another Python's standard library. Then sys.path[0] = BUILD/python. */
static void embed_start(void) {
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.site_import = 0;
  PyStatus st = PyConfig_SetBytesString(&config, &config.home, BENCH_XAPI_HOME);
  if (!PyStatus_Exception(st))
    st = PyConfig_SetBytesString(&config, &config.program_name, "bench-xapi");
  if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st)) Py_ExitStatusException(st);
  char dir[PATH_MAX + 16];
  python_dir(dir, sizeof dir);
  PyObject *path = PySys_GetObject("path"); /* borrowed */
  PyObject *entry = PyUnicode_DecodeFSDefault(dir);
  if (!path || !entry || PyList_Insert(path, 0, entry) < 0) xapi_fail("sys.path.insert");
  Py_DECREF(entry);
}

/* tsmref.live_bytes(): what the root manager's tensors and the unreleased exports hold. */
static long long live_bytes(PyObject *mod) {
  PyObject *v = PyObject_CallMethod(mod, "live_bytes", NULL);
  long long bytes = v ? PyLong_AsLongLong(v) : -1;
  Py_XDECREF(v);
  if (bytes < 0) xapi_fail("tsmref.live_bytes()");
  return bytes;
}

/* tsmref.tensor([0.0, 1.0, ..., 15.0]): a float32 tensor of the root manager. */
static PyObject *make_tensor(PyObject *mod) {
  PyObject *vals = PyList_New(XAPI_ELEMS);
  if (!vals) xapi_fail("PyList_New");
  for (int i = 0; i < XAPI_ELEMS; i++) {
    PyObject *x = PyFloat_FromDouble(i);
    if (!x) xapi_fail("PyFloat_FromDouble");
    PyList_SET_ITEM(vals, i, x); /* steals x */
  }
  PyObject *t = PyObject_CallMethod(mod, "tensor", "(O)", vals);
  Py_DECREF(vals);
  if (!t) xapi_fail("tsmref.tensor");
  return t;
}

/* The table the type publishes (DLP.XAPI.ATTR.1), looked up on the type as dlpack.h
 * tells a consumer to, and its header checked (DLP.XAPI.HEADER.2): major 1 is the ABI
 * this program is compiled against; minor >= 3, the first whose table is a capsule
 * with these five functions (a later minor only appends). The capsule holds a static
 * table (DLP.XAPI.LIFE.1), so the pointer outlives the reference dropped here. */
static const DLPackExchangeAPI *exchange_table(PyObject *type) {
  PyObject *cap = PyObject_GetAttrString(type, "__dlpack_c_exchange_api__");
  if (!cap) xapi_fail("tsmref.Tensor.__dlpack_c_exchange_api__");
  const DLPackExchangeAPI *api = PyCapsule_GetPointer(cap, "dlpack_exchange_api");
  Py_DECREF(cap);
  if (!api) xapi_fail("PyCapsule_GetPointer(\"dlpack_exchange_api\")");
  if (api->header.version.major != 1 || api->header.version.minor < 3) {
    fprintf(stderr, "bench-xapi: the table is DLPack %u.%u; this program reads 1.3 and later 1.x\n",
            (unsigned)api->header.version.major, (unsigned)api->header.version.minor);
    exit(1);
  }
  if (!api->managed_tensor_allocator || !api->managed_tensor_from_py_object_no_sync ||
      !api->managed_tensor_to_py_object_no_sync || !api->current_work_stream) {
    fprintf(stderr, "bench-xapi: a function the table must have is NULL (DLP.XAPI.FUNCS.1)\n");
    exit(1);
  }
  return api;
}

/* One round trip of the loop below; the new object in *out (a new reference). */
static inline void xapi_round_trip(const DLPackExchangeAPI *api, PyObject *obj, void **out) {
  DLManagedTensorVersioned *mt;
  if (api->managed_tensor_from_py_object_no_sync(obj, &mt) != 0)
    xapi_fail("managed_tensor_from_py_object_no_sync");
  if (api->managed_tensor_to_py_object_no_sync(mt, out) != 0) {
    mt->deleter(mt); /* still ours: the call takes the tensor on success only */
    xapi_fail("managed_tensor_to_py_object_no_sync");
  }
}

/* The export of the first round trip describes the 16 float32 (0, 1, ..., 15) on the
 * CPU; exits otherwise. */
static void check_export(const DLManagedTensorVersioned *mt) {
  const DLTensor *dl = &mt->dl_tensor;
  int ok = mt->version.major == 1 && dl->ndim == 1 && dl->shape[0] == XAPI_ELEMS &&
           dl->dtype.code == kDLFloat && dl->dtype.bits == 32 && dl->dtype.lanes == 1 &&
           dl->device.device_type == kDLCPU;
  if (!ok || ((const float *)dl->data)[XAPI_ELEMS - 1] != XAPI_ELEMS - 1) {
    fprintf(stderr, "bench-xapi: the export does not describe 16 float32 on the CPU\n");
    exit(1);
  }
}

/* The first round trip, checked: the export (check_export), the new object a
 * tsmref.Tensor whose DLTensor aliases the same elements (DLP.MGR.3), and the stream of
 * the CPU NULL (DLP.XAPI.STREAM.1). */
static void check_round_trip(const DLPackExchangeAPI *api, PyObject *obj, PyObject *type) {
  DLManagedTensorVersioned *mt;
  if (api->managed_tensor_from_py_object_no_sync(obj, &mt) != 0)
    xapi_fail("managed_tensor_from_py_object_no_sync");
  check_export(mt);
  void *data = mt->dl_tensor.data, *out;
  if (api->managed_tensor_to_py_object_no_sync(mt, &out) != 0) {
    mt->deleter(mt);
    xapi_fail("managed_tensor_to_py_object_no_sync");
  }
  DLTensor view;
  if (Py_TYPE((PyObject *)out) != (PyTypeObject *)type ||
      !api->dltensor_from_py_object_no_sync ||
      api->dltensor_from_py_object_no_sync(out, &view) != 0 || view.data != data) {
    fprintf(stderr, "bench-xapi: the new object is not a tsmref.Tensor of the same elements\n");
    exit(1);
  }
  Py_DECREF((PyObject *)out);
  void *stream = &stream;
  if (api->current_work_stream(kDLCPU, 0, &stream) != 0 || stream != NULL) {
    fprintf(stderr, "bench-xapi: current_work_stream(kDLCPU) is not NULL\n");
    exit(1);
  }
}

static double xapi_loop(const DLPackExchangeAPI *api, PyObject *obj, long n) {
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    void *out;
    xapi_round_trip(api, obj, &out);
    Py_DECREF((PyObject *)out);
  }
  return (now_ns() - t0) / (double)n;
}

/* The counted loops (bench_util.h): the timed loops themselves. */
static BENCH_IR_FN void bench_ir_xapi_round_trip(const DLPackExchangeAPI *api, PyObject *obj,
                                                 long n) {
  xapi_loop(api, obj, n);
}
static BENCH_IR_FN void bench_ir_c_round_trip(tsmr_ctx *ctx, tsmr_handle m, tsmr_handle src,
                                              long n) {
  bench_dlpack_round_trip(ctx, m, src, n);
}

/* What the loops run on: the Python side (the module, tsmref.Tensor, the tensor and its
 * type's table) and the baseline's context, root manager and tensor. */
struct xapi_bench {
  PyObject *mod, *type, *obj;
  const DLPackExchangeAPI *api;
  tsmr_ctx *ctx;
  tsmr_handle root, src;
};

static void bench_open(struct xapi_bench *b) {
  embed_start();
  b->mod = PyImport_ImportModule("tsmref");
  if (!b->mod) xapi_fail("import tsmref");
  b->type = PyObject_GetAttrString(b->mod, "Tensor");
  if (!b->type || !PyType_Check(b->type)) xapi_fail("tsmref.Tensor");
  b->obj = make_tensor(b->mod);
  b->api = exchange_table(b->type);
  check_round_trip(b->api, b->obj, b->type);
  /* The baseline's tensor: the same shape, in a context of its own (the extension's is
   * not public), of the same libtsmref.so the extension loaded. */
  static const struct tsmr_tensor_desc desc = {TSMR_F32, 1, {XAPI_ELEMS}};
  BENCH_CHECK(tsmr_ctx_open("cpu", &b->ctx));
  BENCH_CHECK(tsmr_mgr_root(b->ctx, &b->root));
  BENCH_CHECK(tsmr_tensor_new(b->ctx, b->root, &desc, NULL, &b->src));
}

/* RETURN the exit status: 1 when Python cannot be finalized. */
static int bench_close(struct xapi_bench *b) {
  tsmr_ctx_close(b->ctx);
  Py_DECREF(b->obj);
  Py_DECREF(b->type);
  Py_DECREF(b->mod);
  if (Py_FinalizeEx() < 0) {
    fprintf(stderr, "bench-xapi: Py_FinalizeEx failed\n");
    return 1;
  }
  return 0;
}

/* PAIRS pairs of rounds of n / 5 + 1 round trips; prints and records the figure. */
static void run_pairs(struct xapi_bench *b, long n) {
  struct bench_pairs p;
  for (int r = 0; r < PAIRS; r++) {
    p.a[r] = xapi_loop(b->api, b->obj, n / 5 + 1);
    p.b[r] = bench_dlpack_round_trip(b->ctx, b->root, b->src, n / 5 + 1);
  }
  double x = bench_median(p.a), c = bench_median(p.b), ratio = bench_median_ratio(&p);
  printf("bench xapi: DLPack %u.%u exchange table of tsmref.Tensor, %d f32 on cpu, "
         "%ld round trips a round, median of %d pairs\n",
         (unsigned)b->api->header.version.major, (unsigned)b->api->header.version.minor,
         XAPI_ELEMS, n / 5 + 1, PAIRS);
  printf("  from_py_object + to_py_object + Py_DECREF : %8.2f ns/round trip  (goal <= %g: %s)\n",
         x, XAPI_GOAL_NS, x <= XAPI_GOAL_NS ? "met" : "NOT met");
  printf("  C: export + import + release (baseline)   : %8.2f ns/round trip\n", c);
  printf("  ratio (median of the pairs)               : %8.2f x\n", ratio);
  xapi_figure(x, c, ratio);
}

/* Both loops, timed in pairs or (count) counted once each, after a warm-up of the free
 * lists of both sides. RETURN 0, or 1 when a round trip left bytes held: every round
 * trip's release must have run its export's deleter. */
static int bench_run(struct xapi_bench *b, int count, long n) {
  long long live0 = live_bytes(b->mod);
  xapi_loop(b->api, b->obj, n / 10 + 1);
  bench_dlpack_round_trip(b->ctx, b->root, b->src, n / 10 + 1);
  if (count) {
    bench_ir_xapi_round_trip(b->api, b->obj, n);
    bench_ir_c_round_trip(b->ctx, b->root, b->src, n);
    printf("bench-xapi: counted loops of %ld round trips each (bench_ir_*)\n", n);
  } else {
    run_pairs(b, n);
  }
  long long live1 = live_bytes(b->mod);
  uint64_t c_live = 0;
  BENCH_CHECK(tsmr_live_bytes(b->ctx, &c_live));
  if (live1 != live0 || c_live != XAPI_ELEMS * sizeof(float)) {
    fprintf(stderr, "bench-xapi: bookkeeping off (live bytes %lld then %lld; baseline %llu)\n",
            live0, live1, (unsigned long long)c_live);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  long counted = bench_count_mode(argc, argv, "bench-xapi");
  if (counted < 0) return 2;
  long n = counted ? counted : argc > 1 ? atol(argv[1]) : 0;
  if (n <= 0) n = 1000000;
  struct xapi_bench b;
  bench_open(&b);
  int rc = bench_run(&b, counted > 0, n);
  return bench_close(&b) || rc;
}

#endif
