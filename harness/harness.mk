# harness/harness.mk: the judge, tsm-cts. It includes only harness/include and its
# own sources, never impl/: it reaches the reference only through the adapter ABI,
# like any third party (spec/architecture.md, rule 2).
#
# Its sources are one folder per layer (harness/src/README.md), lowest first. Each
# layer is a static library $(B)/lib/libcts_<layer>.a compiled with an include path of
# its own folder and the folders below it only, so a file that includes a header of an
# upper layer does not compile (self-test harness/tests/check_layers.sh plants one).
CTS_LAYERS := base lang model exec family run tools cli
# $(call cts_upto,LAYER): LAYER and the layers below it, lowest first.
cts_upto = $(call cts__upto,$(1),$(CTS_LAYERS))
cts__upto = $(firstword $(2)) $(if $(filter $(1),$(firstword $(2))),,$(call cts__upto,$(1),$(wordlist 2,$(words $(2)),$(2))))
# $(call cts_inc,LAYER): the include flags of LAYER.
cts_inc = -Iharness/include $(patsubst %,-Iharness/src/%,$(call cts_upto,$(1)))
# The libraries top down, as the linker wants them. The core (exec) reaches the
# families only through the two tables it declares (exec_internal.h) and family's
# families.c defines, so those two libraries are one link group.
HARNESS_LIB = $(B)/lib/libcts_$(1).a
HARNESS_LIBS := $(foreach l,tools run,$(call HARNESS_LIB,$(l))) \
  -Wl,--start-group $(call HARNESS_LIB,family) $(call HARNESS_LIB,exec) -Wl,--end-group \
  $(foreach l,model lang base,$(call HARNESS_LIB,$(l)))
HARNESS_LIB_FILES := $(foreach l,$(CTS_LAYERS),$(call HARNESS_LIB,$(l)))
# What links the judge without its main (test-model, the fuzz targets): every layer's
# headers and every library but cli's.
HARNESS_ALL_INC := $(call cts_inc,cli)
HARNESS_JUDGE_LIBS := $(filter-out %/libcts_cli.a,$(HARNESS_LIB_FILES))

# dlpack_form.c (base) is one source compiled once per DLPack form (below).
HARNESS_DLPACK_OBJ := $(B)/obj/harness/src/base/dlpack_form_legacy.o \
  $(B)/obj/harness/src/base/dlpack_form_versioned.o
define cts_layer
HARNESS_OBJ_$(1) := $$(patsubst %.c,$(B)/obj/%.o,$$(filter-out %/dlpack_form.c,$$(wildcard harness/src/$(1)/*.c)))
$(B)/obj/harness/src/$(1)/%.o: harness/src/$(1)/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_ALL) -pthread $(call cts_inc,$(1)) -c $$< -o $$@
$(call HARNESS_LIB,$(1)): $$(HARNESS_OBJ_$(1)) $(if $(filter base,$(1)),$(HARNESS_DLPACK_OBJ))
	@mkdir -p $$(@D)
	rm -f $$@ && $$(AR) rcs $$@ $$^
endef
$(foreach l,$(CTS_LAYERS),$(eval $(call cts_layer,$(l))))
HARNESS_OBJ := $(foreach l,$(CTS_LAYERS),$(HARNESS_OBJ_$(l))) $(HARNESS_DLPACK_OBJ)
TSM_CTS := $(B)/bin/tsm-cts

ALL_TARGETS += $(TSM_CTS)
DEPS += $(HARNESS_OBJ:.o=.d)

# The two DLPack forms from one source, each against its packaged header (deps.mk).
$(B)/obj/harness/src/base/dlpack_form_legacy.o: harness/src/base/dlpack_form.c | $(DLPACK_LEGACY_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread $(call cts_inc,base) -DCTS_DL_VERSIONED=0 -c $< -o $@
$(B)/obj/harness/src/base/dlpack_form_versioned.o: harness/src/base/dlpack_form.c | $(DLPACK_V1_INC_FILE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -pthread $(call cts_inc,base) -I"$$(cat $(DLPACK_V1_INC_FILE))" \
	  -DCTS_DL_VERSIONED=1 -c $< -o $@

# cli's library holds main; the C runtime's reference to main pulls it in.
$(TSM_CTS): $(HARNESS_LIB_FILES)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -pthread $(call HARNESS_LIB,cli) $(HARNESS_LIBS) -o $@ -ldl -lm

# The model's own unit tests link the judge's libraries but its main.
TEST_MODEL := $(B)/bin/test-model
TEST_MODEL_OBJ := $(B)/obj/harness/tests/test_model.o
ALL_TARGETS += $(TEST_MODEL)
DEPS += $(TEST_MODEL_OBJ:.o=.d)

$(TEST_MODEL_OBJ): harness/tests/test_model.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(HARNESS_ALL_INC) -c $< -o $@

$(TEST_MODEL): $(TEST_MODEL_OBJ) $(HARNESS_JUDGE_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -pthread $(TEST_MODEL_OBJ) $(HARNESS_LIBS) -o $@ -ldl -lm
