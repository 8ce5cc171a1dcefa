# deps.mk: what the build takes from Debian and PyPI, pinned, never vendored: the legacy
# DLPack header from Debian's libdlpack-dev (0.6), the DLPack 1.x header from the
# dlpack.h bundled in PyPI's apache-tvm-ffi (located through tvm_ffi.libinfo), the
# interop peers from PyPI; Debian's chromium for the report's browser check (report.mk,
# which declares it with debian_dep). Vendoring would freeze a copy that drifts from what users'
# packages ship; the suite must compile against the headers as packaged.
#
#   deps   installs what is missing: the Debian packages (apt-get, as root), the
#          project .venv with PIP_PINS (into an existing .venv, the pins it lacks), and
#          the wheel lane's wheelhouse ($(WHEELHOUSE), WHEEL_LANE_PINS).
#          `make run` and `make check` call it first. Nothing else installs anything:
#          any other target that lacks a dependency stops, naming the package and
#          `make deps`.
#   deps-torch  the newest torch from PyPI in its own venv, $(TORCH_VENV) (pinned;
#          5.4 GB with the CUDA libraries it depends on), for lane torch; not part of
#          deps.
#
# A fragment declares a file it takes from Debian with
#   $(eval $(call debian_dep,FILE,PACKAGE))
# which adds it to what `make deps` installs and gives FILE a rule that stops the build.

VENV := .venv
VENV_PY := $(VENV)/bin/python
# Present once `make deps` has created $(VENV) and installed the pins into it.
VENV_STAMP := $(VENV)/.tsm-cts-deps
# junitparser and jsonschema check the reports in `make check` (harness/tests/check_reports.sh);
# jinja2 and matplotlib write the HTML report and its SVG figures (report.mk); hypothesis
# drives the capsule fuzzer (harness/python/fuzz_capsules.py); libggml-python ships ggml's
# headers and shared libraries (ggml 0.20.2, CPU backend) for the ggml adapter
# (harness/adapters/ggml/ggml.mk locates them in the .venv); onnxruntime and mlx with
# mlx-cpu (its CPU backend on Linux) are peers of the interop matrix
# (harness/python/peers/; together 5 s and 118 MB of the .venv); lizard measures the
# C functions' length, cyclomatic complexity and parameters (lane metrics,
# harness/tests/check_metrics.py); scikit-build-core (with its pathspec) is the wheel's
# build backend (wheel.mk, pyproject.toml), used without build isolation so that
# `make wheel` fetches nothing.
PIP_PINS := numpy==2.4.6 apache-tvm-ffi==0.1.15.post2 jax==0.10.2 jaxlib==0.10.2 \
  junitparser==5.0.3 jsonschema==4.26.0 jinja2==3.1.6 matplotlib==3.11.2 hypothesis==6.170.17 \
  libggml-python==0.20.2.post1 onnxruntime==1.32.0 mlx==0.32.4 mlx-cpu==0.32.4 lizard==1.17.10 \
  scikit-build-core==1.1.2 pathspec==1.1.1
DLPACK_LEGACY_H := /usr/include/dlpack/dlpack.h
# A file holding the include folder of the DLPack 1.x header; compile rules read it.
DLPACK_V1_INC_FILE := $(B)/deps/dlpack_v1_include
# FILE=PACKAGE pairs, one per debian_dep.
DEBIAN_DEPS :=

define debian_dep
DEBIAN_DEPS += $(1)=$(2)
$(1):
	@echo "missing $(1): it comes from the Debian package $(2); run 'make deps'" >&2; exit 1
endef

$(eval $(call debian_dep,$(DLPACK_LEGACY_H),libdlpack-dev))

$(VENV_STAMP):
	@echo "missing $(VENV): the pinned PyPI packages ($(PIP_PINS)) go there; run 'make deps'" >&2
	@exit 1

$(DLPACK_V1_INC_FILE): | $(VENV_STAMP)
	@mkdir -p $(@D)
	$(VENV_PY) -c 'import tvm_ffi.libinfo as l; print(l.find_dlpack_include_path())' >$@
	@grep -q 'DLPACK_MAJOR_VERSION 1' "$$(cat $@)/dlpack/dlpack.h" || \
	  { echo "no DLPack 1.x header under $$(cat $@)" >&2; exit 1; }

.PHONY: deps deps-debian deps-venv deps-wheelhouse
deps: deps-debian deps-venv deps-wheelhouse

# apt-get as root; anyone else is told the command to run.
deps-debian:
	@missing=; for dep in $(DEBIAN_DEPS); do \
	  [ -e "$${dep%%=*}" ] || missing="$$missing $${dep#*=}"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq >/dev/null && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else \
	  echo "missing Debian packages:$$missing (as root: apt-get install$$missing)" >&2; exit 1; \
	fi

# An existing $(VENV) is never recreated: a pin it lacks or holds in another version is
# installed into it, alone (pip install PIN), and the stamp keeps its time, so that what
# was built against the .venv is not rebuilt. PIN_DIFF (python, argv: the pins) prints
# each pin the installed version differs from, one a line.
PIN_DIFF := import sys, importlib.metadata as m; \
  have = lambda n: next((d.version for d in m.distributions(name=n)), "none"); \
  print("\n".join(p for p in sys.argv[1:] if have(p.split("==")[0]) != p.split("==")[1]))
deps-venv:
	@if [ ! -e $(VENV_STAMP) ]; then \
	  command -v python3 >/dev/null || \
	    { echo "missing python3: install the Debian package python3-venv" >&2; exit 1; }; \
	  echo "creating $(VENV) with $(PIP_PINS)"; \
	  python3 -m venv $(VENV) && \
	  $(VENV_PY) -m pip install -q --disable-pip-version-check $(PIP_PINS) && \
	  touch $(VENV_STAMP) || exit 1; \
	fi
	@missing=$$($(VENV_PY) -c '$(PIN_DIFF)' $(PIP_PINS)) || exit 1; \
	if [ -n "$$missing" ]; then \
	  echo "installing into $(VENV): $$(echo $$missing)"; \
	  $(VENV_PY) -m pip install -q --disable-pip-version-check $$missing || exit 1; \
	  missing=$$($(VENV_PY) -c '$(PIN_DIFF)' $(PIP_PINS)); \
	  [ -z "$$missing" ] || { echo "$(VENV) still lacks: $$(echo $$missing)" >&2; exit 1; }; \
	fi

# The wheel lane (harness/tests/check_wheel.sh) installs the wheel into a fresh venv as a
# user would, from these files alone (pip --no-index): pytest and what it and the wheel
# need, at the .venv's versions. pins.txt records what is there.
WHEELHOUSE := $(VENV)/wheelhouse
WHEEL_LANE_PINS := pytest==9.2.0 iniconfig==2.3.1 pluggy==1.7.0 pygments==2.21.0 \
  packaging==26.4 numpy==2.4.6 ml_dtypes==0.6.0
deps-wheelhouse: deps-venv
	@if [ "$$(cat $(WHEELHOUSE)/pins.txt 2>/dev/null)" != "$(WHEEL_LANE_PINS)" ]; then \
	  echo "downloading into $(WHEELHOUSE): $(WHEEL_LANE_PINS)"; \
	  $(VENV_PY) -m pip download -q --disable-pip-version-check --no-deps -d $(WHEELHOUSE) \
	    $(WHEEL_LANE_PINS) && echo "$(WHEEL_LANE_PINS)" >$(WHEELHOUSE)/pins.txt; \
	fi

# Today's PyTorch (wheel.mk: torch-check, the torch-built libtorch adapter): the newest
# torch release on PyPI in a venv of its own, $(TORCH_VENV), which `make deps` leaves
# alone: PyPI's Linux wheel of torch is built for CUDA and depends on NVIDIA's libraries
# (539 MB to download for torch alone, 5.4 GB installed), and PyPI has no CPU-only torch
# (download.pytorch.org's index is not used). Every package of it pinned, as pip resolved
# torch==2.15.0 for Python 3.11 on x86_64 Linux; numpy and ml_dtypes for the bridge.
# Under .venv, so that what skips .venv (check_versions.sh's grep) skips it too.
TORCH_VENV := $(VENV)/torch
TORCH_PY := $(TORCH_VENV)/bin/python
TORCH_PINS := torch==2.15.0 numpy==2.4.6 ml_dtypes==0.6.0 \
  Jinja2==3.1.6 MarkupSafe==3.0.4 cuda-bindings==13.5.0 cuda-pathfinder==1.9.1 \
  cuda-toolkit==13.2.2 filelock==4.3.1 fsspec==2026.9.0 mpmath==1.3.0 networkx==3.6.1 \
  nvidia-cublas==13.4.1.3 nvidia-cuda-cccl==13.3.5.0.6 nvidia-cuda-cupti==13.2.86 \
  nvidia-cuda-nvrtc==13.2.86 nvidia-cuda-runtime==13.2.86 nvidia-cudnn-cu13==9.26.0.51 \
  nvidia-cufft==12.2.0.57 nvidia-cufile==1.17.1.22 nvidia-cusolver==12.2.0.11 \
  nvidia-cusparse==12.7.10.12 nvidia-cusparselt-cu13==0.8.1 nvidia-nccl-cu13==2.30.7 \
  nvidia-nvjitlink==13.5.37 nvidia-nvshmem-cu13==3.7.2 nvidia-nvtx==13.2.86 \
  setuptools==84.2.1 sympy==1.14.0 triton==3.9.0 typing_extensions==4.16.0
.PHONY: deps-torch
deps-torch:
	@[ -x $(TORCH_PY) ] || { echo "creating $(TORCH_VENV)"; python3 -m venv $(TORCH_VENV); } || exit 1
	@missing=$$($(TORCH_PY) -c '$(PIN_DIFF)' $(TORCH_PINS)) || exit 1; \
	if [ -n "$$missing" ]; then \
	  echo "installing into $(TORCH_VENV): $$(echo $$missing)"; \
	  $(TORCH_PY) -m pip install -q --disable-pip-version-check $(TORCH_PINS) || exit 1; \
	  missing=$$($(TORCH_PY) -c '$(PIN_DIFF)' $(TORCH_PINS)); \
	  [ -z "$$missing" ] || { echo "$(TORCH_VENV) still lacks: $$(echo $$missing)" >&2; exit 1; }; \
	fi
