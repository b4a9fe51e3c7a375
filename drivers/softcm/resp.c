// SPDX-License-Identifier: GPL-2.0
/*
 * The RC responder: the requests a QP receives, in softirq under the
 * QP's lock, in PSN order.  As rxe's (Documentation/protocol.rst, "Data
 * path"):
 * - the expected PSN is executed; one ahead of it gets one sequence NAK
 *   carrying the expected PSN, and the packets after it are dropped
 *   until the gap fills; one behind it is a duplicate, acknowledged with
 *   the last PSN executed and not executed again;
 * - a SEND's FIRST or ONLY takes the oldest posted receive, or, with
 *   none, is answered with an RNR NAK carrying min_rnr_timer and its own
 *   PSN; its bytes go into the receive's SGEs through their MRs' pinned
 *   pages; its LAST or ONLY completes the receive;
 * - an ACK goes for every packet that asks for one (AckReq), with the
 *   count of messages completed (MSN) and no credits (0x1f);
 * - an RDMA READ is checked (the QP's REMOTE_READ, then rkey, bounds, PD
 *   and the region's REMOTE_READ) and kept in one of the QP's READ
 *   resources; its responses, reading the region's pinned pages, leave
 *   from the request's receive once the lock is released,
 *   SOFTCM_RC_BATCH of them, and the rest from the responder's work; a
 *   duplicate READ that asks again for the rest of one kept, from the
 *   PSN it names, is answered again from there (a replay), any other
 *   is dropped, as rxe;
 * - an atomic (COMPARE SWAP, FETCH ADD) is checked (the QP's
 *   REMOTE_ATOMIC and a resource, else Invalid Request; rkey, 8 bytes in
 *   bounds, PD and the region's REMOTE_ATOMIC, else Remote Access Error;
 *   an address not 8-byte aligned, Invalid Request, as rxe), executed at
 *   once on the pinned page, and answered with an ATOMIC ACKNOWLEDGE
 *   carrying the value it found, which one of the READ resources keeps:
 *   a duplicate of it (its PSN, its rkey and address) is answered again
 *   from there and not executed again (IBTA 9.9.3.3), one whose resource
 *   is gone is dropped, as rxe;
 * - a SEND with invalidate fails its receive and is NAKed (send_inv()).
 * The ACK is decided here and sent by the caller once the lock is
 * released, unless READ responses wait to leave before it: it then
 * waits for them, so that the requester sees responses and ACKs in PSN
 * order (an ACK past a READ it has no data for makes rxe ask again).
 */

#include <linux/log2.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "core.h"
#include "cq.h"
#include "ibhdr.h"
#include "mr.h"
#include "netns.h"
#include "psn.h"
#include "qp.h"
#include "rc.h"
#include "stats.h"

static bool ack(struct softcm_qp *qp, struct softcm_ib_hdr *a, u32 psn, u8 syndrome)
{
	a->opcode = SOFTCM_IB_ACKNOWLEDGE;
	a->psn = psn;
	a->aeth.syndrome = syndrome;
	a->aeth.msn = qp->rc.msn;
	return true;
}

/*
 * The receive at rq_cons completes with @status and @byte_len; what
 * softcm_cq_push() returns (non-zero: the completion is lost).
 */
static int complete_recv(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
			 u32 status, u32 byte_len)
{
	struct softcm_wc wc = {
		.wr_id = qp->rc.rwr.wr_id,
		.status = status,
		.opcode = IB_WC_RECV,
		.byte_len = byte_len,
		.qp_num = qp->qpn,
		.src_qp = qp->attr.dest_qp_num,
		.pkey_index = qp->attr.pkey_index,
		.port_num = SOFTCM_PORT_NUM,
	};

	lockdep_assert_held(&qp->lock);
	if (status == IB_WC_SUCCESS && (h->op->flags & SOFTCM_IB_HAS_IMMDT)) {
		wc.imm_data = (__force u32)h->imm;
		wc.wc_flags = IB_WC_WITH_IMM;
	}
	if (h->opcode == SOFTCM_IB_WRITE_LAST_IMM || h->opcode == SOFTCM_IB_WRITE_ONLY_IMM)
		wc.opcode = IB_WC_RECV_RDMA_WITH_IMM;
	/*
	 * The slot is free before the completion is seen (as rxe advances
	 * its queue before it posts the CQE): a program that reposts as
	 * soon as it polls must find room.
	 */
	qp->rq_cons++;
	/* Pairs with the user's acquire of rq_cons: the slot is free. */
	smp_store_release(&qp->kpage->rq_cons, qp->rq_cons);
	return softcm_cq_push(qp->rcq, &wc, h->se || status != IB_WC_SUCCESS);
}

/*
 * The oldest posted receive, copied once (its WR and SGEs) for the
 * message that begins: 0, -EAGAIN with none, -EINVAL for a slot no
 * WR can have written.
 */
static int take_recv(struct softcm_qp *qp)
{
	const struct softcm_rq_wqe *slot;
	struct softcm_rc *rc = &qp->rc;
	u32 prod;

	/* Pairs with the user's release of rq_prod: its slots first. */
	prod = smp_load_acquire(&qp->upage->rq_prod);
	if (prod == qp->rq_cons)
		return -EAGAIN;
	if (prod - qp->rq_cons > qp->rq_entries)
		return -EINVAL;
	slot = softcm_qp_rq_slot(qp, qp->rq_cons);
	rc->rwr = slot->wr;
	if (rc->rwr.num_sge > qp->cap.max_recv_sge)
		return -EINVAL;
	memcpy(rc->rsge, slot + 1, rc->rwr.num_sge * sizeof(rc->rsge[0]));
	if (!rc->in_msg)
		rc->roff = 0;
	return 0;
}

/* A request that cannot be carried out: NAK @code, the QP to ERR. */
static bool fail(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
		 struct softcm_ib_hdr *a, u8 code)
{
	ack(qp, a, h->psn, softcm_aeth_nak(code));
	softcm_qp_set_err_locked(qp);
	return true;
}

/*
 * A Remote Access Error for softcm_mr_remote_*()'s @err, counted by what
 * did not hold: the rkey (-ENOENT) or the region's bounds or rights.
 */
static u8 access_nak(struct softcm_qp *qp, int err)
{
	softcm_rc_count(qp, err == -ENOENT ? SOFTCM_RC_RKEY_NAKS_SENT :
			SOFTCM_RC_ACCESS_NAKS_SENT, 1);
	return SOFTCM_NAK_REMOTE_ACCESS_ERR;
}

static bool is_send(u8 opcode)
{
	return opcode <= SOFTCM_IB_SEND_ONLY_IMM;
}

static bool is_write(u8 opcode)
{
	return opcode >= SOFTCM_IB_WRITE_FIRST && opcode <= SOFTCM_IB_WRITE_ONLY_IMM;
}

static bool is_atomic(u8 opcode)
{
	return opcode == SOFTCM_IB_COMPARE_SWAP || opcode == SOFTCM_IB_FETCH_ADD;
}

static bool has_imm(u8 opcode)
{
	return opcode == SOFTCM_IB_SEND_LAST_IMM || opcode == SOFTCM_IB_SEND_ONLY_IMM ||
	       opcode == SOFTCM_IB_WRITE_LAST_IMM || opcode == SOFTCM_IB_WRITE_ONLY_IMM;
}

/*
 * A WRITE's FIRST or ONLY: the QP must allow remote writes (else Invalid
 * Request, as rxe), and its RETH name a region of the QP's PD that
 * allows them and holds the whole length (else Remote Access Error).  A
 * zero-length WRITE names no region (rxe skips the rkey check).
 */
static int write_begin(struct softcm_qp *qp, const struct softcm_ib_hdr *h)
{
	struct softcm_rc *rc = &qp->rc;
	int ret;

	if (!(qp->attr.qp_access_flags & IB_UVERBS_ACCESS_REMOTE_WRITE))
		return SOFTCM_NAK_INVALID_REQUEST;
	rc->wva = h->reth.va;
	rc->wrkey = h->reth.rkey;
	rc->wlen = h->reth.len;
	rc->roff = 0;
	/* the whole range, checked once: each packet checks its own again */
	if (!rc->wlen)
		return 0;
	ret = softcm_mr_remote_check(qp->sn, qp->pd, rc->wrkey, rc->wva, rc->wlen,
				     IB_UVERBS_ACCESS_REMOTE_WRITE);
	return ret ? access_nak(qp, ret) : 0;
}

/* Place a SEND's or WRITE's payload; a NAK code, or 0. */
static int place(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
		 const struct softcm_rc_payload *pl)
{
	struct softcm_rc *rc = &qp->rc;
	int ret;

	if (rc->in_msg == SOFTCM_RC_IN_WRITE) {
		if (h->payload_len > rc->wlen - rc->roff)
			return SOFTCM_NAK_INVALID_REQUEST;
		ret = h->payload_len ?
		      softcm_mr_remote_copy_skb(qp->sn, qp->pd, rc->wrkey, rc->wva + rc->roff,
						pl->skb, pl->off, h->payload_len,
						IB_UVERBS_ACCESS_REMOTE_WRITE) : 0;
		if (ret)
			return access_nak(qp, ret);
		rc->roff += h->payload_len;
		return 0;
	}
	ret = softcm_mr_sge_copy_skb(qp->sn, qp->pd, rc->rsge, rc->rwr.num_sge, rc->roff,
				     pl->skb, pl->off, h->payload_len);
	if (ret) {
		/* rxe: a receive too short is the requester's error */
		complete_recv(qp, h, ret == -EMSGSIZE ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR,
			      rc->roff);
		return ret == -EMSGSIZE ? SOFTCM_NAK_INVALID_REQUEST : SOFTCM_NAK_REMOTE_OP_ERR;
	}
	rc->roff += h->payload_len;
	return 0;
}

static struct softcm_rd_res *rd_res(struct softcm_rc *rc, u32 i)
{
	return &rc->rd_res[i & (rc->rd_n - 1)];
}

static u32 rd_end(const struct softcm_rd_res *r)
{
	return softcm_psn_add(r->first_psn, r->npkts);
}

/* Past the resources whose responses all left: rd_cur is the oldest that waits. */
static void rd_skip_done(struct softcm_rc *rc)
{
	while (rc->rd_cur != rc->rd_head && rd_res(rc, rc->rd_cur)->cur_psn ==
	       rd_end(rd_res(rc, rc->rd_cur)))
		rc->rd_cur++;
}

/*
 * Whether something the work sends must leave before an ACK decided now,
 * or responses sent from another CPU may still be on their way there.
 */
static bool resp_queued(struct softcm_qp *qp)
{
	struct softcm_rc *rc = &qp->rc;

	rd_skip_done(rc);
	return rc->resp_busy || rc->rd_cur != rc->rd_head || rc->pend_valid ||
	       softcm_rc_resp_elsewhere(qp);
}

/*
 * A new RDMA READ at the expected PSN: allowed by the QP (else Invalid
 * Request), with resources (none: Invalid Request, the only case rxe
 * NAKs), naming a region of the QP's PD that allows remote reads and
 * holds the whole length (else Remote Access Error), before a byte
 * moves.  A requester beyond its max_rd_atomic finds every resource
 * still sending: its READ is dropped and counted, and comes again.
 */
static bool read_begin(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
		       struct softcm_ib_hdr *a)
{
	struct softcm_rc *rc = &qp->rc;
	struct softcm_rd_res *r;
	int ret;

	if (!(qp->attr.qp_access_flags & IB_UVERBS_ACCESS_REMOTE_READ) || !rc->rd_n)
		return fail(qp, h, a, SOFTCM_NAK_INVALID_REQUEST);
	ret = h->reth.len ?
	      softcm_mr_remote_check(qp->sn, qp->pd, h->reth.rkey, h->reth.va, h->reth.len,
				     IB_UVERBS_ACCESS_REMOTE_READ) : 0;
	if (ret)
		return fail(qp, h, a, access_nak(qp, ret));
	rd_skip_done(rc);
	if (rc->rd_head - rc->rd_cur >= rc->rd_n) {
		softcm_rc_count(qp, SOFTCM_RC_RD_EXHAUSTED, 1);
		return false;
	}
	r = rd_res(rc, rc->rd_head++);
	r->atomic = false;
	r->va = h->reth.va;
	r->rkey = h->reth.rkey;
	r->len = h->reth.len;
	r->first_psn = h->psn;
	r->npkts = max_t(u32, 1, DIV_ROUND_UP(r->len, rc->mtu));
	r->seq_psn = h->psn;
	r->cur_psn = h->psn;
	rc->epsn = rd_end(r);
	rc->nak_sent = false;
	rc->msn = (rc->msn + 1) & SOFTCM_PSN_MASK;
	return false;
}

static bool seq_nak(u8 syndrome)
{
	return softcm_aeth_type(syndrome) == SOFTCM_AETH_NAK &&
	       softcm_aeth_value(syndrome) == SOFTCM_NAK_PSN_SEQ_ERR;
}

/*
 * The ACK or NAK kept goes unsent: a sequence NAK among them may be
 * sent again for its gap (else only the requester's timer would close it).
 */
static void pend_drop(struct softcm_rc *rc)
{
	if (rc->pend_valid && seq_nak(rc->pend.syndrome))
		rc->nak_sent = false;
	rc->pend_valid = false;
}

/*
 * Resource @i (a READ or an atomic) answers again from @psn: the ones
 * after it start over when it is done, an older one still being
 * answered goes on first, and an ACK waiting is dropped (it is for
 * requests that come again).  The responder's work sends.
 */
static void rd_replay(struct softcm_qp *qp, u32 i, u32 psn)
{
	struct softcm_rc *rc = &qp->rc;
	struct softcm_rd_res *r = rd_res(rc, i);
	u32 k;

	lockdep_assert_held(&qp->lock);
	r->seq_psn = psn;
	r->cur_psn = psn;
	for (k = i + 1; k != rc->rd_head; k++)
		rd_res(rc, k)->cur_psn = rd_end(rd_res(rc, k));
	if ((s32)(i - rc->rd_cur) < 0)
		rc->rd_cur = i;
	pend_drop(rc);
	softcm_rc_count(qp, SOFTCM_RC_READ_REPLAYS, 1);
}

/*
 * A READ behind the expected PSN: the requester lost responses, or
 * their ACKs, and asks again.  Answered again from its PSN if it is the
 * rest of a READ kept, with the same rkey, from the byte that PSN
 * begins with to the end (what softcm's and rxe's requesters ask);
 * dropped otherwise, as rxe.  The resources kept after it were sent
 * after it, so they are not sent again: their READs come again too.
 */
static bool read_dup(struct softcm_qp *qp, const struct softcm_ib_hdr *h)
{
	struct softcm_rc *rc = &qp->rc;
	struct softcm_rd_res *r;
	u32 i, d, off;

	/* the rd_n latest: those never used have no PSNs and match nothing */
	for (i = rc->rd_head - 1; i != rc->rd_head - 1 - rc->rd_n; i--) {
		r = rd_res(rc, i);
		d = softcm_psn_diff(h->psn, r->first_psn);
		if (d >= r->npkts)
			continue;
		/* an atomic's PSN: not a READ to answer */
		if (r->atomic)
			return false;
		off = d * rc->mtu;
		if (h->reth.rkey != r->rkey || h->reth.va != r->va + off ||
		    h->reth.len != r->len - off)
			return false;
		rd_replay(qp, i, h->psn);
		return false;
	}
	return false;
}

/*
 * A new atomic at the expected PSN: allowed by the QP, with a resource
 * free (as read_begin(): a requester beyond its max_rd_atomic has it
 * dropped before it executes, and sends it again), then executed on the
 * region (softcm_mr_remote_atomic() checks it first) and kept in a
 * resource with the value it found.  Its ATOMIC ACKNOWLEDGE is the
 * caller's to send in @a, or, with READ responses waiting before it, the
 * work's after them: it then also answers for an ACK kept, which its PSN
 * covers.
 */
static bool atomic_begin(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
			 struct softcm_ib_hdr *a)
{
	struct softcm_rc *rc = &qp->rc;
	struct softcm_rd_res *r;
	u64 orig;
	int ret;

	if (!(qp->attr.qp_access_flags & IB_UVERBS_ACCESS_REMOTE_ATOMIC) || !rc->rd_n)
		return fail(qp, h, a, SOFTCM_NAK_INVALID_REQUEST);
	rd_skip_done(rc);
	if (rc->rd_head - rc->rd_cur >= rc->rd_n) {
		softcm_rc_count(qp, SOFTCM_RC_RD_EXHAUSTED, 1);
		return false;
	}
	ret = softcm_mr_remote_atomic(qp->sn, qp->pd, h->atomic.rkey, h->atomic.va,
				      h->opcode == SOFTCM_IB_COMPARE_SWAP, h->atomic.compare,
				      h->atomic.swap_add, &orig);
	if (ret == -ENOENT || ret == -EACCES)
		return fail(qp, h, a, access_nak(qp, ret));
	if (ret)
		return fail(qp, h, a, SOFTCM_NAK_INVALID_REQUEST);
	r = rd_res(rc, rc->rd_head++);
	r->atomic = true;
	r->orig = orig;
	r->va = h->atomic.va;
	r->rkey = h->atomic.rkey;
	r->len = sizeof(orig);
	r->first_psn = h->psn;
	r->npkts = 1;
	r->seq_psn = h->psn;
	r->cur_psn = rd_end(r);		/* answered below, unless others wait */
	rc->epsn = rd_end(r);
	rc->nak_sent = false;
	rc->msn = (rc->msn + 1) & SOFTCM_PSN_MASK;
	if (resp_queued(qp)) {
		r->cur_psn = r->first_psn;
		/* its ATOMIC ACKNOWLEDGE covers the ACK kept */
		pend_drop(rc);
			return false;
	}
	a->opcode = SOFTCM_IB_ATOMIC_ACKNOWLEDGE;
	a->psn = h->psn;
	a->aeth.syndrome = softcm_aeth_ack(SOFTCM_AETH_CREDITS_INVALID);
	a->aeth.msn = rc->msn;
	a->atomic_orig = orig;
	return true;
}

/*
 * An atomic behind the expected PSN: its ATOMIC ACKNOWLEDGE was lost, or
 * came late.  Answered again from the resource kept with its PSN, if it
 * names the same 8 bytes, by the work and after what waits before it;
 * not executed again.  Dropped if no resource keeps it (rxe: class D).
 * As read_dup(), the resources after it are not answered again: the
 * requester sends their requests again after it.
 */
static bool atomic_dup(struct softcm_qp *qp, const struct softcm_ib_hdr *h)
{
	struct softcm_rc *rc = &qp->rc;
	struct softcm_rd_res *r;
	u32 i;

	for (i = rc->rd_head - 1; i != rc->rd_head - 1 - rc->rd_n; i--) {
		r = rd_res(rc, i);
		if (!r->atomic || r->first_psn != h->psn)
			continue;
		if (r->rkey != h->atomic.rkey || r->va != h->atomic.va)
			return false;
		rd_replay(qp, i, h->psn);
		return false;
	}
	return false;
}

/*
 * A SEND's LAST or ONLY with invalidate: its IETH names an rkey to
 * invalidate, and no rkey of softcm's can be (it has no memory windows
 * and no fast-registration MRs, and a user MR's cannot be, as rxe's
 * rxe_invalidate_mr() refuses one).  As rxe's RESPST_ERR_INVALIDATE_RKEY,
 * the message's receive (taken now for an ONLY, or an RNR NAK) completes
 * with REM_INV_REQ_ERR, and the request is NAKed Invalid Request, the QP
 * to ERR.  Its payload is not placed.
 */
static bool send_inv(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
		     struct softcm_ib_hdr *a)
{
	struct softcm_rc *rc = &qp->rc;
	bool cont = h->op->pos == SOFTCM_IB_LAST;
	int ret;

	if ((cont ? SOFTCM_RC_IN_SEND : 0) != rc->in_msg || h->payload_len > rc->mtu)
		return fail(qp, h, a, SOFTCM_NAK_INVALID_REQUEST);
	if (!cont) {
		ret = take_recv(qp);
		if (ret == -EAGAIN)
			return ack(qp, a, h->psn, softcm_aeth_rnr_nak(qp->attr.min_rnr_timer));
		if (ret)
			return fail(qp, h, a, SOFTCM_NAK_REMOTE_OP_ERR);
	}
	rc->in_msg = 0;
	complete_recv(qp, h, IB_WC_REM_INV_REQ_ERR, rc->roff);
	return fail(qp, h, a, SOFTCM_NAK_INVALID_REQUEST);
}

static bool resp_rcv(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
		     const struct softcm_rc_payload *pl, struct softcm_ib_hdr *a)
{
	struct softcm_rc *rc = &qp->rc;
	u8 pos = h->op->pos;
	bool cont = pos == SOFTCM_IB_MIDDLE || pos == SOFTCM_IB_LAST;
	bool last = pos == SOFTCM_IB_LAST || pos == SOFTCM_IB_ONLY;
	u8 kind;
	s32 d;
	int ret;

	lockdep_assert_held(&qp->lock);
	if (qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS) {
		softcm_rc_count(qp, SOFTCM_RC_STATE_DROPS, 1);
		return false;
	}
	d = softcm_psn_cmp(h->psn, rc->epsn);
	if (d > 0) {
		if (rc->nak_sent)
			return false;
		rc->nak_sent = true;
		return ack(qp, a, rc->epsn, softcm_aeth_nak(SOFTCM_NAK_PSN_SEQ_ERR));
	}
	if (d < 0) {
		softcm_rc_count(qp, SOFTCM_RC_DUPLICATES, 1);
		if (h->opcode == SOFTCM_IB_READ_REQUEST)
			return read_dup(qp, h);
		if (is_atomic(h->opcode))
			return atomic_dup(qp, h);
		return ack(qp, a, softcm_psn_add(rc->epsn, SOFTCM_PSN_MASK),
			   softcm_aeth_ack(SOFTCM_AETH_CREDITS_INVALID));
	}
	if (h->opcode == SOFTCM_IB_READ_REQUEST) {
		if (rc->in_msg)
			return fail(qp, h, a, SOFTCM_NAK_INVALID_REQUEST);
		return read_begin(qp, h, a);
	}
	if (is_atomic(h->opcode)) {
		if (rc->in_msg)
			return fail(qp, h, a, SOFTCM_NAK_INVALID_REQUEST);
		return atomic_begin(qp, h, a);
	}
	if (h->opcode == SOFTCM_IB_SEND_LAST_INV || h->opcode == SOFTCM_IB_SEND_ONLY_INV)
		return send_inv(qp, h, a);
	/* the operations softcm's responder does not carry yet */
	if (is_send(h->opcode))
		kind = SOFTCM_RC_IN_SEND;
	else if (is_write(h->opcode))
		kind = SOFTCM_RC_IN_WRITE;
	else
		return fail(qp, h, a, SOFTCM_NAK_INVALID_REQUEST);
	/* a message's packets in order, FIRST/MIDDLE a whole PMTU (IBTA 9.7.4.1) */
	if ((cont ? kind : 0) != rc->in_msg || h->payload_len > rc->mtu ||
	    (!last && h->payload_len != rc->mtu))
		return fail(qp, h, a, SOFTCM_NAK_INVALID_REQUEST);
	if (!cont && kind == SOFTCM_RC_IN_WRITE) {
		ret = write_begin(qp, h);
		if (ret)
			return fail(qp, h, a, ret);
	}
	/* a SEND's first packet, or a WRITE's with an immediate, takes a receive */
	if ((!cont && kind == SOFTCM_RC_IN_SEND) || has_imm(h->opcode)) {
		if (kind == SOFTCM_RC_IN_WRITE || !cont) {
			ret = take_recv(qp);
			if (ret == -EAGAIN) {
				return ack(qp, a, h->psn,
					   softcm_aeth_rnr_nak(qp->attr.min_rnr_timer));
			}
			if (ret)
				return fail(qp, h, a, SOFTCM_NAK_REMOTE_OP_ERR);
		}
	}
	rc->in_msg = kind;
	ret = place(qp, h, pl);
	if (ret)
		return fail(qp, h, a, ret);
	rc->epsn = softcm_psn_add(rc->epsn, 1);
	rc->nak_sent = false;
	if (last) {
		rc->in_msg = 0;
		rc->msn = (rc->msn + 1) & SOFTCM_PSN_MASK;
		if (kind == SOFTCM_RC_IN_WRITE && rc->roff != rc->wlen)
			return fail(qp, h, a, SOFTCM_NAK_INVALID_REQUEST);
		/*
		 * A completion the CQ cannot take (full or in error) takes
		 * the QP to ERR with the message unacknowledged, as rxe's
		 * responder (class G): its sender must not believe it
		 * delivered.
		 */
		if ((kind == SOFTCM_RC_IN_SEND || has_imm(h->opcode)) &&
		    complete_recv(qp, h, IB_WC_SUCCESS, rc->roff)) {
			softcm_qp_set_err_locked(qp);
			return false;
		}
	}
	if (!h->ackreq)
		return false;
	return ack(qp, a, h->psn, softcm_aeth_ack(SOFTCM_AETH_CREDITS_INVALID));
}

/* @a kept to leave after the responses that wait (false: not sent now). */
static bool keep_ack(struct softcm_qp *qp, const struct softcm_ib_hdr *a)
{
	struct softcm_rc *rc = &qp->rc;

	/* the latest replaces what is kept; a sequence NAK may go again */
	if (!seq_nak(a->aeth.syndrome))
		pend_drop(rc);
	rc->pend.opcode = a->opcode;
	rc->pend.psn = a->psn;
	rc->pend.syndrome = a->aeth.syndrome;
	rc->pend.msn = a->aeth.msn;
	rc->pend_valid = true;
	return false;
}

/*
 * A packet for @qp's peer: the ACK or NAK decided, or, with READ
 * responses waiting, kept to leave after them.  *@push: the responder
 * has packets waiting, for softcm_resp_push() once the lock is released.
 */
bool softcm_resp_rcv(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
		     const struct softcm_rc_payload *pl, struct softcm_ib_hdr *a,
		     bool *push)
{
	bool ret;

	lockdep_assert_held(&qp->lock);
	ret = resp_rcv(qp, h, pl, a);
	/* responses wait (this request's, or a long READ's the work sends) */
	*push = resp_queued(qp);
	if (ret && *push)
		ret = keep_ack(qp, a);
	return ret;
}

/* A packet the responder's work sends: a READ response, or an ACK kept. */
struct resp_pkt {
	struct softcm_ib_hdr h;
	u64 va;			/* a READ response's: where its bytes are */
	u32 rkey;
};

static u8 read_opcode(bool first, bool last)
{
	if (first && last)
		return SOFTCM_IB_READ_RESPONSE_ONLY;
	if (first)
		return SOFTCM_IB_READ_RESPONSE_FIRST;
	if (last)
		return SOFTCM_IB_READ_RESPONSE_LAST;
	return SOFTCM_IB_READ_RESPONSE_MIDDLE;
}

/*
 * The next packet the work sends, oldest first: the READ responses, then
 * the ACK kept.  In RTR or RTS; in ERR only to deliver the NAK that put
 * the QP there, after the responses to the READs accepted before it.
 * @held: the caller is the sender already (resp_busy is its own).
 */
static bool resp_next(struct softcm_qp *qp, struct resp_pkt *p, bool held)
{
	struct softcm_rc *rc = &qp->rc;
	struct softcm_rd_res *r;
	bool first, last;
	u32 off, plen;

	lockdep_assert_held(&qp->lock);
	if (qp->dead || (rc->resp_busy && !held))
		return false;
	if (qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS &&
	    !(qp->state == IB_QPS_ERR && rc->pend_valid &&
	      softcm_aeth_type(rc->pend.syndrome) == SOFTCM_AETH_NAK))
		return false;
	rd_skip_done(rc);
	if (rc->rd_cur == rc->rd_head && !rc->pend_valid)
		return false;
	/* not ahead of what another CPU sent (rcxmit.c, "held") */
	if (!held && softcm_rc_resp_wait_elsewhere(qp))
		return false;
	memset(p, 0, sizeof(*p));
	if (rc->rd_cur != rc->rd_head && rd_res(rc, rc->rd_cur)->atomic) {
		r = rd_res(rc, rc->rd_cur);
		p->h.opcode = SOFTCM_IB_ATOMIC_ACKNOWLEDGE;
		p->h.psn = r->cur_psn;
		p->h.aeth.syndrome = softcm_aeth_ack(SOFTCM_AETH_CREDITS_INVALID);
		p->h.aeth.msn = rc->msn;
		p->h.atomic_orig = r->orig;
		r->cur_psn = softcm_psn_add(r->cur_psn, 1);
	} else if (rc->rd_cur != rc->rd_head) {
		r = rd_res(rc, rc->rd_cur);
		off = softcm_psn_diff(r->cur_psn, r->first_psn) * rc->mtu;
		plen = min(rc->mtu, r->len - off);
		first = r->cur_psn == r->seq_psn;
		last = off + plen == r->len;
		p->h.opcode = read_opcode(first, last);
		p->h.psn = r->cur_psn;
		p->h.payload_len = plen;
		p->h.aeth.syndrome = softcm_aeth_ack(SOFTCM_AETH_CREDITS_INVALID);
		p->h.aeth.msn = rc->msn;
		p->va = r->va + off;
		p->rkey = r->rkey;
		r->cur_psn = softcm_psn_add(r->cur_psn, 1);
	} else {
		p->h.opcode = rc->pend.opcode;
		p->h.psn = rc->pend.psn;
		p->h.aeth.syndrome = rc->pend.syndrome;
		p->h.aeth.msn = rc->pend.msn;
		rc->pend_valid = false;
	}
	rc->resp_busy = true;
	return true;
}

/*
 * Build and send @p.  A READ response's bytes come from the region's
 * pinned pages, copied, never attached (rcxmit.c): the responder's
 * application may write its region while a peer reads it, and a packet
 * must carry the bytes its ICRC was computed over.  Its rkey is looked
 * up again: a region deregistered since
 * the READ was accepted ends it with a Remote Access Error NAK, and the
 * QP goes to ERR.
 */
static bool resp_send(struct softcm_qp *qp, struct resp_pkt *p, gfp_t gfp)
{
	struct softcm_rc *rc = &qp->rc;
	struct sk_buff *skb;
	bool sent = false;
	u8 *payload;
	int ret = 0;

	skb = softcm_rc_alloc(qp, &p->h, &payload, gfp);
	if (skb && p->h.payload_len)
		ret = softcm_mr_remote_copy(qp->sn, qp->pd, p->rkey, p->va, payload,
					    p->h.payload_len, IB_UVERBS_ACCESS_REMOTE_READ, false);
	if (ret) {
		kfree_skb(skb);
		access_nak(qp, ret);
		p->h.opcode = SOFTCM_IB_ACKNOWLEDGE;
		p->h.payload_len = 0;
		p->h.aeth.syndrome = softcm_aeth_nak(SOFTCM_NAK_REMOTE_ACCESS_ERR);
		spin_lock_bh(&qp->lock);
		rc->rd_cur = rc->rd_head;
		rc->pend_valid = false;
		if (qp->state == IB_QPS_RTR || qp->state == IB_QPS_RTS)
			softcm_qp_set_err_locked(qp);
		spin_unlock_bh(&qp->lock);
		skb = softcm_rc_alloc(qp, &p->h, &payload, gfp);
	}
	if (skb) {
		local_bh_disable();
		sent = !softcm_rc_resp_xmit(qp, skb);
		local_bh_enable();
	} else {
		/* as a loss: the requester asks again */
		softcm_stat_inc(&qp->sn->stats, SOFTCM_STAT_DROP_NOMEM);
	}
	spin_lock_bh(&qp->lock);
	rc->resp_busy = false;
	spin_unlock_bh(&qp->lock);
	return sent;
}

/* The run's batch sent, then the sender's place let go (resp_busy). */
static void resp_release(struct softcm_qp *qp, struct softcm_rc_batch *b,
			 enum softcm_rc_counter via)
{
	softcm_rc_batch_send(qp, b, via);
	spin_lock_bh(&qp->lock);
	qp->rc.resp_busy = false;
	spin_unlock_bh(&qp->lock);
}

/*
 * @p, a READ response, built into @b (sent first if @p cannot join it),
 * its bytes copied as resp_send()'s; no memory is a loss, as there.
 * False if its bytes could not be read: resp_send() answers that.
 */
static bool resp_batch(struct softcm_qp *qp, struct resp_pkt *p, struct softcm_rc_batch *b,
		       enum softcm_rc_counter via, gfp_t gfp)
{
	u8 *payload;

	if (softcm_rc_batch_full(b, &p->h))
		softcm_rc_batch_send(qp, b, via);
	payload = softcm_rc_batch_next(qp, b, &p->h, gfp);
	if (!payload) {
		softcm_stat_inc(&qp->sn->stats, SOFTCM_STAT_DROP_NOMEM);
		return true;
	}
	if (softcm_mr_remote_copy(qp->sn, qp->pd, p->rkey, p->va, payload, p->h.payload_len,
				  IB_UVERBS_ACCESS_REMOTE_READ, false)) {
		softcm_rc_batch_drop(b);
		return false;
	}
	softcm_rc_batch_keep(b, &p->h);
	return true;
}

/*
 * Send what waits, @runs batches of SOFTCM_RC_BATCH packets at most,
 * counted in @via, yielding the CPU between them (process context
 * only); the rest from the work, so that a long READ holds neither the
 * QP nor the CPU.  One sender at a time (resp_busy): whoever finds one
 * waiting while another sends leaves it to that one, which looks again.
 * READ responses gather in a batch (rcxmit.c) while the run stays the
 * sender (@held); the batch leaves before any other packet, before the
 * run yields and before it lets go, and the run then looks again.
 */
static void resp_run(struct softcm_qp *qp, enum softcm_rc_counter via, gfp_t gfp,
		     unsigned int runs)
{
	struct softcm_rc_batch b = { .held = true };
	bool more, held = false;
	struct resp_pkt p;
	unsigned int n = 0;

	for (;;) {
		/* the stack holds enough of ours: the last to leave of them calls */
		if (!softcm_rc_resp_may_send(qp)) {
			if (held)
				resp_release(qp, &b, via);
			return;
		}
		spin_lock_bh(&qp->lock);
		more = resp_next(qp, &p, held);
		spin_unlock_bh(&qp->lock);
		if (!more) {
			if (!held)
				return;
			resp_release(qp, &b, via);
			held = false;
			continue;
		}
		if (softcm_rc_batchable(qp, &p.h) && resp_batch(qp, &p, &b, via, gfp)) {
			held = true;
		} else {
			softcm_rc_batch_send(qp, &b, via);
			held = false;
			if (resp_send(qp, &p, gfp))
				softcm_rc_count(qp, via, 1);
		}
		if (++n < SOFTCM_RC_BATCH)
			continue;
		if (held) {
			resp_release(qp, &b, via);
			held = false;
		}
		if (!--runs || !gfpflags_allow_blocking(gfp))
			break;
		cond_resched();
		n = 0;
	}
	queue_work(softcm_workqueue(), &qp->rc.resp_work);
}

/*
 * The responses a request just made sendable, sent from its receive, in
 * softirq with @qp entered and no lock held, as rxe's responder answers
 * from its tasklet: a READ's answer does not wait for a kworker.
 */
void softcm_resp_push(struct softcm_qp *qp)
{
	lockdep_assert_in_softirq();
	resp_run(qp, SOFTCM_RC_RESP_RCV, GFP_ATOMIC, 1);
}

void softcm_resp_work(struct work_struct *work)
{
	struct softcm_qp *qp = container_of(work, struct softcm_qp, rc.resp_work);

	if (!softcm_qp_enter(qp))
		return;
	resp_run(qp, SOFTCM_RC_RESP_WORK, GFP_KERNEL, SOFTCM_RC_POST_RUNS);
	softcm_qp_leave(qp);
}

/*
 * RTR: the READ resources the QP's max_dest_rd_atomic asks for, rounded
 * up to a power of two as rxe (a peer that negotiated 3 may have 4
 * READs outstanding), none kept from before.
 */
void softcm_resp_reset(struct softcm_qp *qp)
{
	struct softcm_rc *rc = &qp->rc;
	u8 n = qp->attr.max_dest_rd_atomic;

	lockdep_assert_held(&qp->lock);
	rc->rd_n = n ? roundup_pow_of_two(n) : 0;
	rc->rd_head = 0;
	rc->rd_cur = 0;
	rc->pend_valid = false;
	memset(rc->rd_res, 0, SOFTCM_MAX_QP_RD_ATOM * sizeof(*rc->rd_res));
}
