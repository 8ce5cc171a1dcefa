# harness/harness.mk: the judge, tsm-cts. It includes only harness/include and its
# own sources, never impl/: it reaches the reference only through the adapter ABI,
# like any third party (spec/architecture.md, rule 2).

# dlpack_form.c is one source compiled once per DLPack form (below).
HARNESS_SRC := $(filter-out harness/src/dlpack_form.c,$(wildcard harness/src/*.c))
HARNESS_DLPACK_OBJ := $(B)/obj/harness/src/dlpack_form_legacy.o \
  $(B)/obj/harness/src/dlpack_form_versioned.o
HARNESS_OBJ := $(HARNESS_SRC:%.c=$(B)/obj/%.o) $(HARNESS_DLPACK_OBJ)
TSM_CTS := $(B)/bin/tsm-cts

ALL_TARGETS += $(TSM_CTS)
DEPS += $(HARNESS_OBJ:.o=.d)

$(B)/obj/harness/src/%.o: harness/src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread -Iharness/include -c $< -o $@

# The two DLPack forms from one source, each against its packaged header (deps.mk).
$(B)/obj/harness/src/dlpack_form_legacy.o: harness/src/dlpack_form.c | $(DLPACK_LEGACY_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread -Iharness/include -DCTS_DL_VERSIONED=0 -c $< -o $@
$(B)/obj/harness/src/dlpack_form_versioned.o: harness/src/dlpack_form.c | $(DLPACK_V1_INC_FILE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread -Iharness/include -I"$$(cat $(DLPACK_V1_INC_FILE))" \
	  -DCTS_DL_VERSIONED=1 -c $< -o $@

$(TSM_CTS): $(HARNESS_OBJ)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -pthread $^ -o $@ -ldl -lm

# The model's own unit tests link the judge's sources but its main.
TEST_MODEL := $(B)/bin/test-model
TEST_MODEL_OBJ := $(B)/obj/harness/tests/test_model.o
ALL_TARGETS += $(TEST_MODEL)
DEPS += $(TEST_MODEL_OBJ:.o=.d)

$(TEST_MODEL_OBJ): harness/tests/test_model.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Iharness/include -Iharness/src -c $< -o $@

$(TEST_MODEL): $(TEST_MODEL_OBJ) $(filter-out %/main.o,$(HARNESS_OBJ))
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -pthread $^ -o $@ -ldl -lm
