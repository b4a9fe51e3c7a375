#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# drivers/softcm's layering: every cross-file reference, from the module's
# objects and its headers' inline functions (layering.py), against the
# levels, upcalls and exceptions of Documentation/design.rst ("Layers").
# Then the check itself is shown to fail on what it is there to catch: an
# upward call compiled into a copy of id.c, an inline of a low header
# calling up, and an exception that no longer occurs.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/vm/lib.sh"
. "$top/tests/static/tap.sh"

layering=$top/tests/static/layering.py
src=$top/drivers/softcm
doc=$top/Documentation/design.rst
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The objects of the sources as they are now (make check has just built
# them: then this only confirms it).
build() {
	make -s -C "$top" module
}
if ! tap_check "static/layering/module-built" build; then
	tap_finish layering
	exit
fi
obj=$top/build/kmod/${KTAG:-stock}/drivers/softcm

tap_check "static/layering/every-file-on-a-level" "$layering" files
# Files placed before the branch that adds them is merged: said, not failed.
"$layering" files | grep '^#'
tap_check "static/layering/calls-go-down" "$layering" --obj "$obj" calls
tap_check "static/layering/exceptions-still-occur" "$layering" --obj "$obj" \
	exceptions

# catches CHECK EXPECTED ARGS...: the check must fail, and say EXPECTED.
catches() {
	local check=$1 expected=$2 out
	shift 2
	out=$("$layering" "$@" "$check")
	if [ $? != 1 ]; then
		echo "layering.py $check did not fail:"
		printf '%s\n' "$out"
		return 1
	fi
	grep -qF "$expected" <<<"$out" && return 0
	echo "layering.py $check failed, but not with '$expected':"
	printf '%s\n' "$out"
	return 1
}

# A copy of the module whose id.c (the object layer) calls the ioctl entry
# (the device layer), compiled: only id.o is rebuilt, the other objects
# are the real ones.
upward_call() {
	local kmod=$tmp/kmod
	mkdir -p "$kmod" &&
	cp -a "$top/drivers" "$top/include" "$top/uapi" "$kmod/" &&
	echo 'obj-m += drivers/softcm/' >"$kmod/Kbuild" &&
	cp "$obj"/*.o "$kmod/drivers/softcm/" &&
	cat >>"$kmod/drivers/softcm/id.c" <<-'PROBE' &&

	#include "ucmd.h"

	long softcm_layering_probe(struct softcm_file *sf);
	long softcm_layering_probe(struct softcm_file *sf)
	{
		return softcm_ucmd_ioctl(sf, 0, 0);
	}
	PROBE
	make -s -C "/lib/modules/$(stock_kver)/build" M="$kmod" drivers/softcm/id.o ||
		return 1
	catches calls "id.c -> ucmd.c: softcm_ucmd_ioctl (up from level" \
		--src "$kmod/drivers/softcm" --obj "$kmod/drivers/softcm"
}
tap_check "static/layering/catches-upward-call" upward_call

# A copy of the sources whose sockaddr.h (the library level) gets an
# inline function calling the ioctl entry; the objects stay the real ones.
upward_inline() {
	mkdir -p "$tmp/src" &&
	cp "$src"/*.[ch] "$tmp/src/" &&
	cat >>"$tmp/src/sockaddr.h" <<-'PROBE' || return 1

	static inline long softcm_layering_probe(struct softcm_file *sf)
	{
		return softcm_ucmd_ioctl(sf, 0, 0);
	}
	PROBE
	catches calls "sockaddr.h -> ucmd.c: softcm_ucmd_ioctl (up from level" \
		--src "$tmp/src" --obj "$obj"
}
tap_check "static/layering/catches-upward-inline" upward_inline

# design.rst with one exception more, a reference the code does not make.
stale_exception() {
	awk '{ print }
	     /^\.\. layering: exceptions$/ { block = 1 }
	     block && /^    #/ {
		print "    stats.c -> ucmd.c: softcm_ucmd_ioctl"
		block = 0
	     }' "$doc" >"$tmp/design.rst" || return 1
	catches exceptions "stats.c -> ucmd.c: softcm_ucmd_ioctl no longer occurs" \
		--doc "$tmp/design.rst" --obj "$obj"
}
tap_check "static/layering/catches-stale-exception" stale_exception

tap_finish layering
