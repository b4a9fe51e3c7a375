#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs after rxeload.sh: init.sh must have unloaded rdma_rxe in between,
# or every softcm listener in the initial namespace fails with EADDRINUSE.
echo "1..1"
[ ! -e /sys/module/rdma_rxe ] && ! grep -qi ':12B7 ' /proc/net/udp &&
	echo "ok 1 udp 4791 is free again" || echo "not ok 1 udp 4791 is free again"
