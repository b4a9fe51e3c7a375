/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_STATS_H
#define _SOFTCM_STATS_H

#include <linux/minmax.h>
#include <linux/percpu.h>
#include <softcm/wire.h>

/*
 * What each RC QP counts (softcm_rc_count(), /proc/net/softcm_qps), and
 * its namespace with it (SOFTCM_STAT_RC + counter).
 */
enum softcm_rc_counter {
	SOFTCM_RC_TX_PACKETS,
	SOFTCM_RC_TX_BYTES,		/* payload */
	SOFTCM_RC_RX_PACKETS,		/* that passed the ICRC and address */
	SOFTCM_RC_RX_BYTES,
	SOFTCM_RC_ACKS_SENT,
	SOFTCM_RC_ACKS_RECEIVED,
	SOFTCM_RC_SEQ_NAKS_SENT,
	SOFTCM_RC_SEQ_NAKS_RECEIVED,
	SOFTCM_RC_RNR_NAKS_SENT,	/* for want of a posted receive */
	SOFTCM_RC_RNR_NAKS_RECEIVED,
	/*
	 * Requests refused with a Remote Access Error for the region's
	 * bounds or rights; those whose rkey names no region of the QP's PD
	 * are SOFTCM_RC_RKEY_NAKS_SENT
	 */
	SOFTCM_RC_ACCESS_NAKS_SENT,
	SOFTCM_RC_RETRANSMITS,		/* packets sent again */
	SOFTCM_RC_TIMEOUTS,		/* of the retransmission timer */
	SOFTCM_RC_DUPLICATES,		/* requests received again */
	SOFTCM_RC_DROPS,		/* for the QP, dropped: address */
	/* duplicate READs and atomics answered again from the responder's resources */
	SOFTCM_RC_READ_REPLAYS,
	/* READs beyond the responder's resources, dropped (rd_atomic) */
	SOFTCM_RC_RD_EXHAUSTED,
	/* READs the requester asked again (a response or an ACK past it) */
	SOFTCM_RC_READ_RETRIES,
	/*
	 * The requester's packets (of tx_packets) by who sent them: the
	 * poster, in its system call, the work, or the receive of the ACK
	 * or response that made them sendable, in softirq (req.c,
	 * req_run()).
	 */
	SOFTCM_RC_TX_INLINE,
	SOFTCM_RC_TX_WORK,
	SOFTCM_RC_TX_RCV,
	/*
	 * The responder's packets that wait for a sender (READ responses,
	 * ATOMIC ACKNOWLEDGEs and an ACK kept behind them) by who sent
	 * them: the receive of a request, in softirq, or the work (resp.c,
	 * resp_run()).
	 */
	SOFTCM_RC_RESP_RCV,
	SOFTCM_RC_RESP_WORK,
	/*
	 * Payload bytes (of tx_bytes) copied into their packets: inline
	 * data, payloads under SOFTCM_RC_ZCOPY_MIN, and those whose pages
	 * would not fit one skb's fragments; the rest leaves from the
	 * region's pages (rcxmit.c).
	 */
	SOFTCM_RC_TX_COPIED,
	/*
	 * Packets the stack would not send, lost for the peer (the
	 * requester's come again with its timer): with no route to the peer
	 * (its link down, say)...
	 */
	SOFTCM_RC_TX_NO_ROUTE,
	/* ... or refused below the route (a full queue, a device going away) */
	SOFTCM_RC_TX_ERRORS,
	/*
	 * The send queue's DOORBELLs received, and the WRs the kernel took
	 * from it (after a DOORBELL or a POST_SEND): those beyond the
	 * doorbells were posted while the kernel ran and needed none (qp.c).
	 */
	SOFTCM_RC_DOORBELLS,
	SOFTCM_RC_SQ_WRS,
	/*
	 * Packets (of tx_packets) that left with others in one UDP GSO skb
	 * (rcxmit.c's batches, the namespace's tx_gso)
	 */
	SOFTCM_RC_TX_GSO,
	/*
	 * Times the responder stopped with SOFTCM_RC_RESP_HIGH of its skbs
	 * still held by the stack (a qdisc, a device's ring), to go on when
	 * they are down to SOFTCM_RC_RESP_LOW (rcxmit.c)
	 */
	SOFTCM_RC_RESP_STOPS,
	/*
	 * Times the responder, on one CPU, waited for its skbs sent from
	 * another to leave the stack, so as not to overtake them (rcxmit.c)
	 */
	SOFTCM_RC_RESP_CPU_WAITS,
	/*
	 * Last packets sent again to ask for the ACK of messages sent
	 * without AckReq (req.c, "AckReq"); not in retransmits
	 */
	SOFTCM_RC_ACK_PROBES,
	/*
	 * Packets (of rx_packets) the QP's state does not take: a request
	 * outside RTR and RTS, a response outside RTS (to a QP never in RTR,
	 * which has no peer, the address check drops them: SOFTCM_RC_DROPS)
	 */
	SOFTCM_RC_STATE_DROPS,
	/*
	 * Requests refused with a Remote Access Error because their rkey
	 * names no region of the QP's PD: none at all, a local key, another
	 * PD's (softcm_mr_remote_*(): -ENOENT)
	 */
	SOFTCM_RC_RKEY_NAKS_SENT,
	SOFTCM_RC_COUNTERS
};

/*
 * Per-namespace counters of CM traffic, shown in /proc/net/softcm_stats
 * in this order.  Messages in and out are counted by attribute
 * (SOFTCM_STAT_RX + attr - SOFTCM_CM_REQ); a dropped packet is counted
 * once, under the first reason that applies.
 */
enum softcm_stat {
	SOFTCM_STAT_RX,
	SOFTCM_STAT_TX = SOFTCM_STAT_RX + 9,
	SOFTCM_STAT_RETRANSMITS = SOFTCM_STAT_TX + 9,
	SOFTCM_STAT_TIMEOUTS,
	SOFTCM_STAT_DUPLICATES,
	SOFTCM_STAT_DROP_LENGTH,	/* not one CM MAD's worth of RoCEv2 */
	SOFTCM_STAT_DROP_HEADER,	/* BTH opcode, version, QPN */
	SOFTCM_STAT_DROP_QKEY,
	SOFTCM_STAT_DROP_PKEY,
	SOFTCM_STAT_DROP_ICRC,
	SOFTCM_STAT_DROP_MAD,		/* not a CM MAD we can decode */
	SOFTCM_STAT_DROP_UNKNOWN,	/* no connection has these comm IDs */
	SOFTCM_STAT_DROP_STALE,		/* wrong state for this message */
	SOFTCM_STAT_DROP_PEER,		/* comm IDs match, sender does not */
	SOFTCM_STAT_DROP_BACKLOG,
	SOFTCM_STAT_DROP_QUEUE,		/* receive queue full */
	SOFTCM_STAT_DROP_NOMEM,
	SOFTCM_STAT_TX_ERRORS,		/* no route, or the stack refused */
	/*
	 * Addresses that do not hold: a packet not sent to this host alone
	 * (broadcast, multicast), or a request whose rdma_cm header names
	 * other addresses than the packet's own (rejected, not dropped).
	 */
	SOFTCM_STAT_BAD_ADDRESS,
	SOFTCM_STAT_NEIGH_UPDATES,	/* valid neighbour updates seen */
	SOFTCM_STAT_NEIGH_WAKEUPS,	/* ids they woke (next hop matched) */
	/* REQs beyond a listener's backlog held (and MRAed), and answered */
	SOFTCM_STAT_REQ_HELD,
	SOFTCM_STAT_REQ_PROMOTED,
	SOFTCM_STAT_GID_TABLE_FULL,	/* addresses left out of the GID table */
	/* RC packets from or to other addresses than their QP's path */
	SOFTCM_STAT_DROP_ADDRESS,
	/* data packets whose BTH names no QP that takes them */
	SOFTCM_STAT_DROP_QPN,
	/* the RC data path's counters, summed over the namespace's QPs */
	SOFTCM_STAT_RC,
	SOFTCM_STAT_COUNT = SOFTCM_STAT_RC + SOFTCM_RC_COUNTERS
};

/* REJ reasons (IBTA table 103) are below 64; any larger shares slot 63. */
#define SOFTCM_REJ_SLOTS	64

/*
 * Per CPU: the data path counts every packet, and one namespace-wide
 * atomic per counter would bounce its cache line between the CPUs that
 * packets of different QPs arrive on.  Readers sum over the CPUs.
 */
struct softcm_stats_cpu {
	unsigned long v[SOFTCM_STAT_COUNT];
	unsigned long rej[2][SOFTCM_REJ_SLOTS];	/* [0] received, [1] sent */
};

struct softcm_stats {
	struct softcm_stats_cpu __percpu *cpu;
};

static inline void softcm_stat_add(struct softcm_stats *s, enum softcm_stat i,
				   unsigned long n)
{
	this_cpu_add(s->cpu->v[i], n);
}

static inline void softcm_stat_inc(struct softcm_stats *s, enum softcm_stat i)
{
	softcm_stat_add(s, i, 1);
}

static inline void softcm_stat_rej(struct softcm_stats *s, bool tx, u16 reason)
{
	this_cpu_inc(s->cpu->rej[tx][min_t(u16, reason, SOFTCM_REJ_SLOTS - 1)]);
}

static inline enum softcm_stat softcm_stat_msg(enum softcm_stat dir, u8 attr)
{
	return dir + attr - SOFTCM_CM_REQ;
}

const char *softcm_stat_name(enum softcm_stat i);
const char *softcm_rc_counter_name(enum softcm_rc_counter c);
unsigned long softcm_stat_read(const struct softcm_stats *s, enum softcm_stat i);
int softcm_stats_init(struct softcm_stats *s);
void softcm_stats_uninit(struct softcm_stats *s);

struct net;
int softcm_stats_proc_init(struct net *net);
void softcm_stats_proc_uninit(struct net *net);

#endif /* _SOFTCM_STATS_H */
