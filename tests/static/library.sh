#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The library's published surface: exactly the symbols of the version
# script are exported, each with a version; the soname is libsoftcm.so.1;
# every public header compiles on its own, as C and as C++.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/static/tap.sh"

so=$top/build/lib/libsoftcm.so.1
map=$top/userspace/lib/libsoftcm.map

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

tap_check "static/library/soname" check_soname
tap_check "static/library/exports-match-version-script" check_exports
for h in linux/softcm.h softcm.h; do
	tap_check "static/library/header-$h-c" check_header "$h" c
	tap_check "static/library/header-$h-c++" check_header "$h" c++
done
tap_finish library
