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
	softcm_cq_push(qp->rcq, &wc, h->se || status != IB_WC_SUCCESS);
	qp->rq_cons++;
	/* Pairs with the user's acquire of rq_cons: the slot is free. */
	smp_store_release(&qp->kpage->rq_cons, qp->rq_cons);
	qp->rc.in_send = false;
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

bool softcm_resp_rcv(struct softcm_qp *qp, const struct softcm_ib_hdr *h,
		     const u8 *payload, struct softcm_ib_hdr *a)
{
	struct softcm_rc *rc = &qp->rc;
	u8 pos = h->op->pos;
	bool cont = pos == SOFTCM_IB_MIDDLE || pos == SOFTCM_IB_LAST;
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
		softcm_stat_inc(&qp->sn->stats, SOFTCM_STAT_DUPLICATES);
		return ack(qp, a, softcm_psn_add(rc->epsn, SOFTCM_PSN_MASK),
			   softcm_aeth_ack(SOFTCM_AETH_CREDITS_INVALID));
	}
	/* the operations softcm's responder does not carry yet */
	if (!is_send(h->opcode))
		return fail(qp, h, a, SOFTCM_NAK_INVALID_REQUEST);
	/* a message's packets in order, FIRST/MIDDLE a whole PMTU (IBTA 9.7.4.1) */
	if (cont != rc->in_send || h->payload_len > rc->mtu ||
	    ((pos == SOFTCM_IB_FIRST || pos == SOFTCM_IB_MIDDLE) && h->payload_len != rc->mtu))
		return fail(qp, h, a, SOFTCM_NAK_INVALID_REQUEST);
	if (!cont) {
		ret = take_recv(qp);
		if (ret == -EAGAIN) {
			softcm_stat_inc(&qp->sn->stats, SOFTCM_STAT_DROP_QUEUE);
			return ack(qp, a, h->psn, softcm_aeth_rnr_nak(qp->attr.min_rnr_timer));
		}
		if (ret)
			return fail(qp, h, a, SOFTCM_NAK_REMOTE_OP_ERR);
		rc->in_send = true;
	}
	ret = softcm_mr_sge_copy(qp->sn, qp->pd, rc->rsge, rc->rwr.num_sge, rc->roff,
				 (u8 *)payload, h->payload_len, true);
	if (ret) {
		/* rxe: a receive too short is the requester's error */
		complete_recv(qp, h, ret == -EMSGSIZE ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR,
			      rc->roff);
		return fail(qp, h, a, ret == -EMSGSIZE ? SOFTCM_NAK_INVALID_REQUEST :
				      SOFTCM_NAK_REMOTE_OP_ERR);
	}
	rc->roff += h->payload_len;
	rc->epsn = softcm_psn_add(rc->epsn, 1);
	rc->nak_sent = false;
	if (pos == SOFTCM_IB_LAST || pos == SOFTCM_IB_ONLY) {
		rc->msn = (rc->msn + 1) & SOFTCM_PSN_MASK;
		complete_recv(qp, h, IB_WC_SUCCESS, rc->roff);
	}
	if (!h->ackreq)
		return false;
	return ack(qp, a, h->psn, softcm_aeth_ack(SOFTCM_AETH_CREDITS_INVALID));
}
