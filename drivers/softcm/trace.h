/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints: id state changes, CM state changes, address resolution
 * results, and every CM message sent or handed to the CM; QP state
 * changes, RC retransmissions and NAKs.  Ids are named
 * as in /proc/net/softcm: namespace inode and the owner's handle (0 for a
 * new request's id before it is published and for an orphan in timewait).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM softcm

#if !defined(_SOFTCM_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SOFTCM_TRACE_H

#include <linux/socket.h>
#include <linux/tracepoint.h>
#include <linux/in6.h>

#include "compat.h"

/* The CM attribute IDs, for trace-cmd and perf as well as tracefs. */
#define softcm_trace_attrs						\
	{ 0x10, "REQ" }, { 0x11, "MRA" }, { 0x12, "REJ" }, { 0x13, "REP" }, \
	{ 0x14, "RTU" }, { 0x15, "DREQ" }, { 0x16, "DREP" },		\
	{ 0x17, "SIDR_REQ" }, { 0x18, "SIDR_REP" }

TRACE_EVENT(softcm_state,
	TP_PROTO(unsigned int netns, u32 handle, const char *from, const char *to),
	TP_ARGS(netns, handle, from, to),
	TP_STRUCT__entry(
		__field(unsigned int, netns)
		__field(u32, handle)
		__string(from, from)
		__string(to, to)
	),
	TP_fast_assign(
		__entry->netns = netns;
		__entry->handle = handle;
		softcm_assign_str(from, from);
		softcm_assign_str(to, to);
	),
	TP_printk("netns=%u handle=%u %s -> %s", __entry->netns, __entry->handle,
		  __get_str(from), __get_str(to))
);

TRACE_EVENT(softcm_cm_state,
	TP_PROTO(unsigned int netns, u32 handle, u32 local_id, u32 remote_id,
		 const char *from, const char *to),
	TP_ARGS(netns, handle, local_id, remote_id, from, to),
	TP_STRUCT__entry(
		__field(unsigned int, netns)
		__field(u32, handle)
		__field(u32, local_id)
		__field(u32, remote_id)
		__string(from, from)
		__string(to, to)
	),
	TP_fast_assign(
		__entry->netns = netns;
		__entry->handle = handle;
		__entry->local_id = local_id;
		__entry->remote_id = remote_id;
		softcm_assign_str(from, from);
		softcm_assign_str(to, to);
	),
	TP_printk("netns=%u handle=%u local_comm_id=%#x remote_comm_id=%#x %s -> %s",
		  __entry->netns, __entry->handle, __entry->local_id,
		  __entry->remote_id, __get_str(from), __get_str(to))
);

TRACE_EVENT(softcm_resolve,
	TP_PROTO(unsigned int netns, u32 handle, const struct sockaddr_storage *src,
		 const struct sockaddr_storage *dst, int ifindex, int status),
	TP_ARGS(netns, handle, src, dst, ifindex, status),
	TP_STRUCT__entry(
		__field(unsigned int, netns)
		__field(u32, handle)
		__array(u8, src, sizeof(struct sockaddr_in6))
		__array(u8, dst, sizeof(struct sockaddr_in6))
		__field(int, ifindex)
		__field(int, status)
	),
	TP_fast_assign(
		__entry->netns = netns;
		__entry->handle = handle;
		memcpy(__entry->src, src, sizeof(__entry->src));
		memcpy(__entry->dst, dst, sizeof(__entry->dst));
		__entry->ifindex = ifindex;
		__entry->status = status;
	),
	TP_printk("netns=%u handle=%u src=%pISc dst=%pISc ifindex=%d status=%d",
		  __entry->netns, __entry->handle, __entry->src, __entry->dst,
		  __entry->ifindex, __entry->status)
);

#define softcm_trace_event_types					\
	{ 0, "ADDR_RESOLVED" }, { 1, "ADDR_ERROR" }, { 2, "ROUTE_RESOLVED" },	\
	{ 3, "ROUTE_ERROR" }, { 4, "CONNECT_REQUEST" },			\
	{ 5, "CONNECT_RESPONSE" }, { 6, "CONNECT_ERROR" }, { 7, "UNREACHABLE" }, \
	{ 8, "REJECTED" }, { 9, "ESTABLISHED" }, { 10, "DISCONNECTED" },	\
	{ 11, "DEVICE_REMOVAL" }, { 12, "MULTICAST_JOIN" },			\
	{ 13, "MULTICAST_ERROR" }, { 14, "ADDR_CHANGE" }, { 15, "TIMEWAIT_EXIT" }

/*
 * An event queued for a file (@read false) or read from it (@read true),
 * with the comm ID of the connection it is about (0 before one exists),
 * so that make bench can time each stage of a connection: REQ received,
 * event queued, read, REP sent, RTU received.
 */
TRACE_EVENT(softcm_event,
	TP_PROTO(unsigned int netns, u32 handle, u32 comm_id, u32 type, bool read),
	TP_ARGS(netns, handle, comm_id, type, read),
	TP_STRUCT__entry(
		__field(unsigned int, netns)
		__field(u32, handle)
		__field(u32, comm_id)
		__field(u32, type)
		__field(bool, read)
	),
	TP_fast_assign(
		__entry->netns = netns;
		__entry->handle = handle;
		__entry->comm_id = comm_id;
		__entry->type = type;
		__entry->read = read;
	),
	TP_printk("netns=%u handle=%u comm_id=%#x %s %s", __entry->netns,
		  __entry->handle, __entry->comm_id,
		  __entry->read ? "read" : "queued",
		  __print_symbolic(__entry->type, softcm_trace_event_types))
);

/*
 * One CM MAD: @tx sent (@err the stack's verdict) or received (@err what
 * decoding it said).  @w0 and @w1 are the message's first two words: the
 * sender's and the receiver's comm IDs for the connection messages, the
 * request ID for SIDR.
 */
TRACE_EVENT(softcm_cm_msg,
	TP_PROTO(unsigned int netns, bool tx, const struct sockaddr *peer,
		 u8 attr, u64 tid, u32 w0, u32 w1, int err),
	TP_ARGS(netns, tx, peer, attr, tid, w0, w1, err),
	TP_STRUCT__entry(
		__field(unsigned int, netns)
		__field(bool, tx)
		__array(u8, peer, sizeof(struct sockaddr_in6))
		__field(u8, attr)
		__field(u64, tid)
		__field(u32, w0)
		__field(u32, w1)
		__field(int, err)
	),
	TP_fast_assign(
		__entry->netns = netns;
		__entry->tx = tx;
		memcpy(__entry->peer, peer, sizeof(__entry->peer));
		__entry->attr = attr;
		__entry->tid = tid;
		__entry->w0 = w0;
		__entry->w1 = w1;
		__entry->err = err;
	),
	TP_printk("netns=%u %s %s peer=%pISc tid=%#llx ids=%#x,%#x err=%d",
		  __entry->netns, __entry->tx ? "tx" : "rx",
		  __print_symbolic(__entry->attr, softcm_trace_attrs),
		  __entry->peer, __entry->tid, __entry->w0, __entry->w1, __entry->err)
);

/* A QP's state change; QPs are named by namespace inode and QPN. */
TRACE_EVENT(softcm_qp_state,
	TP_PROTO(unsigned int netns, u32 qpn, const char *from, const char *to),
	TP_ARGS(netns, qpn, from, to),
	TP_STRUCT__entry(
		__field(unsigned int, netns)
		__field(u32, qpn)
		__string(from, from)
		__string(to, to)
	),
	TP_fast_assign(
		__entry->netns = netns;
		__entry->qpn = qpn;
		softcm_assign_str(from, from);
		softcm_assign_str(to, to);
	),
	TP_printk("netns=%u qpn=%#x %s -> %s", __entry->netns, __entry->qpn,
		  __get_str(from), __get_str(to))
);

/*
 * The RC requester going back to @psn: on its timer (timeout), on a
 * sequence NAK, after an RNR NAK's wait, when a READ's responses
 * stopped before its last (read_stall), or to ask for the ACK of a tail
 * sent without AckReq (tail: its last packet alone).
 */
/* rc.h's SOFTCM_TRACE_RETRANSMIT_* */
#define softcm_trace_retransmit_why					\
	{ 0, "timeout" }, { 1, "seq_nak" }, { 2, "rnr" }, { 3, "read_stall" },	\
	{ 4, "tail" }

TRACE_EVENT(softcm_rc_retransmit,
	TP_PROTO(unsigned int netns, u32 qpn, u32 psn, u32 una, int why),
	TP_ARGS(netns, qpn, psn, una, why),
	TP_STRUCT__entry(
		__field(unsigned int, netns)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, una)
		__field(int, why)
	),
	TP_fast_assign(
		__entry->netns = netns;
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->una = una;
		__entry->why = why;
	),
	TP_printk("netns=%u qpn=%#x from psn=%#x una=%#x %s", __entry->netns,
		  __entry->qpn, __entry->psn, __entry->una,
		  __print_symbolic(__entry->why, softcm_trace_retransmit_why))
);

/* A NAK an RC QP sent (responder) or received (requester): AETH syndrome. */
TRACE_EVENT(softcm_rc_nak,
	TP_PROTO(unsigned int netns, u32 qpn, bool tx, u32 psn, u8 syndrome),
	TP_ARGS(netns, qpn, tx, psn, syndrome),
	TP_STRUCT__entry(
		__field(unsigned int, netns)
		__field(u32, qpn)
		__field(bool, tx)
		__field(u32, psn)
		__field(u8, syndrome)
	),
	TP_fast_assign(
		__entry->netns = netns;
		__entry->qpn = qpn;
		__entry->tx = tx;
		__entry->psn = psn;
		__entry->syndrome = syndrome;
	),
	TP_printk("netns=%u qpn=%#x %s psn=%#x syndrome=%#04x", __entry->netns,
		  __entry->qpn, __entry->tx ? "tx" : "rx", __entry->psn,
		  __entry->syndrome)
);

/* trace.c: softcm_cm_msg from a MAD's bytes, when the event is on. */
struct softcm_net;
void softcm_trace_mad(struct softcm_net *sn, bool tx,
		      const struct sockaddr *peer, const u8 *mad, int err);

#endif /* _SOFTCM_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
