# harness/adapters/ggml/ggml.mk: builds the ggml adapter, $(GGML_ADAPTER), against the
# headers and shared libraries of ggml that PyPI's libggml-python ships (pinned in
# deps.mk's PIP_PINS, installed into the project .venv by `make deps`, never vendored),
# and `make ggml-check`: cases/graphs judged through it with its known deviations
# (harness/expectations/ggml.txt). See README.md beside this file. The manager slots are
# the shared layer of harness/adapters/common (adapter_mgr.mk), linked in.

include harness/adapters/common/adapter_mgr.mk

GGML_ADAPTER := $(B)/lib/ggml_adapter.so
GGML_ADAPTER_SRC := harness/adapters/ggml/ggml_adapter.c harness/adapters/ggml/ggml_graph.c
GGML_ADAPTER_OBJ := $(GGML_ADAPTER_SRC:%.c=$(B)/obj/%.o)
GGML_EXPECTATIONS := harness/expectations/ggml.txt
# A file holding the installed libggml package folder (include/, lib64/); compile and
# link rules read it.
GGML_PREFIX_FILE := $(B)/deps/ggml_prefix
GGML_HEADERS := ggml.h ggml-alloc.h ggml-backend.h ggml-cpu.h

$(GGML_PREFIX_FILE): | $(VENV_STAMP)
	@mkdir -p $(@D)
	@$(VENV_PY) -c 'import libggml, os; print(os.path.dirname(libggml.__file__))' >$@ 2>/dev/null || \
	  { rm -f $@; echo "missing ggml for the ggml adapter: it comes from the PyPI package" \
	    "libggml-python, pinned in deps.mk; run 'make deps'" >&2; exit 1; }
	@for h in $(GGML_HEADERS); do [ -f "$$(cat $@)/include/$$h" ] || \
	  { echo "no $$h under $$(cat $@)/include: libggml-python should ship it" >&2; rm -f $@; exit 1; }; done

$(GGML_ADAPTER_OBJ): $(B)/obj/%.o: %.c $(GGML_PREFIX_FILE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Iharness/include $(ADAPTER_MGR_CFLAGS) -I"$$(cat $(GGML_PREFIX_FILE))/include" \
	  -c $< -o $@

# The libraries are found at run time through an rpath to the .venv's copy.
$(GGML_ADAPTER): $(GGML_ADAPTER_OBJ) $(ADAPTER_MGR_OBJ) $(GGML_PREFIX_FILE)
	@mkdir -p $(@D)
	lib="$$(cat $(GGML_PREFIX_FILE))/lib64"; \
	$(CC) -shared $(LDFLAGS_ALL) -o $@ $(GGML_ADAPTER_OBJ) $(ADAPTER_MGR_OBJ) -L"$$lib" \
	  -lggml-cpu -lggml-base -Wl,-rpath,"$$lib"

# Every case of cases/graphs through ggml (TAP in $(B)/ggml.tap, JSON in $(GGML_REPORT),
# which README's third-party table counts), then the summary; exits non-zero on any result
# other than Pass, NotSupported or XFail, and on a stale line of the expectations file.
GGML_REPORT := $(B)/report/ggml.json
THIRD_PARTIES += ggml:ggml-check:$(GGML_REPORT)
.PHONY: ggml-check
ggml-check: $(TSM_CTS) $(GGML_ADAPTER)
	@mkdir -p $(dir $(GGML_REPORT))
	@$(call judge_third_party,$(GGML_ADAPTER),$(GGML_REPORT),--expectations \
	  $(GGML_EXPECTATIONS) cases/graphs) >$(B)/ggml.tap

ALL_TARGETS += $(GGML_ADAPTER)
DEPS += $(GGML_ADAPTER_OBJ:.o=.d)
