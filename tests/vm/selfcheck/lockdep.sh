#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Debug kernel only: every case passes, but softcm_bugs.ko commits a
# deliberate lockdep bug, which must turn the run red on its own.
echo "1..1"
insmod "$SOFTCM_BUGS_KO" bug=lockdep && echo "ok 1 module with a lockdep bug loads" ||
	echo "not ok 1 module with a lockdep bug loads"
