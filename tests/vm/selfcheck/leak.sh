#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Debug kernel only: every case passes, but softcm_bugs.ko commits a
# deliberate leak bug, which must turn the run red on its own.
echo "1..1"
# lockdep.sh may have loaded the module before us in the same boot.
rmmod softcm_bugs 2>/dev/null
insmod "$SOFTCM_BUGS_KO" bug=leak && echo "ok 1 module with a leak bug loads" ||
	echo "not ok 1 module with a leak bug loads"
