# bench/bench.mk: micro-benchmarks of libtsmref. `make bench` builds and runs them;
# the binary is built by `all` but never run by `run` or `check`.
#   $(BENCH_MANAGERS)  $(B)/bin/bench-managers
#   $(BENCH_DLPACK)    $(B)/bin/bench-dlpack  (DLPack C ABI round trip, spec/dlpack.md)
#   $(BENCH_GRAPHS)    $(B)/bin/bench-graphs  (graph planner vs liveness bound, spec/graphs.md)

BENCH_MANAGERS := $(B)/bin/bench-managers
BENCH_OBJ := $(B)/obj/bench/bench_managers.o

ALL_TARGETS += $(BENCH_MANAGERS)
DEPS += $(BENCH_OBJ:.o=.d)

$(BENCH_OBJ): bench/bench_managers.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread -Iimpl/include -c $< -o $@

$(BENCH_MANAGERS): $(BENCH_OBJ) $(TSMREF_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $(BENCH_OBJ) -L$(B)/lib -ltsmref -Wl,-rpath,'$$ORIGIN/../lib' \
	  $(LDFLAGS_ALL) -pthread

BENCH_DLPACK := $(B)/bin/bench-dlpack
BENCH_DLPACK_OBJ := $(B)/obj/bench/bench_dlpack.o

ALL_TARGETS += $(BENCH_DLPACK)
DEPS += $(BENCH_DLPACK_OBJ:.o=.d)

# Against the DLPack 1.x header of apache-tvm-ffi (deps.mk), like libtsmref.
$(BENCH_DLPACK_OBJ): bench/bench_dlpack.c | $(DLPACK_V1_INC_FILE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread -Iimpl/include -I"$$(cat $(DLPACK_V1_INC_FILE))" \
	  -c $< -o $@

$(BENCH_DLPACK): $(BENCH_DLPACK_OBJ) $(TSMREF_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $(BENCH_DLPACK_OBJ) -L$(B)/lib -ltsmref -Wl,-rpath,'$$ORIGIN/../lib' \
	  $(LDFLAGS_ALL) -pthread

BENCH_GRAPHS := $(B)/bin/bench-graphs
BENCH_GRAPHS_OBJ := $(B)/obj/bench/bench_graphs.o

ALL_TARGETS += $(BENCH_GRAPHS)
DEPS += $(BENCH_GRAPHS_OBJ:.o=.d)

$(BENCH_GRAPHS_OBJ): bench/bench_graphs.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread -Iimpl/include -c $< -o $@

$(BENCH_GRAPHS): $(BENCH_GRAPHS_OBJ) $(TSMREF_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $(BENCH_GRAPHS_OBJ) -L$(B)/lib -ltsmref -Wl,-rpath,'$$ORIGIN/../lib' \
	  $(LDFLAGS_ALL) -pthread

bench: $(BENCH_MANAGERS) $(BENCH_DLPACK) $(BENCH_GRAPHS)
	$(BENCH_MANAGERS)
	$(BENCH_DLPACK)
	$(BENCH_GRAPHS)
