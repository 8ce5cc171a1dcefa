# wheel.mk: the tsm-cts wheel (pyproject.toml, CMakeLists.txt; docs/python.md): the judge,
# the case library, the spec, the capsule bridge and its pytest plugin as the Python
# package tsm_cts (harness/python/tsm_cts). Included by the top-level Makefile after
# python.mk, which provides python_ext_build.
#
#   wheel            builds dist/tsm_cts-<spec version>-<python>-<platform>.whl with the
#                    .venv's scikit-build-core (pinned in deps.mk, no build isolation: nothing
#                    is fetched), whose CMake project runs wheel-payload in $(B)
#   wheel-payload    what the wheel holds that make builds: the judge, libtsmref, its
#                    adapter and the reference's extension for WHEEL_PY (default the .venv's
#                    python; CMakeLists.txt passes the interpreter that builds the wheel)
#   wheel-check      the wheel as a new user gets it: installed into a fresh venv outside
#                    the checkout, pytest with the plugin against numpy and against a peer
#                    module written there, the plugin's self-tests, the counts against the
#                    bridge's (harness/tests/check_wheel.sh; WHEEL_INTEROP_JSON: a report
#                    of `make interop` to compare with instead of a run of the bridge)
#   torch-check      today's PyTorch (the torch venv of `make deps-torch`) as a Python
#                    peer through the bridge, and ATen through $(TORCH_ADAPTER); says so
#                    and passes when that venv is absent (harness/tests/check_torch.sh);
#                    fails when $(TORCH_SUMMARY) is not its run's counts
#   torch-summary    rewrites $(TORCH_SUMMARY), the committed record of lane torch's counts
#                    that README's third-party table reads, from the reports the last
#                    torch-check left in $(B)/report (harness/report/third_parties.py)
#   $(TORCH_ADAPTER) $(B)/torch/libtorch_adapter.so: the libtorch adapter against the
#                    torch of $(TORCH_VENV) (not part of `all`)

WHEEL_PY ?= $(VENV_PY)
TORCH_SUMMARY := harness/expectations/torch-pypi/summary.json
WHEEL_DIST ?= dist
# The extension for WHEEL_PY, in a folder named after that interpreter's path, so that
# wheels for two interpreters do not share one build of it; beside $(B)/python, so that
# its rpath ($$ORIGIN/../lib, python.mk) finds libtsmref.so in the build folder as in the
# wheel (tsm_cts/python, tsm_cts/lib).
WHEEL_EXT := $(B)/python-for$(subst /,-,$(abspath $(WHEEL_PY)))/tsmref.so
WHEEL_INTEROP_JSON ?=

$(eval $(call debian_dep,/usr/bin/cmake,cmake))

.PHONY: wheel wheel-payload wheel-ext-path wheel-check torch-check torch-summary

$(WHEEL_EXT): $(PYTHON_EXT_DEPS) $(TSMREF_LIB) $(DLPACK_V1_INC_FILE)
	@mkdir -p $(@D)
	$(call python_ext_build,$@,$(WHEEL_PY))

wheel-ext-path:
	@echo $(abspath $(WHEEL_EXT))

wheel-payload: $(TSM_CTS) $(TSMREF_LIB) $(TSMREF_ADAPTER) $(WHEEL_EXT)

wheel: $(VENV_STAMP) /usr/bin/cmake
	@$(VENV_PY) -c 'import scikit_build_core' 2>/dev/null || \
	  { echo "missing scikit-build-core in $(VENV) (pinned in deps.mk): run 'make deps'" >&2; exit 1; }
	@mkdir -p $(WHEEL_DIST) && rm -f $(WHEEL_DIST)/tsm_cts-*.whl
	$(VENV_PY) -m pip wheel -q --no-build-isolation --no-deps --disable-pip-version-check \
	  -w $(WHEEL_DIST) -C cmake.define.TSM_CTS_BUILD=$(abspath $(B)) \
	  -C build-dir=$(abspath $(B))/wheel/cmake .
	@ls $(WHEEL_DIST)/tsm_cts-*.whl

wheel-check: $(VENV_STAMP)
	VENV_PY=$(VENV_PY) WHEELHOUSE=$(WHEELHOUSE) bash harness/tests/check_wheel.sh $(B) \
	  $(WHEEL_INTEROP_JSON)

# ATen's DLPack conversion of that torch: the libtorch adapter's source
# (harness/adapters/libtorch) compiled against the headers and linked against the
# libraries of the wheel in $(TORCH_VENV) (its ATen needs C++20), with an rpath to them.
TORCH_DIR = $(firstword $(wildcard $(TORCH_VENV)/lib/python3*/site-packages/torch))
TORCH_ADAPTER := $(B)/torch/libtorch_adapter.so
TORCH_ADAPTER_OBJ := $(B)/torch/libtorch_adapter.o

$(TORCH_ADAPTER_OBJ): $(LIBTORCH_DIR)/libtorch_adapter.cpp
	@[ -n "$(TORCH_DIR)" ] || { echo "no torch in $(TORCH_VENV): run 'make deps-torch'" >&2; exit 1; }
	@mkdir -p $(@D)
	$(LIBTORCH_CXX) $(filter-out -std=c++17,$(LIBTORCH_CXXFLAGS)) -std=c++20 -Iharness/include \
	  $(ADAPTER_MGR_CFLAGS) -isystem $(TORCH_DIR)/include \
	  -isystem $(TORCH_DIR)/include/torch/csrc/api/include -c $< -o $@

# The entry point again, against the wheel's torch/version.h, so that the adapter names the
# ATen it runs (its report's version).
TORCH_ENTRY_OBJ := $(B)/torch/libtorch_entry.o
$(TORCH_ENTRY_OBJ): $(LIBTORCH_DIR)/libtorch_entry.c
	@[ -n "$(TORCH_DIR)" ] || { echo "no torch in $(TORCH_VENV): run 'make deps-torch'" >&2; exit 1; }
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Iharness/include $(ADAPTER_MGR_CFLAGS) -isystem $(TORCH_DIR)/include \
	  -DLT_ATEN_ORIGIN='"PyPI'"'"'s torch wheel"' -c $< -o $@

$(TORCH_ADAPTER): $(TORCH_ADAPTER_OBJ) $(TORCH_ENTRY_OBJ) $(ADAPTER_MGR_OBJ)
	$(LIBTORCH_CXX) -shared $(LDFLAGS_ALL) -o $@ $^ -L$(TORCH_DIR)/lib -ltorch_cpu -lc10 \
	  -Wl,-rpath,$(abspath $(TORCH_DIR))/lib

torch-check:
	VENV_PY=$(VENV_PY) TORCH_PY=$(TORCH_PY) bash harness/tests/check_torch.sh $(B)

# The committed record of lane torch's counts (harness/expectations/torch-pypi/summary.json),
# which README's third-party table reads, from the reports the last torch-check wrote.
torch-summary: | $(VENV_STAMP)
	$(VENV_PY) harness/report/third_parties.py --torch-summary $(TORCH_SUMMARY) \
	  --torch-interop $(B)/report/interop-torch.json \
	  --torch-adapter $(B)/report/libtorch-pypi.json --write-torch-summary
