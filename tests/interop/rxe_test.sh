#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# softcm against the Linux RDMA CM over soft-RoCE (rdma_rxe), inside the
# test VM; TAP on stdout.  rxe binds UDP 4791 in the initial namespace
# only, so it lives there, on one end of a veth pair, and softcm in a
# namespace of its own on the other end:
#
#   +------------- init_net -------------+      +----------- netns sc-i -----------+
#   | rxe0 on r0: ucmatose, udaddy       |      | softcm ping                      |
#   | r0  10.90.0.1/24  fd90::1/64  <----+------+---> r1  10.90.0.2/24  fd90::2/64 |
#   +------------------------------------+      +----------------------------------+
#
# Each case runs one of rdma-core's example programs (ucmatose: RC, with
# -C 0 no data, only the CM; udaddy: UD, SIDR) against `softcm ping`, in
# both directions.  Every wait is bounded; servers are polled for, never
# slept for.  The topology is removed at the end; the modules stay loaded
# (init.sh unloads softcm after the last program).
#
# Every CM packet on r0 is captured by tcpdump into $SOFTCM_ARTIFACTS; the
# host dissects the capture with tshark (tests/interop/dissect.py).

set -u
ns=sc-i
ip4_rxe=10.90.0.1 ip4_sc=10.90.0.2
ip6_rxe=fd90::1 ip6_sc=fd90::2
# The debug kernel runs several times slower under TCG.
slow=1
[ "${SOFTCM_KERNEL:-stock}" = debug ] && slow=4
T=$((30 * slow))	# one program's limit, in seconds
tmp=$(mktemp -d)
pids=()
n=0

cases=(setup
	ipv4/softcm-client-ucmatose-server ipv4/ucmatose-client-softcm-server
	ipv6/softcm-client-ucmatose-server ipv6/ucmatose-client-softcm-server
	sidr/softcm-client-udaddy-server sidr/udaddy-client-softcm-server
	reject/softcm-client-no-rxe-listener reject/ucmatose-client-no-softcm-listener
	capture cleanup)
echo "1..${#cases[@]}"

# ok NAME / not_ok NAME [FILE...]: one result, with the files as comments.
# (no "-" before the name: tests/vm/parse.py would keep it in the name)
ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() {
	local f
	n=$((n + 1))
	echo "not ok $n $1"
	shift
	for f in "$@"; do
		[ -e "$f" ] && sed "s|^|# ${f##*/}: |" "$f"
	done
	return 0
}
skip_rest() {
	while [ "$n" -lt $((${#cases[@]} - 1)) ]; do
		n=$((n + 1))
		echo "ok $n ${cases[$((n - 1))]} # SKIP $1"
	done
}
say() { echo "# $*"; }

cleanup() {
	local p
	capture_stop
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	rdma link delete rxe0 2>/dev/null
	ip link del r0 2>/dev/null
	ip netns del $ns 2>/dev/null
}

# poll TRIES CMD...: run CMD every 0.1 s until it succeeds, at most TRIES times.
poll() {
	local i tries=$1
	shift
	for ((i = 0; i < tries; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# A softcm server says "listening on" once its id listens.
sc_listening() { grep -q '^listening on' "$1"; }
# An rdma_cm server (rxe) does not say it: its id shows in LISTEN state
# (`rdma` writes the address unbracketed, IPv6 too: "src-addr fd90::1:7471").
rxe_listening() {
	rdma resource show cm_id 2>/dev/null | grep "state LISTEN" | grep -q "src-addr $1:$2 "
}

# finish PID DIAG: wait for a background server, once its client is done,
# for up to 20 s (80 s on the debug kernel); one still running then gets
# the state of both CMs recorded in DIAG (the rdma_cm's ids, softcm's
# counters) and is stopped.  Its exit status is left in $rc.
gone() { ! kill -0 "$1" 2>/dev/null; }
finish() {
	if ! poll $((200 * slow)) gone "$1"; then
		{
			echo "still running; rdma_cm ids:"
			rdma resource show cm_id
			echo "softcm in $ns:"
			ip netns exec $ns grep -vw 0 /proc/net/softcm_stats
		} >"$2" 2>&1
		kill "$1" 2>/dev/null
	fi
	rc=0
	wait "$1" || rc=$?
}

# bg OUT CMD...: start CMD in the background, its output to OUT; sets $bgpid.
bg() {
	local out=$1
	shift
	"$@" >"$out" 2>&1 &
	bgpid=$!
	pids+=("$bgpid")
}

# The capture of the whole run: RoCEv2 on r0, both directions, written
# unbuffered (-U) so that what was sent before the stop is in the file;
# --immediate-mode: a packet still in the ring when tcpdump is stopped would
# be lost.  The .hosts file tells the host which side sent what.
pcap=${SOFTCM_ARTIFACTS:-$tmp}/rxe_test.pcap
capture_pid=
capture_start() {
	printf '%s\n' "rdma_cm $ip4_rxe" "rdma_cm $ip6_rxe" "softcm $ip4_sc" "softcm $ip6_sc" \
		>"${pcap%.pcap}.hosts"
	tcpdump -Z root -i r0 -s 0 -U --immediate-mode -w "$pcap" udp port 4791 \
		2>"$tmp/tcpdump" &
	capture_pid=$!
	poll $((100 * slow)) grep -q "listening on r0" "$tmp/tcpdump"
}
capture_stop() {
	[ -n "$capture_pid" ] || return 0
	kill -INT "$capture_pid" 2>/dev/null
	wait "$capture_pid" 2>/dev/null
	capture_pid=
}

setup() {
	local i
	# softcm opens its UDP socket in a namespace on first use there; one
	# a previous program left open in init_net would take 4791 from rxe
	# ("rdma_rxe: Failed to create IPv4 UDP tunnel", EPERM from modprobe).
	# A fresh module, loaded after rxe, has none.
	if [ -e /sys/module/softcm ] && [ ! -e /sys/module/rdma_rxe ]; then
		rmmod softcm || return 1
	fi
	# rxe needs a crc32 shash but does not depend on its module.
	modprobe crc32_generic 2>/dev/null
	modprobe -a rdma_rxe rdma_ucm ib_uverbs || return 1
	[ -e /sys/module/softcm ] || insmod "$SOFTCM_KO" || return 1
	ip netns add $ns || return 1
	ip link add r0 type veth peer name r1 netns $ns || return 1
	ip addr add $ip4_rxe/24 dev r0 || return 1
	ip addr add $ip6_rxe/64 dev r0 nodad || return 1
	ip -n $ns addr add $ip4_sc/24 dev r1 || return 1
	ip -n $ns addr add $ip6_sc/64 dev r1 nodad || return 1
	ip link set r0 up && ip -n $ns link set r1 up && ip -n $ns link set lo up || return 1
	rdma link add rxe0 type rxe netdev r0 || return 1
	# rxe's GID table follows the netdev's addresses; wait for both.
	poll $((100 * slow)) grep -qx "0000:0000:0000:0000:0000:ffff:0a5a:0001" \
		/sys/class/infiniband/rxe0/ports/1/gids/* || { say "no IPv4 GID on rxe0"; return 1; }
	poll $((100 * slow)) grep -qx "fd90:0000:0000:0000:0000:0000:0000:0001" \
		/sys/class/infiniband/rxe0/ports/1/gids/* || { say "no IPv6 GID on rxe0"; return 1; }
	# Neighbours both ways first: a CM message that waits for ARP or ND
	# stalls for a retransmission.
	for i in $ip4_sc $ip6_sc; do
		poll $((50 * slow)) ping -c 1 -W 1 "$i" >/dev/null 2>&1 || { say "no ping to $i"; return 1; }
	done
	for i in $ip4_rxe $ip6_rxe; do
		poll $((50 * slow)) ip netns exec $ns ping -c 1 -W 1 "$i" >/dev/null 2>&1 ||
			{ say "no ping to $i from $ns"; return 1; }
	done
	capture_start || { say "tcpdump did not start"; cat "$tmp/tcpdump"; return 1; }
	rdma link show rxe0/1 | sed 's/^/# /'
	return 0
}

# softcm client in sc-i -> rdma_cm server (ucmatose, or udaddy with -u).
# sc_client NAME SERVER_ADDR FAMILY_OPT UD
sc_client() {
	local name=$1 addr=$2 fopt=$3 ud=$4 srv cli rc crc peer port udopt=
	srv=$tmp/${name//\//-}.server cli=$tmp/${name//\//-}.client
	if [ "$ud" = 1 ]; then
		port=7174	# udaddy's, fixed
		udopt=-u
		bg "$srv" timeout $T udaddy -b "$addr" $fopt -C 0
	else
		# ucmatose's server disconnects once established; a DREQ of
		# ours sent at the same time may overtake our RTU, and its
		# server then waits forever for ESTABLISHED (seen once on the
		# debug kernel).  -w: answer its DREQ instead.
		port=7471
		udopt=-w
		bg "$srv" timeout $T ucmatose -b "$addr" $fopt -C 0
	fi
	case $addr in *:*) peer="[$addr]:$port" ;; *) peer="$addr:$port" ;; esac
	if ! poll $((100 * slow)) rxe_listening "$addr" $port; then
		not_ok "$name" "$srv"
		say "the rxe server did not listen on $peer"
		return
	fi
	crc=0
	ip netns exec $ns timeout $T softcm ping $udopt -p $port -d hello "$addr" >"$cli" 2>&1 || crc=$?
	finish "$bgpid" "$srv.diag"
	if [ "$crc" = 0 ] && [ "$rc" = 0 ] &&
	   grep -qxF "established with $peer" "$cli" &&
	   grep -qx "return status 0" "$srv"; then
		ok "$name"
	else
		not_ok "$name" "$cli" "$srv" "$srv.diag"
		say "softcm ping exit $crc, rxe server exit $rc"
	fi
}

# rdma_cm client (ucmatose, or udaddy with -u) -> softcm server in sc-i.
# rxe_client NAME SERVER_ADDR CLIENT_ADDR FAMILY_OPT UD
rxe_client() {
	local name=$1 addr=$2 from=$3 fopt=$4 ud=$5 srv cli rc crc port
	srv=$tmp/${name//\//-}.server cli=$tmp/${name//\//-}.client
	if [ "$ud" = 1 ]; then
		port=7174
		bg "$srv" ip netns exec $ns timeout $T softcm ping -l -u -p $port -b "$addr"
	else
		# ucmatose's client waits for the server to disconnect.
		port=7471
		bg "$srv" ip netns exec $ns timeout $T softcm ping -l -D -p $port -b "$addr"
	fi
	if ! poll $((100 * slow)) sc_listening "$srv"; then
		not_ok "$name" "$srv"
		say "the softcm server did not listen"
		return
	fi
	crc=0
	if [ "$ud" = 1 ]; then
		timeout $T udaddy -s "$addr" $fopt -C 0 >"$cli" 2>&1 || crc=$?
	else
		timeout $T ucmatose -s "$addr" $fopt -C 0 >"$cli" 2>&1 || crc=$?
	fi
	finish "$bgpid" "$srv.diag"
	case $from in *:*) from="\[$from\]" ;; esac
	if [ "$crc" = 0 ] && [ "$rc" = 0 ] &&
	   grep -qx "return status 0" "$cli" &&
	   grep -qE "^\[1\] request from $from:[0-9]+ \(rdma_get_peer_addr\), $from:[0-9]+ \(softcm_getpeername\)$" "$srv"; then
		ok "$name"
	else
		not_ok "$name" "$srv" "$cli" "$srv.diag"
		say "softcm server exit $rc, rxe client exit $crc"
	fi
}

trap 'cleanup; rm -rf "$tmp"' EXIT

if ! setup >"$tmp/setup" 2>&1; then
	not_ok setup "$tmp/setup"
	skip_rest "no soft-RoCE peer"
else
	cat "$tmp/setup"
	ok setup

	sc_client ipv4/softcm-client-ucmatose-server $ip4_rxe "" 0
	rxe_client ipv4/ucmatose-client-softcm-server $ip4_sc $ip4_rxe "" 0
	sc_client ipv6/softcm-client-ucmatose-server $ip6_rxe "-f ip" 0
	rxe_client ipv6/ucmatose-client-softcm-server $ip6_sc $ip6_rxe "-f ip" 0
	sc_client sidr/softcm-client-udaddy-server $ip4_rxe "" 1
	rxe_client sidr/udaddy-client-softcm-server $ip4_sc $ip4_rxe "" 1

	# Nothing listens on 7999 on the rxe side: its CM answers REJ 8.
	name=reject/softcm-client-no-rxe-listener
	rc=0
	ip netns exec $ns timeout $T softcm ping -p 7999 $ip4_rxe >"$tmp/rej1" 2>&1 || rc=$?
	if [ "$rc" = 1 ] && grep -q "REJ reason 8" "$tmp/rej1"; then
		ok $name
	else
		not_ok $name "$tmp/rej1"
		say "softcm ping exit $rc"
	fi

	# Nor on ours, though a listener on another port keeps the
	# namespace's CM busy: REJ 8 back to the rdma_cm.
	name=reject/ucmatose-client-no-softcm-listener
	bg "$tmp/rej2.server" ip netns exec $ns timeout $T softcm ping -l -b $ip4_sc
	rej2=$bgpid
	if poll $((100 * slow)) sc_listening "$tmp/rej2.server"; then
		rc=0
		timeout $T ucmatose -s $ip4_sc -p 7999 -C 0 >"$tmp/rej2" 2>&1 || rc=$?
		if [ "$rc" = 8 ] && grep -q "RDMA_CM_EVENT_REJECTED, error: 8" "$tmp/rej2"; then
			ok $name
		else
			not_ok $name "$tmp/rej2"
			say "ucmatose exit $rc"
		fi
	else
		not_ok $name "$tmp/rej2.server"
		say "the softcm server did not listen"
	fi
	kill "$rej2" 2>/dev/null
	wait "$rej2" 2>/dev/null

	# Every exchange above is in the capture, whose packets the host
	# dissects; here only that tcpdump kept them all.
	capture_stop
	say "$(grep -E 'packets (captured|dropped)' "$tmp/tcpdump" | paste -sd, -)"
	if grep -q "^[1-9][0-9]* packets captured" "$tmp/tcpdump" &&
	   grep -q "^0 packets dropped by kernel" "$tmp/tcpdump"; then
		ok capture
	else
		not_ok capture "$tmp/tcpdump"
	fi
fi

cleanup
if [ ! -e /sys/class/infiniband/rxe0 ] && ! ip netns list | grep -qw $ns; then
	ok cleanup
else
	not_ok cleanup
fi
