/*
 * impl/python/tsmref_py.h: what the two translation units of the `tsmref` CPython
 * extension share: tsmref_py.c (the module, tsmref.Tensor, the capsule protocol) and
 * exchange_api.c (the DLPack 1.3 C exchange API, spec/dlpack.md DLP.XAPI.*). Internal:
 * the extension is built with hidden visibility, so none of this is exported.
 * Include after <Python.h> and the DLPack 1.x header.
 */
#ifndef TSMREF_PY_H
#define TSMREF_PY_H

#include "tsmref.h"

/* A tsmref.Tensor. Owns its handle (released at dealloc or release()) and view. */
typedef struct {
  PyObject_HEAD
  tsmr_handle h; /* TSMR_NONE once released */
  PyObject *weakrefs;
  /* The export whose DLTensor dltensor_from_py_object_no_sync hands out (made on its
   * first call): its shape and strides stay where they are while the tensor lives
   * (DLP.XAPI.VIEW.1). Its deleter runs when the tensor is released or freed. */
  DLManagedTensorVersioned *view;
} TensorObject;

extern PyTypeObject Tensor_Type;

/* The process's one CPU context and its root manager, which holds every tensor. */
extern tsmr_ctx *g_ctx;
extern tsmr_handle g_root;
extern int g_dev_type, g_dev_id; /* the context's device as DLPack names it */

/* Sets exc "what: text (NAME)" for libtsmref's code rc. RETURN NULL. */
PyObject *raise_tsmr(PyObject *exc, const char *what, int rc);

/* A new tsmref.Tensor that does not hold a tensor yet (h is TSMR_NONE); NULL with the
 * error set. */
TensorObject *tensor_alloc(void);

/* The tensor h as a new tsmref.Tensor; on failure h is released (an import's deleter
 * runs, DLP.MGR.1) and NULL returned with the error set. */
PyObject *tensor_wrap(tsmr_handle h);

/* exchange_api.c. Sets Tensor_Type's `__dlpack_c_exchange_api__` (DLP.XAPI.ATTR.1);
 * call once, after PyType_Ready. RETURN 0, or -1 with the error set. */
int xapi_publish(void);

/* exchange_api.c. tsmref.from_dlpack's first try (DLP.XAPI.HEADER.2,
 * DLP.XAPI.CONSUME.1): obj through the exchange table of its type. RETURN 0 with *out
 * the new tensor, or NULL with the error set; 1 when obj is to be taken through
 * __dlpack__ instead (its type publishes no table of major 1, or the table's function
 * raised BufferError). */
int xapi_import(PyObject *obj, PyObject **out);

/* exchange_api.c. Runs the deleter of self's view, if any (DLP.XAPI.VIEW.1). */
void xapi_view_drop(TensorObject *self);

#endif /* TSMREF_PY_H */
