# tsm-cts top-level build. `make` builds everything into $(BUILD), installing nothing;
# `make deps` installs what the build takes from Debian and PyPI (deps.mk); `make run`
# runs the whole case library against the reference implementation and `make check`
# runs every lane, both after `make deps`. Each fragment (*.mk) owns its folder's
# targets and appends to ALL_TARGETS.

BUILD ?= build
B := $(BUILD)
PREFIX ?= /usr/local
NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)

WARN := -Wall -Wextra -Werror
CSTD := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
OPT ?= -O2 -g
SAN ?=
CFLAGS_ALL := $(CSTD) $(WARN) $(OPT) $(SAN) -fPIC -MMD -MP
LDFLAGS_ALL := $(SAN)

ALL_TARGETS :=
DEPS :=

# The library version has one source, the TSMREF_VERSION_* macros of tsmref.h; the .pc
# file takes it from here (harness/tests/check_versions.sh checks that they agree).
TSMREF_VERSION := $(shell sed -n 's/^\#define TSMREF_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$$/\2/p' \
  impl/include/tsmref.h | paste -sd.)

.PHONY: all run check install clean bench mutants versions
all: all-targets

include deps.mk
include impl/impl.mk
include harness/harness.mk
include harness/adapters/example/example.mk
include harness/tests/tests.mk
include bench/bench.mk
include python.mk
include mutants.mk

all-targets: $(ALL_TARGETS)

REPORT := $(B)/report
# `make run LARGE=0` leaves out the cases tagged large (the full-size IREE seed alone
# takes about two hours on a CPU-only machine).
LARGE ?= 1
# The main job: every case, every available device, the reference implementation.
run: deps
	@$(MAKE) --no-print-directory all
	@mkdir -p $(REPORT)
	$(TSM_CTS) run --adapter $(TSMREF_ADAPTER) $(if $(filter 1,$(LARGE)),--large) -j $$(nproc) \
	  --json $(REPORT)/results.json --junit $(REPORT)/junit.xml cases; rc=$$?; \
	$(MAKE) --no-print-directory interop \
	  INTEROP_FLAGS="$(if $(filter 1,$(LARGE)),--large) $(INTEROP_FLAGS)" || rc=1; exit $$rc

check: deps
	CC="$(CC)" bash ci/check.sh

# The versions (spec, adapter ABI, library) against their single sources.
versions: $(TSMREF_PC) $(TSM_CTS) $(TSMREF_ADAPTER)
	bash harness/tests/check_versions.sh $(B)

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/include/tsm $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 0644 harness/include/tsm/adapter.h $(DESTDIR)$(PREFIX)/include/tsm/
	install -m 0755 $(TSM_CTS) $(DESTDIR)$(PREFIX)/bin/
	$(MAKE) --no-print-directory install-impl

clean:
	rm -rf $(BUILD)

-include $(DEPS)
