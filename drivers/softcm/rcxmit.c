// SPDX-License-Identifier: GPL-2.0
/*
 * The RC transport's packets: built in one linear skb (headers, payload,
 * pad and ICRC), or, for a SEND's or WRITE's payload of
 * SOFTCM_RC_ZCOPY_MIN bytes or more from its SGEs where the namespace's
 * tx_zcopy asks for it, the headers linear and the payload the region's
 * pinned pages attached as fragments, then the pad and ICRC in a
 * fragment of their own; or, for the copied packets a run sends back to
 * back where the namespace's tx_gso asks for it, several to an skb, one
 * per page fragment (struct softcm_rc_batch); routed through the QP's
 * cached route and handed to ip_local_out() or ip6_local_out() with no
 * lock held.
 *
 * As rxe (Documentation/protocol.rst, "Data path"): UDP checksum 0 (a
 * batch's segments get theirs from whoever segments it), the source port
 * rdma_get_udp_sport() of the AV's flow label and the two QPNs, IPv4 DF
 * with the AV's traffic class and hop limit, IPv6 with flow label 0,
 * P_Key 0xffff.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <linux/workqueue.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <rdma/ib_verbs.h>

#include "compat.h"
#include "core.h"
#include "gid.h"
#include "ibhdr.h"
#include "netns.h"
#include "psn.h"
#include "qp.h"
#include "rc.h"
#include "stats.h"
#include "trace.h"
#include "transport.h"

/* for a source device gone by RTR: any device's */
#define RC_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + sizeof(struct udphdr))
/* A batch's UDP payload at most: its IPv4 total length is 16 bits */
#define RC_GSO_MAX	(U16_MAX - sizeof(struct iphdr) - sizeof(struct udphdr))

/*
 * The responder's skbs that the stack holds (SOFTCM_RC_RESP_HIGH).  Each
 * carries a reference to this, not to the QP, in its destructor's
 * argument: an skb may wait in a qdisc after its QP is gone, and the
 * QP's last reference must be put in process context.  A destructor that
 * takes the count down to LOW while the responder waits kicks @kick,
 * which queues the responder's work under @lock as long as @qp is set;
 * the QP clears @qp before it cancels that work, so no kick queues it
 * after.
 *
 * @cpu is where the latest of them was sent: they may still wait there,
 * in that CPU's backlog (a veth's netif_rx(), in a softirq that has gone
 * to ksoftirqd) or in the transmit queue XPS picked for it, and a packet
 * sent from another CPU would overtake them; rxe answers a READ response
 * ahead of its PSN by asking for the READ again.  So, as TCP's
 * ooo_okay, the responder moves to another CPU only when the stack
 * holds none of its skbs: the count is taken down when the peer's IP
 * input orphans an skb (a veth's), or a device has sent it.
 */
struct softcm_rc_held {
	refcount_t ref;		/* the QP's, each skb's, a queued kick's */
	atomic_t skbs;
	unsigned long waiting;	/* HELD_WAIT_* */
	int cpu;		/* set by the sender (resp_busy), with BH off */
	struct mutex lock;
	struct softcm_qp *qp;	/* under @lock; NULL once the QP shuts down */
	struct work_struct kick;
};

/*
 * The last put, maybe from an skb's destructor after the QP and every
 * file are gone: the module stays until then (held_skb_done() is its
 * code), and what little of that function is left to run after
 * module_put() runs before free_module()'s grace period ends.
 */
void softcm_rc_held_put(struct softcm_rc_held *h)
{
	if (h && refcount_dec_and_test(&h->ref)) {
		mutex_destroy(&h->lock);
		kfree(h);
		module_put(THIS_MODULE);
	}
}

/* What the responder waits for: the count down to LOW, or to none */
enum {
	HELD_WAIT_LOW,
	HELD_WAIT_NONE,
};

static void held_kick(struct work_struct *work)
{
	struct softcm_rc_held *h = container_of(work, struct softcm_rc_held, kick);

	mutex_lock(&h->lock);
	if (h->qp)
		queue_work(softcm_workqueue(), &h->qp->rc.resp_work);
	mutex_unlock(&h->lock);
	softcm_rc_held_put(h);
}

int softcm_rc_held_init(struct softcm_qp *qp)
{
	struct softcm_rc_held *h;

	h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h)
		return -ENOMEM;
	refcount_set(&h->ref, 1);
	mutex_init(&h->lock);
	h->qp = qp;
	INIT_WORK(&h->kick, held_kick);
	qp->rc.held = h;
	/* (the caller's file holds the module already) */
	__module_get(THIS_MODULE);
	return 0;
}

/* Before the responder's work is cancelled for good: no kick queues it after. */
void softcm_rc_held_shutdown(struct softcm_qp *qp)
{
	struct softcm_rc_held *h = qp->rc.held;

	mutex_lock(&h->lock);
	h->qp = NULL;
	mutex_unlock(&h->lock);
}

/*
 * Whatever frees or orphans the skb: a device sent it, a qdisc dropped
 * it, in any context (a qdisc's deletion frees its skbs in process
 * context): an RCU reader throughout, for the module's last put.  Only
 * the return after rcu_read_unlock() is left outside, as after any
 * module's last module_put() in its own code.
 */
static void held_skb_done(struct sk_buff *skb)
{
	struct softcm_rc_held *h = skb_shinfo(skb)->destructor_arg;
	int left;
	bool low, none;

	rcu_read_lock();
	left = atomic_dec_return(&h->skbs);
	low = left <= SOFTCM_RC_RESP_LOW && test_and_clear_bit(HELD_WAIT_LOW, &h->waiting);
	none = !left && test_and_clear_bit(HELD_WAIT_NONE, &h->waiting);
	if (low || none) {
		refcount_inc(&h->ref);
		if (!queue_work(softcm_workqueue(), &h->kick))
			refcount_dec(&h->ref);	/* the queued kick holds one */
	}
	softcm_rc_held_put(h);
	rcu_read_unlock();
}

/*
 * @skb counted among the responder's until it is freed or orphaned: no
 * zero-copy skb (which would use the destructor's argument) comes here.
 */
static void held_track(struct softcm_qp *qp, struct sk_buff *skb)
{
	struct softcm_rc_held *h = qp->rc.held;

	lockdep_assert_in_softirq();
	refcount_inc(&h->ref);
	WRITE_ONCE(h->cpu, smp_processor_id());
	atomic_inc(&h->skbs);
	skb_shinfo(skb)->destructor_arg = h;
	skb->destructor = held_skb_done;
}

/*
 * Whether the responder must wait for its skbs the stack holds: @max or
 * more of them, or, on CPU @cpu (not -1), any sent from another CPU.
 */
static bool held_over(struct softcm_rc_held *h, int max, int cpu)
{
	int n = atomic_read(&h->skbs);

	return n >= max || (n && cpu >= 0 && READ_ONCE(h->cpu) != cpu);
}

/*
 * Whether the responder waits (@bit) with held_over(); if so, it stops,
 * and the destructor that takes the count down far enough queues its
 * work.  The bit is set before the count is read again: a destructor
 * that went below meanwhile is seen here, and one that comes later sees
 * the bit.
 */
static bool held_wait(struct softcm_rc_held *h, int bit, int max, int cpu)
{
	if (!held_over(h, max, cpu))
		return false;
	set_bit(bit, &h->waiting);
	/* the bit before the count is read again: atomic_dec_return() orders the other side */
	smp_mb__after_atomic();
	if (!held_over(h, max, cpu)) {
		clear_bit(bit, &h->waiting);
		return false;
	}
	return true;
}

/* Whether the responder may send more now (HIGH): else it stops. */
bool softcm_rc_resp_may_send(struct softcm_qp *qp)
{
	if (!held_wait(qp->rc.held, HELD_WAIT_LOW, SOFTCM_RC_RESP_HIGH, -1))
		return true;
	softcm_rc_count(qp, SOFTCM_RC_RESP_STOPS, 1);
	return false;
}

/*
 * Whether a packet of the responder's sent from this CPU now could
 * overtake one the stack holds from another.  The caller stays on this
 * CPU until it has sent (softirq, or the per-CPU workqueue's work).
 */
bool softcm_rc_resp_elsewhere(struct softcm_qp *qp)
{
	return held_over(qp->rc.held, INT_MAX, smp_processor_id());
}

/*
 * As softcm_rc_resp_elsewhere(); if so, the packet waits, to leave from
 * the work that the last of those, freed, queues.
 */
bool softcm_rc_resp_wait_elsewhere(struct softcm_qp *qp)
{
	if (!held_wait(qp->rc.held, HELD_WAIT_NONE, INT_MAX, smp_processor_id()))
		return false;
	softcm_rc_count(qp, SOFTCM_RC_RESP_CPU_WAITS, 1);
	return true;
}

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
	struct net_device *dev;
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
	/*
	 * Room for the source device's link header, IP and UDP, as the CM's
	 * packets have (transport.c): LL_MAX_HEADER would put a 64-byte
	 * message, or an ACK, in a kmalloc-1k head where a kmalloc-512 one
	 * does, and Debian's kernels zero every byte of it (init_on_alloc).
	 * A route by another device finds room where the stack makes it.
	 */
	rc->headroom = RC_HEADROOM;
	rcu_read_lock();
	dev = dev_get_by_index_rcu(qp->sn->net, ifindex);
	if (dev)
		rc->headroom = LL_RESERVED_SPACE(dev) +
			       (v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) +
			       sizeof(struct udphdr);
	rcu_read_unlock();
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
	skb = alloc_skb(qp->rc.headroom + len, gfp);
	if (!skb)
		return NULL;
	skb_reserve(skb, qp->rc.headroom);
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

/* What the stack made of the @n packets it took, as an errno (counted). */
static int sent(struct softcm_qp *qp, int ret, unsigned int n)
{
	/* (net_xmit_eval() reads its argument twice) */
	ret = net_xmit_eval(ret);
	if (ret)
		softcm_rc_count(qp, SOFTCM_RC_TX_ERRORS, n);
	return ret;
}

/* The route to @qp's peer and the source address it takes, or an ERR_PTR. */
static struct dst_entry *route(struct softcm_qp *qp, struct in6_addr *saddr)
{
	struct softcm_rc *rc = &qp->rc;
	struct dst_entry *dst;

	*saddr = rc->saddr;
	if (!rc->v6)
		return route4(qp, &saddr->s6_addr32[3]);
#if IS_ENABLED(CONFIG_IPV6)
	dst = dst_cache_get_ip6(&rc->dst, saddr);
	if (!dst) {
		struct flowi6 fl6 = {
			.flowi6_oif = rc->ifindex,
			.flowi6_proto = IPPROTO_UDP,
			.daddr = rc->daddr,
			.saddr = rc->saddr,
		};

		dst = ipv6_stub->ipv6_dst_lookup_flow(qp->sn->net, NULL, &fl6, NULL);
		if (!IS_ERR(dst))
			dst_cache_set_ip6(&rc->dst, dst, &fl6.saddr);
		*saddr = fl6.saddr;
	}
	return dst;
#else
	return ERR_PTR(-EAFNOSUPPORT);
#endif
}

/*
 * @skb by @dst (its reference taken): one packet from skb->data, or,
 * with @frags, one per page fragment (a batch).
 */
static int udp_xmit(struct softcm_qp *qp, struct sk_buff *skb, struct dst_entry *dst,
		    const struct in6_addr *saddr, bool frags)
{
	struct softcm_rc *rc = &qp->rc;
	struct net *net = qp->sn->net;

	if (!rc->v6 && frags)
		return softcm_udp_xmit4_frags(net, skb, dst, saddr->s6_addr32[3],
					      rc->daddr.s6_addr32[3], rc->sport, rc->tos,
					      rc->hop_limit);
	if (!rc->v6)
		return softcm_udp_xmit4(net, skb, dst, saddr->s6_addr32[3], rc->daddr.s6_addr32[3],
					rc->sport, rc->tos, rc->hop_limit);
#if IS_ENABLED(CONFIG_IPV6)
	if (frags)
		return softcm_udp_xmit6_frags(net, skb, dst, saddr, &rc->daddr, rc->sport, rc->tos,
					      rc->hop_limit);
	return softcm_udp_xmit6(net, skb, dst, saddr, &rc->daddr, rc->sport, rc->tos,
				rc->hop_limit);
#else
	dst_release(dst);
	kfree_skb(skb);
	return -EAFNOSUPPORT;
#endif
}

/*
 * @n packets to @qp's peer (@frags: as udp_xmit()), counted when the stack
 * refuses them or there is no route (then they are gone).
 */
static int xmit(struct softcm_qp *qp, struct sk_buff *skb, unsigned int n, bool frags)
{
	struct in6_addr saddr;
	struct dst_entry *dst;

	dst = route(qp, &saddr);
	if (IS_ERR(dst)) {
		softcm_rc_count(qp, SOFTCM_RC_TX_NO_ROUTE, n);
		kfree_skb(skb);
		return PTR_ERR(dst);
	}
	return sent(qp, udp_xmit(qp, skb, dst, &saddr, frags), n);
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
	ret = xmit(qp, skb, 1, false);
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

/* As softcm_rc_xmit(), the responder's @skb counted while the stack holds it. */
int softcm_rc_resp_xmit(struct softcm_qp *qp, struct sk_buff *skb)
{
	held_track(qp, skb);
	return softcm_rc_xmit(qp, skb);
}

/* A batch's packet: headers, payload, pad and ICRC. */
static unsigned int batch_len(const struct softcm_ib_hdr *h)
{
	return softcm_ib_op(h->opcode)->hdr_len + ALIGN(h->payload_len, 4) + SOFTCM_IB_ICRC;
}

/*
 * Whether @h's packet may leave in a batch: a payload to copy (an ACK or
 * a READ request goes alone, and a zero-copy payload is the region's
 * pages, which the caller checks), in one page fragment.
 */
bool softcm_rc_batchable(struct softcm_qp *qp, const struct softcm_ib_hdr *h)
{
	return h->payload_len && READ_ONCE(qp->sn->tx_gso) &&
	       SKB_DATA_ALIGN(batch_len(h)) <= PAGE_SIZE;
}

/* The packets @b holds, and their bytes. */
static unsigned int batch_count(const struct softcm_rc_batch *b, unsigned int *len)
{
	if (b->first) {
		*len = b->first->len;
		return 1;
	}
	*len = b->skb ? b->skb->len : 0;
	return b->skb ? skb_shinfo(b->skb)->nr_frags : 0;
}

bool softcm_rc_batch_empty(const struct softcm_rc_batch *b)
{
	return !b->first && !b->skb;
}

/* Whether @b must be sent before @h's packet can be built in it. */
bool softcm_rc_batch_full(const struct softcm_rc_batch *b, const struct softcm_ib_hdr *h)
{
	unsigned int len = batch_len(h), bytes;
	unsigned int n = batch_count(b, &bytes);

	if (!n)
		return false;
	return b->closed || len > b->seg || n >= MAX_SKB_FRAGS || bytes + len > RC_GSO_MAX;
}

/* @len bytes at @va, a page fragment, as @b's skb's next fragment. */
static void batch_attach(struct softcm_rc_batch *b, u8 *va, unsigned int len)
{
	struct sk_buff *skb = b->skb;
	struct page *page = virt_to_head_page(va);

	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, page, va - (u8 *)page_address(page),
			   len);
	skb_len_add(skb, len);
	/* the page fragment cache hands out cache-aligned pieces */
	skb->truesize += SKB_DATA_ALIGN(len) - len;
}

/* @b's skb, with no packet yet: room for the IP and UDP headers only. */
static int batch_start(struct softcm_qp *qp, struct softcm_rc_batch *b, gfp_t gfp)
{
	b->skb = alloc_skb(qp->rc.headroom, gfp);
	if (!b->skb)
		return -ENOMEM;
	skb_reserve(b->skb, qp->rc.headroom);
	return 0;
}

/* @b's skb forgotten if no packet made it there. */
static void batch_unstart(struct softcm_rc_batch *b)
{
	if (b->skb && !skb_shinfo(b->skb)->nr_frags) {
		consume_skb(b->skb);
		b->skb = NULL;
	}
}

/*
 * A second packet comes: the first, alone in a linear skb so far, moves
 * into a page fragment of the batch's skb.  -ENOMEM leaves it as it is.
 */
static int batch_open(struct softcm_qp *qp, struct softcm_rc_batch *b, gfp_t gfp)
{
	struct sk_buff *first = b->first;
	u8 *va;

	if (batch_start(qp, b, gfp))
		return -ENOMEM;
	va = netdev_alloc_frag(first->len);
	if (!va) {
		batch_unstart(b);
		return -ENOMEM;
	}
	memcpy(va, first->data, first->len);
	batch_attach(b, va, first->len);
	b->first = NULL;
	consume_skb(first);
	return 0;
}

/*
 * The place of @h's payload in a packet begun in @b (not full): its
 * headers written, its pad zeroed; NULL for no memory.  Then
 * softcm_rc_batch_keep() puts the packet in @b, or
 * softcm_rc_batch_drop() forgets it.  A batch that a message's last
 * (or only) packet begins is begun as any packet alone is built
 * (softcm_rc_alloc()), so that a message of one packet costs what it did
 * without batches; that packet moves into a page fragment once a second
 * one comes, each of which is built in its own.  One that a first or
 * middle packet begins, whose message has more to come, is begun in a
 * fragment: the linear head a 1-KiB packet takes (kmalloc-2k, zeroed by
 * init_on_alloc) and its copy into the fragment would be paid for
 * nothing (performance.rst, "A batch begun in a fragment").
 */
u8 *softcm_rc_batch_next(struct softcm_qp *qp, struct softcm_rc_batch *b,
			 struct softcm_ib_hdr *h, gfp_t gfp)
{
	const struct softcm_ib_op *op = softcm_ib_op(h->opcode);
	unsigned int hlen = op->hdr_len;
	unsigned int len = batch_len(h);
	u8 *bth, *payload;

	if (softcm_rc_batch_empty(b)) {
		if (op->pos == SOFTCM_IB_ONLY || op->pos == SOFTCM_IB_LAST) {
			b->next_skb = softcm_rc_alloc(qp, h, &payload, gfp);
			return b->next_skb ? payload : NULL;
		}
		if (batch_start(qp, b, gfp))
			return NULL;
	} else if (b->first && batch_open(qp, b, gfp)) {
		return NULL;
	}
	bth = netdev_alloc_frag(len);
	if (!bth) {
		batch_unstart(b);
		return NULL;
	}
	h->pkey = 0xffff;
	h->dqpn = qp->attr.dest_qp_num;
	softcm_ib_build(bth, hlen, h);
	memset(bth + hlen + h->payload_len, 0, len - hlen - h->payload_len);
	b->next = bth;
	b->next_len = len;
	return bth + hlen;
}

void softcm_rc_batch_keep(struct softcm_rc_batch *b, const struct softcm_ib_hdr *h)
{
	if (b->next_skb) {
		b->first = b->next_skb;
		b->next_skb = NULL;
		b->seg = b->first->len;
		b->bytes = h->payload_len;
		b->closed = false;
		return;
	}
	if (!skb_shinfo(b->skb)->nr_frags) {	/* begun in a fragment */
		b->seg = b->next_len;
		b->bytes = 0;
	}
	batch_attach(b, b->next, b->next_len);
	b->closed = b->next_len < b->seg;
	b->bytes += h->payload_len;
	b->next = NULL;
}

void softcm_rc_batch_drop(struct softcm_rc_batch *b)
{
	if (b->next_skb) {
		kfree_skb(b->next_skb);
		b->next_skb = NULL;
		return;
	}
	skb_free_frag(b->next);
	b->next = NULL;
	batch_unstart(b);
}

/*
 * Whether a batch of @n packets, @len bytes, may leave by @dev whole: by
 * a veth or the loopback, which hand it to a receiver's stack in this
 * host (its UDP socket cuts it, the checksum partial and trusted), and
 * one that takes UDP GSO skbs of that size and that many packets.  A
 * NIC, or the stack for one without UDP segmentation, would cut it with
 * a UDP checksum in every packet, where rxe puts 0 on the wire.
 */
static bool batch_whole(const struct net_device *dev, unsigned int n, unsigned int len)
{
	if (!(dev->features & NETIF_F_GSO_UDP_L4) || n > READ_ONCE(dev->gso_max_segs) ||
	    len > READ_ONCE(dev->gso_max_size))
		return false;
	if (dev->flags & IFF_LOOPBACK)
		return true;
	return dev->rtnl_link_ops && !strcmp(dev->rtnl_link_ops->kind, "veth");
}

/*
 * @skb's packets, one skb each, as a list (@skb consumed): those there
 * was no memory for are lost, as any packet that could not be built,
 * and counted so.
 */
static struct sk_buff *batch_split(struct softcm_qp *qp, struct sk_buff *skb)
{
	const struct skb_shared_info *si = skb_shinfo(skb);
	struct sk_buff *list = NULL, **tail = &list, *one;
	int i;

	for (i = 0; i < si->nr_frags; i++) {
		const skb_frag_t *f = &si->frags[i];

		one = alloc_skb(qp->rc.headroom, GFP_ATOMIC);
		if (!one) {
			softcm_stat_add(&qp->sn->stats, SOFTCM_STAT_DROP_NOMEM, si->nr_frags - i);
			break;
		}
		skb_reserve(one, qp->rc.headroom);
		get_page(skb_frag_page(f));
		skb_fill_page_desc(one, 0, skb_frag_page(f), skb_frag_off(f), skb_frag_size(f));
		skb_len_add(one, skb_frag_size(f));
		*tail = one;
		tail = &one->next;
	}
	consume_skb(skb);
	return list;
}

/*
 * Send what @b holds (something) and empty it, with BH disabled and no
 * lock held (as softcm_rc_xmit()): the packets sent, 0 if none could
 * be.  Whole, as one UDP GSO skb, where the device allows it
 * (batch_whole()); else one skb each, as softcm_rc_xmit()'s.
 */
static unsigned int batch_xmit(struct softcm_qp *qp, struct softcm_rc_batch *b)
{
	struct sk_buff *skb = b->skb, *next;
	unsigned int n, done = 0, bytes = 0;
	struct in6_addr saddr;
	struct dst_entry *dst;

	lockdep_assert_in_softirq();
	if (b->first) {
		skb = b->first;
		b->first = NULL;
		if (b->held)
			return softcm_rc_resp_xmit(qp, skb) ? 0 : 1;
		return softcm_rc_xmit(qp, skb) ? 0 : 1;
	}
	/* (an skb is made for a second packet, with the first on it) */
	b->skb = NULL;
	n = skb_shinfo(skb)->nr_frags;
	dst = route(qp, &saddr);
	if (IS_ERR(dst)) {
		softcm_rc_count(qp, SOFTCM_RC_TX_NO_ROUTE, n);
		softcm_stat_add(&qp->sn->stats, SOFTCM_STAT_TX_ERRORS, n);
		kfree_skb(skb);
		return 0;
	}
	if (n == 1 || batch_whole(dst->dev, n, skb->len)) {
		if (b->held)
			held_track(qp, skb);
		if (sent(qp, udp_xmit(qp, skb, dst, &saddr, true), n)) {
			softcm_stat_add(&qp->sn->stats, SOFTCM_STAT_TX_ERRORS, n);
			return 0;
		}
		done = n;
		if (n > 1)
			softcm_rc_count(qp, SOFTCM_RC_TX_GSO, n);
		bytes = b->bytes;
	} else {
		for (skb = batch_split(qp, skb); skb; skb = next) {
			const u8 *bth = skb_frag_address(&skb_shinfo(skb)->frags[0]);
			unsigned int len = skb->len - softcm_ib_op(bth[0])->hdr_len -
					   ((bth[1] >> 4) & 3) - SOFTCM_IB_ICRC;

			next = skb->next;
			skb_mark_not_on_list(skb);
			if (b->held)
				held_track(qp, skb);
			if (sent(qp, udp_xmit(qp, skb, dst_clone(dst), &saddr, true), 1)) {
				softcm_stat_inc(&qp->sn->stats, SOFTCM_STAT_TX_ERRORS);
				continue;
			}
			done++;
			bytes += len;
		}
		dst_release(dst);
	}
	softcm_rc_count(qp, SOFTCM_RC_TX_PACKETS, done);
	softcm_rc_count(qp, SOFTCM_RC_TX_BYTES, bytes);
	softcm_rc_count(qp, SOFTCM_RC_TX_COPIED, bytes);
	return done;
}

/*
 * What @b holds, if anything, sent, its packets counted in @via (the
 * requester's or the responder's sender): no lock held, BH disabled here
 * for the route cache.
 */
void softcm_rc_batch_send(struct softcm_qp *qp, struct softcm_rc_batch *b,
			  enum softcm_rc_counter via)
{
	unsigned int n;

	if (softcm_rc_batch_empty(b))
		return;
	local_bh_disable();
	n = batch_xmit(qp, b);
	/* before the softirqs local_bh_enable() runs answer the packets */
	if (n)
		softcm_rc_count(qp, via, n);
	local_bh_enable();
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
