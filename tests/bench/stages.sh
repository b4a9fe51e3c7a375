#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The stages of connection setup, timed by the kernel's own clock: reads
# a tracefs trace of softcm's softcm_cm_msg and softcm_event tracepoints
# (both sides of each connection in one trace) and prints, for every
# stage, a cmbench line with its minimum, median and maximum over the
# connections (microseconds):
#
#   stages.sh TRACE SYSTEM TOPO
#
# A connection is keyed by the active side's comm ID (the REQ's first
# word); the passive side's comm ID comes from its REP.  Stages, in order:
#
#   req_wire            REQ sent -> REQ received
#   req_to_queued       REQ received -> CONNECT_REQUEST queued (passive)
#   request_queued      CONNECT_REQUEST queued -> read by the server
#   server_accept       read -> REP sent (the application, then ACCEPT)
#   rep_wire            REP sent -> REP received
#   rep_to_queued       REP received -> CONNECT_RESPONSE queued (active)
#   response_queued     CONNECT_RESPONSE queued -> read by the client
#   client_establish    read -> RTU sent (the application, then ACCEPT)
#   rtu_wire            RTU sent -> RTU received
#   rtu_to_established  RTU received -> ESTABLISHED read by the server
#   total               REQ sent -> ESTABLISHED read by the server
set -u
[ $# -eq 3 ] || { sed -n '8,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
trace=$1 sys=$2 topo=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

awk '
function val(name,   i) {
	for (i = 1; i <= NF; i++)
		if (index($i, name "=") == 1)
			return substr($i, length(name) + 2)
	return ""
}
{
	for (i = 2; i <= NF; i++)
		if ($i ~ /^softcm_(cm_msg|event):$/ && $(i - 1) ~ /^[0-9]+\.[0-9]+:$/)
			break
	if (i > NF)
		next
	ts = $(i - 1)
	sub(/:$/, "", ts)
	t = ts * 1e6
	if ($i == "softcm_cm_msg:") {
		dir = $(i + 2)
		msg = $(i + 3)
		split(val("ids"), w, ",")
		k = dir " " msg
		if (k == "tx REQ") { reqtx[w[1]] = t }
		else if (k == "rx REQ") { reqrx[w[1]] = t }
		else if (k == "tx REP") { reptx[w[2]] = t; passive[w[2]] = w[1] }
		else if (k == "rx REP") { reprx[w[2]] = t }
		else if (k == "tx RTU") { rtutx[w[1]] = t }
		else if (k == "rx RTU") { rturx[w[1]] = t }
	} else {
		k = val("comm_id") " " $(i + 5) " " $(i + 4)
		if (!(k in ev))
			ev[k] = t
	}
}
function out(stage, a, b) {
	if (a != "" && b != "" && b >= a)
		printf "%s %.3f\n", stage, b - a
}
END {
	for (r in reqrx) {
		if (!(r in passive))
			continue
		l = passive[r]
		rq = ev[l " CONNECT_REQUEST queued"]
		rr = ev[l " CONNECT_REQUEST read"]
		cq = ev[r " CONNECT_RESPONSE queued"]
		cr = ev[r " CONNECT_RESPONSE read"]
		er = ev[l " ESTABLISHED read"]
		out("req_wire", reqtx[r], reqrx[r])
		out("req_to_queued", reqrx[r], rq)
		out("request_queued", rq, rr)
		out("server_accept", rr, reptx[r])
		out("rep_wire", reptx[r], reprx[r])
		out("rep_to_queued", reprx[r], cq)
		out("response_queued", cq, cr)
		out("client_establish", cr, rtutx[r])
		out("rtu_wire", rtutx[r], rturx[r])
		out("rtu_to_established", rturx[r], er)
		out("total", reqtx[r], er)
	}
}' "$trace" >"$tmp/values"

for stage in req_wire req_to_queued request_queued server_accept rep_wire rep_to_queued \
	response_queued client_establish rtu_wire rtu_to_established total; do
	awk -v s="$stage" '$1 == s { print $2 }' "$tmp/values" | sort -n >"$tmp/s"
	n=$(wc -l <"$tmp/s")
	[ "$n" -gt 0 ] || continue
	min=$(head -n1 "$tmp/s")
	max=$(tail -n1 "$tmp/s")
	med=$(sed -n "$(((n + 1) / 2))p" "$tmp/s")
	echo "cmbench system=$sys topo=$topo case=stages n=$n window=1 runs=1" \
		"metric=$stage unit=us min=$min median=$med max=$max"
done
