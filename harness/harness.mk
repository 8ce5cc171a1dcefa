# harness/harness.mk: the judge, tsm-cts. It includes only harness/include and its
# own sources: never impl/ (architecture rule 2).

HARNESS_SRC := $(wildcard harness/src/*.c)
HARNESS_OBJ := $(HARNESS_SRC:%.c=$(B)/obj/%.o)
TSM_CTS := $(B)/bin/tsm-cts

ALL_TARGETS += $(TSM_CTS)
DEPS += $(HARNESS_OBJ:.o=.d)

$(B)/obj/harness/src/%.o: harness/src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Iharness/include -c $< -o $@

$(TSM_CTS): $(HARNESS_OBJ)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) $^ -o $@ -ldl -lm
