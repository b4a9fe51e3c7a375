#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What `make run` shows, inside the VM: the module loading, its device and
# ABI version, the per-namespace sysctls, then an RDMA CM connection
# between two network namespaces made with `softcm ping`, and a clean
# unload.  Exits non-zero at the first thing that does not work.
#
#   +------ netns softcm-srv ------+        +------ netns softcm-cli ------+
#   |  softcm ping -l              |        |  softcm ping 10.78.0.1       |
#   |  veth0  10.78.0.1/24  <------+--------+----->  veth1  10.78.0.2/24   |
#   +------------------------------+        +------------------------------+

set -eu
step() { printf '\n$ %s\n' "$*"; "$@"; }

srv=softcm-srv cli=softcm-cli
log=/tmp/softcm-ping-server.log
server=

cleanup() {
	[ -z "$server" ] || kill "$server" 2>/dev/null || true
	ip netns del $srv 2>/dev/null || true
	ip netns del $cli 2>/dev/null || true
}
trap cleanup EXIT

# The server says so once its id listens; poll for that, up to 10 s.
wait_listening() {
	for _ in $(seq 100); do
		grep -q '^listening on' $log && return 0
		kill -0 "$server" 2>/dev/null || break
		sleep 0.1
	done
	echo "demo: the server is not listening:" >&2
	cat $log >&2
	return 1
}

echo "softcm demo on Linux $(uname -r)"
# softcm's UDP socket is a UDP tunnel socket.
step modprobe -a udp_tunnel ip6_udp_tunnel
step insmod "$SOFTCM_KO"
step ls -l /dev/softcm
step cat /sys/class/misc/softcm/abi_version
step cat /sys/module/softcm/parameters/udp_port
step softcm version
step sysctl net.softcm

echo
echo "# every network namespace has its own softcm state:"
step ip netns add $srv
step ip netns add $cli
step sysctl -w net.softcm.max_backlog=4096
step ip netns exec $srv sysctl net.softcm.max_backlog

echo
echo "# the two namespaces, joined by a veth pair:"
step ip link add veth0 netns $srv type veth peer name veth1 netns $cli
step ip -n $srv addr add 10.78.0.1/24 dev veth0
step ip -n $cli addr add 10.78.0.2/24 dev veth1
step ip -n $srv link set veth0 up
step ip -n $cli link set veth1 up

echo
echo "# a server in $srv, in the background:"
printf '\n$ %s\n' "ip netns exec $srv softcm ping -l -b 10.78.0.1 &"
ip netns exec $srv timeout 60 softcm ping -l -b 10.78.0.1 >$log 2>&1 &
server=$!
wait_listening
cat $log

echo
echo "# a client in $cli:"
step ip netns exec $cli softcm ping -d hello 10.78.0.1

echo
echo "# what the server saw:"
rc=0
wait "$server" || rc=$?
server=
sed 1d $log
[ $rc = 0 ] || { echo "demo: the server failed ($rc)" >&2; exit 1; }

echo
echo "# each namespace counted its side of the handshake (nonzero counters;"
echo "# \"connections 1\" is the connection in timewait, which lasts 2 s):"
step ip netns exec $srv grep -vw 0 /proc/net/softcm_stats
step ip netns exec $cli grep -vw 0 /proc/net/softcm_stats

echo
step ip netns del $srv
step ip netns del $cli
step rmmod softcm
echo
echo "softcm unloaded cleanly"
