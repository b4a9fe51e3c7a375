// SPDX-License-Identifier: GPL-2.0
/*
 * The transport's receive side dispatches by the BTH's destination QP:
 * QP1 to the CM, any other QP to the receiver registered for it, and,
 * while there is none, to a drop counted as before there could be one.
 *
 * Packets are handed to softcm_transport_rcv() as the UDP socket would
 * hand them over, in softirq, for a namespace state of our own whose
 * receive work is the real one: a QP1 packet whose MAD the CM cannot
 * decode reaches it and is counted there (drop_mad), which only the CM
 * counts.
 */

#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <softcm/wire.h>

#include "compat.h"
#include "core.h"
#include "icrc.h"
#include "netns.h"
#include "rc.h"
#include "stats.h"
#include "transport.h"

#define DATA_QPN	0x123456	/* a QP of a data path */

/* What the test receiver saw. */
static struct {
	int calls;
	u32 qpn;
	unsigned int len;
	struct softcm_net *sn;
} seen;

static void test_rcv(struct softcm_net *sn, u32 qpn, struct sk_buff *skb)
{
	seen.calls++;
	seen.qpn = qpn;
	seen.sn = sn;
	seen.len = skb->len;
	consume_skb(skb);
}

static const struct softcm_qp_rcv test_receiver = { .rcv = test_rcv };

/*
 * An IPv4 RoCEv2 packet from 10.0.0.1 to 10.0.0.2 for @qpn, with @paylen
 * bytes of BTH onwards: rxe's BTH and DETH, a MAD of zeros (the CM's
 * decoder refuses it) and a valid ICRC when it has a CM packet's size.
 */
static struct sk_buff *packet(struct kunit *test, u32 qpn, unsigned int paylen)
{
	struct sk_buff *skb;
	struct udphdr *udph;
	struct iphdr *iph;
	u8 *bth;

	skb = alloc_skb(sizeof(*iph) + sizeof(*udph) + paylen, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reset_network_header(skb);
	iph = skb_put_zero(skb, sizeof(*iph));
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = 64;
	iph->protocol = IPPROTO_UDP;
	iph->tot_len = htons(sizeof(*iph) + sizeof(*udph) + paylen);
	iph->saddr = htonl(0x0a000001);
	iph->daddr = htonl(0x0a000002);
	skb_set_transport_header(skb, sizeof(*iph));
	udph = skb_put_zero(skb, sizeof(*udph));
	udph->source = htons(0xd872);
	udph->dest = htons(SOFTCM_ROCE_PORT);
	udph->len = htons(sizeof(*udph) + paylen);
	bth = skb_put_zero(skb, paylen);
	if (paylen >= SOFTCM_BTH_SIZE + SOFTCM_DETH_SIZE)
		softcm_roce_put_headers(bth, 0);
	bth[5] = qpn >> 16;
	bth[6] = qpn >> 8;
	bth[7] = qpn;
	if (paylen == SOFTCM_ROCE_PAYLOAD)
		put_unaligned_le32(softcm_icrc((u8 *)iph, false, (u8 *)udph, bth,
					       paylen - SOFTCM_ICRC_SIZE),
				   bth + paylen - SOFTCM_ICRC_SIZE);
	return skb;
}

/* Receive @skb as the UDP socket does, then let the CM's work run. */
static void receive(struct softcm_net *sn, struct sk_buff *skb)
{
	local_bh_disable();
	rcu_read_lock();
	softcm_transport_rcv(sn, skb);
	rcu_read_unlock();
	local_bh_enable();
	flush_workqueue(softcm_workqueue());
}

static long counter(struct softcm_net *sn, enum softcm_stat i)
{
	return softcm_stat_read(&sn->stats, i);
}

static int transport_init(struct kunit *test)
{
	struct softcm_net *sn = kunit_kzalloc(test, sizeof(*sn), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sn);
	KUNIT_ASSERT_EQ(test, 0, softcm_stats_init(&sn->stats));
	sn->net = &init_net;
	softcm_transport_net_init(sn);
	memset(&seen, 0, sizeof(seen));
	test->priv = sn;
	/* the module's own receiver, the RC data path's, steps aside */
	softcm_rc_rcv_uninit();
	return 0;
}

static void transport_exit(struct kunit *test)
{
	struct softcm_net *sn = test->priv;

	softcm_transport_net_uninit(sn);
	softcm_stats_uninit(&sn->stats);
	KUNIT_EXPECT_EQ(test, 0, softcm_rc_rcv_init());
}

static void qp1_packet_reaches_the_cm(struct kunit *test)
{
	struct softcm_net *sn = test->priv;

	KUNIT_ASSERT_EQ(test, 0, softcm_transport_register_qp_rcv(&test_receiver));
	receive(sn, packet(test, SOFTCM_GSI_QPN, SOFTCM_ROCE_PAYLOAD));
	softcm_transport_unregister_qp_rcv(&test_receiver);

	KUNIT_EXPECT_EQ(test, 1, counter(sn, SOFTCM_STAT_DROP_MAD));
	KUNIT_EXPECT_EQ(test, 0, seen.calls);
	KUNIT_EXPECT_EQ(test, 0, counter(sn, SOFTCM_STAT_DROP_HEADER));
	KUNIT_EXPECT_EQ(test, 0, counter(sn, SOFTCM_STAT_DROP_LENGTH));
	KUNIT_EXPECT_EQ(test, 0, counter(sn, SOFTCM_STAT_DROP_ICRC));
}

static void other_qp_reaches_its_receiver(struct kunit *test)
{
	struct softcm_net *sn = test->priv;

	KUNIT_ASSERT_EQ(test, 0, softcm_transport_register_qp_rcv(&test_receiver));
	KUNIT_EXPECT_EQ(test, -EBUSY, softcm_transport_register_qp_rcv(&test_receiver));
	/* a CM packet's size, and a data path's own */
	receive(sn, packet(test, DATA_QPN, SOFTCM_ROCE_PAYLOAD));
	KUNIT_EXPECT_EQ(test, 1, seen.calls);
	KUNIT_EXPECT_EQ(test, DATA_QPN, seen.qpn);
	KUNIT_EXPECT_PTR_EQ(test, sn, seen.sn);
	receive(sn, packet(test, 2, 40));
	KUNIT_EXPECT_EQ(test, 2, seen.calls);
	KUNIT_EXPECT_EQ(test, 2, seen.qpn);
	KUNIT_EXPECT_EQ(test, sizeof(struct iphdr) + sizeof(struct udphdr) + 40, seen.len);
	softcm_transport_unregister_qp_rcv(&test_receiver);

	/* nothing dropped, nothing for the CM */
	KUNIT_EXPECT_EQ(test, 0, counter(sn, SOFTCM_STAT_DROP_HEADER));
	KUNIT_EXPECT_EQ(test, 0, counter(sn, SOFTCM_STAT_DROP_LENGTH));
	KUNIT_EXPECT_EQ(test, 0, counter(sn, SOFTCM_STAT_DROP_MAD));

	/* once unregistered, it sees no more */
	receive(sn, packet(test, DATA_QPN, SOFTCM_ROCE_PAYLOAD));
	KUNIT_EXPECT_EQ(test, 2, seen.calls);
	KUNIT_EXPECT_EQ(test, 1, counter(sn, SOFTCM_STAT_DROP_HEADER));
}

static void other_qp_without_receiver_dropped_and_counted(struct kunit *test)
{
	struct softcm_net *sn = test->priv;

	/* counted as the CM's checks count them: size, then BTH */
	receive(sn, packet(test, 2, SOFTCM_ROCE_PAYLOAD));
	KUNIT_EXPECT_EQ(test, 1, counter(sn, SOFTCM_STAT_DROP_HEADER));
	KUNIT_EXPECT_EQ(test, 0, counter(sn, SOFTCM_STAT_DROP_LENGTH));
	receive(sn, packet(test, DATA_QPN, 40));
	KUNIT_EXPECT_EQ(test, 1, counter(sn, SOFTCM_STAT_DROP_HEADER));
	KUNIT_EXPECT_EQ(test, 1, counter(sn, SOFTCM_STAT_DROP_LENGTH));
	/* shorter than a BTH: no QP to dispatch to */
	receive(sn, packet(test, 2, SOFTCM_BTH_SIZE - 1));
	KUNIT_EXPECT_EQ(test, 2, counter(sn, SOFTCM_STAT_DROP_LENGTH));
	/* and none of them reached the CM */
	KUNIT_EXPECT_EQ(test, 0, counter(sn, SOFTCM_STAT_DROP_MAD));
	KUNIT_EXPECT_EQ(test, 0, seen.calls);
}

static struct kunit_case transport_cases[] = {
	KUNIT_CASE(qp1_packet_reaches_the_cm),
	KUNIT_CASE(other_qp_reaches_its_receiver),
	KUNIT_CASE(other_qp_without_receiver_dropped_and_counted),
	{}
};

static struct kunit_suite transport_suite = {
	.name = "softcm_transport",
	.init = transport_init,
	.exit = transport_exit,
	.test_cases = transport_cases,
};

kunit_test_suite(transport_suite);
