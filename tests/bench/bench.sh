#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmarks, inside the test VM (tests/bench/run.sh boots it; never
# part of make check).  TAP on stdout: one case, "bench", ok once every
# system was measured.  The measurements (cmbench's lines) go to
# $SOFTCM_ARTIFACTS/bench-results.txt, and as "# " comments to stdout too.
#
# rxe binds UDP 4791 in the initial namespace only, and softcm opens its
# own 4791 socket in a namespace on first use: softcm never runs in init_net
# here.
#
#   init_net: rxe0 on r0 10.90.0.1 --veth-- r1 10.90.0.2 in bx (softcm client)
#             rdma_cm <-> rdma_cm: loopback on rxe0
#             data path only: rxe1 on w0 10.92.0.1 --veth-- rxe2 on w1
#             10.92.0.2, both in init_net (rxe_veth)
#   ba: v0 10.91.0.1 --veth-- v1 10.91.0.2 in bb   (softcm, TCP)
#
# Sizes come from lib/bench.conf when the host wrote one.
#
# The systems run interleaved: each of the RUNS rounds measures every
# system once (one cmbench run each), in an order shuffled from SEED,
# printed, so that a load that changes during the benchmark falls on all
# of them alike, and the order can be repeated (BENCH_SEED=).  Each
# cmbench line gets "run=R" appended: report.py pairs the systems' runs.

set -u
dir=$(cd "$(dirname "$0")" && pwd)
SC=$dir/lib/cmbench-softcm RC=$dir/lib/cmbench-rdmacm
NS="1000 10000"	# batch sizes
LIVE="500 5000 50000"	# idle connections (2 ids each) for the scale case
RUNS=3 WINDOW=256 LAT=200 SEED=
# The burst case: BURST clients at once against a listener of backlog
# BURST_BACKLOG, a synchronous and an epoll server, softcm and TCP.
# ONLY=burst runs nothing else (ONLY=stages: only the stage timing
# below; ONLY=verbs: only the memory per CQ and QP).  rdma_cm over rxe drops what exceeds the backlog and retries
# after 6 s: a minute a run, so only with BURST_RDMACM=1.
# BURST_DROP=1 adds softcm as it was before its hold queue and as 6.1's
# rdma_cm behaves (max_held_requests 0: drops; cm_response_timeout 20).
BURST=200 BURST_BACKLOG=16 BURST_RDMACM=0 BURST_DROP=0 ONLY=
# DATAPATH=0: no data-path case (ONLY=datapath: nothing else).
DATAPATH=1
[ -r "$dir/lib/bench.conf" ] && . "$dir/lib/bench.conf"
out=${SOFTCM_ARTIFACTS:-/tmp}/bench-results.txt
tmp=$(mktemp -d)
pids=()
fail=0

echo "1..1"
say() { echo "# $*"; }

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	rdma link delete rxe0 2>/dev/null
	rdma link delete rxe1 2>/dev/null
	rdma link delete rxe2 2>/dev/null
	ip link del r0 2>/dev/null
	ip link del w0 2>/dev/null
	rxe_veth_undo
	ip netns del bx 2>/dev/null
	ip netns del ba 2>/dev/null
	ip netns del bb 2>/dev/null
}
trap 'cleanup; rm -rf "$tmp"' EXIT

poll() {
	local i tries=$1
	shift
	for ((i = 0; i < tries; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# rxe <-> rxe across a veth, for the data path: rxe1 on w0 10.92.0.1
# --veth-- rxe2 on w1 10.92.0.2, both in init_net (rxe receives there
# only).  Both addresses are local, so a packet from one to the other
# would stay on lo: output to the other address (iif lo: sent from this
# host, not forwarded) takes a table of its own through the veth,
# looked up before the local table, and the receiving end accepts a
# source that is local too.  rxe's loopback, which rxe0 uses for
# rxe <-> rxe, is only for a packet to its own address: not these.
# Only when the data path's configurations include rxe-veth; undone at
# exit (the veth goes with its rxe devices, the rules and sysctls here).
rxe_veth() {
	local a m0 m1
	case " ${DP_CONFIGS:-rxe-veth} " in *" rxe-veth "*) ;; *) return 0 ;; esac
	rp_all=$(sysctl -n net.ipv4.conf.all.rp_filter)
	ip link add w0 type veth peer name w1 || return 1
	ip addr add 10.92.0.1/24 dev w0 && ip addr add 10.92.0.2/24 dev w1 || return 1
	for a in all w0 w1; do
		sysctl -qw net.ipv4.conf.$a.rp_filter=0 || return 1
	done
	sysctl -qw net.ipv4.conf.w0.accept_local=1 net.ipv4.conf.w1.accept_local=1 || return 1
	ip link set w0 up && ip link set w1 up || return 1
	ip route add 10.92.0.1 dev w1 src 10.92.0.2 table 92 &&
		ip route add 10.92.0.2 dev w0 src 10.92.0.1 table 93 || return 1
	ip rule add pref 92 iif lo to 10.92.0.1 lookup 92 &&
		ip rule add pref 93 iif lo to 10.92.0.2 lookup 93 || return 1
	# the local table after those, added before it leaves pref 0
	ip rule add pref 500 lookup local && ip rule del pref 0 lookup local || return 1
	m0=$(cat /sys/class/net/w0/address) m1=$(cat /sys/class/net/w1/address)
	ip neigh replace 10.92.0.1 lladdr "$m0" dev w1 nud permanent &&
		ip neigh replace 10.92.0.2 lladdr "$m1" dev w0 nud permanent || return 1
	rdma link add rxe1 type rxe netdev w0 && rdma link add rxe2 type rxe netdev w1 || return 1
	poll 100 grep -qx "0000:0000:0000:0000:0000:ffff:0a5c:0001" \
		/sys/class/infiniband/rxe1/ports/1/gids/* &&
		poll 100 grep -qx "0000:0000:0000:0000:0000:ffff:0a5c:0002" \
			/sys/class/infiniband/rxe2/ports/1/gids/* ||
		{ say "no IPv4 GID on rxe1 or rxe2"; return 1; }
}
rxe_veth_undo() {
	[ -n "${rp_all:-}" ] || return 0
	ip rule show pref 0 | grep -q . || ip rule add pref 0 lookup local
	ip rule del pref 500 lookup local 2>/dev/null
	ip rule del pref 92 2>/dev/null
	ip rule del pref 93 2>/dev/null
	sysctl -qw net.ipv4.conf.all.rp_filter="$rp_all"
	rp_all=
}

setup() {
	local ns i
	if [ -e /sys/module/softcm ] && [ ! -e /sys/module/rdma_rxe ]; then
		rmmod softcm || return 1
	fi
	modprobe crc32_generic 2>/dev/null
	modprobe -a rdma_rxe rdma_ucm ib_uverbs || return 1
	[ -e /sys/module/softcm ] || insmod "$SOFTCM_KO" || return 1
	for ns in bx ba bb; do
		ip netns add $ns || return 1
		ip -n $ns link set lo up || return 1
	done
	ip link add r0 type veth peer name r1 netns bx || return 1
	ip addr add 10.90.0.1/24 dev r0 && ip link set r0 up || return 1
	ip -n bx addr add 10.90.0.2/24 dev r1 && ip -n bx link set r1 up || return 1
	ip -n ba link add v0 type veth peer name v1 netns bb || return 1
	ip -n ba addr add 10.91.0.1/24 dev v0 && ip -n ba link set v0 up || return 1
	ip -n bb addr add 10.91.0.2/24 dev v1 && ip -n bb link set v1 up || return 1
	# A veth receives on the sending CPU: DP_RPS=1 steers each end's
	# receive to a vCPU of its own (ba's to CPU 1, bb's to CPU 0).
	if [ "${DP_RPS:-0}" = 1 ]; then
		ip netns exec ba sh -c 'echo 2 >/sys/class/net/v0/queues/rx-0/rps_cpus' &&
			ip netns exec bb sh -c 'echo 1 >/sys/class/net/v1/queues/rx-0/rps_cpus' ||
			return 1
	fi
	rdma link add rxe0 type rxe netdev r0 || return 1
	poll 100 grep -qx "0000:0000:0000:0000:0000:ffff:0a5a:0001" \
		/sys/class/infiniband/rxe0/ports/1/gids/* || { say "no IPv4 GID on rxe0"; return 1; }
	if [ "$DATAPATH" = 1 ] && [ "${ONLY:-datapath}" = datapath ]; then
		rxe_veth || return 1
	fi
	# Room for every connection in flight and alive, on every system.
	echo 65535 >/proc/sys/net/rdma_ucm/max_backlog || return 1
	for ns in bx ba bb; do
		ip netns exec $ns sh -c '
			echo 65535 >/proc/sys/net/softcm/max_backlog &&
			echo 16777216 >/proc/sys/net/softcm/max_ids_per_file &&
			echo 65535 >/proc/sys/net/core/somaxconn &&
			echo 65535 >/proc/sys/net/ipv4/tcp_max_syn_backlog &&
			echo "1024 65535" >/proc/sys/net/ipv4/ip_local_port_range &&
			echo 7890-7999,8890-9999,10890-10999 >/proc/sys/net/ipv4/ip_local_reserved_ports &&
			echo 1 >/proc/sys/net/ipv4/tcp_tw_reuse' || return 1
	done
	poll 50 ping -c 1 -W 1 10.90.0.2 >/dev/null 2>&1 || { say "no ping r0 -> r1"; return 1; }
	poll 50 ip netns exec bx ping -c 1 -W 1 10.90.0.1 >/dev/null 2>&1 || return 1
	poll 50 ip netns exec bb ping -c 1 -W 1 10.91.0.1 >/dev/null 2>&1 || return 1
	poll 50 ip netns exec ba ping -c 1 -W 1 10.91.0.2 >/dev/null 2>&1 || return 1
	return 0
}

listening() { grep -qs '^listening' "$1"; }

# measure NAME SERVER_NS SERVER_PROG CLIENT_NS CLIENT_PROG SERVER_ADDR PORT ARGS...
# (NS "-" is init_net); $run tags the results.
measure() {
	local name=$1 sns=$2 sprog=$3 cns=$4 cprog=$5 addr=$6 port=$7 spid rc=0
	shift 7
	local sx=() cx=()
	[ "$sns" != - ] && sx=(ip netns exec "$sns")
	[ "$cns" != - ] && cx=(ip netns exec "$cns")
	rm -f "$tmp/shm"
	"${sx[@]}" "$sprog" server -b "$addr" -p "$port" -s "$tmp/shm" "$@" \
		>"$tmp/$name.server" 2>&1 &
	spid=$!
	pids+=("$spid")
	if ! poll 100 listening "$tmp/$name.server"; then
		say "$name: the server did not listen"
		sed "s/^/# $name server: /" "$tmp/$name.server"
		fail=1
		return
	fi
	local t0=$SECONDS
	"${cx[@]}" "$cprog" client -a "$addr" -p "$port" -s "$tmp/shm" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	sed -i "/^cmbench /s/\$/ run=$run/" "$tmp/$name.out"
	cat "$tmp/$name.out" >>"$out"
	sed 's/^/# /' "$tmp/$name.out"
	say "$name: $((SECONDS - t0)) s, exit $rc"
	if [ "$rc" != 0 ]; then
		fail=1
		sed "s/^/# $name: /" "$tmp/$name.err"
		sed "s/^/# $name server: /" "$tmp/$name.server" | tail -n 20
	fi
}

{
	echo "# guest: $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print $2, $3}' /proc/meminfo)"
	if [ -e /sys/bus/event_source/devices/cpu ]; then
		echo "# guest PMU: cpu"
	else
		echo "# guest PMU: none (no hardware cycle counter; perf cannot count cycles)"
	fi
} >"$out"
sed 's/^# /# /' "$out"

if ! setup >"$tmp/setup" 2>&1; then
	sed 's/^/# setup: /' "$tmp/setup"
	echo "not ok 1 bench"
	exit 0
fi

ns=${NS// /,}
common=(-n "$ns" -w "$WINDOW" -r 1 -l "$LAT")

# softcm's hold bound and response timeout on both sides of ba/bb.
drop_rules() {
	local ns
	for ns in ba bb; do
		ip netns exec $ns sh -c "echo $1 >/proc/sys/net/softcm/max_held_requests &&
			echo $2 >/proc/sys/net/softcm/cm_response_timeout" || fail=1
	done
}

# One run of one system; every run listens on ports of its own.
system() {
	local p=$((7900 + 10 * run))
	local burst=(-n "" -l 0 -P -M -r 1 -U "$BURST" -B "$BURST_BACKLOG")
	case $1 in
	softcm-veth-burst-sync)
		measure $1.$run ba "$SC" bb "$SC" 10.91.0.1 $((p + 6)) -t cm -S softcm -T veth \
			"${burst[@]}" -y ;;
	softcm-veth-burst-epoll)
		measure $1.$run ba "$SC" bb "$SC" 10.91.0.1 $((p + 7)) -t cm -S softcm -T veth \
			"${burst[@]}" -e ;;
	tcp-veth-burst-sync)
		measure $1.$run ba "$SC" bb "$SC" 10.91.0.1 $((p + 8)) -t tcp -S tcp -T veth \
			"${burst[@]}" -y ;;
	tcp-veth-burst-epoll)
		measure $1.$run ba "$SC" bb "$SC" 10.91.0.1 $((p + 9)) -t tcp -S tcp -T veth \
			"${burst[@]}" -e ;;
	softcm-drop-veth-burst-sync)
		drop_rules 0 20
		measure $1.$run ba "$SC" bb "$SC" 10.91.0.1 $((p + 2000)) -t cm -S softcm-drop \
			-T veth "${burst[@]}" -y
		drop_rules 1024 18 ;;
	softcm-drop-veth-burst-epoll)
		drop_rules 0 20
		measure $1.$run ba "$SC" bb "$SC" 10.91.0.1 $((p + 2001)) -t cm -S softcm-drop \
			-T veth "${burst[@]}" -e
		drop_rules 1024 18 ;;
	rdmacm-lo-burst-sync)
		measure $1.$run - "$RC" - "$RC" 10.90.0.1 $((p + 1000)) -t cm -S rdmacm -T lo \
			"${burst[@]}" -y ;;
	rdmacm-lo-burst-epoll)
		measure $1.$run - "$RC" - "$RC" 10.90.0.1 $((p + 1001)) -t cm -S rdmacm -T lo \
			"${burst[@]}" -e ;;
	softcm-veth)
		measure $1.$run ba "$SC" bb "$SC" 10.91.0.1 $p -t cm -S softcm -T veth "${common[@]}" -c ;;
	softcm-lo)
		measure $1.$run ba "$SC" ba "$SC" 10.91.0.1 $((p + 1)) -t cm -S softcm -T lo "${common[@]}" ;;
	softcm-submit-veth)
		measure $1.$run ba "$SC" bb "$SC" 10.91.0.1 $((p + 3000)) -t cm -S softcm-submit \
			-T veth "${common[@]}" -X ;;
	rdmacm-lo)
		measure $1.$run - "$RC" - "$RC" 10.90.0.1 $((p + 2)) -t cm -S rdmacm -T lo "${common[@]}" ;;
	cross-veth)
		measure $1.$run - "$RC" bx "$SC" 10.90.0.1 $((p + 3)) -t cm -S softcm-to-rdmacm -T veth \
			"${common[@]}" ;;
	tcp-veth)
		measure $1.$run ba "$SC" bb "$SC" 10.91.0.1 $((p + 4)) -t tcp -S tcp -T veth "${common[@]}" ;;
	tcp-lo)
		measure $1.$run ba "$SC" ba "$SC" 10.91.0.1 $((p + 5)) -t tcp -S tcp -T lo "${common[@]}" ;;
	esac
}

[ -n "$SEED" ] || SEED=$(($(date +%s) % 32768))
RANDOM=$SEED
echo "# order seed: $SEED (BENCH_SEED=$SEED make bench repeats the order)" | tee -a "$out"
for ((run = 1; run <= RUNS; run++)); do
	order=()
	[ -z "$ONLY" ] && order=(softcm-veth softcm-submit-veth softcm-lo rdmacm-lo cross-veth
				 tcp-veth tcp-lo)
	if [ -n "$BURST" ] && [ "${ONLY:-burst}" = burst ]; then
		order+=(softcm-veth-burst-sync softcm-veth-burst-epoll tcp-veth-burst-sync
			tcp-veth-burst-epoll)
		[ "$BURST_RDMACM" = 1 ] && order+=(rdmacm-lo-burst-sync rdmacm-lo-burst-epoll)
		[ "$BURST_DROP" = 1 ] && order+=(softcm-drop-veth-burst-sync
						 softcm-drop-veth-burst-epoll)
	fi
	for ((i = ${#order[@]} - 1; i > 0; i--)); do
		j=$((RANDOM % (i + 1)))
		t=${order[i]} order[i]=${order[j]} order[j]=$t
	done
	echo "# run $run of $RUNS, order: ${order[*]}" | tee -a "$out"
	for s in "${order[@]}"; do
		system "$s"
	done
done
run=0
if [ -n "$LIVE" ] && [ -z "$ONLY" ]; then
	measure softcm-scale ba "$SC" bb "$SC" 10.91.0.1 7899 -t cm -S softcm -T veth \
		-n "" -l 0 -P -w "$WINDOW" -r "$RUNS" -L "${LIVE// /,}" -D "$tmp"
	# Where the kernel memory of the idle connections went (both sides).
	for l in $LIVE; do
		[ -e "$tmp/slab-$l.after" ] || continue
		awk -v live="$l" 'NR == FNR { if (FNR > 2) b[$1] = $3 * $4; next }
			FNR > 2 { d = $3 * $4 - b[$1]; if (d > 0) print d, $1 }' \
			"$tmp/slab-$l.before" "$tmp/slab-$l.after" | sort -rn | head -n 8 |
			awk -v live="$l" '{ printf "# slab growth, %d idle softcm connections: %s %d bytes (%.0f per connection)\n", live, $2, $1, $1 / live }' |
			tee -a "$out"
	done
fi
# The stages of one connection at a time, from softcm's tracepoints, over
# the veth and over lo (tests/bench/stages.sh names them); then the system
# calls per connection of softcm and of TCP, from raw_syscalls's sys_enter
# in runs of their own (tests/bench/syscalls.sh).
tr=/sys/kernel/tracing

# traced NAME EVENTS... -- SERVER_NS CLIENT_NS PORT SYSTEM TOPO TYPE [ARGS...]:
# one single-connection run (or cmbench ARGS) with EVENTS on; the trace is
# left in $tmp/trace-NAME.
traced() {
	local name=$1 ev
	shift
	local events=()
	while [ "$1" != -- ]; do
		events+=("$1")
		shift
	done
	shift
	echo >$tr/trace
	for ev in "${events[@]}"; do echo 1 >$tr/events/$ev/enable; done
	local sns=$1 cns=$2 port=$3 sys=$4 topo=$5 type=$6
	shift 6
	# -P: without the getpeername case, whose 10^5 calls are not setup
	[ $# -gt 0 ] || set -- -n "" -l "$LAT" -r 1 -P
	measure "$name" "$sns" "$SC" "$cns" "$SC" 10.91.0.1 "$port" -t "$type" -S "$sys" \
		-T "$topo" "$@"
	for ev in "${events[@]}"; do echo 0 >$tr/events/$ev/enable; done
	cp $tr/trace "$tmp/trace-$name"
}

# Append a summariser's cmbench lines to the results, or fail.
summary() {
	local what=$1
	shift
	"$@" >"$tmp/summary" || fail=1
	[ -s "$tmp/summary" ] || { say "$what: nothing measured"; fail=1; }
	sed 's/$/ run=0/' "$tmp/summary" | tee -a "$out" | sed 's/^/# /'
}

stages() {
	local cm=(softcm/softcm_cm_msg softcm/softcm_event) sc=raw_syscalls/sys_enter
	[ -e $tr/events ] || mount -t tracefs nodev $tr 2>/dev/null
	if [ ! -e $tr/events/softcm/softcm_event ] || [ ! -e $tr/events/$sc ]; then
		say "stages: no softcm or syscall tracepoints in tracefs"
		fail=1
		return
	fi
	echo 16384 >$tr/buffer_size_kb
	traced stages-veth "${cm[@]}" -- ba bb 7890 softcm-traced veth cm
	summary "stages over veth" "$dir/lib/stages.sh" "$tmp/trace-stages-veth" softcm-traced veth
	traced stages-lo "${cm[@]}" -- ba ba 7891 softcm-traced lo cm
	summary "stages over lo" "$dir/lib/stages.sh" "$tmp/trace-stages-lo" softcm-traced lo
	traced sc-softcm-veth softcm/softcm_event $sc -- ba bb 7892 softcm-traced veth cm
	summary "softcm syscalls" "$dir/lib/syscalls.sh" "$tmp/trace-sc-softcm-veth" softcm-traced veth
	traced sc-tcp-veth $sc -- ba bb 7893 tcp-traced veth tcp
	summary "TCP syscalls" "$dir/lib/syscalls.sh" "$tmp/trace-sc-tcp-veth" tcp-traced veth
	# The same with 1 000 connections, 256 in flight (the warm-up's 200
	# counted on both sides alike): softcm as it is, with -X, and TCP.
	local many=(-n 1000 -w "$WINDOW" -l 0 -r 1 -P -M)
	traced sc-softcm-many softcm/softcm_event $sc -- ba bb 7894 softcm-traced-many veth cm \
		"${many[@]}"
	summary "softcm syscalls, many" "$dir/lib/syscalls.sh" "$tmp/trace-sc-softcm-many" \
		softcm-traced-many veth
	traced sc-submit-many softcm/softcm_event $sc -- ba bb 7895 softcm-submit-traced-many \
		veth cm "${many[@]}" -X
	summary "softcm -X syscalls, many" "$dir/lib/syscalls.sh" "$tmp/trace-sc-submit-many" \
		softcm-submit-traced-many veth
	traced sc-tcp-many $sc -- ba bb 7896 tcp-traced-many veth tcp "${many[@]}"
	summary "TCP syscalls, many" "$dir/lib/syscalls.sh" "$tmp/trace-sc-tcp-many" \
		tcp-traced-many veth
	echo 1408 >$tr/buffer_size_kb
}
[ "${ONLY:-stages}" = stages ] && stages

if [ "${ONLY:-verbs}" = verbs ]; then
	# Kernel memory per idle CQ and QP, in a namespace of its own.
	ip netns add bv && ip netns exec bv "$dir/lib/verbsmem" -r "$RUNS" >"$tmp/verbsmem" ||
		{ say "verbsmem failed"; fail=1; }
	ip netns del bv 2>/dev/null
	sed 's/$/ run=0/' "$tmp/verbsmem" | tee -a "$out" | sed 's/^/# /'
fi
# The data path (tests/bench/datapath.sh): perftest over softcm, rxe and
# softcm <-> rxe, iperf3 over TCP; its failures are its own lines.
if [ "$DATAPATH" = 1 ] && [ "${ONLY:-datapath}" = datapath ]; then
	"$dir/lib/datapath.sh" "$out" || fail=1
fi
echo "# guest memory at the end: $(awk '/MemFree/ {print $2, $3}' /proc/meminfo) free" >>"$out"

cleanup
if [ "$fail" = 0 ]; then
	echo "ok 1 bench"
else
	echo "not ok 1 bench"
fi
