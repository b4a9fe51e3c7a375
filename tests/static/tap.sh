# SPDX-License-Identifier: GPL-2.0
#
# Result lines for the host-side checks, in the runner's format, and the
# counts for tests/run.sh.  Sourced.  COUNTS may name a file to append
# "passed failed skipped" to.

tap_passed=0 tap_failed=0
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
tap_finish() {
	echo "# $1: $tap_passed passed, $tap_failed failed"
	[ -n "${COUNTS:-}" ] && echo "$tap_passed $tap_failed 0" >>"$COUNTS"
	[ "$tap_failed" = 0 ]
}
