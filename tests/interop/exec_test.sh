#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `softcm exec`: rdma-core's own programs, Debian's binaries unchanged,
# run on softcm (issue 19's acceptance), inside the test VM; TAP on
# stdout.  softcm to softcm between two namespaces, and softcm against
# the Linux rdma_cm over soft-RoCE (rdma_rxe, in init_net as rxe needs),
# both ways:
#
#   +--- netns sc-xa ---+      +-------- netns sc-xb --------+      +----- init_net -----+
#   | softcm exec ...   |      | softcm exec ...             |      | rxex on xr0:       |
#   | x0 10.92.0.1/24 <-+------+-> x1 10.92.0.2/24           |      | ucmatose, exec_peer |
#   +-------------------+      |   xr1 10.91.0.2/24 <--------+------+-> xr0 10.91.0.1/24 |
#                              |       fd91::2/64            |      |      fd91::1/64     |
#                              +-----------------------------+      +--------------------+
#
# ucmatose -C 0 (RC, a QP, no messages) and cmtime (10 connections, each
# with a QP) connect, and must exit 0; against rxe, ucmatose sends ten
# messages each way too.  ucmatose disconnects at once, so
# the QPs are looked at with exec_peer (ours, built on rdma-core's
# libraries, run as it is on rxe and under softcm exec on softcm), which
# prints its QP once ESTABLISHED and holds the connection until told:
# on both sides the QP is in RTS and names the other's QP number and
# PSNs; on rxe, `rdma resource show qp` shows rxe's QP in RTS with
# softcm's QP number as rqpn, softcm's starting send PSN as its rq-psn
# and softcm's expected PSN as its sq-psn; and softcm's listing
# (/proc/net/softcm) shows the connection with the same QP numbers, the
# ones its REQ or REP announced.  Every wait is bounded and polled.

set -u
nsa=sc-xa nsb=sc-xb
ip_a=10.92.0.1 ip_b=10.92.0.2
ip_rxe=10.91.0.1 ip_sc=10.91.0.2
ip6_rxe=fd91::1 ip6_sc=fd91::2
rxe=rxex
slow=1
[ "${SOFTCM_KERNEL:-stock}" = debug ] && slow=4
T=$((30 * slow))	# one program's limit, in seconds
here=$(cd "$(dirname "$0")" && pwd)
xpeer=$here/lib/exec_peer
tmp=$(mktemp -d)
pids=()
n=0

# READs against rxe, both ways, in the same capture.
rxe_read_cases=(
	rxe-read/rping-V-softcm-server-rxe-client
	rxe-read/rping-V-rxe-server-softcm-client
	rxe-read/ib_read_bw-R-softcm-server-rxe-client
	rxe-read/ib_read_bw-R-rxe-server-softcm-client)
# The latency tests, librdmacm's examples and IPv6 data against rxe, both ways.
rxe_more_cases=(
	rxe-lat/ib_send_lat-R-softcm-server-rxe-client
	rxe-lat/ib_send_lat-R-rxe-server-softcm-client
	rxe-lat/ib_write_lat-R-softcm-server-rxe-client
	rxe-lat/ib_write_lat-R-rxe-server-softcm-client
	rxe-examples/rdma_server-softcm-rdma_client-rxe
	rxe-examples/rdma_server-rxe-rdma_client-softcm
	rxe-examples/rdma_xserver-softcm-rdma_xclient-rxe
	rxe-examples/rdma_xserver-rxe-rdma_xclient-softcm
	rxe-ipv6/rping-V-softcm-server-rxe-client
	rxe-ipv6/rping-V-rxe-server-softcm-client
	rxe-ipv6/flow-label-and-hop-limit-as-rxe)
# The data path against rxe (below, "rxe datapath"), each case both ways.
rxe_data_cases=(
	rxe-datapath/ibv_rc_pingpong-softcm-server-rxe-client
	rxe-datapath/ibv_rc_pingpong-rxe-server-softcm-client
	rxe-datapath/ib_send_bw-R-softcm-server-rxe-client
	rxe-datapath/ib_send_bw-R-rxe-server-softcm-client
	rxe-datapath/ib_write_bw-R-softcm-server-rxe-client
	rxe-datapath/ib_write_bw-R-rxe-server-softcm-client
	"${rxe_read_cases[@]}"
	rxe-datapath/ib_atomic_bw-R-softcm-server-rxe-client
	rxe-datapath/ib_atomic_bw-R-rxe-server-softcm-client
	rxe-datapath/capture)

cases=(setup
	softcm/ucmatose softcm/cmtime
	rxe/softcm-ucmatose-client-rxe-ucmatose-server
	rxe/rxe-ucmatose-client-softcm-ucmatose-server
	qp/softcm-to-softcm
	qp/softcm-client-rxe-server
	qp/rxe-client-softcm-server
	qp/rnr-timer-0-and-rd-atomic-3-1-softcm-client-rxe-server
	qp/rnr-timer-0-and-rd-atomic-3-1-rxe-client-softcm-server
	datapath/ibv_rc_pingpong datapath/ibv_rc_pingpong-N-c datapath/ib_send_bw-R datapath/udaddy
	datapath/rping-V datapath/ib_read_bw-R datapath/ib_atomic_bw-R
	datapath/ucmatose-messages
	datapath/rdma_server-rdma_client datapath/rdma_xserver-rdma_xclient
	datapath/ib_send_lat-R datapath/ib_write_lat-R datapath/ib_send_lat-R-e
	"${rxe_data_cases[@]}"
	rxe-read-stall/ib_read_bw-R-1MiB-rxe-server-softcm-client
	rxe-read-stall/no-timeout
	rxe-read-rd-atomic/ib_read_bw-R-o3-1MiB-softcm-server-rxe-client
	rxe-read-rd-atomic/fourth-read-served
	"${rxe_more_cases[@]}"
	cleanup)
echo "1..${#cases[@]}"

# ok, not_ok, say, skip_rest, poll, has_line and the like
. "$here/lib/tap.sh"

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	exec 7>&- 8>&- 2>/dev/null
	rdma link delete $rxe 2>/dev/null
	ip link del xr0 2>/dev/null
	ip netns del $nsa 2>/dev/null
	ip netns del $nsb 2>/dev/null
}
trap 'cleanup; rm -rf "$tmp"' EXIT

# at WHERE CMD...: CMD in namespace WHERE, or in init_net if WHERE is "".
at() {
	local where=$1
	shift
	if [ -n "$where" ]; then ip netns exec "$where" "$@"; else "$@"; fi
}

# bg OUT CMD...: start CMD in the background, its output to OUT; sets $bgpid.
bg() {
	local out=$1
	shift
	"$@" >"$out" 2>&1 &
	bgpid=$!
	pids+=("$bgpid")
}

# finish PID [S]: wait for a background program for up to S seconds
# (default 20 s, 80 s on the debug kernel), then stop it; its exit status
# in $rc.
gone() { ! kill -0 "$1" 2>/dev/null; }
finish() {
	poll $((${2:-$((20 * slow))} * 10)) gone "$1" || kill "$1" 2>/dev/null
	rc=0
	wait "$1" || rc=$?
}

# The checks the polls repeat read a namespace's /proc/net through a
# process that setup leaves in it (nspid), with the shell's builtins,
# instead of starting `ip netns exec` and awk for each look.
declare -A nspid
in_ns() { [ "$(readlink /proc/${nspid[$1]}/ns/net)" != "$(readlink /proc/self/ns/net)" ]; }
# net_of NS: /proc/net of namespace NS ("" is init_net) in $net.
net_of() {
	net=/proc/$$/net
	[ -z "$1" ] || net=/proc/${nspid[$1]}/net
}

# A softcm listener on PORT in namespace NS (its listing: "state" is the
# 4th column, "local" the 5th).
sc_listening() {
	local net id fam st loc rest
	net_of "$1"
	while read -r id fam _ st loc rest; do
		[ "$st" = LISTEN ] && [ "${loc%:$2}" != "$loc" ] && return 0
	done <"$net/softcm"
	return 1
}
# An rdma_cm listener on rxe (`rdma` writes "src-addr 10.91.0.1:7471").
rxe_listening() {
	rdma resource show cm_id 2>/dev/null | grep "state LISTEN" | grep -q "src-addr $1:$2 "
}

setup() {
	local i
	# A softcm UDP socket left open in init_net by a previous program
	# would take 4791 from rxe: a fresh module, loaded after rxe, has none.
	if [ -e /sys/module/softcm ] && [ ! -e /sys/module/rdma_rxe ]; then
		rmmod softcm || return 1
	fi
	modprobe crc32_generic 2>/dev/null
	modprobe -a rdma_rxe rdma_ucm ib_uverbs || return 1
	[ -e /sys/module/softcm ] || insmod "$SOFTCM_KO" || return 1
	ip netns add $nsa && ip netns add $nsb || return 1
	for i in $nsa $nsb; do
		ip netns exec $i sleep 100000 &
		nspid[$i]=$!
		pids+=($!)
	done
	poll $((50 * slow)) in_ns $nsa && poll $((50 * slow)) in_ns $nsb ||
		{ echo "no process in $nsa or $nsb"; return 1; }
	ip link add x0 netns $nsa type veth peer name x1 netns $nsb || return 1
	ip link add xr0 type veth peer name xr1 netns $nsb || return 1
	ip -n $nsa addr add $ip_a/24 dev x0 && ip -n $nsb addr add $ip_b/24 dev x1 &&
		ip addr add $ip_rxe/24 dev xr0 && ip -n $nsb addr add $ip_sc/24 dev xr1 &&
		ip addr add $ip6_rxe/64 dev xr0 nodad &&
		ip -n $nsb addr add $ip6_sc/64 dev xr1 nodad || return 1
	# softcm sends a batch of packets as one skb (UDP GSO, rcxmit.c) only
	# to a device that takes it whole: xr1 takes one packet at a time, so
	# that xr0's capture holds each packet as it would go on a wire, not
	# one frame for a batch; x0/x1 take batches whole.
	ip -n $nsb link set xr1 gso_max_segs 1 || return 1
	ip -n $nsa link set x0 up && ip -n $nsb link set x1 up && ip link set xr0 up &&
		ip -n $nsb link set xr1 up && ip -n $nsa link set lo up &&
		ip -n $nsb link set lo up || return 1
	rdma link add $rxe type rxe netdev xr0 || return 1
	poll $((100 * slow)) grep -qx "0000:0000:0000:0000:0000:ffff:0a5b:0001" \
		/sys/class/infiniband/$rxe/ports/1/gids/* || { echo "no IPv4 GID on $rxe"; return 1; }
	poll $((100 * slow)) grep -qx "fd91:0000:0000:0000:0000:0000:0000:0001" \
		/sys/class/infiniband/$rxe/ports/1/gids/* || { echo "no IPv6 GID on $rxe"; return 1; }
	# Neighbours first: a CM message waiting for ARP stalls for a retry.
	poll $((50 * slow)) ip netns exec $nsa ping -c 1 -W 1 $ip_b >/dev/null 2>&1 &&
		poll $((50 * slow)) ip netns exec $nsb ping -c 1 -W 1 $ip_a >/dev/null 2>&1 &&
		poll $((50 * slow)) ping -c 1 -W 1 $ip_sc >/dev/null 2>&1 &&
		poll $((50 * slow)) ip netns exec $nsb ping -c 1 -W 1 $ip_rxe >/dev/null 2>&1 &&
		poll $((50 * slow)) ping -c 1 -W 1 $ip6_sc >/dev/null 2>&1 &&
		poll $((50 * slow)) ip netns exec $nsb ping -c 1 -W 1 $ip6_rxe >/dev/null 2>&1 ||
		{ echo "no ping"; return 1; }
	# What the device and its QPs look like on this kernel, for the report.
	rdma link show $rxe/1
	for i in $nsa $nsb; do
		echo "softcm exec in $i:"
		ip netns exec $i softcm exec env LD_TRACE_LOADED_OBJECTS=1 "$(command -v ucmatose)"
	done
}

# ---- rdma-core's programs, unchanged, on softcm ----

# run_ucmatose NAME SRV_NS SRV_ADDR CLI_NS PORT SC_SERVER SC_CLIENT [MSGS]: a
# ucmatose server in SRV_NS ("": init_net) and a client in CLI_NS; each
# runs under softcm exec when its SC_* is 1, else as it is (on rxe).  With
# MSGS, each side sends that many SENDs of 2000 bytes and waits for as
# many (ucmatose checks that every one completed), else none.
run_ucmatose() {
	local name=$1 sns=$2 addr=$3 cns=$4 port=$5 ssc=$6 csc=$7 msgs=${8:-0} srv cli crc
	local sx=() cx=() mx=(-C "$msgs")
	srv=$tmp/${name//\//-}.server cli=$tmp/${name//\//-}.client
	[ "$ssc" = 1 ] && sx=(softcm exec --)
	[ "$csc" = 1 ] && cx=(softcm exec --)
	[ "$msgs" = 0 ] || mx+=(-S 2000)
	bg "$srv" at "$sns" timeout $T "${sx[@]}" ucmatose -b "$addr" -p $port "${mx[@]}"
	if [ "$ssc" = 1 ]; then
		poll $((100 * slow)) sc_listening "$sns" $port
	else
		poll $((100 * slow)) rxe_listening "$addr" $port
	fi || { not_ok "$name" "$srv"; say "the server did not listen"; return; }
	crc=0
	at "$cns" timeout $T "${cx[@]}" ucmatose -s "$addr" -p $port "${mx[@]}" >"$cli" 2>&1 ||
		crc=$?
	finish "$bgpid"
	if [ "$crc" = 0 ] && [ "$rc" = 0 ] && grep -qx "return status 0" "$cli" &&
	   grep -qx "return status 0" "$srv"; then
		ok "$name"
	else
		not_ok "$name" "$cli" "$srv"
		say "client exit $crc, server exit $rc"
	fi
}

# sc_stat NAME [NS]: counter NAME of softcm in NS (default $nsb, the
# namespace against rxe).
sc_stat() {
	local net
	net_of "${2:-$nsb}"
	value_of "$net/softcm_stats" "$1"
}

# cmtime's server never exits: it serves until stopped, once the client
# (10 connections: bind, resolve, route, QP, connect, disconnect each)
# has exited 0 having failed no step.  The server's namespace counts the
# connections: 10 RTUs and 10 DREQs received (more only if as many were
# duplicates: a REP or DREP that took longer than its timeout).
run_cmtime() {
	local name=softcm/cmtime port=7475 srv=$tmp/cmtime.server cli=$tmp/cmtime.client crc
	local rtu dreq dup
	rtu=$(sc_stat rx_rtu $nsa) dreq=$(sc_stat rx_dreq $nsa) dup=$(sc_stat duplicates $nsa)
	bg "$srv" ip netns exec $nsa timeout $T softcm exec -- cmtime -b $ip_a -p $port
	poll $((100 * slow)) sc_listening $nsa $port ||
		{ not_ok $name "$srv"; say "the server did not listen"; return; }
	crc=0
	ip netns exec $nsb timeout $T softcm exec -- cmtime -s $ip_a -p $port -c 10 \
		>"$cli" 2>&1 || crc=$?
	kill "$bgpid" 2>/dev/null
	wait "$bgpid" 2>/dev/null
	rtu=$(($(sc_stat rx_rtu $nsa) - rtu)) dreq=$(($(sc_stat rx_dreq $nsa) - dreq))
	dup=$(($(sc_stat duplicates $nsa) - dup))
	if [ "$crc" = 0 ] && grep -q '^disconnecting' "$cli" &&
	   ! grep -qiE 'fail|error|unable' "$cli" "$srv" &&
	   [ $rtu -ge 10 ] && [ $dreq -ge 10 ] && [ $((rtu + dreq)) -le $((20 + dup)) ]; then
		ok $name
	else
		not_ok $name "$cli" "$srv"
		say "client exit $crc"
	fi
	say "the server's namespace received $rtu RTUs, $dreq DREQs ($dup duplicates)"
}

# ---- to where they need the data path ----
#
# Programs that stopped in the dynamic linker before softcm had the calls
# they import (ibv_qp_to_qp_ex, ibv_create_ah_from_wc, perftest's
# libmlx5/libefa and IBVERBS_PRIVATE_34): softcm to softcm.  The RC data
# path carries SENDs: ibv_rc_pingpong and ib_send_bw move their data and
# exit 0.

# gid_index NS ADDR: the index ibv_devinfo -v gives ADDR's RoCEv2 GID in NS.
gid_index() {
	ip netns exec "$1" softcm exec -- ibv_devinfo -v |
		sed -n "s/.*GID\[ *\([0-9]*\)\]:[[:space:]]*::ffff:$2, RoCE v2\$/\1/p" | head -n 1
}
loader_error() {
	grep -qE 'symbol lookup error|version .* not found|error while loading' "$@"
}

# ibv_rc_pingpong -g IDX: QP numbers and GIDs exchanged over TCP (the
# client prints the server's address), then ping-pongs of 4 KiB SENDs
# each way over the RC QPs: both sides report their iterations and exit
# 0.  The server is waited for on its TCP port (18515 is 0x4853, IPv4 or
# IPv6).  run_rc_pingpong NAME PORT ITERS [OPTION...]: -N posts with the
# extended QP's ibv_wr_*() calls; with -c the server checks the first
# byte of each page it received (the client writes 0 there, over the
# buffer's 0x7b) and prints "invalid data" for any other.
tcp_listening() {
	local net f sl loc rem st rest
	net_of "$1"
	for f in "$net/tcp" "$net/tcp6"; do
		while read -r sl loc rem st rest; do
			[ "$st" = 0A ] && [ "${loc%:$2}" != "$loc" ] && return 0
		done <"$f"
	done
	return 1
}
run_rc_pingpong() {
	local name=$1 port=$2 iters=$3 srv=$tmp/rc.server cli=$tmp/rc.client gs gc crc
	shift 3
	gs=$(gid_index $nsa $ip_a) gc=$(gid_index $nsb $ip_b)
	[ -n "$gs" ] && [ -n "$gc" ] || { not_ok $name; say "no GID index for $ip_a or $ip_b"; return; }
	bg "$srv" ip netns exec $nsa timeout $T softcm exec -- ibv_rc_pingpong -g "$gs" \
		-n "$iters" -p "$port" "$@"
	poll $((100 * slow)) tcp_listening $nsa "$(printf %04X "$port")" ||
		{ not_ok $name "$srv"; say "the server did not listen"; return; }
	crc=0
	ip netns exec $nsb timeout $T softcm exec -- ibv_rc_pingpong -g "$gc" -n "$iters" \
		-p "$port" "$@" $ip_a >"$cli" 2>&1 || crc=$?
	wait "$bgpid" 2>/dev/null
	if [ "$crc" = 0 ] && ! loader_error "$cli" "$srv" &&
	   grep -q "remote address: .* GID ::ffff:$ip_a" "$cli" &&
	   grep -q "^$iters iters in" "$cli" && grep -q "^$iters iters in" "$srv" &&
	   ! grep -q "invalid data" "$cli" "$srv"; then
		ok $name
		say "GID indexes $gs and $gc; the client: $(grep ' bytes in ' "$cli" | head -n 1)"
	else
		not_ok $name "$cli" "$srv"
		say "client exit $crc"
	fi
	kill "$bgpid" 2>/dev/null
	wait "$bgpid" 2>/dev/null
}

# refused_rej8 FILE: perftest's client output FILE says it was refused
# with REJ 8 (its connect race, see run_lat).
refused_rej8() {
	grep -q "RDMA_CM_EVENT_REJECTED; error: 8\." "$1"
}

# perftest_run PORT SRV CLI PROG ARGS...: PROG ARGS as the server in $nsa
# (output to SRV) and as the client in $nsb (to CLI), on PORT: crc is the
# client's exit, rc the server's; returns 1, said, if the server never
# listened.  A client refused with REJ 8 (perftest's connect race, see
# run_lat) gets one more try on PORT + 50, said in the output; any other
# failure, or a second REJ 8, is the caller's verdict.
perftest_run() {
	local port=$1 srv=$2 cli=$3 try
	shift 3
	for try in 1 2; do
		bg "$srv" ip netns exec $nsa timeout $T softcm exec -- "$@" -p $port
		poll $((100 * slow)) sc_listening $nsa $port ||
			{ say "the server did not listen"; return 1; }
		crc=0
		ip netns exec $nsb timeout $T softcm exec -- "$@" -p $port $ip_a >"$cli" 2>&1 ||
			crc=$?
		finish "$bgpid"
		[ "$crc" = 0 ] && [ "$rc" = 0 ] && return 0
		{ [ $try = 1 ] && refused_rej8 "$cli"; } || return 0
		say "perftest's connect race (REJ 8, see run_lat): once more"
		port=$((port + 50))
	done
}

# ib_send_bw -R: connected through rdma_cm (softcm's listing shows the
# listener), then perftest's own exchange over the new QP and five 64 KiB
# SENDs: both sides report them and exit 0.  -F: perftest times with the
# CPU's frequency, which it cannot measure in a loaded guest ("r^2 < 0.9,
# Can't produce a report") unless it may take /proc/cpuinfo's.
run_send_bw() {
	local name=datapath/ib_send_bw-R srv=$tmp/bw.server cli=$tmp/bw.client crc
	perftest_run 18516 "$srv" "$cli" ib_send_bw -R -F -n 5 || { not_ok $name "$srv"; return; }
	if [ "$crc" = 0 ] && ! loader_error "$cli" "$srv" &&
	   grep -qE '^ *65536 +5 ' "$cli" && grep -qE '^ *65536 +5 ' "$srv"; then
		ok $name
		say "the client: $(grep -E '^ *65536 +5 ' "$cli" | head -n 1)"
	else
		not_ok $name "$cli" "$srv"
		say "client exit $crc"
	fi
}

# udaddy: the client's SIDR request answered (its AH made from the reply)
# and its sends posted; the server, having accepted, waits for data that
# softcm does not carry yet (udaddy counts completions, not their status:
# the client ends "return status 0" having sent nothing).
run_udaddy() {
	local name=datapath/udaddy port=7174 srv=$tmp/ud.server cli=$tmp/ud.client crc
	# (udaddy's port is fixed, 7174; its -p is the port space)
	bg "$srv" ip netns exec $nsa timeout $T softcm exec -- udaddy -b $ip_a
	poll $((100 * slow)) sc_listening $nsa $port ||
		{ not_ok $name "$srv"; say "the server did not listen"; return; }
	crc=0
	ip netns exec $nsb timeout $T softcm exec -- udaddy -s $ip_a >"$cli" 2>&1 || crc=$?
	sleep $((2 * slow))
	# (the server's output is buffered: it is judged by still running)
	if [ "$crc" = 0 ] && ! loader_error "$cli" "$srv" &&
	   grep -qx "initiating data transfers" "$cli" && ! gone "$bgpid"; then
		ok $name
		say "the server accepted and waits for the UD data path"
	else
		not_ok $name "$cli" "$srv"
		say "client exit $crc"
	fi
	kill "$bgpid" 2>/dev/null
	wait "$bgpid" 2>/dev/null
}

# rping_verdict NAME ROUNDS CLI SRV CRC: rping -V -v's verdict.  Each
# side printed ROUNDS rounds (the client prints one only once its bytes
# compared equal) and no mismatch or error.  Each exits 0, or 255 having
# printed its DISCONNECT event and then "rdma_get_cm_event: Bad file
# descriptor": Debian's rping (rdma-core 44) lets its CM thread read the
# event channel that the main thread destroys once the connection is
# over (fixed upstream in 2025, rdma-core pull request 1622).  Rounds
# counted tell that exit from a failure, which leaves rounds missing.
rping_exit_ok() {
	[ "$1" = 0 ] ||
	{ [ "$1" = 255 ] && grep -q "DISCONNECT EVENT" "$2" &&
	  grep -qx "rdma_get_cm_event: Bad file descriptor" "$2" &&
	  say "$3: rping's own exit race (255, EBADF after the disconnect)"; }
}
rping_verdict() {
	local name=$1 n=$2 cli=$3 srv=$4 crc=$5 nc ns
	nc=$(grep -c "^ping data: rdma-ping-" "$cli")
	ns=$(grep -c "^server ping data: rdma-ping-" "$srv")
	if [ "$nc" = "$n" ] && [ "$ns" = "$n" ] &&
	   rping_exit_ok "$crc" "$cli" client && rping_exit_ok "$rc" "$srv" server &&
	   ! loader_error "$cli" "$srv" && ! grep -qiE 'mismatch|error|fail' "$cli" "$srv"; then
		ok "$name"
	else
		not_ok "$name" "$cli" "$srv"
		say "client exit $crc ($nc rounds), server exit $rc ($ns rounds)"
	fi
}

# rping -V: connected through rdma_cm, then five rounds of the ping
# pattern, each moved by an RDMA READ (the server reads the client's
# buffer) and an RDMA WRITE back, the client checking every byte (-V):
# five rounds on each side, no data mismatch (rping_verdict).
run_rping() {
	local name=datapath/rping-V port=7180 srv=$tmp/rping.server cli=$tmp/rping.client crc
	bg "$srv" ip netns exec $nsa timeout $T softcm exec -- rping -s -a $ip_a -p $port -C 5 -V -v -S 4000
	poll $((100 * slow)) sc_listening $nsa $port ||
		{ not_ok $name "$srv"; say "the server did not listen"; return; }
	crc=0
	ip netns exec $nsb timeout $T softcm exec -- rping -c -a $ip_a -p $port -C 5 -V -v -S 4000 \
		>"$cli" 2>&1 || crc=$?
	finish "$bgpid"
	rping_verdict $name 5 "$cli" "$srv" "$crc"
}

# ib_read_bw -R: connected through rdma_cm with perftest's outstanding
# READs as initiator depth and responder resources, then five 64 KiB
# READs: both sides report them and exit 0.
run_read_bw() {
	local name=datapath/ib_read_bw-R srv=$tmp/rbw.server cli=$tmp/rbw.client crc
	perftest_run 18517 "$srv" "$cli" ib_read_bw -R -F -n 5 || { not_ok $name "$srv"; return; }
	if [ "$crc" = 0 ] && [ "$rc" = 0 ] && ! loader_error "$cli" "$srv" &&
	   grep -qE '^ *65536 +5 ' "$cli"; then
		ok $name
		say "the client: $(grep -E '^ *65536 +5 ' "$cli" | head -n 1)"
	else
		not_ok $name "$cli" "$srv"
		say "client exit $crc, server exit $rc"
	fi
}

# rdma_server and rdma_client (or rdma_xserver and rdma_xclient, RC):
# librdmacm's rdma_create_ep examples, connected, then a SEND each way
# (rdma_server's inline when the QP grants it, as rxe does): both print
# "end 0" and exit 0.
run_rdma_example() {
	local prog=$1 port=$2 name=datapath/$1server-$1client
	local srv=$tmp/$1server.out cli=$tmp/$1client.out crc
	bg "$srv" ip netns exec $nsa timeout $T softcm exec -- "${prog}server" -p $port
	poll $((100 * slow)) sc_listening $nsa $port ||
		{ not_ok "$name" "$srv"; say "the server did not listen"; return; }
	crc=0
	ip netns exec $nsb timeout $T softcm exec -- "${prog}client" -s $ip_a -p $port \
		>"$cli" 2>&1 || crc=$?
	finish "$bgpid"
	rdma_example_verdict "$name" "$prog" "$cli" "$srv" "$crc"
}
# rdma_example_verdict NAME PROG CLIENT SERVER CLIENT-EXIT: both sides
# said "end 0" and exited 0 (the server's status in $rc), and the server
# sent inline.
rdma_example_verdict() {
	if [ "$5" = 0 ] && [ "$rc" = 0 ] && ! loader_error "$3" "$4" &&
	   grep -qx "$2client: end 0" "$3" && grep -qx "$2server: end 0" "$4" &&
	   ! grep -q "doesn't support IBV_SEND_INLINE" "$4"; then
		ok "$1"
	else
		not_ok "$1" "$3" "$4"
		say "client exit $5, server exit $rc"
	fi
}

# perftest's latency tests with -R: 100 ping-pongs (SEND, WRITE) of 64
# bytes; the client prints the line of that size and count, both exit 0.
# Not here: ib_read_lat -R, refused with REJ 8 on a loaded host, a race
# of Debian's perftest (4.5-0.17), not softcm's.  perftest connects twice
# on the same port, its exchange first, then the test's QP, and its
# server listens for the second only after the handshake that lets its
# client go on, so the client's REQ can come first (the Linux CM refuses
# it too: IB_CM_REJ_INVALID_SERVICE_ID).  Its retry then calls
# rdma_resolve_addr() on the ids and event channel it has just destroyed
# and freed: the crash seen in libsoftcm (fixed in perftest 3d9d8d0,
# "Fix crashes and logical flaws in RDMA CM connection retry", 2025).
# Shown at will with the server's second rdma_listen() delayed by 500 ms
# (a preloaded wrapper): REJECTED, then SIGSEGV in rdma_resolve_addr.
# The bench's segfault of ib_write_lat -R -s 4096 is the same: with that
# delay its client dies there too, every run.
# ib_send_lat -R -e: run_lat_events, below.  Every perftest case here
# runs through perftest_run, which gives a client refused with REJ 8 one
# more try.
run_lat() {
	local prog=$1 port=$2 iters=100 name srv cli crc
	name=datapath/$prog-R srv=$tmp/$prog.server cli=$tmp/$prog.client
	perftest_run $port "$srv" "$cli" "$prog" -R -F -s 64 -n "$iters" ||
		{ not_ok "$name" "$srv"; return; }
	lat_verdict "$name" "$iters" "$cli" "$srv" "$crc"
}
# lat_verdict NAME ITERS CLIENT SERVER CLIENT-EXIT [GOOD]: a latency case
# passes when GOOD (default 1) is 1, both sides exited 0 (the server's
# status in $rc) and the client printed its line of 64 bytes and ITERS
# iterations.
lat_verdict() {
	local line
	line=$(grep -E "^ *64 +$2 " "$3" | head -n 1)
	if [ "${6:-1}" = 1 ] && [ "$5" = 0 ] && [ "$rc" = 0 ] && ! loader_error "$3" "$4" &&
	   [ -n "$line" ]; then
		ok "$1"
		say "the client: $line"
	else
		not_ok "$1" "$3" "$4"
		say "client exit $5, server exit $rc (124: it hung)"
	fi
}

# ib_send_lat -R -e: perftest sleeps on a completion channel for each
# completion (ibv_req_notify_cq, ibv_get_cq_event), 2000 round trips of
# 64 bytes, with netem reordering both ends of the veth (a quarter of the
# packets go at once, the others 1 ms later), so that an answer often
# arrives before the ACK of the SEND it answers.  Debian's perftest
# (4.5-0.17) has one channel for both CQs: it then takes the receive's
# event while it waits for the send's and leaves a send completion
# unpolled for a while; its send CQ asks for one entry: softcm's CQs
# hold at least 4 (MIN_CQE in ibv_cq.c), where a CQ of one lost the next
# completion and perftest slept for good.
# netem starts once the client's QP has 40 packets in (the test's QP:
# perftest's exchange before it has fewer), for two bugs of perftest's
# that reordering from the start shows, each about once in 15-25 runs:
# in its first round, a send CQ polled empty leaves its struct ibv_wc
# unwritten and perftest reads its status anyway ("Failed status
# -1017839616 ... scnt=1"; later rounds read the previous round's
# success there), and any delay while it connects makes its second
# rdma_connect() race its server's rdma_listen() (REJ 8, then its crash:
# see run_lat).  Both sides exit 0, the client with its line, and each
# end's netem sent at least 500 packets (a SEND and an ACK a round trip).
# 2000 round trips took 5 to 15 s (a loaded host), up to 1200 of them
# before netem: each side has twice the usual limit, 60 s.
# The connect race of perftest's shows without netem too (once in the
# complete run of 4cd8456, where the data path answers sooner): a client
# refused with REJ 8 gets one more try on another port, said in the
# output; any other failure, or a second REJ 8, fails the case.
lat_running() {
	local net f
	net_of "$1"
	while read -r -a f; do
		[ "${f[2]}" = RTS ] && [[ ${f[11]} =~ ^[0-9]+$ ]] && [ "${f[11]}" -ge 40 ] && return 0
	done <"$net/softcm_qps"
	return 1
}
# netem_sent NS DEV: the packets DEV's root qdisc has sent.
netem_sent() {
	tc -s -n "$1" qdisc show dev "$2" root |
		awk '$1 == "Sent" { print $4; exit }'
}
run_lat_events() {
	local name=datapath/ib_send_lat-R-e iters=2000 port
	local srv=$tmp/lat-e.server cli=$tmp/lat-e.client ok crc

	for port in 18532 18533; do
		lat_events_once $port
		[ "$ok" = 1 ] && [ "$crc" = 0 ] && [ "$rc" = 0 ] && break
		refused_rej8 "$cli" || break
		[ $port = 18533 ] && break
		say "perftest's connect race (REJ 8, see run_lat): once more"
	done
	lat_verdict "$name" "$iters" "$cli" "$srv" "$crc" "$ok"
}

# One run of run_lat_events on PORT: ok, crc and rc for lat_verdict.
lat_events_once() {
	local port=$1 iters=2000 sa=0 sb=0 opts spid cpid

	ok=1
	opts=(-R -F -e -e -s 64 -n $iters -p $port)
	bg "$srv" ip netns exec $nsa timeout $((2 * T)) softcm exec -- ib_send_lat "${opts[@]}"
	spid=$bgpid
	if ! poll $((100 * slow)) sc_listening $nsa $port; then
		say "the server did not listen"
		ok=0 crc=1
		: >"$cli"
		finish "$spid"
		return
	fi
	bg "$cli" ip netns exec $nsb timeout $((2 * T)) softcm exec -- ib_send_lat "${opts[@]}" $ip_a
	cpid=$bgpid
	if poll $((100 * slow)) lat_running $nsb &&
	   tc -n $nsa qdisc add dev x0 root netem delay 1ms reorder 25% &&
	   tc -n $nsb qdisc add dev x1 root netem delay 1ms reorder 25%; then
		finish "$cpid" $((2 * T))
		crc=$rc
		finish "$spid"
		sa=$(netem_sent $nsa x0) sb=$(netem_sent $nsb x1)
		say "netem sent ${sa:-?} packets from the server, ${sb:-?} from the client"
		[ "${sa:-0}" -ge 500 ] && [ "${sb:-0}" -ge 500 ] ||
			{ ok=0; say "reordering came too late"; }
	else
		ok=0
		say "no test QP with 40 packets in, or no netem"
		finish "$cpid" $((2 * T))
		crc=$rc
		finish "$spid"
	fi
	tc -n $nsa qdisc del dev x0 root 2>/dev/null
	tc -n $nsb qdisc del dev x1 root 2>/dev/null
}

# ib_atomic_bw -R: connected through rdma_cm (INIT grants REMOTE_ATOMIC
# with the responder resources, as the Linux CM), then five FETCH ADDs
# and, as a second pair, five COMPARE SWAPs on the server's buffer: both
# sides report them and exit 0.
run_atomic_bw() {
	local name=datapath/ib_atomic_bw-R port=18518 srv=$tmp/abw.server cli=$tmp/abw.client
	local crc ok=1 type
	for type in FETCH_AND_ADD CMP_AND_SWAP; do
		perftest_run $port "$srv" "$cli" ib_atomic_bw -R -F -n 5 -A $type ||
			{ not_ok $name "$srv"; say "($type)"; return; }
		if [ "$crc" = 0 ] && [ "$rc" = 0 ] && ! loader_error "$cli" "$srv" &&
		   grep -qE '^ *8 +5 ' "$cli"; then
			say "$type, the client: $(grep -E '^ *8 +5 ' "$cli" | head -n 1)"
		else
			ok=0
			say "$type: client exit $crc, server exit $rc"
			break
		fi
		port=$((port + 100))
	done
	if [ $ok = 1 ]; then
		ok $name
	else
		not_ok $name "$cli" "$srv"
	fi
}

# ---- rxe datapath: data between softcm and rdma_rxe, both ways ----
#
# softcm in sc-xb (xr1, under softcm exec) and rxe in init_net (xr0,
# the programs as they are), each program once as the server and once
# as the client.  ibv_rc_pingpong swaps QP numbers, PSNs and GIDs over
# TCP (-g: each side's own index of its IPv4 RoCEv2 GID) and validates
# what it receives (-c); perftest's -R connects through rdma_cm.  Sized
# by iterations: 8 KiB messages (8 packets at the path MTU of 1024), 50
# ping-pongs, 100 SENDs; 20 WRITEs of 128 KiB (128 packets: the
# requester asks for an ACK within the message too); rping -V (RDMA
# READs of 4000 bytes, checked), 20 READs of 128 KiB by ib_read_bw and
# 100 FETCH ADDs by ib_atomic_bw.  A
# case passes only if both programs exit 0 and report every iteration.  Every packet
# on xr0 is captured for the host, which dissects it with tshark
# (tests/interop/dissect_data.py) and compares softcm's packets with
# rxe's.
rxe_size=8192 rxe_pp_iters=50 rxe_bw_iters=100
rxe_write_size=131072 rxe_write_iters=20
data_pcap=${SOFTCM_ARTIFACTS:-$tmp}/exec_rxe_data.pcap
data_capture_pid=
# capture_start PCAP LOG TCPDUMP-ARG...: tcpdump on xr0 into PCAP, its
# messages in LOG, until it listens; its pid in $capture_pid, non-zero
# if it did not start.
capture_start() {
	local pcap=$1 log=$2
	shift 2
	tcpdump -Z root -i xr0 -U -w "$pcap" "$@" 2>"$log" &
	capture_pid=$!
	pids+=("$capture_pid")
	poll $((100 * slow)) has_text "$log" "listening on xr0"
}
data_capture_start() {
	printf '%s\n' "rxe $ip_rxe" "softcm $ip_sc" >"${data_pcap%.pcap}.hosts"
	# (A ring of 64 MiB in slots of 2 KiB, a whole frame at the veth's
	# MTU of 1500: about 28 000 frames.  libpcap's slots are as large as
	# the snap length, capped at 64 KiB on a device with offloads (the
	# veth): with -s 0 the ring held 1 024 frames, and bursts of 1 KiB
	# packets were dropped while tcpdump, under TCG, wrote the file.)
	capture_start "$data_pcap" "$tmp/data-tcpdump" -s 2048 -B 65536 --immediate-mode \
		udp port 4791
	local ret=$?
	data_capture_pid=$capture_pid
	return $ret
}
data_capture_stop() {
	[ -n "$data_capture_pid" ] || return 0
	kill -INT "$data_capture_pid" 2>/dev/null
	wait "$data_capture_pid" 2>/dev/null
	data_capture_pid=
}

# rxe's index of its own IPv4 RoCEv2 GID (ibv_devinfo as it is, in init_net).
rxe_gid_index() {
	ibv_devinfo -v -d $rxe |
		sed -n "s/.*GID\[ *\([0-9]*\)\]:[[:space:]]*::ffff:$ip_rxe, RoCE v2\$/\1/p" | head -n 1
}
# A TCP listener on PORT in WHERE ("": init_net), IPv4 or IPv6.
tcp_listening_at() {
	local p
	printf -v p %04X "$2"
	tcp_listening "$1" "$p"
}
# Any rdma_cm listener on rxe's port PORT (perftest's server binds no address).
rxe_listening_port() {
	rdma resource show cm_id 2>/dev/null | grep "state LISTEN" | grep -q ":$1 "
}

# rxe_pingpong NAME SC_SERVER PORT: ibv_rc_pingpong, softcm the server
# if SC_SERVER is 1, else rxe.
rxe_pingpong() {
	local name=$1 scs=$2 port=$3 srv cli gsc grx crc want
	local scx=(ip netns exec "$nsb" timeout "$T" softcm exec -- ibv_rc_pingpong -g)
	local rxx=(timeout "$T" ibv_rc_pingpong -d "$rxe" -g)
	local opts=(-s "$rxe_size" -n "$rxe_pp_iters" -c -p "$port")
	srv=$tmp/${name//\//-}.server cli=$tmp/${name//\//-}.client
	gsc=$(gid_index $nsb $ip_sc) grx=$(rxe_gid_index)
	[ -n "$gsc" ] && [ -n "$grx" ] ||
		{ not_ok "$name"; say "no GID index for $ip_sc or $ip_rxe"; return; }
	crc=0
	if [ "$scs" = 1 ]; then
		bg "$srv" "${scx[@]}" "$gsc" "${opts[@]}"
		poll $((100 * slow)) tcp_listening_at $nsb "$port" ||
			{ not_ok "$name" "$srv"; say "the server did not listen"; return; }
		"${rxx[@]}" "$grx" "${opts[@]}" $ip_sc >"$cli" 2>&1 || crc=$?
		want=$ip_sc
	else
		bg "$srv" "${rxx[@]}" "$grx" "${opts[@]}"
		poll $((100 * slow)) tcp_listening_at "" "$port" ||
			{ not_ok "$name" "$srv"; say "the server did not listen"; return; }
		"${scx[@]}" "$gsc" "${opts[@]}" $ip_rxe >"$cli" 2>&1 || crc=$?
		want=$ip_rxe
	fi
	finish "$bgpid"
	# "N bytes in S seconds" then "N iters in S seconds" on each side.
	if [ "$crc" = 0 ] && [ "$rc" = 0 ] && ! loader_error "$cli" "$srv" &&
	   grep -q "remote address: .* GID ::ffff:$want" "$cli" &&
	   grep -q "^$((rxe_size * rxe_pp_iters * 2)) bytes in " "$cli" &&
	   grep -q "^$rxe_pp_iters iters in" "$cli" && grep -q "^$rxe_pp_iters iters in" "$srv" &&
	   ! grep -qi "invalid data\|failed\|error" "$cli" "$srv"; then
		ok "$name"
		say "GID indexes softcm $gsc, rxe $grx; the client: $(grep ' iters in ' "$cli")"
	else
		not_ok "$name" "$cli" "$srv"
		say "client exit $crc, server exit $rc"
	fi
}

# rxe_perftest NAME PROG SC_SERVER PORT SIZE ITERS [SRV_LINE [OPTS...]]:
# ib_send_bw, ib_write_bw, ib_atomic_bw, ib_send_lat or ib_write_lat -R,
# softcm the server if SC_SERVER is 1, else rxe; both sides must print
# the result line of the size and iterations asked for (only the client
# with SRV_LINE 0: the server of a one-sided test or of a latency test
# prints none); OPTS more of perftest's options for both
# sides.  Sets passed to 1 if the case passed, else 0.  A client refused
# with REJ 8 (perftest's connect race, see run_lat: rxe's perftest client
# as softcm's) gets one more try on PORT + 100, as perftest_run gives
# softcm's.
rxe_perftest() {
	local name=$1 prog=$2 scs=$3 port=$4 size=$5 iters=$6 srvline=${7:-1} srv cli crc line try
	passed=0
	shift 7 2>/dev/null || shift $#
	local more=("$@")
	local scx=(ip netns exec "$nsb" timeout "$T" softcm exec -- "$prog")
	local rxx=(timeout "$T" "$prog" -d "$rxe")
	local opts
	srv=$tmp/${name//\//-}.server cli=$tmp/${name//\//-}.client
	for try in 1 2; do
		opts=(-R -F -s "$size" -n "$iters" -p "$port" "${more[@]}")
		crc=0
		if [ "$scs" = 1 ]; then
			bg "$srv" "${scx[@]}" "${opts[@]}"
			poll $((100 * slow)) sc_listening $nsb $port ||
				{ not_ok "$name" "$srv"; say "the server did not listen"; return; }
			"${rxx[@]}" "${opts[@]}" $ip_sc >"$cli" 2>&1 || crc=$?
		else
			bg "$srv" "${rxx[@]}" "${opts[@]}"
			poll $((100 * slow)) rxe_listening_port $port ||
				{ not_ok "$name" "$srv"; say "the server did not listen"; return; }
			"${scx[@]}" "${opts[@]}" $ip_rxe >"$cli" 2>&1 || crc=$?
		fi
		finish "$bgpid"
		[ "$crc" = 0 ] && [ "$rc" = 0 ] && break
		{ [ $try = 1 ] && refused_rej8 "$cli"; } || break
		say "perftest's connect race (REJ 8, see run_lat): once more"
		port=$((port + 100))
	done
	line="^ *$size +$iters "
	if [ "$crc" = 0 ] && [ "$rc" = 0 ] && ! loader_error "$cli" "$srv" &&
	   grep -qE "$line" "$cli" && { [ "$srvline" = 0 ] || grep -qE "$line" "$srv"; }; then
		ok "$name"
		say "the client: $(grep -E "$line" "$cli" | head -n 1)"
		passed=1
	else
		not_ok "$name" "$cli" "$srv"
		say "client exit $crc, server exit $rc"
	fi
}

rxe_datapath() {
	# softcm's SENDs and WRITEs of 512 bytes and more leave as page
	# fragments here (net.softcm.tx_zcopy, off by default), so that the
	# dissected capture has them too; the counters say how many bytes
	ip netns exec "$nsb" sh -c 'echo 1 >/proc/sys/net/softcm/tx_zcopy' ||
		say "tx_zcopy could not be set in $nsb"
	if ! data_capture_start; then
		for c in "${rxe_data_cases[@]}"; do
			not_ok "$c" "$tmp/data-tcpdump"
		done
		return
	fi
	rxe_pingpong rxe-datapath/ibv_rc_pingpong-softcm-server-rxe-client 1 18520
	rxe_pingpong rxe-datapath/ibv_rc_pingpong-rxe-server-softcm-client 0 18521
	rxe_perftest rxe-datapath/ib_send_bw-R-softcm-server-rxe-client ib_send_bw 1 18522 \
		$rxe_size $rxe_bw_iters
	rxe_perftest rxe-datapath/ib_send_bw-R-rxe-server-softcm-client ib_send_bw 0 18523 \
		$rxe_size $rxe_bw_iters
	rxe_perftest rxe-datapath/ib_write_bw-R-softcm-server-rxe-client ib_write_bw 1 18524 \
		$rxe_write_size $rxe_write_iters
	rxe_perftest rxe-datapath/ib_write_bw-R-rxe-server-softcm-client ib_write_bw 0 18525 \
		$rxe_write_size $rxe_write_iters
	rxe_read
	# FETCH ADDs each way: rxe's requester on softcm's responder, and
	# softcm's requester on rxe's.
	rxe_perftest rxe-datapath/ib_atomic_bw-R-softcm-server-rxe-client ib_atomic_bw 1 18528 \
		8 $rxe_bw_iters 0
	rxe_perftest rxe-datapath/ib_atomic_bw-R-rxe-server-softcm-client ib_atomic_bw 0 18529 \
		8 $rxe_bw_iters 0
	# The host dissects what was captured; here only that tcpdump kept
	# it all.
	data_capture_stop
	ip netns exec "$nsb" sh -c 'echo 0 >/proc/sys/net/softcm/tx_zcopy'
	say "softcm sent $(ip netns exec "$nsb" awk '$1 == "rc_tx_bytes" { print $2 }' \
		/proc/net/softcm_stats) payload bytes, $(ip netns exec "$nsb" \
		awk '$1 == "rc_tx_copied" { print $2 }' /proc/net/softcm_stats) of them copied"
	say "$(grep -E 'packets (captured|dropped)' "$tmp/data-tcpdump" | paste -sd, -)"
	if grep -q "^[1-9][0-9]* packets captured" "$tmp/data-tcpdump" &&
	   grep -q "^0 packets dropped by kernel" "$tmp/data-tcpdump"; then
		ok rxe-datapath/capture
	else
		not_ok rxe-datapath/capture "$tmp/data-tcpdump"
	fi
}

# rxe_rping NAME SC_SERVER PORT [SC_ADDR RXE_ADDR]: rping -V, ten
# rounds (an RDMA READ by the server and a WRITE back per round, the
# client checking every byte; rping_verdict), softcm the server if
# SC_SERVER is 1, else rxe; between the IPv4 addresses unless others are
# given.
rxe_rping() {
	local name=$1 scs=$2 port=$3 sca=${4:-$ip_sc} rxa=${5:-$ip_rxe} srv cli crc addr
	local scx=(ip netns exec "$nsb" timeout "$T" softcm exec -- rping)
	local rxx=(timeout "$T" rping)
	local opts=(-p "$port" -C 10 -V -v -S 4000)
	srv=$tmp/${name//\//-}.server cli=$tmp/${name//\//-}.client
	crc=0
	if [ "$scs" = 1 ]; then
		addr=$sca
		bg "$srv" "${scx[@]}" -s -a $addr "${opts[@]}"
		poll $((100 * slow)) sc_listening $nsb $port ||
			{ not_ok "$name" "$srv"; say "the server did not listen"; return; }
		"${rxx[@]}" -c -a $addr "${opts[@]}" >"$cli" 2>&1 || crc=$?
	else
		addr=$rxa
		bg "$srv" "${rxx[@]}" -s -a $addr "${opts[@]}"
		poll $((100 * slow)) rxe_listening $addr $port ||
			{ not_ok "$name" "$srv"; say "the server did not listen"; return; }
		"${scx[@]}" -c -a $addr "${opts[@]}" >"$cli" 2>&1 || crc=$?
	fi
	finish "$bgpid"
	rping_verdict "$name" 10 "$cli" "$srv" "$crc"
}

rxe_read() {
	rxe_rping rxe-read/rping-V-softcm-server-rxe-client 1 7182
	rxe_rping rxe-read/rping-V-rxe-server-softcm-client 0 7183
	rxe_perftest rxe-read/ib_read_bw-R-softcm-server-rxe-client ib_read_bw 1 18526 \
		$rxe_write_size $rxe_write_iters 0
	rxe_perftest rxe-read/ib_read_bw-R-rxe-server-softcm-client ib_read_bw 0 18527 \
		$rxe_write_size $rxe_write_iters 0
}

# rxe rounds max_rd_atomic up to a power of two: a connection that
# negotiated 3 READs (perftest -o 3) lets rxe's requester have 4
# outstanding, and softcm's responder must serve the fourth (it keeps 4
# resources, protocol.rst, "READ request"), not drop it for want of one
# (rd_atomic_exhausted) and leave it to rxe's timer.  READs of 1 MiB, so
# that each resource is still sending when the next READ comes.  (With
# 3 resources kept the run did not finish in its 30 s: the case fails
# with the run.)
rxe_read_rd_atomic() {
	local ex0 ex
	ex0=$(sc_stat rd_atomic_exhausted)
	rxe_perftest rxe-read-rd-atomic/ib_read_bw-R-o3-1MiB-softcm-server-rxe-client ib_read_bw 1 \
		18535 1048576 8 0 -o 3
	ex=$(($(sc_stat rd_atomic_exhausted) - ex0))
	say "softcm's responder: $ex READs dropped for want of a resource"
	if [ "$passed" = 1 ] && [ "$ex" = 0 ]; then
		ok rxe-read-rd-atomic/fourth-read-served
	else
		not_ok rxe-read-rd-atomic/fourth-read-served
	fi
}

# rxe_rdma_example NAME PROG SC_SERVER PORT: run_rdma_example's pair of
# PROG (rdma_ or rdma_x) with one side on rxe, softcm the server if
# SC_SERVER is 1, else rxe's (listening on every address of the root
# namespace, as softcm's does on its namespace's).
rxe_rdma_example() {
	local name=$1 prog=$2 scs=$3 port=$4 srv cli crc=0
	local scx=(ip netns exec "$nsb" timeout "$T" softcm exec --)
	srv=$tmp/${name//\//-}.server cli=$tmp/${name//\//-}.client
	if [ "$scs" = 1 ]; then
		bg "$srv" "${scx[@]}" "${prog}server" -p "$port"
		poll $((100 * slow)) sc_listening $nsb $port ||
			{ not_ok "$name" "$srv"; say "the server did not listen"; return; }
		timeout "$T" "${prog}client" -s $ip_sc -p "$port" >"$cli" 2>&1 || crc=$?
	else
		bg "$srv" timeout "$T" "${prog}server" -p "$port"
		poll $((100 * slow)) rxe_listening_port $port ||
			{ not_ok "$name" "$srv"; say "the server did not listen"; return; }
		"${scx[@]}" "${prog}client" -s $ip_rxe -p "$port" >"$cli" 2>&1 || crc=$?
	fi
	finish "$bgpid"
	rdma_example_verdict "$name" "$prog" "$cli" "$srv" "$crc"
}

# perftest's latency tests (64 bytes, 100 round trips: run_lat's),
# librdmacm's examples and rping over IPv6 (rxe_ipv6) against rxe, each
# way.  Outside the capture: their
# packets are of the kinds the bandwidth cases put there.
rxe_more() {
	rxe_perftest rxe-lat/ib_send_lat-R-softcm-server-rxe-client ib_send_lat 1 18540 64 100 0
	rxe_perftest rxe-lat/ib_send_lat-R-rxe-server-softcm-client ib_send_lat 0 18541 64 100 0
	rxe_perftest rxe-lat/ib_write_lat-R-softcm-server-rxe-client ib_write_lat 1 18542 64 100 0
	rxe_perftest rxe-lat/ib_write_lat-R-rxe-server-softcm-client ib_write_lat 0 18543 64 100 0
	rxe_rdma_example rxe-examples/rdma_server-softcm-rdma_client-rxe rdma_ 1 7486
	rxe_rdma_example rxe-examples/rdma_server-rxe-rdma_client-softcm rdma_ 0 7487
	rxe_rdma_example rxe-examples/rdma_xserver-softcm-rdma_xclient-rxe rdma_x 1 7488
	rxe_rdma_example rxe-examples/rdma_xserver-rxe-rdma_xclient-softcm rdma_x 0 7489
	rxe_ipv6
}

# RC data over IPv6 (its ICRC masks other header fields than IPv4's):
# rping -V each way, captured on xr0; then every RoCEv2 packet of both
# sides, the CM's and the data's, carries flow label 0 (tcpdump prints
# "flowlabel" only for another) and softcm's hop limits are rxe's.
rxe_ipv6() {
	local v6=$tmp/v6.pcap pid hl_sc hl_rxe n_sc n_rxe fl
	capture_start "$v6" "$tmp/v6-tcpdump" -s 128 ip6 and udp port 4791 ||
		say "the IPv6 capture did not start"
	pid=$capture_pid
	rxe_rping rxe-ipv6/rping-V-softcm-server-rxe-client 1 7184 $ip6_sc $ip6_rxe
	rxe_rping rxe-ipv6/rping-V-rxe-server-softcm-client 0 7185 $ip6_sc $ip6_rxe
	kill -INT "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	tcpdump -Z root -nv -r "$v6" >"$tmp/v6.all" 2>&1
	grep " IP6 (" "$tmp/v6.all" >"$tmp/v6.txt"
	n_sc=$(grep -c ") $ip6_sc\." "$tmp/v6.txt")
	n_rxe=$(grep -c ") $ip6_rxe\." "$tmp/v6.txt")
	fl=$(grep -c "flowlabel" "$tmp/v6.txt")
	hl_sc=$(grep ") $ip6_sc\." "$tmp/v6.txt" | grep -o "hlim [0-9]*" | sort -u | paste -sd,)
	hl_rxe=$(grep ") $ip6_rxe\." "$tmp/v6.txt" | grep -o "hlim [0-9]*" | sort -u | paste -sd,)
	say "IPv6 packets: softcm $n_sc ($hl_sc), rxe $n_rxe ($hl_rxe), $fl with a flow label"
	if [ "$n_sc" -gt 0 ] && [ "$n_rxe" -gt 0 ] && [ "$fl" = 0 ] && [ "$hl_sc" = "$hl_rxe" ]; then
		ok rxe-ipv6/flow-label-and-hop-limit-as-rxe
	else
		not_ok rxe-ipv6/flow-label-and-hop-limit-as-rxe "$tmp/v6-tcpdump"
		head -n 6 "$tmp/v6.all" | sed 's/^/# /'
	fi
}

# READs from rxe whose responses stop (protocol.rst, "READ stall"):
# rxe's responder sends a READ's responses back to back into the
# receiving CPU's backlog; with a backlog smaller than the burst (300
# here; a READ of 1 MiB is 1 024 responses) each READ overflows it, rxe
# ends the burst and discards the next READ's request.  softcm asks
# again after a short wait, not its timeout (2.1 s): the run moves with
# rc_timeouts unchanged, and read_retries shows that bursts did overflow
# (without the wait, a timeout per READ).  Outside the capture: 5 MiB of
# responses would only lengthen its dissection.
rxe_read_stall() {
	local bl to0 rr0 to rr

	bl=$(cat /proc/sys/net/core/netdev_max_backlog)
	to0=$(sc_stat rc_timeouts) rr0=$(sc_stat read_retries)
	echo 300 >/proc/sys/net/core/netdev_max_backlog
	rxe_perftest rxe-read-stall/ib_read_bw-R-1MiB-rxe-server-softcm-client ib_read_bw 0 \
		18534 1048576 5 0
	echo "$bl" >/proc/sys/net/core/netdev_max_backlog
	to=$(($(sc_stat rc_timeouts) - to0)) rr=$(($(sc_stat read_retries) - rr0))
	say "softcm's requester: $to timeouts, $rr READs asked again"
	if [ "$to" = 0 ] && [ "$rr" -gt 0 ]; then
		ok rxe-read-stall/no-timeout
	else
		not_ok rxe-read-stall/no-timeout
	fi
}

# ---- the QPs, while connected ----

# field FILE KEY: the value after KEY on exec_peer's "qp" line.
field() {
	awk -v k="$2" '$1 == "qp" { for (i = 2; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' "$1"
}
# check_pair A B: A's QP in RTS, naming B's QP number and PSNs.
check_pair() {
	local a=$1 b=$2 ok=1
	[ "$(field "$a" state)" = RTS ] || { ok=0; say "${a##*/}: not in RTS"; }
	[ "$(field "$a" dest_qpn)" = "$(field "$b" qpn)" ] ||
		{ ok=0; say "${a##*/}: dest_qpn is not ${b##*/}'s qpn"; }
	[ "$(field "$a" rq_psn)" = "$(field "$b" sq_psn)" ] ||
		{ ok=0; say "${a##*/}: rq_psn is not ${b##*/}'s sq_psn"; }
	[ $ok = 1 ]
}
# rxe_qp_check SC RXE: rxe's own view of its QP (rdma resource show qp)
# agrees with what softcm's QP announced.
rxe_qp_check() {
	local sc=$1 rx=$2 line
	rdma resource show qp link $rxe/1 >"$tmp/rdma-qp" 2>&1
	line=$(grep -E "lqpn $(field "$rx" qpn)( |\$)" "$tmp/rdma-qp") ||
		{ say "rxe shows no QP $(field "$rx" qpn)"; return 1; }
	say "rxe: $line"
	echo "$line" | grep -qE "(^| )rqpn $(field "$sc" qpn)( |\$)" &&
		echo "$line" | grep -qE "(^| )state RTS( |\$)" &&
		echo "$line" | grep -qE "(^| )rq-psn $(field "$sc" sq_psn)( |\$)" &&
		echo "$line" | grep -qE "(^| )sq-psn $(field "$sc" rq_psn)( |\$)" ||
		{ say "rxe's QP does not match softcm's"; return 1; }
}
# sc_listing_check NS SC OTHER: softcm's listing in NS has a connection of
# the QP in SC with OTHER's QP as its peer's: what its REQ or REP said.
# (The guest has no /dev/fd: files, not process substitution.)
sc_listing_check() {
	local ns=$1 q r f
	q=$(field "$2" qpn) r=$(field "$3" qpn)
	ip netns exec "$ns" cat /proc/net/softcm >"$tmp/listing"
	tail -n +2 "$tmp/listing" >"$tmp/listing.ids"
	# qpn and remote_qpn, the 11th and 12th columns, in hex.
	while read -r -a f; do
		[ "${f[10]:0:2}" = 0x ] && [ "${f[11]:0:2}" = 0x ] || continue
		[ $((f[10])) = "$q" ] && [ $((f[11])) = "$r" ] && return 0
	done <"$tmp/listing.ids"
	say "softcm's listing in $ns shows no connection of QP $q with $r:"
	sed 's/^/# listing: /' "$tmp/listing"
	return 1
}

# peers_up NAME SRV_NS SRV_ADDR CLI_NS PORT SC_SERVER SC_CLIENT [-- SRV_ARGS -- CLI_ARGS]:
# exec_peer as the server in SRV_NS (under softcm exec if SC_SERVER is 1)
# and the client in CLI_NS, each reading a FIFO the script holds open
# (fd 7 the server's, 8 the client's; peers_down closes them).  Sets
# srv and cli (their outputs), spid and cpid; returns 1, the case said
# not ok, if the server never listened, 2 if the two were not
# established.
peers_up() {
	local name=$1 sns=$2 addr=$3 cns=$4 port=$5 ssc=$6 csc=$7 sx=() cx=() sa=() ca=()
	shift 7
	if [ "${1:-}" = -- ]; then
		shift
		while [ $# -gt 0 ] && [ "$1" != -- ]; do sa+=("$1"); shift; done
		[ $# -gt 0 ] && shift
		ca=("$@")
	fi
	srv=$tmp/${name//\//-}.server cli=$tmp/${name//\//-}.client
	[ "$ssc" = 1 ] && sx=(softcm exec --)
	[ "$csc" = 1 ] && cx=(softcm exec --)
	rm -f "$tmp/sgo" "$tmp/cgo"
	mkfifo "$tmp/sgo" "$tmp/cgo"
	at "$sns" timeout $T "${sx[@]}" "$xpeer" server "$addr" $port "${sa[@]}" \
		<"$tmp/sgo" >"$srv" 2>&1 &
	spid=$!
	pids+=("$spid")
	exec 7>"$tmp/sgo"
	if ! poll $((100 * slow)) has_line "$srv" listening; then
		not_ok "$name" "$srv"
		exec 7>&-
		finish "$spid"
		return 1
	fi
	at "$cns" timeout $T "${cx[@]}" "$xpeer" client "$addr" $port "${ca[@]}" \
		<"$tmp/cgo" >"$cli" 2>&1 &
	cpid=$!
	pids+=("$cpid")
	exec 8>"$tmp/cgo"
	poll $((200 * slow)) has_line "$srv" established &&
		poll $((200 * slow)) has_line "$cli" established ||
		{ say "not established on both sides"; return 2; }
	say "server: $(grep '^qp ' "$srv")"
	say "client: $(grep '^qp ' "$cli")"
}
# peers_down: both disconnect (a subshell writes: if a side is already
# gone, its SIGPIPE must not end this script) and exit; returns 1, said,
# unless both exited 0.
peers_down() {
	local crc src
	(echo go >&7) 2>/dev/null
	(echo go >&8) 2>/dev/null
	exec 7>&- 8>&-
	finish "$cpid"
	crc=$rc
	finish "$spid"
	src=$rc
	[ "$crc" = 0 ] && [ "$src" = 0 ] || { say "client exit $crc, server exit $src"; return 1; }
}

# run_qp NAME SRV_NS SRV_ADDR CLI_NS PORT SC_SERVER SC_CLIENT: exec_peer on
# both sides (as ucmatose above), held connected while the QPs are
# compared; then both disconnect.
run_qp() {
	local name=$1 sns=$2 cns=$4 ssc=$6 csc=$7 srv cli ok=1 spid cpid ret=0
	peers_up "$@" || ret=$?
	[ $ret = 1 ] && return
	[ $ret = 0 ] || ok=0
	if [ $ok = 1 ]; then
		check_pair "$srv" "$cli" && check_pair "$cli" "$srv" || ok=0
		[ "$ssc" = 1 ] && { sc_listing_check "$sns" "$srv" "$cli" || ok=0; }
		[ "$csc" = 1 ] && { sc_listing_check "$cns" "$cli" "$srv" || ok=0; }
		if [ "$ssc" = 0 ]; then
			rxe_qp_check "$cli" "$srv" || ok=0
		elif [ "$csc" = 0 ]; then
			rxe_qp_check "$srv" "$cli" || ok=0
		fi
	fi
	peers_down || ok=0
	if [ $ok = 1 ]; then
		ok "$name"
	else
		not_ok "$name" "$cli" "$srv" "$tmp/rdma-qp"
	fi
}

# run_rnr NAME SRV_NS SRV_ADDR CLI_NS PORT SC_SERVER SC_CLIENT: exec_peer -s,
# softcm on one side and rxe on the other (the datapath review's rxe
# behaviours, against rxe itself).  The client asks for initiator depth
# 3 and responder resources 1, the server 1 and 3: each side's QP must
# allow 3 READs/atomics out from the client and 1 from the server
# (librdmacm sets the REQ's and REP's values, crossed, as
# max_rd_atomic and max_dest_rd_atomic); rxe's QP reads 4 for 3, having
# rounded both up to a power of two, softcm's reads 3 (its responder
# keeps 4 resources, rxe_read_rd_atomic below).  rdma_cm gives every RC QP
# min_rnr_timer 0 (655.36 ms) and here rnr_retry 7: the client SENDs
# at once, the server has no receive posted, so the SEND meets an RNR
# NAK; once softcm counted one (sent or received) the server posts its
# receive, and the SEND must complete on both ends, every byte in.
run_rnr() {
	local name=$1 sns=$2 cns=$4 ssc=$6 csc=$7 srv cli ok=1 spid cpid ns key n0 ret=0
	# softcm's side counts the NAK: sent as the server, received as the
	# client
	if [ "$ssc" = 1 ]; then
		ns=$sns key=rnr_naks_sent
	else
		ns=$cns key=rc_rnr_naks_received
	fi
	n0=$(sc_stat $key $ns)
	peers_up "$@" -- -r 1,3 -s -- -r 3,1 -s || ret=$?
	[ $ret = 1 ] && return
	[ $ret = 0 ] || ok=0
	if [ $ok = 1 ]; then
		check_pair "$srv" "$cli" && check_pair "$cli" "$srv" || ok=0
		local c3=4 s3=4
		[ "$csc" = 1 ] && c3=3
		[ "$ssc" = 1 ] && s3=3
		[ "$(field "$cli" max_rd_atomic)" = $c3 ] &&
			[ "$(field "$cli" max_dest_rd_atomic)" = 1 ] &&
			[ "$(field "$srv" max_rd_atomic)" = 1 ] &&
			[ "$(field "$srv" max_dest_rd_atomic)" = $s3 ] ||
			{ ok=0; say "max_rd_atomic/max_dest_rd_atomic not $c3/1 (client), 1/$s3 (server)"; }
		[ "$(field "$srv" min_rnr_timer)" = 0 ] && [ "$(field "$cli" rnr_retry)" = 7 ] ||
			{ ok=0; say "not min_rnr_timer 0 (server) and rnr_retry 7 (client)"; }
		poll $((200 * slow)) sc_stat_above $key $ns $n0 ||
			{ ok=0; say "softcm counted no RNR NAK ($key in $ns)"; }
	fi
	# the server's receive now (if a side is gone, no SIGPIPE here)
	(echo post >&7) 2>/dev/null
	[ $ok = 1 ] && { poll $((300 * slow)) has_prefix "$cli" "send status" &&
		poll $((300 * slow)) has_prefix "$srv" "recv status" ||
		{ ok=0; say "the SEND did not complete on both ends"; }; }
	grep -qx 'send status 0' "$cli" && grep -qx 'recv status 0 bytes 64 data ok' "$srv" ||
		{ ok=0; say "client: $(grep '^send' "$cli"); server: $(grep '^recv' "$srv")"; }
	say "softcm's $key in $ns: $(($(sc_stat $key $ns) - n0))"
	peers_down || ok=0
	if [ $ok = 1 ]; then
		ok "$name"
	else
		not_ok "$name" "$cli" "$srv"
	fi
}
# run_tail NAME SRV_NS SRV_ADDR CLI_NS PORT: exec_peer -u 16, softcm's
# client and rxe's server: softcm's ACK probe met by rxe's responder
# (protocol.rst, "AckReq in a stream").  Each round the client posts 16
# SENDs, none signalled, in one call, into a send queue of 16: the
# first asks for an ACK; of those ending in the tick their predecessor
# ended in, 3 in a row go without AckReq (a quarter of the queue), the
# 4th asks; the last 3, a tail no packet asks for, are asked for 2 ticks
# later by the probe, the last packet again with AckReq, which rxe's
# responder must acknowledge as a duplicate, not deliver again.  A
# round whose last message began a tick asked itself and has no probe:
# up to 3 rounds, until one has.  Then one more, whose post needs the
# send-queue slots the probed tail held: it is posted, every message
# arrives once and intact, and softcm counted no timeout (a probe rxe
# left unanswered would leave the tail to the timeout, 1.07 s, which
# sends it again).
run_tail() {
	local name=$1 cns=$4 srv cli ok=1 spid cpid p0 t0 r=0 k=0 ret=0 probed=0
	p0=$(sc_stat rc_ack_probes "$cns") t0=$(sc_stat rc_timeouts "$cns")
	peers_up "$@" 0 1 -- -u 16 -- -u 16 || ret=$?
	[ $ret = 1 ] && return
	[ $ret = 0 ] || ok=0
	while [ $ok = 1 ] && [ $r -lt 4 ]; do
		r=$((r + 1)) k=$((k + 16))
		(echo send >&8) 2>/dev/null
		poll $((100 * slow)) has_line "$cli" "posted $k" &&
			poll $((100 * slow)) has_line "$srv" "recv $k ok" ||
			{ ok=0; say "round $r: the 16 SENDs not posted and received"; break; }
		# the round after the probe: its post waited for the tail's ACK
		[ $probed = 1 ] && break
		[ $r -lt 4 ] || { ok=0; say "3 rounds and no probe"; break; }
		poll $((10 * slow)) sc_stat_above rc_ack_probes "$cns" "$p0" &&
			{ probed=1; say "round $r: probed"; }
	done
	say "softcm: $(($(sc_stat rc_ack_probes "$cns") - p0)) probes," \
		"$(($(sc_stat rc_timeouts "$cns") - t0)) timeouts"
	[ "$(sc_stat rc_timeouts "$cns")" = "$t0" ] || { ok=0; say "softcm timed out"; }
	peers_down || ok=0
	[ "$(grep -c '^recv ' "$srv")" = $k ] || { ok=0; say "rxe's server got other than $k"; }
	if [ $ok = 1 ]; then
		ok "$name"
	else
		not_ok "$name" "$cli" "$srv"
	fi
}
# sc_stat_above NAME NS N: softcm's counter NAME in NS is above N.
sc_stat_above() {
	[ "$(sc_stat "$1" "$2")" -gt "$3" ]
}

if ! setup >"$tmp/setup" 2>&1; then
	not_ok setup "$tmp/setup"
	skip_rest "no topology"
else
	sed 's/^/# /' "$tmp/setup"
	ok setup

	run_ucmatose softcm/ucmatose $nsa $ip_a $nsb 7471 1 1
	run_cmtime
	run_ucmatose rxe/softcm-ucmatose-client-rxe-ucmatose-server "" $ip_rxe $nsb 7472 0 1 10
	run_ucmatose rxe/rxe-ucmatose-client-softcm-ucmatose-server $nsb $ip_sc "" 7473 1 0 10

	run_qp qp/softcm-to-softcm $nsa $ip_a $nsb 7476 1 1
	run_qp qp/softcm-client-rxe-server "" $ip_rxe $nsb 7477 0 1
	run_qp qp/rxe-client-softcm-server $nsb $ip_sc "" 7478 1 0
	run_rnr qp/rnr-timer-0-and-rd-atomic-3-1-softcm-client-rxe-server "" $ip_rxe $nsb 7482 0 1
	run_rnr qp/rnr-timer-0-and-rd-atomic-3-1-rxe-client-softcm-server $nsb $ip_sc "" 7483 1 0
	run_tail qp/stream-tail-probe-softcm-client-rxe-server "" $ip_rxe $nsb 7485

	run_rc_pingpong datapath/ibv_rc_pingpong 18515 1
	run_rc_pingpong datapath/ibv_rc_pingpong-N-c 18519 10 -N -c
	run_send_bw
	run_udaddy
	run_rping
	run_read_bw
	run_atomic_bw
	run_ucmatose datapath/ucmatose-messages $nsa $ip_a $nsb 7479 1 1 10
	run_rdma_example rdma_ 7480
	run_rdma_example rdma_x 7481
	run_lat ib_send_lat 18530
	run_lat ib_write_lat 18531
	run_lat_events

	rxe_datapath
	rxe_read_stall
	rxe_read_rd_atomic
	rxe_more
fi

say "the cases took ${SECONDS} s"
cleanup
if [ ! -e /sys/class/infiniband/$rxe ] && ! ip netns list | grep -qwE "$nsa|$nsb"; then
	ok cleanup
else
	not_ok cleanup
fi
