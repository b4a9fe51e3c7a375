# SPDX-License-Identifier: GPL-2.0
#
# make           build softcm.ko (Debian 12's 6.1 headers, or KDIR=), libsoftcm,
#                the softcm tool and the tests
# make run       install what is missing, boot a VM, load the module, show it
# make check     install what is missing, run every test; ends "N passed, N failed"
# make style     checkpatch.pl --strict over the kernel code
# make sparse    sparse (C=2) over the kernel code
# make bench     softcm, rdma_cm over soft-RoCE and TCP measured in one VM
#                boot (stock kernel); results, ratios and a chart in build/bench
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
# softcm exec's compat libraries (the rules below $(LIB_A)'s)
COMPAT := $(BUILD)/lib/softcm/compat
# libmlx5.so.1 and libefa.so.1: perftest links them (userspace/compat/providers)
COMPAT_PROVIDERS := $(COMPAT)/libmlx5.so.1 $(COMPAT)/libefa.so.1
COMPAT_LIBS := $(COMPAT)/libibverbs.so.1 $(COMPAT)/librdmacm.so.1 $(COMPAT_PROVIDERS)
COMPAT_TABLE := userspace/compat/rdma-core.versions
MKMAP := userspace/compat/mkmap.sh
COMPAT_MAP := userspace/compat/compat.map
COMPAT_OBJS := $(patsubst userspace/compat/%.c,$(BUILD)/compat/%.o,$(wildcard userspace/compat/*.c))
TOOL := $(BUILD)/bin/softcm
SELFTESTS := $(patsubst tests/selftests/%.c,$(BUILD)/tests/%,$(wildcard tests/selftests/*_test.c))
# Fuzzers (ioctl and wire), built and run as the selftests are (the wire
# fuzzer's data path sets its QPs up through libsoftcm's verbs).
FUZZTESTS := $(patsubst tests/fuzz/%.c,$(BUILD)/tests/%,$(wildcard tests/fuzz/*_test.c))
# Shell test programs (interop with soft-RoCE), copied as they are.
SCRIPT_TESTS := $(patsubst tests/interop/%,$(BUILD)/tests/%,$(wildcard tests/interop/*_test.sh))
# The rdma_cm peer on the rxe side: rdma-core's headers and librdmacm, not
# ours (no $(CPPFLAGS), no libsoftcm); copied into the guest with lib/.
RDMACM_PEER := $(BUILD)/tests/lib/rdmacm_peer
# A QP's side of a connection on rdma-core's librdmacm and libibverbs, run
# as it is on rxe and under `softcm exec` (tests/interop/exec_test.sh).
EXEC_PEER := $(BUILD)/tests/lib/exec_peer
# One program built on both libraries, for tests/interop/fidelity_test.sh.
FIDELITY := $(BUILD)/tests/lib/fidelity-rdmacm $(BUILD)/tests/lib/fidelity-softcm \
	$(BUILD)/tests/lib/fidelity.expected-differences
HEADERS := $(wildcard uapi/linux/*.h userspace/lib/*.h)

.PHONY: all module userspace tests deps run check style sparse clean bench bench-progs
all: module userspace tests

deps:
	@$(TOP)/tests/vm/install-deps.sh

module:
	@[ -d "$(KDIR)" ] || { echo "softcm: no kernel headers at '$(KDIR)'; run 'make check' or tests/vm/install-deps.sh first, or set KDIR=" >&2; exit 1; }
	@mkdir -p $(KMOD)
	@cp -a -u --parents $(wildcard Kbuild drivers include uapi tests/kunit tests/vm/bugs) $(KMOD)/
	$(MAKE) -C $(KDIR) M=$(KMOD) $(if $(W),W=$(W)) modules

userspace: $(LIB_SO) $(LIB_A) $(LIB_PC) $(TOOL) $(COMPAT_LIBS)

$(BUILD)/lib/%.o: userspace/lib/%.c $(HEADERS) userspace/lib/internal.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(LIB_SO): $(LIB_OBJS) $(LIB_MAP)
	$(CC) $(CFLAGS) -shared -Wl,-soname,libsoftcm.so.1 -Wl,--version-script=$(LIB_MAP) \
		-Wl,--no-undefined -o $@ $(LIB_OBJS) -lpthread
	ln -sf libsoftcm.so.1 $(BUILD)/lib/libsoftcm.so

$(LIB_A): $(LIB_OBJS)
	$(AR) rcs $@ $^

# The compat libraries `softcm exec` puts first on LD_LIBRARY_PATH
# (softcm(8)): libibverbs.so.1 is libsoftcm's objects again, exporting
# what libsoftcm.map and rdma-core's table share with rdma-core's versions,
# those of both libraries (and compat.map's few, userspace/compat/*.c);
# librdmacm.so.1 only defines librdmacm's versions
# and depends on it.  A program so gets one copy of libsoftcm's state
# whichever soname it asks for.

$(BUILD)/compat/libibverbs.map: $(MKMAP) $(COMPAT_TABLE) $(LIB_MAP) $(COMPAT_MAP)
	@mkdir -p $(@D)
	$(MKMAP) libibverbs,librdmacm $(COMPAT_TABLE) $(LIB_MAP) $(COMPAT_MAP) >$@.tmp && mv $@.tmp $@

$(BUILD)/compat/librdmacm.map: $(MKMAP) $(COMPAT_TABLE)
	@mkdir -p $(@D)
	$(MKMAP) librdmacm $(COMPAT_TABLE) >$@.tmp && mv $@.tmp $@

$(BUILD)/compat/%.o: userspace/compat/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(COMPAT)/libibverbs.so.1: $(LIB_OBJS) $(COMPAT_OBJS) $(BUILD)/compat/libibverbs.map
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -shared -Wl,-soname,libibverbs.so.1 \
		-Wl,--version-script=$(BUILD)/compat/libibverbs.map \
		-Wl,--no-undefined -o $@ $(LIB_OBJS) $(COMPAT_OBJS) -lpthread

$(COMPAT)/librdmacm.so.1: $(COMPAT)/libibverbs.so.1 $(BUILD)/compat/librdmacm.map
	$(CC) $(CFLAGS) -shared -Wl,-soname,librdmacm.so.1 \
		-Wl,--version-script=$(BUILD)/compat/librdmacm.map \
		-Wl,--no-as-needed -o $@ $(COMPAT)/libibverbs.so.1

# A provider's direct-verbs library: its soname, its versions, and entry
# points that answer "not this device"; nothing of libsoftcm's.
$(COMPAT)/lib%.so.1: userspace/compat/providers/%.c userspace/compat/providers/%.map
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -shared -Wl,-soname,lib$*.so.1 \
		-Wl,--version-script=userspace/compat/providers/$*.map -Wl,--no-undefined -o $@ $<

$(LIB_PC): userspace/lib/libsoftcm.pc.in
	sed -e 's|@PREFIX@|/usr/local|' -e 's|@LIBDIR@|/usr/local/lib|' \
		-e 's|@INCLUDEDIR@|/usr/local/include|' -e 's|@VERSION@|$(VERSION)|' $< >$@

TOOL_SRCS := $(wildcard userspace/tools/*.c)
$(TOOL): $(TOOL_SRCS) $(wildcard userspace/tools/*.h) $(LIB_SO) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $(TOOL_SRCS) -L$(BUILD)/lib -lsoftcm \
		-Wl,-rpath,'$$ORIGIN/../lib'

# Shell helpers the guest's *_test.sh programs source from lib/.
TEST_SHLIB := $(patsubst tests/lib/%,$(BUILD)/tests/lib/%,$(wildcard tests/lib/*.sh))

tests: $(SELFTESTS) $(FUZZTESTS) $(SCRIPT_TESTS) $(RDMACM_PEER) $(EXEC_PEER) $(FIDELITY) \
	$(TEST_SHLIB)

$(BUILD)/tests/lib/%.sh: tests/lib/%.sh
	@mkdir -p $(@D)
	install -m 0644 $< $@

$(RDMACM_PEER): tests/interop/rdmacm_peer.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE $(CFLAGS) -o $@ $< -lrdmacm

$(EXEC_PEER): tests/interop/exec_peer.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE $(CFLAGS) -o $@ $< -lrdmacm -libverbs

# rdma-core's <rdma/rdma_cma.h> and <infiniband/verbs.h> for both; only
# the library differs.
$(BUILD)/tests/lib/fidelity-rdmacm: tests/interop/fidelity.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE $(CFLAGS) -o $@ $< -lrdmacm -libverbs -lpthread

$(BUILD)/tests/lib/fidelity-softcm: tests/interop/fidelity.c $(LIB_SO)
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE $(CFLAGS) -o $@ $< -L$(BUILD)/lib -lsoftcm -lpthread

$(BUILD)/tests/lib/fidelity.expected-differences: tests/interop/fidelity.expected-differences
	@mkdir -p $(@D)
	install -m 0644 $< $@

$(BUILD)/tests/%_test.sh: tests/interop/%_test.sh
	@mkdir -p $(@D)
	install -m 0755 $< $@

# The test programs are compiled and linked apart: ccache (make check)
# caches a compilation, never a link.
$(BUILD)/tests/obj/%.o: tests/selftests/%.c $(wildcard tests/selftests/*.h) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -I$(KSRC)/tools/testing/selftests $(CFLAGS) -Wno-sign-compare \
		-c -o $@ $<

$(BUILD)/tests/obj/%.o: tests/fuzz/%.c $(wildcard tests/fuzz/*.h tests/selftests/*.h) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -I$(TOP)/tests/selftests -I$(KSRC)/tools/testing/selftests $(CFLAGS) \
		-Wno-sign-compare -c -o $@ $<

$(SELFTESTS) $(FUZZTESTS): $(BUILD)/tests/%: $(BUILD)/tests/obj/%.o $(LIB_SO)
	$(CC) $(CFLAGS) -o $@ $< -L$(BUILD)/lib -lsoftcm -lpthread

.SECONDARY: $(SELFTESTS:$(BUILD)/tests/%=$(BUILD)/tests/obj/%.o) \
	$(FUZZTESTS:$(BUILD)/tests/%=$(BUILD)/tests/obj/%.o)

# Benchmarks (the programs in lib/: run.sh copies only the named ones
# and that directory): one driver built against libsoftcm and against rdma-core's
# librdmacm, the guest script, and the host side that makes the tables.
# Not named *_test: make check never runs them.
BENCH := $(BUILD)/bench
BENCH_PROGS := $(BENCH)/lib/cmbench-softcm $(BENCH)/lib/cmbench-rdmacm $(BENCH)/bench.sh \
	$(BENCH)/lib/verbsmem $(BENCH)/lib/stages.sh $(BENCH)/lib/syscalls.sh \
	$(BENCH)/lib/datapath.sh

bench-progs: $(BENCH_PROGS)

$(BENCH)/lib/cmbench-softcm: tests/bench/cmbench.c $(LIB_SO) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DCMBENCH_SOFTCM $(CFLAGS) -o $@ $< -L$(BUILD)/lib -lsoftcm

# The system's <rdma/rdma_cma.h> and librdmacm: nothing of ours on the path.
$(BENCH)/lib/cmbench-rdmacm: tests/bench/cmbench.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE $(CFLAGS) -o $@ $< -lrdmacm

# Kernel memory per CQ and per QP: raw ioctls, no library.
$(BENCH)/lib/verbsmem: tests/bench/verbsmem.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $<

$(BENCH)/lib/%.sh: tests/bench/%.sh
	@mkdir -p $(@D)
	install -m 0755 $< $@

$(BENCH)/bench.sh: tests/bench/bench.sh
	@mkdir -p $(@D)
	install -m 0755 $< $@

bench: deps
	@$(MAKE) --no-print-directory all bench-progs
	@$(TOP)/tests/bench/run.sh

run: deps
	@$(MAKE) --no-print-directory all
	@$(TOP)/tests/vm/run.sh --demo

# make check builds in a clean clone every time, through ccache (installed
# by deps): the libraries and the eighty test programs took two minutes
# of both cores before any check ran.  The clone's path is no part of
# the key (BASEDIR, NOHASHDIR), so another clone's objects serve.
check: deps
	@$(VMLIB) && \
		if [ -d /usr/lib/ccache ]; then \
			export PATH=/usr/lib/ccache:$$PATH CCACHE_DIR=$$SOFTCM_CACHE/ccache \
				CCACHE_BASEDIR=$(TOP) CCACHE_NOHASHDIR=1; \
		fi && \
		$(MAKE) --no-print-directory -j$(shell nproc) all
	@$(TOP)/tests/run.sh

style:
	@$(TOP)/tests/static/checkpatch.sh

sparse:
	@$(TOP)/tests/static/sparse.sh

clean:
	rm -rf $(BUILD)

# --- Installation (make install / uninstall / dkms-install) and examples ---
#
# make install    [DESTDIR=] [PREFIX=/usr/local] [KDIR=] [INSTALL_MOD_DIR=extra]
#                 the module through the kernel's modules_install (then depmod
#                 and ldconfig, unless DESTDIR is set), libsoftcm (.so.1, .so,
#                 .a), softcm exec's compat libraries ($(LIBDIR)/softcm/compat),
#                 the headers, libsoftcm.pc, the softcm tool, the man
#                 pages, the udev rule and the modules-load.d file
# make uninstall  the same variables: removes exactly those files
# make dkms-install / dkms-uninstall   the module's sources in /usr/src for DKMS
#
# udev and systemd-modules-load read /etc and /usr/lib, never /usr/local:
# their files go to /etc unless UDEVRULESDIR= and MODULESLOADDIR= say
# otherwise (a distribution package would use /usr/lib/...).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
UDEVRULESDIR ?= /etc/udev/rules.d
MODULESLOADDIR ?= /etc/modules-load.d
DKMSDIR ?= /usr/src/softcm-$(VERSION)
INSTALL_MOD_DIR ?= extra
# The release the module is built for: KDIR's, not the running kernel's.
INSTALL_KVER = $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h)
INSTALL_MODDIR = $(DESTDIR)/lib/modules/$(INSTALL_KVER)/$(INSTALL_MOD_DIR)
INSTALL_KO = $(INSTALL_MODDIR)/drivers/softcm/softcm.ko
MANPAGES := $(wildcard Documentation/man/*.[1-8])
DIST := userspace/dist
EXAMPLES := $(patsubst userspace/examples/%.c,$(BUILD)/examples/%,$(wildcard userspace/examples/*.c))
# The same on the system's librdmacm, for tests/interop/rxe_test.sh.
EXAMPLES_RDMACM := $(patsubst userspace/examples/%.c,$(BUILD)/tests/lib/examples-rdmacm/%,$(wildcard userspace/examples/*.c))
# What the test VM gets: `make install` staged as a tarball, the examples.
INSTALL_TAR := $(BUILD)/tests/lib/install/softcm-install.tar
INSTALL_TESTS := $(patsubst %,$(BUILD)/tests/%,$(notdir $(wildcard tests/install/*_test.sh tests/examples/*_test.sh)))

.PHONY: examples install install-module install-userspace uninstall dkms-install dkms-uninstall
all: examples $(INSTALL_TAR) $(INSTALL_TESTS) $(BUILD)/tests/lib/examples/.stamp \
	$(EXAMPLES_RDMACM)

# rdma-core's <rdma/rdma_cma.h> and our library, nothing of softcm's own.
examples: $(EXAMPLES)
$(BUILD)/examples/%: userspace/examples/%.c $(LIB_SO)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -L$(BUILD)/lib -lsoftcm

$(BUILD)/tests/lib/examples/.stamp: $(EXAMPLES)
	@mkdir -p $(@D)
	cp $(EXAMPLES) $(@D)/
	@touch $@

# The same examples on the system's librdmacm (design.rst: they build
# unchanged with -lrdmacm), run against softcm by tests/interop/rxe_test.sh.
$(BUILD)/tests/lib/examples-rdmacm/%: userspace/examples/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -lrdmacm

$(BUILD)/tests/%_test.sh: tests/install/%_test.sh
	@mkdir -p $(@D)
	install -m 0755 $< $@

$(BUILD)/tests/%_test.sh: tests/examples/%_test.sh
	@mkdir -p $(@D)
	install -m 0755 $< $@

install: install-module install-userspace

# Without the test modules a debug kernel's tree would add (Kbuild).
install-module:
	@$(MAKE) --no-print-directory module SOFTCM_MODULE_ONLY=y
	$(MAKE) -C $(KDIR) M=$(KMOD) INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) modules_install
	$(if $(DESTDIR),,depmod -a $(INSTALL_KVER))

install-userspace: userspace
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(INCLUDEDIR)/linux $(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(MODULESLOADDIR)
	install -m 0755 $(TOOL) $(DESTDIR)$(BINDIR)/softcm
	install -m 0755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/libsoftcm.so.1
	ln -sf libsoftcm.so.1 $(DESTDIR)$(LIBDIR)/libsoftcm.so
	install -m 0644 $(LIB_A) $(DESTDIR)$(LIBDIR)/libsoftcm.a
	install -d $(DESTDIR)$(LIBDIR)/softcm/compat
	install -m 0755 $(COMPAT_LIBS) $(DESTDIR)$(LIBDIR)/softcm/compat/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' userspace/lib/libsoftcm.pc.in \
		>$(DESTDIR)$(PKGCONFIGDIR)/libsoftcm.pc
	chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/libsoftcm.pc
	install -m 0644 userspace/lib/softcm.h $(DESTDIR)$(INCLUDEDIR)/softcm.h
	install -m 0644 uapi/linux/softcm.h $(DESTDIR)$(INCLUDEDIR)/linux/softcm.h
	set -e; for m in $(MANPAGES); do \
		s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; \
		install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done
	install -m 0644 $(DIST)/60-softcm.rules $(DESTDIR)$(UDEVRULESDIR)/60-softcm.rules
	install -m 0644 $(DIST)/softcm-modules-load.conf $(DESTDIR)$(MODULESLOADDIR)/softcm.conf
	$(if $(DESTDIR),,-ldconfig)

# Directories are removed only when empty, and only those install made for
# softcm alone (the module's, $(LIBDIR)/softcm); shared ones such as
# $(BINDIR) stay.
uninstall:
	rm -f $(INSTALL_KO) $(INSTALL_KO).gz $(INSTALL_KO).xz $(INSTALL_KO).zst
	-rmdir $(INSTALL_MODDIR)/drivers/softcm $(INSTALL_MODDIR)/drivers $(INSTALL_MODDIR) 2>/dev/null
	$(if $(DESTDIR),,depmod -a $(INSTALL_KVER))
	rm -f $(DESTDIR)$(BINDIR)/softcm $(DESTDIR)$(LIBDIR)/libsoftcm.so.1 \
		$(DESTDIR)$(LIBDIR)/libsoftcm.so $(DESTDIR)$(LIBDIR)/libsoftcm.a \
		$(DESTDIR)$(PKGCONFIGDIR)/libsoftcm.pc $(DESTDIR)$(INCLUDEDIR)/softcm.h \
		$(DESTDIR)$(INCLUDEDIR)/linux/softcm.h \
		$(DESTDIR)$(UDEVRULESDIR)/60-softcm.rules $(DESTDIR)$(MODULESLOADDIR)/softcm.conf
	rm -f $(foreach l,$(COMPAT_LIBS),$(DESTDIR)$(LIBDIR)/softcm/compat/$(notdir $(l)))
	-rmdir $(DESTDIR)$(LIBDIR)/softcm/compat $(DESTDIR)$(LIBDIR)/softcm 2>/dev/null
	rm -f $(foreach m,$(MANPAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)))
	$(if $(DESTDIR),,-ldconfig)

# `make install DESTDIR=` staged and packed for the guest's install_test.sh,
# with PREFIX=/usr: the guest has no ldconfig to find /usr/local/lib.  The
# staging is then uninstalled again and whatever is left recorded: the
# guest reports it (it must be nothing).
INSTALL_STAGE := $(BUILD)/install-stage
$(INSTALL_TAR): $(LIB_SO) $(LIB_A) $(TOOL) $(COMPAT_LIBS) $(HEADERS) $(MANPAGES) $(wildcard $(DIST)/*) \
		userspace/lib/libsoftcm.pc.in $(wildcard drivers/softcm/*.[ch] include/softcm/*.h) Makefile Kbuild \
		| module
	rm -rf $(INSTALL_STAGE) && mkdir -p $(@D)
	@$(MAKE) --no-print-directory install DESTDIR=$(INSTALL_STAGE) PREFIX=/usr >$(@D)/install.log 2>&1 || \
		{ cat $(@D)/install.log; exit 1; }
	cd $(INSTALL_STAGE) && find . ! -type d | sort >$(@D)/files
	tar -C $(INSTALL_STAGE) --no-recursion -cf $@.tmp -T $(@D)/files
	@$(MAKE) --no-print-directory uninstall DESTDIR=$(INSTALL_STAGE) PREFIX=/usr >>$(@D)/install.log 2>&1
	cd $(INSTALL_STAGE) && find . ! -type d >$(@D)/uninstall-leftovers
	rm -rf $(INSTALL_STAGE)
	mv $@.tmp $@

# The module's sources for DKMS (dkms.conf in $(DIST)); without DESTDIR
# also dkms itself when it is missing (from Debian's archive, as `make
# check` installs its own tools), then `dkms add` and `dkms install` for
# $(KVER), the installed kernel we build for; DKMS rebuilds it for every
# kernel installed later (AUTOINSTALL).
dkms-install:
	$(if $(DESTDIR),,@command -v dkms >/dev/null || $(TOP)/tests/vm/install-deps.sh dkms)
	install -d $(DESTDIR)$(DKMSDIR)
	cp -r --parents Kbuild drivers/softcm include uapi $(DESTDIR)$(DKMSDIR)/
	sed 's|@VERSION@|$(VERSION)|' $(DIST)/dkms.conf.in >$(DESTDIR)$(DKMSDIR)/dkms.conf
	$(if $(DESTDIR),,dkms add softcm/$(VERSION))
	$(if $(DESTDIR),,dkms install softcm/$(VERSION) -k $(KVER))

dkms-uninstall:
	$(if $(DESTDIR),,-dkms remove softcm/$(VERSION) --all)
	rm -rf $(DESTDIR)$(DKMSDIR)
