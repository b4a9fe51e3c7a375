# SPDX-License-Identifier: GPL-2.0
#
# make           build softcm.ko (Debian 12's 6.1 headers, or KDIR=), libsoftcm,
#                the softcm tool and the tests
# make run       install what is missing, boot a VM, load the module, show it
# make check     install what is missing, run every test; ends "N passed, N failed"
# make style     checkpatch.pl --strict over the kernel code
# make sparse    sparse (C=2) over the kernel code
#
# Outputs go to build/ (userspace, tests) and build/kmod/<kernel>/ (module).

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD := $(TOP)/build
VMLIB := . $(TOP)/tests/vm/lib.sh

# The kernel we build for: the installed Debian headers unless KDIR= says
# otherwise.  The build host's running kernel is never asked.
KVER ?= $(shell $(VMLIB) && stock_kver)
KDIR ?= /lib/modules/$(KVER)/build
KTAG ?= stock
KMOD := $(BUILD)/kmod/$(KTAG)
KO := $(KMOD)/drivers/softcm/softcm.ko

# kselftest_harness.h and checkpatch.pl come from the kernel source package.
KSRC = $(shell $(VMLIB) && source_tree)

VERSION := $(shell sed -n 's/.*SOFTCM_VERSION "\(.*\)"/\1/p' drivers/softcm/version.h)

CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Werror -Wno-unused-parameter -std=gnu11
CPPFLAGS += -D_GNU_SOURCE -I$(TOP)/uapi -I$(TOP)/userspace/lib -DSOFTCM_LIB_VERSION='"$(VERSION)"'

LIB_SRCS := $(wildcard userspace/lib/*.c)
LIB_OBJS := $(LIB_SRCS:userspace/lib/%.c=$(BUILD)/lib/%.o)
LIB_SO := $(BUILD)/lib/libsoftcm.so.1
LIB_A := $(BUILD)/lib/libsoftcm.a
LIB_PC := $(BUILD)/lib/libsoftcm.pc
LIB_MAP := userspace/lib/libsoftcm.map
TOOL := $(BUILD)/bin/softcm
SELFTESTS := $(patsubst tests/selftests/%.c,$(BUILD)/tests/%,$(wildcard tests/selftests/*_test.c))
# Fuzzers (ioctl and wire), built and run as the selftests are.
FUZZTESTS := $(patsubst tests/fuzz/%.c,$(BUILD)/tests/%,$(wildcard tests/fuzz/*_test.c))
# Shell test programs (interop with soft-RoCE), copied as they are.
SCRIPT_TESTS := $(patsubst tests/interop/%,$(BUILD)/tests/%,$(wildcard tests/interop/*_test.sh))
HEADERS := $(wildcard uapi/linux/*.h userspace/lib/*.h)

.PHONY: all module userspace tests deps run check style sparse clean
all: module userspace tests

deps:
	@$(TOP)/tests/vm/install-deps.sh

module:
	@[ -d "$(KDIR)" ] || { echo "softcm: no kernel headers at '$(KDIR)'; run 'make check' or tests/vm/install-deps.sh first, or set KDIR=" >&2; exit 1; }
	@mkdir -p $(KMOD)
	@cp -a -u --parents $(wildcard Kbuild drivers include uapi tests/kunit tests/vm/bugs) $(KMOD)/
	$(MAKE) -C $(KDIR) M=$(KMOD) $(if $(W),W=$(W)) modules

userspace: $(LIB_SO) $(LIB_A) $(LIB_PC) $(TOOL)

$(BUILD)/lib/%.o: userspace/lib/%.c $(HEADERS) userspace/lib/internal.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(LIB_SO): $(LIB_OBJS) $(LIB_MAP)
	$(CC) $(CFLAGS) -shared -Wl,-soname,libsoftcm.so.1 -Wl,--version-script=$(LIB_MAP) \
		-Wl,--no-undefined -o $@ $(LIB_OBJS) -lpthread
	ln -sf libsoftcm.so.1 $(BUILD)/lib/libsoftcm.so

$(LIB_A): $(LIB_OBJS)
	$(AR) rcs $@ $^

$(LIB_PC): userspace/lib/libsoftcm.pc.in
	sed -e 's|@PREFIX@|/usr/local|' -e 's|@VERSION@|$(VERSION)|' $< >$@

TOOL_SRCS := $(wildcard userspace/tools/*.c)
$(TOOL): $(TOOL_SRCS) $(wildcard userspace/tools/*.h) $(LIB_SO) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $(TOOL_SRCS) -L$(BUILD)/lib -lsoftcm

tests: $(SELFTESTS) $(FUZZTESTS) $(SCRIPT_TESTS)

$(BUILD)/tests/%_test.sh: tests/interop/%_test.sh
	@mkdir -p $(@D)
	install -m 0755 $< $@

$(BUILD)/tests/%: tests/selftests/%.c $(wildcard tests/selftests/*.h) $(LIB_SO) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -I$(KSRC)/tools/testing/selftests $(CFLAGS) -Wno-sign-compare \
		-o $@ $< -L$(BUILD)/lib -lsoftcm -lpthread

$(BUILD)/tests/%: tests/fuzz/%.c $(wildcard tests/selftests/*.h) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -I$(TOP)/tests/selftests -I$(KSRC)/tools/testing/selftests $(CFLAGS) \
		-Wno-sign-compare -o $@ $< -lpthread

run: deps
	@$(MAKE) --no-print-directory all
	@$(TOP)/tests/vm/run.sh --demo

check: deps
	@$(MAKE) --no-print-directory all
	@$(TOP)/tests/run.sh

style:
	@$(TOP)/tests/static/checkpatch.sh

sparse:
	@$(TOP)/tests/static/sparse.sh

clean:
	rm -rf $(BUILD)
