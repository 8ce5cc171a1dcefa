# harness/adapters/tvm-ffi/tvm-ffi.mk: builds the tvm-ffi adapter, $(TVMFFI_ADAPTER),
# which judges apache-tvm-ffi's C-level DLPack conversion (README.md beside this file).
# Included by the top-level Makefile after deps.mk, which provides VENV_STAMP, VENV_PY
# and PIP_PINS.
#
#   $(TVMFFI_ADAPTER)  $(B)/lib/tvmffi_adapter.so (`all` builds it)
#   tvmffi-check       builds it and the judge and runs cases/dlpack against it with
#                      harness/expectations/tvm-ffi.txt (--strict: a stale line fails
#                      too), TAP on stdout, JSON in $(TVMFFI_REPORT) (README's
#                      third-party table counts it); non-zero on any unexpected result.
#                      Lane tvm-ffi-adapter of `make check`.
#
# The headers (tvm/ffi/c_api.h, its bundled dlpack/dlpack.h) and libtvm_ffi.so are the
# pinned PyPI wheel's in $(VENV), found through tvm_ffi.libinfo at build time, never
# vendored. The adapter carries an rpath to the wheel's lib folder, so the judge's
# forked children load libtvm_ffi.so without LD_LIBRARY_PATH. The manager slots are the
# shared layer of harness/adapters/common (adapter_mgr.mk), linked in.

include harness/adapters/common/adapter_mgr.mk

TVMFFI_ADAPTER := $(B)/lib/tvmffi_adapter.so
TVMFFI_OBJ := $(B)/obj/harness/adapters/tvm-ffi/tvmffi_adapter.o
# Two lines: the wheel's include folder, then the folder of libtvm_ffi.so.
TVMFFI_PATHS := $(B)/deps/tvmffi_paths
TVMFFI_PIN := $(filter apache-tvm-ffi==%,$(PIP_PINS))
TVMFFI_LOCATE := import os, tvm_ffi.libinfo as l; \
  print(l.find_include_path()); print(os.path.dirname(l.find_libtvm_ffi()))

$(TVMFFI_PATHS): | $(VENV_STAMP)
	@mkdir -p $(@D)
	@$(VENV_PY) -c '$(TVMFFI_LOCATE)' >$@.tmp 2>/dev/null && \
	  inc=$$(sed -n 1p $@.tmp) && lib=$$(sed -n 2p $@.tmp) && \
	  [ -f "$$inc/tvm/ffi/c_api.h" ] && [ -f "$$lib/libtvm_ffi.so" ] || \
	  { rm -f $@.tmp; echo "missing the C API of the PyPI package $(TVMFFI_PIN)" \
	    "(tvm/ffi/c_api.h and libtvm_ffi.so through tvm_ffi.libinfo in $(VENV)); run 'make deps'" >&2; \
	    exit 1; }
	@mv $@.tmp $@

$(TVMFFI_OBJ): harness/adapters/tvm-ffi/tvmffi_adapter.c $(TVMFFI_PATHS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Iharness/include $(ADAPTER_MGR_CFLAGS) -I"$$(sed -n 1p $(TVMFFI_PATHS))" \
	  -c $< -o $@

$(TVMFFI_ADAPTER): $(TVMFFI_OBJ) $(ADAPTER_MGR_OBJ) $(TVMFFI_PATHS)
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS_ALL) -o $@ $(TVMFFI_OBJ) $(ADAPTER_MGR_OBJ) \
	  -L"$$(sed -n 2p $(TVMFFI_PATHS))" -ltvm_ffi -Wl,-rpath,"$$(sed -n 2p $(TVMFFI_PATHS))"

TVMFFI_REPORT := $(B)/report/tvmffi.json
THIRD_PARTIES += tvm-ffi:tvmffi-check:$(TVMFFI_REPORT)
.PHONY: tvmffi-check
tvmffi-check: $(TVMFFI_ADAPTER) $(TSM_CTS)
	@mkdir -p $(dir $(TVMFFI_REPORT))
	@$(call judge_third_party,$(TVMFFI_ADAPTER),$(TVMFFI_REPORT),cases/dlpack)

ALL_TARGETS += $(TVMFFI_ADAPTER)
DEPS += $(TVMFFI_OBJ:.o=.d)
