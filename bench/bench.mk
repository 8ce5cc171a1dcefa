# bench/bench.mk: micro-benchmarks of libtsmref. `make bench` builds and runs them;
# the binary is built by `all` but never run by `run` or `check`.
#   $(BENCH_MANAGERS)  $(B)/bin/bench-managers

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

bench: $(BENCH_MANAGERS)
	$(BENCH_MANAGERS)
