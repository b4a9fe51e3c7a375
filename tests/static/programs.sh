#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every program of Debian 12's rdmacm-utils, ibverbs-utils and perftest
# (installed by tests/vm/install-deps.sh) starts under softcm exec: the
# loader binds it to the compat libraries (libibverbs.so.1, librdmacm.so.1
# and, for perftest, libmlx5.so.1 and libefa.so.1) with nothing undefined
# and no version missing (ldd -r, as BIND_NOW binds), and run with an
# option it does not know it gets to main() and answers with its usage or
# an error of its own: no "symbol lookup error", no "version ... not
# found", no signal.  The host has no softcm module, so nothing here moves
# data; tests/interop/exec_test.sh runs some of them in the VM.  Then the
# rsocket programs say, once, that softcm has no rsockets; librspreload.so
# loads into a program run under softcm exec, and softcm exec refuses an
# LD_PRELOAD naming it with one message; and the admin guide's table names
# exactly these programs.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/static/tap.sh"

softcm=$top/build/bin/softcm
compat=$top/build/lib/softcm/compat
guide=$top/Documentation/admin-guide.rst
rspreload=/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so
loader_error='symbol lookup error|version .* not found|error while loading shared libraries|undefined symbol'

# The ELF programs of the three packages, one a line.
programs() {
	local f
	dpkg -L rdmacm-utils ibverbs-utils perftest 2>/dev/null | grep '^/usr/bin/' | sort |
		while read -r f; do
			[ -f "$f" ] && [ "$(head -c 4 "$f" | tail -c 3)" = ELF ] && echo "$f"
		done
}

# starts PROG: bound to the compat libraries, and reaches main().
starts() {
	local prog=$1 out lib st
	out=$("$softcm" exec ldd -r "$prog" 2>&1)
	if grep -qE "$loader_error" <<<"$out"; then
		echo "$out"
		return 1
	fi
	for lib in libibverbs.so.1 librdmacm.so.1 libmlx5.so.1 libefa.so.1; do
		grep -q "	$lib => " <<<"$out" || continue
		grep -q "	$lib => $compat/$lib " <<<"$out" || {
			echo "$lib is not the compat one:"; echo "$out"; return 1; }
	done
	out=$(timeout 10 "$softcm" exec "$prog" --softcm-no-such-option </dev/null 2>&1)
	st=$?
	echo "$out" | head -n 5
	echo "exit status $st"
	! grep -qE "$loader_error" <<<"$out" && [ "$st" != 127 ] && [ "$st" != 126 ] &&
		{ [ "$st" -lt 129 ] || [ "$st" -gt 192 ]; }
}

# says_no_rsockets PROG ARGS...: one line from softcm, then the program's own error.
says_no_rsockets() {
	local out n
	out=$(timeout 10 "$softcm" exec "$@" </dev/null 2>&1)
	echo "$out"
	n=$(grep -c 'softcm: rsockets .* not supported' <<<"$out")
	[ "$n" = 1 ] && ! grep -qE "$loader_error" <<<"$out"
}

preload_loads() {
	local out
	out=$("$softcm" exec env LD_PRELOAD="$rspreload" sh -c 'echo started' 2>&1)
	echo "$out"
	[ "$out" = started ]
}

preload_refused() {
	local out st
	out=$(LD_PRELOAD=$rspreload "$softcm" exec true 2>&1)
	st=$?
	echo "$out"
	echo "exit status $st"
	[ "$st" = 126 ] && [ "$(grep -c . <<<"$out")" = 1 ] && grep -q librspreload <<<"$out"
}

# The admin guide's table ("Debian's programs under softcm exec") names
# each program once, and no other.
table_matches() {
	local listed found
	listed=$(awk '/^Debian.s programs under/ { on = 1 } on && /^``[a-z_0-9.]+``  / {
			gsub(/`/, "", $1); print $1 } on && /^Where a program connects/ { exit }' "$guide" | sort)
	found=$( (programs | xargs -n1 basename; basename "$rspreload") | sort)
	[ -n "$listed" ] && [ "$listed" = "$found" ] || { diff <(echo "$listed") <(echo "$found"); return 1; }
}

list=$(programs)
tap_check "static/programs/three-packages-installed" test "$(wc -l <<<"$list")" -ge 33
for p in $list; do
	tap_check "static/programs/$(basename "$p")-starts" starts "$p"
done
for p in rstream riostream udpong; do
	tap_check "static/programs/$p-says-no-rsockets" says_no_rsockets "$p"
done
tap_check "static/programs/rcopy-says-no-rsockets" says_no_rsockets rcopy /dev/null 127.0.0.1:/x
tap_check "static/programs/librspreload-loads" preload_loads
tap_check "static/programs/librspreload-refused-by-exec" preload_refused
tap_check "static/programs/admin-guide-table" table_matches
tap_finish programs
