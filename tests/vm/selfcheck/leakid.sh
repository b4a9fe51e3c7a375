#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every case passes, but the program leaves a listening id (and its open
# file) behind in a process that outlives it: the run must go red.
echo "1..1"
insmod "$SOFTCM_KO"
setsid "$SOFTCM_TOOL" ping -l -p 7999 </dev/null >/dev/null 2>&1 &
for i in $(seq 100); do
	grep -q "^ids 1$" /proc/net/softcm_stats 2>/dev/null && break
	sleep 0.1
done
grep -q "^ids 1$" /proc/net/softcm_stats && echo "ok 1 an id outlives the program" ||
	echo "not ok 1 an id outlives the program"
