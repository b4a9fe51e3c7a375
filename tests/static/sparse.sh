#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sparse (make C=2, endianness checks on) over the module, against the
# stock kernel's headers: any diagnostic in our files fails.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/vm/lib.sh"
. "$top/tests/static/tap.sh"

command -v sparse >/dev/null || die "sparse is not installed"
kdir=/lib/modules/$(stock_kver)/build
kmod=$top/build/kmod/sparse
mkdir -p "$kmod"
cd "$top" && cp -a -u --parents $(ls -d Kbuild drivers include uapi 2>/dev/null) "$kmod/"

log=$(make -C "$kdir" M="$kmod" C=2 CF="-D__CHECK_ENDIAN__" modules 2>&1)
rc=$?
findings=$(printf '%s\n' "$log" | grep -E "^$kmod/.*: (warning|error):" || true)
if [ "$rc" = 0 ] && [ -z "$findings" ]; then
	tap_ok "static/sparse"
else
	tap_fail "static/sparse"
	printf '%s\n' "${findings:-$log}" | sed 's/^/#   /'
fi
tap_finish sparse
