// SPDX-License-Identifier: GPL-2.0
/*
 * The RC transport's packets: built in one linear skb (headers, payload,
 * pad and ICRC), or, for a SEND's or WRITE's payload of
 * SOFTCM_RC_ZCOPY_MIN bytes or more from its SGEs where the namespace's
 * tx_zcopy asks for it, the headers linear and the payload the region's
 * pinned pages attached as fragments, then the pad and ICRC in a
 * fragment of their own; routed through the QP's cached route and handed to
 * ip_local_out() or ip6_local_out() with no lock held.
 *
 * As rxe (Documentation/protocol.rst, "Data path"): UDP checksum 0, the
 * source port rdma_get_udp_sport() of the AV's flow label and the two
 * QPNs, IPv4 DF with the AV's traffic class and hop limit, IPv6 with flow
 * label 0, P_Key 0xffff.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <rdma/ib_verbs.h>

#include "compat.h"
#include "gid.h"
#include "ibhdr.h"
#include "netns.h"
#include "psn.h"
#include "qp.h"
#include "rc.h"
#include "stats.h"
#include "trace.h"
#include "transport.h"

#define RC_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + sizeof(struct udphdr))

/*
 * The path of @qp's AV, when it enters RTR: addresses, source port, MTU.
 * All of it or nothing: a failure leaves the path it had (and the caller
 * marks it unusable).  Under the QP's lock; the GID table's lock is a
 * leaf under it.
 */
int softcm_rc_path_init(struct softcm_qp *qp)
{
	struct softcm_rc *rc = &qp->rc;
	const struct softcm_ah_attr *av = &qp->attr.ah_attr;
	struct in6_addr saddr, daddr;
	int ifindex;
	u8 sgid[16];
	bool v6;

	lockdep_assert_held(&qp->lock);
	if (!softcm_gid_get(qp->sn, av->sgid_index, sgid, &ifindex))
		return -EADDRNOTAVAIL;
	memcpy(&saddr, sgid, sizeof(saddr));
	memcpy(&daddr, av->dgid, sizeof(daddr));
	v6 = !ipv6_addr_v4mapped(&daddr);
	if (v6 == ipv6_addr_v4mapped(&saddr))
		return -EAFNOSUPPORT;
	if (qp->attr.path_mtu < IB_MTU_256 || qp->attr.path_mtu > IB_MTU_4096)
		return -EINVAL;
	rc->saddr = saddr;
	rc->daddr = daddr;
	rc->ifindex = ifindex;
	rc->v6 = v6;
	rc->sport = rdma_get_udp_sport(av->flow_label, qp->qpn, qp->attr.dest_qp_num);
	rc->tos = av->traffic_class;
	rc->hop_limit = av->hop_limit ?: 64;
	rc->mtu = 256u << (qp->attr.path_mtu - 1);
	dst_cache_reset(&rc->dst);
	return 0;
}

/*
 * An skb for @h's headers and @h->payload_len bytes, with the payload's
 * place in *@payload: the headers written, the pad zeroed, the ICRC left
 * for softcm_rc_xmit().  With @payload NULL, the headers alone: the
 * payload is then attached as page fragments (softcm_mr_sge_attach())
 * and closed by softcm_rc_put_trailer().
 */
struct sk_buff *softcm_rc_alloc(struct softcm_qp *qp, struct softcm_ib_hdr *h,
				u8 **payload, gfp_t gfp)
{
	unsigned int pad = -h->payload_len & 3;
	const struct softcm_ib_op *op = softcm_ib_op(h->opcode);
	struct sk_buff *skb;
	unsigned int len;
	u8 *bth;

	len = op->hdr_len;
	if (payload)
		len += h->payload_len + pad + SOFTCM_IB_ICRC;
	skb = alloc_skb(RC_HEADROOM + len, gfp);
	if (!skb)
		return NULL;
	skb_reserve(skb, RC_HEADROOM);
	bth = skb_put(skb, len);
	h->pkey = 0xffff;
	h->dqpn = qp->attr.dest_qp_num;
	softcm_ib_build(bth, op->hdr_len, h);
	if (payload) {
		*payload = bth + op->hdr_len;
		memset(*payload + h->payload_len, 0, pad);
	}
	return skb;
}

/*
 * The pad and the ICRC's place after an attached payload of
 * @payload_len bytes, zeroed, in a page fragment of their own: nothing
 * may follow an skb's fragments in its linear part.  -ENOMEM.
 */
int softcm_rc_put_trailer(struct sk_buff *skb, unsigned int payload_len)
{
	unsigned int len = (-payload_len & 3) + SOFTCM_IB_ICRC;
	struct page *page;
	void *va;

	va = netdev_alloc_frag(len);
	if (!va)
		return -ENOMEM;
	memset(va, 0, len);
	page = virt_to_head_page(va);
	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, page, va - page_address(page), len);
	skb_len_add(skb, len);
	/* the page fragment cache hands out cache-aligned pieces */
	skb->truesize += SKB_DATA_ALIGN(len) - len;
	/* the payload's pages are the user's, who may write them meanwhile */
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	return 0;
}

static struct dst_entry *route4(struct softcm_qp *qp, __be32 *saddr)
{
	struct softcm_rc *rc = &qp->rc;
	struct rtable *rt;
	struct flowi4 fl4 = {
		/* out of the source GID's device, as rxe (and its link-local GIDs need) */
		.flowi4_oif = rc->ifindex,
		.flowi4_tos = rc->tos & ~INET_ECN_MASK,
		.flowi4_proto = IPPROTO_UDP,
		.daddr = rc->daddr.s6_addr32[3],
		.saddr = rc->saddr.s6_addr32[3],
	};

	*saddr = fl4.saddr;
	rt = dst_cache_get_ip4(&rc->dst, saddr);
	if (rt)
		return &rt->dst;
	rt = ip_route_output_key(qp->sn->net, &fl4);
	if (IS_ERR(rt))
		return ERR_CAST(rt);
	*saddr = fl4.saddr;
	dst_cache_set_ip4(&rc->dst, &rt->dst, fl4.saddr);
	return &rt->dst;
}

/* What the stack made of a packet it took, as an errno (counted). */
static int sent(struct softcm_qp *qp, int ret)
{
	/* (net_xmit_eval() reads its argument twice) */
	ret = net_xmit_eval(ret);
	if (ret)
		softcm_rc_count(qp, SOFTCM_RC_TX_ERRORS, 1);
	return ret;
}

/* A packet with no route to the peer: counted, and gone. */
static int no_route(struct softcm_qp *qp, struct sk_buff *skb, struct dst_entry *dst)
{
	softcm_rc_count(qp, SOFTCM_RC_TX_NO_ROUTE, 1);
	kfree_skb(skb);
	return PTR_ERR(dst);
}

static int xmit4(struct softcm_qp *qp, struct sk_buff *skb)
{
	struct softcm_rc *rc = &qp->rc;
	struct dst_entry *dst;
	__be32 saddr;

	dst = route4(qp, &saddr);
	if (IS_ERR(dst))
		return no_route(qp, skb, dst);
	return sent(qp, softcm_udp_xmit4(qp->sn->net, skb, dst, saddr, rc->daddr.s6_addr32[3],
					 rc->sport, rc->tos, rc->hop_limit));
}

static int xmit6(struct softcm_qp *qp, struct sk_buff *skb)
{
#if IS_ENABLED(CONFIG_IPV6)
	struct softcm_rc *rc = &qp->rc;
	struct flowi6 fl6 = {
		.flowi6_oif = rc->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.daddr = rc->daddr,
		.saddr = rc->saddr,
	};
	struct dst_entry *dst;

	dst = dst_cache_get_ip6(&rc->dst, &fl6.saddr);
	if (!dst) {
		dst = ipv6_stub->ipv6_dst_lookup_flow(qp->sn->net, NULL, &fl6, NULL);
		if (IS_ERR(dst))
			return no_route(qp, skb, dst);
		dst_cache_set_ip6(&rc->dst, dst, &fl6.saddr);
	}
	return sent(qp, softcm_udp_xmit6(qp->sn->net, skb, dst, &fl6.saddr, &rc->daddr,
					 rc->sport, rc->tos, rc->hop_limit));
#else
	kfree_skb(skb);
	return -EAFNOSUPPORT;
#endif
}

/* An ACK or NAK sent: counted, and a NAK traced. */
static void count_ack(struct softcm_qp *qp, u32 psn, u8 syndrome)
{
	switch (softcm_aeth_type(syndrome)) {
	case SOFTCM_AETH_ACK:
		softcm_rc_count(qp, SOFTCM_RC_ACKS_SENT, 1);
		return;
	case SOFTCM_AETH_RNR_NAK:
		softcm_rc_count(qp, SOFTCM_RC_RNR_NAKS_SENT, 1);
		break;
	default:
		if (softcm_aeth_value(syndrome) == SOFTCM_NAK_PSN_SEQ_ERR)
			softcm_rc_count(qp, SOFTCM_RC_SEQ_NAKS_SENT, 1);
		break;
	}
	trace_softcm_rc_nak(qp->sn->net->ns.inum, qp->qpn, true, psn, syndrome);
}

/*
 * Send @skb (from softcm_rc_alloc()) to @qp's peer.  With BH disabled
 * (the route cache is per CPU) and no lock held: the stack may loop the
 * packet back into our own receive on this CPU.
 */
int softcm_rc_xmit(struct softcm_qp *qp, struct sk_buff *skb)
{
	const u8 *bth = skb->data;
	u8 opcode = bth[0];
	/* the payload: what is not headers, pad or ICRC (softcm_rc_alloc()) */
	unsigned int bytes = skb->len - softcm_ib_op(opcode)->hdr_len -
			     ((bth[1] >> 4) & 3) - SOFTCM_IB_ICRC;
	u32 psn = get_unaligned_be32(bth + 8) & SOFTCM_PSN_MASK;
	bool ack = opcode == (SOFTCM_IB_RC | SOFTCM_IB_ACKNOWLEDGE);
	/* an ACK's AETH (in the linear part), read before the skb is the stack's */
	u8 syndrome = ack ? bth[SOFTCM_IB_BTH] : 0;
	/* a payload in the linear part was copied there (softcm_rc_alloc()) */
	bool copied = !skb_is_nonlinear(skb);
	int ret;

	lockdep_assert_in_softirq();
	ret = qp->rc.v6 ? xmit6(qp, skb) : xmit4(qp, skb);
	if (ret) {
		softcm_stat_inc(&qp->sn->stats, SOFTCM_STAT_TX_ERRORS);
		return ret;
	}
	softcm_rc_count(qp, SOFTCM_RC_TX_PACKETS, 1);
	softcm_rc_count(qp, SOFTCM_RC_TX_BYTES, bytes);
	if (copied && bytes)
		softcm_rc_count(qp, SOFTCM_RC_TX_COPIED, bytes);
	if (ack)
		count_ack(qp, psn, syndrome);
	return 0;
}

/* An ACK or NAK the responder decided, @h's opcode, PSN and AETH set. */
void softcm_rc_send_ack(struct softcm_qp *qp, struct softcm_ib_hdr *h)
{
	struct sk_buff *skb;
	u8 *payload;

	h->payload_len = 0;
	skb = softcm_rc_alloc(qp, h, &payload, GFP_ATOMIC);
	if (!skb) {
		softcm_stat_inc(&qp->sn->stats, SOFTCM_STAT_DROP_NOMEM);
		return;
	}
	softcm_rc_xmit(qp, skb);
}
