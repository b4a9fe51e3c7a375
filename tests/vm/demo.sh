#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What `make run` shows, inside the VM: the module loading, its device and
# ABI version, the per-namespace sysctls, then an RDMA CM connection
# between two network namespaces made with `softcm ping`, data between
# them (rdma-core's rping under `softcm exec`), then the same against the
# Linux RDMA CM over soft-RoCE (ucmatose on rdma_rxe, both directions, and
# rping with rxe as the server), and a clean unload.  Exits non-zero at the
# first thing that does not work.
#
#   +------ netns softcm-srv ------+        +------ netns softcm-cli ------+
#   |  softcm ping -l              |        |  softcm ping 10.78.0.1       |
#   |  veth0  10.78.0.1/24  <------+--------+----->  veth1  10.78.0.2/24   |
#   +------------------------------+        |                              |
#   +--------- init_net -----------+        |                              |
#   |  rxe0: ucmatose              |        |                              |
#   |  r0  10.79.0.1/24  <---------+--------+----->  r1  10.79.0.2/24      |
#   +------------------------------+        +------------------------------+
#
# rdma_rxe binds UDP 4791 in the initial namespace only, so the rdma_cm
# side lives there; softcm never opens its socket in init_net here.

set -eu
step() { printf '\n$ %s\n' "$*"; "$@"; }

srv=softcm-srv cli=softcm-cli
log=/tmp/softcm-ping-server.log
clog=/tmp/softcm-ping-client.log
server=

cleanup() {
	[ -z "$server" ] || kill "$server" 2>/dev/null || true
	rdma link delete rxe0 2>/dev/null || true
	ip link del r0 2>/dev/null || true
	ip netns del $srv 2>/dev/null || true
	ip netns del $cli 2>/dev/null || true
}
trap cleanup EXIT

# poll CMD...: run CMD every 0.1 s until it succeeds, up to 10 s (less
# if the background server died).
poll() {
	for _ in $(seq 100); do
		"$@" && return 0
		[ -z "$server" ] || kill -0 "$server" 2>/dev/null || break
		sleep 0.1
	done
	return 1
}

# A softcm server says so once its id listens; an rdma_cm one shows in
# the LISTEN state in `rdma resource`.
sc_listening() { grep -q '^listening on' $log; }
# rping says nothing when it listens: softcm's listing of namespace $1 does.
sc_port_listening() {
	ip netns exec "$1" awk -v p=":$2" '$4 == "LISTEN" &&
		substr($5, length($5) - length(p) + 1) == p { f = 1 } END { exit !f }' /proc/net/softcm
}
rxe_listening() { rdma resource show cm_id 2>/dev/null | grep "state LISTEN" | grep -q "src-addr $1:"; }
wait_listening() {
	poll "$@" && return 0
	echo "demo: the server is not listening:" >&2
	cat $log >&2
	return 1
}

# bg CMD...: start CMD as the background server, its output to $log.
bg() {
	printf '\n$ %s &\n' "$*"
	"$@" >$log 2>&1 &
	server=$!
}

# rping_race RC FILE: Debian's rping (rdma-core 44) can exit 255 after
# a good run, its CM thread reading the event channel that its main
# thread has just destroyed (fixed upstream: rdma-core pull request
# 1622); FILE then ends the connection with a DISCONNECT event and
# holds that read's EBADF.
rping_race() {
	[ "$1" = 255 ] && grep -q "DISCONNECT EVENT" "$2" &&
		grep -qx "rdma_get_cm_event: Bad file descriptor" "$2" &&
		echo "(rping's own exit race after the disconnect: exit 255)"
}

# reap: wait for the background server and show what it printed.
reap() {
	local rc=0
	wait "$server" || rc=$?
	server=
	cat $log
	[ $rc = 0 ] || rping_race $rc $log ||
		{ echo "demo: the server failed ($rc)" >&2; exit 1; }
}

# rping_client CMD...: step for an rping client (rping_race).
rping_client() {
	local rc=0
	printf '\n$ %s\n' "$*"
	"$@" >$clog 2>&1 || rc=$?
	cat $clog
	[ $rc = 0 ] || rping_race $rc $clog ||
		{ echo "demo: the client failed ($rc)" >&2; exit 1; }
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
wait_listening sc_listening
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
echo "# data: rdma-core's rping, unchanged, under softcm exec; each round the"
echo "# server RDMA-READs the client's buffer and RDMA-WRITEs it back, and the"
echo "# client checks every byte (-V):"
bg ip netns exec $srv timeout 60 softcm exec -- rping -s -a 10.78.0.1 -p 7174 -C 3 -S 64 -V -v
wait_listening sc_port_listening $srv 7174
rping_client ip netns exec $cli timeout 60 softcm exec -- rping -c -a 10.78.0.1 -p 7174 -C 3 -S 64 -V -v
echo
echo "# what the rping server printed:"
reap

echo
echo "# the Linux RDMA CM as the peer: soft-RoCE on r0 in the initial namespace,"
echo "# softcm in $cli on r1"
modprobe crc32_generic 2>/dev/null || true	# rxe needs it, does not depend on it
step modprobe -a rdma_rxe rdma_ucm
step ip link add r0 type veth peer name r1 netns $cli
step ip addr add 10.79.0.1/24 dev r0
step ip -n $cli addr add 10.79.0.2/24 dev r1
step ip link set r0 up
step ip -n $cli link set r1 up
step rdma link add rxe0 type rxe netdev r0
# rxe's GID table follows r0's address; ARP both ways before the CM.
poll grep -qx 0000:0000:0000:0000:0000:ffff:0a4f:0001 /sys/class/infiniband/rxe0/ports/1/gids/*
poll ping -c 1 -W 1 10.79.0.2 >/dev/null
poll ip netns exec $cli ping -c 1 -W 1 10.79.0.1 >/dev/null
step rdma link show rxe0/1

echo
echo "# rdma-core's ucmatose serves on rxe0; softcm in $cli connects to it"
echo "# (ucmatose's server disconnects first, -w waits for that):"
bg timeout 60 ucmatose -b 10.79.0.1 -C 0
wait_listening rxe_listening 10.79.0.1
step ip netns exec $cli softcm ping -w -p 7471 -d hello 10.79.0.1
echo
echo "# what ucmatose printed:"
reap

echo
echo "# and the other way: softcm serves in $cli, ucmatose connects from rxe0"
echo "# (its client waits for the server to disconnect: -D):"
printf '\n$ %s\n' "ip netns exec $cli softcm ping -l -D -p 7471 -b 10.79.0.2 &"
ip netns exec $cli timeout 60 softcm ping -l -D -p 7471 -b 10.79.0.2 >$log 2>&1 &
server=$!
wait_listening sc_listening
step timeout 60 ucmatose -s 10.79.0.2 -C 0
echo
echo "# what softcm ping printed:"
reap

echo
echo "# data with rxe: rping serves on rxe0, rping under softcm exec in $cli"
echo "# is the client (READs by rxe, WRITEs back, every byte checked):"
bg timeout 60 rping -s -a 10.79.0.1 -p 7175 -C 3 -S 64 -V -v
wait_listening rxe_listening 10.79.0.1
rping_client ip netns exec $cli timeout 60 softcm exec -- rping -c -a 10.79.0.1 -p 7175 -C 3 -S 64 -V -v
echo
echo "# what rping on rxe printed:"
reap
step rdma link delete rxe0
step ip link del r0

echo
step ip netns del $srv
step ip netns del $cli
step rmmod softcm
echo
echo "softcm unloaded cleanly"
