#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# System calls per connection, from a tracefs trace of raw_syscalls's
# sys_enter taken while cmbench ran one connection at a time: every system
# call of the server and of the client, from their start to their exit
# (setup, connection, teardown alike), divided by the connections made.
# Prints a cmbench line for each side:
#
#   syscalls.sh TRACE SYSTEM TOPO
#
# softcm's sides are told apart by who read which event (the server reads
# CONNECT_REQUEST, the client CONNECT_RESPONSE), and the connections are
# counted by the CONNECT_REQUESTs read.  TCP's server is the process that
# calls accept(2) or accept4(2), and its calls count the connections.
# sched_yield(2) and clock_gettime(2) are not counted: they are cmbench's
# own wait for the other side's timestamp in shared memory and its clock
# (the TCG guest's clocksource has no vDSO path: every clock read is a
# system call there), not part of making a connection.
set -u
[ $# -eq 3 ] || { sed -n '9,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
trace=$1 sys=$2 topo=$3

awk -v sys="$sys" -v topo="$topo" '
function field_pid(task,   p) {
	p = task
	sub(/.*-/, "", p)
	return p
}
{
	for (i = 2; i <= NF; i++)
		if ($i ~ /^(sys_enter|softcm_event):$/ && $(i - 1) ~ /^[0-9]+\.[0-9]+:$/)
			break
	if (i > NF || $1 !~ /^cmbench-/)
		next
	pid = field_pid($1)
	if ($i == "sys_enter:") {
		if ($(i + 2) == 24 || $(i + 2) == 228)
			next
		calls[pid]++
		if ($(i + 2) == 43 || $(i + 2) == 288) {
			accepts[pid]++
			server = pid
		}
	} else if ($(i + 4) == "read" && $(i + 5) == "CONNECT_REQUEST") {
		server = pid
		conns++
	} else if ($(i + 4) == "read" && $(i + 5) == "CONNECT_RESPONSE") {
		client = pid
	}
}
END {
	if (!conns && server != "")
		conns = accepts[server]
	if (!conns || server == "")
		exit 1
	for (p in calls)
		if (p != server && client == "")
			client = p
	printf "cmbench system=%s topo=%s case=syscalls n=%d window=1 runs=1 metric=syscalls_server unit=calls/conn min=%.2f median=%.2f max=%.2f\n", sys, topo, conns, calls[server] / conns, calls[server] / conns, calls[server] / conns
	if (client != "")
		printf "cmbench system=%s topo=%s case=syscalls n=%d window=1 runs=1 metric=syscalls_client unit=calls/conn min=%.2f median=%.2f max=%.2f\n", sys, topo, conns, calls[client] / conns, calls[client] / conns, calls[client] / conns
}' "$trace"
