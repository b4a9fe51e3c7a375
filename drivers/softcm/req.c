// SPDX-License-Identifier: GPL-2.0
/*
 * The RC requester: the send WRs the send queue's consumer took (qp.c,
 * sq_take()) become packets of at most the path MTU, FIRST/MIDDLE/LAST
 * or ONLY, with consecutive PSNs given at take time, so that a WR's
 * PSNs never change when it is sent again.  A run of the requester
 * (req_run()) sends SOFTCM_RC_BATCH packets at most, no more than
 * SOFTCM_RC_WINDOW PSNs ahead of the oldest unacknowledged one; each
 * packet is decided under the QP's lock and built and sent outside it.
 *
 * Who runs it: the system call that took the WRs (DOORBELL, POST_SEND:
 * softcm_rc_push()), as rxe's post runs its requester, so that a post on
 * an idle QP leaves without waking a kworker; the receive of an ACK or a
 * response that opened the window or asked for a go-back-N, in its
 * softirq once the QP's lock is released (softcm_rc_push_rcv()), as
 * rxe's completer runs its requester from its tasklet; the QP's work
 * item for the rest of a run whose budget was spent and for the timer.
 * One sender at a time, req_busy under the QP's lock: two would hand
 * PSNs to the stack out of order.  Everything else that gives the
 * requester something to send does so under that lock and then queues
 * the work unless a sender runs (softcm_rc_queued()); a sender stops
 * only in a hold of the lock in which req_next() found nothing (or its
 * budget is spent, and it queues the work), so no such change is lost.
 *
 * An RDMA READ is one request packet that takes as many PSNs as its
 * responses (max(1, ceil(len / PMTU)), as rxe); at most max_rd_atomic of
 * them are outstanding, exactly as negotiated, and a WR with
 * IBV_SEND_FENCE waits until the READs before it completed.  Sent again
 * from a PSN inside it, it asks for the rest, from the byte that PSN's
 * response begins with: the subset a responder replays.  An atomic
 * (COMPARE SWAP, FETCH ADD: one AtomicETH packet, one PSN, as rxe) is a
 * READ here: it takes a credit of the same max_rd_atomic, is completed by
 * its one response (ATOMIC ACKNOWLEDGE) and is sent again whole, with
 * its PSN, from which the responder answers a duplicate without
 * executing it again.  A SEND with invalidate ends with a LAST or ONLY
 * WITH INVALIDATE carrying the WR's rkey in its IETH, as rxe's.
 *
 * AckReq: rxe asks for an ACK on every message's last packet, and a
 * responder sends one ACK per ask, so a stream of small messages costs
 * as many ACKs as messages, each one more crossing of both hosts'
 * stacks.  softcm asks, as rxe, on every packet of a message sent again,
 * on a READ or an atomic, within a message after SOFTCM_RC_ACKREQ_EVERY
 * packets, and on a message's last packet if its WR is signalled, or the
 * message before it ended in an earlier tick of jiffies (no stream), or
 * SOFTCM_RC_ACKREQ_WRS messages (a quarter of the send queue at most)
 * went without; an ACK acknowledges every PSN before it, so the ones not
 * asked for are acknowledged with the next one asked.  A stream's tail
 * left without one has the timer wait SOFTCM_RC_TAIL_TICKS ticks after
 * the last message, then send that message's last packet again with
 * AckReq (an ACK probe): a duplicate, which a responder acknowledges
 * without executing it again (rxe's and softcm's), or, if packets before
 * it were lost, a sequence NAK that sends them again.  So a tail holds
 * its send queue slots a few milliseconds at most, not a timeout.
 *
 * The timer is the retransmission timer (4.096 us * 2^timeout, rxe's
 * and the IBTA's), or, after an RNR NAK, the wait the NAK asked for, or,
 * while a READ's responses come, the wait for the next one
 * (softcm_rc_arm_probe()), or the wait before an ACK probe
 * (softcm_rc_arm_tail()).  All run under the QP's lock and only queue
 * the work.
 */

#include <kunit/visibility.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "core.h"
#include "cq.h"
#include "ibhdr.h"
#include "netns.h"
#include "mr.h"
#include "psn.h"
#include "qp.h"
#include "rc.h"
#include "ring.h"
#include "stats.h"
#include "trace.h"

struct req_pkt {
	struct softcm_ib_hdr h;
	u32 wqe;
	u32 off;
	u32 epoch;	/* the send queue's, when req_next() chose it */
	bool zcopy;	/* the payload from the region's pages (rcxmit.c) */
};

static struct softcm_sq_wqe *shadow(struct softcm_qp *qp, u32 i)
{
	return (struct softcm_sq_wqe *)(qp->rc.shadow +
					(size_t)(i & (qp->sq_entries - 1)) * qp->sq_stride);
}

static struct softcm_swqe *swqe(struct softcm_qp *qp, u32 i)
{
	return &qp->rc.swqe[i & (qp->sq_entries - 1)];
}

static unsigned long rc_timeout(const struct softcm_qp *qp)
{
	return nsecs_to_jiffies(4096ULL << qp->attr.timeout) + 1;
}

/* Start, or restart, the retransmission timer; timeout 0 means none. */
void softcm_rc_arm(struct softcm_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	qp->rc.rd_probe = false;
	qp->rc.tail_probe = false;
	if (qp->attr.timeout && !qp->rc.rnr_wait)
		mod_timer(&qp->rc.timer, jiffies + rc_timeout(qp));
}

/*
 * The newest packets went without AckReq: ask for their ACK
 * SOFTCM_RC_TAIL_TICKS ticks after the last of them unless another
 * message asks first (rc_timer()).  Pushed back by every such packet,
 * so a stream's own ACKs come from its asks and the probe goes after
 * its end.  A READ's wait (shorter than the timeout, and asking from
 * una again) stays as it is.
 */
void softcm_rc_arm_tail(struct softcm_qp *qp)
{
	struct softcm_rc *rc = &qp->rc;

	lockdep_assert_held(&qp->lock);
	if (rc->rd_probe || rc->rnr_wait)
		return;
	rc->tail_probe = true;
	mod_timer(&rc->timer, jiffies + SOFTCM_RC_TAIL_TICKS);
}

/*
 * A response moved una to a READ asked for, mid-way through it or at
 * the next one: its next response is due at once, so wait for it a
 * short time (1/256 of the timeout, 10 ms at least), not the whole
 * timeout.  A READ's responses that stop with no later packet to show
 * the gap are otherwise recovered only by the timeout (rdma_cm's:
 * 2.1 s, a hundred times a 1-MiB READ).  rxe's responder makes that
 * happen: it sends a READ's responses back to back from its tasklet,
 * 1 024 for 1 MiB, and where they overflow the receiving CPU's backlog
 * (netdev_max_backlog, 1 000; a veth), the failed send ends the burst
 * (an RNR NAK, lost with it); rxe then resumes that READ when the next
 * request arrives and discards that request (6.1's get_req()), so the
 * next READ is never answered.  When the wait ends, rc_timer() asks
 * for the READ from una again, as for a gap, not counted against
 * retry_cnt; the timeout follows.  A stall that was only a slow
 * responder costs the rest of the READ sent twice.
 */
void softcm_rc_arm_probe(struct softcm_qp *qp)
{
	struct softcm_rc *rc = &qp->rc;
	unsigned long t = rc_timeout(qp), p;

	lockdep_assert_held(&qp->lock);
	p = max(t >> SOFTCM_RC_PROBE_SHIFT, msecs_to_jiffies(SOFTCM_RC_PROBE_MIN_MS));
	/* an RNR wait, a retry under way, no timer, or one short enough */
	if (rc->rnr_wait || rc->rd_retry || !qp->attr.timeout || p > t / 2) {
		softcm_rc_arm(qp);
		return;
	}
	rc->rd_probe = true;
	rc->tail_probe = false;
	mod_timer(&rc->timer, jiffies + p);
}

/*
 * The requester has something new to send: the work sends it, unless a
 * sender runs, which sees it at its next req_next() (in a later hold of
 * the lock than this one).
 */
void softcm_rc_queued(struct softcm_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (!qp->rc.req_busy)
		queue_work(softcm_workqueue(), &qp->rc.work);
}

/*
 * Send again from @psn, one of the PSNs outstanding or the one after
 * them all: the WR it belongs to and the byte of it that packet began
 * with, or the next WR to be taken.  The latter is an ACK that came for
 * packets sent before a go-back, while the requester was still sending
 * them again: it acknowledged every WR taken, and the requester must not
 * stay behind it (it would never send again: its PSN outside the window,
 * its WR index behind the queue's).
 */
void softcm_rc_go_back(struct softcm_qp *qp, u32 psn)
{
	struct softcm_rc *rc = &qp->rc;
	struct softcm_swqe *s;
	u32 i, d;

	lockdep_assert_held(&qp->lock);
	rc->noack = 0;
	for (i = qp->sq_cons; i != rc->sq_next; i++) {
		s = swqe(qp, i);
		d = softcm_psn_diff(psn, s->first_psn);
		if (d < s->npkts) {
			rc->req_wqe = i;
			rc->req_off = d * rc->mtu;
			rc->psn = psn;
			return;
		}
	}
	if (psn == rc->tail_psn) {
		rc->req_wqe = rc->sq_next;
		rc->req_off = 0;
		rc->psn = psn;
	}
}
EXPORT_SYMBOL_IF_KUNIT(softcm_rc_go_back);

/*
 * The WR taken at @i fails with @status, and the QP goes to ERR: the WRs
 * before it, not acknowledged, are flushed first (completions leave in
 * the send queue's order), then it completes with @status, then the
 * rest are flushed.  @i is one of the WRs taken and not completed.
 */
void softcm_rc_complete_err_at(struct softcm_qp *qp, u32 i, u32 status)
{
	struct softcm_sq_wqe *w;
	struct softcm_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = qp->qpn,
		.port_num = SOFTCM_PORT_NUM,
	};

	lockdep_assert_held(&qp->lock);
	if (i - qp->sq_cons < qp->rc.sq_next - qp->sq_cons) {
		for (;;) {
			w = shadow(qp, qp->sq_cons);
			wc.wr_id = w->wr.wr_id;
			wc.opcode = softcm_wc_opcode(w->wr.opcode);
			if (qp->sq_cons == i)
				wc.status = status;
			/* an error completes, signalled or not */
			softcm_cq_push(qp->scq, &wc, true);
			if (qp->sq_cons++ == i)
				break;
		}
		/* Pairs with the user's acquire of sq_cons: the slots are free. */
		smp_store_release(&qp->kpage->sq_cons, qp->sq_cons);
	}
	softcm_qp_set_err_locked(qp);
}

/* The WR at sq_cons fails with @status; the QP goes to ERR. */
void softcm_rc_complete_err(struct softcm_qp *qp, u32 status)
{
	softcm_rc_complete_err_at(qp, qp->sq_cons, status);
}

/* ERR: the WRs taken and not completed are flushed, oldest first. */
void softcm_rc_flush_sq(struct softcm_qp *qp)
{
	struct softcm_rc *rc = &qp->rc;
	struct softcm_sq_wqe *w;
	struct softcm_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = qp->qpn,
		.port_num = SOFTCM_PORT_NUM,
	};

	lockdep_assert_held(&qp->lock);
	if (qp->type != IB_QPT_RC)
		return;
	del_timer(&rc->timer);
	rc->rnr_wait = false;
	while (qp->sq_cons != rc->sq_next) {
		w = shadow(qp, qp->sq_cons);
		wc.wr_id = w->wr.wr_id;
		wc.opcode = softcm_wc_opcode(w->wr.opcode);
		softcm_cq_push(qp->scq, &wc, true);
		qp->sq_cons++;
	}
	/* Pairs with the user's acquire of sq_cons: the slots are free. */
	smp_store_release(&qp->kpage->sq_cons, qp->sq_cons);
	rc->req_wqe = rc->sq_next;
	rc->req_off = 0;
}

/*
 * Take the checked send WR copied at @w, at sq_next, for the requester:
 * its copy and its PSNs.  -EOPNOTSUPP if the requester cannot carry it
 * (no path, an opcode it lacks, more than a message), -EINVAL for an
 * atomic whose SGE is not the 8 bytes of the original value.
 */
int softcm_rc_take(struct softcm_qp *qp, const struct softcm_sq_wqe *w,
		   const void *slot)
{
	struct softcm_rc *rc = &qp->rc;
	struct softcm_sq_wqe *copy = shadow(qp, rc->sq_next);
	const struct softcm_sge *sge;
	struct softcm_swqe *s;
	u64 len = 0;
	u32 i;

	lockdep_assert_held(&qp->lock);
	/*
	 * No path (the AV's sgid went, or its family is not the dgid's):
	 * nothing can be sent.  And never more WRs than the queue holds:
	 * sq_ready() keeps the producer there, this keeps the shadow slots
	 * of WRs in flight from being overwritten if it ever did not.
	 */
	if (!rc->path_ok || rc->sq_next - qp->sq_cons >= qp->sq_entries)
		return -EOPNOTSUPP;
	switch (w->wr.opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
	case IB_UVERBS_WR_RDMA_READ:
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		break;
	default:
		return -EOPNOTSUPP;
	}
	/* the SGEs or inline bytes read once, after the checked WR */
	memcpy(copy + 1, (const struct softcm_sq_wqe *)slot + 1, qp->sq_stride - sizeof(*w));
	*copy = *w;
	if (w->wr.send_flags & IB_SEND_INLINE) {
		len = w->inline_len;
	} else {
		sge = (const struct softcm_sge *)(copy + 1);
		for (i = 0; i < w->wr.num_sge; i++)
			len += sge[i].length;
	}
	/* a message is at most 2^31 bytes (IBTA 9.7.2) */
	if (len > (1U << 31))
		return -EOPNOTSUPP;
	/* an atomic's one SGE (check_send()) takes the original value, all of it */
	if (softcm_is_atomic(w->wr.opcode) && len != sizeof(u64))
		return -EINVAL;
	s = swqe(qp, rc->sq_next);
	s->len = len;
	s->atomic = softcm_is_atomic(w->wr.opcode);
	s->npkts = s->atomic ? 1 : max_t(u32, 1, DIV_ROUND_UP(s->len, rc->mtu));
	s->read = w->wr.opcode == IB_UVERBS_WR_RDMA_READ || s->atomic;
	s->copy = false;
	s->first_psn = rc->tail_psn;
	rc->tail_psn = softcm_psn_add(rc->tail_psn, s->npkts);
	rc->sq_next++;
	return 0;
}

/*
 * An atomic's AtomicETH, as rxe's: COMPARE SWAP carries the swap value
 * and the compare value, FETCH ADD the addend and a compare of 0.
 */
static void req_atomic(struct softcm_ib_hdr *h, const struct softcm_sq_wqe *w)
{
	bool cas = w->wr.opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;

	h->opcode = cas ? SOFTCM_IB_COMPARE_SWAP : SOFTCM_IB_FETCH_ADD;
	h->atomic.va = w->wr.wr.atomic.remote_addr;
	h->atomic.rkey = w->wr.wr.atomic.rkey;
	h->atomic.swap_add = cas ? w->wr.wr.atomic.swap : w->wr.wr.atomic.compare_add;
	h->atomic.compare = cas ? w->wr.wr.atomic.compare_add : 0;
}

/*
 * A READ request, from the byte req_off (a PSN inside the READ when it is
 * asked again): the rest of it, at the PSN whose response begins there.
 * The PSNs of its responses are its own: the next request after them.
 * An atomic's request, whole, at its one PSN.
 */
static bool req_read(struct softcm_qp *qp, struct req_pkt *p,
		     const struct softcm_sq_wqe *w, const struct softcm_swqe *s)
{
	struct softcm_rc *rc = &qp->rc;

	memset(p, 0, sizeof(*p));
	if (s->atomic) {
		req_atomic(&p->h, w);
	} else {
		p->h.opcode = SOFTCM_IB_READ_REQUEST;
		p->h.reth.va = w->wr.wr.rdma.remote_addr + rc->req_off;
		p->h.reth.rkey = w->wr.wr.rdma.rkey;
		p->h.reth.len = s->len - rc->req_off;
	}
	p->h.psn = rc->psn;
	p->h.ackreq = true;
	rc->noack = 0;
	p->wqe = rc->req_wqe;
	p->off = rc->req_off;
	p->epoch = rc->epoch;

	rc->req_wqe++;
	rc->req_off = 0;
	rc->psn = softcm_psn_add(s->first_psn, s->npkts);
	if (softcm_psn_cmp(rc->psn, rc->max_psn) > 0)
		rc->max_psn = rc->psn;
	/* its responses, and the ACK of what came before, answer it */
	if (rc->psn == rc->max_psn)
		rc->tail_unasked = false;
	if (!timer_pending(&rc->timer))
		softcm_rc_arm(qp);
	return true;
}

/*
 * Whether the last packet of the message @w asks for an ACK ("AckReq"
 * above): @resend, a packet sent again, always does, and is no
 * message's end for the next to follow in its tick (a probe sent after
 * a pause would otherwise let the message after it go unasked).
 */
bool softcm_rc_ask_last(struct softcm_qp *qp, const struct softcm_sq_wqe *w, bool resend)
{
	struct softcm_rc *rc = &qp->rc;
	unsigned long now = jiffies;
	bool stream;

	lockdep_assert_held(&qp->lock);
	if (resend)
		return true;
	stream = rc->last_msg == now;
	rc->last_msg = now;
	return !stream || qp->sq_sig_all || (w->wr.send_flags & IB_SEND_SIGNALED) ||
	       ++rc->unasked >= min_t(u32, SOFTCM_RC_ACKREQ_WRS, qp->sq_entries / 4);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_rc_ask_last);

static u8 write_opcode(bool first, bool last, bool imm)
{
	if (first && last)
		return imm ? SOFTCM_IB_WRITE_ONLY_IMM : SOFTCM_IB_WRITE_ONLY;
	if (first)
		return SOFTCM_IB_WRITE_FIRST;
	if (last)
		return imm ? SOFTCM_IB_WRITE_LAST_IMM : SOFTCM_IB_WRITE_LAST;
	return SOFTCM_IB_WRITE_MIDDLE;
}

static u8 send_opcode(bool first, bool last, u32 wr_opcode)
{
	bool imm = wr_opcode == IB_UVERBS_WR_SEND_WITH_IMM;
	bool inv = wr_opcode == IB_UVERBS_WR_SEND_WITH_INV;

	if (first && last)
		return imm ? SOFTCM_IB_SEND_ONLY_IMM :
		       inv ? SOFTCM_IB_SEND_ONLY_INV : SOFTCM_IB_SEND_ONLY;
	if (first)
		return SOFTCM_IB_SEND_FIRST;
	if (last)
		return imm ? SOFTCM_IB_SEND_LAST_IMM :
		       inv ? SOFTCM_IB_SEND_LAST_INV : SOFTCM_IB_SEND_LAST;
	return SOFTCM_IB_SEND_MIDDLE;
}

/*
 * Whether the WR at req_wqe must wait for READs before it: it is a READ
 * (or atomic) and max_rd_atomic of them are outstanding, or it is fenced
 * and one is.
 * The WRs before it are at most the window's (SOFTCM_RC_WINDOW PSNs).
 */
static bool rd_wait(struct softcm_qp *qp, const struct softcm_sq_wqe *w,
		    const struct softcm_swqe *s)
{
	struct softcm_rc *rc = &qp->rc;
	u32 i, n = 0;

	if (!s->read && !(w->wr.send_flags & IB_SEND_FENCE))
		return false;
	for (i = qp->sq_cons; i != rc->req_wqe; i++)
		n += swqe(qp, i)->read;
	if (w->wr.send_flags & IB_SEND_FENCE)
		return n;
	return n >= qp->attr.max_rd_atomic;
}

/*
 * Whether there may be a packet to send: a WR not all sent, in RTS, no
 * RNR wait, room in the window.  req_next() has the last word (a READ's
 * credits, a fence).
 */
static bool req_ready(struct softcm_qp *qp)
{
	struct softcm_rc *rc = &qp->rc;

	lockdep_assert_held(&qp->lock);
	return !qp->dead && qp->state == IB_QPS_RTS && !rc->rnr_wait &&
	       rc->req_wqe != rc->sq_next && softcm_psn_diff(rc->psn, rc->una) < SOFTCM_RC_WINDOW;
}

/*
 * The next packet to send, in @p, and the send position past it; false
 * if there is none now (nothing to send, the window full, an RNR wait).
 */
static bool req_next(struct softcm_qp *qp, struct req_pkt *p)
{
	struct softcm_rc *rc = &qp->rc;
	const struct softcm_sq_wqe *w;
	const struct softcm_swqe *s;
	bool first, last, write, resend;
	u32 plen;

	if (!req_ready(qp))
		return false;
	w = shadow(qp, rc->req_wqe);
	s = swqe(qp, rc->req_wqe);
	if (WARN_ON_ONCE(rc->req_off > s->len))
		return false;
	if (rd_wait(qp, w, s))
		return false;
	if (s->read)
		return req_read(qp, p, w, s);
	plen = min(rc->mtu, s->len - rc->req_off);
	first = !rc->req_off;
	last = rc->req_off + plen == s->len;
	write = w->wr.opcode == IB_UVERBS_WR_RDMA_WRITE ||
		w->wr.opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	memset(p, 0, sizeof(*p));
	if (write) {
		p->h.opcode = write_opcode(first, last,
					   w->wr.opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM);
		/* the RETH on the first packet: where, and how much in all */
		p->h.reth.va = w->wr.wr.rdma.remote_addr;
		p->h.reth.rkey = w->wr.wr.rdma.rkey;
		p->h.reth.len = s->len;
	} else {
		p->h.opcode = send_opcode(first, last, w->wr.opcode);
	}
	p->h.psn = rc->psn;
	p->h.payload_len = plen;
	p->h.imm = (__force __be32)w->wr.imm_data;
	/* SEND with invalidate: the rkey, in host order where the immediate goes */
	p->h.ieth_rkey = w->wr.imm_data;
	p->h.se = last && (w->wr.send_flags & IB_SEND_SOLICITED);
	/*
	 * As rxe within a message: on the 66th packet since the last
	 * AckReq, not the 64th; on its last, as softcm_rc_ask_last() decides.
	 */
	resend = softcm_psn_cmp(rc->psn, rc->max_psn) < 0;
	p->h.ackreq = (last && softcm_rc_ask_last(qp, w, resend)) ||
		      rc->noack++ > SOFTCM_RC_ACKREQ_EVERY;
	if (p->h.ackreq) {
		rc->noack = 0;
		rc->unasked = 0;
	}
	p->wqe = rc->req_wqe;
	p->off = rc->req_off;
	p->epoch = rc->epoch;
	p->zcopy = plen >= SOFTCM_RC_ZCOPY_MIN && !(w->wr.send_flags & IB_SEND_INLINE) &&
		   !s->copy && READ_ONCE(qp->sn->tx_zcopy);

	rc->req_off += plen;
	if (last) {
		rc->req_wqe++;
		rc->req_off = 0;
	}
	rc->psn = softcm_psn_add(rc->psn, 1);
	if (softcm_psn_cmp(rc->psn, rc->max_psn) > 0)
		rc->max_psn = rc->psn;
	/* the newest packet, new or sent again: whether a tail is left unasked */
	if (rc->psn == rc->max_psn)
		rc->tail_unasked = last && !p->h.ackreq;
	/* a resend asks on its last (softcm_rc_ask_last()): only a new one arms */
	if (rc->tail_unasked)
		softcm_rc_arm_tail(qp);
	else if (!timer_pending(&rc->timer))
		softcm_rc_arm(qp);
	return true;
}

/*
 * Whether @p's WR is still the one req_next() chose it from: not yet
 * completed, and the queue not flushed or reset since (a slot is reused
 * only then).  Its copy is then still in the shadow slot.
 */
static bool req_current(struct softcm_qp *qp, const struct req_pkt *p)
{
	struct softcm_rc *rc = &qp->rc;
	const struct softcm_swqe *s;

	lockdep_assert_held(&qp->lock);
	if (qp->dead || qp->state != IB_QPS_RTS || rc->epoch != p->epoch ||
	    p->wqe - qp->sq_cons >= rc->sq_next - qp->sq_cons)
		return false;
	s = swqe(qp, p->wqe);
	return p->off <= s->len && s->len - p->off >= p->h.payload_len;
}

/*
 * @p's payload (its WR's bytes from p->off) copied to @payload, or with
 * @skb attached to it as the region's pages: under the QP's lock, @p
 * current.  -E2BIG (its pages need more fragments than an skb has,
 * zero-copy only) or another errno, which fails the WR.
 */
static int req_payload(struct softcm_qp *qp, const struct req_pkt *p, u8 *payload,
		       struct sk_buff *skb)
{
	const struct softcm_sq_wqe *w = shadow(qp, p->wqe);

	lockdep_assert_held(&qp->lock);
	if (w->wr.send_flags & IB_SEND_INLINE) {
		memcpy(payload, (const u8 *)(w + 1) + p->off, p->h.payload_len);
		return 0;
	}
	if (skb)
		return softcm_mr_sge_attach(qp->sn, qp->pd, (const struct softcm_sge *)(w + 1),
					    w->wr.num_sge, p->off, skb, p->h.payload_len);
	if (!p->h.payload_len)
		return 0;
	return softcm_mr_sge_copy(qp->sn, qp->pd, (const struct softcm_sge *)(w + 1),
				  w->wr.num_sge, p->off, payload, p->h.payload_len, false);
}

/*
 * @p built as the next packet of @b (sent first if @p's packet cannot
 * join it), its payload copied under the lock as req_send()'s.
 */
static void req_batch(struct softcm_qp *qp, struct req_pkt *p, struct softcm_rc_batch *b,
		      enum softcm_rc_counter via, gfp_t gfp)
{
	u8 *payload;
	int ret;

	if (softcm_rc_batch_full(b, &p->h))
		softcm_rc_batch_send(qp, b, via);
	payload = softcm_rc_batch_next(qp, b, &p->h, gfp);
	if (!payload)
		return;		/* as a loss: the timer sends it again */
	spin_lock_bh(&qp->lock);
	if (!req_current(qp, p)) {
		spin_unlock_bh(&qp->lock);
		softcm_rc_batch_drop(b);
		return;
	}
	ret = req_payload(qp, p, payload, NULL);
	if (ret) {
		/* the WR whose bytes could not be read, not the oldest */
		softcm_rc_complete_err_at(qp, p->wqe, IB_WC_LOC_PROT_ERR);
		spin_unlock_bh(&qp->lock);
		softcm_rc_batch_drop(b);
		return;
	}
	spin_unlock_bh(&qp->lock);
	softcm_rc_batch_keep(b, &p->h);
}

/*
 * Build and send @p.  The skb is allocated outside the lock; the payload
 * is copied (or its pages attached) from the WR's SGEs under it, because
 * an ACK, a flush or a reset can retire the WR meanwhile and a later WR
 * can take its slot; the packet is sent with no lock held.  A payload
 * whose pages need more fragments than an skb has is copied instead, and
 * so are the WR's later packets and resends (its SGEs' layout is why).
 * A copied payload joins @b where it may (softcm_rc_batchable()); any
 * other packet leaves after what @b holds.
 */
static void req_send(struct softcm_qp *qp, struct req_pkt *p, struct softcm_rc_batch *b,
		     enum softcm_rc_counter via, gfp_t gfp)
{
	bool zcopy = p->zcopy;
	struct sk_buff *skb;
	u8 *payload;
	int ret = 0;

	if (!zcopy && softcm_rc_batchable(qp, &p->h)) {
		req_batch(qp, p, b, via, gfp);
		return;
	}
	softcm_rc_batch_send(qp, b, via);
again:
	skb = softcm_rc_alloc(qp, &p->h, zcopy ? NULL : &payload, gfp);
	if (!skb)
		return;		/* as a loss: the timer sends it again */
	spin_lock_bh(&qp->lock);
	if (!req_current(qp, p)) {
		spin_unlock_bh(&qp->lock);
		kfree_skb(skb);
		return;
	}
	ret = req_payload(qp, p, payload, zcopy ? skb : NULL);
	if (ret == -E2BIG) {
		swqe(qp, p->wqe)->copy = true;
		spin_unlock_bh(&qp->lock);
		kfree_skb(skb);
		zcopy = false;
		if (softcm_rc_batchable(qp, &p->h)) {
			req_batch(qp, p, b, via, gfp);
			return;
		}
		goto again;
	}
	if (ret) {
		/* the WR whose bytes could not be read, not the oldest */
		softcm_rc_complete_err_at(qp, p->wqe, IB_WC_LOC_PROT_ERR);
		spin_unlock_bh(&qp->lock);
		kfree_skb(skb);
		return;
	}
	spin_unlock_bh(&qp->lock);
	if (zcopy && softcm_rc_put_trailer(skb, p->h.payload_len)) {
		kfree_skb(skb);
		return;		/* as a loss */
	}
	local_bh_disable();
	ret = softcm_rc_xmit(qp, skb);
	/* before the softirqs local_bh_enable() runs answer the packet */
	if (!ret)
		softcm_rc_count(qp, via, 1);
	local_bh_enable();
}

/*
 * Run the requester, if no other sender does: @runs batches of
 * SOFTCM_RC_BATCH packets at most, counted in @via, yielding the CPU
 * between them.  @qp entered, no lock held; process context (GFP_KERNEL)
 * or a receive's softirq (GFP_ATOMIC, one batch).  What a batch of
 * packets holds is sent before the lock is taken to stop, so the hold in
 * which req_next() finds nothing comes after it.
 */
static void req_run(struct softcm_qp *qp, enum softcm_rc_counter via, gfp_t gfp,
		    unsigned int runs)
{
	struct softcm_rc *rc = &qp->rc;
	struct softcm_rc_batch b = {};
	struct req_pkt p;
	unsigned int n = 0;

	might_sleep_if(gfpflags_allow_blocking(gfp));
	spin_lock_bh(&qp->lock);
	if (rc->req_busy) {
		/* it looks for packets again before it stops: nothing is lost */
		spin_unlock_bh(&qp->lock);
		return;
	}
	rc->req_busy = true;
	for (;;) {
		while (n < SOFTCM_RC_BATCH && req_next(qp, &p)) {
			spin_unlock_bh(&qp->lock);
			req_send(qp, &p, &b, via, gfp);
			n++;
			spin_lock_bh(&qp->lock);
		}
		if (!softcm_rc_batch_empty(&b)) {
			spin_unlock_bh(&qp->lock);
			softcm_rc_batch_send(qp, &b, via);
			spin_lock_bh(&qp->lock);
			/* what the receive made sendable meanwhile */
			if (n < SOFTCM_RC_BATCH)
				continue;
		}
		if (n < SOFTCM_RC_BATCH || !--runs || !gfpflags_allow_blocking(gfp) ||
		    fatal_signal_pending(current))
			break;
		/* still the sender: the others of this CPU run meanwhile */
		spin_unlock_bh(&qp->lock);
		cond_resched();
		spin_lock_bh(&qp->lock);
		n = 0;
	}
	rc->req_busy = false;
	/*
	 * The budget spent on a long message: the rest from the work,
	 * letting the others of this CPU run (none if the budget was just
	 * enough, as for 64 KiB at a path MTU of 1024: no kworker woken).
	 */
	if (n == SOFTCM_RC_BATCH && req_ready(qp))
		softcm_rc_queued(qp);
	spin_unlock_bh(&qp->lock);
}

/*
 * The WRs a DOORBELL or POST_SEND just took: sent from its system call,
 * unless a sender runs (it will send them), SOFTCM_RC_BATCH packets at
 * most, the rest from the work.  @qp entered by the send queue's
 * consumer, which holds sq_mutex (the requester never takes it).
 */
void softcm_rc_push(struct softcm_qp *qp)
{
	req_run(qp, SOFTCM_RC_TX_INLINE, GFP_KERNEL, SOFTCM_RC_POST_RUNS);
}

/*
 * Whether the requester may have packets to send and no sender runs:
 * for the receive of an ACK or a response, which then sends them
 * (softcm_rc_push_rcv()) rather than wake the work.
 */
bool softcm_rc_sendable(struct softcm_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	return !qp->rc.req_busy && req_ready(qp);
}

/*
 * What an ACK or a response just made sendable, sent from its receive,
 * in softirq, @qp entered and no lock held, as rxe's completer runs its
 * requester from its tasklet: the next packets of a window do not wait
 * for a kworker to get a CPU that a polling program holds.
 */
void softcm_rc_push_rcv(struct softcm_qp *qp)
{
	lockdep_assert_in_softirq();
	req_run(qp, SOFTCM_RC_TX_RCV, GFP_ATOMIC, 1);
}

static void req_work(struct work_struct *work)
{
	struct softcm_qp *qp = container_of(work, struct softcm_qp, rc.work);

	if (!softcm_qp_enter(qp))
		return;
	req_run(qp, SOFTCM_RC_TX_WORK, GFP_KERNEL, 1);
	softcm_qp_leave(qp);
}

/* The timer sends again from una, @why for the tracepoint, and restarts. */
static void timer_resend(struct softcm_qp *qp, int why)
{
	struct softcm_rc *rc = &qp->rc;

	softcm_rc_count(qp, SOFTCM_RC_RETRANSMITS, 1);
	trace_softcm_rc_retransmit(qp->sn->net->ns.inum, qp->qpn, rc->una, rc->una, why);
	softcm_rc_go_back(qp, rc->una);
	softcm_rc_arm(qp);
	softcm_rc_queued(qp);
}

static void rc_timer(struct timer_list *t)
{
	struct softcm_qp *qp = container_of(t, struct softcm_qp, rc.timer);
	struct softcm_rc *rc = &qp->rc;

	spin_lock_bh(&qp->lock);
	if (qp->dead || qp->state != IB_QPS_RTS)
		goto out_unlock;
	if (rc->rnr_wait) {
		rc->rnr_wait = false;
		trace_softcm_rc_retransmit(qp->sn->net->ns.inum, qp->qpn, rc->psn, rc->una,
					   SOFTCM_TRACE_RETRANSMIT_RNR);
		softcm_rc_arm(qp);
		softcm_rc_queued(qp);
		goto out_unlock;
	}
	if (rc->una == rc->max_psn)
		goto out_unlock;
	if (rc->tail_probe) {
		/*
		 * The newest message's last packet again, asking for the ACK:
		 * not while a go-back sends (its packets ask), nor once a
		 * later packet asked.  Then the timeout, as after any packet.
		 */
		if (rc->tail_unasked && rc->psn == rc->max_psn) {
			u32 last = softcm_psn_add(rc->max_psn, -1);

			softcm_rc_count(qp, SOFTCM_RC_ACK_PROBES, 1);
			trace_softcm_rc_retransmit(qp->sn->net->ns.inum, qp->qpn, last, rc->una,
						   SOFTCM_TRACE_RETRANSMIT_TAIL);
			softcm_rc_go_back(qp, last);
			softcm_rc_queued(qp);
		}
		softcm_rc_arm(qp);
		goto out_unlock;
	}
	if (rc->rd_probe) {
		softcm_rc_count(qp, SOFTCM_RC_READ_RETRIES, 1);
		timer_resend(qp, SOFTCM_TRACE_RETRANSMIT_READ_STALL);
		/* asked again: not again until una moves */
		rc->rd_retry = true;
		goto out_unlock;
	}
	softcm_rc_count(qp, SOFTCM_RC_TIMEOUTS, 1);
	/* 7 is infinite, as rxe reads it (Documentation/protocol.rst) */
	if (qp->attr.retry_cnt != 7) {
		if (!rc->retry_left) {
			softcm_rc_complete_err(qp, IB_WC_RETRY_EXC_ERR);
			goto out_unlock;
		}
		rc->retry_left--;
	}
	timer_resend(qp, SOFTCM_TRACE_RETRANSMIT_TIMEOUT);
	rc->rd_retry = false;
out_unlock:
	spin_unlock_bh(&qp->lock);
}

/*
 * The state an RC QP enters: RTR fixes the responder's PSN and the
 * path, RTS the requester's PSN.  Under the QP's lock, from qp.c's
 * set_state(), after the receive queue's flush.
 */
void softcm_rc_state_changed(struct softcm_qp *qp, u32 prev, u32 next)
{
	struct softcm_rc *rc = &qp->rc;

	lockdep_assert_held(&qp->lock);
	if (qp->type != IB_QPT_RC || prev == next)
		return;
	switch (next) {
	case IB_QPS_RTR:
		rc->epsn = qp->attr.rq_psn;
		rc->msn = 0;
		rc->nak_sent = false;
		rc->in_msg = 0;
		softcm_resp_reset(qp);
		/* a path the AV cannot give: no packet leaves, sends time out */
		rc->path_ok = !softcm_rc_path_init(qp);
		break;
	case IB_QPS_RTS:
		if (prev != IB_QPS_RTR)
			break;
		rc->psn = qp->attr.sq_psn;
		rc->una = rc->psn;
		rc->max_psn = rc->psn;
		rc->tail_psn = rc->psn;
		rc->sq_next = qp->sq_cons;
		rc->req_wqe = qp->sq_cons;
		rc->req_off = 0;
		rc->noack = 0;
		rc->unasked = 0;
		rc->tail_unasked = false;
		/* the first message after RTS is no stream's */
		rc->last_msg = jiffies - 1;
		rc->retry_left = qp->attr.retry_cnt;
		rc->rnr_left = qp->attr.rnr_retry;
		rc->rnr_wait = false;
		rc->rd_retry = false;
		rc->rd_probe = false;
		rc->tail_probe = false;
		break;
	case IB_QPS_ERR:
		rc->epoch++;
		softcm_rc_flush_sq(qp);
		break;
	case IB_QPS_RESET:
		rc->epoch++;
		del_timer(&rc->timer);
		rc->sq_next = qp->sq_cons;
		rc->req_wqe = qp->sq_cons;
		softcm_resp_reset(qp);
		break;
	}
}

/*
 * What an RC QP keeps beside its rings, for as long as it lives: the
 * send queue's copy and state, and the READ resources.  Counted against
 * max_ring_bytes with the rings (ring.c), from the create to the end of
 * the destroy, as the namespace counts its objects.
 */
static size_t rc_bytes(const struct softcm_qp *qp)
{
	return size_add(size_add(array_size(qp->sq_entries, qp->sq_stride),
				 array_size(qp->sq_entries, sizeof(struct softcm_swqe))),
			SOFTCM_MAX_QP_RD_ATOM * sizeof(struct softcm_rd_res));
}

int softcm_rc_init(struct softcm_qp *qp)
{
	struct softcm_rc *rc = &qp->rc;
	int ret;

	ret = softcm_ring_charge(qp->sn, rc_bytes(qp));
	if (ret)
		return ret;
	rc->shadow = kvzalloc(array_size(qp->sq_entries, qp->sq_stride), GFP_KERNEL_ACCOUNT);
	rc->swqe = kvcalloc(qp->sq_entries, sizeof(*rc->swqe), GFP_KERNEL_ACCOUNT);
	rc->rd_res = kcalloc(SOFTCM_MAX_QP_RD_ATOM, sizeof(*rc->rd_res), GFP_KERNEL_ACCOUNT);
	if (!rc->shadow || !rc->swqe || !rc->rd_res) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = dst_cache_init(&rc->dst, GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_free;
	ret = softcm_rc_held_init(qp);
	if (ret)
		goto err_dst;
	timer_setup(&rc->timer, rc_timer, 0);
	INIT_WORK(&rc->work, req_work);
	INIT_WORK(&rc->resp_work, softcm_resp_work);
	return 0;

err_dst:
	dst_cache_destroy(&rc->dst);
err_free:
	kfree(rc->rd_res);
	kvfree(rc->swqe);
	kvfree(rc->shadow);
	softcm_ring_uncharge(qp->sn, rc_bytes(qp));
	return ret;
}

/* After qp_quiesce(): the QP is dead, nothing queues the work or arms the timer. */
void softcm_rc_shutdown(struct softcm_qp *qp)
{
	timer_shutdown_sync(&qp->rc.timer);
	cancel_work_sync(&qp->rc.work);
	softcm_rc_held_shutdown(qp);
	cancel_work_sync(&qp->rc.resp_work);
	/* the end of softcm_rc_init()'s charge: destroyed, or never made */
	softcm_ring_uncharge(qp->sn, rc_bytes(qp));
}

/* The responder's skbs still in the stack keep what counts them. */
void softcm_rc_uninit(struct softcm_qp *qp)
{
	softcm_rc_held_put(qp->rc.held);
	dst_cache_destroy(&qp->rc.dst);
	kfree(qp->rc.rd_res);
	kvfree(qp->rc.swqe);
	kvfree(qp->rc.shadow);
}
