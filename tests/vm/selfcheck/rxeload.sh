#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Loads rdma_rxe and leaves it loaded, as rxe_test.sh and exec_test.sh do:
# on 6.1 rxe then holds UDP 4791 in the initial namespace (shown here, so
# that rxefree.sh's check is not vacuous).
echo "1..1"
modprobe rdma_rxe
grep -qi ':12B7 ' /proc/net/udp && echo "ok 1 rdma_rxe holds udp 4791" ||
	echo "not ok 1 rdma_rxe holds udp 4791"
