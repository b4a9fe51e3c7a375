// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_cm's IP addressing on the IB CM: service IDs and the 36-byte
 * private-data header, against byte vectors written from its layout.
 */

#include <kunit/test.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/socket.h>
#include <uapi/linux/softcm.h>

#include "cmahdr.h"

static void service_ids(struct kunit *test)
{
	u16 ps, port;

	/* TCP port 7471, as rdma_cm puts it in a REQ */
	KUNIT_EXPECT_EQ(test, 0x0000000001061d2fULL, softcm_service_id(SOFTCM_PS_TCP, 7471));
	KUNIT_EXPECT_EQ(test, 0, softcm_service_split(0x0000000001111c1eULL, &ps, &port));
	KUNIT_EXPECT_EQ(test, SOFTCM_PS_UDP, ps);
	KUNIT_EXPECT_EQ(test, 7198, port);
	/* RDMA_PS_IB, IPoIB and anything with high bits set are not ours. */
	KUNIT_EXPECT_EQ(test, -EINVAL, softcm_service_split(0x00000000013f0001ULL, &ps, &port));
	KUNIT_EXPECT_EQ(test, -EINVAL, softcm_service_split(0x0000000000020001ULL, &ps, &port));
	KUNIT_EXPECT_EQ(test, -EINVAL, softcm_service_split(0x1000000001060001ULL, &ps, &port));
}

static void ipv4_header_layout(struct kunit *test)
{
	static const u8 want[36] = {
		0x00, 0x40, 0x9c, 0x40,				/* v0, IPv4, port 40000 */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 77, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 77, 2, 2,
	};
	struct sockaddr_storage src = {}, dst = {}, s2, d2;
	struct sockaddr_in *s = (struct sockaddr_in *)&src, *d = (struct sockaddr_in *)&dst;
	u8 hdr[36];

	s->sin_family = AF_INET;
	s->sin_port = htons(40000);
	s->sin_addr.s_addr = htonl(0x0a4d0101);
	d->sin_family = AF_INET;
	d->sin_port = htons(7471);
	d->sin_addr.s_addr = htonl(0x0a4d0202);
	memset(hdr, 0xaa, sizeof(hdr));
	KUNIT_ASSERT_EQ(test, 0, softcm_cma_hdr_put(hdr, &src, &dst));
	KUNIT_EXPECT_EQ(test, 0, memcmp(want, hdr, sizeof(want)));

	KUNIT_ASSERT_EQ(test, 0, softcm_cma_hdr_get(hdr, 7471, &s2, &d2));
	KUNIT_EXPECT_EQ(test, 0, memcmp(&src, &s2, sizeof(struct sockaddr_in)));
	KUNIT_EXPECT_EQ(test, 0, memcmp(&dst, &d2, sizeof(struct sockaddr_in)));
}

static void ipv6_round_trip(struct kunit *test)
{
	struct sockaddr_storage src = {}, dst = {}, s2, d2;
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)&src, *d = (struct sockaddr_in6 *)&dst;
	u8 hdr[36];

	s->sin6_family = AF_INET6;
	s->sin6_port = htons(50000);
	s->sin6_addr.s6_addr[0] = 0xfd;
	s->sin6_addr.s6_addr[15] = 1;
	d->sin6_family = AF_INET6;
	d->sin6_port = htons(7471);
	d->sin6_addr.s6_addr[0] = 0xfd;
	d->sin6_addr.s6_addr[15] = 2;
	KUNIT_ASSERT_EQ(test, 0, softcm_cma_hdr_put(hdr, &src, &dst));
	KUNIT_EXPECT_EQ(test, 0x60, hdr[1]);
	KUNIT_EXPECT_EQ(test, 0xfd, hdr[4]);
	KUNIT_EXPECT_EQ(test, 2, hdr[35]);
	KUNIT_ASSERT_EQ(test, 0, softcm_cma_hdr_get(hdr, 7471, &s2, &d2));
	KUNIT_EXPECT_EQ(test, 0, memcmp(&src, &s2, sizeof(struct sockaddr_in6)));
	KUNIT_EXPECT_EQ(test, 0, memcmp(&dst, &d2, sizeof(struct sockaddr_in6)));
}

static void bad_headers_refused(struct kunit *test)
{
	struct sockaddr_storage src = { .ss_family = AF_INET }, dst = { .ss_family = AF_INET6 };
	u8 hdr[36] = { 0x00, 0x40 };

	KUNIT_EXPECT_EQ(test, -EAFNOSUPPORT, softcm_cma_hdr_put(hdr, &src, &dst));
	hdr[0] = 1;				/* rdma_cm answers version 1 with REJ 28 */
	KUNIT_EXPECT_EQ(test, -EINVAL, softcm_cma_hdr_get(hdr, 1, &src, &dst));
	hdr[0] = 0;
	hdr[1] = 0x50;
	KUNIT_EXPECT_EQ(test, -EAFNOSUPPORT, softcm_cma_hdr_get(hdr, 1, &src, &dst));
}

static void v4(struct sockaddr_storage *ss, u32 addr)
{
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = AF_INET;
	((struct sockaddr_in *)ss)->sin_addr.s_addr = htonl(addr);
}

static void v6(struct sockaddr_storage *ss, u8 first, u8 last)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	ss->ss_family = AF_INET6;
	s6->sin6_addr.s6_addr[0] = first;
	s6->sin6_addr.s6_addr[15] = last;
}

/* A request's header must name the packet's own addresses (review A3). */
static void header_must_match_packet(struct kunit *test)
{
	struct sockaddr_storage hs, hd, ps, pd;

	v4(&hs, 0x0a530001);		/* 10.83.0.1 -> 10.83.0.2 */
	v4(&hd, 0x0a530002);
	ps = hs;
	pd = hd;
	KUNIT_EXPECT_TRUE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, false));
	/* ports are rdma_cm's in the header, RoCEv2's in the packet */
	((struct sockaddr_in *)&hs)->sin_port = htons(5555);
	KUNIT_EXPECT_TRUE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, false));

	v4(&hd, 0x7f000001);		/* header says 127.0.0.1 */
	KUNIT_EXPECT_FALSE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, false));
	v4(&hd, 0x0a530002);
	v4(&hs, 0x0a53004d);		/* header source is not the sender */
	KUNIT_EXPECT_FALSE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, false));

	/* loopback: only over a loopback device */
	v4(&hs, 0x7f000001);
	hd = hs;
	ps = hs;
	pd = hs;
	KUNIT_EXPECT_TRUE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, true));
	KUNIT_EXPECT_FALSE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, false));

	/* never a wildcard, broadcast or multicast address, even matching */
	v4(&hs, 0x0a530001);
	ps = hs;
	v4(&hd, 0xffffffff);
	pd = hd;
	KUNIT_EXPECT_FALSE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, true));
	v4(&hd, 0xe0000001);
	pd = hd;
	KUNIT_EXPECT_FALSE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, true));
	v4(&hd, 0);
	pd = hd;
	KUNIT_EXPECT_FALSE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, true));

	/* families must agree */
	v4(&hd, 0x0a530002);
	v6(&pd, 0xfd, 2);
	KUNIT_EXPECT_FALSE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, false));

	v6(&hs, 0xfd, 1);
	v6(&hd, 0xfd, 2);
	ps = hs;
	pd = hd;
	KUNIT_EXPECT_TRUE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, false));
	v6(&hd, 0, 1);			/* ::1 */
	KUNIT_EXPECT_FALSE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, false));
	v6(&hs, 0, 1);
	ps = hs;
	pd = hd;
	KUNIT_EXPECT_TRUE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, true));
	KUNIT_EXPECT_FALSE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, false));
	v6(&hd, 0xff, 1);		/* multicast */
	pd = hd;
	KUNIT_EXPECT_FALSE(test, softcm_cma_hdr_matches(&hs, &hd, &ps, &pd, true));
}

static struct kunit_case cmahdr_cases[] = {
	KUNIT_CASE(service_ids),
	KUNIT_CASE(ipv4_header_layout),
	KUNIT_CASE(ipv6_round_trip),
	KUNIT_CASE(bad_headers_refused),
	KUNIT_CASE(header_must_match_packet),
	{}
};

static struct kunit_suite cmahdr_suite = {
	.name = "softcm_cmahdr",
	.test_cases = cmahdr_cases,
};

kunit_test_suite(cmahdr_suite);
