# harness/adapters/libtorch/libtorch.mk: builds the libtorch adapter, $(LIBTORCH_ADAPTER),
# which judges ATen's own DLPack conversion (at::toDLPack, at::fromDLPack) of Debian's
# PyTorch 1.13 (README.md beside this file). Included by the top-level Makefile after
# deps.mk, which provides debian_dep.
#
#   $(LIBTORCH_ADAPTER)  $(B)/lib/libtorch_adapter.so (`all` builds it)
#   libtorch-check       builds it and the judge and runs cases/dlpack against it with
#                        harness/expectations/libtorch.txt (--strict: a stale line fails
#                        too); non-zero on any unexpected result. Lane libtorch-adapter
#                        of `make check`. Up to $(LIBTORCH_BATCH) cases share a case
#                        process (tsm-cts run --batch), each in a fresh session: loading
#                        libtorch_cpu costs about 0.6 s of CPU, once per process.
#
# ATen's headers and libtorch_cpu.so come from Debian's libtorch-dev (`make deps`
# installs it), in the default include and library folders; nothing is vendored. The
# adapter is C++17 (ATen's API is C++), compiled by the C++ compiler of $(CC)'s family
# (clang++ for clang, else $(CXX)) with the project's warnings; its vtable is C
# (libtorch_entry.c, libtorch_adapter.h says why). The manager slots are the shared
# layer of harness/adapters/common (adapter_mgr.mk), linked in.

include harness/adapters/common/adapter_mgr.mk

LIBTORCH_ADAPTER := $(B)/lib/libtorch_adapter.so
LIBTORCH_DIR := harness/adapters/libtorch
LIBTORCH_CXX_OBJ := $(B)/obj/$(LIBTORCH_DIR)/libtorch_adapter.o
LIBTORCH_C_OBJ := $(B)/obj/$(LIBTORCH_DIR)/libtorch_entry.o
LIBTORCH_HEADER := /usr/include/ATen/DLConvertor.h
LIBTORCH_CXX := $(if $(findstring clang,$(notdir $(CC))),clang++,$(CXX))
LIBTORCH_CXXFLAGS := -std=c++17 $(WARN) $(OPT) $(SAN) -fPIC -MMD -MP -fvisibility=hidden

$(eval $(call debian_dep,$(LIBTORCH_HEADER),libtorch-dev))

$(LIBTORCH_CXX_OBJ): $(LIBTORCH_DIR)/libtorch_adapter.cpp $(LIBTORCH_HEADER)
	@mkdir -p $(@D)
	$(LIBTORCH_CXX) $(LIBTORCH_CXXFLAGS) -Iharness/include $(ADAPTER_MGR_CFLAGS) -c $< -o $@

$(LIBTORCH_C_OBJ): $(LIBTORCH_DIR)/libtorch_entry.c $(LIBTORCH_HEADER)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Iharness/include $(ADAPTER_MGR_CFLAGS) -c $< -o $@

$(LIBTORCH_ADAPTER): $(LIBTORCH_CXX_OBJ) $(LIBTORCH_C_OBJ) $(ADAPTER_MGR_OBJ)
	@mkdir -p $(@D)
	$(LIBTORCH_CXX) -shared $(LDFLAGS_ALL) -o $@ $^ -ltorch_cpu -lc10

.PHONY: libtorch-check
LIBTORCH_REPORT := $(B)/report/libtorch.json
LIBTORCH_BATCH := 16
THIRD_PARTIES += libtorch:libtorch-check:$(LIBTORCH_REPORT)
libtorch-check: $(LIBTORCH_ADAPTER) $(TSM_CTS)
	@mkdir -p $(dir $(LIBTORCH_REPORT))
	@$(call judge_third_party,$(LIBTORCH_ADAPTER),$(LIBTORCH_REPORT),--batch $(LIBTORCH_BATCH) cases/dlpack)

ALL_TARGETS += $(LIBTORCH_ADAPTER)
DEPS += $(LIBTORCH_CXX_OBJ:.o=.d) $(LIBTORCH_C_OBJ:.o=.d)
