/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_STATS_H
#define _SOFTCM_STATS_H

#include <linux/atomic.h>
#include <softcm/wire.h>

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
	/* the RC data path's responder: requests answered with an RNR NAK */
	SOFTCM_STAT_RNR_NAKS_SENT,
	/* and RDMA requests refused by their rkey, bounds, PD or access */
	SOFTCM_STAT_DROP_ACCESS,
	/* duplicate READs answered again from the responder's resources */
	SOFTCM_STAT_READ_REPLAYS,
	/* READs beyond the responder's resources, dropped (rd_atomic) */
	SOFTCM_STAT_RD_EXHAUSTED,
	/* READs the requester asked again (a response or an ACK past it) */
	SOFTCM_STAT_READ_RETRIES,
	SOFTCM_STAT_COUNT
};

/* REJ reasons (IBTA table 103) are below 64; any larger shares slot 63. */
#define SOFTCM_REJ_SLOTS	64

struct softcm_stats {
	atomic_long_t v[SOFTCM_STAT_COUNT];
	atomic_long_t rej[2][SOFTCM_REJ_SLOTS];	/* [0] received, [1] sent */
};

static inline void softcm_stat_inc(struct softcm_stats *s, enum softcm_stat i)
{
	atomic_long_inc(&s->v[i]);
}

static inline void softcm_stat_rej(struct softcm_stats *s, bool tx, u16 reason)
{
	atomic_long_inc(&s->rej[tx][min_t(u16, reason, SOFTCM_REJ_SLOTS - 1)]);
}

static inline enum softcm_stat softcm_stat_msg(enum softcm_stat dir, u8 attr)
{
	return dir + attr - SOFTCM_CM_REQ;
}

const char *softcm_stat_name(enum softcm_stat i);

struct net;
int softcm_stats_proc_init(struct net *net);
void softcm_stats_proc_uninit(struct net *net);

#endif /* _SOFTCM_STATS_H */
