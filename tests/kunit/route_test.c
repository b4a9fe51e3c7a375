// SPDX-License-Identifier: GPL-2.0
/*
 * Route resolution's pure parts: the IB MTU a device MTU allows, RoCE GIDs
 * derived from IP addresses, and the RoCEv2 flow label rule.
 */

#include <kunit/test.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/socket.h>

#include "route.h"

static void ib_mtu_from_netdev_mtu(struct kunit *test)
{
	static const struct {
		unsigned int netdev;
		u8 ib;
	} cases[] = {
		{ 9000, 5 }, { 4192, 5 }, { 4191, 4 }, { 2144, 4 }, { 2143, 3 },
		{ 1500, 3 }, { 1120, 3 }, { 1119, 2 }, { 608, 2 }, { 607, 1 },
		{ 352, 1 }, { 351, 0 }, { 68, 0 }, { 0, 0 }, { 65536, 5 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, cases[i].ib, softcm_ib_mtu(cases[i].netdev),
				    "mtu %u", cases[i].netdev);
}

static void ipv4_gid_is_v4_mapped(struct kunit *test)
{
	static const u8 want[16] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 7,
	};
	struct sockaddr_storage ss = {};
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	u8 gid[16];

	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(0xc0000207);
	softcm_ip_to_gid(&ss, gid);
	KUNIT_EXPECT_EQ(test, 0, memcmp(want, gid, sizeof(gid)));
}

static void ipv6_gid_is_the_address(struct kunit *test)
{
	struct sockaddr_storage ss = {};
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	u8 gid[16];

	sin6->sin6_family = AF_INET6;
	sin6->sin6_addr.s6_addr[0] = 0xfd;
	sin6->sin6_addr.s6_addr[15] = 0x42;
	softcm_ip_to_gid(&ss, gid);
	KUNIT_EXPECT_EQ(test, 0, memcmp(sin6->sin6_addr.s6_addr, gid, sizeof(gid)));
}

static void flow_label_from_ports_or_flowinfo(struct kunit *test)
{
	struct sockaddr_storage src = {}, dst = {};
	struct sockaddr_in *s4 = (struct sockaddr_in *)&src, *d4 = (struct sockaddr_in *)&dst;
	struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)&dst;

	s4->sin_family = AF_INET;
	s4->sin_port = htons(40000);
	d4->sin_family = AF_INET;
	d4->sin_port = htons(7471);
	KUNIT_EXPECT_EQ(test, (40000u * 31 + 7471) & 0xfffff, softcm_flow_label(&src, &dst));

	memset(&dst, 0, sizeof(dst));
	d6->sin6_family = AF_INET6;
	d6->sin6_port = htons(7471);
	d6->sin6_flowinfo = htonl(0x12345);
	KUNIT_EXPECT_EQ(test, 0x12345u, softcm_flow_label(&src, &dst));
	/* Traffic class bits of flowinfo are not part of the label. */
	d6->sin6_flowinfo = htonl(0x0ff00000);
	KUNIT_EXPECT_EQ(test, (40000u * 31 + 7471) & 0xfffff, softcm_flow_label(&src, &dst));
}

static struct kunit_case route_cases[] = {
	KUNIT_CASE(ib_mtu_from_netdev_mtu),
	KUNIT_CASE(ipv4_gid_is_v4_mapped),
	KUNIT_CASE(ipv6_gid_is_the_address),
	KUNIT_CASE(flow_label_from_ports_or_flowinfo),
	{}
};

static struct kunit_suite route_suite = {
	.name = "softcm_route",
	.test_cases = route_cases,
};

kunit_test_suite(route_suite);
