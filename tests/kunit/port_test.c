// SPDX-License-Identifier: GPL-2.0
/*
 * Port sharing rules (rdma_cm's cma_check_port()): when a second id may
 * take a port that others already own.
 */

#include <kunit/test.h>
#include <linux/inet.h>
#include <linux/in6.h>

#include "id.h"
#include "port.h"

static struct softcm_id *fake_id(struct kunit *test, const char *addr,
				 bool reuseaddr, bool afonly)
{
	struct softcm_id *id = kunit_kzalloc(test, sizeof(*id), GFP_KERNEL);
	struct sockaddr_in *sin = (struct sockaddr_in *)&id->src;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&id->src;

	KUNIT_ASSERT_NOT_NULL(test, id);
	if (strchr(addr, ':')) {
		sin6->sin6_family = AF_INET6;
		KUNIT_ASSERT_EQ(test, 1, in6_pton(addr, -1, sin6->sin6_addr.s6_addr, -1, NULL));
	} else {
		sin->sin_family = AF_INET;
		KUNIT_ASSERT_EQ(test, 1, in4_pton(addr, -1, (u8 *)&sin->sin_addr.s_addr, -1,
						  NULL));
	}
	id->reuseaddr = reuseaddr;
	id->afonly = afonly;
	INIT_HLIST_NODE(&id->bind_node);
	return id;
}

/* A port owned by @owner; returns what a newcomer @id is told. */
static int second(struct kunit *test, struct softcm_id *owner, struct softcm_id *id)
{
	struct softcm_bind_list bl = { .owners = HLIST_HEAD_INIT };

	hlist_add_head(&owner->bind_node, &bl.owners);
	return softcm_port_check(&bl, id, id->reuseaddr);
}

static void same_address_in_use(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, -EADDRINUSE,
			second(test, fake_id(test, "10.0.0.1", false, true),
			       fake_id(test, "10.0.0.1", false, true)));
	KUNIT_EXPECT_EQ(test, -EADDRINUSE,
			second(test, fake_id(test, "fd00::1", false, true),
			       fake_id(test, "fd00::1", false, true)));
}

static void different_addresses_share(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 0,
			second(test, fake_id(test, "10.0.0.1", false, true),
			       fake_id(test, "10.0.0.2", false, true)));
}

static void wildcard_conflicts_with_everything(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, -EADDRNOTAVAIL,
			second(test, fake_id(test, "0.0.0.0", false, true),
			       fake_id(test, "10.0.0.1", false, true)));
	KUNIT_EXPECT_EQ(test, -EADDRNOTAVAIL,
			second(test, fake_id(test, "10.0.0.1", false, true),
			       fake_id(test, "0.0.0.0", false, true)));
	/* A dual-stack v6 wildcard conflicts with a v4 owner. */
	KUNIT_EXPECT_EQ(test, -EADDRNOTAVAIL,
			second(test, fake_id(test, "10.0.0.1", false, true),
			       fake_id(test, "::", false, false)));
}

static void reuse_needs_both(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 0,
			second(test, fake_id(test, "0.0.0.0", true, true),
			       fake_id(test, "0.0.0.0", true, true)));
	KUNIT_EXPECT_EQ(test, -EADDRNOTAVAIL,
			second(test, fake_id(test, "0.0.0.0", false, true),
			       fake_id(test, "0.0.0.0", true, true)));
	KUNIT_EXPECT_EQ(test, -EADDRINUSE,
			second(test, fake_id(test, "10.0.0.1", true, true),
			       fake_id(test, "10.0.0.1", false, true)));
}

static void family_only_ids_of_two_families_share(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 0,
			second(test, fake_id(test, "0.0.0.0", false, true),
			       fake_id(test, "::", false, true)));
	KUNIT_EXPECT_EQ(test, -EADDRNOTAVAIL,
			second(test, fake_id(test, "0.0.0.0", false, false),
			       fake_id(test, "::", false, true)));
}

static void an_id_does_not_conflict_with_itself(struct kunit *test)
{
	struct softcm_bind_list bl = { .owners = HLIST_HEAD_INIT };
	struct softcm_id *id = fake_id(test, "0.0.0.0", false, true);

	hlist_add_head(&id->bind_node, &bl.owners);
	KUNIT_EXPECT_EQ(test, 0, softcm_port_check(&bl, id, false));
}

static struct kunit_case port_cases[] = {
	KUNIT_CASE(same_address_in_use),
	KUNIT_CASE(different_addresses_share),
	KUNIT_CASE(wildcard_conflicts_with_everything),
	KUNIT_CASE(reuse_needs_both),
	KUNIT_CASE(family_only_ids_of_two_families_share),
	KUNIT_CASE(an_id_does_not_conflict_with_itself),
	{}
};

static struct kunit_suite port_suite = {
	.name = "softcm_port",
	.test_cases = port_cases,
};

kunit_test_suite(port_suite);
