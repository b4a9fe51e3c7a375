#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --strict, from the installed kernel source package, over
# every kernel-side file: one result per file.  The files are checked on
# every core at once, the results printed in file order.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/vm/lib.sh"
. "$top/tests/static/tap.sh"

checkpatch="$(source_tree)/scripts/checkpatch.pl"
[ -x "$checkpatch" ] || die "no checkpatch.pl (linux-source-6.1 missing?)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one FILE: checkpatch's verdict on FILE in $tmp/N.out and N.rc, N its
# position in the list
one() {
	local n=$1 f=$2 ignore=FILE_PATH_CHANGES
	# TRACE_EVENT()'s argument lists are laid out as in the kernel's own
	# include/trace/events/*.h, which checkpatch flags the same way.
	case "$f" in
	*/trace.h) ignore+=,OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT,COMPLEX_MACRO ;;
	# The one place that tests the kernel's version, on purpose (the
	# module builds for 6.1 and 6.12); checkpatch also takes
	# LINUX_VERSION_CODE for a constant on the left of a comparison.
	*/compat.h) ignore+=,LINUX_VERSION_CODE,CONSTANT_COMPARISON ;;
	esac
	"$checkpatch" --strict --no-tree --quiet --ignore "$ignore" -f "$f" >"$tmp/$n.out" 2>&1
	echo $? >"$tmp/$n.rc"
}
export -f one
export checkpatch tmp

cd "$top"
git ls-files 'drivers/*.[ch]' 'include/*.h' 'uapi/*.h' 'tests/kunit/*.[ch]' >"$tmp/files"
nl -ba -w1 -s' ' "$tmp/files" | xargs -P "$(nproc)" -L 1 bash -c 'one "$@"' _
# The negative control: a file with a planted mistake, checked the same
# way.  Should checkpatch stop finding anything (another version, a
# different exit status, the script not run at all), this fails rather
# than every file going green for ever.
printf '%s\n' '// SPDX-License-Identifier: GPL-2.0' '#include <linux/types.h>' '' \
	'int softcm_checkpatch_control(int a)' '{' '	return a ;' '}' >"$tmp/control.c"
one control "$tmp/control.c"
if [ "$(cat "$tmp/control.rc")" != 0 ] && grep -q "space prohibited before semicolon" "$tmp/control.out"; then
	tap_ok "static/checkpatch-control"
else
	tap_fail "static/checkpatch-control"
	sed 's/^/#   /' "$tmp/control.out"
	echo "#   (checkpatch said nothing about the space before ';')"
fi
n=0
while IFS= read -r f; do
	n=$((n + 1))
	if [ "$(cat "$tmp/$n.rc" 2>/dev/null)" = 0 ]; then
		tap_ok "static/checkpatch/$f"
	else
		tap_fail "static/checkpatch/$f"
		sed 's/^/#   /' "$tmp/$n.out" 2>/dev/null
	fi
done <"$tmp/files"
tap_finish checkpatch
