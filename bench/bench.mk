# bench/bench.mk: micro-benchmarks of libtsmref. `make bench` builds and runs them;
# the binary is built by `all` but never run by `run` or `check`.
#   $(BENCH_MANAGERS)  $(B)/bin/bench-managers
#   $(BENCH_DLPACK)    $(B)/bin/bench-dlpack  (DLPack C ABI round trip, spec/dlpack.md)

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

bench: $(BENCH_MANAGERS) $(BENCH_DLPACK)
	$(BENCH_MANAGERS)
	$(BENCH_DLPACK)
