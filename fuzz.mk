# fuzz.mk: the fuzz targets of fuzz/ (fuzz/README.md). Each target is one file with
# LLVMFuzzerTestOneInput, linked with the judge's libraries but cli's (as test-model
# is) and with one engine:
#   FUZZ_ENGINE=standalone (default, any compiler): fuzz/standalone.c replays files and
#     folders and generates -runs=N inputs from -seed=S. Built by `all` as
#     $(B)/fuzz/bin/<target>; the fuzz-replay lane of `make check` runs them built
#     with ASan+UBSan.
#   FUZZ_ENGINE=libfuzzer: $(LIB_FUZZING_ENGINE) (default -fsanitize=fuzzer), clang.
# `make fuzz FUZZ_SECONDS=N` builds the libFuzzer targets with ASan+UBSan into
# $(FUZZ_LF_BUILD) and fuzzes each for N seconds with its corpus under build/fuzz/,
# then runs the Hypothesis target capsules (python.mk, fuzz-capsules) for N seconds.

FUZZ_TARGETS := parse dlpack-consume planner scenario
FUZZ_ENGINE ?= standalone
LIB_FUZZING_ENGINE ?= -fsanitize=fuzzer
FUZZ_SECONDS ?= 60
FUZZ_DIR := build/fuzz
FUZZ_LF_BUILD := $(FUZZ_DIR)/libfuzzer
FUZZ_LF_SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_BIN := $(B)/fuzz/bin
FUZZ_OBJ := $(B)/obj/fuzz
FUZZ_CFLAGS = $(CFLAGS_ALL) $(HARNESS_ALL_INC) -Ifuzz \
  -DFUZZ_DEFAULT_ADAPTER='"$(abspath $(TSMREF_ADAPTER))"'
FUZZ_COMMON_OBJ := $(FUZZ_OBJ)/fuzz_common.o $(if $(filter standalone,$(FUZZ_ENGINE)),$(FUZZ_OBJ)/standalone.o)
FUZZ_ENGINE_LD := $(if $(filter standalone,$(FUZZ_ENGINE)),,$(LIB_FUZZING_ENGINE))

fuzz_obj_parse := $(FUZZ_OBJ)/fuzz_parse.o
fuzz_obj_dlpack-consume := $(FUZZ_OBJ)/fuzz_dlpack.o $(FUZZ_OBJ)/fuzz_dl_forms.o
fuzz_obj_planner := $(FUZZ_OBJ)/fuzz_planner.o $(FUZZ_OBJ)/fuzz_episode.o
fuzz_obj_scenario := $(FUZZ_OBJ)/fuzz_scenario.o $(FUZZ_OBJ)/fuzz_episode.o
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_BIN)/%)

ALL_TARGETS += $(FUZZ_BINS)
DEPS += $(patsubst %.o,%.d,$(FUZZ_COMMON_OBJ) $(foreach t,$(FUZZ_TARGETS),$(fuzz_obj_$(t))))

$(FUZZ_OBJ)/%.o: fuzz/%.c
	@mkdir -p $(@D)
	$(CC) $(FUZZ_CFLAGS) -c $< -o $@

# The versioned form's header comes from apache-tvm-ffi (deps.mk).
$(FUZZ_OBJ)/fuzz_dl_forms.o: fuzz/fuzz_dl_forms.c | $(DLPACK_V1_INC_FILE) $(DLPACK_LEGACY_H)
	@mkdir -p $(@D)
	$(CC) $(FUZZ_CFLAGS) -I"$$(cat $(DLPACK_V1_INC_FILE))" -c $< -o $@

define fuzz_link
$(FUZZ_BIN)/$(1): $(fuzz_obj_$(1)) $(FUZZ_COMMON_OBJ) $(HARNESS_JUDGE_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_ALL) $(FUZZ_ENGINE_LD) -pthread $$(filter %.o,$$^) $(HARNESS_LIBS) -o $$@ -ldl -lm
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call fuzz_link,$(t))))

.PHONY: fuzz fuzz-bins fuzz-libfuzzer fuzz-replay fuzz-bench
fuzz-bins: $(FUZZ_BINS)

fuzz-libfuzzer:
	$(MAKE) --no-print-directory BUILD=$(FUZZ_LF_BUILD) CC=clang SAN="$(FUZZ_LF_SAN)" \
	  FUZZ_ENGINE=libfuzzer fuzz-bins $(FUZZ_LF_BUILD)/lib/tsmref_adapter.so

# Seeds: the case library and the malformed cases of harness/tests/malformed for parse
# (read in place, never copied); the others start from their committed findings and grow
# their corpus under build/fuzz/corpus/.
fuzz_seeds_parse := cases harness/tests/malformed

fuzz: fuzz-libfuzzer
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/artifacts/$$t; \
	  dict=; [ -f fuzz/$$t.dict ] && dict=-dict=fuzz/$$t.dict; \
	  seeds=; [ "$$t" = parse ] && seeds=$(fuzz_seeds_parse); \
	  echo "=== fuzz $$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_LF_BUILD)/fuzz/bin/$$t -max_total_time=$(FUZZ_SECONDS) $$dict \
	    -artifact_prefix=$(FUZZ_DIR)/artifacts/$$t/ -print_final_stats=1 \
	    $(FUZZ_DIR)/corpus/$$t $$seeds 2>&1 | tail -n 14 || exit 1; \
	done
	@echo "=== fuzz capsules for $(FUZZ_SECONDS) s"
	@$(MAKE) --no-print-directory fuzz-capsules

# The replay lane: the standalone targets and the reference adapter with ASan+UBSan (so
# that UB and leaks in the judge and the reference fail too) in $(FUZZ_REPLAY_BUILD);
# each finding's bytes must still decode to its stored case (fuzz/README.md), and the
# self-test check_fuzz_decode.sh shows a changed or missing case fails.
FUZZ_REPLAY_BUILD := $(B)/fuzz-replay
FUZZ_REPLAY_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
fuzz-replay:
	$(MAKE) --no-print-directory BUILD=$(FUZZ_REPLAY_BUILD) SAN="$(FUZZ_REPLAY_SAN)" OPT="-O1 -g" \
	  fuzz-bins $(FUZZ_REPLAY_BUILD)/lib/tsmref_adapter.so
	FUZZ_CC="$(CC)" bash fuzz/replay.sh $(FUZZ_REPLAY_BUILD)/fuzz/bin
	bash harness/tests/check_fuzz_decode.sh $(FUZZ_REPLAY_BUILD)

fuzz-bench: $(FUZZ_BINS)
	bash bench/fuzz_execs.sh $(FUZZ_BIN)
