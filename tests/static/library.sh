#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The library's published surface: exactly the symbols of the version
# script are exported, each with a version; the soname is libsoftcm.so.1;
# every public header compiles on its own, as C and as C++.  And its inside:
# its files call only downwards, in the layers internal.h lists, without a
# cycle (objlayers.sh, on the object files, shown to catch both).

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/static/tap.sh"

so=$top/build/lib/libsoftcm.so.1
map=$top/userspace/lib/libsoftcm.map
objlayers=$top/tests/static/objlayers.sh

# internal.h's layers, lowest first
layers="abi | ibv_ctx | ring | ibv_mem ibv_cq ibv_qp ibv_str ibv_misc | ibv_cq_ex ibv_qp_ex | ibv_device ibv_ah | evbuf | id | verbs | event | cma resolve conn addrinfo | batch"

check_soname() {
	readelf -d "$so" | grep -q 'SONAME.*\[libsoftcm\.so\.1\]'
}

# Every global in the map is exported, with its stanza's version as the
# default one; nothing else is.
check_exports() {
	local want have
	want=$(awk '/^[A-Z_0-9.]+ *\{/ { ver = $1 }
		    /global:/ { g = 1 } /local:|^\}/ { g = 0 }
		    g && /^[[:space:]]+[a-z_0-9]+;/ { gsub(/[[:space:];]/, ""); print $0 "@@" ver }' \
	       "$map" | sort)
	have=$(readelf --dyn-syms -W "$so" | awk '$7 != "UND" && $5 == "GLOBAL" {print $8}' |
	       grep -v '^SOFTCM_' | sort)
	[ "$want" = "$have" ] || { diff <(echo "$want") <(echo "$have"); return 1; }
}

check_header() {
	local h=$1 lang=$2 cc=gcc
	[ "$lang" = c++ ] && cc=g++
	echo "#include <$h>" | $cc -x "$lang" -fsyntax-only -Wall -Wextra -Werror \
		-I"$top/uapi" -I"$top/userspace/lib" -
}

check_layers() {
	"$objlayers" "$layers" "$top"/build/lib/*.o
}

# objlayers.sh must fail on the objects a.o and b.o of the sources @a and
# @b in @layers.
check_catches() {
	local layers=$1 a=$2 b=$3 dir ret
	dir=$(mktemp -d) || return 1
	echo "$a" >"$dir/a.c"
	echo "$b" >"$dir/b.c"
	if gcc -c -o "$dir/a.o" "$dir/a.c" && gcc -c -o "$dir/b.o" "$dir/b.c"; then
		! "$objlayers" "$layers" "$dir/a.o" "$dir/b.o"
		ret=$?
	else
		ret=1
	fi
	rm -rf "$dir"
	return $ret
}

tap_check "static/library/soname" check_soname
tap_check "static/library/exports-match-version-script" check_exports
for h in linux/softcm.h softcm.h; do
	tap_check "static/library/header-$h-c" check_header "$h" c
	tap_check "static/library/header-$h-c++" check_header "$h" c++
done
tap_check "static/library/layers" check_layers
tap_check "static/library/layers-catch-upward-call" check_catches "a | b" \
	"int b(void); int a(void) { return b(); }" \
	"int b(void) { return 0; }"
tap_check "static/library/layers-catch-cycle" check_catches "a b" \
	"int b(void); int a(void) { return b(); }" \
	"int a(void); int b(void) { return a(); }"
tap_finish library
