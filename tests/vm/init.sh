#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the test VM.  Runs the programs listed in /softcm/run.conf and
# writes their TAP output, framed by marker lines, to the second serial port
# (/dev/ttyS1); the kernel console stays on ttyS0.  The host only counts a
# run as finished when it sees SOFTCM-DONE: a panic, a hang or a crash of
# this script all leave it out.  Files the programs leave in
# $SOFTCM_ARTIFACTS (packet captures, benchmark results) go to the host as
# a base64 tar on the third serial port (/dev/ttyS2), each announced on
# ttyS1 first so the host can tell a lost file from one never written.

export PATH=/softcm/bin:/usr/sbin:/usr/bin
export HOME=/root LD_LIBRARY_PATH=/softcm/lib

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# bash's process substitution opens /dev/fd/N (case_times below).
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
ip link set lo up

# Read-write: the host answers on it which program to run next.
exec 3<>/dev/ttyS1
# Raw, so the host reads exactly what the programs wrote (no CR added).
stty -F /dev/ttyS1 raw -echo 2>/dev/null
out() { echo "$*" >&3; }

# SOFTCM_TEST_TIMEOUT, SOFTCM_MODE,
# SOFTCM_KERNEL (stock or debug: the programs scale their CM timers by it),
# SOFTCM_LEFTOVER_WAIT (seconds a program's leftovers may take to go),
# SOFTCM_LEAK_SCAN (1: end with a kmemleak scan, on kernels that have it)
. /softcm/run.conf
export SOFTCM_KERNEL SOFTCM_SLOW_SHIFT
export SOFTCM_KO=/softcm/softcm.ko SOFTCM_TOOL=/softcm/bin/softcm
export SOFTCM_BUGS_KO=/softcm/softcm_bugs.ko
export SOFTCM_ARTIFACTS=/tmp/artifacts
mkdir -p "$SOFTCM_ARTIFACTS"

# softcm.ko needs the UDP tunnel helpers and the crypto API's hashes (a
# module on the debug kernel); tests load it with finit_module(), which
# does not resolve dependencies, so they are loaded here.
modprobe -a udp_tunnel ip6_udp_tunnel crypto_hash

send_artifacts() {
	local f
	for f in "$SOFTCM_ARTIFACTS"/*; do
		[ -f "$f" ] && out "SOFTCM-ARTIFACT ${f##*/} $(wc -c <"$f")"
	done
	[ -n "$(ls -A "$SOFTCM_ARTIFACTS")" ] || return 0
	stty -F /dev/ttyS2 raw -echo 2>/dev/null
	tar -C "$SOFTCM_ARTIFACTS" -cf - . | base64 >/dev/ttyS2
}

finish() {
	send_artifacts
	out "SOFTCM-DONE"
	sync
	# -no-reboot turns the reboot into QEMU's exit; poweroff needs ACPI.
	reboot -f
	poweroff -f
}

# Wall time in the guest (its clock follows the host's under TCG): each
# program's is reported, so that the host can say where the time goes.
now() { cut -d' ' -f1 /proc/uptime; }
# nap SECONDS: as sleep(1), without a process (tests/lib/tap.sh's nap):
# the waits below go round every 0.1 s.
exec {nap_fd}<> <(:)
nap() { read -r -t "$1" -u "$nap_fd"; return 0; }
since() { awk -v t0="$1" -v t1="$(now)" 'BEGIN { printf "%.1f", t1 - t0 }'; }

# What a program cost the host, not only how long it took: the guest's
# busy CPU time (user, system, interrupts; USER_HZ ticks, which under
# TCG follow the host's clock) and the tasks it created (/proc/stat's
# "processes" counts every fork and clone, threads too), both read from
# /proc/stat with builtins so that reading them creates none.  The
# host is CPU-bound while make check runs, so a program's CPU time is
# what it takes from the others.
cost_mark() {
	local tag rest u n s idle io irq soft steal
	busy=0 procs=0
	while read -r tag rest; do
		case $tag in
		cpu) read -r u n s idle io irq soft steal _ <<<"$rest"
		     busy=$((u + n + s + irq + soft + steal)) ;;
		processes) procs=$rest ;;
		esac
	done </proc/stat
}
cost_since() {
	local b0=$busy p0=$procs
	cost_mark
	printf '%d.%02d %d' $(((busy - b0) / 100)) $(((busy - b0) % 100)) $((procs - p0))
}

out "SOFTCM-BOOT $(uname -r)"

if [ "$SOFTCM_MODE" = demo ]; then
	/softcm/demo.sh >&3 2>&1
	out "SOFTCM-DEMO-EXIT $?"
	finish
fi

# KUnit suites run when softcm_kunit.ko loads; each suite's KTAP results
# are read back from debugfs and parsed on the host.
run_kunit() {
	local d rc t0
	t0=$(now)
	insmod "$SOFTCM_KO"
	insmod /softcm/softcm_kunit.ko
	rc=$?
	out "SOFTCM-KUNIT-LOAD $rc"
	for d in /sys/kernel/debug/kunit/softcm_*; do
		[ -e "$d/results" ] || continue
		out "SOFTCM-KUNIT-BEGIN ${d##*/}"
		cat "$d/results" >&3
		out "SOFTCM-KUNIT-END ${d##*/}"
	done
	rmmod softcm_kunit
	rmmod softcm
	out "SOFTCM-TIME kunit $(since "$t0")"
}

# What a program left behind, once the timewaits it started are over:
# ids, connections and files of the initial namespace, references on the
# module (each open /dev/softcm file holds one) and namespaces it made.
# Polled for up to SOFTCM_LEFTOVER_WAIT seconds; parse.py fails the
# program on anything but zeros.
# The poll reads with the shell's own builtins: while timewaits end it
# may go round for seconds, and each program started costs the debug
# kernel about half a second of CPU.
leftovers() {
	local i k v ids conns files refs netns names
	for ((i = 0; i <= SOFTCM_LEFTOVER_WAIT * 10; i++)); do
		ids=0 conns=0 files=0 refs=0
		if [ -r /proc/net/softcm_stats ]; then
			while read -r k v; do
				case $k in
				ids) ids=$v ;;
				connections) conns=$v ;;
				files) files=$v ;;
				esac
			done </proc/net/softcm_stats
		fi
		[ -r /sys/module/softcm/refcnt ] && read -r refs </sys/module/softcm/refcnt
		# what `ip netns list` lists
		names=($(shopt -s nullglob; cd /run/netns 2>/dev/null && echo *))
		netns=${#names[@]}
		[ "$ids$conns$files$refs$netns" = 00000 ] && break
		nap 0.1
	done
	out "SOFTCM-LEFTOVERS $1 ids=$ids connections=$conns files=$files" \
	    "module_refs=$refs netns=$netns" \
	    $(ip netns list 2>/dev/null | awk '{print "netns:" $1}')
	# The next program is judged on what it leaves, not on this one's.
	ip -all netns delete 2>/dev/null
	# Nor does it inherit rdma_rxe: while loaded, rxe holds UDP 4791 in
	# the initial namespace (6.1 opens its tunnel sockets at module load),
	# and every softcm listener there would then fail with EADDRINUSE.
	# The programs that load it (rxe_test.sh, exec_test.sh, ...) leave it
	# loaded; which program runs next depends on the host's dealing.
	if [ -e /sys/module/rdma_rxe ] && ! rmmod rdma_rxe 2>/dev/null; then
		out "# init: rdma_rxe could not be unloaded after $1;" \
		    "UDP 4791 stays taken in the initial namespace"
	fi
}

# kill_stragglers PROG: SIGKILL every process but this one (kill -1 from
# PID 1 spares only PID 1) and wait, bounded, until none is left.  The
# count runs in this shell (builtins only), so no helper of ours is seen.
user_processes() {
	local p line rest
	n=0
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" -gt 2 ] || continue
		read -r line 2>/dev/null <"$p/stat" || continue
		rest=${line##*) }
		set -- $rest
		# $2 is the parent: 2 (kthreadd) for kernel threads; the
		# filter of the program's output is ours, not the program's
		[ "$2" = 2 ] || [ "${p#/proc/}" = "$stamper" ] || n=$((n + 1))
	done
}
kill_stragglers() {
	local i n left
	user_processes
	left=$n
	kill -KILL -1 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		user_processes
		[ "$n" = 0 ] && break
		nap 0.1
	done
	out "# init: $1 was killed; killed the $left process(es) it left running" \
	    "($n still there)"
}

# Each result line is followed by "# case-time SECONDS CPU", the time
# since the previous result (or the program's start) and the guest's busy
# CPU seconds in it (cost_mark's ticks), so the host can say which cases
# the time and the CPU go to.  The program writes through this filter, whose
# end is awaited before SOFTCM-END so that its lines stay inside the
# program's; a process the program left behind may keep the pipe open,
# so the wait is bounded (only lines such a process writes later can
# come after SOFTCM-END, and parse.py ignores them).
case_times() {
	exec awk -v t0="$1" -v b0="$2" '{
		print; fflush()
		if ($0 ~ /^(not )?ok [0-9]/) {
			getline up < "/proc/uptime"; close("/proc/uptime")
			getline st < "/proc/stat"; close("/proc/stat")
			split(up, u, " ")
			split(st, c, " ")
			b = c[2] + c[3] + c[4] + c[7] + c[8] + c[9]
			printf "# case-time %.1f %.1f\n", u[1] - t0, (b - b0) / 100
			fflush()
			t0 = u[1]; b0 = b
		}
	}' >&3
}
stamped() {
	local i
	for ((i = 0; i < 50; i++)); do
		kill -0 "$stamper" 2>/dev/null || return 0
		nap 0.1
	done
	# a killed program's are killed next
	[ "$2" = 137 ] || out "# init: $1 left its output open; its case times may be cut short"
}

# Objects allocated while booting are not ours to report.  kmemleak's own
# scan every ten minutes walks all of the guest's memory, under KASAN and
# TCG, in the middle of whatever test runs then; the scans that count are
# the two at the end, so the periodic one is off (tracking stays on).
if [ -e /sys/kernel/debug/kmemleak ]; then
	echo clear >/sys/kernel/debug/kmemleak
	echo scan=off >/sys/kernel/debug/kmemleak
fi

# The host deals the programs (tests/vm/dispatch.py): a guest asks for
# its next one when it is free, so that the guests of a run end together;
# an empty answer says none is left.  A host that does not answer is a
# broken runner: the guest ends, and the programs it did not run fail.
next_program() {
	out "SOFTCM-NEXT"
	t=
	if ! read -r -t 300 t <&3; then
		out "# init: no answer from the host to SOFTCM-NEXT"
		return 1
	fi
	[ -n "$t" ]
}

while next_program; do
	if [ "$t" = kunit ]; then
		run_kunit
		continue
	fi
	out "SOFTCM-BEGIN $t"
	t0=$(now)
	cost_mark
	exec 4> >(case_times "$t0" "$busy")
	stamper=$!
	# Input from /dev/null, not the console: glibc's ttyname(), which
	# bash calls at every start when its input is a terminal, finds
	# the console's name by a stat() of each of /dev's 600 entries
	# (0.15 s of CPU per bash on the debug kernel).  Nor do the
	# programs get the results port (fd 3) or the nap pipe.
	if [ "$SOFTCM_TEST_TIMEOUT" = 0 ]; then
		(cd /softcm/tests && "./$t") >&4 2>&1 </dev/null 3>&- {nap_fd}>&-
	else
		(cd /softcm/tests && timeout -s KILL "$SOFTCM_TEST_TIMEOUT" "./$t") \
			>&4 2>&1 </dev/null 3>&- {nap_fd}>&-
	fi
	rc=$?
	exec 4>&-
	stamped "$t" "$rc"
	out "SOFTCM-END $t $rc"
	out "SOFTCM-TIME $t $(since "$t0")"
	out "SOFTCM-COST $t $(cost_since)"
	# busybox's timeout kills only the program, and the kselftest
	# harness's children (setpgrp()) outlive it: they would break the
	# next program's setup, which would then be blamed.  A program killed
	# (by its timeout or otherwise) takes every other process with it.
	[ "$rc" = 137 ] && kill_stragglers "$t"
	leftovers "$t"
done

# The module must still load and unload after whatever the tests did; a
# program that left it unloaded (install_test.sh does) must not make this
# check vanish, so the marker is always written.
if [ ! -e /sys/module/softcm ]; then
	insmod "$SOFTCM_KO" || out "SOFTCM-UNLOAD reload-failed"
fi
if [ -e /sys/module/softcm ]; then
	rmmod softcm
	out "SOFTCM-UNLOAD $?"
fi

# lockdep switches itself off after its first report (and KASAN turns it
# off too): if it is off now, something was reported.
if [ -e /proc/lockdep_stats ]; then
	out "SOFTCM-DEBUG-LOCKS $(awk '/debug_locks:/ {print $2}' /proc/lockdep_stats)"
fi

# kmemleak reports only objects older than 5 s: wait that long after the
# last test, then scan twice (transient references hide leaks once).  A
# kmemleak that switched itself off (it does when it cannot allocate its
# own metadata) refuses the scan: that is reported, not read as "0 leaks".
# Boots that do not test for leaks (SOFTCM_LEAK_SCAN=0: the runner's
# self-checks) skip the wait.
if [ -e /sys/kernel/debug/kmemleak ] && [ "${SOFTCM_LEAK_SCAN:-1}" = 1 ]; then
	sleep 6
	scan=0
	echo scan >/sys/kernel/debug/kmemleak || scan=$?
	echo scan >/sys/kernel/debug/kmemleak || scan=$?
	cat /sys/kernel/debug/kmemleak >/tmp/kmemleak
	out "SOFTCM-KMEMLEAK $(grep -c 'unreferenced object' /tmp/kmemleak) $scan"
	sed 's/^/# kmemleak: /' /tmp/kmemleak >&3
fi

# Whatever the tests did, the kernel must not be tainted by it (we allow O
# for our out-of-tree modules, E for their missing signature and N for
# the KUnit test module).
taint=$(cat /proc/sys/kernel/tainted)
out "SOFTCM-TAINT $taint"
finish
