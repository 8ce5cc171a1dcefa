# harness/harness.mk: the judge, tsm-cts. It includes only harness/include and its
# own sources: never impl/ (it reaches the reference only through the adapter ABI).

HARNESS_SRC := $(wildcard harness/src/*.c)
HARNESS_OBJ := $(HARNESS_SRC:%.c=$(B)/obj/%.o)
TSM_CTS := $(B)/bin/tsm-cts

ALL_TARGETS += $(TSM_CTS)
DEPS += $(HARNESS_OBJ:.o=.d)

$(B)/obj/harness/src/%.o: harness/src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread -Iharness/include -c $< -o $@

# The two DLPack forms, each against its packaged header (deps.mk).
$(B)/obj/harness/src/dlpack_legacy.o: | $(DLPACK_LEGACY_H)
$(B)/obj/harness/src/dlpack_versioned.o: harness/src/dlpack_versioned.c | $(DLPACK_V1_INC_FILE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread -Iharness/include -I"$$(cat $(DLPACK_V1_INC_FILE))" -c $< -o $@

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
