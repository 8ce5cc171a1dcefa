# bench/bench.mk: micro-benchmarks of libtsmref, one program per bench/bench_NAME.c,
# built as $(B)/bin/bench-NAME. `make bench` builds and runs them, the capsule round
# trip (bench/bench_capsule.py) and two timings of the judge (bench/run_bench.sh),
# counts the instructions of bench-managers', bench-dlpack's and bench-xapi's loops and
# of bench-graphs' plans under callgrind where valgrind is installed
# (bench/count_instructions.sh), and writes
# $(B)/bench/results.json (bench/README.md); `all` builds them, `run` and `check` never
# run them.
#   bench-managers  managers, scopes, 2 threads (spec/managers.md, spec/scopes.md)
#   bench-dlpack    DLPack C ABI round trip (spec/dlpack.md)
#   bench-graphs    graph planner vs liveness bound (spec/graphs.md)
#   bench-iree      the IREE seed loop against a plain C loop (spec/dlpack.md)
#   bench-xapi      the DLPack 1.3 exchange table's round trip, from C (spec/dlpack.md;
#                   its own rule below: it embeds Python)

BENCH_SRCS := $(filter-out bench/bench_xapi.c,$(wildcard bench/bench_*.c))
BENCH_OBJS := $(patsubst bench/%.c,$(B)/obj/bench/%.o,$(BENCH_SRCS))
BENCH_BINS := $(patsubst bench/bench_%.c,$(B)/bin/bench-%,$(BENCH_SRCS))

ALL_TARGETS += $(BENCH_BINS)
DEPS += $(BENCH_OBJS:.o=.d)

# Static pattern rules: one recipe for every benchmark, and the objects stay (they are
# named targets, not intermediates). Every benchmark may include the DLPack 1.x header of apache-tvm-ffi (deps.mk), the
# one libtsmref is built against.
$(BENCH_OBJS): $(B)/obj/bench/%.o: bench/%.c | $(DLPACK_V1_INC_FILE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread -Iimpl/include -I"$$(cat $(DLPACK_V1_INC_FILE))" -c $< -o $@

$(BENCH_BINS): $(B)/bin/bench-%: $(B)/obj/bench/bench_%.o $(TSMREF_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $< -L$(B)/lib -ltsmref -Wl,-rpath,'$$ORIGIN/../lib' $(LDFLAGS_ALL) -pthread

# bench-xapi (bench/bench_xapi.c) calls the extension's exchange table from C, in an
# interpreter it embeds: the .venv's, for which the extension is built (python.mk).
# bench/python_embed.py writes, from that interpreter's sysconfig, where Python.h and
# libpython are ($(BENCH_XAPI_EMBED), shell assignments). Where the embedding library is
# missing (on Debian it comes with libpython3.X-dev, which python.mk's python3-dev
# brings with `make deps`), the program is built without Python: it names what is
# missing and writes its figure null, so that `all` and `bench` still succeed. One
# command compiles and links it, as planner-ggml.
BENCH_XAPI := $(B)/bin/bench-xapi
BENCH_XAPI_EMBED := $(B)/deps/python_embed.sh

$(BENCH_XAPI_EMBED): bench/python_embed.py $(VENV_STAMP)
	@mkdir -p $(@D)
	$(VENV_PY) bench/python_embed.py >$@

$(BENCH_XAPI): bench/bench_xapi.c $(BENCH_XAPI_EMBED) $(TSMREF_LIB) | $(DLPACK_V1_INC_FILE)
	@mkdir -p $(@D)
	. $(BENCH_XAPI_EMBED); \
	if [ -n "$$PY_MISSING" ]; then \
	  echo "bench-xapi: built without Python: missing $$PY_MISSING" >&2; \
	  $(CC) $(CFLAGS_ALL) -Iimpl/include -I"$$(cat $(DLPACK_V1_INC_FILE))" \
	    -DBENCH_XAPI_MISSING="\"$$PY_MISSING\"" $< -o $@ $(LDFLAGS_ALL); \
	else \
	  $(CC) $(CFLAGS_ALL) -pthread -Iimpl/include -I"$$(cat $(DLPACK_V1_INC_FILE))" \
	    -I"$$PY_INC" -DBENCH_XAPI_HOME="\"$$PY_HOME\"" $< -o $@ \
	    -L$(B)/lib -ltsmref -L"$$PY_LIBDIR" -l"$$PY_LIB" -Wl,-rpath,'$$ORIGIN/../lib' \
	    -Wl,-rpath,"$$PY_LIBDIR" $(LDFLAGS_ALL) -pthread; \
	fi

ALL_TARGETS += $(BENCH_XAPI)
DEPS += $(BENCH_XAPI).d

# The extension by path: python.mk, which names it PYTHON_EXT, is included after this file.
bench: $(BENCH_BINS) $(BENCH_XAPI) $(B)/python/tsmref.so $(TSM_CTS) $(TSMREF_ADAPTER) $(B)/bin/planner-ggml \
  $(B)/lib/ggml_adapter.so
	bash bench/run_bench.sh $(B) $(VENV_PY)

# `make bench-instructions`: the instruction figures of `make bench` alone (callgrind,
# bench/count_instructions.sh), written to $(B)/bench/instructions.jsonl and printed.
.PHONY: bench-instructions
bench-instructions: $(B)/bin/bench-managers $(B)/bin/bench-dlpack $(B)/bin/bench-graphs \
  $(BENCH_XAPI) $(B)/python/tsmref.so
	@mkdir -p $(B)/bench
	rm -f $(B)/bench/instructions.jsonl
	BENCH_JSON=$(B)/bench/instructions.jsonl bash bench/count_instructions.sh $(B) $(VENV_PY)

# `make bench-ggml`: ggml_gallocr's peak bytes against the reference planner's on the same
# graphs, both loaded through the adapter ABI (bench/planner_ggml.c), written to
# $(B)/bench/ggml-planner.json; apart from `make bench`, which needs no ggml.
PLANNER_GGML := $(B)/bin/planner-ggml

$(PLANNER_GGML): bench/planner_ggml.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Iharness/include -Iimpl/include $< -o $@ $(LDFLAGS_ALL) -ldl -lm

ALL_TARGETS += $(PLANNER_GGML)
DEPS += $(PLANNER_GGML).d

.PHONY: bench-ggml
bench-ggml: $(PLANNER_GGML) $(TSMREF_ADAPTER) $(GGML_ADAPTER)
	@mkdir -p $(B)/bench
	$(PLANNER_GGML) $(TSMREF_ADAPTER) $(GGML_ADAPTER) $(B)/bench/ggml-planner.json

# `make bench-fuzz-ttf`: the scenario fuzzer's time to find each mutant of ci/mutants
# (bench/fuzz_ttf.sh; TTF_CAP, TTF_SEEDS), written to $(B)/bench/fuzz-ttf.{json,md}.
.PHONY: bench-fuzz-ttf
bench-fuzz-ttf: $(TSM_CTS) $(TSMREF_ADAPTER) $(B)/fuzz/bin/scenario
	bash bench/fuzz_ttf.sh --build $(B)
