# deps.mk: what the build takes from Debian and PyPI, pinned, installed on demand.
# Never vendored (DEVELOPERS.md): the legacy DLPack header comes from Debian's
# libdlpack-dev (0.6), the DLPack 1.x header from the dlpack.h bundled in PyPI's
# apache-tvm-ffi (located through tvm_ffi.libinfo), the interop peers from PyPI.

VENV := .venv
VENV_PY := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.tsm-cts-deps
PIP_PINS := numpy==2.4.6 apache-tvm-ffi==0.1.15.post2 jax==0.10.2 jaxlib==0.10.2
DLPACK_LEGACY_H := /usr/include/dlpack/dlpack.h
# A file holding the include folder of the DLPack 1.x header; compile rules read it.
DLPACK_V1_INC_FILE := $(B)/deps/dlpack_v1_include

# Installs a Debian package when its file is missing: as root with apt-get, else a
# message naming the package.
define apt_install
	@if [ ! -e $(1) ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian package $(2) (for $(1))"; \
	    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; \
	  else \
	    echo "missing $(1): install the Debian package $(2) (apt-get install $(2))" >&2; exit 1; \
	  fi; \
	fi
endef

$(DLPACK_LEGACY_H):
	$(call apt_install,$@,libdlpack-dev)

$(VENV_STAMP): deps.mk
	@command -v python3 >/dev/null || { echo "missing python3: install the Debian package python3-venv" >&2; exit 1; }
	python3 -m venv $(VENV)
	$(VENV_PY) -m pip install -q --disable-pip-version-check $(PIP_PINS)
	touch $@

$(DLPACK_V1_INC_FILE): $(VENV_STAMP)
	@mkdir -p $(@D)
	$(VENV_PY) -c 'import tvm_ffi.libinfo as l; print(l.find_dlpack_include_path())' >$@
	@grep -q 'DLPACK_MAJOR_VERSION 1' "$$(cat $@)/dlpack/dlpack.h" || \
	  { echo "no DLPack 1.x header under $$(cat $@)" >&2; exit 1; }

.PHONY: deps
deps: $(DLPACK_LEGACY_H) $(DLPACK_V1_INC_FILE)
