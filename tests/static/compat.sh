#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# softcm exec's compat libraries (build/lib/softcm/compat, softcm(8)):
# their sonames and dependency, that libibverbs.so.1 exports exactly what
# libsoftcm.map (with compat.map's few) and rdma-core's table
# (userspace/compat/rdma-core.versions) share, with the table's versions, that the table agrees with Debian's
# rdma-core, and which of the librdmacm and libibverbs symbols Debian's
# programs import the compat libraries provide with the right version.
#
# ucmatose and cmtime (the acceptance tests', tests/interop/exec_test.sh)
# are also bound by the loader here; every program of Debian's three
# packages is started under softcm exec by tests/static/programs.sh.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/static/tap.sh"

compat=$top/build/lib/softcm/compat
table=$top/userspace/compat/rdma-core.versions
maps="$top/userspace/lib/libsoftcm.map $top/userspace/compat/compat.map"
sysdir=/usr/lib/x86_64-linux-gnu
required="ucmatose cmtime"
others="rping udaddy rdma_server rdma_client ibv_devices ibv_devinfo"

# "SYMBOL@VERSION" for each symbol FILE defines with a default version of
# rdma-core's (not the hidden compat ones, not the private stanza).
defined() {
	objdump -T "$1" | awk 'NF >= 6 && !/\*UND\*/  && $(NF - 1) ~ /^(RDMACM|IBVERBS)_[0-9]/ &&
			      $NF != $(NF - 1) { print $NF "@" $(NF - 1) }' | sort -u
}

# The same with the private versions (IBVERBS_PRIVATE_N) too.
defined_all() {
	objdump -T "$1" | awk 'NF >= 6 && !/\*UND\*/  && $(NF - 1) ~ /^(RDMACM|IBVERBS)_/ &&
			      $NF != $(NF - 1) { print $NF "@" $(NF - 1) }' | sort -u
}

# "SYMBOL@VERSION" for each rdma-core symbol FILE imports.
imported() {
	objdump -T "$1" | awk 'NF >= 6 && /\*UND\*/  && $(NF - 1) ~ /^\(?(RDMACM|IBVERBS)_/ {
			       v = $(NF - 1); gsub(/[()]/, "", v); print $NF "@" v }' | sort -u
}

# The version nodes FILE defines.
verdefs() {
	readelf -V -W "$1" | sed -n 's/.*Flags: [A-Z ]*none.*Name: \(.*\)$/\1/p;
				     s/.*Flags: WEAK.*Name: \(.*\)$/\1/p' | sort -u
}

check_sonames() {
	readelf -d "$compat/libibverbs.so.1" | grep -q 'SONAME.*\[libibverbs\.so\.1\]' &&
		readelf -d "$compat/librdmacm.so.1" | grep -q 'SONAME.*\[librdmacm\.so\.1\]' &&
		readelf -d "$compat/librdmacm.so.1" | grep -q 'NEEDED.*\[libibverbs\.so\.1\]' || return 1
	# One copy of libsoftcm's state: librdmacm.so.1 defines no function.
	[ -z "$(defined "$compat/librdmacm.so.1")" ] || {
		echo "librdmacm.so.1 defines symbols:"; defined "$compat/librdmacm.so.1"; return 1; }
}

check_exports() {
	local want have
	# shellcheck disable=SC2086
	want=$(cat $maps | sed 's|/\*.*\*/||' |
		sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z_0-9]*\);[[:space:]]*$/\1/p' | sort -u |
		join -1 1 -2 3 - <(awk '!/^#/ && NF == 3 && $3 != "-"' "$table" | sort -k3,3) |
		awk '{ print $1 "@" $3 }' | sort -u)
	have=$(defined_all "$compat/libibverbs.so.1")
	[ -n "$want" ] && [ "$want" = "$have" ] || { diff <(echo "$want") <(echo "$have"); return 1; }
}

# Every symbol Debian's libraries export with a default version has that
# version in the table.
check_table() {
	local l s
	for l in librdmacm libibverbs; do
		[ -e "$sysdir/$l.so.1" ] || { echo "no $sysdir/$l.so.1"; return 1; }
		while read -r s; do
			grep -qx "$l ${s#*@} ${s%@*}" "$table" || { echo "$l: $s not in the table"; return 1; }
		done < <(defined "$sysdir/$l.so.1")
	done
}

# The compat library with each soname defines every version the system's
# does, so that no program fails to load for a missing version.
check_verdefs() {
	local l missing
	for l in librdmacm libibverbs; do
		missing=$(comm -23 <(verdefs "$sysdir/$l.so.1" | grep -v PRIVATE) \
				   <(verdefs "$compat/$l.so.1"))
		[ -z "$missing" ] || { echo "$l.so.1 lacks $missing"; return 1; }
	done
}

# check_imports PROG REQUIRED: what PROG imports and libibverbs.so.1 (which
# holds them all) lacks.
check_imports() {
	local prog=/usr/bin/$1 req=$2 missing
	[ -x "$prog" ] || { echo "no $prog"; return 1; }
	missing=$(comm -23 <(imported "$prog") <(defined_all "$compat/libibverbs.so.1"))
	[ -z "$missing" ] && return 0
	echo "$1 imports $(imported "$prog" | wc -l) rdma-core symbols;" \
	     "not provided yet$([ "$req" = 0 ] && echo " (not required)"):"
	echo "$missing" | paste -sd' ' | fold -s -w 90
	[ "$req" = 0 ]
}

# glibc's loader itself, with relocations processed as BIND_NOW does:
# both sonames from the compat directory, nothing undefined, no version
# missing, neither rdma-core's libraries nor libsoftcm.so.1 loaded.
check_loader() {
	local out
	out=$(LD_LIBRARY_PATH=$compat ldd -r "/usr/bin/$1" 2>&1)
	echo "$out"
	echo "$out" | grep -q "librdmacm.so.1 => $compat/librdmacm.so.1 " &&
		echo "$out" | grep -q "libibverbs.so.1 => $compat/libibverbs.so.1 " &&
		! echo "$out" | grep -qE 'undefined symbol|not found|libsoftcm|'"$sysdir"'/lib(rdmacm|ibverbs)'
}

tap_check "static/compat/sonames-one-copy" check_sonames
tap_check "static/compat/exports-libsoftcm-map-with-rdma-core-versions" check_exports
tap_check "static/compat/table-agrees-with-debian-rdma-core" check_table
tap_check "static/compat/defines-debian-versions" check_verdefs
for p in $required; do
	tap_check "static/compat/imports-of-$p-all-provided" check_imports "$p" 1
	tap_check "static/compat/loader-binds-$p" check_loader "$p"
done
for p in $others; do
	tap_check "static/compat/imports-of-$p-all-provided" check_imports "$p" 1
done
tap_finish compat
