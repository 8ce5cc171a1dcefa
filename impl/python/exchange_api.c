/*
 * impl/python/exchange_api.c: the reference's DLPack 1.3 C exchange API
 * (spec/dlpack.md, DLP.XAPI.*): the static DLPackExchangeAPI table that tsmref.Tensor
 * publishes as `__dlpack_c_exchange_api__`, its five functions over libtsmref's public
 * API, and the consumer side tsmref.from_dlpack uses on a type that publishes a table.
 *
 * Errors. The allocator may run without the GIL (tvm-ffi installs it as the allocator
 * of the C++ code it calls): it touches no Python state and reports through SetError
 * only (DLP.XAPI.ALLOC.2). The other four run with the GIL held and set a Python
 * exception when they return -1. None of them aborts.
 *
 * Ownership. managed_tensor_to_py_object_no_sync takes the caller's tensor on success
 * only (DLP.XAPI.TO.1, TO.2), so it imports with tsmr_dlpack_try_import, which takes
 * the tensor on success only, not tsmr_dlpack_import, which consumes it whatever it
 * returns (DLP.IMPORT.2). The caller's tensor itself goes to the import: one of
 * libtsmref's own exports (from_py_object's) shares the exported storage again, a
 * foreign one is aliased with its deleter at the release or copied.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlpack/dlpack.h> /* DLPack 1.x header bundled with apache-tvm-ffi (deps.mk) */
#include <stdio.h>
#include <string.h>

#include "tsmref.h"
#include "tsmref_py.h"

_Static_assert(DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION >= 3,
               "the exchange table as a capsule is DLPack 1.3's (DLP.XAPI.ATTR.1)");

/* The capsule's name (statically allocated: the capsule keeps the pointer). */
static const char XAPI_CAPSULE_NAME[] = "dlpack_exchange_api";
static const char XAPI_ATTR[] = "__dlpack_c_exchange_api__";
/* XAPI_ATTR interned, made by xapi_publish; owned by the module for the process. */
static PyObject *g_str_xapi_attr;

/* ---- managed_tensor_allocator (DLP.XAPI.ALLOC.1, 2, 5) ---------------------------- */

typedef void (*xapi_set_error)(void *error_ctx, const char *kind, const char *message);

/* RETURN -1 after *out = NULL (DLP.XAPI.ALLOC.5) and one SetError call (DLP.XAPI.ALLOC.2). */
static int alloc_fail(DLManagedTensorVersioned **out, void *error_ctx, xapi_set_error set_error,
                      const char *kind, const char *message) {
  if (out) *out = NULL;
  if (set_error) set_error(error_ctx, kind, message);
  return -1;
}

/* The tsmref dtype of a DLPack dtype, 0 for one tsmref has not. */
static int tsmr_dtype_of(DLDataType t) {
  if (t.lanes != 1 || t.bits != 32) return 0;
  if (t.code == kDLFloat) return TSMR_F32;
  if (t.code == kDLInt) return TSMR_I32;
  return 0;
}

/* A tensor of the root manager made, exported and released at once: the export holds
 * the storage (DLP.EXPORT.3), so the caller's managed tensor is its only owner and it
 * counts in live bytes until the deleter runs. Zero-filled. */
static int xapi_allocate(DLTensor *prototype, DLManagedTensorVersioned **out, void *error_ctx,
                         xapi_set_error set_error) {
  if (!prototype || !out)
    return alloc_fail(out, error_ctx, set_error, "ValueError", "NULL prototype or out");
  struct tsmr_tensor_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = tsmr_dtype_of(prototype->dtype);
  if (!d.dtype)
    return alloc_fail(out, error_ctx, set_error, "BufferError",
                      "tsmref allocates float32 and int32 (lanes 1) only");
  if ((int)prototype->device.device_type != g_dev_type ||
      prototype->device.device_id != g_dev_id)
    return alloc_fail(out, error_ctx, set_error, "BufferError",
                      "tsmref allocates on its context's device only");
  if (prototype->ndim < 0 || prototype->ndim > TSMR_MAX_DIMS ||
      (prototype->ndim > 0 && !prototype->shape))
    return alloc_fail(out, error_ctx, set_error, "BufferError",
                      "tsmref allocates 0 to 8 dimensions, with a shape");
  d.ndim = prototype->ndim;
  for (int i = 0; i < d.ndim; i++) d.shape[i] = prototype->shape[i];
  tsmr_handle h;
  void *managed = NULL;
  int rc = tsmr_tensor_new(g_ctx, g_root, &d, NULL, &h);
  if (rc == 0) {
    rc = tsmr_dlpack_export(g_ctx, h, TSMR_DLPACK_VERSIONED, 0, &managed);
    tsmr_res_release(g_ctx, h);
  }
  if (rc) {
    char message[160];
    snprintf(message, sizeof message, "tsmref cannot allocate this tensor: %s (%s)",
             tsmr_strerror(rc), tsmr_err_name(rc));
    return alloc_fail(out, error_ctx, set_error, rc == TSMR_ENOMEM ? "MemoryError" : "BufferError",
                      message);
  }
  *out = managed;
  return 0;
}

/* ---- managed_tensor_from_py_object_no_sync (DLP.XAPI.FROM.1) ---------------------- */

/* The live tsmref.Tensor that py_object is; NULL with TypeError (another type: the
 * caller's error) or BufferError (released: nothing to describe). */
static TensorObject *live_tensor_of(void *py_object) {
  PyObject *obj = py_object;
  if (!obj || Py_TYPE(obj) != &Tensor_Type) {
    PyErr_Format(PyExc_TypeError, "tsmref's exchange table takes a tsmref.Tensor, not %s",
                 obj ? Py_TYPE(obj)->tp_name : "NULL");
    return NULL;
  }
  TensorObject *t = (TensorObject *)obj;
  if (t->h == TSMR_NONE) {
    PyErr_SetString(PyExc_BufferError, "the tensor was released: nothing to describe");
    return NULL;
  }
  return t;
}

/* What __dlpack__(max_version=(1, minor)) holds: shared storage, flags 0. */
static int xapi_from_py_object(void *py_object, DLManagedTensorVersioned **out) {
  TensorObject *t = live_tensor_of(py_object);
  if (!t) return -1;
  if (!out) {
    PyErr_SetString(PyExc_ValueError, "NULL out");
    return -1;
  }
  void *managed;
  int rc = tsmr_dlpack_export(g_ctx, t->h, TSMR_DLPACK_VERSIONED, 0, &managed);
  if (rc) {
    raise_tsmr(PyExc_BufferError, "tsmr_dlpack_export", rc);
    return -1;
  }
  *out = managed;
  return 0;
}

/* ---- managed_tensor_to_py_object_no_sync (DLP.XAPI.TO.1, DLP.XAPI.TO.2) ------------- */

/* A tsmref.Tensor of tensor's elements (an alias, DLP.MGR.3), or -1 with BufferError
 * and tensor untouched (tsmr_dlpack_try_import: a refusal takes nothing). The Python
 * object is made first: once the import succeeded nothing can fail, so a failure never
 * leaves the caller's tensor half ours. */
static int xapi_to_py_object(DLManagedTensorVersioned *tensor, void **out_py_object) {
  if (!tensor || !out_py_object) {
    PyErr_SetString(PyExc_ValueError, "NULL tensor or out");
    return -1;
  }
  if (tensor->version.major != 1) { /* DLP.IMPORT.1: nothing else is read */
    PyErr_Format(PyExc_BufferError, "DLPack major version %u: tsmref reads major 1",
                 (unsigned)tensor->version.major);
    return -1;
  }
  TensorObject *t = tensor_alloc();
  if (!t) return -1;
  tsmr_handle h;
  int rc = tsmr_dlpack_try_import(g_ctx, tensor, TSMR_DLPACK_VERSIONED, g_root, &h);
  if (rc) { /* the caller keeps tensor (DLP.XAPI.TO.2) */
    Py_DECREF(t);
    raise_tsmr(PyExc_BufferError, "tsmr_dlpack_try_import", rc);
    return -1;
  }
  t->h = h;
  *out_py_object = t;
  return 0;
}

/* ---- dltensor_from_py_object_no_sync (DLP.XAPI.VIEW.1) ----------------------------- */

/* The DLTensor of the tensor's view export, made once: its shape and strides are the
 * export's, valid until xapi_view_drop. Shares the storage, so it adds no live bytes. */
static int xapi_dltensor_from_py_object(void *py_object, DLTensor *out) {
  TensorObject *t = live_tensor_of(py_object);
  if (!t) return -1;
  if (!out) {
    PyErr_SetString(PyExc_ValueError, "NULL out");
    return -1;
  }
  if (!t->view) {
    void *managed;
    int rc = tsmr_dlpack_export(g_ctx, t->h, TSMR_DLPACK_VERSIONED, 0, &managed);
    if (rc) {
      raise_tsmr(PyExc_BufferError, "tsmr_dlpack_export", rc);
      return -1;
    }
    t->view = managed;
  }
  *out = t->view->dl_tensor;
  return 0;
}

void xapi_view_drop(TensorObject *self) {
  DLManagedTensorVersioned *view = self->view;
  self->view = NULL;
  if (view) view->deleter(view);
}

/* ---- current_work_stream (DLP.XAPI.STREAM.1) --------------------------------------- */

/* tsmref runs all its work on the CPU, synchronously: no device has a stream of it. */
static int xapi_current_work_stream(DLDeviceType device_type, int32_t device_id,
                                    void **out_current_stream) {
  (void)device_type;
  (void)device_id;
  if (!out_current_stream) {
    PyErr_SetString(PyExc_ValueError, "NULL out_current_stream");
    return -1;
  }
  *out_current_stream = NULL;
  return 0;
}

/* ---- the table (DLP.XAPI.ATTR.1, LIFE.1, HEADER.1, FUNCS.1) ------------------------- */

/* Static: valid and unchanged for the life of the process (DLP.XAPI.LIFE.1). */
static const DLPackExchangeAPI g_xapi = {
    .header = {.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION}, .prev_api = NULL},
    .managed_tensor_allocator = xapi_allocate,
    .managed_tensor_from_py_object_no_sync = xapi_from_py_object,
    .managed_tensor_to_py_object_no_sync = xapi_to_py_object,
    .dltensor_from_py_object_no_sync = xapi_dltensor_from_py_object,
    .current_work_stream = xapi_current_work_stream,
};

/* A static type's dict may be written from C before anyone reads it (PyType_Modified
 * drops the attribute caches). The capsule has no destructor: the table is static. */
int xapi_publish(void) {
  PyObject *dict = Tensor_Type.tp_dict;
  if (!g_str_xapi_attr && !(g_str_xapi_attr = PyUnicode_InternFromString(XAPI_ATTR))) return -1;
  if (PyDict_GetItemWithError(dict, g_str_xapi_attr)) return 0; /* an earlier init's */
  if (PyErr_Occurred()) return -1;
  PyObject *cap = PyCapsule_New((void *)&g_xapi, XAPI_CAPSULE_NAME, NULL);
  if (!cap) return -1;
  int rc = PyDict_SetItem(dict, g_str_xapi_attr, cap);
  Py_DECREF(cap);
  if (rc == 0) PyType_Modified(&Tensor_Type);
  return rc;
}

/* ---- the consumer side (DLP.XAPI.HEADER.2, DLP.XAPI.CONSUME.1) --------------------- */

/* The longest prev_api chain walked: a cycle must not hang the consumer. */
enum { XAPI_CHAIN_MAX = 16 };

/* The table of major 1 that obj's type publishes as a capsule, reached from the one it
 * publishes through prev_api; NULL when there is none. The attribute is looked up on
 * the type's MRO as attribute access does, through CPython's type attribute cache and
 * without raising AttributeError for the types that publish nothing (most objects
 * from_dlpack is given: raising and clearing it cost more than the exchange itself);
 * _PyType_Lookup is declared in cpython/object.h. */
static const DLPackExchangeAPI *table_of(PyObject *obj) {
  PyObject *cap = _PyType_Lookup(Py_TYPE(obj), g_str_xapi_attr); /* borrowed */
  /* An int holding the address is DLPack 1.2's convention, not read (DLP.XAPI.ATTR.1). */
  if (!cap || !PyCapsule_IsValid(cap, XAPI_CAPSULE_NAME)) return NULL;
  const DLPackExchangeAPIHeader *h = PyCapsule_GetPointer(cap, XAPI_CAPSULE_NAME);
  for (int i = 0; h && h->version.major > 1 && i < XAPI_CHAIN_MAX; i++) h = h->prev_api;
  return h && h->version.major == 1 ? (const DLPackExchangeAPI *)h : NULL;
}

int xapi_import(PyObject *obj, PyObject **out) {
  const DLPackExchangeAPI *api = table_of(obj);
  if (!api || !api->managed_tensor_from_py_object_no_sync) return 1;
  DLManagedTensorVersioned *managed = NULL;
  if (api->managed_tensor_from_py_object_no_sync(obj, &managed) != 0) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_SystemError,
                      "managed_tensor_from_py_object_no_sync failed without an exception");
    if (!PyErr_ExceptionMatches(PyExc_BufferError)) {
      *out = NULL;
      return 0;
    }
    PyErr_Clear(); /* the producer cannot describe it this way: try __dlpack__ */
    return 1;
  }
  /* Ours now, like a consumed capsule's: the import runs the deleter on every path. */
  tsmr_handle h;
  int rc = tsmr_dlpack_import(g_ctx, managed, TSMR_DLPACK_VERSIONED, g_root, &h);
  *out = rc ? raise_tsmr(PyExc_BufferError, "tsmr_dlpack_import", rc) : tensor_wrap(h);
  return 0;
}
