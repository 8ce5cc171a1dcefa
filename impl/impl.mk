# impl/impl.mk: builds libtsmref (the reference implementation), its tsm-cts adapter
# and, when $(NVCC) is set, the CUDA backend library libtsmref_cuda.so.
# Included by the top-level Makefile, which provides B, CC, CFLAGS_ALL, LDFLAGS_ALL,
# NVCC and PREFIX, and collects ALL_TARGETS and DEPS.
#
#   $(TSMREF_LIB)      $(B)/lib/libtsmref.so   shared library (public API: tsmref.h)
#   $(TSMREF_STATIC)   $(B)/lib/libtsmref.a    static library
#   $(TSMREF_ADAPTER)  $(B)/lib/tsmref_adapter.so  adapter, libtsmref linked in
#   $(TSMREF_CUDA)     $(B)/lib/libtsmref_cuda.so  CUDA backend (only with NVCC)
#   $(TSMREF_TEST_PLANNER)  $(B)/bin/test-planner  unit tests of the graph planner
#   $(TSMREF_TEST_LOCK)     $(B)/bin/test-lock     tests of the biased context lock
#   $(TSMREF_TEST_ALLOC)    $(B)/bin/test-alloc    tests of the CPU backend's block cache
#   $(TSMREF_TEST_IMPORT)   $(B)/bin/test-import   tests of tsmr_dlpack_try_import
#   install-impl       libraries, tsmref.h, tsmref_test.h (test hooks) and tsmref.pc
#                      under $(PREFIX)

TSMREF_SRCS := $(wildcard impl/src/*.c) $(wildcard impl/cpu/*.c)
TSMREF_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(TSMREF_SRCS))
TSMREF_ADAPTER_OBJ := $(B)/obj/impl/adapter/tsmref_adapter.o
TSMREF_LIB := $(B)/lib/libtsmref.so
TSMREF_STATIC := $(B)/lib/libtsmref.a
TSMREF_ADAPTER := $(B)/lib/tsmref_adapter.so
TSMREF_PC := $(B)/lib/pkgconfig/tsmref.pc
TSMREF_CFLAGS := -Iimpl/include -Iimpl/src $(if $(NVCC),-DTSMREF_HAVE_CUDA=1)
# -pthread: each context has a mutex (SCOPE.THREAD.3). The harness links only -ldl -lm
# and dlopen()s the adapter, so the adapter .so carries -pthread itself.
# Graph linear algebra (GRAPH.OP.1): OpenBLAS's cblas_sgemm and LAPACKE's sgesvd from
# Debian (libopenblas-dev, liblapacke-dev; installed by `make deps`, deps.mk). Not
# linked: the CPU backend dlopen()s libopenblas.so.0 and liblapacke.so.3 on the first
# graph matmul or SVD (impl/cpu/cpu_backend.c says why); the build needs their headers
# (Debian's cblas.h is an alternative under /usr/include/<triplet>) and checks that
# the libraries are installed.
TSMREF_LDLIBS := -ldl -pthread
TSMREF_MULTIARCH := $(or $(shell gcc -print-multiarch 2>/dev/null),x86_64-linux-gnu)
TSMREF_CBLAS_H := /usr/include/$(TSMREF_MULTIARCH)/cblas.h
TSMREF_LAPACKE_H := /usr/include/lapacke.h
TSMREF_OPENBLAS_SO := /usr/lib/$(TSMREF_MULTIARCH)/libopenblas.so
$(eval $(call debian_dep,$(TSMREF_CBLAS_H),libopenblas-dev))
$(eval $(call debian_dep,$(TSMREF_OPENBLAS_SO),libopenblas-dev))
$(eval $(call debian_dep,$(TSMREF_LAPACKE_H),liblapacke-dev))
$(B)/obj/impl/cpu/cpu_backend.o: | $(TSMREF_CBLAS_H) $(TSMREF_LAPACKE_H) $(TSMREF_OPENBLAS_SO)
# Internal (tsmr__) symbols stay hidden; only TSMR_API functions are exported.
TSMREF_VIS := -fvisibility=hidden -fno-semantic-interposition

ifneq ($(strip $(NVCC)),)
TSMREF_CUDA := $(B)/lib/libtsmref_cuda.so
TSMREF_CU_SRCS := $(wildcard impl/cuda/*.cu)
TSMREF_CU_OBJS := $(patsubst %.cu,$(B)/obj/%.o,$(TSMREF_CU_SRCS))
NVCC_ARCH ?= -gencode arch=compute_75,code=sm_75 -gencode arch=compute_90,code=sm_90 \
  -gencode arch=compute_90,code=compute_90
NVCCFLAGS ?= -O2 -std=c++17 $(NVCC_ARCH) -Xcompiler -fPIC,-Wall,-Wextra \
  --Werror all-warnings
else
TSMREF_CUDA :=
endif

TSMREF_TEST_PLANNER := $(B)/bin/test-planner
TSMREF_TEST_PLANNER_OBJ := $(B)/obj/impl/tests/test_planner.o
TSMREF_TEST_LOCK := $(B)/bin/test-lock
TSMREF_TEST_LOCK_OBJ := $(B)/obj/impl/tests/test_lock.o
TSMREF_TEST_ALLOC := $(B)/bin/test-alloc
TSMREF_TEST_ALLOC_OBJ := $(B)/obj/impl/tests/test_alloc.o
TSMREF_TEST_IMPORT := $(B)/bin/test-import
TSMREF_TEST_IMPORT_OBJ := $(B)/obj/impl/tests/test_import.o

ALL_TARGETS += $(TSMREF_LIB) $(TSMREF_STATIC) $(TSMREF_ADAPTER) $(TSMREF_CUDA) \
  $(TSMREF_PC) $(TSMREF_TEST_PLANNER) $(TSMREF_TEST_LOCK) $(TSMREF_TEST_ALLOC) \
  $(TSMREF_TEST_IMPORT)
DEPS += $(TSMREF_OBJS:.o=.d) $(TSMREF_ADAPTER_OBJ:.o=.d) $(TSMREF_TEST_PLANNER_OBJ:.o=.d) \
  $(TSMREF_TEST_LOCK_OBJ:.o=.d) $(TSMREF_TEST_ALLOC_OBJ:.o=.d) $(TSMREF_TEST_IMPORT_OBJ:.o=.d)

$(B)/obj/impl/%.o: impl/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread $(TSMREF_CFLAGS) $(TSMREF_VIS) -c $< -o $@

# DLPack (impl/src/dlpack*.c): the two forms compile against the packaged headers
# (`make deps` installs them, deps.mk; never vendored). Both headers define the same
# names, so each form is its own translation unit.
TSMREF_DLX_LEGACY_OBJ := $(B)/obj/impl/src/dlpack_legacy.o
TSMREF_DLX_V1_OBJ := $(B)/obj/impl/src/dlpack_versioned.o
$(TSMREF_DLX_LEGACY_OBJ): | $(DLPACK_LEGACY_H)
$(TSMREF_DLX_V1_OBJ): impl/src/dlpack_versioned.c | $(DLPACK_V1_INC_FILE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread $(TSMREF_CFLAGS) $(TSMREF_VIS) \
	  -I"$$(cat $(DLPACK_V1_INC_FILE))" -c $< -o $@

$(TSMREF_ADAPTER_OBJ): impl/adapter/tsmref_adapter.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread -Iharness/include -Iimpl/include -c $< -o $@

$(TSMREF_STATIC): $(TSMREF_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(TSMREF_LIB): $(TSMREF_OBJS)
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libtsmref.so -o $@ $^ $(LDFLAGS_ALL) $(TSMREF_LDLIBS)

# libtsmref is linked in statically, so the adapter loads from any cwd by path; the
# CUDA backend is then looked up next to the adapter (same $(B)/lib).
$(TSMREF_ADAPTER): $(TSMREF_ADAPTER_OBJ) $(TSMREF_STATIC)
	@mkdir -p $(@D)
	$(CC) -shared -o $@ $(TSMREF_ADAPTER_OBJ) $(TSMREF_STATIC) $(LDFLAGS_ALL) \
	  $(TSMREF_LDLIBS)

# The planner's unit tests reach its internal interface (impl/src/planner.h) and the
# fault-injection hook (tsmref_test.h) through the static library.
$(TSMREF_TEST_PLANNER): $(TSMREF_TEST_PLANNER_OBJ) $(TSMREF_STATIC)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(TSMREF_LDLIBS)

# The block cache's tests call the CPU backend's slots and the cache's own functions.
$(TSMREF_TEST_ALLOC): $(TSMREF_TEST_ALLOC_OBJ) $(TSMREF_STATIC)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(TSMREF_LDLIBS)

# The lock's tests look at the lock's state (impl/src/internal.h) and call an export's
# deleter through the packaged DLPack header, so they build apart from $(B)/obj/impl/%.o.
$(TSMREF_TEST_LOCK_OBJ): impl/tests/test_lock.c | $(DLPACK_V1_INC_FILE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread $(TSMREF_CFLAGS) -I"$$(cat $(DLPACK_V1_INC_FILE))" -c $< -o $@

$(TSMREF_TEST_LOCK): $(TSMREF_TEST_LOCK_OBJ) $(TSMREF_STATIC)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(TSMREF_LDLIBS)

# The import's tests build DLPack tensors of both forms through the packaged DLPack
# header (whose 1.x keeps the legacy DLManagedTensor) and read the export records'
# anchor (impl/src/dlx.h), so they build apart from $(B)/obj/impl/%.o as the lock's do.
$(TSMREF_TEST_IMPORT_OBJ): impl/tests/test_import.c | $(DLPACK_V1_INC_FILE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread $(TSMREF_CFLAGS) -I"$$(cat $(DLPACK_V1_INC_FILE))" -c $< -o $@

$(TSMREF_TEST_IMPORT): $(TSMREF_TEST_IMPORT_OBJ) $(TSMREF_STATIC)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(TSMREF_LDLIBS)

$(B)/obj/impl/cuda/%.o: impl/cuda/%.cu impl/cuda/tsmr_cuda.cuh impl/src/backend.h \
  impl/include/tsmref.h
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -Iimpl/include -Iimpl/src -c $< -o $@

ifneq ($(strip $(NVCC)),)
$(TSMREF_CUDA): $(TSMREF_CU_OBJS)
	@mkdir -p $(@D)
	$(NVCC) -shared -cudart static $(NVCC_ARCH) -Xcompiler -fPIC -o $@ $^ -lcublas \
	  -lcusolver
endif

# tsmref.pc for a given prefix: $(call tsmref_pc,prefix,output file)
tsmref_pc = printf '%s\n' 'prefix=$(1)' 'libdir=$${prefix}/lib' \
  'includedir=$${prefix}/include' '' 'Name: tsmref' \
  'Description: tsm-cts reference implementation of scoped tensor memory' \
  'Version: $(TSMREF_VERSION)' 'Libs: -L$${libdir} -ltsmref' \
  'Libs.private: -ldl -pthread' \
  'Cflags: -I$${includedir} -pthread' > $(2)

$(TSMREF_PC): impl/impl.mk impl/include/tsmref.h
	@mkdir -p $(@D)
	$(call tsmref_pc,$(PREFIX),$@)

.PHONY: install-impl
install-impl: $(TSMREF_LIB) $(TSMREF_STATIC) $(TSMREF_ADAPTER) $(TSMREF_CUDA)
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 0755 $(TSMREF_LIB) $(TSMREF_ADAPTER) $(TSMREF_CUDA) $(DESTDIR)$(PREFIX)/lib/
	install -m 0644 $(TSMREF_STATIC) $(DESTDIR)$(PREFIX)/lib/
	install -m 0644 impl/include/tsmref.h impl/include/tsmref_test.h \
	  $(DESTDIR)$(PREFIX)/include/
	$(call tsmref_pc,$(PREFIX),$(DESTDIR)$(PREFIX)/lib/pkgconfig/tsmref.pc)
