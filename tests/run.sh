#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole suite, as `make check` runs it: host-side static checks, the VM
# runner's self-check, every test program on Debian's stock kernel (6.1)
# and on our debug kernel (6.12 with KASAN, lockdep, kmemleak, UBSAN,
# KUnit; built and cached on first use), then a table of where the time
# went and one closing line "N passed, N failed".
#
# Most of the suite waits on timers, so what waits overlaps: two chains
# run side by side,
#
#   stock:  host stages, two at a time -> self-check | VM run
#   debug:  kernel build (cold only)   -> self-check | VM run
#
# (a | b: side by side).
#
# Each stage's output goes to its own log, printed whole when the stage
# ends, with its wall time.  Every stage listed in $expected below must
# write exactly one line of counts; one that writes none or several (or
# never ran) is a failure.
#
#   SOFTCM_KERNELS="stock debug"   which kernels to boot (default both)
#   SOFTCM_STOCK_SHARDS=1          guests for the stock kernel's programs
#   SOFTCM_DEBUG_SHARDS=2          guests for the debug kernel's programs
#                                  (the second joins when the stock self-check ends)
#   SOFTCM_SERIAL=1                one stage and one guest at a time

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
logs=$top/build/check
rm -rf "$logs"
mkdir -p "$logs"
start=$(date +%s)
kernels=${SOFTCM_KERNELS:-stock debug}
serial=${SOFTCM_SERIAL:-0}
SOFTCM_STOCK_SHARDS=${SOFTCM_STOCK_SHARDS:-1}
SOFTCM_DEBUG_SHARDS=${SOFTCM_DEBUG_SHARDS:-2}
[ "$serial" = 1 ] && SOFTCM_STOCK_SHARDS=1 SOFTCM_DEBUG_SHARDS=1

# stage NAME CMD...: run CMD with its output in $logs/NAME.log and its
# counts in $logs/NAME.counts, then print the log whole (one stage at a
# time: the lock keeps concurrent stages' logs apart).
stage() {
	local name=$1 t0 rc=0
	shift
	t0=$(date +%s)
	COUNTS=$logs/$name.counts "$@" >"$logs/$name.log" 2>&1 </dev/null || rc=$?
	echo "$name $(($(date +%s) - t0))" >>"$logs/times"
	{
		flock 9
		echo "# === $name ($(($(date +%s) - t0)) s, exit $rc) ==="
		cat "$logs/$name.log"
	} 9>>"$logs/print.lock"
}

# The debug kernel's build is a stage without results: its time counts,
# and its failure shows as the debug stages' missing counts.
build_debug_kernel() {
	"$top/tests/vm/build-debug-kernel.sh" >/dev/null
}

# The lanes about even (the make check of afebbc9: a 150 s, b 359 s,
# before the DKMS build had ccache and the parser moved to a).
host_lane_a() {
	stage checkpatch "$top/tests/static/checkpatch.sh"
	stage library "$top/tests/static/library.sh"
	stage compat "$top/tests/static/compat.sh"
	stage programs "$top/tests/static/programs.sh"
	stage addrinfo "$top/tests/static/addrinfo.sh"
	stage dissect "$top/tests/interop/dissect_check.sh"
	stage parser "$top/tests/vm/parse_test.sh"
}
host_lane_b() {
	stage sparse "$top/tests/static/sparse.sh"
	stage layering "$top/tests/static/layering.sh"
	stage tools "$top/tests/static/dkms.sh"
}

# A kernel's programs can run in several guests at once (run.sh --shards),
# each taking the next program when it is free (tests/vm/dispatch.py).
# Each guest has two vCPUs, and on two cores a guest spinning on a lock
# whose holder's vCPU the host has descheduled made debug programs 8 times
# slower with 5 guests running, and 1.4 to 3.7 times slower with 2 debug
# guests beside the stock one, which gained nothing, while the debug
# programs were bound by their CPU.  Since they start few programs they
# mostly wait (1178 s of CPU in 1462 s of programs, the make check of
# afebbc9), and waiting for the stock run left the first debug guest
# alone for 1160 s of a 1536-s run: the second boots once the host
# stages and the stock self-check are over ($stock_done), three guests
# in all, and takes what the first has not reached by then.  (The stock
# guest so loaded once sent a READ's responses from two CPUs out of
# order, a responder bug since mended: design.rst, "The responder's skbs
# in the stack".)
stock_done=$logs/stock-done
vm_run() {
	local shards=$SOFTCM_STOCK_SHARDS join=()
	if [ "$1" = debug ]; then
		shards=$SOFTCM_DEBUG_SHARDS
		case " $kernels " in *" stock "*)
			join=(--join-after "$stock_done") ;;
		esac
	fi
	"$top/tests/vm/run.sh" --kernel "$1" --counts "$COUNTS" \
		--inventory "$top/tests/vm/inventory" --shards "$shards" "${join[@]}"
}
# The self-check's boots and the VM run share no state but the module
# build (run.sh serialises it): they go side by side.
vm() {
	if [ "$serial" = 1 ]; then
		stage "selfcheck-$1" "$top/tests/vm/selfcheck.sh" --kernel "$1"
		stage "vm-$1" vm_run "$1"
		return
	fi
	{
		stage "selfcheck-$1" "$top/tests/vm/selfcheck.sh" --kernel "$1"
		[ "$1" = stock ] && touch "$stock_done"
	} &
	local selfcheck=$!
	stage "vm-$1" vm_run "$1"
	wait "$selfcheck"
}

chain_stock() {
	if [ "$serial" = 1 ]; then
		host_lane_a
		host_lane_b
	else
		# wait for this lane only: a bare wait would also wait for
		# the debug chain, and the stock chain would follow it
		host_lane_a &
		local lane_a=$!
		host_lane_b
		wait "$lane_a"
	fi
	case " $kernels " in *" stock "*) vm stock ;; esac
	# (without the stock kernel, or in SOFTCM_SERIAL mode)
	touch "$stock_done"
}

chain_debug() {
	case " $kernels " in *" debug "*) ;; *) return 0 ;; esac
	stage debug-kernel build_debug_kernel
	vm debug
}

if [ "$serial" = 1 ]; then
	chain_stock
	chain_debug
else
	chain_debug &
	debug_chain=$!
	chain_stock
	wait "$debug_chain"
fi

# Every stage that should have run, whether or not its chain got there.
expected="checkpatch library compat programs addrinfo dissect parser sparse layering tools"
for k in $kernels; do
	expected+=" selfcheck-$k vm-$k"
done
passed=0 failed=0 skipped=0
for name in $expected; do
	lines=$(cat "$logs/$name.counts" 2>/dev/null | wc -l)
	if [ "$lines" != 1 ]; then
		echo "not ok - stage/$name # wrote $lines lines of counts, not 1 (did it die?)"
		failed=$((failed + 1))
		continue
	fi
	read -r p f s <"$logs/$name.counts"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done

python3 "$top/tests/vm/timing.py" --budget "$top/tests/vm/budget" \
	--times "$logs/times" $(for k in $kernels; do echo "$logs/vm-$k.log"; done)
echo "# make check took $(($(date +%s) - start))s; $skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
