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
# -C 0 no data, only the CM; udaddy: UD, SIDR), or rdmacm_peer (ours, on
# the system's librdmacm: private data, rejects, who disconnects), against
# `softcm ping`, in both directions.  The lost-message cases drop CM
# messages with tc (a u32 filter on the attribute ID, or netem random
# loss) and wait for the Linux CM's retransmissions.  Every wait is
# bounded; servers are polled for, never slept for.  The topology is
# removed at the end; the modules stay loaded (init.sh unloads softcm
# after the last program).
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
peer=$(cd "$(dirname "$0")" && pwd)/lib/rdmacm_peer
# userspace/examples, built on libsoftcm and on the system's librdmacm.
ex_sc=$(cd "$(dirname "$0")" && pwd)/lib/examples
ex_rdmacm=$(cd "$(dirname "$0")" && pwd)/lib/examples-rdmacm
tmp=$(mktemp -d)
pids=()
n=0
# The debug kernel runs each kind of exchange with rxe once: every CM
# message of rxe's reaches softcm's receive paths under KASAN, over IPv4
# and, for a connection each way, IPv6.  The IPv6 repeats of the data,
# disconnect and reject cases, the lost messages (connect_test's lost_*
# and destroy_passive_before_rtu take softcm through the same timers,
# duplicates and REJs on debug; fault_test's chaos case loses at random)
# and the examples (their calls are ucmatose's) run on the stock kernel
# only (testing.rst, "Which kernel runs what").
every=1
[ "${SOFTCM_KERNEL:-stock}" = debug ] && every=0
# on_stock CMD...: CMD where every case runs
on_stock() { [ $every = 0 ] || "$@"; }

cases=(setup
	ipv4/softcm-client-ucmatose-server ipv4/ucmatose-client-softcm-server
	ipv6/softcm-client-ucmatose-server ipv6/ucmatose-client-softcm-server
	sidr/softcm-client-udaddy-server sidr/udaddy-client-softcm-server
	reject/softcm-client-no-rxe-listener reject/ucmatose-client-no-softcm-listener
	ipv4/data-softcm-client-rdmacm-server ipv4/data-rdmacm-client-softcm-server
	ipv4/disconnect-softcm-client-first ipv4/disconnect-rdmacm-client-first
	reject/rdmacm-server-rejects-softcm reject/softcm-server-rejects-rdmacm
	reject/rxe-stale-qpn-rej-10
	ipv4/ucmatose-2-connections-softcm-server)
[ $every = 1 ] && cases+=(
	lost/softcm-rep-rxe-retransmits-req lost/rxe-req-retransmitted
	lost/rtu-rxe-server-gone-rej-to-established-softcm
	lost/rtu-softcm-server-gone-rej-to-established-rxe
	ipv6/data-softcm-client-rdmacm-server ipv6/data-rdmacm-client-softcm-server
	ipv6/disconnect-softcm-client-first ipv6/disconnect-rdmacm-client-first
	ipv6/reject-rdmacm-server-rejects-softcm ipv6/reject-softcm-server-rejects-rdmacm
	ipv6/reject-rxe-stale-qpn-rej-10
	lost/netem-random-loss
	examples/ipv4/rdmacm-sync-client-softcm-sync-server
	examples/ipv4/softcm-sync-client-rdmacm-sync-server
	examples/ipv6/rdmacm-sync-client-softcm-sync-server
	examples/ipv6/softcm-sync-client-rdmacm-sync-server)
cases+=(capture cleanup)
echo "1..${#cases[@]}"

# ok, not_ok, say, skip_rest, poll
. "$(dirname "$0")/lib/tap.sh"

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

# A softcm server says "listening on" once its id listens.
sc_listening() { has_prefix "$1" 'listening on'; }
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
			echo "softcm's ids in $ns:"
			cat /proc/$nsproc/net/softcm
			echo "softcm's counters in $ns:"
			grep -vw 0 /proc/$nsproc/net/softcm_stats
			echo "rxe's counters (send_err: a QP failed, see lossy()):"
			rdma statistic show link rxe0/1
			echo "qdiscs and filters (the lost cases'):"
			tc -s qdisc show dev r0
			tc filter show dev r0
			ip netns exec $ns tc -s qdisc show dev r1
			ip netns exec $ns tc filter show dev r1
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
	poll $((100 * slow)) has_text "$tmp/tcpdump" "listening on r0"
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
	ip netns exec $ns sleep 100000 &
	nsproc=$!
	pids+=("$nsproc")
	in_ns() { [ "$(readlink /proc/$nsproc/ns/net)" != "$(readlink /proc/self/ns/net)" ]; }
	poll $((50 * slow)) in_ns || { say "no process in $ns"; return 1; }
	ip link add r0 type veth peer name r1 netns $ns || return 1
	ip addr add $ip4_rxe/24 dev r0 || return 1
	ip addr add $ip6_rxe/64 dev r0 nodad || return 1
	ip -n $ns addr add $ip4_sc/24 dev r1 || return 1
	ip -n $ns addr add $ip6_sc/64 dev r1 nodad || return 1
	ip link set r0 up && ip -n $ns link set r1 up && ip -n $ns link set lo up || return 1
	# The lost cases' qdiscs, before rxe sends anything (see lose()).
	lossy "" r0 && lossy $ns r1 || return 1
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
	   grep -qE "^\[1\] request from $from:[0-9]+ \(rdma_get_peer_addr\)$" "$srv" &&
	   grep -qE "^\[1\] (established with|answered \(SIDR\), peer) $from:[0-9]+ \(softcm_getpeername\)$" "$srv"; then
		ok "$name"
	else
		not_ok "$name" "$srv" "$cli" "$srv.diag"
		say "softcm server exit $rc, rxe client exit $crc"
	fi
}

# ---- rdmacm_peer cases ----

# hex STRING: its bytes in hex, as rdmacm_peer prints private data.
hex() {
	local i c out=
	for ((i = 0; i < ${#1}; i++)); do
		printf -v c %02x "'${1:i:1}"
		out+=$c
	done
	echo "$out"
}
# fill PATTERN LEN: PATTERN repeated to exactly LEN characters.
fill() {
	local s=
	while [ ${#s} -lt "$2" ]; do s+=$1; done
	echo "${s:0:$2}"
}
# hostport ADDR PORT: as softcm ping and rdmacm_peer print it.
hostport() { case $1 in *:*) echo "[$1]:$2" ;; *) echo "$1:$2" ;; esac; }
# A regular expression for ADDR with any port.
addr_re() { case $1 in *:*) echo "\\[$1\\]:[0-9]+" ;; *) echo "$1:[0-9]+" ;; esac; }

peer_listening() { has_prefix "$1" 'listening on'; }
# has FILE REGEX: a line of FILE matches the extended REGEX; else say which.
has() {
	grep -qE -- "$2" "$1" && return 0
	say "${1##*/}: no line matches: $2"
	return 1
}
# A counter of softcm's in $ns, read through a process that lives there
# ($nsproc, from setup) by the shell itself: the lost cases poll it, and
# each program started costs the debug kernel half a second of CPU.
sc_stat() { value_of /proc/$nsproc/net/softcm_stats "$1"; }

# softcm client in sc-i -> rdmacm_peer server on rxe, with DATA in the
# REQ and REPLY in the REP.  FIRST says who disconnects: "peer" (the
# rdma_cm server, right after ESTABLISHED) or "softcm" (the client, but
# only once the server has reported ESTABLISHED: a DREQ sent at once can
# overtake our RTU, see Documentation/protocol.rst).
# sc_to_peer NAME ADDR PORT DATA REPLY FIRST
sc_to_peer() {
	local name=$1 addr=$2 port=$3 data=$4 reply=$5 first=$6 srv cli crc cpid ok=1
	local from=$ip4_sc
	case $addr in *:*) from=$ip6_sc ;; esac
	srv=$tmp/${name//\//-}.peer cli=$tmp/${name//\//-}.softcm
	if [ "$first" = peer ]; then
		bg "$srv" "$peer" server -D -d "$reply" -t $T "$addr" $port
	else
		bg "$srv" "$peer" server -d "$reply" -t $T "$addr" $port
	fi
	if ! poll $((100 * slow)) peer_listening "$srv"; then
		not_ok "$name" "$srv"
		return
	fi
	crc=0
	if [ "$first" = peer ]; then
		ip netns exec $ns timeout $T softcm ping -w -t $((T * 1000)) -p $port \
			-d "$data" "$addr" >"$cli" 2>&1 || crc=$?
	else
		rm -f "$tmp/go"
		mkfifo "$tmp/go"
		ip netns exec $ns timeout $T softcm ping -i -t $((T * 1000)) -p $port \
			-d "$data" "$addr" <"$tmp/go" >"$cli" 2>&1 &
		cpid=$!
		exec 8>"$tmp/go"
		poll $((100 * slow)) has_prefix "$srv" '[1] established' ||
			say "the rdma_cm server did not report ESTABLISHED"
		echo go >&8
		exec 8>&-
		wait "$cpid" || crc=$?
	fi
	finish "$bgpid" "$srv.diag"
	[ "$crc" = 0 ] && [ "$rc" = 0 ] || { ok=0; say "softcm ping exit $crc, rdmacm_peer exit $rc"; }
	has "$cli" "^established with $(hostport "$addr" $port | sed 's/[][]/\\&/g')\$" || ok=0
	has "$cli" "^peer port $port \(rdma_get_dst_port\)" || ok=0
	has "$cli" "^private data from the server: \"$reply\"\$" || ok=0
	has "$cli" "^disconnected\$" || ok=0
	has "$srv" "^\[1\] request from $(addr_re $from)\$" || ok=0
	has "$srv" "^request data 56 $(hex "$data")(00)*\$" || ok=0
	has "$srv" "^\[1\] done\$" || ok=0
	if [ $ok = 1 ]; then
		ok "$name"
	else
		not_ok "$name" "$cli" "$srv" "$srv.diag"
	fi
}

# rdmacm_peer client on rxe -> softcm server in sc-i; FIRST: "peer" (the
# rdma_cm client disconnects once it has sent the RTU) or "softcm" (the
# server, once ESTABLISHED).
# peer_to_sc NAME ADDR PORT DATA REPLY FIRST
peer_to_sc() {
	local name=$1 addr=$2 port=$3 data=$4 reply=$5 first=$6 srv cli crc ok=1
	local from=$ip4_rxe
	case $addr in *:*) from=$ip6_rxe ;; esac
	srv=$tmp/${name//\//-}.softcm cli=$tmp/${name//\//-}.peer
	if [ "$first" = softcm ]; then
		bg "$srv" ip netns exec $ns timeout $T softcm ping -l -D -d "$reply" -p $port -b "$addr"
	else
		bg "$srv" ip netns exec $ns timeout $T softcm ping -l -d "$reply" -p $port -b "$addr"
	fi
	if ! poll $((100 * slow)) sc_listening "$srv"; then
		not_ok "$name" "$srv"
		return
	fi
	crc=0
	if [ "$first" = peer ]; then
		"$peer" client -D -d "$data" -t $T "$addr" $port >"$cli" 2>&1 || crc=$?
	else
		"$peer" client -d "$data" -t $T "$addr" $port >"$cli" 2>&1 || crc=$?
	fi
	finish "$bgpid" "$srv.diag"
	[ "$crc" = 0 ] && [ "$rc" = 0 ] || { ok=0; say "rdmacm_peer exit $crc, softcm ping exit $rc"; }
	has "$srv" "^\[1\] request from $(addr_re $from) \(rdma_get_peer_addr\)" || ok=0
	has "$srv" "^\[1\] private data from the client: \"$data\"\$" || ok=0
	has "$srv" "^\[1\] disconnected\$" || ok=0
	has "$cli" "^reply data 196 $(hex "$reply")(00)*\$" || ok=0
	has "$cli" "^done\$" || ok=0
	if [ $ok = 1 ]; then
		ok "$name"
	else
		not_ok "$name" "$srv" "$cli" "$srv.diag"
	fi
}

# rdmacm_peer rejects a softcm client: REJ 28 with DATA.
# peer_rejects NAME ADDR PORT DATA
peer_rejects() {
	local name=$1 addr=$2 port=$3 data=$4 srv cli crc ok=1
	srv=$tmp/${name//\//-}.peer cli=$tmp/${name//\//-}.softcm
	bg "$srv" "$peer" server -r -d "$data" -t $T "$addr" $port
	if ! poll $((100 * slow)) peer_listening "$srv"; then
		not_ok "$name" "$srv"
		return
	fi
	crc=0
	ip netns exec $ns timeout $T softcm ping -p $port -d hello "$addr" >"$cli" 2>&1 || crc=$?
	finish "$bgpid" "$srv.diag"
	[ "$crc" = 1 ] && [ "$rc" = 0 ] || { ok=0; say "softcm ping exit $crc, rdmacm_peer exit $rc"; }
	has "$cli" "connection rejected \(REJ reason 28\), private data \"$data\"\$" || ok=0
	has "$srv" "^\[1\] rejected\$" || ok=0
	if [ $ok = 1 ]; then
		ok "$name"
	else
		not_ok "$name" "$cli" "$srv" "$srv.diag"
	fi
}

# A softcm server rejects an rdmacm_peer client: REJ 28 with DATA.
# sc_rejects NAME ADDR PORT DATA
sc_rejects() {
	local name=$1 addr=$2 port=$3 data=$4 srv cli crc ok=1
	srv=$tmp/${name//\//-}.softcm cli=$tmp/${name//\//-}.peer
	bg "$srv" ip netns exec $ns timeout $T softcm ping -l -R -d "$data" -p $port -b "$addr"
	if ! poll $((100 * slow)) sc_listening "$srv"; then
		not_ok "$name" "$srv"
		return
	fi
	crc=0
	"$peer" client -r -d hello -t $T "$addr" $port >"$cli" 2>&1 || crc=$?
	finish "$bgpid" "$srv.diag"
	[ "$crc" = 0 ] && [ "$rc" = 0 ] || { ok=0; say "rdmacm_peer exit $crc, softcm ping exit $rc"; }
	has "$cli" "^REJECTED reason 28\$" || ok=0
	has "$cli" "^reject data 148 $(hex "$data")(00)*\$" || ok=0
	has "$srv" "^\[1\] rejected\$" || ok=0
	if [ $ok = 1 ]; then
		ok "$name"
	else
		not_ok "$name" "$srv" "$cli" "$srv.diag"
	fi
}

# ---- userspace/examples, one side on librdmacm ----

# examples NAME SERVER_ADDR PORT SC_SIDE: userspace/examples' sync_server
# serves one sync_client; the side SC_SIDE ("server" or "client") is the
# libsoftcm build in sc-i, the other the same source built with -lrdmacm
# on rxe.  Neither has a QP: the client gets CONNECT_RESPONSE and sends
# the RTU with rdma_establish(), under both libraries.  The server must
# see the RTU (ESTABLISHED, "connected to"), not only the client's DREQ.
examples() {
	local name=$1 addr=$2 port=$3 side=$4 srv cli rc crc from msg sbin cbin
	local sat= cat=
	srv=$tmp/${name//\//-}.server cli=$tmp/${name//\//-}.client
	msg="hello from the $side side's peer"
	if [ "$side" = server ]; then
		sbin=$ex_sc/sync_server cbin=$ex_rdmacm/sync_client sat=$ns
	else
		sbin=$ex_rdmacm/sync_server cbin=$ex_sc/sync_client cat=$ns
	fi
	bg "$srv" at "$sat" timeout $T "$sbin" -b "$addr" -p $port -n 1
	if ! poll $((100 * slow)) sc_listening "$srv"; then
		not_ok "$name" "$srv"
		say "sync_server did not listen"
		return
	fi
	crc=0
	at "$cat" timeout $T "$cbin" -p $port -m "$msg" "$addr" >"$cli" 2>&1 || crc=$?
	finish "$bgpid" "$srv.diag"
	from=$(sed -n "s/^connected to $(hostport "$addr" $port | sed 's/[][]/\\&/g') from \(.*\)\$/\1/p" "$cli")
	ok=1
	[ "$crc" = 0 ] && [ "$rc" = 0 ] || { ok=0; say "sync_client exit $crc, sync_server exit $rc"; }
	[ -n "$from" ] || { ok=0; say "the client did not connect"; }
	grep -qxF "disconnected" "$cli" || { ok=0; say "the client did not disconnect"; }
	grep -qF "server says: welcome, $from" "$cli" || { ok=0; say "no reply naming $from"; }
	grep -qxF "request from $from: $msg" "$srv" || { ok=0; say "the server did not get the greeting"; }
	grep -qxF "connected to $from" "$srv" ||
		{ ok=0; say "the server saw no RTU (no rdma_establish?)"; }
	grep -qxF "disconnected from $from" "$srv" || { ok=0; say "the server did not disconnect"; }
	if [ $ok = 1 ]; then
		ok "$name"
	else
		not_ok "$name" "$cli" "$srv" "$srv.diag"
	fi
}

# ---- lost messages (IPv4 only: the filter's offsets are IPv4's) ----

# at WHERE CMD...: CMD in namespace WHERE, or in init_net if WHERE is "".
at() {
	local where=$1
	shift
	if [ -n "$where" ]; then ip netns exec "$where" "$@"; else "$@"; fi
}
# lossy WHERE DEV: DEV's root qdisc a prio whose fourth band, which no
# packet reaches but through a filter, is a netem.  Made once, in
# setup(): a root qdisc added or removed deactivates the device for a
# moment, and a packet sent then is refused (NET_XMIT_CN or DROP);
# Linux 6.12's rxe fails the sending QP on that, its QP1 too, whose
# receive buffers are then flushed and never posted again: rxe's CM
# hears nothing more (a debug run once saw three lost cases wait to
# their limits after lost_req's qdisc came off r0 as rxe sent).
# Filters, and a netem's parameters, change with the device running.
lossy() {
	at "$1" tc qdisc add dev "$2" root handle 1: prio bands 4 &&
	at "$1" tc qdisc add dev "$2" parent 1:4 handle 40: netem loss 100%
}
# lose WHERE DEV MATCH NETEM: CM MADs leaving DEV that MATCH (extra u32
# matches) go to the band whose netem does NETEM.  IPv4 (20) + UDP (8) +
# BTH (12) + DETH (8) + the MAD header up to AttributeID (16) = 64.
# dropped counts from here.
declare -A lost_base
lose() {
	lost_base[$1/$2]=$(netem_dropped "$1" "$2")
	at "$1" tc qdisc change dev "$2" parent 1:4 handle 40: netem $4 &&
	at "$1" tc filter add dev "$2" parent 1: protocol ip prio 1 u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff $3 flowid 1:4
}
# drop_attr WHERE DEV ATTR: lose every CM message with attribute ID ATTR.
drop_attr() { lose "$1" "$2" "match u16 $3 0xffff at 64" "loss 100%"; }
unlose() { at "$1" tc filter del dev "$2" parent 1: prio 1; }
# netem_dropped WHERE DEV: packets DEV's netem has dropped since setup.
netem_dropped() {
	at "$1" tc -s qdisc show dev "$2" | sed -n '/netem 40:/{n;s/.*dropped \([0-9]*\).*/\1/p}'
}
# dropped WHERE DEV: packets the netem has dropped since lose().
dropped() {
	local n
	n=$(netem_dropped "$1" "$2")
	echo $((${n:-0} - ${lost_base[$1/$2]:-0}))
}
dropped_some() { [ "$(dropped "$1" "$2")" -gt 0 ] 2>/dev/null; }

# softcm's first REP (and all the REPs that follow, until the rdma_cm has
# retransmitted its REQ and softcm has seen the duplicate) is lost; the
# duplicate REQ is answered with the REP again, which, once the filter is
# gone, completes the connection.
lost_rep() {
	local name=lost/softcm-rep-rxe-retransmits-req port=7480 srv cli crc ok=1
	local rep0 retx0 dup0 reps retx lost
	local t=$((T * 2))
	srv=$tmp/lost-rep.softcm cli=$tmp/lost-rep.peer
	bg "$srv" ip netns exec $ns timeout $t softcm ping -l -p $port -b $ip4_sc
	if ! poll $((100 * slow)) sc_listening "$srv" || ! drop_attr $ns r1 0x0013 >"$cli" 2>&1; then
		unlose $ns r1 2>/dev/null
		not_ok "$name" "$srv" "$cli"
		return
	fi
	rep0=$(sc_stat tx_rep) retx0=$(sc_stat retransmits) dup0=$(sc_stat duplicates)
	"$peer" client -D -d lost-rep -t $t $ip4_sc $port >"$cli" 2>&1 &
	cpid=$!
	dup_seen() { [ "$(sc_stat duplicates)" -gt "$dup0" ]; }
	poll $((300 * slow)) dup_seen || { ok=0; say "no duplicate REQ reached softcm"; }
	lost=$(dropped $ns r1)
	unlose $ns r1
	crc=0
	wait "$cpid" || crc=$?
	finish "$bgpid" "$srv.diag"
	reps=$(($(sc_stat tx_rep) - rep0)) retx=$(($(sc_stat retransmits) - retx0))
	say "REPs sent $reps (retransmitted by the timer: $retx), lost $lost"
	[ "$crc" = 0 ] && [ "$rc" = 0 ] || { ok=0; say "rdmacm_peer exit $crc, softcm ping exit $rc"; }
	# The first REP, and at least one sent for a duplicate REQ.
	[ $((reps - retx)) -ge 2 ] || { ok=0; say "no REP answered the duplicate REQ"; }
	[ "${lost:-0}" -ge 1 ] || { ok=0; say "the filter lost no REP"; }
	has "$srv" "^\[1\] disconnected\$" || ok=0
	has "$cli" "^done\$" || ok=0
	if [ $ok = 1 ]; then
		ok "$name"
	else
		not_ok "$name" "$srv" "$cli" "$srv.diag"
	fi
}

# The rdma_cm's first REQ is lost; softcm sees only its retransmission.
lost_req() {
	local name=lost/rxe-req-retransmitted port=7481 srv cli crc ok=1 req0 reqs lost
	local t=$((T * 2))
	srv=$tmp/lost-req.softcm cli=$tmp/lost-req.peer
	bg "$srv" ip netns exec $ns timeout $t softcm ping -l -p $port -b $ip4_sc
	if ! poll $((100 * slow)) sc_listening "$srv" || ! drop_attr "" r0 0x0010 >"$cli" 2>&1; then
		unlose "" r0 2>/dev/null
		not_ok "$name" "$srv" "$cli"
		return
	fi
	req0=$(sc_stat rx_req)
	"$peer" client -D -d lost-req -t $t $ip4_sc $port >"$cli" 2>&1 &
	cpid=$!
	poll $((100 * slow)) dropped_some "" r0 || { ok=0; say "the filter lost no REQ"; }
	lost=$(dropped "" r0)
	unlose "" r0
	crc=0
	wait "$cpid" || crc=$?
	finish "$bgpid" "$srv.diag"
	reqs=$(($(sc_stat rx_req) - req0))
	say "REQs lost $lost, received by softcm $reqs"
	[ "$crc" = 0 ] && [ "$rc" = 0 ] || { ok=0; say "rdmacm_peer exit $crc, softcm ping exit $rc"; }
	[ "${lost:-0}" -ge 1 ] && [ "$reqs" -ge 1 ] || ok=0
	has "$srv" "^\[1\] disconnected\$" || ok=0
	has "$cli" "^done\$" || ok=0
	if [ $ok = 1 ]; then
		ok "$name"
	else
		not_ok "$name" "$srv" "$cli" "$srv.diag"
	fi
}

# A server that destroys its id after accepting, before the RTU has
# reached it (every RTU from the client dropped): its CM, still in
# REP_SENT, sends REJ 28 (the Linux CM's cm_destroy_id(), and softcm's)
# to a client that is established, which reports REJECTED, not
# DISCONNECTED, and goes through timewait (cm_rej_handler()).  The server
# (rdmacm_peer -g; over libsoftcm with softcm exec when SC_SERVER is 1)
# destroys once the client says it is established.
# gone_before_rtu NAME SC_SERVER PORT
gone_before_rtu() {
	local name=$1 scs=$2 port=$3 srv cli crc cpid ok=1 rej0 lost where dev addr est
	srv=$tmp/${name//\//-}.server cli=$tmp/${name//\//-}.client
	rm -f "$tmp/go"
	mkfifo "$tmp/go"
	# The client's RTUs are lost where they leave: r0 for rxe's, r1 for
	# softcm's.
	if [ "$scs" = 1 ]; then
		where="" dev=r0 addr=$ip4_sc est='^established$'
		ip netns exec $ns timeout $T softcm exec -- "$peer" server -g -t $T $addr $port \
			<"$tmp/go" >"$srv" 2>&1 &
	else
		where=$ns dev=r1 addr=$ip4_rxe est='^established with '
		timeout $T "$peer" server -g -t $T $addr $port <"$tmp/go" >"$srv" 2>&1 &
	fi
	bgpid=$!
	pids+=("$bgpid")
	exec 8>"$tmp/go"
	if ! poll $((100 * slow)) peer_listening "$srv" || ! drop_attr "$where" $dev 0x0014 >"$cli" 2>&1; then
		unlose "$where" $dev 2>/dev/null
		exec 8>&-
		not_ok "$name" "$srv" "$cli"
		return
	fi
	rej0=$(sc_stat rx_rej)
	if [ "$scs" = 1 ]; then
		"$peer" client -g -t $T $addr $port >"$cli" 2>&1 &
	else
		ip netns exec $ns timeout $T softcm ping -w -t $((T * 1000)) -p $port -d gone \
			$addr >"$cli" 2>&1 &
	fi
	cpid=$!
	poll $((100 * slow)) has_match "$cli" "$est" || { ok=0; say "the client did not establish"; }
	echo go >&8
	exec 8>&-
	crc=0
	wait "$cpid" || crc=$?
	lost=$(dropped "$where" $dev)
	unlose "$where" $dev
	finish "$bgpid" "$srv.diag"
	say "RTUs lost $lost, REJs received by softcm $(($(sc_stat rx_rej) - rej0))"
	[ "${lost:-0}" -ge 1 ] || { ok=0; say "the filter lost no RTU"; }
	has "$srv" "^\[1\] destroyed\$" || ok=0
	if [ "$scs" = 1 ]; then
		[ "$crc" = 0 ] && [ "$rc" = 0 ] || { ok=0; say "rdmacm_peer exits $crc (client), $rc"; }
		has "$cli" "^REJECTED reason 28\$" || ok=0
	else
		[ "$crc" = 1 ] && [ "$rc" = 0 ] || { ok=0; say "softcm ping exit $crc, rdmacm_peer exit $rc"; }
		has "$cli" "connection rejected \(REJ reason 28\)" || ok=0
		[ "$(sc_stat rx_rej)" -gt "$rej0" ] || ok=0
	fi
	if [ $ok = 1 ]; then
		ok "$name"
	else
		not_ok "$name" "$cli" "$srv" "$srv.diag"
	fi
}

# Random loss of CM messages both ways; several connections, all of which
# must complete (the rdma_cm server disconnects each once established).
# One after the other: softcm numbers its QP1 packets per namespace, and
# two sent at once from different CPUs may cross on the veth, which the
# capture check (PSNs in order) would take for softcm's mistake.
lost_random() {
	local name=lost/netem-random-loss port=7482 srv ok=1 i c=5 crc lost0 lost1
	local t=$((T * 4))
	srv=$tmp/random.peer
	bg "$srv" "$peer" server -D -n $c -d random -t $t $ip4_rxe $port
	if ! poll $((100 * slow)) peer_listening "$srv" ||
	   ! lose "" r0 "" "loss 30%" >"$srv.tc" 2>&1 || ! lose $ns r1 "" "loss 30%" >>"$srv.tc" 2>&1; then
		not_ok "$name" "$srv" "$srv.tc"
		unlose "" r0 2>/dev/null
		unlose $ns r1 2>/dev/null
		return
	fi
	for ((i = 1; i <= c; i++)); do
		# Distinct QPNs: the Linux CM rejects (REJ 10) a REQ whose QPN
		# and CA GUID belong to one of its live connections, and the
		# previous one may still be waiting for a lost DREP.
		crc=0
		ip netns exec $ns timeout $t softcm ping -w -t $((t * 1000)) -p $port \
			-q $((0x100 + i)) -d "random-$i" $ip4_rxe >"$tmp/random.$i" 2>&1 || crc=$?
		[ "$crc" = 0 ] || { ok=0; say "softcm ping $i exit $crc"; sed "s|^|# random.$i: |" "$tmp/random.$i"; }
	done
	finish "$bgpid" "$srv.diag"
	lost0=$(dropped "" r0) lost1=$(dropped $ns r1)
	say "lost: $lost0 by rxe's side, $lost1 by softcm's"
	unlose "" r0
	unlose $ns r1
	[ "$rc" = 0 ] || { ok=0; say "rdmacm_peer exit $rc"; }
	# The case is about losses: at least one. Without retransmissions
	# the five connections are 25 CM messages, all kept with probability
	# 0.7^25 = 0.013% (the case then fails for want of a fault; at 20 %
	# loss it was 0.8^25 = 0.4%, and it happened, debug run of 22daf79).
	[ $((${lost0:-0} + ${lost1:-0})) -ge 1 ] || { ok=0; say "netem lost nothing"; }
	has "$srv" "^\[$c\] done\$" || ok=0
	if [ $ok = 1 ]; then
		ok "$name"
	else
		not_ok "$name" "$srv" "$srv.diag"
	fi
}

# The Linux CM's stale-connection check: a second REQ from our namespace
# (same CA GUID) announcing the QPN of a connection it still has is
# rejected with reason 10, and the Linux CM sends a DREQ on the old
# connection.  stale_qpn NAME ADDR PORT
stale_qpn() {
	local name=$1 addr=$2 port=$3 srv cli1 cli2 crc1 crc2 cpid ok=1 dreq0
	srv=$tmp/${name//\//-}.peer cli1=$tmp/${name//\//-}.softcm1 cli2=$tmp/${name//\//-}.softcm2
	bg "$srv" "$peer" server -t $T $addr $port
	if ! poll $((100 * slow)) peer_listening "$srv"; then
		not_ok "$name" "$srv"
		return
	fi
	dreq0=$(sc_stat rx_dreq)
	rm -f "$tmp/go"
	mkfifo "$tmp/go"
	ip netns exec $ns timeout $T softcm ping -i -q 0x42 -t $((T * 1000)) -p $port \
		-d first $addr <"$tmp/go" >"$cli1" 2>&1 &
	cpid=$!
	exec 8>"$tmp/go"
	poll $((100 * slow)) has_prefix "$srv" '[1] established' ||
		{ ok=0; say "the rdma_cm server did not report ESTABLISHED"; }
	crc2=0
	ip netns exec $ns timeout $T softcm ping -q 0x42 -p $port -d second $addr \
		>"$cli2" 2>&1 || crc2=$?
	dreq_seen() { [ "$(sc_stat rx_dreq)" -gt "$dreq0" ]; }
	poll $((100 * slow)) dreq_seen || { ok=0; say "no DREQ for the first connection"; }
	echo go >&8
	exec 8>&-
	crc1=0
	wait "$cpid" || crc1=$?
	finish "$bgpid" "$srv.diag"
	[ "$crc1" = 0 ] && [ "$crc2" = 1 ] && [ "$rc" = 0 ] ||
		{ ok=0; say "softcm ping exits $crc1 and $crc2, rdmacm_peer exit $rc"; }
	has "$cli2" "connection rejected \(REJ reason 10\)" || ok=0
	has "$cli1" "^disconnected\$" || ok=0
	has "$srv" "^\[1\] done\$" || ok=0
	if [ $ok = 1 ]; then
		ok "$name"
	else
		not_ok "$name" "$cli1" "$cli2" "$srv" "$srv.diag"
	fi
}

# ucmatose with two connections at once to one softcm server.  The Linux
# CM's stale check applies to a REP too: a REP announcing the QPN of
# another live connection from the same CA GUID is rejected (REJ 10), so
# softcm ping -l announces QPN, QPN + 1, ... for its connections.
rxe_two() {
	local name=ipv4/ucmatose-2-connections-softcm-server port=7484 srv cli crc ok=1
	srv=$tmp/two.softcm cli=$tmp/two.ucmatose
	bg "$srv" ip netns exec $ns timeout $T softcm ping -l -D -n 2 -p $port -b $ip4_sc
	if ! poll $((100 * slow)) sc_listening "$srv"; then
		not_ok "$name" "$srv"
		return
	fi
	crc=0
	timeout $T ucmatose -s $ip4_sc -p $port -c 2 -C 0 >"$cli" 2>&1 || crc=$?
	finish "$bgpid" "$srv.diag"
	[ "$crc" = 0 ] && [ "$rc" = 0 ] || { ok=0; say "ucmatose exit $crc, softcm ping exit $rc"; }
	has "$cli" "^return status 0\$" || ok=0
	has "$srv" "^\[2\] disconnected\$" || ok=0
	if [ $ok = 1 ]; then
		ok "$name"
	else
		not_ok "$name" "$srv" "$cli" "$srv.diag"
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

	# Private data at its maximum over IPv4 (REQ 56 bytes, REP 196),
	# short over IPv6; the rdma_cm side disconnects, then softcm's.
	d56=$(fill "softcm-req/0123456789" 56)
	d196=$(fill "rdma-rep/0123456789/" 196)
	sc_to_peer ipv4/data-softcm-client-rdmacm-server $ip4_rxe 7472 "$d56" "$d196" peer
	peer_to_sc ipv4/data-rdmacm-client-softcm-server $ip4_sc 7472 "$d56" "$d196" softcm
	# The other side first.
	sc_to_peer ipv4/disconnect-softcm-client-first $ip4_rxe 7473 "dreq-4" "rep-4" softcm
	peer_to_sc ipv4/disconnect-rdmacm-client-first $ip4_sc 7473 "dreq-4" "rep-4" peer

	# rdma_reject() with private data (at its maximum, 148 bytes, over
	# IPv4): REJ reason 28 both ways.
	d148=$(fill "rdma-rej/0123456789/" 148)
	peer_rejects reject/rdmacm-server-rejects-softcm $ip4_rxe 7474 "$d148"
	sc_rejects reject/softcm-server-rejects-rdmacm $ip4_sc 7474 "$d148"
	stale_qpn reject/rxe-stale-qpn-rej-10 $ip4_rxe 7483
	rxe_two

	on_stock lost_rep
	on_stock lost_req
	on_stock gone_before_rtu lost/rtu-rxe-server-gone-rej-to-established-softcm 0 7485
	on_stock gone_before_rtu lost/rtu-softcm-server-gone-rej-to-established-rxe 1 7486

	on_stock sc_to_peer ipv6/data-softcm-client-rdmacm-server $ip6_rxe 7472 "six-req" "six-rep" peer
	on_stock peer_to_sc ipv6/data-rdmacm-client-softcm-server $ip6_sc 7472 "six-req" "six-rep" softcm
	on_stock sc_to_peer ipv6/disconnect-softcm-client-first $ip6_rxe 7473 "dreq-6" "rep-6" softcm
	on_stock peer_to_sc ipv6/disconnect-rdmacm-client-first $ip6_sc 7473 "dreq-6" "rep-6" peer
	on_stock peer_rejects ipv6/reject-rdmacm-server-rejects-softcm $ip6_rxe 7474 "no-thanks"
	on_stock sc_rejects ipv6/reject-softcm-server-rejects-rdmacm $ip6_sc 7474 "no-thanks"
	on_stock stale_qpn ipv6/reject-rxe-stale-qpn-rej-10 $ip6_rxe 7487
	on_stock lost_random

	on_stock examples examples/ipv4/rdmacm-sync-client-softcm-sync-server $ip4_sc 7480 server
	on_stock examples examples/ipv4/softcm-sync-client-rdmacm-sync-server $ip4_rxe 7480 client
	on_stock examples examples/ipv6/rdmacm-sync-client-softcm-sync-server $ip6_sc 7480 server
	on_stock examples examples/ipv6/softcm-sync-client-rdmacm-sync-server $ip6_rxe 7480 client

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

say "the cases took ${SECONDS} s"
cleanup
if [ ! -e /sys/class/infiniband/rxe0 ] && ! ip netns list | grep -qw $ns; then
	ok cleanup
else
	not_ok cleanup
fi
