// SPDX-License-Identifier: GPL-2.0
/*
 * The namespace's GID table (gid.c): where an address lands, that its
 * index holds while it exists, which slot the next one takes, and what a
 * full table does.  On a table of a fake namespace, without devices: the
 * notifiers' calls made directly.
 */

#include <kunit/test.h>
#include <linux/in6.h>
#include <net/ipv6.h>

#include "gid.h"
#include "netns.h"
#include "stats.h"

static struct softcm_net *fake_net(struct kunit *test)
{
	struct softcm_net *sn = kunit_kzalloc(test, sizeof(*sn), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sn);
	KUNIT_ASSERT_EQ(test, 0, softcm_stats_init(&sn->stats));
	spin_lock_init(&sn->gids.lock);
	test->priv = sn;
	return sn;
}

static void gid_exit(struct kunit *test)
{
	struct softcm_net *sn = test->priv;

	if (sn)
		softcm_stats_uninit(&sn->stats);
}

/* 10.0.@hi.@lo, v4-mapped */
static struct in6_addr v4(int hi, int lo)
{
	struct in6_addr a;

	ipv6_addr_set_v4mapped(htonl(0x0a000000 | hi << 8 | lo), &a);
	return a;
}

static int find(struct softcm_net *sn, const struct in6_addr *a)
{
	return softcm_gid_find(sn, a->s6_addr);
}

static void entries_in_order_and_found(struct kunit *test)
{
	struct softcm_net *sn = fake_net(test);
	struct in6_addr a = v4(0, 1), b = v4(0, 2), c = IN6ADDR_LOOPBACK_INIT;
	u8 gid[16];
	int ifindex;

	softcm_gid_add(sn, &a, 2);
	softcm_gid_add(sn, &b, 2);
	softcm_gid_add(sn, &c, 1);
	KUNIT_EXPECT_EQ(test, 0, find(sn, &a));
	KUNIT_EXPECT_EQ(test, 1, find(sn, &b));
	KUNIT_EXPECT_EQ(test, 2, find(sn, &c));
	KUNIT_EXPECT_TRUE(test, softcm_gid_get(sn, 2, gid, &ifindex));
	KUNIT_EXPECT_EQ(test, 1, ifindex);
	KUNIT_EXPECT_EQ(test, 0, memcmp(gid, &c, 16));
	/* an empty entry: zeros, no device */
	KUNIT_EXPECT_FALSE(test, softcm_gid_get(sn, 3, gid, &ifindex));
	KUNIT_EXPECT_EQ(test, 0, ifindex);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(gid, 0, sizeof(gid)));
	a = v4(0, 3);
	KUNIT_EXPECT_EQ(test, -ENOENT, find(sn, &a));
}

static void index_held_and_lowest_free_slot_reused(struct kunit *test)
{
	struct softcm_net *sn = fake_net(test);
	struct in6_addr a = v4(0, 1), b = v4(0, 2), c = v4(0, 3), d = v4(0, 4);

	softcm_gid_add(sn, &a, 2);
	softcm_gid_add(sn, &b, 2);
	softcm_gid_add(sn, &c, 2);
	softcm_gid_del(sn, &b, 2);
	KUNIT_EXPECT_EQ(test, -ENOENT, find(sn, &b));
	KUNIT_EXPECT_EQ(test, 0, find(sn, &a));
	KUNIT_EXPECT_EQ(test, 2, find(sn, &c));
	softcm_gid_add(sn, &d, 2);
	KUNIT_EXPECT_EQ(test, 1, find(sn, &d));
	/* removing what is not there changes nothing */
	softcm_gid_del(sn, &b, 2);
	softcm_gid_del(sn, &a, 3);
	KUNIT_EXPECT_EQ(test, 0, find(sn, &a));
}

static void one_entry_per_address_and_device(struct kunit *test)
{
	struct softcm_net *sn = fake_net(test);
	struct in6_addr a = v4(0, 1);
	u8 gid[16];
	int ifindex;

	/* the initial scan and a notifier may both report it */
	softcm_gid_add(sn, &a, 2);
	softcm_gid_add(sn, &a, 2);
	KUNIT_EXPECT_FALSE(test, softcm_gid_get(sn, 1, gid, &ifindex));
	/* the same address on another device is another entry */
	softcm_gid_add(sn, &a, 3);
	KUNIT_EXPECT_TRUE(test, softcm_gid_get(sn, 1, gid, &ifindex));
	KUNIT_EXPECT_EQ(test, 3, ifindex);
	softcm_gid_del(sn, &a, 2);
	KUNIT_EXPECT_EQ(test, 1, find(sn, &a));
}

static void full_table_drops_and_counts(struct kunit *test)
{
	struct softcm_net *sn = fake_net(test);
	struct in6_addr a;
	int i;

	for (i = 0; i < SOFTCM_GID_TABLE_LEN + 2; i++) {
		a = v4(i >> 8, i & 0xff);
		softcm_gid_add(sn, &a, 2);
	}
	KUNIT_EXPECT_EQ(test, 2, softcm_stat_read(&sn->stats, SOFTCM_STAT_GID_TABLE_FULL));
	KUNIT_EXPECT_EQ(test, -ENOENT, find(sn, &a));
	a = v4(0, SOFTCM_GID_TABLE_LEN - 1);
	KUNIT_EXPECT_EQ(test, SOFTCM_GID_TABLE_LEN - 1, find(sn, &a));
	/* a freed slot takes the next address */
	a = v4(0, 5);
	softcm_gid_del(sn, &a, 2);
	a = v4(2, 0);
	softcm_gid_add(sn, &a, 2);
	KUNIT_EXPECT_EQ(test, 5, find(sn, &a));
}

static struct kunit_case gid_cases[] = {
	KUNIT_CASE(entries_in_order_and_found),
	KUNIT_CASE(index_held_and_lowest_free_slot_reused),
	KUNIT_CASE(one_entry_per_address_and_device),
	KUNIT_CASE(full_table_drops_and_counts),
	{}
};

static struct kunit_suite gid_suite = {
	.name = "softcm_gid",
	.exit = gid_exit,
	.test_cases = gid_cases,
};

kunit_test_suite(gid_suite);
