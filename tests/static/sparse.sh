#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sparse (make C=2, endianness checks on) over the module, against the
# stock kernel's headers: any diagnostic in our files fails.  A planted
# mistake in a throw-away module first shows that the check can fail.
# C=2 checks every file whether or not it is rebuilt, so the check runs
# over the tree `make` has already built (build/kmod/stock) and compiles
# nothing again.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/vm/lib.sh"
. "$top/tests/static/tap.sh"

command -v sparse >/dev/null || die "sparse is not installed"
kdir=/lib/modules/$(stock_kver)/build
kmod=$top/build/kmod/stock
make -s -C "$top" module >/dev/null || die "the module does not build"

# sparse_findings DIR: build the module in DIR with sparse
# and print its diagnostics for files under DIR, or make's log if make
# failed; make's status is left in $rc.
sparse_findings() {
	local log
	log=$(make -C "$kdir" M="$1" C=2 CF="-D__CHECK_ENDIAN__" modules 2>&1)
	rc=$?
	printf '%s\n' "$log" | grep -E "^$1/.*: (warning|error):" && return
	[ "$rc" = 0 ] || printf '%s\n' "$log"
}

# The negative control: a module of one file with an endianness mistake,
# built the same way from a directory the module's Kbuild never enters
# (nothing bad goes near drivers/).  Should the grep stop matching
# sparse's output (another path format, sparse not run at all), this
# fails rather than the real check going green for ever.
control=$top/build/kmod/sparse-control
mkdir -p "$control"
echo 'obj-m := control.o' >"$control/Kbuild"
cat >"$control/control.c" <<'CONTROL'
// SPDX-License-Identifier: GPL-2.0
#include <linux/module.h>
#include <linux/types.h>

u32 softcm_sparse_control(__be32 wire);
u32 softcm_sparse_control(__be32 wire)
{
	return wire;	/* no be32_to_cpu(): sparse must say so */
}
EXPORT_SYMBOL_GPL(softcm_sparse_control);
MODULE_LICENSE("GPL");
CONTROL
sparse_findings "$control" >"$control.out"
findings=$(cat "$control.out")
if printf '%s\n' "$findings" | grep -q "^$control/control\.c:.*: warning:"; then
	tap_ok "static/sparse-control"
else
	tap_fail "static/sparse-control"
	printf '%s\n' "${findings:-(sparse said nothing about the planted mistake)}" |
		sed 's/^/#   /'
fi

sparse_findings "$kmod" >"$kmod.out"	# not in $(): $rc is needed
findings=$(cat "$kmod.out")
if [ "$rc" = 0 ] && [ -z "$findings" ]; then
	tap_ok "static/sparse"
else
	tap_fail "static/sparse"
	printf '%s\n' "${findings:-make failed}" | sed 's/^/#   /'
fi
tap_finish sparse
