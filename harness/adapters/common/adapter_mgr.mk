# harness/adapters/common/adapter_mgr.mk: the manager layer that third-party adapters
# without managers of their own share (adapter_mgr.h). Included by each adapter's .mk
# that links it (ggml.mk, tvm-ffi.mk, libtorch.mk), hence the guard: the first include defines it.
#
#   ADAPTER_MGR_OBJ     the object, compiled once against harness/include alone; an
#                       adapter lists it among the objects of its .so
#   ADAPTER_MGR_CFLAGS  what an adapter's sources compile with to include adapter_mgr.h

ifndef ADAPTER_MGR_OBJ
ADAPTER_MGR_OBJ := $(B)/obj/harness/adapters/common/adapter_mgr.o
ADAPTER_MGR_CFLAGS := -Iharness/adapters/common

$(ADAPTER_MGR_OBJ): harness/adapters/common/adapter_mgr.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Iharness/include -c $< -o $@

DEPS += $(ADAPTER_MGR_OBJ:.o=.d)
endif
