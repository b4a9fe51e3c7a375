// SPDX-License-Identifier: GPL-2.0
/*
 * The RC transport's receive: every packet the namespace's sockets get
 * for a QP other than QP1 (transport.c hands them over through the
 * receiver registered here), checked as rxe checks them (length and
 * opcode against the headers, RC, P_Key, ICRC), then given to the QP's
 * responder (requests) or completer (responses) under the QP's lock.
 */

#include <kunit/visibility.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>

#include "compat.h"
#include "ibhdr.h"
#include "icrc.h"
#include "netns.h"
#include "qp.h"
#include "rc.h"
#include "stats.h"
#include "trace.h"
#include "transport.h"

/* The ICRC of the packet @skb holds, @len bytes of BTH through ICRC. */
static bool icrc_ok(struct sk_buff *skb, const u8 *bth, unsigned int len)
{
	bool ipv6 = ip_hdr(skb)->version == 6;

	/* The ICRC covers a plain 20-byte IPv4 header, as rxe sends. */
	if (!ipv6 && ip_hdr(skb)->ihl != 5)
		return false;
	return softcm_icrc(skb_network_header(skb), ipv6, skb_transport_header(skb),
			   bth, len - SOFTCM_IB_ICRC) ==
	       get_unaligned_le32(bth + len - SOFTCM_IB_ICRC);
}

/*
 * Whether @skb came from @qp's peer to @qp's own address.  The BTH names
 * only the destination QP, and its PSN window is 2^23 wide: without this,
 * any host that can reach the UDP port could feed a connected QP by
 * guessing its QPN and PSN.  rxe checks the same (its check_addr()).
 */
static bool addr_ok(const struct softcm_qp *qp, const struct sk_buff *skb)
{
	const struct softcm_rc *rc = &qp->rc;

	lockdep_assert_held(&qp->lock);
	if (!rc->path_ok)
		return false;
	if (ip_hdr(skb)->version == 4)
		return !rc->v6 && ip_hdr(skb)->saddr == rc->daddr.s6_addr32[3] &&
		       ip_hdr(skb)->daddr == rc->saddr.s6_addr32[3];
	return rc->v6 && ipv6_addr_equal(&ipv6_hdr(skb)->saddr, &rc->daddr) &&
	       ipv6_addr_equal(&ipv6_hdr(skb)->daddr, &rc->saddr);
}

/* An ACK, or a NAK the completer is given: counted, and a NAK traced. */
static void count_aeth(struct softcm_qp *qp, const struct softcm_ib_hdr *h)
{
	u8 syn = h->aeth.syndrome;

	switch (softcm_aeth_type(syn)) {
	case SOFTCM_AETH_ACK:
		if (h->opcode == (SOFTCM_IB_RC | SOFTCM_IB_ACKNOWLEDGE))
			softcm_rc_count(qp, SOFTCM_RC_ACKS_RECEIVED, 1);
		return;
	case SOFTCM_AETH_RNR_NAK:
		softcm_rc_count(qp, SOFTCM_RC_RNR_NAKS_RECEIVED, 1);
		break;
	default:
		if (softcm_aeth_value(syn) == SOFTCM_NAK_PSN_SEQ_ERR)
			softcm_rc_count(qp, SOFTCM_RC_SEQ_NAKS_RECEIVED, 1);
		break;
	}
	trace_softcm_rc_nak(qp->sn->net->ns.inum, qp->qpn, false, h->psn, syn);
}

/*
 * Every packet for a QP other than QP1, in softirq under RCU, the skb
 * linear: checked, then given to the QP's responder (requests) or
 * completer (responses) under the QP's lock; the ACK the responder
 * decides, or the READ responses it made sendable, leave after it.
 */
static void rc_rcv(struct softcm_net *sn, u32 qpn, struct sk_buff *skb)
{
	const struct udphdr *udph = udp_hdr(skb);
	u8 *bth = (u8 *)(udph + 1);
	unsigned int len = ntohs(udph->len) - sizeof(*udph);
	enum softcm_stat why = SOFTCM_STAT_DROP_HEADER;
	struct softcm_ib_hdr h, ack = {};
	bool send_ack = false, push = false, push_req = false;
	struct softcm_qp *qp;

	if (ntohs(udph->len) < sizeof(*udph) || skb_tail_pointer(skb) < bth + len) {
		why = SOFTCM_STAT_DROP_LENGTH;
		goto drop;
	}
	if (softcm_ib_parse(bth, len, len, &h))
		goto drop;
	if ((h.opcode & 0xe0) != SOFTCM_IB_RC || (h.pkey & 0x7fff) != 0x7fff)
		goto drop;
	why = SOFTCM_STAT_DROP_ICRC;
	if (!icrc_ok(skb, bth, len))
		goto drop;
	why = SOFTCM_STAT_DROP_HEADER;	/* the BTH's QPN names no QP */
	qp = softcm_qp_find_rcu(sn, qpn);
	if (!qp)
		goto drop;
	spin_lock(&qp->lock);
	if (qp->type != IB_QPT_RC) {
		spin_unlock(&qp->lock);
		goto drop;
	}
	if (!addr_ok(qp, skb)) {
		spin_unlock(&qp->lock);
		softcm_rc_count(qp, SOFTCM_RC_DROPS, 1);
		why = SOFTCM_STAT_DROP_ADDRESS;
		goto drop;
	}
	if (!softcm_qp_enter_locked(qp)) {
		spin_unlock(&qp->lock);
		goto drop;
	}
	softcm_rc_count(qp, SOFTCM_RC_RX_PACKETS, 1);
	softcm_rc_count(qp, SOFTCM_RC_RX_BYTES, h.payload_len);
	if (!(h.op->flags & SOFTCM_IB_REQUEST) && (h.op->flags & SOFTCM_IB_HAS_AETH))
		count_aeth(qp, &h);
	if (h.op->flags & SOFTCM_IB_REQUEST)
		send_ack = softcm_resp_rcv(qp, &h, bth + h.op->hdr_len, &ack, &push);
	else
		push_req = softcm_comp_rcv(qp, &h, bth + h.op->hdr_len);
	spin_unlock(&qp->lock);
	if (send_ack)
		softcm_rc_send_ack(qp, &ack);
	if (push)
		softcm_resp_push(qp);
	if (push_req)
		softcm_rc_push_rcv(qp);
	softcm_qp_leave(qp);
	consume_skb(skb);
	return;

drop:
	softcm_stat_inc(&sn->stats, why);
	kfree_skb(skb);
}

static const struct softcm_qp_rcv rc_receiver = {
	.rcv = rc_rcv,
};

int softcm_rc_rcv_init(void)
{
	return softcm_transport_register_qp_rcv(&rc_receiver);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_rc_rcv_init);

void softcm_rc_rcv_uninit(void)
{
	softcm_transport_unregister_qp_rcv(&rc_receiver);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_rc_rcv_uninit);
