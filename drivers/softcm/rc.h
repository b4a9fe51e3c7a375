/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Reliable Connected transport (IBTA chapter 9) between a QP and its
 * peer, as rdma_rxe puts it on the wire: the requester (req.c) turns the
 * send queue's WRs into packets, the responder (resp.c) executes the
 * requests it receives against the receive queue, the completer (comp.c)
 * retires WRs as ACKs arrive, and rcxmit.c builds and routes the packets
 * of all three.
 */
#ifndef _SOFTCM_RC_H
#define _SOFTCM_RC_H

#include <linux/gfp_types.h>
#include <linux/in6.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <net/dst_cache.h>
#include <uapi/linux/softcm.h>

#include "limits.h"
#include "stats.h"

struct sk_buff;
struct softcm_ib_hdr;
struct softcm_net;
struct softcm_qp;

/*
 * What the kernel keeps of a send WR it took from the ring: the slot's
 * copy (its SGEs or inline bytes after it) and the PSNs it was given.
 */
struct softcm_swqe {
	u32 len;		/* bytes of the message */
	u32 first_psn;
	u32 npkts;		/* PSNs it takes: at least one */
	/* an RDMA READ or an atomic: its responses complete it, it takes a credit */
	bool read;
	bool atomic;		/* an atomic: one PSN, its ATOMIC ACKNOWLEDGE */
	/* a packet's pages needed more fragments than an skb has: copy it all */
	bool copy;
};

/*
 * One of the responder's READ and atomic resources (max_dest_rd_atomic of
 * them, rounded up to a power of two as rxe): a READ or atomic accepted,
 * kept after its responses went so that a duplicate of it can be answered
 * again.  Its responses leave from the request's receive and the
 * responder's work (resp_run()), @cur_psn the next one; the run that
 * began at @seq_psn begins with a FIRST or ONLY.
 * An atomic's one response is its ATOMIC ACKNOWLEDGE, with @orig, the
 * value the atomic found: a duplicate is answered with it and not
 * executed again (IBTA 9.9.3.3, rxe's res->atomic.orig_val).
 */
struct softcm_rd_res {
	bool atomic;
	u64 orig;
	u64 va;
	u32 rkey;
	u32 len;
	u32 first_psn;
	u32 npkts;
	u32 seq_psn;
	u32 cur_psn;
};

/*
 * The packets a requester run sends before it lets others have the CPU:
 * the work, or a poster's system call, which hands the rest to the work.
 */
#define SOFTCM_RC_BATCH		64
/*
 * The batches a poster's system call sends: 1024 packets, as rxe's
 * post runs its requester for RXE_MAX_ITERATIONS, the CPU yielded
 * between batches; the rest from the work.
 */
#define SOFTCM_RC_POST_RUNS	16
/*
 * With the namespace's tx_zcopy, a SEND's or WRITE's payload of this
 * many bytes or more from its SGEs leaves from their pinned pages,
 * attached to the skb; a shorter one is copied, which costs less than
 * the page references and the trailer's fragment (rcxmit.c).  Not
 * tuned: below any path MTU's full packet.
 */
#define SOFTCM_RC_ZCOPY_MIN	512
/*
 * A READ asked for whose responses stop coming (after one of its own or
 * of the READ before it) is asked again from the first one missing after
 * 1/2^SHIFT of the QP's timeout, SOFTCM_RC_PROBE_MIN_MS at least (req.c,
 * softcm_rc_arm_probe()).
 */
#define SOFTCM_RC_PROBE_SHIFT	8
#define SOFTCM_RC_PROBE_MIN_MS	10
/* PSNs outstanding at most, as rxe's window */
#define SOFTCM_RC_WINDOW	128
/* within a message, AckReq once more than this many went without, as rxe */
#define SOFTCM_RC_ACKREQ_EVERY	64
/*
 * An unsignalled message that follows another sent in the same tick goes
 * without AckReq, up to this many in a row (a quarter of the send queue
 * at most), and a tail so left is asked for by sending its last packet
 * again (an ACK probe) after SOFTCM_RC_TAIL_TICKS ticks without another
 * message (req.c, "AckReq", Documentation/protocol.rst).
 */
#define SOFTCM_RC_ACKREQ_WRS	16
#define SOFTCM_RC_TAIL_TICKS	2
/*
 * The responder's skbs the stack may hold at once (in a qdisc, a device's
 * ring): it stops at HIGH and goes on at LOW, as rxe's requester and
 * responder do with their skb_out, so that a peer's READs fill no queue
 * of the host's past that (rcxmit.c, "held").  The requester is bounded
 * by its window already.
 */
#define SOFTCM_RC_RESP_HIGH	64
#define SOFTCM_RC_RESP_LOW	16

/*
 * A QP's RC state, and the copies of the WRs in [sq_cons, sq_next):
 * everything but @work, @timer and @dst under the QP's lock.  An ACK, a
 * flush or a reset retires a WR and frees its slot for the next one, so
 * nothing reads a copy outside the lock.
 */
struct softcm_rc {
	/* the send queue: WRs taken (sq_cons <= done <= sq_next) */
	u32 sq_next;
	u32 epoch;			/* flushes and resets of the queue */
	u8 *shadow;			/* sq_entries slots of sq_stride bytes */
	struct softcm_swqe *swqe;	/* sq_entries */
	/* requester */
	u32 req_wqe;			/* the WR being sent */
	u32 req_off;			/* its next byte */
	u32 psn;			/* the next PSN to send */
	u32 una;			/* the oldest PSN not acknowledged */
	u32 tail_psn;			/* the first PSN of the next WR taken */
	u32 max_psn;			/* one past the highest PSN sent */
	u32 max_wqe;			/* one past the highest WR begun */
	u32 noack;			/* packets since the last AckReq */
	u32 unasked;			/* messages since the last AckReq */
	unsigned long last_msg;		/* jiffies of the last message's end */
	u8 retry_left;
	u8 rnr_left;
	bool rnr_wait;			/* the timer waits out an RNR NAK */
	/* a READ is being asked again from una: not again until una moves */
	bool rd_retry;
	/* the timer waits for the next response of the READ at una, not the timeout */
	bool rd_probe;
	/* the timer waits to ask for the ACK of a tail sent without AckReq */
	bool tail_probe;
	/*
	 * The newest packet sent is a message's last that went without
	 * AckReq, and none asked for it since: a tail only a probe asks
	 * for.  Within a message, a packet asked for at least every
	 * SOFTCM_RC_ACKREQ_EVERY + 2, in a window of more, brings the ACK
	 * that moves it on.
	 */
	bool tail_unasked;
	/*
	 * The requester is being run, by the work or by a poster
	 * (req_run()): one sender at a time, and the one that clears it
	 * looked for packets to send in the same hold of the lock.
	 */
	bool req_busy;
	struct timer_list timer;	/* retransmission, RNR wait, READ wait, ACK probe */
	struct work_struct work;	/* the requester */
	/* responder */
	u32 epsn;			/* the PSN expected */
	u32 msn;			/* messages completed */
	bool nak_sent;			/* a sequence NAK for epsn is out */
	u8 in_msg;			/* a message's FIRST came, its LAST not: */
#define SOFTCM_RC_IN_SEND	1	/* a SEND's */
#define SOFTCM_RC_IN_WRITE	2	/* an RDMA WRITE's */
	u32 roff;			/* bytes of it placed */
	u64 wva;			/* the WRITE's RETH: where it goes */
	u32 wrkey;
	u32 wlen;			/* and how long it is */
	struct softcm_recv_wr rwr;	/* its receive WQE, copied */
	struct softcm_sge rsge[SOFTCM_MAX_SGE];
	/*
	 * READ resources: rd_res[i & (rd_n - 1)], i in [rd_head - rd_n,
	 * rd_head) the ones kept, rd_cur the oldest whose responses are not
	 * all sent.  While responses wait, an ACK or NAK decided after them
	 * waits in @pend (latest wins: ACKs are cumulative), so that the
	 * requester sees responses and ACKs in PSN order; @resp_busy while
	 * a sender (a receive or the work) sends one outside the lock.
	 */
	struct softcm_rd_res *rd_res;	/* SOFTCM_MAX_QP_RD_ATOM */
	u32 rd_n;			/* 0: READs are Invalid Requests */
	u32 rd_head;
	u32 rd_cur;
	bool resp_busy;
	bool pend_valid;
	struct {
		u8 opcode;
		u32 psn;
		u8 syndrome;
		u32 msn;
	} pend;
	struct work_struct resp_work;	/* READ responses */
	struct softcm_rc_held *held;	/* the responder's skbs in the stack */
	/* the path, fixed by the AV at RTR */
	bool path_ok;
	bool v6;
	struct in6_addr saddr;
	struct in6_addr daddr;
	int ifindex;
	u16 sport;
	u8 tos;
	u8 hop_limit;
	u16 headroom;			/* the device's, IP's and UDP's */
	u32 mtu;			/* bytes */
	struct dst_cache dst;
	atomic_long_t cnt[SOFTCM_RC_COUNTERS];	/* softcm_rc_count() */
};

/* Why the requester goes back: the softcm_rc_retransmit tracepoint's. */
enum {
	SOFTCM_TRACE_RETRANSMIT_TIMEOUT,
	SOFTCM_TRACE_RETRANSMIT_SEQ_NAK,
	SOFTCM_TRACE_RETRANSMIT_RNR,
	SOFTCM_TRACE_RETRANSMIT_READ_STALL,
	SOFTCM_TRACE_RETRANSMIT_TAIL,
};

int softcm_rc_init(struct softcm_qp *qp);
void softcm_rc_uninit(struct softcm_qp *qp);
void softcm_rc_shutdown(struct softcm_qp *qp);
void softcm_rc_state_changed(struct softcm_qp *qp, u32 prev, u32 next);
void softcm_rc_flush_sq(struct softcm_qp *qp);
void softcm_rc_queued(struct softcm_qp *qp);
void softcm_rc_push(struct softcm_qp *qp);
bool softcm_rc_sendable(struct softcm_qp *qp);
void softcm_rc_complete_err(struct softcm_qp *qp, u32 status);
void softcm_rc_complete_err_at(struct softcm_qp *qp, u32 i, u32 status);
int softcm_rc_take(struct softcm_qp *qp, const struct softcm_sq_wqe *w,
		   const void *slot);
void softcm_rc_arm(struct softcm_qp *qp);
void softcm_rc_arm_probe(struct softcm_qp *qp);
void softcm_rc_arm_tail(struct softcm_qp *qp);
void softcm_rc_go_back(struct softcm_qp *qp, u32 psn);
bool softcm_rc_ask_last(struct softcm_qp *qp, const struct softcm_sq_wqe *w, bool resend);

/*
 * A received packet's payload: @skb's bytes from @off on, as many as its
 * header says, in the skb's linear part or its fragments, copied from
 * where they lie (rcrecv.c checked the length).
 */
struct softcm_rc_payload {
	const struct sk_buff *skb;
	unsigned int off;
};

/* comp.c and resp.c: a packet for @qp, entered and locked */
bool softcm_comp_rcv(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
		     const struct softcm_rc_payload *pl);
bool softcm_resp_rcv(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
		     const struct softcm_rc_payload *pl, struct softcm_ib_hdr *ack, bool *push);
/* and what they made sendable, entered, in softirq, unlocked */
void softcm_rc_push_rcv(struct softcm_qp *qp);
void softcm_resp_push(struct softcm_qp *qp);
void softcm_resp_work(struct work_struct *work);
void softcm_resp_reset(struct softcm_qp *qp);

/* rcxmit.c */
/*
 * Packets that leave together (req.c, resp.c): each built, BTH to ICRC,
 * in a page fragment of its own of one skb whose linear part is only
 * headroom, and sent as one UDP GSO skb (transport.c), so that the IP
 * layer, the device and the receiver's stack up to its UDP socket are
 * crossed once for up to MAX_SKB_FRAGS packets.  A batch begun by a
 * message's last or only packet is that packet's linear skb until a second
 * one comes, sent as any other if none does.  Segmentation wants every
 * packet but the last of the first one's size: a larger one, or any after
 * a smaller one, waits for the next batch.
 */
struct softcm_rc_batch {
	struct sk_buff *first;	/* the only packet so far, linear, or NULL */
	struct sk_buff *skb;	/* the packets, in fragments (rcxmit.c) */
	struct sk_buff *next_skb;	/* the first one being built */
	u8 *next;		/* or a later one, not yet on @skb */
	unsigned int next_len;
	unsigned int seg;	/* the first packet's size */
	unsigned int bytes;	/* payload, for the counters */
	bool closed;		/* a smaller packet came: it is the last */
	bool held;		/* the responder's: its skbs are counted */
};

struct softcm_rc_held;
int softcm_rc_held_init(struct softcm_qp *qp);
void softcm_rc_held_shutdown(struct softcm_qp *qp);
void softcm_rc_held_put(struct softcm_rc_held *h);
bool softcm_rc_resp_may_send(struct softcm_qp *qp);
bool softcm_rc_resp_elsewhere(struct softcm_qp *qp);
bool softcm_rc_resp_wait_elsewhere(struct softcm_qp *qp);
int softcm_rc_path_init(struct softcm_qp *qp);
bool softcm_rc_batchable(struct softcm_qp *qp, const struct softcm_ib_hdr *h);
bool softcm_rc_batch_empty(const struct softcm_rc_batch *b);
bool softcm_rc_batch_full(const struct softcm_rc_batch *b, const struct softcm_ib_hdr *h);
u8 *softcm_rc_batch_next(struct softcm_qp *qp, struct softcm_rc_batch *b,
			 struct softcm_ib_hdr *h, gfp_t gfp);
void softcm_rc_batch_keep(struct softcm_rc_batch *b, const struct softcm_ib_hdr *h);
void softcm_rc_batch_drop(struct softcm_rc_batch *b);
void softcm_rc_batch_send(struct softcm_qp *qp, struct softcm_rc_batch *b,
			  enum softcm_rc_counter via);
struct sk_buff *softcm_rc_alloc(struct softcm_qp *qp, struct softcm_ib_hdr *h,
				u8 **payload, gfp_t gfp);
int softcm_rc_put_trailer(struct sk_buff *skb, unsigned int payload_len);
int softcm_rc_xmit(struct softcm_qp *qp, struct sk_buff *skb);
int softcm_rc_resp_xmit(struct softcm_qp *qp, struct sk_buff *skb);
void softcm_rc_send_ack(struct softcm_qp *qp, struct softcm_ib_hdr *h);
int softcm_rc_rcv_init(void);
void softcm_rc_rcv_uninit(void);

/* rcstats.c */
void softcm_rc_count(struct softcm_qp *qp, enum softcm_rc_counter c, unsigned long n);
struct net;
int softcm_qps_proc_init(struct net *net);
void softcm_qps_proc_uninit(struct net *net);

#endif /* _SOFTCM_RC_H */
