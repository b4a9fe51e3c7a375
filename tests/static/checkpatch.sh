#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --strict, from the installed kernel source package, over
# every kernel-side file: one result per file.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/vm/lib.sh"
. "$top/tests/static/tap.sh"

checkpatch="$(source_tree)/scripts/checkpatch.pl"
[ -x "$checkpatch" ] || die "no checkpatch.pl (linux-source-6.1 missing?)"

cd "$top"
for f in $(git ls-files 'drivers/*.[ch]' 'include/*.h' 'uapi/*.h' 'tests/kunit/*.[ch]'); do
	ignore=FILE_PATH_CHANGES
	# TRACE_EVENT()'s argument lists are laid out as in the kernel's own
	# include/trace/events/*.h, which checkpatch flags the same way.
	case "$f" in
	*/trace.h) ignore+=,OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT,COMPLEX_MACRO ;;
	# The one place that tests the kernel's version, on purpose (the
	# module builds for 6.1 and 6.12); checkpatch also takes
	# LINUX_VERSION_CODE for a constant on the left of a comparison.
	*/compat.h) ignore+=,LINUX_VERSION_CODE,CONSTANT_COMPARISON ;;
	esac
	tap_check "static/checkpatch/$f" "$checkpatch" --strict --no-tree --quiet \
		--ignore "$ignore" -f "$f"
done
tap_finish checkpatch
