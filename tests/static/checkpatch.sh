#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --strict, from the installed kernel source package, over
# every kernel-side file: one result per file, printed in file order.
# checkpatch takes many files in one run: one run per core, each over its
# share of the files (a run per file spent a third of the stage starting
# perl and reading checkpatch's tables again), its terse lines naming the
# file of each finding; a file with findings is checked again alone for
# the verbose report.  The few files with exceptions of their own are
# checked alone.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/vm/lib.sh"
. "$top/tests/static/tap.sh"

checkpatch="$(source_tree)/scripts/checkpatch.pl"
[ -x "$checkpatch" ] || die "no checkpatch.pl (linux-source-6.1 missing?)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ignores() {
	local ignore=FILE_PATH_CHANGES
	# TRACE_EVENT()'s argument lists are laid out as in the kernel's own
	# include/trace/events/*.h, which checkpatch flags the same way.
	case "$1" in
	*/trace.h) ignore+=,OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT,COMPLEX_MACRO ;;
	# The one place that tests the kernel's version, on purpose (the
	# module builds for 6.1 and 6.12); checkpatch also takes
	# LINUX_VERSION_CODE for a constant on the left of a comparison.
	*/compat.h) ignore+=,LINUX_VERSION_CODE,CONSTANT_COMPARISON ;;
	esac
	echo "$ignore"
}

# one N FILE: checkpatch's verdict on FILE alone in $tmp/N.out and N.rc
one() {
	"$checkpatch" --strict --no-tree --quiet --ignore "$(ignores "$2")" -f "$2" >"$tmp/$1.out" 2>&1
	echo $? >"$tmp/$1.rc"
}

# share K: the files of $tmp/share.K in one run; each file's terse
# findings in $tmp/N.out, N.rc 0 if it has none.  A run that did not
# report on every file (checkpatch died on one) fails them all.
share() {
	local k=$1 n f
	"$checkpatch" --strict --no-tree --quiet --terse --ignore FILE_PATH_CHANGES \
		-f $(cut -d' ' -f2- "$tmp/share.$k") >"$tmp/share.$k.out" 2>&1
	if [ "$(grep -c '^total: ' "$tmp/share.$k.out")" != "$(wc -l <"$tmp/share.$k")" ]; then
		while read -r n f; do
			cp "$tmp/share.$k.out" "$tmp/$n.out"
			echo 1 >"$tmp/$n.rc"
		done <"$tmp/share.$k"
		return
	fi
	while read -r n f; do
		awk -v f="$f:" 'index($0, f) == 1' "$tmp/share.$k.out" >"$tmp/$n.out"
		[ -s "$tmp/$n.out" ] && one "$n" "$f"
		[ -s "$tmp/$n.out" ]
		echo $(($? == 0)) >"$tmp/$n.rc"
	done <"$tmp/share.$k"
}
export -f ignores one share
export checkpatch tmp

cd "$top"
git ls-files 'drivers/*.[ch]' 'include/*.h' 'uapi/*.h' 'tests/kunit/*.[ch]' >"$tmp/files"
cores=$(nproc)
nl -ba -w1 -s' ' "$tmp/files" | while read -r n f; do
	if [ "$(ignores "$f")" = FILE_PATH_CHANGES ]; then
		echo "$n $f" >>"$tmp/share.$((n % cores))"
	else
		echo "$n $f" >>"$tmp/alone"
	fi
done
{
	for ((k = 0; k < cores; k++)); do
		[ -e "$tmp/share.$k" ] && echo "share $k"
	done
	[ -e "$tmp/alone" ] && sed 's/^/one /' "$tmp/alone"
} | xargs -P "$cores" -L 1 bash -c '"$@"' _
# The negative control: a file with a planted mistake, checked the same
# way.  Should checkpatch stop finding anything (another version, a
# different exit status, the script not run at all), this fails rather
# than every file going green for ever.
printf '%s\n' '// SPDX-License-Identifier: GPL-2.0' '#include <linux/types.h>' '' \
	'int softcm_checkpatch_control(int a)' '{' '	return a ;' '}' >"$tmp/control.c"
echo "control $tmp/control.c" >"$tmp/share.control"
share control
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
