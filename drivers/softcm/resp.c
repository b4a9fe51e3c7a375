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
 *   count of messages completed (MSN) and no credits (0x1f).
 * The ACK is decided here and sent by the caller once the lock is
 * released.
 */

#include <rdma/ib_verbs.h>

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

/* The receive at rq_cons completes with @status and @byte_len. */
static void complete_recv(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
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
	softcm_cq_push(qp->rcq, &wc, h->se || status != IB_WC_SUCCESS);
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

static bool is_send(u8 opcode)
{
	return opcode <= SOFTCM_IB_SEND_ONLY_IMM;
}

static bool is_write(u8 opcode)
{
	return opcode >= SOFTCM_IB_WRITE_FIRST && opcode <= SOFTCM_IB_WRITE_ONLY_IMM;
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

	if (!(qp->attr.qp_access_flags & IB_UVERBS_ACCESS_REMOTE_WRITE))
		return SOFTCM_NAK_INVALID_REQUEST;
	rc->wva = h->reth.va;
	rc->wrkey = h->reth.rkey;
	rc->wlen = h->reth.len;
	rc->roff = 0;
	/* the whole range, checked once: each packet checks its own again */
	if (rc->wlen && softcm_mr_remote_check(qp->sn, qp->pd, rc->wrkey, rc->wva, rc->wlen,
					       IB_UVERBS_ACCESS_REMOTE_WRITE))
		return SOFTCM_NAK_REMOTE_ACCESS_ERR;
	return 0;
}

/* Place a SEND's or WRITE's payload; a NAK code, or 0. */
static int place(struct softcm_qp *qp, const struct softcm_ib_hdr *h, const u8 *payload)
{
	struct softcm_rc *rc = &qp->rc;
	int ret;

	if (rc->in_msg == SOFTCM_RC_IN_WRITE) {
		if (h->payload_len > rc->wlen - rc->roff)
			return SOFTCM_NAK_INVALID_REQUEST;
		if (h->payload_len &&
		    softcm_mr_remote_copy(qp->sn, qp->pd, rc->wrkey, rc->wva + rc->roff,
					  (u8 *)payload, h->payload_len,
					  IB_UVERBS_ACCESS_REMOTE_WRITE, true))
			return SOFTCM_NAK_REMOTE_ACCESS_ERR;
		rc->roff += h->payload_len;
		return 0;
	}
	ret = softcm_mr_sge_copy(qp->sn, qp->pd, rc->rsge, rc->rwr.num_sge, rc->roff,
				 (u8 *)payload, h->payload_len, true);
	if (ret) {
		/* rxe: a receive too short is the requester's error */
		complete_recv(qp, h, ret == -EMSGSIZE ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR,
			      rc->roff);
		return ret == -EMSGSIZE ? SOFTCM_NAK_INVALID_REQUEST : SOFTCM_NAK_REMOTE_OP_ERR;
	}
	rc->roff += h->payload_len;
	return 0;
}

bool softcm_resp_rcv(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
		     const u8 *payload, struct softcm_ib_hdr *a)
{
	struct softcm_rc *rc = &qp->rc;
	u8 pos = h->op->pos;
	bool cont = pos == SOFTCM_IB_MIDDLE || pos == SOFTCM_IB_LAST;
	bool last = pos == SOFTCM_IB_LAST || pos == SOFTCM_IB_ONLY;
	u8 kind;
	s32 d;
	int ret;

	lockdep_assert_held(&qp->lock);
	if (qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS)
		return false;
	d = softcm_psn_cmp(h->psn, rc->epsn);
	if (d > 0) {
		if (rc->nak_sent)
			return false;
		rc->nak_sent = true;
		return ack(qp, a, rc->epsn, softcm_aeth_nak(SOFTCM_NAK_PSN_SEQ_ERR));
	}
	if (d < 0) {
		softcm_rc_count(qp, SOFTCM_RC_DUPLICATES, 1);
		return ack(qp, a, softcm_psn_add(rc->epsn, SOFTCM_PSN_MASK),
			   softcm_aeth_ack(SOFTCM_AETH_CREDITS_INVALID));
	}
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
		if (ret) {
			if (ret == SOFTCM_NAK_REMOTE_ACCESS_ERR)
				softcm_rc_count(qp, SOFTCM_RC_ACCESS_NAKS_SENT, 1);
			return fail(qp, h, a, ret);
		}
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
	ret = place(qp, h, payload);
	if (ret) {
		if (ret == SOFTCM_NAK_REMOTE_ACCESS_ERR)
			softcm_rc_count(qp, SOFTCM_RC_ACCESS_NAKS_SENT, 1);
		return fail(qp, h, a, ret);
	}
	rc->epsn = softcm_psn_add(rc->epsn, 1);
	rc->nak_sent = false;
	if (last) {
		rc->in_msg = 0;
		rc->msn = (rc->msn + 1) & SOFTCM_PSN_MASK;
		if (kind == SOFTCM_RC_IN_WRITE && rc->roff != rc->wlen)
			return fail(qp, h, a, SOFTCM_NAK_INVALID_REQUEST);
		if (kind == SOFTCM_RC_IN_SEND || has_imm(h->opcode))
			complete_recv(qp, h, IB_WC_SUCCESS, rc->roff);
	}
	if (!h->ackreq)
		return false;
	return ack(qp, a, h->psn, softcm_aeth_ack(SOFTCM_AETH_CREDITS_INVALID));
}
