#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma_getaddrinfo() as librdmacm answers it: addrinfo_compare.c, one table
# of expected outcomes, built against Debian's librdmacm and against
# libsoftcm; each row must pass for both.  Host-side: name lookup needs no
# device (fake_ibdev.c gets librdmacm past its device check).

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/static/tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$top/tests/static/addrinfo_compare.c
cflags="-Wall -Wextra -Werror -O1"

# Rows of addrinfo_compare.c's table: each library must answer all of them.
rows=21

# run_as LIB BINARY [ENV...]: the binary's TAP lines count as ours.  Its
# exit status and its number of rows count too: a crash, which loses the
# lines still buffered, must not leave a green stage behind.
run_as() {
	local lib=$1 bin=$2 line status seen=0 failed=0
	shift 2
	env "$@" "$bin" "$lib" >"$tmp/$lib.out" 2>&1
	status=$?
	while IFS= read -r line; do
		case $line in
		"ok - "*) seen=$((seen + 1)); tap_ok "${line#ok - }" ;;
		"not ok - "*) seen=$((seen + 1)) failed=$((failed + 1))
			tap_fail "${line#not ok - }" ;;
		*) echo "$line" ;;
		esac
	done <"$tmp/$lib.out"
	# 0 with every row passed, 1 with a failed row to show for it
	case $status:$((failed > 0)) in
	0:0 | 1:1) ;;
	*) tap_fail "static/addrinfo/$lib/exit-status ($status, $failed rows failed)" ;;
	esac
	if [ "$seen" != "$rows" ]; then
		tap_fail "static/addrinfo/$lib/rows ($seen of $rows)"
	fi
}

if gcc $cflags -o "$tmp/rdmacm" "$src" -lrdmacm 2>"$tmp/log" &&
   gcc $cflags -shared -fPIC -o "$tmp/fake_ibdev.so" "$top/tests/static/fake_ibdev.c" 2>>"$tmp/log"; then
	run_as rdmacm "$tmp/rdmacm" LD_PRELOAD="$tmp/fake_ibdev.so"
else
	tap_fail "static/addrinfo/rdmacm/build (librdmacm-dev installed?)"
	sed 's/^/#   /' "$tmp/log"
fi
if gcc $cflags -o "$tmp/softcm" "$src" -L"$top/build/lib" -lsoftcm \
       -Wl,-rpath,"$top/build/lib" 2>"$tmp/log"; then
	run_as softcm "$tmp/softcm"
else
	tap_fail "static/addrinfo/softcm/build"
	sed 's/^/#   /' "$tmp/log"
fi
tap_finish addrinfo
