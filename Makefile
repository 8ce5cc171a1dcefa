# tsm-cts top-level build. `make` builds everything into $(BUILD); `make run` runs the
# whole case library against the reference implementation; `make check` runs every lane.
# Each fragment (*.mk) owns its folder's targets and appends to ALL_TARGETS.

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

.PHONY: all run check install clean bench mutants
all: all-targets

include deps.mk
include impl/impl.mk
include harness/harness.mk
include harness/adapters/example/example.mk
include harness/tests/tests.mk
include bench/bench.mk
include python.mk
include mutants.mk
include fuzz.mk

all-targets: $(ALL_TARGETS)

REPORT := $(B)/report
# `make run LARGE=0` leaves out the cases tagged large (the full-size IREE seed alone
# takes about two hours on a CPU-only machine).
LARGE ?= 1
# The main job: every case, every available device, the reference implementation.
run: all
	@mkdir -p $(REPORT)
	$(TSM_CTS) run --adapter $(TSMREF_ADAPTER) $(if $(filter 1,$(LARGE)),--large) -j $$(nproc) \
	  --json $(REPORT)/results.json --junit $(REPORT)/junit.xml cases; rc=$$?; \
	$(MAKE) --no-print-directory interop \
	  INTEROP_FLAGS="$(if $(filter 1,$(LARGE)),--large) $(INTEROP_FLAGS)" || rc=1; exit $$rc

check:
	CC="$(CC)" bash ci/check.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/include/tsm $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 0644 harness/include/tsm/adapter.h $(DESTDIR)$(PREFIX)/include/tsm/
	install -m 0755 $(TSM_CTS) $(DESTDIR)$(PREFIX)/bin/
	$(MAKE) --no-print-directory install-impl

clean:
	rm -rf $(BUILD)

-include $(DEPS)
