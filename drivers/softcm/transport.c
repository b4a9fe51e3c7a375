// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 transport of CM MADs: per network namespace, a kernel UDP tunnel
 * socket on the CM port (as rxe's) receives; sending builds the whole
 * IP/UDP/BTH/DETH/MAD/ICRC packet and hands it to the IP layer, as rxe
 * does, so that every byte the peer checks is ours to get right.
 *
 * The sockets are opened by the first listen or connect in a namespace,
 * not when it is created: the port may belong to rdma_rxe in the initial
 * namespace, and softcm must not take it from rxe loaded later.
 *
 * Receiving runs in softirq and dispatches by the BTH's destination QP.
 * For QP1 it only checks what rxe checks before a MAD reaches its CM
 * (headers, Q_Key, P_Key, ICRC), then queues the packet for the
 * namespace's receive work, where the CM runs in process context and may
 * sleep on ids' mutexes.  Any other QP's packets go to the one receiver
 * registered for them (the data path's); while there is none they are
 * dropped and counted.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jhash.h>
#include <linux/lockdep.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/udp.h>
#include <kunit/visibility.h>
#include <net/checksum.h>
#include <net/inet_sock.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <softcm/wire.h>

#include "compat.h"
#include "core.h"
#include "cm.h"
#include "icrc.h"
#include "netns.h"
#include "params.h"
#include "stats.h"
#include "trace.h"
#include "transport.h"

/* rxe's source port for QP1 (0xc000 | hash_32(1, 14)); nobody checks it. */
#define ROCE_QP1_SPORT	0xd872
/*
 * Beyond softcm_rx_queue_max packets waiting in a namespace, in all its
 * shards together, a flood is dropped.  The bound is the namespace's, not
 * a shard's: what a remote flood can make a namespace hold (by default
 * about 4096 skbs of 2 to 4 KiB truesize, charged to no socket or cgroup)
 * must not grow with the number of CPUs, which the shards follow, nor
 * with how the flood spreads its comm IDs over them.  4096 is the figure
 * the one queue before the shards had, which covers a burst of every
 * connection a busy server's backlog holds; a shard may use all of it.
 */

/*
 * Testing only (protocol_test's full receive queue): while set, the
 * receive works leave their packets queued, so that a test fills the
 * queues to exactly rx_queue_max whatever the CPUs.  The one module
 * parameter that may change at run time: it changes when packets are
 * handled, never how.
 * Once it is cleared, the next packet of a held queue (queued) runs its
 * work again, and the next packet dropped for full queues runs them all.
 */
static bool rx_hold;
module_param(rx_hold, bool, 0600);
MODULE_PARM_DESC(rx_hold, "testing: hold received CM packets in their queues (default N)");

/*
 * The receiver of packets for QPs other than QP1 (the data path's, once
 * there is one): one for the module, published under the mutex, used
 * under RCU.
 */
static const struct softcm_qp_rcv __rcu *qp_receiver;
static DEFINE_MUTEX(qp_receiver_lock);

static enum softcm_stat drop_reason(int err)
{
	switch (err) {
	case -EMSGSIZE:
		return SOFTCM_STAT_DROP_LENGTH;
	case -EPERM:
		return SOFTCM_STAT_DROP_QKEY;
	case -EACCES:
		return SOFTCM_STAT_DROP_PKEY;
	default:
		return SOFTCM_STAT_DROP_HEADER;
	}
}

/* Sent to this host alone: not a link-layer or IP broadcast or multicast. */
static bool unicast_to_us(struct sk_buff *skb, bool ipv6)
{
	const struct rtable *rt;

	if (skb->pkt_type != PACKET_HOST)
		return false;
	if (ipv6)
		return !ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr);
	rt = skb_rtable(skb);
	return !ipv4_is_multicast(ip_hdr(skb)->daddr) && !ipv4_is_lbcast(ip_hdr(skb)->daddr) &&
	       !(rt && rt->rt_flags & (RTCF_BROADCAST | RTCF_MULTICAST));
}

static void count_drop(struct softcm_net *sn, struct sk_buff *skb, enum softcm_stat why)
{
	softcm_stat_inc(&sn->stats, why);
	kfree_skb(skb);
}

/* The UDP payload's length; 0 if the UDP header and the data disagree. */
static unsigned int payload_len(struct sk_buff *skb)
{
	const struct udphdr *udph = udp_hdr(skb);
	unsigned int len = ntohs(udph->len);

	if (len < sizeof(*udph) || skb_transport_offset(skb) + len > skb->len)
		return 0;
	return len - sizeof(*udph);
}

/*
 * The shard of a CM MAD: by its sender's address and the first word after
 * the MAD header, which for every message of a connection is the
 * sender's comm ID (for SIDR, its request ID), so that retransmissions
 * and the messages of one connection stay in order.
 */
static struct softcm_rx_shard *rx_shard(struct softcm_net *sn, struct sk_buff *skb,
					bool ipv6, const u8 *mad)
{
	struct softcm_transport *t = &sn->transport;
	u32 w0 = get_unaligned_be32(mad + SOFTCM_MAD_HDR_SIZE);
	u32 h;

	if (ipv6)
		h = jhash(&ipv6_hdr(skb)->saddr, sizeof(struct in6_addr), t->hash_seed ^ w0);
	else
		h = jhash_2words((__force u32)ip_hdr(skb)->saddr, w0, t->hash_seed);
	return &t->rx[reciprocal_scale(h, t->nr_shards)];
}

/*
 * The namespace's queues are full: their works are queued or running
 * already, unless rx_hold held them; once it is cleared, this runs them.
 */
static void kick_shards(struct softcm_transport *t)
{
	unsigned int i;

	for (i = 0; i < t->nr_shards; i++)
		if (!skb_queue_empty_lockless(&t->rx[i].q))
			queue_work(softcm_workqueue(), &t->rx[i].work);
}

/* A packet for QP1, linear, a MAD's size from BTH through ICRC: queued for the CM. */
static void rcv_gsi(struct softcm_net *sn, struct sk_buff *skb)
{
	struct udphdr *udph = udp_hdr(skb);
	u8 *bth = (u8 *)(udph + 1), *iph;
	struct softcm_rx_shard *shard;
	enum softcm_stat why;
	bool ipv6;
	int ret;

	ret = softcm_roce_check_headers(bth, SOFTCM_ROCE_PAYLOAD);
	if (ret) {
		why = drop_reason(ret);
		goto drop;
	}

	iph = skb_network_header(skb);
	ipv6 = ip_hdr(skb)->version == 6;
	/* The ICRC covers a plain 20-byte IPv4 header, as rxe sends. */
	why = SOFTCM_STAT_DROP_HEADER;
	if (!ipv6 && ip_hdr(skb)->ihl != 5)
		goto drop;
	why = SOFTCM_STAT_DROP_ICRC;
	if (softcm_icrc(iph, ipv6, (u8 *)udph, bth,
			SOFTCM_ROCE_PAYLOAD - SOFTCM_ICRC_SIZE) !=
	    get_unaligned_le32(bth + SOFTCM_ROCE_PAYLOAD - SOFTCM_ICRC_SIZE))
		goto drop;

	/*
	 * The CM answers its packets' senders and takes their destination
	 * as its own address: a broadcast or multicast request would make
	 * every host on the link create an id and answer from an address
	 * that is not its own.
	 */
	why = SOFTCM_STAT_BAD_ADDRESS;
	if (!unicast_to_us(skb, ipv6))
		goto drop;

	why = SOFTCM_STAT_DROP_QUEUE;
	shard = rx_shard(sn, skb, ipv6, bth + SOFTCM_BTH_SIZE + SOFTCM_DETH_SIZE);
	if (atomic_inc_return(&sn->transport.rx_queued) > softcm_rx_queue_max) {
		atomic_dec(&sn->transport.rx_queued);
		kick_shards(&sn->transport);
		goto drop;
	}
	/* The input route is only valid under this RCU section. */
	skb_dst_drop(skb);
	softcm_rx_cb(skb)->ifindex = skb->skb_iif;
	skb_queue_tail(&shard->q, skb);
	queue_work(softcm_workqueue(), &shard->work);
	return;

drop:
	count_drop(sn, skb, why);
}

/*
 * A packet for any other QP goes to the registered receiver.  With none
 * it is dropped, and counted as the CM's checks have always counted it
 * (the size of a CM packet first, then the BTH), so that the counters do
 * not tell whether the module could have a data path.
 */
static void rcv_other_qp(struct softcm_net *sn, u32 qpn, struct sk_buff *skb,
			 unsigned int len)
{
	const struct softcm_qp_rcv *r;

	rcu_read_lock();
	r = rcu_dereference(qp_receiver);
	if (r)
		r->rcv(sn, qpn, skb);
	rcu_read_unlock();
	if (!r)
		count_drop(sn, skb, len == SOFTCM_ROCE_PAYLOAD ?
				    SOFTCM_STAT_DROP_HEADER : SOFTCM_STAT_DROP_LENGTH);
}

/*
 * Every packet the namespace's sockets receive, in softirq: dispatched by
 * the BTH's destination QP, QP1 to the CM and any other to its receiver.
 */
VISIBLE_IF_KUNIT void softcm_transport_rcv(struct softcm_net *sn, struct sk_buff *skb)
{
	u8 buf[SOFTCM_BTH_SIZE];
	const u8 *bth = NULL;
	unsigned int len;
	u32 qpn;

	/*
	 * The BTH read where it lies, not pulled: a segment of a UDP GSO
	 * skb has its headers alone in a head with no room to spare, and
	 * the data path's receive reads fragments as they are (rcrecv.c).
	 */
	len = pskb_may_pull(skb, skb_transport_offset(skb) + sizeof(struct udphdr)) ?
	      payload_len(skb) : 0;
	if (len >= SOFTCM_BTH_SIZE)
		bth = skb_header_pointer(skb, skb_transport_offset(skb) + sizeof(struct udphdr),
					 sizeof(buf), buf);
	if (!bth) {
		count_drop(sn, skb, SOFTCM_STAT_DROP_LENGTH);
		return;
	}
	/* The destination QP: the BTH's bytes 5 to 7. */
	qpn = get_unaligned_be32(bth + 4) & 0xffffff;
	if (qpn != SOFTCM_GSI_QPN) {
		/* read where it lies, fragments included (rcrecv.c) */
		rcv_other_qp(sn, qpn, skb, len);
		return;
	}
	/*
	 * A MAD is checked and decoded as one buffer, and is of one size:
	 * checked first, so that no sender has a datagram of up to 64 KiB
	 * copied into one buffer only to be dropped.
	 */
	if (len != SOFTCM_ROCE_PAYLOAD) {
		count_drop(sn, skb, SOFTCM_STAT_DROP_LENGTH);
		return;
	}
	if (skb_linearize(skb)) {
		count_drop(sn, skb, SOFTCM_STAT_DROP_NOMEM);
		return;
	}
	rcv_gsi(sn, skb);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_transport_rcv);

static int encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct softcm_net *sn = rcu_dereference_sk_user_data(sk);

	if (sn)
		softcm_transport_rcv(sn, skb);
	else
		kfree_skb(skb);
	return 0;
}

/*
 * Register @r as the receiver of every namespace's packets for QPs other
 * than QP1; -EBUSY if there is one already.
 */
int softcm_transport_register_qp_rcv(const struct softcm_qp_rcv *r)
{
	int ret = 0;

	mutex_lock(&qp_receiver_lock);
	if (rcu_dereference_protected(qp_receiver, lockdep_is_held(&qp_receiver_lock)))
		ret = -EBUSY;
	else
		rcu_assign_pointer(qp_receiver, r);
	mutex_unlock(&qp_receiver_lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_transport_register_qp_rcv);

/* Once this returns, no receive runs @r any more. */
void softcm_transport_unregister_qp_rcv(const struct softcm_qp_rcv *r)
{
	mutex_lock(&qp_receiver_lock);
	if (!WARN_ON(rcu_dereference_protected(qp_receiver,
					       lockdep_is_held(&qp_receiver_lock)) != r))
		RCU_INIT_POINTER(qp_receiver, NULL);
	mutex_unlock(&qp_receiver_lock);
	synchronize_net();
}
EXPORT_SYMBOL_IF_KUNIT(softcm_transport_unregister_qp_rcv);

static void rx_work(struct work_struct *work)
{
	struct softcm_rx_shard *shard = container_of(work, struct softcm_rx_shard, work);
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&shard->q))) {
		/*
		 * Read after the dequeue, which orders it after the packet's
		 * queueing: a hold set before a packet was sent holds that
		 * packet even when this work was already running.
		 */
		if (unlikely(READ_ONCE(rx_hold))) {
			skb_queue_head(&shard->q, skb);
			return;
		}
		atomic_dec(&shard->sn->transport.rx_queued);
		softcm_cm_rcv(shard->sn, skb);
		consume_skb(skb);
		cond_resched();
	}
}

static struct socket *open_sock(struct softcm_net *sn, bool ipv6)
{
	struct udp_tunnel_sock_cfg tnl = {
		.sk_user_data = sn,
		.encap_type = 1,
		.encap_rcv = encap_rcv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(softcm_udp_port),
	};
	struct socket *sock;
	int ret;

	if (ipv6) {
		if (!IS_ENABLED(CONFIG_IPV6))
			return ERR_PTR(-EAFNOSUPPORT);
		cfg.family = AF_INET6;
		cfg.ipv6_v6only = 1;
		/* rxe sends a zero UDP checksum, over IPv6 too */
		cfg.use_udp6_rx_checksums = 0;
	} else {
		cfg.family = AF_INET;
	}
	ret = udp_sock_create(sn->net, &cfg, &sock);
	if (ret)
		return ERR_PTR(ret);
	setup_udp_tunnel_sock(sn->net, sock, &tnl);
	/*
	 * A tunnel socket asks for a UDP GSO skb's segments with their
	 * checksums computed (a pass over every byte) for the inner
	 * packets it forwards; this one forwards nothing, reads the RoCEv2
	 * payload and checks its ICRC, so a batch sent in this host
	 * (rcxmit.c) stays partial, as the stack trusts it.
	 */
	inet_dec_convert_csum(sock->sk);
	return sock;
}

/*
 * Open the namespace's sockets if they are not yet.  IPv4 must work; an
 * IPv6 failure (IPv6 disabled in the namespace, say) is only recorded.
 */
int softcm_transport_get(struct softcm_net *sn)
{
	struct softcm_transport *t = &sn->transport;
	struct socket *sock;
	int i, ret;

	if (READ_ONCE(t->sock_state[0]) == 1)
		return 0;

	mutex_lock(&t->sock_lock);
	for (i = 0; i < 2; i++) {
		if (t->sock[i])
			continue;
		sock = open_sock(sn, i);
		if (IS_ERR(sock)) {
			WRITE_ONCE(t->sock_state[i], PTR_ERR(sock));
			continue;
		}
		t->sock[i] = sock;
		WRITE_ONCE(t->sock_state[i], 1);
	}
	ret = t->sock_state[0] == 1 ? 0 : t->sock_state[0];
	mutex_unlock(&t->sock_lock);
	if (ret)
		pr_warn_ratelimited("UDP port %u is not available in network namespace %u (%d); connections there fail with EADDRINUSE\n",
				    softcm_udp_port, sn->net->ns.inum, ret);
	return ret;
}

void softcm_transport_net_init(struct softcm_net *sn)
{
	struct softcm_transport *t = &sn->transport;
	unsigned int i;

	mutex_init(&t->sock_lock);
	t->nr_shards = min_t(unsigned int, nr_cpu_ids, SOFTCM_RX_SHARDS);
	atomic_set(&t->rx_queued, 0);
	t->hash_seed = get_random_u32();
	for (i = 0; i < SOFTCM_RX_SHARDS; i++) {
		skb_queue_head_init(&t->rx[i].q);
		INIT_WORK(&t->rx[i].work, rx_work);
		t->rx[i].sn = sn;
	}
}
EXPORT_SYMBOL_IF_KUNIT(softcm_transport_net_init);

void softcm_transport_net_uninit(struct softcm_net *sn)
{
	struct softcm_transport *t = &sn->transport;
	int i;

	/* After this no encap_rcv runs: it clears sk_user_data and waits. */
	for (i = 0; i < 2; i++) {
		if (t->sock[i])
			udp_tunnel_sock_release(t->sock[i]);
		t->sock[i] = NULL;
	}
	for (i = 0; i < SOFTCM_RX_SHARDS; i++) {
		cancel_work_sync(&t->rx[i].work);
		skb_queue_purge(&t->rx[i].q);
	}
	mutex_destroy(&t->sock_lock);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_transport_net_uninit);

/* BTH, DETH and the MAD, with room for the ICRC, at the end of @skb. */
static u8 *put_payload(struct sk_buff *skb, struct softcm_net *sn, const u8 *mad)
{
	u8 *bth = skb_put(skb, SOFTCM_ROCE_PAYLOAD);
	u32 psn = atomic_fetch_inc(&sn->transport.gsi_psn) & SOFTCM_BTH_PSN_MASK;

	softcm_roce_put_headers(bth, psn);
	memcpy(bth + SOFTCM_BTH_SIZE + SOFTCM_DETH_SIZE, mad, SOFTCM_MAD_SIZE);
	return bth;
}

/* The UDP header before @skb's RoCEv2 payload (BTH to ICRC): checksum 0. */
static struct udphdr *push_udp(struct sk_buff *skb, u16 sport)
{
	unsigned int len = skb->len;
	struct udphdr *udph = skb_push(skb, sizeof(*udph));

	skb_reset_transport_header(skb);
	udph->source = htons(sport);
	udph->dest = htons(softcm_udp_port);
	udph->len = htons(sizeof(*udph) + len);
	udph->check = 0;
	return udph;
}

/*
 * The ICRC of the @len bytes from @bth, the headers before them final,
 * into its place at their end: in the linear part, or, when the payload
 * is page fragments (rcxmit.c), in the trailer's fragment.
 */
static void put_icrc(struct sk_buff *skb, const u8 *iph, bool ipv6,
		     const struct udphdr *udph, u8 *bth, unsigned int len)
{
	unsigned int off = bth - skb->data;
	__le32 icrc;

	if (!skb_is_nonlinear(skb)) {
		put_unaligned_le32(softcm_icrc(iph, ipv6, (const u8 *)udph, bth,
					       len - SOFTCM_ICRC_SIZE),
				   bth + len - SOFTCM_ICRC_SIZE);
		return;
	}
	icrc = cpu_to_le32(softcm_icrc_skb(iph, ipv6, (const u8 *)udph, skb, off,
					   len - SOFTCM_ICRC_SIZE));
	/* the trailer's fragment is ours, not the region's */
	WARN_ON_ONCE(skb_store_bits(skb, off + len - SOFTCM_ICRC_SIZE, &icrc, sizeof(icrc)));
}

/*
 * The ICRC of each packet of @skb, one per page fragment (rcxmit.c's
 * batches), into its place at the packet's end, over the headers each
 * will have on the wire: whoever segments the skb (a device without UDP
 * segmentation, or the receiving socket) gives every segment its own
 * lengths, and IPv4 IDs counting up from the first's (inet_gso_segment()).
 */
static void put_icrcs(struct sk_buff *skb, const u8 *iph, bool ipv6, const struct udphdr *udph)
{
	const struct skb_shared_info *si = skb_shinfo(skb);
	union {
		struct iphdr v4;
		struct ipv6hdr v6;
	} ip;
	struct udphdr uh = *udph;
	u16 id;
	int i;

	memcpy(&ip, iph, ipv6 ? sizeof(ip.v6) : sizeof(ip.v4));
	id = ipv6 ? 0 : ntohs(ip.v4.id);
	for (i = 0; i < si->nr_frags; i++) {
		unsigned int len = skb_frag_size(&si->frags[i]);
		u8 *bth = skb_frag_address(&si->frags[i]);

		uh.len = htons(sizeof(uh) + len);
		if (ipv6) {
			ip.v6.payload_len = uh.len;
		} else {
			ip.v4.tot_len = htons(sizeof(ip.v4) + sizeof(uh) + len);
			ip.v4.id = htons(id + i);
		}
		put_unaligned_le32(softcm_icrc((const u8 *)&ip, ipv6, (const u8 *)&uh, bth,
					       len - SOFTCM_ICRC_SIZE),
				   bth + len - SOFTCM_ICRC_SIZE);
	}
}

/*
 * Several packets in one skb: UDP GSO, its segment size the first
 * packet's (no later one is larger, rcxmit.c), the checksum partial as
 * UDP_SEGMENT's sends are (segmentation requires it): @pseudo is the
 * pseudo-header's sum for the whole skb.  The segments' UDP checksums are
 * then filled in by the device or left to be trusted on a veth, where
 * rxe's single packets carry 0; the ICRC masks both.
 */
static void set_gso(struct sk_buff *skb, struct udphdr *udph, __sum16 pseudo)
{
	struct skb_shared_info *si = skb_shinfo(skb);

	if (si->nr_frags < 2)
		return;
	si->gso_size = skb_frag_size(&si->frags[0]);
	si->gso_segs = si->nr_frags;
	si->gso_type = SKB_GSO_UDP_L4;
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_transport_header(skb) - skb->head;
	skb->csum_offset = offsetof(struct udphdr, check);
	udph->check = ~pseudo;
}

/* The IPv4 header before @skb's UDP header, with the IDs of @segs packets. */
static struct iphdr *push_ip4(struct net *net, struct sk_buff *skb, __be32 saddr,
			      __be32 daddr, u8 tos, u8 ttl, unsigned int segs)
{
	struct iphdr *iph = skb_push(skb, sizeof(*iph));

	skb_reset_network_header(skb);
	iph->version = IPVERSION;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = tos;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = ttl;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = saddr;
	iph->daddr = daddr;
	__ip_select_ident(net, iph, segs);
	return iph;
}

static int local_out4(struct net *net, struct sk_buff *skb, struct dst_entry *dst)
{
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	skb->protocol = htons(ETH_P_IP);
	skb_dst_set(skb, dst);
	return ip_local_out(net, NULL, skb);
}

/*
 * Send @skb, a RoCEv2 payload (BTH to ICRC, the ICRC's place at its end)
 * from @saddr to @daddr by @dst (whose reference it takes): UDP and IPv4
 * headers pushed, then the ICRC, once every field it covers is final
 * (the IP checksum is masked), then ip_local_out().  The CM's MADs and
 * the data path's packets alike, so both are framed as rxe frames them.
 */
int softcm_udp_xmit4(struct net *net, struct sk_buff *skb, struct dst_entry *dst,
		     __be32 saddr, __be32 daddr, u16 sport, u8 tos, u8 ttl)
{
	unsigned int len = skb->len;
	u8 *bth = skb->data;
	struct udphdr *udph;
	struct iphdr *iph;

	udph = push_udp(skb, sport);
	iph = push_ip4(net, skb, saddr, daddr, tos, ttl, 1);
	put_icrc(skb, (u8 *)iph, false, udph, bth, len);
	return local_out4(net, skb, dst);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_udp_xmit4);

/*
 * As softcm_udp_xmit4(), for an skb whose linear part is empty and whose
 * page fragments are packets, BTH to ICRC each (rcxmit.c's batches): one
 * packet goes as softcm_udp_xmit4()'s, several as one UDP GSO skb.
 */
int softcm_udp_xmit4_frags(struct net *net, struct sk_buff *skb, struct dst_entry *dst,
			   __be32 saddr, __be32 daddr, u16 sport, u8 tos, u8 ttl)
{
	struct udphdr *udph;
	struct iphdr *iph;

	udph = push_udp(skb, sport);
	iph = push_ip4(net, skb, saddr, daddr, tos, ttl, skb_shinfo(skb)->nr_frags);
	put_icrcs(skb, (u8 *)iph, false, udph);
	set_gso(skb, udph, csum_tcpudp_magic(saddr, daddr, ntohs(udph->len), IPPROTO_UDP, 0));
	return local_out4(net, skb, dst);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_udp_xmit4_frags);

#if IS_ENABLED(CONFIG_IPV6)
static struct ipv6hdr *push_ip6(struct sk_buff *skb, const struct in6_addr *saddr,
				const struct in6_addr *daddr, u8 tos, u8 hop_limit)
{
	struct ipv6hdr *ip6h = skb_push(skb, sizeof(*ip6h));

	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, tos, 0);
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = hop_limit;
	ip6h->saddr = *saddr;
	ip6h->daddr = *daddr;
	return ip6h;
}

static int local_out6(struct net *net, struct sk_buff *skb, struct dst_entry *dst)
{
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	skb->protocol = htons(ETH_P_IPV6);
	skb_dst_set(skb, dst);
	return ip6_local_out(net, NULL, skb);
}

/* As softcm_udp_xmit4(), over IPv6 with flow label 0, as rxe sends. */
int softcm_udp_xmit6(struct net *net, struct sk_buff *skb, struct dst_entry *dst,
		     const struct in6_addr *saddr, const struct in6_addr *daddr,
		     u16 sport, u8 tos, u8 hop_limit)
{
	unsigned int len = skb->len;
	u8 *bth = skb->data;
	struct ipv6hdr *ip6h;
	struct udphdr *udph;

	udph = push_udp(skb, sport);
	ip6h = push_ip6(skb, saddr, daddr, tos, hop_limit);
	put_icrc(skb, (u8 *)ip6h, true, udph, bth, len);
	return local_out6(net, skb, dst);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_udp_xmit6);

/* As softcm_udp_xmit4_frags(), over IPv6. */
int softcm_udp_xmit6_frags(struct net *net, struct sk_buff *skb, struct dst_entry *dst,
			   const struct in6_addr *saddr, const struct in6_addr *daddr,
			   u16 sport, u8 tos, u8 hop_limit)
{
	struct ipv6hdr *ip6h;
	struct udphdr *udph;

	udph = push_udp(skb, sport);
	ip6h = push_ip6(skb, saddr, daddr, tos, hop_limit);
	put_icrcs(skb, (u8 *)ip6h, true, udph);
	set_gso(skb, udph, csum_ipv6_magic(saddr, daddr, ntohs(udph->len), IPPROTO_UDP, 0));
	return local_out6(net, skb, dst);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_udp_xmit6_frags);
#endif

static struct sk_buff *alloc_packet(struct net_device *dev, unsigned int iplen)
{
	unsigned int head = LL_RESERVED_SPACE(dev) + iplen + sizeof(struct udphdr);
	struct sk_buff *skb;

	skb = alloc_skb(head + SOFTCM_ROCE_PAYLOAD + dev->needed_tailroom, GFP_KERNEL);
	if (skb)
		skb_reserve(skb, head);
	return skb;
}

static int xmit4(struct softcm_net *sn, const struct sockaddr_in *src,
		 const struct sockaddr_in *dst, int oif, u8 tos, const u8 *mad)
{
	struct flowi4 fl4 = {
		.flowi4_oif = oif,
		.flowi4_tos = tos & ~INET_ECN_MASK,
		.flowi4_proto = IPPROTO_UDP,
		.daddr = dst->sin_addr.s_addr,
		.saddr = src->sin_addr.s_addr,
	};
	struct sk_buff *skb;
	struct rtable *rt;

	rt = ip_route_output_key(sn->net, &fl4);
	if (IS_ERR(rt))
		return PTR_ERR(rt);
	skb = alloc_packet(rt->dst.dev, sizeof(struct iphdr));
	if (!skb) {
		ip_rt_put(rt);
		return -ENOMEM;
	}
	put_payload(skb, sn, mad);
	return softcm_udp_xmit4(sn->net, skb, &rt->dst, fl4.saddr, fl4.daddr,
				ROCE_QP1_SPORT, tos, ip4_dst_hoplimit(&rt->dst));
}

static int xmit6(struct softcm_net *sn, const struct sockaddr_in6 *src,
		 const struct sockaddr_in6 *dst, int oif, u8 tos, const u8 *mad)
{
#if IS_ENABLED(CONFIG_IPV6)
	struct flowi6 fl6 = {
		.flowi6_oif = oif,
		.flowi6_proto = IPPROTO_UDP,
		.daddr = dst->sin6_addr,
		.saddr = src->sin6_addr,
	};
	struct dst_entry *ndst;
	struct sk_buff *skb;

	ndst = ipv6_stub->ipv6_dst_lookup_flow(sn->net, NULL, &fl6, NULL);
	if (IS_ERR(ndst))
		return PTR_ERR(ndst);
	if (ndst->error) {
		int err = ndst->error;

		dst_release(ndst);
		return err;
	}
	skb = alloc_packet(ndst->dev, sizeof(struct ipv6hdr));
	if (!skb) {
		dst_release(ndst);
		return -ENOMEM;
	}
	put_payload(skb, sn, mad);
	return softcm_udp_xmit6(sn->net, skb, ndst, &fl6.saddr, &fl6.daddr, ROCE_QP1_SPORT,
				tos, ip6_dst_hoplimit(ndst));
#else
	return -EAFNOSUPPORT;
#endif
}

/* One CM MAD from @src to @dst's CM port; ports in the addresses are unused. */
int softcm_xmit(struct softcm_net *sn, const struct sockaddr *src,
		const struct sockaddr *dst, int oif, u8 tos, const u8 *mad)
{
	int ret;

	if (src->sa_family != dst->sa_family)
		return -EAFNOSUPPORT;
	if (dst->sa_family == AF_INET)
		ret = xmit4(sn, (const struct sockaddr_in *)src,
			    (const struct sockaddr_in *)dst, oif, tos, mad);
	else if (dst->sa_family == AF_INET6)
		ret = xmit6(sn, (const struct sockaddr_in6 *)src,
			    (const struct sockaddr_in6 *)dst, oif, tos, mad);
	else
		ret = -EAFNOSUPPORT;
	/* The stack's own verdicts (congestion) are not ours to report. */
	ret = net_xmit_eval(ret);
	softcm_trace_mad(sn, true, dst, mad, ret);
	if (ret)
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_TX_ERRORS);
	return ret;
}
