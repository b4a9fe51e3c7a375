# SPDX-License-Identifier: GPL-2.0
#
# Result lines for the host-side checks, in the runner's format, and the
# counts for tests/run.sh.  Sourced.  COUNTS may name a file to append
# "passed failed skipped" to.

tap_passed=0 tap_failed=0
tap_inventory=$(cd "$(dirname "${BASH_SOURCE[0]}")/../vm" && pwd)/inventory
tap_ok() { tap_passed=$((tap_passed + 1)); echo "ok - $*"; }
tap_fail() { tap_failed=$((tap_failed + 1)); echo "not ok - $*"; }
# tap_check NAME CMD...: run CMD quietly, show its output only on failure
tap_check() {
	local name=$1 log
	shift
	if log=$("$@" 2>&1); then
		tap_ok "$name"
	else
		tap_fail "$name"
		printf '%s\n' "$log" | sed 's/^/#   /'
	fi
}
# tap_finish STAGE: the stage must have reported the number of results
# tests/vm/inventory gives for "stage/STAGE" (a stage that checked nothing,
# an empty file list say, is red), then its counts go to $COUNTS.
tap_finish() {
	local want total=$((tap_passed + tap_failed))
	want=$(awk -v n="stage/$1" '$1 == n { print $2 }' "$tap_inventory")
	if [ -z "$want" ]; then
		tap_fail "inventory/stage/$1 # $total results from a stage the inventory does not list"
	elif [ "$total" != "$want" ]; then
		tap_fail "inventory/stage/$1 # $total results, the inventory says $want"
	fi
	echo "# $1: $tap_passed passed, $tap_failed failed"
	[ -n "${COUNTS:-}" ] && echo "$tap_passed $tap_failed 0" >>"$COUNTS"
	[ "$tap_failed" = 0 ]
}
