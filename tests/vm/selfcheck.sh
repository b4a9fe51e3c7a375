#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The runner's own test: each way a run can go wrong must turn it red (a
# non-zero exit and the right line in its output), and a good run must
# stay green.  One boot carries as many failures as can be told apart in
# its output; a failure that ends the guest (a panic) goes last, and one
# that stops the checks after it (KASAN turns lockdep off) gets its own
# boot.  Only the boot that tests kmemleak pays for its scan.
#
#   tests/vm/selfcheck.sh [--kernel stock|debug]
#
# Stock: 2 boots (that a good run stays green, make check's own VM runs
# show).  Debug: 2 boots for what only a kernel can show (its console and
# panic path, KASAN, lockdep, kmemleak); the runner logic the stock boots
# prove (parse.py, init.sh, run.sh) is the same on both, and
# parse_test.sh proves it offline.

set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/static/tap.sh"

kernel=stock
[ "${1:-}" = --kernel ] && kernel=$2
k=$kernel

# boot WANT-EXIT CASES -- run.sh options and programs...
# CASES is "name=pattern" lines: each case passes when the run exited as
# wanted and its pattern (an ERE) is in the output.
boot() {
	local want=$1 cases=$2 out rc name pattern
	shift 3
	out=$("$here/run.sh" --discard --kernel "$kernel" --tests-dir "$here/selfcheck" "$@" 2>&1)
	rc=$?
	echo "$out" | grep '^# time .* guest ' | sed "s|guest|guest of ${cases%%=*}|"
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		name=${line%%=*} pattern=${line#*=}
		if [ "$want" = 0 ] && [ "$rc" = 0 ]; then
			tap_ok "selfcheck/$k/$name"
		elif [ "$want" != 0 ] && [ "$rc" != 0 ] && echo "$out" | grep -qE "$pattern"; then
			tap_ok "selfcheck/$k/$name"
		else
			tap_fail "selfcheck/$k/$name (exit $rc, wanted $want and /$pattern/)"
			echo "$out" | sed 's/^/#   /'
		fi
	done <<<"$cases"
}

if [ "$kernel" = stock ]; then
	# leakid.sh's listener outlives it (so it runs last but one) and the
	# panic ends the guest (last); the console patterns name the line
	# that made kernel-log red, so the report and the panic are told
	# apart.  The per-program limit is what hang.sh waits out; 5 s killed
	# leakid.sh on a loaded host before its id had appeared.
	boot 1 "failing-case-is-red=^not ok - $k/fail.sh/deliberately failing
crashing-program-is-red=^not ok - $k/segv.sh .*1 of 3 results
hung-program-is-red=^not ok - $k/hang.sh # 0 of 1 results
killed-program-leaves-no-process=^# init: hang.sh was killed; killed the 1 process\(es\) it left running \(0 still there\)
kernel-report-is-red=^#   console: .*BUG: softcm self-check: a report on the console
skipped-case-is-red=^not ok - $k/skip.sh/global.needs_something # skipped
missing-program-is-red=^not ok - $k/inventory/gone.sh # expected 1 results
leaked-id-is-red=^not ok - $k/leakid.sh/leaves-nothing-behind # ids=1
kernel-panic-is-red=^#   console: .*Kernel panic
rdma-rxe-takes-udp-4791=^ok - $k/rxeload.sh/rdma_rxe holds udp 4791
rdma-rxe-unloaded-between-programs=^ok - $k/rxefree.sh/udp 4791 is free again" -- \
		--inventory "$here/selfcheck/inventory" --test-timeout 20 --leftover-wait 2 \
		--no-leak-scan pass.sh rxeload.sh rxefree.sh fail.sh segv.sh hang.sh report.sh \
		skip.sh leakid.sh panic.sh
	# The limit leaves a loaded host time to boot the guest (a stock boot
	# takes 3 s idle, over 20 s beside a kernel build and another VM).
	boot 1 "hung-guest-is-red=^not ok - $k/guest # did not finish" -- \
		--test-timeout 0 --timeout 60 --no-leak-scan hang.sh
else
	# Each class of kernel bug fails the run although its case passed;
	# KASAN's report (multi-shot) lets the guest go on to the others.
	boot 1 "use-after-free-is-red=^#   console: .*BUG: KASAN
kernel-report-is-red=^#   console: .*BUG: softcm self-check: a report on the console
kernel-panic-is-red=^#   console: .*Kernel panic" -- --no-leak-scan uaf.sh report.sh panic.sh
	boot 1 "lock-inversion-is-red=^not ok - debug/lockdep-still-on
memory-leak-is-red=^not ok - debug/kmemleak # [1-9][0-9]* leak" -- lockdep.sh leak.sh
fi
tap_finish "selfcheck-$kernel"
