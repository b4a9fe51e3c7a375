/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_TRANSPORT_H
#define _SOFTCM_TRANSPORT_H

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <linux/socket.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct socket;
struct softcm_net;

/*
 * One of a namespace's receive queues for the CM.  A packet goes to the
 * shard its sender and connection hash to, so one connection's messages
 * are handled in order while different connections' are handled in
 * parallel: a work item never runs on two CPUs at once, and each runs on
 * the CPU that queued it (the one the packet arrived on).
 */
struct softcm_rx_shard {
	struct sk_buff_head q;
	struct work_struct work;
	struct softcm_net *sn;
};

#define SOFTCM_RX_SHARDS	16

/*
 * A namespace's RoCEv2 transport: UDP sockets opened on first use, index
 * 0 for IPv4 and 1 for IPv6, and the packets they received, in
 * min(nr_cpu_ids, SOFTCM_RX_SHARDS) queues bounded together.
 */
struct softcm_transport {
	struct mutex sock_lock;		/* opening the sockets */
	atomic_t gsi_psn;		/* the next BTH PSN, as rxe's QP1 */
	struct socket *sock[2];
	int sock_state[2];		/* 1 open, 0 not yet, -errno */
	unsigned int nr_shards;
	/* packets waiting in all the shards, at most RXQ_MAX (transport.c) */
	atomic_t rx_queued;
	u32 hash_seed;
	struct softcm_rx_shard rx[SOFTCM_RX_SHARDS];
};

/* Where a received CM MAD came from, saved before the skb is queued. */
struct softcm_rx_cb {
	int ifindex;
};

static inline struct softcm_rx_cb *softcm_rx_cb(struct sk_buff *skb)
{
	return (struct softcm_rx_cb *)skb->cb;
}

/*
 * The receiver of the packets sent to a QP other than QP1 (QP1's go to
 * the CM, softcm_cm_rcv()).  @rcv runs where the sockets receive
 * (softirq) under RCU, with @skb linear, its transport header the UDP
 * header and the BTH after it, at least a BTH long.  It owns @skb, and
 * checks all but the destination QP (the ICRC included) itself.
 */
struct softcm_qp_rcv {
	void (*rcv)(struct softcm_net *sn, u32 qpn, struct sk_buff *skb);
};

int softcm_transport_register_qp_rcv(const struct softcm_qp_rcv *r);
void softcm_transport_unregister_qp_rcv(const struct softcm_qp_rcv *r);

void softcm_transport_net_init(struct softcm_net *sn);
void softcm_transport_net_uninit(struct softcm_net *sn);

int softcm_transport_get(struct softcm_net *sn);
int softcm_udp_xmit4(struct net *net, struct sk_buff *skb, struct dst_entry *dst,
		     __be32 saddr, __be32 daddr, u16 sport, u8 tos, u8 ttl);
int softcm_udp_xmit4_frags(struct net *net, struct sk_buff *skb, struct dst_entry *dst,
			   __be32 saddr, __be32 daddr, u16 sport, u8 tos, u8 ttl);
int softcm_udp_xmit6(struct net *net, struct sk_buff *skb, struct dst_entry *dst,
		     const struct in6_addr *saddr, const struct in6_addr *daddr,
		     u16 sport, u8 tos, u8 hop_limit);
int softcm_udp_xmit6_frags(struct net *net, struct sk_buff *skb, struct dst_entry *dst,
			   const struct in6_addr *saddr, const struct in6_addr *daddr,
			   u16 sport, u8 tos, u8 hop_limit);
int softcm_xmit(struct softcm_net *sn, const struct sockaddr *src,
		const struct sockaddr *dst, int oif, u8 tos, const u8 *mad);

#if IS_ENABLED(CONFIG_KUNIT)
void softcm_transport_rcv(struct softcm_net *sn, struct sk_buff *skb);
#endif

#endif /* _SOFTCM_TRANSPORT_H */
