#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the test VM.  Runs the programs listed in /softcm/run.conf and
# writes their TAP output, framed by marker lines, to the second serial port
# (/dev/ttyS1); the kernel console stays on ttyS0.  The host only counts a
# run as finished when it sees SOFTCM-DONE: a panic, a hang or a crash of
# this script all leave it out.

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
ip link set lo up

exec 3>/dev/ttyS1
# Raw, so the host reads exactly what the programs wrote (no CR added).
stty -F /dev/ttyS1 raw -echo 2>/dev/null
out() { echo "$*" >&3; }

# SOFTCM_TESTS (programs, in order), SOFTCM_TEST_TIMEOUT, SOFTCM_MODE
. /softcm/run.conf
export SOFTCM_KO=/softcm/softcm.ko SOFTCM_TOOL=/softcm/bin/softcm

finish() {
	out "SOFTCM-DONE"
	sync
	# -no-reboot turns the reboot into QEMU's exit; poweroff needs ACPI.
	reboot -f
	poweroff -f
}

out "SOFTCM-BOOT $(uname -r)"

if [ "$SOFTCM_MODE" = demo ]; then
	/softcm/demo.sh >&3 2>&1
	out "SOFTCM-DEMO-EXIT $?"
	finish
fi

for t in $SOFTCM_TESTS; do
	out "SOFTCM-BEGIN $t"
	if [ "$SOFTCM_TEST_TIMEOUT" = 0 ]; then
		(cd /softcm/tests && "./$t") >&3 2>&1
	else
		(cd /softcm/tests && timeout -s KILL "$SOFTCM_TEST_TIMEOUT" "./$t") >&3 2>&1
	fi
	out "SOFTCM-END $t $?"
done

# Whatever the tests did, the kernel must not be tainted by it (we allow O
# for our own out-of-tree module and E for its missing signature).
taint=$(cat /proc/sys/kernel/tainted)
out "SOFTCM-TAINT $taint"
finish
