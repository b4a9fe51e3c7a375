#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The data path, inside the bench VM, on the topology bench.sh set up:
# perftest's SEND, WRITE and READ bandwidth (and message rate) per message
# size and their latency, in three configurations, and kernel TCP's
# stream throughput with iperf3 across the same veth:
#
#   softcm      softcm <-> softcm, ba (v0 10.91.0.1) --veth-- bb (v1)
#   rxe         rxe <-> rxe, both ends on rxe0 in init_net: rxe's own
#               loopback (rxe hands a packet to itself without the IP
#               stack), the rdma_cm bench's rxe
#   rxe-veth    rxe <-> rxe across a veth: rxe1 (w0 10.92.0.1, the
#               server) --veth-- rxe2 (w1 10.92.0.2), both in init_net,
#               through the IP stack and the veth as softcm's packets
#               (bench.sh's rxe_veth says how)
#   softcm-rxe  softcm in bx (r1 10.90.0.2, the requester, under softcm
#               exec) --veth-- rxe0 on r0 10.90.0.1 (the responder)
#   tcp         iperf3, ba --veth-- bb, writes of the message size
#
#   datapath.sh OUT
#
# Every perftest program runs with -R (rdma_cm connects), -F (the TCG
# guest's CPU frequency cannot be measured) and -n (sized by iterations,
# never by seconds).  Appends one "dpbench key=value ..." line per
# measurement to OUT (status=ok or status=failed, with the tool's error)
# and echoes everything as "# " comments.  For softcm it also counts, in
# runs of their own, the system calls per message (strace -c -f of both
# programs at two iteration counts: the difference leaves setup out) and,
# in every softcm run, the ACKs and packets per message and the copies
# per payload byte from /proc/net/softcm_stats (rc_acks_sent,
# rc_acks_received, rc_tx_packets, rc_tx_inline, rc_tx_work, rc_tx_copied,
# rc_tx_bytes, rc_rx_bytes, before and after).
#
# Environment: DP_SIZES (message sizes, "64 4096 65536 1048576"),
# DP_LAT_SIZES ("64 4096"), DP_BYTES (bytes per bandwidth run, 8 MiB;
# iterations = DP_BYTES / size, within DP_MIN_ITERS..DP_MAX_ITERS,
# 20..5000), DP_LAT_ITERS (500), DP_SC_ITERS (1000: the strace runs,
# 4 KiB, against 100), DP_PROFILE_CASES (the profiled bandwidth runs as
# OP:SIZE, "write:65536 send:64"), DP_CONFIGS (the perftest
# configurations, "softcm rxe rxe-veth softcm-rxe").  The TCG guest moves a few MiB/s, and each
# perftest run costs some seconds of setup: the defaults keep a run near
# ten seconds.
set -u
out=$1
[ -r "$(dirname "$0")/bench.conf" ] && . "$(dirname "$0")/bench.conf"
DP_SIZES=${DP_SIZES:-64 4096 65536 1048576}
DP_LAT_SIZES=${DP_LAT_SIZES:-64 4096}
DP_BYTES=${DP_BYTES:-8388608}
DP_MIN_ITERS=${DP_MIN_ITERS:-20}
DP_MAX_ITERS=${DP_MAX_ITERS:-5000}
DP_LAT_ITERS=${DP_LAT_ITERS:-500}
DP_SC_ITERS=${DP_SC_ITERS:-1000}
DP_CONFIGS=${DP_CONFIGS:-softcm rxe rxe-veth softcm-rxe}
# 1: the profile after the figures, only: the profile alone, 0: none
DP_PROFILE=${DP_PROFILE:-1}
DP_PROFILE_CASES=${DP_PROFILE_CASES:-write:65536 send:64}
T=${DP_TIMEOUT:-180}
tmp=$(mktemp -d)
port=18600
spid=
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$tmp"' EXIT

say() { echo "# $*"; }
emit() { echo "dpbench $*" | tee -a "$out" | sed 's/^/# /'; }

poll() {
	local i tries=$1
	shift
	for ((i = 0; i < tries; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
sc_listening() {
	ip netns exec "$1" awk -v p=":$2" '$4 == "LISTEN" && substr($5, length($5) - length(p) + 1) == p { f = 1 }
		END { exit !f }' /proc/net/softcm
}
rxe_listening() {
	rdma resource show cm_id 2>/dev/null | grep "state LISTEN" | grep -q ":$1 "
}
gone() { ! kill -0 "$1" 2>/dev/null; }
tcp_listening() {
	ip netns exec "$1" awk -v p=":$(printf %04X "$2")" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 }
		END { exit !f }' /proc/net/tcp /proc/net/tcp6
}
# The sum of softcm counter NAME over namespaces NS...
# The packets the kernel dropped for a full per-CPU backlog (all CPUs:
# /proc/net/softnet_stat's second column, hexadecimal).
backlog_drops() {
	local d s=0
	for d in $(awk '{ print $2 }' /proc/net/softnet_stat); do
		s=$((s + 16#$d))
	done
	echo $s
}

stat_sum() {
	local name=$1 ns s=0 v
	shift
	for ns in "$@"; do
		v=$(ip netns exec "$ns" awk -v n="$name" '$1 == n { print $2 }' /proc/net/softcm_stats)
		s=$((s + ${v:-0}))
	done
	echo $s
}
# One word for a failure: the tool's first line that says what went wrong.
why() {
	local w
	w=$(grep -hiE 'error|fail|unable|couldn|cannot|invalid|timed out|refused|not ' "$@" \
		2>/dev/null | head -n 1)
	[ -n "$w" ] || w=$(tail -q -n 1 "$@" 2>/dev/null | head -n 1)
	w=${w//[^A-Za-z0-9_.:,()\/-]/_}
	echo "${w:-no_output}"
}
iters_for() {
	local n=$((DP_BYTES / $1))
	((n < DP_MIN_ITERS)) && n=$DP_MIN_ITERS
	((n > DP_MAX_ITERS)) && n=$DP_MAX_ITERS
	echo $n
}

# One configuration's sides: the namespace of each ("" for init_net),
# whether it runs under softcm exec, the rxe device of each (perftest's
# -d), where the server listens, and the namespaces whose softcm
# counters the run moves.
config() {
	sdev=() cdev=()
	case $1 in
	softcm)
		sns=ba cns=bb ssc=1 csc=1 addr=10.91.0.1 wait_listen="sc_listening ba"
		stat_ns=(ba bb) ;;
	rxe)
		sns= cns= ssc=0 csc=0 addr=10.90.0.1 wait_listen=rxe_listening stat_ns=()
		sdev=(-d rxe0) cdev=(-d rxe0) ;;
	rxe-veth)
		sns= cns= ssc=0 csc=0 addr=10.92.0.1 wait_listen=rxe_listening stat_ns=()
		sdev=(-d rxe1) cdev=(-d rxe2) ;;
	softcm-rxe)
		sns= cns=bx ssc=0 csc=1 addr=10.90.0.1 wait_listen=rxe_listening stat_ns=(bx) ;;
	esac
}
# side NS SOFTCM WRAP...: the command prefix of one side (busybox's
# timeout would run busybox's ip, which has no netns: timeout goes
# inside ip netns exec).
side() {
	local ns=$1 sc=$2
	shift 2
	cmd=()
	[ -n "$ns" ] && cmd=(ip netns exec "$ns")
	cmd+=("$@" timeout "$T")
	[ "$sc" = 1 ] && cmd+=(softcm exec --)
	return 0
}

# perftest CONFIG PROG SIZE ITERS [WRAP]: one run; on success leaves the
# client's result line in $tmp/line.  WRAP "strace" runs both programs
# under strace -c -f (their summaries in $tmp/sc.server, $tmp/sc.client).
perftest() {
	local cfg=$1 prog=$2 size=$3 iters=$4 wrap=${5:-} crc=0 src=0 cmd srv cli
	shift 4
	[ $# -gt 0 ] && shift
	local more=("$@")
	local sw=() cw=()
	config "$cfg"
	: >"$tmp/client"
	: >"$tmp/server"
	: >"$tmp/line"
	if [ "$wrap" = strace ]; then
		sw=(strace -f -c -o "$tmp/sc.server") cw=(strace -f -c -o "$tmp/sc.client")
	fi
	side "$sns" "$ssc" "${sw[@]}"
	srv=("${cmd[@]}")
	side "$cns" "$csc" "${cw[@]}"
	cli=("${cmd[@]}")
	port=$((port + 1))
	local opts=(-R -F -s "$size" -n "$iters" -p "$port" "${more[@]}")
	"${srv[@]}" "$prog" "${sdev[@]}" "${opts[@]}" >"$tmp/server" 2>&1 &
	spid=$!
	if ! poll 300 $wait_listen $port; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		spid=
		echo "the server did not listen" >>"$tmp/server"
		return 1
	fi
	"${cli[@]}" "$prog" "${cdev[@]}" "${opts[@]}" "$addr" >"$tmp/client" 2>&1 || crc=$?
	# a client that failed leaves its server waiting for it: 5 s, then
	# it is stopped, not left to the timeout
	if [ "$crc" != 0 ] && ! poll 50 gone "$spid"; then
		kill "$spid" 2>/dev/null
		echo "server stopped: its client had failed" >>"$tmp/server"
	fi
	wait "$spid" || src=$?
	spid=
	grep -E "^ *$size +$iters " "$tmp/client" | head -n 1 >"$tmp/line"
	if [ "$crc" != 0 ] || [ "$src" != 0 ] || [ ! -s "$tmp/line" ]; then
		echo "client exit $crc, server exit $src" >>"$tmp/client"
		# perftest 4.5's connect race (exec_test.sh's run_lat says it)
		grep -q 'RDMA_CM_EVENT_REJECTED; error: 8' "$tmp/client" && return 3
		return 1
	fi
	# perftest's clock: it times with the TSC, at the frequency it
	# samples against gettimeofday(); under a loaded TCG host the sample
	# can fail (r^2 < 0.9: frequency 0, figures 0 or inf): run again.
	if grep -q 'Correlation coefficient' "$tmp/client" ||
	   awk '{ n = NF == 5 ? 4 : NF	# a bandwidth line: its message rate may round to 0
		for (i = 3; i <= n; i++) if ($i ~ /inf|nan/ || $i + 0 == 0) f = 1 }
		END { exit !f }' "$tmp/line"; then
		echo "perftest could not sample the CPU clock (r^2 < 0.9)" >>"$tmp/client"
		return 2
	fi
	# (the vCPUs' "cpu MHz" differ: perftest goes on, -F)
	clock=ok
	grep -q 'Conflicting CPU frequency' "$tmp/client" && clock=conflicting
	return 0
}

# perftest_retry ...: perftest, again (twice at most) when it could not
# time the run, or once when its client was refused with REJ 8 (perftest
# 4.5's own race between its two connections; the next run has a port of
# its own).
perftest_retry() {
	local i rc rej=0
	for i in 1 2 3; do
		rc=0
		perftest "$@" || rc=$?
		if [ "$rc" = 3 ] && [ $rej = 0 ]; then
			rej=1
			say "perftest $*: refused (REJ 8, perftest's connect race), again"
			continue
		fi
		[ "$rc" = 2 ] || return $((rc == 3 ? 1 : rc))
		say "perftest $*: no clock, again"
	done
	return 1
}

nfailed=0
failed() {
	nfailed=$((nfailed + 1))
	emit "$1 status=failed error=$(why "$tmp/client" "$tmp/server")"
	sed 's/^/#   client: /' "$tmp/client" | tail -n 8
	sed 's/^/#   server: /' "$tmp/server" | tail -n 8
}

# bw CONFIG TEST SIZE: one bandwidth run.
bw() {
	local cfg=$1 t=$2 size=$3 iters a0 r0 p0 i0 w0 v0 ri0 rw0 to0 rr0 a1 r1 p1 i1 w1 v1 ri1 rw1 to1 rr1 bd0
	local c0 tb0 rb0 c1 tb1 rb1 cw0 cw1
	local extra= tag
	local t0=$SECONDS
	iters=$(iters_for "$size")
	tag="config=$cfg test=${t}_bw size=$size iters=$iters"
	config "$cfg"
	bd0=$(backlog_drops)
	if [ ${#stat_ns[@]} -gt 0 ]; then
		a0=$(stat_sum rc_acks_sent "${stat_ns[@]}") r0=$(stat_sum rc_acks_received "${stat_ns[@]}")
		p0=$(stat_sum rc_tx_packets "${stat_ns[@]}")
		i0=$(stat_sum rc_tx_inline "${stat_ns[@]}") w0=$(stat_sum rc_tx_work "${stat_ns[@]}")
		v0=$(stat_sum rc_tx_rcv "${stat_ns[@]}") to0=$(stat_sum rc_timeouts "${stat_ns[@]}")
		rr0=$(stat_sum read_retries "${stat_ns[@]}")
		ri0=$(stat_sum rc_resp_rcv "${stat_ns[@]}") rw0=$(stat_sum rc_resp_work "${stat_ns[@]}")
		c0=$(stat_sum rc_tx_copied "${stat_ns[@]}") tb0=$(stat_sum rc_tx_bytes "${stat_ns[@]}")
		rb0=$(stat_sum rc_rx_bytes "${stat_ns[@]}")
		cw0=$(stat_sum rc_resp_cpu_waits "${stat_ns[@]}")
	fi
	if ! perftest_retry "$cfg" "ib_${t}_bw" "$size" "$iters"; then
		failed "$tag"
		return
	fi
	if [ ${#stat_ns[@]} -gt 0 ]; then
		a1=$(stat_sum rc_acks_sent "${stat_ns[@]}") r1=$(stat_sum rc_acks_received "${stat_ns[@]}")
		p1=$(stat_sum rc_tx_packets "${stat_ns[@]}")
		i1=$(stat_sum rc_tx_inline "${stat_ns[@]}") w1=$(stat_sum rc_tx_work "${stat_ns[@]}")
		v1=$(stat_sum rc_tx_rcv "${stat_ns[@]}") to1=$(stat_sum rc_timeouts "${stat_ns[@]}")
		rr1=$(stat_sum read_retries "${stat_ns[@]}")
		ri1=$(stat_sum rc_resp_rcv "${stat_ns[@]}") rw1=$(stat_sum rc_resp_work "${stat_ns[@]}")
		c1=$(stat_sum rc_tx_copied "${stat_ns[@]}") tb1=$(stat_sum rc_tx_bytes "${stat_ns[@]}")
		rb1=$(stat_sum rc_rx_bytes "${stat_ns[@]}")
		cw1=$(stat_sum rc_resp_cpu_waits "${stat_ns[@]}")
		# ACKs on the wire: softcm <-> softcm counts each twice (sent
		# and received), softcm <-> rxe once each way.
		local acks=$(((a1 - a0) + (r1 - r0)))
		[ "$cfg" = softcm ] && acks=$(((a1 - a0)))
		# the requester's packets sent from the posting system call,
		# from its work item and from the receive of an ACK or response,
		# the responder's waiting ones (READ responses) from the
		# request's receive and from its work (0 before the counters
		# existed)
		extra=$(awk -v a=$acks -v p=$((p1 - p0)) -v n="$iters" -v i=$((i1 - i0)) \
			-v w=$((w1 - w0)) -v v=$((v1 - v0)) -v ri=$((ri1 - ri0)) -v rw=$((rw1 - rw0)) \
			'BEGIN { printf " acks_per_msg=%.3f pkts_per_msg=%.3f inline_per_msg=%.3f work_per_msg=%.3f",
				 a / n, p / n, i / n, w / n
				 printf " rcv_per_msg=%.3f resp_rcv_per_msg=%.3f resp_work_per_msg=%.3f",
					v / n, ri / n, rw / n }')
		# softcm's retransmission timeouts, and READs it asked again for
		# a gap in their responses, in the run
		extra+=" timeouts=$((to1 - to0)) read_retries=$((rr1 - rr0))"
		# times the responder waited for its packets sent from another
		# CPU to leave the stack before it sent from this one
		extra+=" resp_cpu_waits=$((cw1 - cw0))"
		# softcm's copies of each payload byte it sent: into the packet
		# (rc_tx_copied: inline, short or fragmented payloads) and out
		# of it into the receiver's memory (every byte received is
		# copied once: rc_rx_bytes), over the bytes sent.  softcm <->
		# softcm only: softcm -> rxe counts one end.
		[ "$cfg" = softcm ] &&
			extra+=$(awk -v c=$((c1 - c0)) -v t=$((tb1 - tb0)) -v r=$((rb1 - rb0)) \
				'BEGIN { if (t > 0) printf " copies_per_byte=%.3f", (c + r) / t }')
	fi
	# packets the stack dropped for a full CPU backlog in the run (both
	# ends' stacks are this kernel's: a sender's burst can fill it)
	extra+=" backlog_drops=$(($(backlog_drops) - bd0))"
	# #bytes #iterations BW-peak BW-average[MB/sec] MsgRate[Mpps]
	# (the message rate from the average bandwidth: perftest's Mpps has
	# six decimals, 0.000000 for 1 MiB messages at under 0.5 MiB/s)
	emit "$tag status=ok $(awk '{ printf "bw_mibs=%s mpps=%.9f", $4, $4 * 1048576 / $1 / 1e6 }' \
		"$tmp/line")$extra" \
		"clock=$clock secs=$((SECONDS - t0))"
	sed 's/^/#   perftest: /' "$tmp/line"
}

# lat CONFIG TEST SIZE [-e]: one latency run (-e: perftest sleeps for
# its completions on a channel instead of polling; the test is then
# named TEST_lat_e).
lat() {
	local cfg=$1 t=$2 size=$3 ev=${4:-} tag t0=$SECONDS
	tag="config=$cfg test=${t}_lat${ev:+_e} size=$size iters=$DP_LAT_ITERS"
	# (500 round trips take seconds: a minute is a hang)
	local T=$T
	[ -n "$ev" ] && T=60
	if ! perftest_retry "$cfg" "ib_${t}_lat" "$size" "$DP_LAT_ITERS" "" $ev; then
		failed "$tag"
		return
	fi
	# #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
	emit "$tag status=ok $(awk '{ printf "lat_min_us=%s lat_typ_us=%s lat_avg_us=%s lat_p99_us=%s", $3, $5, $6, $8 }' \
		"$tmp/line") clock=$clock secs=$((SECONDS - t0))"
	sed 's/^/#   perftest: /' "$tmp/line"
}

# syscalls CONFIG TEST SIZE: strace -c -f of both programs at DP_SC_ITERS
# and at a tenth of it; the calls per message are the difference over the
# difference in messages (setup and teardown cancel out).
syscalls() {
	local cfg=$1 t=$2 size=$3 n1=$DP_SC_ITERS n0=$((DP_SC_ITERS / 10)) s0 c0 s1 c1 tag top
	tag="config=$cfg test=${t}_syscalls size=$size iters=$n1"
	# every call but the clock's: perftest samples the TSC against
	# gettimeofday(), which has no vDSO path in the TCG guest, a varying
	# number of times (cmbench's syscalls.sh leaves the clock out too)
	total() {
		awk 'NR > 2 && $NF != "total" && $4 ~ /^[0-9]+$/ &&
		     $NF !~ /^(gettimeofday|clock_gettime|clock_nanosleep|nanosleep)$/ { n += $4 }
		     END { if (NR > 2) print n + 0 }' "$1"
	}
	# (the counts need no clock: a run perftest could not time counts;
	# one refused with REJ 8, perftest's connect race, runs again)
	local rc=0
	perftest "$cfg" "ib_${t}_bw" "$size" "$n0" strace || rc=$?
	[ "$rc" = 3 ] && rc=0 && { perftest "$cfg" "ib_${t}_bw" "$size" "$n0" strace || rc=$?; }
	if [ "$rc" != 0 ] && [ "$rc" != 2 ]; then
		failed "$tag"
		return
	fi
	s0=$(total "$tmp/sc.server") c0=$(total "$tmp/sc.client")
	rc=0
	perftest "$cfg" "ib_${t}_bw" "$size" "$n1" strace || rc=$?
	[ "$rc" = 3 ] && rc=0 && { perftest "$cfg" "ib_${t}_bw" "$size" "$n1" strace || rc=$?; }
	if [ "$rc" != 0 ] && [ "$rc" != 2 ]; then
		failed "$tag"
		return
	fi
	s1=$(total "$tmp/sc.server") c1=$(total "$tmp/sc.client")
	if [ -z "$s0$c0" ] || [ -z "$s1" ] || [ -z "$c1" ]; then
		echo "no strace summary" >>"$tmp/client"
		failed "$tag"
		return
	fi
	# the client's three most frequent calls, for the report
	top=$(awk 'NR > 2 && $NF != "total" && $4 ~ /^[0-9]+$/ { print $4, $NF }' "$tmp/sc.client" |
		sort -rn | head -n 3 | awk '{ printf "%s%s:%s", (NR > 1 ? "," : ""), $2, $1 }')
	emit "$tag status=ok $(awk -v s0="$s0" -v s1="$s1" -v c0="$c0" -v c1="$c1" -v d=$((n1 - n0)) \
		'BEGIN { printf "syscalls_server=%.3f syscalls_client=%.3f", (s1 - s0) / d, (c1 - c0) / d }')" \
		"top_client=${top:-none}"
	sed 's/^/#   strace client: /' "$tmp/sc.client" | head -n 12
}

# tcp SIZE: iperf3 ba <- bb, writes of SIZE, DP_TCP_BYTES (32 MiB) in
# all: TCP is fast enough that perftest's byte counts would time its
# start more than its stream.
tcp() {
	local size=$1 iters bytes=${DP_TCP_BYTES:-33554432} crc=0 src=0 bps tag t0=$SECONDS
	iters=$((bytes / size))
	tag="config=tcp test=tcp_stream size=$size iters=$iters"
	port=$((port + 1))
	: >"$tmp/client"
	ip netns exec ba timeout "$T" iperf3 -s -1 -p "$port" >"$tmp/server" 2>&1 &
	spid=$!
	if ! poll 300 tcp_listening ba "$port"; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		spid=
		: >"$tmp/client"
		echo "the server did not listen" >>"$tmp/server"
		failed "$tag"
		return
	fi
	ip netns exec bb timeout "$T" iperf3 -c 10.91.0.1 -p "$port" -l "$size" -n "$bytes" -J \
		>"$tmp/client" 2>&1 || crc=$?
	wait "$spid" || src=$?
	spid=
	bps=$(awk '/"sum_received"/ { f = 1 } f && /"bits_per_second"/ { gsub(/[^0-9.e+]/, "", $2); print $2; exit }' \
		"$tmp/client")
	if [ "$crc" != 0 ] || [ -z "$bps" ]; then
		echo "client exit $crc, server exit $src" >>"$tmp/client"
		failed "$tag"
		return
	fi
	emit "$tag status=ok $(awk -v b="$bps" -v s="$size" \
		'BEGIN { printf "bw_mibs=%.2f mpps=%.5f", b / 8 / 1048576, b / 8 / s / 1e6 }')" \
		"secs=$((SECONDS - t0))"
}

start=$SECONDS clock=
say "data path: sizes $DP_SIZES, latency at $DP_LAT_SIZES, $DP_BYTES bytes per bandwidth run"
[ "$DP_PROFILE" = only ] && DP_SIZES= DP_LAT_SIZES=
for t in send write read; do
	for size in $DP_SIZES; do
		for cfg in $DP_CONFIGS; do
			bw "$cfg" "$t" "$size"
		done
	done
	for size in $DP_LAT_SIZES; do
		for cfg in $DP_CONFIGS; do
			lat "$cfg" "$t" "$size"
		done
	done
done
# The latency again with perftest sleeping on its CQ (-e): whether the
# polling program keeps its CPU from what the data path needs there.
[ "$DP_PROFILE" != only ] && for cfg in softcm rxe; do
	lat "$cfg" send 64 -e
done
for size in $DP_SIZES; do
	tcp "$size"
done
if [ "$DP_PROFILE" = only ]; then
	:
elif command -v strace >/dev/null; then
	for t in send write read; do
		for cfg in softcm rxe; do
			syscalls "$cfg" "$t" 4096
		done
	done
else
	say "no strace in the VM: no system calls per message"
fi
# Where softcm's time goes: the whole guest sampled by its clock (no PMU
# under TCG) while softcm runs each of DP_PROFILE_CASES (by default 64 KiB
# WRITEs, then SENDs of 64 B) with 16 times a figure's messages so that the run, not perf's start, fills the
# samples; the hottest symbols, the shares by CPU and process, softcm.ko's
# share of the kernel's samples and the callers of memset_erms go to OUT
# as comments.
profile() {
	local t=$1 size=$2 ppid
	perf record -a -g -e cpu-clock -F 499 -o "$tmp/perf.data" >"$tmp/perf.log" 2>&1 &
	ppid=$!
	sleep 1
	perftest_retry softcm "ib_${t}_bw" "$size" $((16 * $(iters_for "$size"))) ||
		say "profile: $t $size failed"
	kill -INT "$ppid" 2>/dev/null
	wait "$ppid" 2>/dev/null
	{
		echo "# perf softcm ${t}_bw $size: $(grep -E '^ *[0-9]+ +[0-9]+ ' "$tmp/line")"
		perf report -i "$tmp/perf.data" --stdio -g none --no-children --sort comm,dso,sym 2>/dev/null |
			grep -E '^ +[0-9.]+%' | head -n 40 | sed "s/^/# perf softcm ${t}_bw $size: /"
		# by CPU, process and object: which program's CPU does the
		# kernel's work, and which one spins (the idle loop also holds
		# the second before perftest starts and its connection setup)
		perf report -i "$tmp/perf.data" --stdio -g none --no-children --sort cpu,pid,dso \
			2>/dev/null | grep -E '^ +[0-9.]+%' | head -n 12 |
			sed "s/^/# perf-cpu softcm ${t}_bw $size: /"
		# softcm's own code against all the kernel's work (the idle
		# loop left out): what cheaper code of ours could win at most,
		# the rest being the stack, the veth and the system calls
		awk '$4 == "[softcm]" { print $3 }' /proc/kallsyms >"$tmp/syms"
		perf report -i "$tmp/perf.data" --stdio -g none --no-children --sort comm,sym \
			2>/dev/null | awk -v f="$tmp/syms" '
			BEGIN { while ((getline s < f) > 0) mine[s] = 1 }
			$1 ~ /%$/ && $2 != "swapper" && $3 == "[k]" {
				k += $1; if ($4 in mine) m += $1
			}
			END {
				printf "kernel %.1f%% of samples, softcm.ko %.1f%% (%.0f%% of the kernel'"'"'s)\n",
				       k, m, k ? 100 * m / k : 0
			}' | sed "s/^/# perf-share softcm ${t}_bw $size: /"
		# who zeroes memory: Debian's init_on_alloc clears every
		# allocation, an skb's head included (performance.rst, "Room
		# for the link header")
		perf report -i "$tmp/perf.data" --stdio --no-children -S memset_erms -G 2>/dev/null |
			grep -E '[0-9.]+%' | head -n 24 |
			sed "s/^/# perf-callers memset_erms softcm ${t}_bw $size: /"
	} | tee -a "$out"
}
if command -v perf >/dev/null && [ "$DP_PROFILE" != 0 ]; then
	for c in $DP_PROFILE_CASES; do
		profile "${c%%:*}" "${c#*:}"
	done
fi
say "data path: $((SECONDS - start)) s, $nfailed failed"
[ "$nfailed" = 0 ]
