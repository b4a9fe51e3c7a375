#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: one boot of the stock kernel runs tests/bench/bench.sh (every
# system, every case), then the results become a ratio table and a chart.
#
#   tests/bench/run.sh
#
# Environment: BENCH_NS ("100 1000 10000"), BENCH_LIVE ("500 5000 50000":
# idle connections, two ids each; empty: no scale case), BENCH_RUNS (3),
# BENCH_WINDOW (256), BENCH_LAT (200) size the run; BENCH_SEED (default:
# from the clock, printed) orders the systems within each run;
# BENCH_BURST (200; empty: no burst case) clients at once against a
# listener of backlog BENCH_BURST_BACKLOG (16), BENCH_BURST_RDMACM=1 adds
# rdma_cm over rxe to it (slow: its drops cost 6 s each),
# BENCH_BURST_DROP=1 softcm without its hold queue and with 6.1's response
# timeout (as before the hold queue), BENCH_ONLY=burst the burst case alone,
# BENCH_ONLY=stages the stages of one connection (tracepoints) alone,
# BENCH_ONLY=verbs the kernel memory per CQ and per QP alone,
# BENCH_ONLY=datapath the data path alone (tests/bench/datapath.sh;
# BENCH_DATAPATH=0: none), sized by BENCH_DP_SIZES ("64 4096 65536
# 1048576"), BENCH_DP_LAT_SIZES ("64 4096"), BENCH_DP_BYTES (bytes per
# bandwidth run, 8 MiB; iterations 20..5000), BENCH_DP_PROFILE (1: a
# perf profile of softcm after the figures, 0: none, only: the profile
# alone), BENCH_DP_PROFILE_CASES (what the profile samples, OP:SIZE
# pairs of perftest's bandwidth runs: "write:65536 send:64"), BENCH_DP_RPS=1 (the receive of each end of ba/bb's veth steered
# to the other vCPU by RPS, as a NIC's RSS puts it on a CPU of its own:
# Documentation/performance.rst, "One CPU for both ends"),
# BENCH_DP_CONFIGS (the perftest configurations: "softcm rxe rxe-veth
# softcm-rxe", tests/bench/datapath.sh).
# Writes build/bench/results.txt (one "cmbench ..." or "dpbench ..." line
# per measurement, machine-readable), table.txt, table.rst, bench.png,
# datapath.txt, datapath.rst and datapath.png.  The debug kernel
# never gives figures: this always boots the stock one.

set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/build/bench

mkdir -p "$out/lib"
cat >"$out/lib/bench.conf" <<EOF
NS="${BENCH_NS:-100 1000 10000}"
LIVE="${BENCH_LIVE-500 5000 50000}"
RUNS=${BENCH_RUNS:-3}
WINDOW=${BENCH_WINDOW:-256}
LAT=${BENCH_LAT:-200}
SEED=${BENCH_SEED:-}
BURST=${BENCH_BURST-200}
BURST_BACKLOG=${BENCH_BURST_BACKLOG:-16}
BURST_RDMACM=${BENCH_BURST_RDMACM:-0}
BURST_DROP=${BENCH_BURST_DROP:-0}
ONLY=${BENCH_ONLY:-}
DATAPATH=${BENCH_DATAPATH:-1}
DP_SIZES="${BENCH_DP_SIZES:-64 4096 65536 1048576}"
DP_LAT_SIZES="${BENCH_DP_LAT_SIZES:-64 4096}"
DP_BYTES=${BENCH_DP_BYTES:-8388608}
DP_PROFILE=${BENCH_DP_PROFILE:-1}
DP_PROFILE_CASES="${BENCH_DP_PROFILE_CASES:-write:65536 send:64}"
DP_RPS=${BENCH_DP_RPS:-0}
DP_CONFIGS="${BENCH_DP_CONFIGS:-softcm rxe rxe-veth softcm-rxe}"
EOF

rm -rf "$out/artifacts"
mkdir -p "$out/artifacts"
{
	echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "# host: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)," \
		"$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)," \
		"$(qemu-system-x86_64 --version | head -n1), TCG"
	echo "# host load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	sed 's/^/# config: /' "$out/lib/bench.conf"
} >"$out/results.txt"

status=0
start=$SECONDS
if grep -q -- '--artifacts' "$top/tests/vm/run.sh"; then
	"$top/tests/vm/run.sh" --kernel stock --tests-dir "$out" --timeout 3600 \
		--test-timeout 3400 --artifacts "$out/artifacts" bench.sh || status=$?
	res=$out/artifacts/bench-results.txt
else
	# A runner without an artifact channel: the results are also in the
	# program's TAP comments, in the kept run directory.
	"$top/tests/vm/run.sh" --kernel stock --tests-dir "$out" --timeout 3600 \
		--test-timeout 3400 --keep bench.sh || status=$?
	run=$(ls -td "$top"/build/vm/stock.* | head -n1)
	tr -d '\r' <"$run/results.log" |
		sed -n -e 's/^# \([cd][mp]bench\) /\1 /p' -e '/^# \(guest\|slab\|run\|order\)/p' \
		>"$out/artifacts/bench-results.txt"
	res=$out/artifacts/bench-results.txt
fi
{
	echo "# host load after: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# VM run: $((SECONDS - start)) s, exit $status"
	[ -e "$res" ] && cat "$res"
} >>"$out/results.txt"

if ! grep -q '^[cd][mp]bench ' "$out/results.txt"; then
	echo "bench: no results (VM exit $status)" >&2
	exit 1
fi
python3 "$here/report.py" "$out/results.txt" "$out" || status=1
for gp in chart.gp chart-datapath.gp; do
	[ -e "$out/$gp" ] || continue
	gnuplot "$out/$gp" 2>/dev/null || { echo "bench: gnuplot $gp failed" >&2; status=1; }
done
[ -e "$out/table.txt" ] && cat "$out/table.txt"
[ -e "$out/datapath.txt" ] && cat "$out/datapath.txt"
echo "bench: $out/results.txt, $out/table.txt, $out/bench.png, $out/datapath.txt," \
	"$out/datapath.png"
exit $status
