// SPDX-License-Identifier: GPL-2.0
/*
 * The RC completer: the responses to a QP's requests, in softirq under
 * the QP's lock.  An ACK acknowledges every PSN up to its own, coalesced
 * or not (rxe's completer does the same), and completes the WRs whose
 * last packet it covers, in order; a sequence NAK acknowledges what
 * came before it and sends again from its PSN (go-back-N); an RNR NAK
 * does the same after the wait its AETH names, up to rnr_retry times
 * (7: for ever); any other NAK fails the oldest WR with the remote
 * error it names, and the QP goes to ERR.  Responses outside the window
 * of outstanding PSNs are stale duplicates and are ignored.
 *
 * An RDMA READ completes by its responses alone: each one at the oldest
 * PSN not acknowledged lands in the WR's local SGEs (through their MRs'
 * pinned pages, which must allow local writes) and acknowledges the
 * WRs before it.  An ACK or NAK whose PSN passes a READ it has no
 * response for, or a response after a gap, means responses were lost:
 * the READ is asked again from the first one missing (rxe's implicit
 * NAK), once until progress or the timer; so is a READ whose responses
 * stop coming (after one of its own or of the READ before it), after a
 * wait much shorter than the timeout (req.c, softcm_rc_arm_probe()).
 * An atomic is such a READ
 * whose one response is its ATOMIC ACKNOWLEDGE: the original value it
 * carries lands in the WR's SGE the same way, and completes it.
 */

#include <linux/jiffies.h>
#include <rdma/ib_verbs.h>

#include "cq.h"
#include "ibhdr.h"
#include "mr.h"
#include "netns.h"
#include "psn.h"
#include "qp.h"
#include "rc.h"
#include "stats.h"
#include "trace.h"

static struct softcm_sq_wqe *shadow(struct softcm_qp *qp, u32 i)
{
	return (struct softcm_sq_wqe *)(qp->rc.shadow +
					(size_t)(i & (qp->sq_entries - 1)) * qp->sq_stride);
}

/* Whether @psn is one of the PSNs sent and not acknowledged. */
static bool outstanding(const struct softcm_rc *rc, u32 psn)
{
	return softcm_psn_cmp(psn, rc->una) >= 0 && softcm_psn_cmp(psn, rc->max_psn) < 0;
}

static struct softcm_swqe *swqe(struct softcm_qp *qp, u32 i)
{
	return &qp->rc.swqe[i & (qp->sq_entries - 1)];
}

/*
 * Whether the oldest PSN not acknowledged is a READ's (or an atomic's)
 * whose request went: its responses are what comes next.
 */
static bool read_asked_at_una(struct softcm_qp *qp)
{
	const struct softcm_rc *rc = &qp->rc;
	const struct softcm_swqe *s;

	if (qp->sq_cons == rc->sq_next)
		return false;
	s = swqe(qp, qp->sq_cons);
	return s->read && softcm_psn_cmp(rc->max_psn, s->first_psn) > 0;
}

/*
 * Every PSN before @psn is acknowledged: complete the WRs they end.
 * With PSNs still outstanding, the timer restarts: the wait for the
 * next response if this one moved una to a READ asked for (mid-way
 * through it, or at the next READ after one completed), the wait before
 * an ACK probe if the newest went without AckReq (req.c, "AckReq"),
 * else the retransmission timeout.
 */
static void ack_before(struct softcm_qp *qp, u32 psn)
{
	struct softcm_rc *rc = &qp->rc;
	const struct softcm_sq_wqe *w;
	const struct softcm_swqe *s;
	struct softcm_wc wc = {
		.status = IB_WC_SUCCESS,
		.qp_num = qp->qpn,
		.port_num = SOFTCM_PORT_NUM,
	};
	bool moved = false;

	lockdep_assert_held(&qp->lock);
	while (qp->sq_cons != rc->sq_next) {
		s = swqe(qp, qp->sq_cons);
		if (softcm_psn_cmp(softcm_psn_add(s->first_psn, s->npkts), psn) > 0)
			break;
		/* the WR's own copy, in the shadow slot: the user's slot may go */
		w = shadow(qp, qp->sq_cons);
		/*
		 * Its slot is free before its completion is seen (as rxe's
		 * completer retires the WQE before it posts the CQE): a
		 * program that posts as soon as it polls must find room.
		 */
		qp->sq_cons++;
		/* Pairs with the user's acquire of sq_cons: the slot is free. */
		smp_store_release(&qp->kpage->sq_cons, qp->sq_cons);
		if (qp->sq_sig_all || (w->wr.send_flags & IB_SEND_SIGNALED)) {
			wc.wr_id = w->wr.wr_id;
			wc.opcode = softcm_wc_opcode(w->wr.opcode);
			wc.byte_len = s->len;
			softcm_cq_push(qp->scq, &wc, false);
		}
	}
	if (softcm_psn_cmp(psn, rc->una) > 0) {
		rc->una = psn;
		rc->rd_retry = false;
		/* progress: the retry budgets start again (IBTA 9.7.5.2.8) */
		rc->retry_left = qp->attr.retry_cnt;
		rc->rnr_left = qp->attr.rnr_retry;
		moved = true;
	}
	/* an ACK for packets sent before a go-back: resume after them */
	if (softcm_psn_cmp(rc->psn, rc->una) < 0)
		softcm_rc_go_back(qp, rc->una);
	/* an RNR wait ends by its timer alone: req_next() waits for it */
	if (rc->rnr_wait)
		return;
	if (rc->una == rc->max_psn)
		del_timer(&rc->timer);
	else if (moved && read_asked_at_una(qp))
		softcm_rc_arm_probe(qp);
	else if (rc->tail_unasked)
		softcm_rc_arm_tail(qp);
	else
		softcm_rc_arm(qp);
}

/*
 * Acknowledging the PSNs before *@psn stops at the first READ
 * it would pass without its responses: *@psn becomes the first of them
 * not received, and true says a READ was passed.
 */
static bool read_clamp(struct softcm_qp *qp, u32 *psn)
{
	struct softcm_rc *rc = &qp->rc;
	const struct softcm_swqe *s;
	u32 i;

	for (i = qp->sq_cons; i != rc->sq_next; i++) {
		s = swqe(qp, i);
		if (softcm_psn_cmp(s->first_psn, *psn) >= 0)
			return false;
		if (!s->read)
			continue;
		*psn = softcm_psn_cmp(s->first_psn, rc->una) > 0 ? s->first_psn : rc->una;
		return true;
	}
	return false;
}

/* Whether @psn is one of the READ's at the head of the send queue. */
static bool read_at_head(struct softcm_qp *qp, u32 psn)
{
	const struct softcm_swqe *s;

	if (qp->sq_cons == qp->rc.sq_next)
		return false;
	s = swqe(qp, qp->sq_cons);
	return s->read && softcm_psn_diff(psn, s->first_psn) < s->npkts;
}

/* Responses of the READ at una were lost: ask again from there, once. */
static void read_retry(struct softcm_qp *qp)
{
	struct softcm_rc *rc = &qp->rc;

	if (rc->rd_retry)
		return;
	rc->rd_retry = true;
	softcm_rc_count(qp, SOFTCM_RC_READ_RETRIES, 1);
	softcm_rc_go_back(qp, rc->una);
}

/*
 * A READ response: at una, its length what the READ's PSN says is left,
 * its bytes placed, then the PSNs up to it acknowledged (completing the
 * READ with its last).  A local SGE that cannot take them fails the
 * READ with LOC_PROT_ERR.  A response that does not fit the READ is
 * dropped: the timer asks again.
 */
static void read_resp(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
		      const struct softcm_rc_payload *pl)
{
	struct softcm_rc *rc = &qp->rc;
	const struct softcm_sq_wqe *w;
	const struct softcm_swqe *s = NULL;
	u32 i, d = 0, off, lim;
	bool last;

	if (!outstanding(rc, h->psn))
		return;
	for (i = qp->sq_cons; i != rc->sq_next; i++) {
		s = swqe(qp, i);
		d = softcm_psn_diff(h->psn, s->first_psn);
		if (d < s->npkts)
			break;
	}
	if (i == rc->sq_next || !s->read || s->atomic)
		goto drop;
	/* it acknowledges the WRs before its READ, but not a READ before */
	lim = s->first_psn;
	if (read_clamp(qp, &lim)) {
		ack_before(qp, lim);
		read_retry(qp);
		return;
	}
	ack_before(qp, lim);
	if (h->psn != rc->una) {
		if (softcm_psn_cmp(h->psn, rc->una) > 0)
			read_retry(qp);
		return;
	}
	off = d * rc->mtu;
	last = h->op->pos == SOFTCM_IB_LAST || h->op->pos == SOFTCM_IB_ONLY;
	if (h->payload_len > rc->mtu || h->payload_len > s->len - off ||
	    (last ? h->payload_len != s->len - off :
		    (h->payload_len != rc->mtu || s->len - off == rc->mtu)))
		goto drop;
	w = shadow(qp, i);
	if (h->payload_len &&
	    softcm_mr_sge_copy_skb(qp->sn, qp->pd, (const struct softcm_sge *)(w + 1),
				   w->wr.num_sge, off, pl->skb, pl->off, h->payload_len)) {
		softcm_rc_complete_err_at(qp, i, IB_WC_LOC_PROT_ERR);
		return;
	}
	ack_before(qp, softcm_psn_add(h->psn, 1));
	return;

drop:
	softcm_stat_inc(&qp->sn->stats, SOFTCM_STAT_DROP_LENGTH);
}

/*
 * An ATOMIC ACKNOWLEDGE: for the atomic whose PSN it has, at una once the
 * WRs before it are acknowledged (an earlier READ without its responses
 * is asked again first), an ACK (AETH type 00).  Its value lands in the
 * WR's one SGE, 8 bytes in host order, through the MR's pinned pages (a
 * local SGE that cannot take them fails the WR with LOC_PROT_ERR); then
 * the atomic completes.  One that does not fit is dropped.
 */
static void atomic_ack(struct softcm_qp *qp, const struct softcm_ib_hdr *h)
{
	struct softcm_rc *rc = &qp->rc;
	const struct softcm_sq_wqe *w;
	const struct softcm_swqe *s = NULL;
	u64 orig = h->atomic_orig;
	u32 i, lim;

	if (!outstanding(rc, h->psn))
		return;
	for (i = qp->sq_cons; i != rc->sq_next; i++) {
		s = swqe(qp, i);
		if (softcm_psn_diff(h->psn, s->first_psn) < s->npkts)
			break;
	}
	if (i == rc->sq_next || !s->atomic || h->psn != s->first_psn ||
	    softcm_aeth_type(h->aeth.syndrome) != SOFTCM_AETH_ACK)
		goto drop;
	lim = s->first_psn;
	if (read_clamp(qp, &lim)) {
		ack_before(qp, lim);
		read_retry(qp);
		return;
	}
	ack_before(qp, lim);
	if (h->psn != rc->una)
		return;
	w = shadow(qp, i);
	if (softcm_mr_sge_copy(qp->sn, qp->pd, (const struct softcm_sge *)(w + 1),
			       w->wr.num_sge, 0, (u8 *)&orig, sizeof(orig), true)) {
		softcm_rc_complete_err_at(qp, i, IB_WC_LOC_PROT_ERR);
		return;
	}
	ack_before(qp, softcm_psn_add(h->psn, 1));
	return;

drop:
	softcm_stat_inc(&qp->sn->stats, SOFTCM_STAT_DROP_LENGTH);
}

static u32 nak_status(u8 code)
{
	switch (code) {
	case SOFTCM_NAK_INVALID_REQUEST:
		return IB_WC_REM_INV_REQ_ERR;
	case SOFTCM_NAK_REMOTE_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	case SOFTCM_NAK_INVALID_RD_REQUEST:
		return IB_WC_REM_INV_RD_REQ_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

static void rnr_nak(struct softcm_qp *qp, const struct softcm_ib_hdr *h)
{
	struct softcm_rc *rc = &qp->rc;
	u8 code = softcm_aeth_value(h->aeth.syndrome);

	if (qp->attr.rnr_retry != 7) {
		if (!rc->rnr_left) {
			softcm_rc_complete_err(qp, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		rc->rnr_left--;
	}
	softcm_rc_go_back(qp, h->psn);
	rc->rnr_wait = true;
	mod_timer(&rc->timer, jiffies + usecs_to_jiffies(softcm_rnr_timer_us(code)) + 1);
}

bool softcm_comp_rcv(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
		     const struct softcm_rc_payload *pl)
{
	struct softcm_rc *rc = &qp->rc;
	u8 syn = h->aeth.syndrome;
	u32 psn;

	lockdep_assert_held(&qp->lock);
	if (qp->state != IB_QPS_RTS) {
		softcm_rc_count(qp, SOFTCM_RC_STATE_DROPS, 1);
		return false;
	}
	switch (h->opcode) {
	case SOFTCM_IB_ACKNOWLEDGE:
		break;
	case SOFTCM_IB_READ_RESPONSE_FIRST:
	case SOFTCM_IB_READ_RESPONSE_MIDDLE:
	case SOFTCM_IB_READ_RESPONSE_LAST:
	case SOFTCM_IB_READ_RESPONSE_ONLY:
		read_resp(qp, h, pl);
		goto out;
	case SOFTCM_IB_ATOMIC_ACKNOWLEDGE:
		atomic_ack(qp, h);
		goto out;
	default:
		return false;
	}
	if (!outstanding(rc, h->psn))
		return false;
	/*
	 * A fatal NAK inside the READ at the head of the queue: the
	 * responder looks the rkey up per response, so a region deregistered
	 * while it answered ends the READ there.  That READ fails with the
	 * NAK's status; asking again would only time out.
	 */
	if (softcm_aeth_type(syn) == SOFTCM_AETH_NAK &&
	    softcm_aeth_value(syn) != SOFTCM_NAK_PSN_SEQ_ERR && read_at_head(qp, h->psn)) {
		softcm_rc_complete_err(qp, nak_status(softcm_aeth_value(syn)));
		return false;
	}
	/* an ACK acknowledges its own PSN, a NAK those before it */
	psn = softcm_aeth_type(syn) == SOFTCM_AETH_ACK ? softcm_psn_add(h->psn, 1) : h->psn;
	if (read_clamp(qp, &psn)) {
		/* past a READ without its responses: they were lost (rxe too) */
		ack_before(qp, psn);
		read_retry(qp);
		goto out;
	}
	ack_before(qp, psn);
	switch (softcm_aeth_type(syn)) {
	case SOFTCM_AETH_ACK:
		break;
	case SOFTCM_AETH_RNR_NAK:
		rnr_nak(qp, h);
		break;
	default:
		if (softcm_aeth_value(syn) != SOFTCM_NAK_PSN_SEQ_ERR) {
			softcm_rc_complete_err(qp, nak_status(softcm_aeth_value(syn)));
			return false;
		}
		softcm_rc_count(qp, SOFTCM_RC_RETRANSMITS, 1);
		trace_softcm_rc_retransmit(qp->sn->net->ns.inum, qp->qpn, h->psn, rc->una,
					   SOFTCM_TRACE_RETRANSMIT_SEQ_NAK);
		softcm_rc_go_back(qp, h->psn);
		break;
	}
out:
	/* the caller sends it, in this softirq, once the lock is released */
	return softcm_rc_sendable(qp);
}
