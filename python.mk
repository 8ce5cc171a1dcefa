# python.mk: the Python side of the DLPack family (spec/dlpack.md, DLP.PY.*).
# Included by the top-level Makefile after deps.mk and impl/impl.mk, which provide
# B, CC, CSTD, WARN, OPT, VENV_STAMP, VENV_PY, DLPACK_V1_INC_FILE and TSMREF_LIB.
#
#   $(PYTHON_EXT)    $(B)/python/tsmref.so  the `tsmref` CPython extension (impl/python/:
#                    the capsule protocol, tsmref_py.c, and the DLPack 1.3 exchange
#                    table, exchange_api.c)
#   python           builds it (phony; `all` builds it too)
#   interop          runs every capsule-level case ($(PY_CASES): cases/dlpack/python and the
#                    peers' own tests translated, cases/peers/numpy and pytorch) for
#                    every producer x consumer pair of the peers, one module each in
#                    harness/python/peers/ (tsmref, jax, mlx, numpy, onnxruntime,
#                    tvm-ffi; TSM_CTS_PEERS adds a user's), writes $(INTEROP_REPORT)
#                    and prints the matrix; non-zero exit on any unexpected result.
#                    INTEROP_FLAGS=--large adds `large`; --peers a,b picks peers.
#   interop-system   the same cases in Debian's /usr/bin/python3 for every pair of
#                    {tsmref, numpy 1.24, torch 1.13} (Debian's python3-numpy and
#                    python3-torch), the extension built for it into $(B)/python-system;
#                    writes $(B)/report/interop-system.json (lane interop-system)
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
PYTHON_EXT_DEPS := $(PYTHON_EXT_SRCS) impl/python/tsmref_py.h impl/include/tsmref.h
PYTHON_EXT_CFLAGS := $(CSTD) $(WARN) $(OPT) -fPIC -fvisibility=hidden
PYTHON_BRIDGE_ENV := PYTHONPATH=$(B)/python:harness/python JAX_PLATFORMS=cpu \
  TSM_CTS_BUILD=$(B)
INTEROP_FLAGS ?=
PY_CASES := cases/dlpack/python cases/peers/numpy cases/peers/pytorch

ALL_TARGETS += $(PYTHON_EXT)

FUZZ_CAPSULES_EXAMPLES ?= 2000
FUZZ_CAPSULES_JSON ?=

.PHONY: python interop interop-selftest bench-python fuzz-capsules-check fuzz-capsules

python: $(PYTHON_EXT)

# The extension for interpreter $(2) into $(1), with that interpreter's headers: one
# command over the sources, whose headers the rules list (PYTHON_EXT_DEPS).
python_ext_build = $(CC) $(PYTHON_EXT_CFLAGS) -Iimpl/include -I"$$(cat $(DLPACK_V1_INC_FILE))" \
  -I"$$($(2) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
  -shared -o $(1) $(PYTHON_EXT_SRCS) -L$(dir $(TSMREF_LIB)) -ltsmref -Wl,-rpath,'$$ORIGIN/../lib'

$(PYTHON_EXT): $(PYTHON_EXT_DEPS) $(TSMREF_LIB) $(VENV_STAMP) $(DLPACK_V1_INC_FILE)
	@mkdir -p $(@D)
	$(call python_ext_build,$@,$(VENV_PY))

# The bridge reads cases through the judge's front end (tsm-cts parse --json).
INTEROP_REPORT := $(B)/report/interop.json
interop: $(PYTHON_EXT) $(TSM_CTS)
	@mkdir -p $(dir $(INTEROP_REPORT))
	$(PYTHON_BRIDGE_ENV) $(VENV_PY) harness/python/bridge.py run --profile standard \
	  $(INTEROP_FLAGS) --json $(INTEROP_REPORT) $(PY_CASES)

interop-selftest: $(PYTHON_EXT) $(TSM_CTS)
	$(PYTHON_BRIDGE_ENV) $(VENV_PY) harness/python/test_bridge.py

fuzz-capsules-check: $(PYTHON_EXT)
	$(PYTHON_BRIDGE_ENV) $(VENV_PY) harness/python/fuzz_capsules.py --derandomize \
	  --examples $(FUZZ_CAPSULES_EXAMPLES)

fuzz-capsules: $(PYTHON_EXT)
	$(PYTHON_BRIDGE_ENV) $(VENV_PY) harness/python/fuzz_capsules.py --seconds $(FUZZ_SECONDS) \
	  $(if $(FUZZ_CAPSULES_JSON),--json $(FUZZ_CAPSULES_JSON))

# ---- the system matrix -------------------------------------------------------------------
# The same capsule cases in Debian's own interpreter, $(SYSTEM_PY) (not the .venv's):
# the versions users of Debian 12 run. Peers: the reference (its extension built for that
# interpreter into $(B)/python-system), Debian's python3-numpy (1.24) and python3-torch
# (1.13: legacy capsules, Tensor.__dlpack__(stream) and torch.utils.dlpack.from_dlpack
# without max_version); their deviations are in harness/expectations/python-torch.txt.
# PYTHONNOUSERSITE keeps a user's pip packages from standing in for Debian's.
SYSTEM_PY := /usr/bin/python3
SYSTEM_PYTHON_EXT := $(B)/python-system/tsmref.so
SYSTEM_PEERS := tsmref,numpy,torch
SYSTEM_PY_MODULES := /usr/lib/python3/dist-packages/numpy/__init__.py \
  /usr/lib/python3/dist-packages/torch/__init__.py
SYSTEM_BRIDGE_ENV := PYTHONPATH=$(B)/python-system:harness/python PYTHONNOUSERSITE=1 \
  TSM_CTS_BUILD=$(B)

$(eval $(call debian_dep,/usr/bin/python3-config,python3-dev))
$(eval $(call debian_dep,/usr/lib/python3/dist-packages/numpy/__init__.py,python3-numpy))
$(eval $(call debian_dep,/usr/lib/python3/dist-packages/torch/__init__.py,python3-torch))

$(SYSTEM_PYTHON_EXT): $(PYTHON_EXT_DEPS) $(TSMREF_LIB) $(DLPACK_V1_INC_FILE) /usr/bin/python3-config
	@mkdir -p $(@D)
	$(call python_ext_build,$@,$(SYSTEM_PY))

.PHONY: interop-system
interop-system: $(SYSTEM_PYTHON_EXT) $(TSM_CTS) $(SYSTEM_PY_MODULES)
	@mkdir -p $(B)/report
	$(SYSTEM_BRIDGE_ENV) $(SYSTEM_PY) harness/python/bridge.py run --peers $(SYSTEM_PEERS) \
	  --profile standard \
	  --expectations harness/expectations/python-system $(INTEROP_FLAGS) \
	  --json $(B)/report/interop-system.json $(PY_CASES)

ALL_TARGETS += $(SYSTEM_PYTHON_EXT)

bench-python: $(PYTHON_EXT)
	$(PYTHON_BRIDGE_ENV) $(VENV_PY) harness/python/bench_capsule.py
