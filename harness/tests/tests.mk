# harness/tests/tests.mk: the harness self-tests. Builds the deliberately broken adapters,
# $(BROKEN_ADAPTERS) = $(B)/lib/broken_<name>.so, each the example adapter with one slot
# or field spoiled, or one hostile act added; `make selftest` runs
# harness/tests/run_selftests.sh against them, `make hostile` harness/tests/check_hostile.sh.

# Every file of harness/tests/broken is one adapter (the hostile ones: check_hostile.sh).
BROKEN_NAMES := $(sort $(basename $(notdir $(wildcard harness/tests/broken/*.c))))
BROKEN_ADAPTERS := $(patsubst %,$(B)/lib/broken_%.so,$(BROKEN_NAMES))
BROKEN_OBJ_DIR := $(B)/obj/harness/tests/broken
# The example adapter once more, its entry renamed so that each broken file can wrap it.
BROKEN_BASE_OBJ := $(BROKEN_OBJ_DIR)/example_base.o
BROKEN_OBJS := $(patsubst %,$(BROKEN_OBJ_DIR)/%.o,$(BROKEN_NAMES))

$(BROKEN_BASE_OBJ): harness/adapters/example/example_adapter.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Iharness/include -Dtsm_adapter_entry=tsm_example_entry -c $< -o $@

$(BROKEN_OBJS): $(BROKEN_OBJ_DIR)/%.o: harness/tests/broken/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Iharness/include -c $< -o $@

$(BROKEN_ADAPTERS): $(B)/lib/broken_%.so: $(BROKEN_OBJ_DIR)/%.o $(BROKEN_BASE_OBJ)
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS_ALL) -o $@ $^

.PHONY: selftest hostile
selftest: all
	bash harness/tests/run_selftests.sh $(B)

hostile: all
	bash harness/tests/check_hostile.sh $(B)

ALL_TARGETS += $(BROKEN_ADAPTERS)
DEPS += $(BROKEN_BASE_OBJ:.o=.d) $(BROKEN_OBJS:.o=.d)
