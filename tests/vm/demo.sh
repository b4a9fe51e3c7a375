#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What `make run` shows, inside the VM: the module loading, its device and
# ABI version, the per-namespace sysctls, the softcm tool talking to it,
# and a clean unload.  Exits non-zero at the first thing that does not work.

set -eu
step() { printf '\n$ %s\n' "$*"; "$@"; }

echo "softcm demo on Linux $(uname -r)"
step insmod "$SOFTCM_KO"
step ls -l /dev/softcm
step cat /sys/class/misc/softcm/abi_version
step cat /sys/module/softcm/parameters/udp_port
step softcm version
step sysctl net.softcm
echo
echo "# every network namespace has its own softcm state:"
step ip netns add demo
step sysctl -w net.softcm.max_backlog=4096
step ip netns exec demo sysctl net.softcm.max_backlog
step ip netns del demo
step rmmod softcm
echo
echo "softcm unloaded cleanly"
