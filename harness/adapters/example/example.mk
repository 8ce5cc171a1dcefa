# harness/adapters/example/example.mk: builds the example adapter, $(EXAMPLE_ADAPTER).
# A self-contained copy-me adapter (spec/adapter.md); see README.md beside this file.

EXAMPLE_ADAPTER := $(B)/lib/example_adapter.so
EXAMPLE_OBJ := $(B)/obj/harness/adapters/example/example_adapter.o

$(EXAMPLE_OBJ): harness/adapters/example/example_adapter.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Iharness/include -c $< -o $@

$(EXAMPLE_ADAPTER): $(EXAMPLE_OBJ)
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS_ALL) -o $@ $^

ALL_TARGETS += $(EXAMPLE_ADAPTER)
DEPS += $(EXAMPLE_OBJ:.o=.d)
