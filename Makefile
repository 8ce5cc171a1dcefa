# tsm-cts top-level build. `make` builds everything into $(BUILD), installing nothing;
# `make deps` installs what the build takes from Debian and PyPI (deps.mk); `make run`
# runs the default tier of the case library and the interop matrix against the reference
# implementation (`make run-large`: the large tier too), `make check` runs every lane,
# both after `make deps`; `make install PREFIX=...` installs a judge that runs alone. Each fragment (*.mk) owns its folder's
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
# NAME:TARGET:REPORT per third party judged through a C adapter: `make TARGET` writes its
# JSON report REPORT, which README's third-party table counts (report.mk). An adapter's
# fragment adds its one line.
THIRD_PARTIES :=
# The profile of every judgement of the reference and of the suite's own checks: strict,
# where a broken TSM clause (the suite's own stricter rule) fails like a MUST
# (spec/README.md, "Strengths"). A third party's lane names its profiles itself
# (judge_third_party below): standard, what the sources require, with strict beside it.
export TSM_CTS_PROFILE ?= strict

# A third party's C adapter on cases: $(1) the adapter, $(2) the JSON report of the
# standard profile (the strict one beside it, $(2:.json=-strict.json), its TAP
# $(2:.json=-strict.tap)), $(3) more options and the cases. Both runs are --strict about
# stale expectation lines; the standard run's TAP goes to stdout.
define judge_third_party
rc=0; $(TSM_CTS) run --adapter $(1) --profile strict --strict -j $$(nproc) --no-summary \
  --json $(2:.json=-strict.json) $(3) >$(2:.json=-strict.tap) || \
  { rc=1; echo "# the strict profile failed: $(2:.json=-strict.tap)"; \
    grep -A12 '^not ok' $(2:.json=-strict.tap) | grep -v 'TODO XFail' | head -n 40; }; \
$(TSM_CTS) run --adapter $(1) --profile standard --strict -j $$(nproc) --json $(2) $(3) || rc=1; \
exit $$rc
endef

# The library version has one source, the TSMREF_VERSION_* macros of tsmref.h; the .pc
# file takes it from here (harness/tests/check_versions.sh checks that they agree).
TSMREF_VERSION := $(shell sed -n 's/^\#define TSMREF_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$$/\2/p' \
  impl/include/tsmref.h | paste -sd.)

.PHONY: all run run-large check install clean bench mutants versions generated
all: all-targets

include deps.mk
include impl/impl.mk
include harness/harness.mk
include harness/adapters/example/example.mk
include harness/adapters/ggml/ggml.mk
include harness/adapters/tvm-ffi/tvm-ffi.mk
include harness/adapters/libtorch/libtorch.mk
include harness/tests/tests.mk
include bench/bench.mk
include python.mk
include mutants.mk
include fuzz.mk
include report.mk
include wheel.mk

all-targets: $(ALL_TARGETS)

REPORT := $(B)/report
# The default tier leaves out the cases tagged large (the full-size IREE seed alone takes
# about two hours on a CPU-only machine); `make run-large` (LARGE=1) runs them too.
LARGE ?= 0
LARGE_FLAG := $(if $(filter 1,$(LARGE)),--large)
# The main job: every case of the tier, every available device, the reference, then the
# Python interop matrix; both reports merged into one JSON, JUnit and summary; then the
# HTML page of both, $(REPORT)/index.html (report.mk).
run: deps
	@$(MAKE) --no-print-directory all
	@mkdir -p $(REPORT)
	@echo "tsm-cts: the case library ($(if $(LARGE_FLAG),large,default) tier); TAP in $(REPORT)/results.tap"
	@$(TSM_CTS) run --adapter $(TSMREF_ADAPTER) $(LARGE_FLAG) -j $$(nproc) --no-summary \
	  --json $(REPORT)/results.json cases >$(REPORT)/results.tap; rc=$$?; \
	$(MAKE) --no-print-directory interop INTEROP_FLAGS="$(LARGE_FLAG) $(INTEROP_FLAGS)" \
	  >$(REPORT)/interop.txt || rc=1; \
	$(TSM_CTS) merge --json $(REPORT)/all.json --junit $(REPORT)/junit.xml \
	  $(REPORT)/results.json $(REPORT)/interop.json || rc=1; \
	echo "TAP: $(REPORT)/results.tap; interop matrix: $(REPORT)/interop.txt"; \
	$(MAKE) --no-print-directory report || rc=1; exit $$rc

run-large:
	@$(MAKE) --no-print-directory run LARGE=1

check: deps
	CC="$(CC)" bash ci/check.sh

# cases/generated/: the cases that give every cell of the clause x kind matrix that a
# combination reaches at least two cases (`tsm-cts coverage --kinds`), rewritten from the
# statement table, the generator and the hand-written cases (`tsm-cts library`); commit
# the result. Lane generated (harness/tests/check_generated.sh) fails when it is stale.
generated: $(TSM_CTS) $(TSMREF_ADAPTER)
	$(TSM_CTS) library --adapter $(TSMREF_ADAPTER) cases/generated

# The versions (spec, adapter ABI, library) against their single sources.
versions: $(TSMREF_PC) $(TSM_CTS) $(TSMREF_ADAPTER)
	bash harness/tests/check_versions.sh $(B)

# The judge stands alone once installed: it finds share/tsm-cts/{spec,cases,expectations}
# beside its own path (or through --spec, --cases, $TSM_CTS_SPEC, $TSM_CTS_CASES), and an
# adapter author compiles against tsm-cts.pc (harness/tests/check_install.sh does both).
# Its man page is its --help text.
SHARE := $(DESTDIR)$(PREFIX)/share/tsm-cts
ADAPTER_ABI := $(shell sed -n 's/^\#define TSM_ADAPTER_ABI_\(MAJOR\|MINOR\) \([0-9]*\)$$/\2/p' \
  harness/include/tsm/adapter.h | paste -sd.)
tsm_cts_pc = printf '%s\n' 'prefix=$(1)' 'includedir=$${prefix}/include' \
  'judge=$${prefix}/bin/tsm-cts' 'datadir=$${prefix}/share/tsm-cts' '' 'Name: tsm-cts' \
  'Description: scoped tensor memory conformance suite: the adapter ABI (tsm/adapter.h)' \
  'Version: $(ADAPTER_ABI)' 'Cflags: -I$${includedir}' > $(2)

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/include/tsm $(DESTDIR)$(PREFIX)/lib/pkgconfig $(SHARE)/expectations
	install -m 0644 harness/include/tsm/adapter.h $(DESTDIR)$(PREFIX)/include/tsm/
	install -m 0755 $(TSM_CTS) $(DESTDIR)$(PREFIX)/bin/
	rm -rf $(SHARE)/spec $(SHARE)/cases $(SHARE)/schema
	cp -R spec cases harness/schema $(SHARE)/
	install -m 0644 harness/expectations/*.txt $(SHARE)/expectations/
	$(call tsm_cts_pc,$(PREFIX),$(DESTDIR)$(PREFIX)/lib/pkgconfig/tsm-cts.pc)
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	{ printf '.TH TSM-CTS 1 "" "tsm-cts" "User Commands"\n.SH NAME\ntsm-cts \\- %s\n' \
	    'scoped tensor memory conformance judge'; printf '.SH SYNOPSIS\n.nf\n'; \
	  $(TSM_CTS) --help | sed 's/\\/\\e/g; s/^[.'"'"']/\\\&&/'; printf '.fi\n'; } \
	  > $(DESTDIR)$(PREFIX)/share/man/man1/tsm-cts.1
	$(MAKE) --no-print-directory install-impl

clean:
	rm -rf $(BUILD)

-include $(DEPS)

# The GPU lanes (ci/check-gpu.sh): every case on cuda:0, compute-sanitizer memcheck and
# racecheck; on a machine without an NVIDIA GPU it says so and exits 1. SIMULATE=1
# rehearses the lanes that need no GPU tool on the reference's cuda-sim:0 (the CPU).
.PHONY: check-gpu
check-gpu: deps
	bash ci/check-gpu.sh
