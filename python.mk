# python.mk: the Python side of the DLPack family (spec/dlpack.md, DLP.PY.*).
# Included by the top-level Makefile after deps.mk and impl/impl.mk, which provide
# B, CC, CSTD, WARN, OPT, VENV_STAMP, VENV_PY, DLPACK_V1_INC_FILE and TSMREF_LIB.
#
#   $(PYTHON_EXT)    $(B)/python/tsmref.so  the `tsmref` CPython extension (impl/python/:
#                    the capsule protocol, tsmref_py.c, and the DLPack 1.3 exchange
#                    table, exchange_api.c)
#   python           builds it (phony; `all` builds it too)
#   interop          runs every capsule-level case (cases/dlpack/python/*.pytsm) for
#                    every producer x consumer pair of {tsmref, numpy, tvm-ffi, jax},
#                    writes $(B)/report/interop.json and prints the matrix; non-zero
#                    exit on any unexpected result. INTEROP_FLAGS=--large adds `large`.
#   interop-selftest the bridge's self-tests: deliberately broken consumers (the IREE
#                    leak, the turbine rename-back) must be reported
#   Both read the cases through the judge, $(TSM_CTS) parse --json (TSM_CTS_BUILD).
#   fuzz-capsules-check  the capsule fuzzer (harness/python/fuzz_capsules.py, Hypothesis):
#                    a derandomised run of FUZZ_CAPSULES_EXAMPLES examples, the same
#                    every time (lane fuzz-capsules of `make check`)
#   fuzz-capsules    the same fuzzer on random examples for FUZZ_SECONDS (fuzz.mk: `make
#                    fuzz`, ci/nightly-fuzz); failing examples are kept in Hypothesis's
#                    database build/fuzz/corpus/capsules and replayed first next time;
#                    FUZZ_CAPSULES_JSON=FILE writes the counts
#   bench-python     capsule round-trip micro-benchmark (harness/python/bench_capsule.py)
#
# The extension is built without $(SAN): a sanitizer runtime cannot be loaded into an
# uninstrumented python. It links libtsmref.so with an rpath to $(B)/lib.

PYTHON_EXT := $(B)/python/tsmref.so
PYTHON_EXT_SRCS := impl/python/tsmref_py.c impl/python/exchange_api.c
PYTHON_EXT_OBJS := $(patsubst impl/python/%.c,$(B)/python/obj/%.o,$(PYTHON_EXT_SRCS))
PYTHON_EXT_CFLAGS := $(CSTD) $(WARN) $(OPT) -fPIC -MMD -MP -fvisibility=hidden
PYTHON_BRIDGE_ENV := PYTHONPATH=$(B)/python:harness/python JAX_PLATFORMS=cpu \
  TSM_CTS_BUILD=$(B)
INTEROP_FLAGS ?=

ALL_TARGETS += $(PYTHON_EXT)
DEPS += $(PYTHON_EXT_OBJS:.o=.d)

FUZZ_CAPSULES_EXAMPLES ?= 2000
FUZZ_CAPSULES_JSON ?=

.PHONY: python interop interop-selftest bench-python fuzz-capsules-check fuzz-capsules

python: $(PYTHON_EXT)

$(B)/python/obj/%.o: impl/python/%.c $(VENV_STAMP) $(DLPACK_V1_INC_FILE)
	@mkdir -p $(@D)
	$(CC) $(PYTHON_EXT_CFLAGS) -Iimpl/include -I"$$(cat $(DLPACK_V1_INC_FILE))" \
	  -I"$$($(VENV_PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
	  -c -o $@ $<

$(PYTHON_EXT): $(PYTHON_EXT_OBJS) $(TSMREF_LIB)
	$(CC) -shared -o $@ $(PYTHON_EXT_OBJS) -L$(dir $(TSMREF_LIB)) -ltsmref \
	  -Wl,-rpath,'$$ORIGIN/../lib'

# The bridge reads cases through the judge's front end (tsm-cts parse --json).
interop: $(PYTHON_EXT) $(TSM_CTS)
	@mkdir -p $(B)/report
	$(PYTHON_BRIDGE_ENV) $(VENV_PY) harness/python/bridge.py run $(INTEROP_FLAGS) \
	  --json $(B)/report/interop.json cases/dlpack/python

interop-selftest: $(PYTHON_EXT) $(TSM_CTS)
	$(PYTHON_BRIDGE_ENV) $(VENV_PY) harness/python/test_bridge.py

fuzz-capsules-check: $(PYTHON_EXT)
	$(PYTHON_BRIDGE_ENV) $(VENV_PY) harness/python/fuzz_capsules.py --derandomize \
	  --examples $(FUZZ_CAPSULES_EXAMPLES)

fuzz-capsules: $(PYTHON_EXT)
	$(PYTHON_BRIDGE_ENV) $(VENV_PY) harness/python/fuzz_capsules.py --seconds $(FUZZ_SECONDS) \
	  $(if $(FUZZ_CAPSULES_JSON),--json $(FUZZ_CAPSULES_JSON))

bench-python: $(PYTHON_EXT)
	$(PYTHON_BRIDGE_ENV) $(VENV_PY) harness/python/bench_capsule.py
