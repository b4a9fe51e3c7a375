#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every case passes, but the kernel log carries a report: still red.
echo "1..1"
echo "<2>BUG: softcm self-check: a report on the console" >/dev/kmsg
echo "ok 1 passes anyway"
