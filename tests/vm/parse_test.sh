#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The verdict logic of parse.py, offline: fabricated guest outputs, each
# of which must come out red (or, for the control, green).  Runs on the
# host in a second; the VM self-check proves the same end to end.

set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/vm/lib.sh"
. "$top/tests/static/tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kunit_py="$(source_tree)/tools/testing/kunit/kunit.py"

good_kunit() {
	cat <<'K'
SOFTCM-KUNIT-LOAD 0
SOFTCM-KUNIT-BEGIN softcm_params
KTAP version 1
1..1
    KTAP version 1
    # Subtest: softcm_params
    1..2
    ok 1 first_case
    ok 2 second_case
ok 1 softcm_params
SOFTCM-KUNIT-END softcm_params
K
}
prog() {
	printf 'SOFTCM-BEGIN prog_test\nTAP version 13\n1..1\nok 1 global.case\nSOFTCM-END prog_test 0\n'
	printf 'SOFTCM-TIME prog_test 12.5\n'
	printf 'SOFTCM-COST prog_test 20.25 37\n'
	leftovers prog_test
}
leftovers() {
	echo "SOFTCM-LEFTOVERS $1 ids=${2:-0} connections=0 files=0 module_refs=0 netns=0"
}
# A program with a case that the kselftest harness skipped: 6.1 prints
# no name on the "ok N # SKIP" line, only on the RUN line before it.
skipping_prog() {
	cat <<'P'
SOFTCM-BEGIN skip_test
TAP version 13
1..2
#  RUN           global.first ...
#            OK  global.first
ok 1 global.first
#  RUN           global.second ...
#      SKIP      no such thing
#            OK  global.second
ok 2 # SKIP no such thing
SOFTCM-END skip_test 0
P
	leftovers skip_test
}
tail_ok() {
	printf 'SOFTCM-UNLOAD 0\nSOFTCM-DEBUG-LOCKS 1\nSOFTCM-KMEMLEAK 0 0\nSOFTCM-TAINT 4096\nSOFTCM-DONE\n'
}

# verdict NAME WANT-EXIT PATTERN: results on stdin, console in $console
# (fed by redirection, never a pipe: the counters must stay in this shell)
verdict() {
	local name=$1 want=$2 pattern=$3 out rc
	cat >"$tmp/results"
	printf '%s\n' "${console:-[    0.0] Linux version x}" >"$tmp/console"
	out=$(python3 "$here/parse.py" debug "$tmp/results" "$tmp/console" \
	      --kunit-py "$kunit_py" --kunit-suites softcm_params --debug-kernel \
	      --artifacts-dir "$tmp/art" --host-dir "$tmp/host" ${extra:-})
	rc=$?
	if [ "$rc" = "$want" ] && { [ -z "$pattern" ] || echo "$out" | grep -qE "$pattern"; }; then
		tap_ok "parser/$name"
	else
		tap_fail "parser/$name (exit $rc, wanted $want and /$pattern/)"
		echo "$out" | sed 's/^/#   /'
	fi
}

verdict good-run-is-green 0 "^# debug: 9 passed, 0 failed" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok)
verdict failing-kunit-case-is-red 1 "^not ok - debug/kunit/softcm_params/second_case" < <(
	echo "SOFTCM-BOOT x"; good_kunit | sed 's/    ok 2 second_case/    not ok 2 second_case/'; prog; tail_ok)
verdict missing-kunit-suite-is-red 1 "^not ok - debug/kunit/softcm_params # suite did not report" < <(
	echo "SOFTCM-BOOT x"; prog; tail_ok)
verdict kunit-load-failure-is-red 1 "^not ok - debug/kunit/module-load" < <(
	echo "SOFTCM-BOOT x"; good_kunit | sed 's/KUNIT-LOAD 0/KUNIT-LOAD 1/'; prog; tail_ok)
verdict lockdep-off-is-red 1 "^not ok - debug/lockdep-still-on" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok | sed 's/DEBUG-LOCKS 1/DEBUG-LOCKS 0/')
verdict leak-is-red 1 "^not ok - debug/kmemleak" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok | sed 's/KMEMLEAK 0 0/KMEMLEAK 2 0/')
# kmemleak turns itself off when it cannot allocate its metadata; its
# empty list must not read as "no leaks" (the scan is refused, and the
# console says so).
verdict disabled-kmemleak-is-red 1 "^not ok - debug/kmemleak # the scan was refused" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok | sed 's/KMEMLEAK 0 0/KMEMLEAK 0 1/')
console="[    5.1] kmemleak: Kernel memory leak detector disabled" \
	verdict kmemleak-off-on-console-is-red 1 "^not ok - debug/kernel-log" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok)
extra=--no-leak-scan verdict leak-scan-off-when-asked-is-green 0 "^# debug: 8 passed, 0 failed" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok | grep -v KMEMLEAK)
verdict missing-leak-scan-is-red 1 "^not ok - debug/debug-check-kmemleak" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok | grep -v KMEMLEAK)
verdict warning-taint-is-red 1 "^not ok - debug/kernel-taint" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok | sed 's/TAINT 4096/TAINT 4608/')
verdict unload-failure-is-red 1 "^not ok - debug/module-unload-after-tests" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok | sed 's/UNLOAD 0/UNLOAD 1/')
# The unload check may not vanish because a program left softcm unloaded.
verdict missing-unload-is-red 1 "^not ok - debug/module-unload-after-tests # the guest did not report it" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok | grep -v UNLOAD)
verdict program-time-is-shown 0 "^# time debug prog_test 12.5" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok)
verdict case-cost-is-shown 0 "^# case-time debug prog_test/global.case 1.5 2.5" < <(
	echo "SOFTCM-BOOT x"; good_kunit
	prog | sed 's/^ok 1 global.case$/&\n# case-time 1.5 2.5/'; tail_ok)
verdict program-cost-is-shown 0 "^# cost debug prog_test 20.2 37" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok)
verdict nonzero-exit-is-red 1 "^not ok - debug/prog_test # exit status 1" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog | sed 's/END prog_test 0/END prog_test 1/'; tail_ok)
console="[    5.1] BUG: KASAN: slab-use-after-free in foo+0x1/0x2" \
	verdict kasan-report-is-red 1 "^not ok - debug/kernel-log" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok)
console="[    5.1] UBSAN: shift-out-of-bounds in net/x.c:1:2" \
	verdict ubsan-report-is-red 1 "^not ok - debug/kernel-log" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok)
console="[    5.1] general protection fault, probably for non-canonical address 0xdead: 0000 [#1] PREEMPT SMP KASAN NOPTI" \
	verdict kernel-gpf-is-red 1 "^not ok - debug/kernel-log" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok)
console="[    5.1] traps: ib_send_lat[3606] general protection fault ip:7effda450d56 sp:7ffc96f73d30 error:0 in libibverbs.so.1[7effda448000+a000]" \
	verdict user-program-gpf-is-not-the-kernels 0 "^ok - debug/kernel-log" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok)
# Artifacts: a capture announced by the guest must arrive whole and be
# checked on the host (tests/interop/dissect.py's TAP in the host dir).
mkdir -p "$tmp/art" "$tmp/host"
printf 'abcd' >"$tmp/art/x.pcap"
printf '1..1\nok 1 dissects\n' >"$tmp/host/x.tap"
echo 0 >"$tmp/host/x.rc"
verdict checked-capture-is-green 0 "^ok - debug/host/x/dissects" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; echo "SOFTCM-ARTIFACT x.pcap 4"; tail_ok)
verdict truncated-artifact-is-red 1 "^not ok - debug/artifact/x.pcap # 4 of 5 bytes" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; echo "SOFTCM-ARTIFACT x.pcap 5"; tail_ok)
verdict lost-artifact-is-red 1 "^not ok - debug/artifact/y.pcap # -1 of 4 bytes" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; echo "SOFTCM-ARTIFACT y.pcap 4"; tail_ok)
printf '1..2\nok 1 dissects\nnot ok 2 icrc\n' >"$tmp/host/x.tap"
echo 1 >"$tmp/host/x.rc"
verdict failed-capture-check-is-red 1 "^not ok - debug/host/x/icrc" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; echo "SOFTCM-ARTIFACT x.pcap 4"; tail_ok)
rm "$tmp/host/x.tap"
verdict unchecked-capture-is-red 1 "^not ok - debug/host/x # the capture was not checked" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; echo "SOFTCM-ARTIFACT x.pcap 4"; tail_ok)
rm -r "$tmp/art" "$tmp/host"
# Skips: shown and counted as skips, and red unless tests/vm/skips allows
# them; a skip is never a pass.
printf '# none\n' >"$tmp/noskips"
printf 'debug skip_test/global.second  needs a thing\n' >"$tmp/skips"
extra="--skips $tmp/noskips" verdict harness-skip-is-red 1 \
	"^not ok - debug/skip_test/global.second # skipped \(no such thing\)" < <(
	echo "SOFTCM-BOOT x"; good_kunit; skipping_prog; tail_ok)
extra="--skips $tmp/skips" verdict allowed-skip-is-a-skip 0 \
	"^# debug: 9 passed, 0 failed, 1 skipped" < <(
	echo "SOFTCM-BOOT x"; good_kunit; skipping_prog; tail_ok)
extra="--skips $tmp/noskips" verdict shell-skip-is-red 1 \
	"^not ok - debug/prog_test/b # skipped \(setup failed\)" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog | sed 's/^1\.\.1/1..2/; s/^ok 1 global.case/&\nok 2 b # SKIP setup failed/'; tail_ok)
# What a program leaves behind fails it; so does a guest that never looked.
verdict leftover-id-is-red 1 "^not ok - debug/prog_test/leaves-nothing-behind # ids=1" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog | sed 's/ids=0/ids=1/'; tail_ok)
verdict unchecked-leftovers-are-red 1 "^not ok - debug/prog_test/leaves-nothing-behind # the guest did not check" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog | grep -v LEFTOVERS; tail_ok)
# The inventory: the programs and case counts it lists, and no others.
printf 'prog_test 1 1\nkunit/softcm_params - 2\n' >"$tmp/inv"
extra="--inventory $tmp/inv" verdict inventory-matches-is-green 0 "^ok - debug/inventory # 2 programs, 3 results" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok)
printf 'prog_test 1 1\nkunit/softcm_params - 2\ngone_test 4 4\n' >"$tmp/inv"
extra="--inventory $tmp/inv" verdict missing-program-is-red 1 "^not ok - debug/inventory/gone_test # expected 4 results" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok)
printf 'prog_test 2 2\nkunit/softcm_params - 2\n' >"$tmp/inv"
extra="--inventory $tmp/inv" verdict vanished-case-is-red 1 "^not ok - debug/inventory/prog_test # 1 results, the inventory says 2" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok)
printf 'prog_test 1 1\n' >"$tmp/inv"
extra="--inventory $tmp/inv" verdict unlisted-program-is-red 1 "^not ok - debug/inventory/kunit/softcm_params # 2 results from a program the inventory does not list" < <(
	echo "SOFTCM-BOOT x"; good_kunit; prog; tail_ok)
# Two guests ran one kernel's programs side by side (run.sh --shards):
# each guest's run-wide verdicts are its own, and one that died is red
# although the other finished.
two_guests() {
	local want=$1 pattern=$2 out rc
	printf '%s\n' "SOFTCM-BOOT x" "$(good_kunit)" "$(tail_ok)" >"$tmp/r1"
	printf '%s\n' "SOFTCM-BOOT x" "$(prog)" >"$tmp/r2"
	[ "$want" = 0 ] && tail_ok >>"$tmp/r2"
	echo "[    0.0] Linux version x" >"$tmp/console"
	out=$(python3 "$here/parse.py" debug "$tmp/r1" "$tmp/console" "$tmp/r2" "$tmp/console" \
	      --kunit-py "$kunit_py" --kunit-suites softcm_params --debug-kernel)
	rc=$?
	if [ "$rc" = "$want" ] && echo "$out" | grep -qE "$pattern"; then
		tap_ok "parser/two-guests-$want"
	else
		tap_fail "parser/two-guests-$want (exit $rc, wanted $want and /$pattern/)"
		echo "$out" | sed 's/^/#   /'
	fi
}
two_guests 0 "^ok - debug/guest2/kmemleak"
two_guests 1 "^not ok - debug/guest2/guest # did not finish"
verdict empty-output-is-red 1 "^not ok - debug/guest # never reached init" </dev/null
# dispatch.py order: the longest first by the budget (60 s without a
# row), ties in the order given.
printf 'a_test - 50\nb_test - 40\nc_test - 40\nd_test - 20\n' >"$tmp/budget"
got=$(python3 "$here/dispatch.py" order debug "$tmp/budget" d_test c_test x_test b_test a_test |
	paste -sd' ')
if [ "$got" = "x_test a_test c_test b_test d_test" ]; then
	tap_ok "parser/dispatch-order"
else
	tap_fail "parser/dispatch-order (got '$got')"
fi
# dispatch.py serve: a guest's lines go to its results, each SOFTCM-NEXT
# is answered with the queue's next program (then an empty line), and the
# server returns once the guest's process is gone.
dispatch_serve() {
	local d=$tmp/dispatch guest srv got= line i
	mkdir -p "$d"
	printf 'a_test\nb_test\n' >"$d/queue"
	mkfifo "$d/res.in" "$d/res.out"
	sleep 60 &
	guest=$!
	python3 "$here/dispatch.py" serve --queue "$d/queue" --pid "$guest" "$d/res" "$d/results" &
	srv=$!
	exec 7<>"$d/res.out" 8<>"$d/res.in"
	for i in 1 2 3; do
		echo "line $i" >&7
		echo SOFTCM-NEXT >&7
		line=none
		read -r -t 10 line <&8
		got+="$line,"
	done
	kill "$guest"
	wait "$guest" 2>/dev/null
	timeout 10 tail --pid="$srv" -f /dev/null
	i=$?
	exec 7>&- 8>&-
	if [ "$got" = "a_test,b_test,," ] && [ "$i" = 0 ] && [ ! -s "$d/queue" ] &&
	   [ "$(cat "$d/results")" = "$(printf 'line 1\nline 2\nline 3')" ]; then
		tap_ok "parser/dispatch-serve"
	else
		tap_fail "parser/dispatch-serve (answers '$got', server end $i)"
		sed 's/^/#   /' "$d/results"
		kill "$srv" 2>/dev/null
	fi
}
dispatch_serve
tap_finish parser
