#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libsoftcm against librdmacm, measured: tests/interop/fidelity.c built
# twice (lib/fidelity-rdmacm on Debian's librdmacm 44, lib/fidelity-softcm
# on libsoftcm), each case run under both, and their outputs compared line
# by line; TAP on stdout, one result per case of the program's table.
#
#   +------------- init_net -------------+      +----------- netns sc-f -----------+
#   | rxf0 (rdma_rxe) on f0              |      | /dev/softcm                      |
#   | f0  10.91.0.1/24  fd91::1/64  <----+------+---> f1  10.91.0.2/24  fd91::2/64 |
#   | fidelity-rdmacm CASE 10.91.0.1     |      | fidelity-softcm CASE 10.91.0.2   |
#   +------------------------------------+      +----------------------------------+
#
# Each build talks only to its own CM: a case's client and server are the
# same process, on the local address (rxe loops back to itself; softcm
# answers in its namespace).  The outputs must be equal, except where
# fidelity.expected-differences lists the difference for that case, with
# the reason (Documentation/uapi.rst "Differences from librdmacm"): a listed
# difference must show exactly as listed, so a case fails when softcm
# diverges, when a listed difference disappears, and when an unlisted one
# appears.  A case that crashes is "crash SIGNAME" (librdmacm 44 crashes in
# four cases of the table, see the list).  The reference anchors the
# comparison: a case that runs to its end prints "done" last, and a case
# whose librdmacm run lacks it fails, whatever softcm printed, unless the
# list gives librdmacm's "crash" for it; so two runs that fail alike (rxe
# and softcm stopped by one setup or address problem) are not a pass.

set -u
ns=sc-f
ip_rxe=10.91.0.1 ip_sc=10.91.0.2
ip6_rxe=fd91::1 ip6_sc=fd91::2
slow=1
[ "${SOFTCM_KERNEL:-stock}" = debug ] && slow=4
T=$((60 * slow))	# one case's limit, in seconds (fidelity's own is 31 s)
lib=$(cd "$(dirname "$0")" && pwd)/lib
expected=$lib/fidelity.expected-differences
tmp=$(mktemp -d)
n=0

# (The guest has no /dev/fd for a process substitution.)
mapfile -t table <<<"$("$lib/fidelity-softcm" list)"
# These run over IPv6 too (after the whole table over IPv4), as ipv6/NAME:
# the list names their differences apart.
table6=(handshake/no-qp-connect-response-establish reject/sync-id-keeps-event
	sidr/sync-listener-accept create-ep/active-passive addrinfo/flags-family-errors)
cases=(setup "${table[@]}" "${table6[@]/#/ipv6/}" devinfo/fields cleanup)
echo "1..${#cases[@]}"

# ok, not_ok, say, skip_rest, poll
. "$lib/tap.sh"

cleanup() {
	rdma link delete rxf0 2>/dev/null
	ip link del f0 2>/dev/null
	ip netns del $ns 2>/dev/null
}

setup() {
	# As rxe_test.sh: a softcm that opened its UDP socket in init_net
	# would hold rxe's port 4791; a module loaded after rxe has none.
	if [ -e /sys/module/softcm ] && [ ! -e /sys/module/rdma_rxe ]; then
		rmmod softcm || return 1
	fi
	modprobe crc32_generic 2>/dev/null
	modprobe -a rdma_rxe rdma_ucm ib_uverbs || return 1
	[ -e /sys/module/softcm ] || insmod "$SOFTCM_KO" || return 1
	ip netns add $ns || return 1
	ip link add f0 type veth peer name f1 netns $ns || return 1
	ip addr add $ip_rxe/24 dev f0 || return 1
	ip -n $ns addr add $ip_sc/24 dev f1 || return 1
	ip addr add $ip6_rxe/64 dev f0 nodad || return 1
	ip -n $ns addr add $ip6_sc/64 dev f1 nodad || return 1
	ip link set f0 up && ip -n $ns link set f1 up && ip -n $ns link set lo up || return 1
	[ -n "${table[0]}" ] || { say "no cases from fidelity-softcm list"; return 1; }
	rdma link add rxf0 type rxe netdev f0 || return 1
	poll $((100 * slow)) grep -qx "0000:0000:0000:0000:0000:ffff:0a5b:0001" \
		/sys/class/infiniband/rxf0/ports/1/gids/* || { say "no IPv4 GID on rxf0"; return 1; }
	poll $((100 * slow)) grep -qx "fd91:0000:0000:0000:0000:0000:0000:0001" \
		/sys/class/infiniband/rxf0/ports/1/gids/* || { say "no IPv6 GID on rxf0"; return 1; }
	# Every entry of the list names a case of the table, and gives a reason.
	awk -v names="${cases[*]}" '
		BEGIN { split(names, a, " "); for (i in a) known[a[i]] = 1 }
		/^case / { if (!($2 in known)) { print "unknown case " $2; bad = 1 }
			   c = $2; why[c] = 0 }
		/^reason / { why[c] = 1 }
		END { for (c in why) if (!why[c]) { print c " has no reason"; bad = 1 }
		      exit bad }' "$expected" || return 1
	rdma link show rxf0/1 | sed 's/^/# /'
	return 0
}

# listed CASE: the difference the list expects for CASE ("<" lines for
# librdmacm, ">" for softcm), as diff(1) prints it; empty if none.
listed() {
	awk -v c="$1" '/^case / { on = ($2 == c); next }
		       on && /^[<>] / { print }' "$expected"
}
reason() {
	awk -v c="$1" '/^case / { on = ($2 == c); next }
		       on && /^reason / { sub(/^reason /, ""); print }' "$expected"
}

# difference A B: the lines of A not in B ("< LINE") and of B not in A
# ("> LINE"), as diff(1) aligns them; busybox's diff knows only the
# unified format.
difference() {
	diff -U0 "$1" "$2" | sed -n '/^\(---\|+++\|@@\)/d; s/^-/< /p; s/^+/> /p'
}

# compare I CASE [ipv6]: run CASE under both libraries on port 7600 + I;
# its result is named CASE (ipv6/CASE over IPv6).
compare() {
	local i=$1 name=$2 port=$(($1 + 7600)) r s want got a_rxe=$ip_rxe a_sc=$ip_sc tap=$2
	[ "${3:-}" = ipv6 ] && a_rxe=$ip6_rxe a_sc=$ip6_sc tap=ipv6/$2
	r=$tmp/$i.rdmacm s=$tmp/$i.softcm
	FIDELITY_WAIT_MS=$((10000 * slow)) timeout $T "$lib/fidelity-rdmacm" "$name" $a_rxe $port \
		>"$r" 2>"$r.stderr" || echo "exit status $?" >>"$r"
	ip netns exec $ns env FIDELITY_WAIT_MS=$((10000 * slow)) \
		timeout $T "$lib/fidelity-softcm" "$name" $a_sc $port \
		>"$s" 2>"$s.stderr" || echo "exit status $?" >>"$s"
	got=$(difference "$r" "$s")
	want=$(listed "$tap")
	if [ "$(tail -n 1 "$r")" != done ] && ! grep -q '^< crash SIG' <<<"$want"; then
		not_ok "$tap" "$r" "$r.stderr" "$s" "$s.stderr"
		say "librdmacm's run did not reach the end of the case (no \"done\"): nothing was compared"
		return
	fi
	if [ "$got" = "$want" ]; then
		ok "$tap"
		if [ -n "$want" ]; then
			say "the listed difference: $(reason "$tap")"
			sed 's/^/#   /' <<<"$want"
		fi
		return
	fi
	echo "$want" >"$tmp/$i.want"
	echo "$got" >"$tmp/$i.got"
	not_ok "$tap" "$r" "$r.stderr" "$s" "$s.stderr"
	if [ -z "$got" ]; then
		say "a listed difference is gone (update fidelity.expected-differences):"
		sed 's/^/#   /' "$tmp/$i.want"
	elif [ -z "$want" ]; then
		say "softcm differs from librdmacm, and the difference is not listed:"
		sed 's/^/#   /' "$tmp/$i.got"
	else
		say "the difference is not the one listed; diff listed measured:"
		diff -U0 "$tmp/$i.want" "$tmp/$i.got" | sed 's/^/#   /'
	fi
}

# devinfo/fields: Debian's ibv_devinfo -v, on rxe and under softcm exec
# (ibv_devinfo is the program both times, the libraries differ): the
# fields it prints, by name and in order (the values are the devices'),
# compared as the cases above are.
devinfo_fields() {
	sed -n 's/^[[:space:]]*\([A-Za-z][A-Za-z_0-9 ]*[A-Za-z_0-9]\):.*/\1/p' "$1"
}
compare_devinfo() {
	local tap=devinfo/fields r=$tmp/devinfo.rxe s=$tmp/devinfo.softcm got want
	timeout $T ibv_devinfo -v -d rxf0 >"$r" 2>&1 || echo "exit status $?" >>"$r"
	ip netns exec $ns timeout $T softcm exec -- ibv_devinfo -v >"$s" 2>&1 ||
		echo "exit status $?" >>"$s"
	devinfo_fields "$r" >"$r.fields"
	devinfo_fields "$s" >"$s.fields"
	got=$(difference "$r.fields" "$s.fields")
	want=$(listed "$tap")
	if grep -q '^hca_id$' "$r.fields" && grep -q '^hca_id$' "$s.fields" &&
	   grep -q 'GID\[.*RoCE v2' "$s" && [ "$got" = "$want" ]; then
		ok "$tap"
		say "the listed difference: $(reason "$tap")"
		sed 's/^/#   /' <<<"$want"
	else
		not_ok "$tap" "$r" "$s"
		say "fields: diff rxe softcm, and the list's:"
		sed 's/^/#   got /' <<<"$got"
		sed 's/^/#   want /' <<<"$want"
	fi
}

trap 'cleanup; rm -rf "$tmp"' EXIT
# A crash is expected of librdmacm: no core files.
ulimit -c 0

if ! setup >"$tmp/setup" 2>&1; then
	not_ok setup "$tmp/setup"
	skip_rest "no soft-RoCE device"
else
	cat "$tmp/setup"
	ok setup
	for i in "${!table[@]}"; do
		compare "$i" "${table[$i]}"
	done
	for i in "${!table6[@]}"; do
		compare $((i + ${#table[@]})) "${table6[$i]}" ipv6
	done
	compare_devinfo
fi

say "the cases took ${SECONDS} s"
cleanup
if [ ! -e /sys/class/infiniband/rxf0 ] && ! ip netns list | grep -qw $ns; then
	ok cleanup
else
	not_ok cleanup
fi
