/*
 * impl/python/tsmref_py.c: the `tsmref` CPython extension, the reference
 * implementation's side of the DLPack Python capsule protocol (spec/dlpack.md,
 * DLP.PY.*). It wraps libtsmref (impl/include/tsmref.h): one context per process, on
 * the device $TSMREF_PY_DEVICE names (default "cpu"; "cuda:0", or "cuda-sim:0" with
 * $TSMREF_SIMULATE_CUDA set), tensors held by its root manager, exports and imports
 * through tsmr_dlpack_export / tsmr_dlpack_import.
 *
 *   tsmref.tensor(data, shape=None, dtype="float32") -> Tensor
 *       data: a (nested) list or tuple of numbers (float32 and int32), or a
 *       C-contiguous buffer of the elements (items of the dtype's size, or bytes) with
 *       `shape` given; dtype: numpy's name of any dtype of MGR.DTYPE.1
 *   Tensor.tolist(), .shape, .dtype, .nbytes, .release()
 *   Tensor.__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)
 *   Tensor.__dlpack_device__() -> (1, 0), or (kDLCUDA, N) on cuda:N (tsmref.device)
 *   Tensor.__dlpack_c_exchange_api__         (the DLPack 1.3 exchange table, a capsule)
 *   tsmref.from_dlpack(obj, /, *, copy=None, device=None) -> Tensor  (obj: has
 *       __dlpack__ or an exchange table on its type, or is a capsule; copy True or
 *       False, and device (the context's: "cpu" or (1, 0), "cuda:N" or (2, N)) as
 *       dl_device, are passed on to obj.__dlpack__, as the array API's from_dlpack does)
 *   tsmref.live_bytes() / tsmref.live_count() (leak probes: MGR.COUNT.4, DLP.EXPORT.3)
 *
 * The exchange table (DLP.XAPI.*) and from_dlpack's use of another type's table are
 * exchange_api.c's; tsmref_py.h is what the two files share.
 *
 * Capsules (python_spec.rst): named "dltensor" / "dltensor_versioned" (statically
 * allocated names); the destructor runs the deleter only while the capsule still
 * carries its unconsumed name (DLP.PY.DTOR.1). The consumer renames to used_* exactly
 * when it hands the pointer to tsmr_dlpack_import, which consumes it whatever it
 * returns (DLP.IMPORT.2), so no error path after the rename needs a deleter call.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlpack/dlpack.h> /* DLPack 1.x header bundled with apache-tvm-ffi (deps.mk) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tsmref.h"
#include "tsmref_py.h"

/* The DLPack slots of libtsmref (ABI 1.2). Declared here as well so that the module
 * states the contract it is written against; a header that disagrees fails to compile.
 * form: 0 = DLManagedTensor, 1 = DLManagedTensorVersioned. request: bit 0 copy,
 * bit 1 read-only. Import always consumes `managed`: on failure its deleter has run. */
TSMR_API int tsmr_dlpack_export(tsmr_ctx *ctx, tsmr_handle tensor, int form,
                                uint32_t request, void **out);
TSMR_API int tsmr_dlpack_import(tsmr_ctx *ctx, void *managed, int form, tsmr_handle mgr,
                                tsmr_handle *out);

enum { FORM_LEGACY = 0, FORM_VERSIONED = 1 };
enum { REQ_COPY = 1u << 0, REQ_READ_ONLY = 1u << 1 };

/* Statically allocated capsule names (python_spec.rst). */
static const char NAME_LEGACY[] = "dltensor";
static const char NAME_VERSIONED[] = "dltensor_versioned";
static const char NAME_USED_LEGACY[] = "used_dltensor";
static const char NAME_USED_VERSIONED[] = "used_dltensor_versioned";

tsmr_ctx *g_ctx;
tsmr_handle g_root;
/* The context's device as DLPack names it: (kDLCPU, 0), or (kDLCUDA, N) on cuda:N. */
int g_dev_type = kDLCPU, g_dev_id = 0;

/* Python objects every from_dlpack and __dlpack__ call needs, made once at import
 * (a capsule round trip spent most of its time building and hashing them anew):
 * interned names, and the (1, DLPACK_MINOR) version a consumer asks for. Owned by
 * the module for the life of the process. */
static PyObject *g_str_dlpack, *g_kwnames_max_version, *g_max_version, *g_own_device;
static PyObject *g_str_stream, *g_str_max_version, *g_str_dl_device, *g_str_copy;

/* ---- Tensor ---------------------------------------------------------------------- */

PyObject *raise_tsmr(PyObject *exc, const char *what, int rc) {
  PyErr_Format(exc, "%s: %s (%s)", what, tsmr_strerror(rc), tsmr_err_name(rc));
  return NULL;
}

/* One Tensor object kept from its deallocation for the next allocation, as CPython
 * keeps its floats and tuples: a tensor made and dropped per call (the exchange table's
 * round trip, a capsule's import) then costs no trip through the object allocator.
 * Under the GIL only (a build without one keeps none); the last one is not freed at
 * exit, like the module's context. */
#ifndef Py_GIL_DISABLED
static TensorObject *g_spare;
#endif

TensorObject *tensor_alloc(void) {
  TensorObject *t;
#ifndef Py_GIL_DISABLED
  if ((t = g_spare)) {
    g_spare = NULL;
    (void)PyObject_Init((PyObject *)t, &Tensor_Type); /* its type and one reference */
  } else
#endif
    t = PyObject_New(TensorObject, &Tensor_Type);
  if (!t) return NULL;
  t->h = TSMR_NONE;
  t->weakrefs = NULL;
  t->view = NULL;
  return t;
}

PyObject *tensor_wrap(tsmr_handle h) {
  TensorObject *t = tensor_alloc();
  if (!t) {
    tsmr_res_release(g_ctx, h); /* runs an import's deleter (DLP.MGR.1) */
    return NULL;
  }
  t->h = h;
  return (PyObject *)t;
}

/* Releases the tensor and the view that shares its storage (live bytes drop now). */
static void tensor_release(TensorObject *self) {
  xapi_view_drop(self);
  if (self->h != TSMR_NONE) tsmr_res_release(g_ctx, self->h);
  self->h = TSMR_NONE;
}

static void Tensor_dealloc(TensorObject *self) {
  if (self->weakrefs) PyObject_ClearWeakRefs((PyObject *)self);
  tensor_release(self);
#ifndef Py_GIL_DISABLED
  if (!g_spare) { /* Tensor_Type has no subclasses: every one is this size */
    g_spare = self;
    return;
  }
#endif
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static int tensor_live(TensorObject *self) {
  if (self->h == TSMR_NONE) {
    PyErr_SetString(PyExc_ValueError, "tensor was released");
    return 0;
  }
  return 1;
}

static int get_desc(TensorObject *self, struct tsmr_tensor_desc *d) {
  if (!tensor_live(self)) return -1;
  int rc = tsmr_tensor_desc(g_ctx, self->h, d);
  if (rc) {
    raise_tsmr(PyExc_RuntimeError, "tsmr_tensor_desc", rc);
    return -1;
  }
  return 0;
}

/* The dtypes a tensor can have (one imported from another framework: any of
 * enum tsmr_dtype), by numpy's names, and their element sizes. */
static const struct {
  int dtype;
  const char *name;
  size_t size;
} dtype_table[] = {{TSMR_F32, "float32", 4}, {TSMR_I32, "int32", 4},   {TSMR_F64, "float64", 8},
                   {TSMR_F16, "float16", 2}, {TSMR_BF16, "bfloat16", 2}, {TSMR_I8, "int8", 1},
                   {TSMR_I16, "int16", 2},   {TSMR_I64, "int64", 8},   {TSMR_U8, "uint8", 1},
                   {TSMR_U16, "uint16", 2},  {TSMR_U32, "uint32", 4},  {TSMR_U64, "uint64", 8},
                   {TSMR_BOOL, "bool", 1}};

static size_t dtype_index(int dtype) {
  size_t i = 0;
  while (i + 1 < sizeof dtype_table / sizeof dtype_table[0] && dtype_table[i].dtype != dtype) i++;
  return i;
}

static int64_t desc_count(const struct tsmr_tensor_desc *d) {
  int64_t n = 1;
  for (int i = 0; i < d->ndim; i++) n *= d->shape[i];
  return n;
}

static PyObject *Tensor_get_shape(TensorObject *self, void *closure) {
  (void)closure;
  struct tsmr_tensor_desc d;
  if (get_desc(self, &d)) return NULL;
  PyObject *t = PyTuple_New(d.ndim);
  if (!t) return NULL;
  for (int i = 0; i < d.ndim; i++) {
    PyObject *v = PyLong_FromLongLong((long long)d.shape[i]);
    if (!v) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, i, v);
  }
  return t;
}

static PyObject *Tensor_get_dtype(TensorObject *self, void *closure) {
  (void)closure;
  struct tsmr_tensor_desc d;
  if (get_desc(self, &d)) return NULL;
  return PyUnicode_FromString(dtype_table[dtype_index(d.dtype)].name);
}

static PyObject *Tensor_get_nbytes(TensorObject *self, void *closure) {
  (void)closure;
  struct tsmr_tensor_desc d;
  if (get_desc(self, &d)) return NULL;
  return PyLong_FromLongLong((long long)desc_count(&d) *
                             (long long)dtype_table[dtype_index(d.dtype)].size);
}

/* A bfloat16 is the upper half of a float32's bits. */
static PyObject *bf16_value(uint16_t bits) {
  uint32_t wide = (uint32_t)bits << 16;
  float f;
  memcpy(&f, &wide, sizeof f);
  return PyFloat_FromDouble(f);
}

/* Element i of a buffer of dtype, as a Python bool, int or float. */
static PyObject *element(int dtype, const void *buf, int64_t i) {
  const unsigned char *at =
      (const unsigned char *)buf + (size_t)i * dtype_table[dtype_index(dtype)].size;
  switch (dtype) {
#define ELEMENT(type, make)      \
  {                              \
    type x;                      \
    memcpy(&x, at, sizeof x);    \
    return make;                 \
  }
  case TSMR_F32: ELEMENT(float, PyFloat_FromDouble(x))
  case TSMR_F64: ELEMENT(double, PyFloat_FromDouble(x))
  case TSMR_F16: return PyFloat_FromDouble(PyFloat_Unpack2((const char *)at, 1));
  case TSMR_BF16: ELEMENT(uint16_t, bf16_value(x))
  case TSMR_BOOL: ELEMENT(uint8_t, PyBool_FromLong(x))
  case TSMR_I8: ELEMENT(int8_t, PyLong_FromLong(x))
  case TSMR_I16: ELEMENT(int16_t, PyLong_FromLong(x))
  case TSMR_I64: ELEMENT(int64_t, PyLong_FromLongLong(x))
  case TSMR_U8: ELEMENT(uint8_t, PyLong_FromLong(x))
  case TSMR_U16: ELEMENT(uint16_t, PyLong_FromLong(x))
  case TSMR_U32: ELEMENT(uint32_t, PyLong_FromUnsignedLong(x))
  case TSMR_U64: ELEMENT(uint64_t, PyLong_FromUnsignedLongLong(x))
  default: ELEMENT(int32_t, PyLong_FromLong(x))
#undef ELEMENT
  }
}

/* Nested list of dims [dim, ndim) starting at element *pos. */
static PyObject *build_list(const struct tsmr_tensor_desc *d, const void *buf, int dim,
                            int64_t *pos) {
  if (dim == d->ndim) {
    return element(d->dtype, buf, (*pos)++);
  }
  PyObject *l = PyList_New((Py_ssize_t)d->shape[dim]);
  if (!l) return NULL;
  for (int64_t k = 0; k < d->shape[dim]; k++) {
    PyObject *v = build_list(d, buf, dim + 1, pos);
    if (!v) {
      Py_DECREF(l);
      return NULL;
    }
    PyList_SET_ITEM(l, (Py_ssize_t)k, v);
  }
  return l;
}

static PyObject *Tensor_tolist(TensorObject *self, PyObject *noargs) {
  (void)noargs;
  struct tsmr_tensor_desc d;
  if (get_desc(self, &d)) return NULL;
  size_t nbytes = (size_t)desc_count(&d) * dtype_table[dtype_index(d.dtype)].size;
  void *buf = PyMem_Malloc(nbytes ? nbytes : 1);
  if (!buf) return PyErr_NoMemory();
  int rc = tsmr_tensor_read(g_ctx, self->h, buf, nbytes);
  if (rc) {
    PyMem_Free(buf);
    return raise_tsmr(PyExc_RuntimeError, "tsmr_tensor_read", rc);
  }
  int64_t pos = 0;
  PyObject *l = build_list(&d, buf, 0, &pos);
  PyMem_Free(buf);
  return l;
}

static PyObject *Tensor_release(TensorObject *self, PyObject *noargs) {
  (void)noargs;
  tensor_release(self);
  Py_RETURN_NONE;
}

/* ---- Producer: __dlpack__ / __dlpack_device__ ----------------------------------- */

/* Capsule destructors (python_spec.rst's reference destructor, DLP.PY.DTOR.1): the
 * deleter runs only for a capsule that still has its unconsumed name. A consumed
 * capsule (used_*) or one renamed to anything else is left alone. */
static void capsule_destructor(PyObject *cap, const char *unconsumed, int form) {
  const char *name = PyCapsule_GetName(cap);
  if (!name || strcmp(name, unconsumed) != 0) {
    if (!name) PyErr_Clear();
    return;
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  void *p = PyCapsule_GetPointer(cap, name);
  if (!p) {
    PyErr_WriteUnraisable(cap);
  } else if (form == FORM_VERSIONED) {
    DLManagedTensorVersioned *m = p;
    if (m->deleter) m->deleter(m);
  } else {
    DLManagedTensor *m = p;
    if (m->deleter) m->deleter(m);
  }
  PyErr_Restore(type, value, tb);
}

static void capsule_destructor_legacy(PyObject *cap) {
  capsule_destructor(cap, NAME_LEGACY, FORM_LEGACY);
}

static void capsule_destructor_versioned(PyObject *cap) {
  capsule_destructor(cap, NAME_VERSIONED, FORM_VERSIONED);
}

static void run_deleter(void *p, int form) {
  if (form == FORM_VERSIONED) {
    DLManagedTensorVersioned *m = p;
    if (m->deleter) m->deleter(m);
  } else {
    DLManagedTensor *m = p;
    if (m->deleter) m->deleter(m);
  }
}

/* A pair of ints (major, minor) or (device_type, device_id) -> *a, *b; -1 with
 * TypeError (the message what) when o is not a 2-tuple, or with the int's error. */
static int parse_pair(PyObject *o, const char *what, long *a, long *b) {
  if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 2) {
    PyErr_SetString(PyExc_TypeError, what);
    return -1;
  }
  *a = PyLong_AsLong(PyTuple_GET_ITEM(o, 0));
  if (*a == -1 && PyErr_Occurred()) return -1;
  *b = PyLong_AsLong(PyTuple_GET_ITEM(o, 1));
  if (*b == -1 && PyErr_Occurred()) return -1;
  return 0;
}

/* dl_device: None or the context's device; else -1 with the error set (BufferError: a
 * device it cannot export to, DLP.PY.ARGS.1). */
static int check_dl_device(PyObject *dl_device) {
  long dt, id;
  if (dl_device == Py_None) return 0;
  if (parse_pair(dl_device, "dl_device must be a tuple (device_type, device_id)", &dt, &id))
    return -1;
  if (dt != g_dev_type || id != g_dev_id) {
    PyErr_Format(PyExc_BufferError, "tsmref cannot export to device (%ld, %ld): only its "
                 "context's, (%d, %d)", dt, id, g_dev_type, g_dev_id);
    return -1;
  }
  return 0;
}

/* DLP.PY.STREAM.1. On the CPU only stream=None. On CUDA None or an int: -1 (no
 * synchronization asked), 1 (the legacy default stream), 2 (the per-thread default) or
 * a stream's address; 0 is refused ("disallowed due to its ambiguity"). The reference's
 * CUDA backend runs every kernel and copy on the legacy default stream, which a blocking
 * stream waits for, so it records nothing more. Errors of the argument, not
 * BufferError (array API: "Other errors ... incorrect arguments passed"). -1 with the
 * error set. */
static int check_stream(PyObject *stream) {
  if (stream == Py_None) return 0;
  if (g_dev_type == kDLCPU) {
    PyErr_SetString(PyExc_ValueError, "tsmref tensors are on CPU: only stream=None is accepted");
    return -1;
  }
  if (!PyLong_Check(stream)) {
    PyErr_SetString(PyExc_TypeError, "stream must be None or an int on CUDA");
    return -1;
  }
  long long v = PyLong_AsLongLong(stream);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (v == 0 || v < -1) {
    PyErr_Format(PyExc_ValueError, "stream %lld is not a CUDA stream of DLPack's "
                 "(None, -1, 1, 2 or a stream's address; 0 is ambiguous)", v);
    return -1;
  }
  return 0;
}

/* copy: None, false or true -> *request; -1 with the error set. */
static int parse_copy(PyObject *copy, int form, uint32_t *request) {
  *request = 0;
  if (copy == Py_None) return 0;
  int c = PyObject_IsTrue(copy);
  if (c < 0) return -1;
  if (!c) return 0; /* copy=False: an export on the context's own device needs no copy */
  /* A legacy capsule has no flags to say IS_COPIED (DLP.EXPORT.5). */
  if (form == FORM_LEGACY) {
    PyErr_SetString(PyExc_BufferError,
                    "copy=True needs a versioned capsule: pass max_version >= (1, 0)");
    return -1;
  }
  *request |= REQ_COPY;
  return 0;
}

/* The keyword-only arguments of __dlpack__ (vectorcall: kwnames names the last
 * values); every slot starts as None. -1 with TypeError, as PyArg would raise. */
static int parse_dlpack_kwargs(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                               PyObject **slot[4]) {
  static PyObject **names[4] = {&g_str_stream, &g_str_max_version, &g_str_dl_device,
                                &g_str_copy};
  if (nargs > 0) {
    PyErr_SetString(PyExc_TypeError, "__dlpack__() takes no positional arguments");
    return -1;
  }
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nk; i++) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, i);
    int k = 0;
    while (k < 4 && key != *names[k] && PyUnicode_Compare(key, *names[k]) != 0) k++;
    if (k == 4) {
      if (!PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "'%U' is an invalid keyword argument for __dlpack__()",
                     key);
      return -1;
    }
    *slot[k] = args[i];
  }
  return 0;
}

static PyObject *Tensor_dlpack(TensorObject *self, PyObject *const *args, Py_ssize_t nargsf,
                               PyObject *kwnames) {
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None,
           *copy = Py_None;
  PyObject **slot[4] = {&stream, &max_version, &dl_device, &copy};
  if (parse_dlpack_kwargs(args, PyVectorcall_NARGS(nargsf), kwnames, slot)) return NULL;
  if (!tensor_live(self)) return NULL;
  if (check_stream(stream)) return NULL;
  int form = FORM_LEGACY;
  if (max_version != Py_None) {
    long major, minor;
    if (parse_pair(max_version, "max_version must be a tuple (major, minor)", &major, &minor))
      return NULL;
    form = major >= 1 ? FORM_VERSIONED : FORM_LEGACY;
  }
  uint32_t request;
  if (check_dl_device(dl_device) || parse_copy(copy, form, &request)) return NULL;
  void *managed = NULL;
  int rc = tsmr_dlpack_export(g_ctx, self->h, form, request, &managed);
  if (rc) return raise_tsmr(PyExc_BufferError, "tsmr_dlpack_export", rc);
  PyObject *cap = PyCapsule_New(managed, form == FORM_VERSIONED ? NAME_VERSIONED : NAME_LEGACY,
                                form == FORM_VERSIONED ? capsule_destructor_versioned
                                                       : capsule_destructor_legacy);
  if (!cap) run_deleter(managed, form); /* never handed out: we are still the owner */
  return cap;
}

static PyObject *Tensor_dlpack_device(TensorObject *self, PyObject *noargs) {
  (void)noargs;
  if (!tensor_live(self)) return NULL;
  Py_INCREF(g_own_device);
  return g_own_device;
}

/* ---- Construction ----------------------------------------------------------------- */

/* Flattens a (nested) sequence into out[*n...]; records the shape when dims is given. */
static int flatten(PyObject *o, int depth, int64_t *dims, int *ndim, PyObject *acc) {
  if (PyList_Check(o) || PyTuple_Check(o)) {
    if (depth >= TSMR_MAX_DIMS) {
      PyErr_SetString(PyExc_ValueError, "too many dimensions");
      return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (depth + 1 > *ndim) {
      *ndim = depth + 1;
      dims[depth] = n;
    } else if (dims[depth] != n) {
      PyErr_SetString(PyExc_ValueError, "ragged nested sequence");
      return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
      if (flatten(PySequence_Fast_GET_ITEM(o, i), depth + 1, dims, ndim, acc)) return -1;
    return 0;
  }
  return PyList_Append(acc, o);
}

/* A dtype name (numpy's, or f32 and i32) -> *dtype; -1 with ValueError for another. */
static int parse_dtype(const char *name, int *dtype) {
  if (!strcmp(name, "f32") || !strcmp(name, "i32")) name = name[0] == 'f' ? "float32" : "int32";
  for (size_t i = 0; i < sizeof dtype_table / sizeof dtype_table[0]; i++)
    if (!strcmp(name, dtype_table[i].name)) return *dtype = dtype_table[i].dtype, 0;
  PyErr_Format(PyExc_ValueError, "unsupported dtype '%s' (numpy's name of bool, an integer "
               "of 8 to 64 bits, float16, bfloat16, float32 or float64)", name);
  return -1;
}

/* An explicit shape (a sequence of ints) -> d's ndim and shape; -1 with the error. */
static int parse_shape(PyObject *shape, struct tsmr_tensor_desc *d) {
  PyObject *s = PySequence_Fast(shape, "shape must be a sequence of ints");
  if (!s) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(s);
  if (n > TSMR_MAX_DIMS) {
    Py_DECREF(s);
    PyErr_SetString(PyExc_ValueError, "too many dimensions");
    return -1;
  }
  d->ndim = (int)n;
  for (Py_ssize_t i = 0; i < n; i++) {
    long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(s, i));
    if (v == -1 && PyErr_Occurred()) {
      Py_DECREF(s);
      return -1;
    }
    d->shape[i] = v;
  }
  Py_DECREF(s);
  return 0;
}

/* The count values of flat as dtype into buf (4 bytes each); -1 with the error. */
static int pack_values(PyObject *flat, int64_t count, int dtype, void *buf) {
  if (dtype != TSMR_F32 && dtype != TSMR_I32) {
    PyErr_SetString(PyExc_ValueError, "a list makes a float32 or int32 tensor: pass a buffer "
                    "of the elements for another dtype");
    return -1;
  }
  for (int64_t i = 0; i < count; i++) {
    PyObject *v = PyList_GET_ITEM(flat, (Py_ssize_t)i);
    if (dtype == TSMR_F32) {
      double x = PyFloat_AsDouble(v);
      if (x == -1.0 && PyErr_Occurred()) return -1;
      ((float *)buf)[i] = (float)x;
    } else {
      long x = PyLong_AsLong(v);
      if (x == -1 && PyErr_Occurred()) return -1;
      if (x < INT32_MIN || x > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "value out of int32 range");
        return -1;
      }
      ((int32_t *)buf)[i] = (int32_t)x;
    }
  }
  return 0;
}

/* A new tensor of d from the flat values; NULL with the error set. */
static PyObject *tensor_from_values(struct tsmr_tensor_desc *d, PyObject *flat) {
  int64_t count = desc_count(d);
  if (count < 0 || count != (int64_t)PyList_GET_SIZE(flat)) {
    PyErr_Format(PyExc_ValueError, "%zd values do not fill the shape (%lld elements)",
                 PyList_GET_SIZE(flat), (long long)count);
    return NULL;
  }
  void *buf = PyMem_Malloc(count ? (size_t)count * 4 : 1);
  if (!buf) return PyErr_NoMemory();
  if (pack_values(flat, count, d->dtype, buf)) {
    PyMem_Free(buf);
    return NULL;
  }
  tsmr_handle h;
  int rc = tsmr_tensor_new(g_ctx, g_root, d, buf, &h);
  PyMem_Free(buf);
  if (rc) return raise_tsmr(PyExc_ValueError, "tsmr_tensor_new", rc);
  return tensor_wrap(h);
}

/* A new tensor of d from a C-contiguous buffer of its elements, items of the dtype's size
 * or bytes (a bfloat16 array viewed as uint8, say): the bridge makes megabyte tensors a
 * thousand times per case (cases/dlpack/python), where a list of Python floats costs far
 * more than the exchange under test. NULL with the error. */
static PyObject *tensor_from_buffer(struct tsmr_tensor_desc *d, PyObject *data) {
  Py_buffer view;
  if (PyObject_GetBuffer(data, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) return NULL;
  int64_t count = desc_count(d), size = (int64_t)dtype_table[dtype_index(d->dtype)].size;
  PyObject *result = NULL;
  if (view.itemsize != size && view.itemsize != 1)
    PyErr_Format(PyExc_ValueError, "a buffer of %zd-byte items (format '%s') is not of the "
                 "dtype (%lld-byte items or bytes)", view.itemsize,
                 view.format ? view.format : "B", (long long)size);
  else if (count < 0 || view.len != count * size)
    PyErr_Format(PyExc_ValueError, "a buffer of %zd bytes does not fill the shape "
                 "(%lld elements)", view.len, (long long)count);
  else {
    tsmr_handle h;
    int rc = tsmr_tensor_new(g_ctx, g_root, d, view.buf, &h);
    result = rc ? raise_tsmr(PyExc_ValueError, "tsmr_tensor_new", rc) : tensor_wrap(h);
  }
  PyBuffer_Release(&view);
  return result;
}

static PyObject *mod_tensor(PyObject *mod, PyObject *args, PyObject *kwds) {
  (void)mod;
  static char *kwlist[] = {"data", "shape", "dtype", NULL};
  PyObject *data, *shape = Py_None;
  const char *dtype = "float32";
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|Os:tensor", kwlist, &data, &shape, &dtype))
    return NULL;
  struct tsmr_tensor_desc d;
  memset(&d, 0, sizeof d);
  if (parse_dtype(dtype, &d.dtype)) return NULL;
  if (!PyList_Check(data) && !PyTuple_Check(data) && PyObject_CheckBuffer(data)) {
    if (shape == Py_None) {
      PyErr_SetString(PyExc_ValueError, "a buffer needs an explicit shape");
      return NULL;
    }
    return parse_shape(shape, &d) ? NULL : tensor_from_buffer(&d, data);
  }
  PyObject *flat = PyList_New(0);
  if (!flat) return NULL;
  int64_t dims[TSMR_MAX_DIMS] = {0};
  int ndim = 0;
  PyObject *result = NULL;
  if (flatten(data, 0, dims, &ndim, flat) == 0) {
    if (shape == Py_None) {
      d.ndim = ndim;
      memcpy(d.shape, dims, sizeof dims);
    }
    if (shape == Py_None || parse_shape(shape, &d) == 0) result = tensor_from_values(&d, flat);
  }
  Py_DECREF(flat);
  return result;
}

/* ---- Consumer: from_dlpack ------------------------------------------------------ */

/* obj's capsule: obj itself, or obj.__dlpack__(max_version=(1, DLPACK_MINOR)) without a
 * bound method or a dict. With copy (True or False) or to_own (from_dlpack's device=
 * the context's), passed on as the array API says: __dlpack__(max_version=...,
 * copy=copy, dl_device=the context's device), and no fallback for a producer without
 * max_version, which cannot take them either. */
static PyObject *get_capsule(PyObject *obj, PyObject *copy, int to_own) {
  if (PyCapsule_CheckExact(obj)) {
    Py_INCREF(obj);
    return obj;
  }
  PyObject *argv[4] = {obj, g_max_version, NULL, NULL};
  if (copy || to_own) {
    PyObject *names[3] = {g_str_max_version, NULL, NULL};
    Py_ssize_t n = 1;
    if (copy) argv[1 + n] = copy, names[n++] = g_str_copy;
    if (to_own) argv[1 + n] = g_own_device, names[n++] = g_str_dl_device;
    PyObject *kwnames = n == 2 ? PyTuple_Pack(2, names[0], names[1])
                               : PyTuple_Pack(3, names[0], names[1], names[2]);
    if (!kwnames) return NULL;
    PyObject *cap = PyObject_VectorcallMethod(g_str_dlpack, argv, 1, kwnames);
    Py_DECREF(kwnames);
    return cap;
  }
  PyObject *cap = PyObject_VectorcallMethod(g_str_dlpack, argv, 1, g_kwnames_max_version);
  if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) {
    /* A producer predating max_version (array API's recommended fallback). */
    PyErr_Clear();
    cap = PyObject_VectorcallMethod(g_str_dlpack, argv, 1, NULL);
  }
  return cap;
}

/* from_dlpack's device: None (0), or the context's, written as its name ("cpu",
 * "cuda:0") or its DLPack pair ((1, 0), (2, 0)) (1); anything else -1 with ValueError:
 * tsmref places tensors on its context's device alone (DLP.PY.FROM.2). */
static int parse_from_device(PyObject *device) {
  long dt, id;
  if (device == Py_None) return 0;
  if (PyUnicode_Check(device)) {
    char cuda[32]; /* cuda-sim:N is cuda:N to a user, as the array API names devices */
    snprintf(cuda, sizeof cuda, "cuda:%d", g_dev_id);
    if (PyUnicode_CompareWithASCIIString(device, tsmr_ctx_device(g_ctx)) == 0 ||
        (g_dev_type == kDLCUDA && PyUnicode_CompareWithASCIIString(device, cuda) == 0))
      return 1;
  }
  if (PyTuple_Check(device) && parse_pair(device, "", &dt, &id) == 0 && dt == g_dev_type &&
      id == g_dev_id)
    return 1;
  PyErr_Clear();
  PyErr_Format(PyExc_ValueError, "tsmref places tensors on its context's device alone "
               "(%s, (%d, %d)): device must be None or that, not %R",
               tsmr_ctx_device(g_ctx), g_dev_type, g_dev_id, device);
  return -1;
}

/* from_dlpack(obj, /, *, copy=None, device=None), by vectorcall: the bench's round trip
 * (bench_capsule.py) pays no argument parsing when only obj is given. */
/* from_dlpack's keyword arguments kw (named by kwnames): copy= and device= (left as
 * they are when not given); -1 with TypeError for any other. */
static int from_dlpack_keywords(PyObject *const *kw, PyObject *kwnames, PyObject **copy,
                                PyObject **device) {
  Py_ssize_t n_kw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < n_kw; i++) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, i);
    if (PyUnicode_Compare(key, g_str_copy) == 0) {
      *copy = kw[i];
    } else if (PyUnicode_CompareWithASCIIString(key, "device") == 0) {
      *device = kw[i];
    } else {
      PyErr_Format(PyExc_TypeError, "from_dlpack() got an unexpected keyword argument '%U'", key);
      return -1;
    }
  }
  return 0;
}

/* copy= as __dlpack__ takes it: NULL for None, else True or False; -1 with ValueError
 * for anything else. */
static int copy_request(PyObject **copy) {
  if (*copy == Py_None) *copy = NULL;
  else if (*copy != Py_True && *copy != Py_False) {
    PyErr_SetString(PyExc_ValueError, "copy must be True, False or None");
    return -1;
  }
  return 0;
}

/* The DLPack capsules from_dlpack consumes: each form's name, and the name it takes
 * once consumed. */
static const struct capsule_form {
  int form;
  const char *name, *used;
} capsule_forms[] = {{FORM_VERSIONED, NAME_VERSIONED, NAME_USED_VERSIONED},
                     {FORM_LEGACY, NAME_LEGACY, NAME_USED_LEGACY}};

/* The form of a live DLPack capsule, or NULL with ValueError: a consumed (or foreign)
 * capsule is refused, and nothing changes (DLP.PY.USED.1). */
static const struct capsule_form *capsule_form_of(PyObject *cap) {
  for (size_t i = 0; i < sizeof capsule_forms / sizeof *capsule_forms; i++)
    if (PyCapsule_IsValid(cap, capsule_forms[i].name)) return &capsule_forms[i];
  const char *n = PyCapsule_GetName(cap);
  if (!n && PyErr_Occurred()) PyErr_Clear();
  PyErr_Format(PyExc_ValueError,
               "capsule named '%s' cannot be consumed (already consumed, or not a DLPack "
               "capsule)",
               n ? n : "(null)");
  return NULL;
}

/* Takes the managed tensor out of the capsule __dlpack__ returned, releasing cap: the
 * tensor, its form in *form; or NULL with an exception, the tensor left to the capsule. */
static void *take_capsule(PyObject *cap, int *form) {
  if (!PyCapsule_CheckExact(cap)) {
    Py_DECREF(cap);
    PyErr_SetString(PyExc_TypeError, "__dlpack__ did not return a PyCapsule");
    return NULL;
  }
  const struct capsule_form *f = capsule_form_of(cap);
  void *managed = f ? PyCapsule_GetPointer(cap, f->name) : NULL;
  /* Take ownership (DLP.PY.NAME.2): from here on the deleter is ours to run, and
   * tsmr_dlpack_import runs it on every path (DLP.IMPORT.2, DLP.DEL.1). Not renamed:
   * the capsule still owns the tensor. */
  if (managed && PyCapsule_SetName(cap, f->used) != 0) managed = NULL;
  Py_DECREF(cap);
  if (managed) *form = f->form;
  return managed;
}

static PyObject *mod_from_dlpack(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  (void)mod;
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "from_dlpack() takes one positional argument");
    return NULL;
  }
  PyObject *obj = args[0], *copy = Py_None, *device = Py_None;
  if (from_dlpack_keywords(args + nargs, kwnames, &copy, &device)) return NULL;
  int to_own = parse_from_device(device);
  if (to_own < 0 || copy_request(&copy)) return NULL;
  if ((copy || to_own) && PyCapsule_CheckExact(obj)) {
    PyErr_SetString(PyExc_TypeError,
                    "copy= and device= need an object with __dlpack__, not a capsule");
    return NULL;
  }
  PyObject *through_table; /* the exchange table has no copy: __dlpack__ takes it */
  if (!copy && !to_own && !PyCapsule_CheckExact(obj) &&
      xapi_import(obj, &through_table) == 0)
    return through_table;
  PyObject *cap = get_capsule(obj, copy, to_own);
  if (!cap) return NULL;
  int form;
  void *managed = take_capsule(cap, &form);
  if (!managed) return NULL;
  tsmr_handle h;
  int rc = tsmr_dlpack_import(g_ctx, managed, form, g_root, &h);
  if (rc) return raise_tsmr(PyExc_BufferError, "tsmr_dlpack_import", rc);
  return tensor_wrap(h);
}

/* ---- Probes ----------------------------------------------------------------------- */

static PyObject *mod_live_bytes(PyObject *mod, PyObject *noargs) {
  (void)mod;
  (void)noargs;
  uint64_t n = 0;
  int rc = tsmr_live_bytes(g_ctx, &n);
  if (rc) return raise_tsmr(PyExc_RuntimeError, "tsmr_live_bytes", rc);
  return PyLong_FromUnsignedLongLong((unsigned long long)n);
}

static PyObject *mod_live_count(PyObject *mod, PyObject *noargs) {
  (void)mod;
  (void)noargs;
  struct tsmr_mgr_info info;
  int rc = tsmr_mgr_info(g_ctx, g_root, &info);
  if (rc) return raise_tsmr(PyExc_RuntimeError, "tsmr_mgr_info", rc);
  return PyLong_FromUnsignedLongLong((unsigned long long)info.live);
}

/* ---- Tables ---------------------------------------------------------------------- */

static PyMethodDef Tensor_methods[] = {
    {"tolist", (PyCFunction)Tensor_tolist, METH_NOARGS, "elements as a nested list"},
    {"release", (PyCFunction)Tensor_release, METH_NOARGS, "release the tensor now"},
    {"__dlpack__", (PyCFunction)(void (*)(void))Tensor_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)"},
    {"__dlpack_device__", (PyCFunction)Tensor_dlpack_device, METH_NOARGS,
     "(device_type, device_id)"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Tensor_getset[] = {
    {"shape", (getter)Tensor_get_shape, NULL, "shape tuple", NULL},
    {"dtype", (getter)Tensor_get_dtype, NULL, "numpy's name of the dtype", NULL},
    {"nbytes", (getter)Tensor_get_nbytes, NULL, "bytes of the elements", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject Tensor_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tsmref.Tensor",
    .tp_basicsize = sizeof(TensorObject),
    .tp_dealloc = (destructor)Tensor_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tensor of the tsmref reference implementation (CPU).",
    .tp_weaklistoffset = offsetof(TensorObject, weakrefs),
    .tp_methods = Tensor_methods,
    .tp_getset = Tensor_getset,
};

static PyMethodDef mod_methods[] = {
    {"tensor", (PyCFunction)(void (*)(void))mod_tensor, METH_VARARGS | METH_KEYWORDS,
     "tensor(data, shape=None, dtype='float32')"},
    {"from_dlpack", (PyCFunction)(void (*)(void))mod_from_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "from_dlpack(obj, /, *, copy=None, device=None): import through DLPack"},
    {"live_bytes", (PyCFunction)mod_live_bytes, METH_NOARGS,
     "live bytes of the session (tensors and unreleased exports)"},
    {"live_count", (PyCFunction)mod_live_count, METH_NOARGS,
     "live resources held by the root manager"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef tsmref_module = {
    PyModuleDef_HEAD_INIT, "tsmref",
    "tsm-cts reference implementation: tensors and the DLPack capsule protocol", -1,
    mod_methods, NULL, NULL, NULL, NULL};

/* The interned names and the version tuple (see g_str_dlpack); 0 or -1 with the
 * error set. */
static int make_call_constants(void) {
  if (g_str_dlpack) return 0;
  g_str_dlpack = PyUnicode_InternFromString("__dlpack__");
  g_str_stream = PyUnicode_InternFromString("stream");
  g_str_max_version = PyUnicode_InternFromString("max_version");
  g_str_dl_device = PyUnicode_InternFromString("dl_device");
  g_str_copy = PyUnicode_InternFromString("copy");
  if (!g_str_dlpack || !g_str_stream || !g_str_max_version || !g_str_dl_device || !g_str_copy)
    return -1;
  g_kwnames_max_version = PyTuple_Pack(1, g_str_max_version);
  g_max_version = Py_BuildValue("(ii)", 1, DLPACK_MINOR_VERSION);
  return g_kwnames_max_version && g_max_version ? 0 : -1;
}

/* Opens the process's context on $TSMREF_PY_DEVICE (default "cpu") and names its
 * device as DLPack does (g_dev_type, g_dev_id, g_own_device); -1 with ImportError. */
static int open_context(void) {
  const char *dev = getenv("TSMREF_PY_DEVICE");
  if (!dev || !*dev) dev = "cpu";
  int rc = tsmr_ctx_open(dev, &g_ctx);
  if (!rc) rc = tsmr_mgr_root(g_ctx, &g_root);
  if (rc) {
    PyErr_Format(PyExc_ImportError, "tsmref: tsmr_ctx_open(\"%s\") ($TSMREF_PY_DEVICE): %s (%s)",
                 dev, tsmr_strerror(rc), tsmr_err_name(rc));
    return -1;
  }
  const char *name = tsmr_ctx_device(g_ctx), *colon = strchr(name, ':');
  if (strncmp(name, "cpu", 3) != 0) {
    g_dev_type = kDLCUDA; /* cuda:N and its simulation, cuda-sim:N */
    g_dev_id = colon ? atoi(colon + 1) : 0;
  }
  g_own_device = Py_BuildValue("(ii)", g_dev_type, g_dev_id);
  return g_own_device ? 0 : -1;
}

PyMODINIT_FUNC PyInit_tsmref(void) {
  if (PyType_Ready(&Tensor_Type) < 0 || xapi_publish() < 0 || make_call_constants() < 0)
    return NULL;
  /* One context for the process; never closed: exports may outlive the module, and
   * their deleters need it (DLP.EXPORT.3). */
  if (!g_ctx && open_context() < 0) return NULL;
  PyObject *m = PyModule_Create(&tsmref_module);
  if (!m) return NULL;
  Py_INCREF(&Tensor_Type);
  if (PyModule_AddObject(m, "Tensor", (PyObject *)&Tensor_Type) < 0) {
    Py_DECREF(&Tensor_Type);
    Py_DECREF(m);
    return NULL;
  }
  Py_INCREF(g_own_device);
  if (PyModule_AddIntConstant(m, "DLPACK_MAJOR", DLPACK_MAJOR_VERSION) ||
      PyModule_AddIntConstant(m, "DLPACK_MINOR", DLPACK_MINOR_VERSION) ||
      PyModule_AddObject(m, "device", g_own_device) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
