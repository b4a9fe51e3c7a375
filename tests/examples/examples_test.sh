#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The programs of userspace/examples, inside the test VM; TAP on stdout.
# Servers in one namespace, clients in the other:
#
#   +------- netns sc-ex-s --------+        +------- netns sc-ex-c --------+
#   |  sync_server, epoll_server   |        |  sync_client (1 or 50 at     |
#   |  veth0  10.76.0.1/24  <------+--------+----->  veth1  10.76.0.2/24   |
#   |         fd76::1/64           |        |         fd76::2/64           |
#   +------------------------------+        +------------------------------+
#
# Each side's output is checked against the other's: the port a client
# connected from is the one the server saw, each greeting reached the
# server and each reply its client.  The examples are in lib/examples.

set -u
bin=$PWD/lib/examples
srv=sc-ex-s cli=sc-ex-c
slow=1
[ "${SOFTCM_KERNEL:-stock}" = debug ] && slow=4
T=$((60 * slow))
CLIENTS=50
tmp=$(mktemp -d)
pids=()
n=0

cases=(setup sync/ipv4 sync/ipv6 epoll/$CLIENTS-clients epoll/sigterm cleanup)
echo "1..${#cases[@]}"

# ok, not_ok, say, skip_rest, poll
. "$(dirname "$0")/lib/tap.sh"

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	ip netns del $srv 2>/dev/null
	ip netns del $cli 2>/dev/null
}
trap 'cleanup; rm -rf "$tmp"' EXIT

setup() {
	[ -e /sys/module/softcm ] || insmod "$SOFTCM_KO" || return 1
	ip netns add $srv && ip netns add $cli &&
	ip link add veth0 netns $srv type veth peer name veth1 netns $cli &&
	ip -n $srv addr add 10.76.0.1/24 dev veth0 &&
	ip -n $srv addr add fd76::1/64 dev veth0 nodad &&
	ip -n $cli addr add 10.76.0.2/24 dev veth1 &&
	ip -n $cli addr add fd76::2/64 dev veth1 nodad &&
	ip -n $srv link set veth0 up && ip -n $cli link set veth1 up || return 1
	# Neighbours first: a CM message waiting for ND costs a retransmission.
	poll $((50 * slow)) ip netns exec $cli ping -c 1 -W 1 10.76.0.1 >/dev/null &&
	poll $((50 * slow)) ip netns exec $cli ping -c 1 -W 1 fd76::1 >/dev/null
}

# server OUT CMD...: start a server in $srv, wait until it listens.
server() {
	local out=$1
	shift
	ip netns exec $srv timeout $T "$@" >"$out" 2>&1 &
	spid=$!
	pids+=("$spid")
	poll $((100 * slow)) grep -q '^listening on' "$out"
}

# client OUT MESSAGE SERVER PORT: one sync_client in $cli.
client() {
	ip netns exec $cli timeout $T "$bin/sync_client" -p "$4" -m "$2" "$3" >"$1" 2>&1
}

# client_ok OUT MESSAGE SERVER_PRINTED SERVER_OUT: the client's output is
# whole, and the server saw its greeting from the port it connected from.
client_ok() {
	local out=$1 msg=$2 peer=$3 sout=$4 from
	from=$(sed -n "s/^connected to $peer from \(.*\)$/\1/p" "$out")
	[ -n "$from" ] || { say "${out##*/}: no connection to $peer"; return 1; }
	grep -qxF "disconnected" "$out" || { say "${out##*/}: not disconnected"; return 1; }
	grep -q "^server says: welcome, ${from//[/\\[}" "$out" ||
		{ say "${out##*/}: no reply naming $from"; return 1; }
	grep -q "request from ${from//[/\\[}: $msg\$" "$sout" ||
		{ say "server did not get \"$msg\" from $from"; return 1; }
}

# counts SERVER_OUT N PREFIX: the server saw N clients connect and go.
# A client that hangs up at once may have its DREQ reach the server before
# its RTU (7 of 50 once on the debug kernel): the server then gets
# DISCONNECTED without ESTABLISHED, as from the Linux CM, and says so.
counts() {
	local out=$1 want=$2 p=$3 conn early gone
	conn=$(grep -c "^${p}connected to " "$out")
	early=$(grep -c "^${p}disconnected from .* before its RTU\$" "$out")
	gone=$(grep -c "^${p}disconnected from " "$out")
	say "${out##*/}: $conn established, $early disconnected before the RTU, $gone gone"
	[ $((conn + early)) = "$want" ] && [ "$gone" = "$want" ]
}

# sync NAME ADDR PEER: sync_server serves three clients in turn.
sync_case() {
	local name=$1 addr=$2 peer=$3 out=$tmp/${1//\//-} i rc=0 bad=0
	if ! server "$out.server" "$bin/sync_server" -b "$addr" -p 7471 -n 3; then
		not_ok "$name" "$out.server"
		return
	fi
	for i in 1 2 3; do
		client "$out.$i" "sync client $i" "$addr" 7471 || { say "client $i exit $?"; bad=1; }
		client_ok "$out.$i" "sync client $i" "$peer" "$out.server" || bad=1
	done
	wait "$spid" || rc=$?
	[ $rc = 0 ] || { say "sync_server exit $rc"; bad=1; }
	counts "$out.server" 3 '' || bad=1
	if [ $bad = 0 ]; then
		ok "$name"
	else
		not_ok "$name" "$out.server" "$out.1" "$out.2" "$out.3"
	fi
}

# epoll_server and $CLIENTS sync_clients at once.
epoll_case() {
	local name=$1 out=$tmp/epoll i rc=0 bad=0 cpids=()
	if ! server "$out.server" "$bin/epoll_server" -b 10.76.0.1 -p 7472 -n $CLIENTS; then
		not_ok "$name" "$out.server"
		return
	fi
	for ((i = 1; i <= CLIENTS; i++)); do
		client "$out.$i" "client $i" 10.76.0.1 7472 &
		cpids+=($!)
	done
	for i in "${!cpids[@]}"; do
		wait "${cpids[$i]}" || { say "client $((i + 1)) exit $?"; bad=1; }
	done
	wait "$spid" || rc=$?
	[ $rc = 0 ] || { say "epoll_server exit $rc"; bad=1; }
	for ((i = 1; i <= CLIENTS; i++)); do
		if ! client_ok "$out.$i" "client $i" 10.76.0.1:7472 "$out.server"; then
			sed "s|^|# client $i: |" "$out.$i"
			bad=1
		fi
	done
	# Every client numbered once, connected and gone.
	counts "$out.server" $CLIENTS '\[[0-9]*\] ' &&
	[ "$(grep -o 'you are client [0-9]*' "$out".[0-9]* | sort -u | wc -l)" = $CLIENTS ] &&
	grep -qx "served $CLIENTS clients" "$out.server" || { say "server's counts"; bad=1; }
	if [ $bad = 0 ]; then
		ok "$name"
	else
		not_ok "$name" "$out.server"
	fi
}

# Without -n the epoll server runs until a signal, then ends cleanly.
sigterm_case() {
	local name=$1 out=$tmp/sigterm rc=0
	if ! server "$out.server" "$bin/epoll_server" -b 10.76.0.1 -p 7473; then
		not_ok "$name" "$out.server"
		return
	fi
	client "$out.1" "before the signal" 10.76.0.1 7473 || rc=$?
	kill -TERM "$spid"
	wait "$spid" || rc=$?
	if [ $rc = 0 ] && grep -qx "signal 15: stopping" "$out.server" &&
	   grep -qx "served 1 clients" "$out.server"; then
		ok "$name"
	else
		not_ok "$name" "$out.server" "$out.1"
		say "exit $rc"
	fi
}

if ! setup >"$tmp/setup" 2>&1; then
	not_ok setup "$tmp/setup"
	skip_rest "no topology"
else
	ok setup
	sync_case sync/ipv4 10.76.0.1 10.76.0.1:7471
	sync_case sync/ipv6 fd76::1 '\[fd76::1\]:7471'
	epoll_case "epoll/$CLIENTS-clients"
	sigterm_case epoll/sigterm
fi

cleanup
if ! ip netns list | grep -q sc-ex; then
	ok cleanup
else
	not_ok cleanup
fi
