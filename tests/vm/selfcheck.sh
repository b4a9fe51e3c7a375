#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The runner's own test: each way a run can go wrong must turn it red (a
# non-zero exit and the right "not ok" line), and a good run must stay
# green.  Each case is a separate boot.
#
#   tests/vm/selfcheck.sh [--kernel stock|debug]


set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/static/tap.sh"

kernel=stock
[ "${1:-}" = --kernel ] && kernel=$2

# case  expected-exit  pattern-in-output  run.sh options...
check() {
	local name=$1 want=$2 pattern=$3 out rc
	shift 3
	out=$("$here/run.sh" --discard --kernel "$kernel" --tests-dir "$here/selfcheck" "$@" 2>&1)
	rc=$?
	if [ "$want" = 0 ] && [ "$rc" = 0 ]; then
		tap_ok "selfcheck/$kernel/$name"
	elif [ "$want" != 0 ] && [ "$rc" != 0 ] && echo "$out" | grep -qE "$pattern"; then
		tap_ok "selfcheck/$kernel/$name"
	else
		tap_fail "selfcheck/$kernel/$name (exit $rc, wanted $want and /$pattern/)"
		echo "$out" | sed 's/^/#   /'
	fi
}

check passing-run-is-green 0 "" pass.sh
check failing-case-is-red 1 "^not ok - $kernel/fail.sh/deliberately failing" pass.sh fail.sh
check crashing-program-is-red 1 "^not ok - $kernel/segv.sh .*1 of 3 results" segv.sh
check kernel-panic-is-red 1 "^not ok - $kernel/guest # did not finish" panic.sh
check hung-program-is-red 1 "^not ok - $kernel/hang.sh" --test-timeout 5 hang.sh
check hung-guest-is-red 1 "^not ok - $kernel/guest # did not finish" \
	--test-timeout 0 --timeout 45 hang.sh
check kernel-report-is-red 1 "^not ok - $kernel/kernel-log" report.sh
check skipped-case-is-red 1 "^not ok - $kernel/skip.sh/global.needs_something # skipped" skip.sh
check missing-program-is-red 1 "^not ok - $kernel/inventory/gone.sh # expected 1 results" \
	--inventory "$here/selfcheck/inventory" pass.sh
check leaked-id-is-red 1 "^not ok - $kernel/leakid.sh/leaves-nothing-behind # ids=1" \
	--leftover-wait 2 leakid.sh
if [ "$kernel" = debug ]; then
	# Each class of kernel bug fails the run although its case passed.
	check use-after-free-is-red 1 "^not ok - debug/(kernel-log|guest)" uaf.sh
	check lock-inversion-is-red 1 "^not ok - debug/lockdep-still-on" lockdep.sh
	check memory-leak-is-red 1 "^not ok - debug/kmemleak" leak.sh
fi
tap_finish "selfcheck-$kernel"
