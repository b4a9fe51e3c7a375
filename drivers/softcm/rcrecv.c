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

/*
 * The ICRC of the packet @skb holds, @len bytes of BTH through ICRC from
 * @boff: over the linear bytes at once, over fragments as they lie.
 */
static bool icrc_ok(struct sk_buff *skb, unsigned int boff, unsigned int len)
{
	bool ipv6 = ip_hdr(skb)->version == 6;
	const u8 *bth = skb->data + boff;
	u8 buf[SOFTCM_IB_ICRC];
	const u8 *want;
	s64 got;

	/* The ICRC covers a plain 20-byte IPv4 header, as rxe sends. */
	if (!ipv6 && ip_hdr(skb)->ihl != 5)
		return false;
	/*
	 * A checksum still partial is the stack's word for a packet whose
	 * bytes nothing damaged: sent in this host (a batch's segment,
	 * rcxmit.c, or any local UDP sender's) over no wire, or aggregated
	 * by GRO after its UDP checksum was verified.  The ICRC, an unkeyed
	 * CRC against damage on links, adds nothing there and is not
	 * computed a second time; what decides whether a packet is taken is
	 * its address, QPN and PSN.  rxe's packets (checksum 0, one skb
	 * each) never come so, and a packet netem corrupts has its checksum
	 * completed first, and is checked.
	 */
	if (skb->ip_summed == CHECKSUM_PARTIAL)
		return true;
	want = skb_header_pointer(skb, boff + len - SOFTCM_IB_ICRC, sizeof(buf), buf);
	if (!want)
		return false;
	if (skb_headlen(skb) >= boff + len)
		got = softcm_icrc(skb_network_header(skb), ipv6, skb_transport_header(skb),
				  bth, len - SOFTCM_IB_ICRC);
	else
		got = softcm_icrc_skb(skb_network_header(skb), ipv6, skb_transport_header(skb),
				      skb, boff, len - SOFTCM_IB_ICRC);
	return got == get_unaligned_le32(want);
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
 * Every packet for a QP other than QP1, in softirq under RCU, its UDP
 * header linear: checked, then given to the QP's responder (requests)
 * or completer (responses) under the QP's lock; the ACK the responder
 * decides, or the READ responses it made sendable, leave after it.  The
 * headers are read and the payload copied to its MR from where they lie
 * (a NIC's page fragments, a reassembled datagram's fragment list, a
 * batch's segment), never pulled or linearised.
 */
static void rc_rcv(struct softcm_net *sn, u32 qpn, struct sk_buff *skb)
{
	unsigned int boff = skb_transport_offset(skb) + sizeof(struct udphdr);
	unsigned int ulen = ntohs(udp_hdr(skb)->len);
	unsigned int len = ulen - sizeof(struct udphdr);
	enum softcm_stat why = SOFTCM_STAT_DROP_HEADER;
	bool send_ack = false, push = false, push_req = false;
	unsigned int avail;
	struct softcm_ib_hdr h, ack = {};
	struct softcm_rc_payload pl;
	u8 buf[SOFTCM_IB_HDR_MAX];
	struct softcm_qp *qp;
	const u8 *hdr;

	if (ulen < sizeof(struct udphdr) || boff + len > skb->len || len < SOFTCM_IB_BTH) {
		why = SOFTCM_STAT_DROP_LENGTH;
		goto drop;
	}
	/*
	 * The headers read where they lie, never pulled: the payload stays
	 * where the stack put it, and a head built with no room to spare
	 * (a segment of a batch's GSO skb, a zero-copy sender's, rcxmit.c)
	 * is not reallocated for them.
	 */
	avail = min_t(unsigned int, len, sizeof(buf));
	hdr = skb_header_pointer(skb, boff, avail, buf);
	if (!hdr || softcm_ib_parse(hdr, avail, len, &h))
		goto drop;
	if ((h.opcode & 0xe0) != SOFTCM_IB_RC || (h.pkey & 0x7fff) != 0x7fff)
		goto drop;
	why = SOFTCM_STAT_DROP_ICRC;
	if (!icrc_ok(skb, boff, len))
		goto drop;
	pl.skb = skb;
	pl.off = boff + h.op->hdr_len;
	why = SOFTCM_STAT_DROP_QPN;
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
		send_ack = softcm_resp_rcv(qp, &h, &pl, &ack, &push);
	else
		push_req = softcm_comp_rcv(qp, &h, &pl);
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
