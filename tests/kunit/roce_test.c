// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 framing: the BTH/DETH rxe expects, its drop checks, and the
 * invariant CRC.  The ICRC vectors were computed independently, with
 * zlib's CRC-32 over eight 0xff bytes and the masked headers (reference
 * §6.3), for the packets built below.
 */

#include <kunit/test.h>
#include <linux/string.h>
#include <softcm/wire.h>

#include "icrc.h"

static const u8 want_headers[20] = {
	0x64, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x80, 0x00, 0x00, 0x2a,
	0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
};

static void headers_as_rxe_sends_them(struct kunit *test)
{
	u8 h[20];

	memset(h, 0xaa, sizeof(h));
	softcm_roce_put_headers(h, 42);
	KUNIT_EXPECT_EQ(test, 0, memcmp(want_headers, h, sizeof(h)));
	KUNIT_EXPECT_EQ(test, 0, softcm_roce_check_headers(h, SOFTCM_ROCE_PAYLOAD));
}

static void header_checks_name_their_reason(struct kunit *test)
{
	static const struct {
		unsigned int off;
		u8 val;
		int err;
	} cases[] = {
		{ 0, 0x65, -EOPNOTSUPP },	/* not UD SEND_ONLY */
		{ 0, 0x04, -EOPNOTSUPP },	/* RC SEND_ONLY */
		{ 1, 0x01, -EPROTO },		/* transport version */
		{ 1, 0x30, -EPROTO },		/* pad count */
		{ 7, 0x02, -ENOENT },		/* not QP1 */
		{ 5, 0x01, -ENOENT },
		{ 2, 0x00, -EACCES },		/* 0x00ff: partition 0x00ff */
		{ 3, 0x00, -EACCES },		/* 0xff00: partition 0x7f00 */
		{ 12, 0x00, -EPERM },		/* Q_Key */
	};
	u8 h[20];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memcpy(h, want_headers, sizeof(h));
		h[cases[i].off] = cases[i].val;
		KUNIT_EXPECT_EQ_MSG(test, cases[i].err,
				    softcm_roce_check_headers(h, SOFTCM_ROCE_PAYLOAD),
				    "case %u", i);
	}
	/* A limited member (0x7fff) of the default partition is accepted. */
	memcpy(h, want_headers, sizeof(h));
	h[2] = 0x7f;
	KUNIT_EXPECT_EQ(test, 0, softcm_roce_check_headers(h, SOFTCM_ROCE_PAYLOAD));
	memcpy(h, want_headers, sizeof(h));
	KUNIT_EXPECT_EQ(test, -EMSGSIZE, softcm_roce_check_headers(h, SOFTCM_ROCE_PAYLOAD - 1));
	KUNIT_EXPECT_EQ(test, -EMSGSIZE, softcm_roce_check_headers(h, SOFTCM_ROCE_PAYLOAD + 4));
}

static const u8 ip4[20] = {
	0x45, 0x00, 0x01, 0x34, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
	0x0a, 0x4d, 0x01, 0x01, 0x0a, 0x4d, 0x01, 0xfe,
};

static const u8 udp[8] = { 0xd8, 0x72, 0x12, 0xb7, 0x01, 0x20, 0x00, 0x00 };

/* BTH, DETH and a MAD of bytes 0..255: what the ICRC covers after UDP. */
static u8 *transport(struct kunit *test)
{
	u8 *t = kunit_kzalloc(test, 20 + SOFTCM_MAD_SIZE, GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, t);
	memcpy(t, want_headers, 20);
	for (i = 0; i < SOFTCM_MAD_SIZE; i++)
		t[20 + i] = i;
	return t;
}

static void icrc_ipv4_vector(struct kunit *test)
{
	u8 *t = transport(test);
	u8 ip[20];

	KUNIT_EXPECT_EQ(test, 0xd770b550u,
			softcm_icrc(ip4, false, udp, t, 20 + SOFTCM_MAD_SIZE));

	/* The variant fields do not count: TOS, TTL, checksums, BTH byte 4. */
	memcpy(ip, ip4, sizeof(ip));
	ip[1] = 0xb8;
	ip[8] = 1;
	ip[10] = 0x12;
	ip[11] = 0x34;
	t[4] = 0xc0;
	KUNIT_EXPECT_EQ(test, 0xd770b550u,
			softcm_icrc(ip, false, udp, t, 20 + SOFTCM_MAD_SIZE));
	/* Everything else does. */
	t[20 + 100] ^= 1;
	KUNIT_EXPECT_NE(test, 0xd770b550u,
			softcm_icrc(ip, false, udp, t, 20 + SOFTCM_MAD_SIZE));
}

static void icrc_ipv6_vector(struct kunit *test)
{
	static const u8 ip6[40] = {
		0x62, 0x01, 0x23, 0x45, 0x01, 0x20, 0x11, 0x40,
		0xfd, 0x77, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
		0xfd, 0x77, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xfe,
	};
	u8 *t = transport(test);
	u8 ip[40];

	KUNIT_EXPECT_EQ(test, 0xc5ebde61u,
			softcm_icrc(ip6, true, udp, t, 20 + SOFTCM_MAD_SIZE));
	/* Traffic class, flow label and hop limit are masked. */
	memcpy(ip, ip6, sizeof(ip));
	ip[0] = 0x6f;
	ip[1] = 0xf0;
	ip[3] = 0x00;
	ip[7] = 1;
	KUNIT_EXPECT_EQ(test, 0xc5ebde61u,
			softcm_icrc(ip, true, udp, t, 20 + SOFTCM_MAD_SIZE));
}

static struct kunit_case roce_cases[] = {
	KUNIT_CASE(headers_as_rxe_sends_them),
	KUNIT_CASE(header_checks_name_their_reason),
	KUNIT_CASE(icrc_ipv4_vector),
	KUNIT_CASE(icrc_ipv6_vector),
	{}
};

static struct kunit_suite roce_suite = {
	.name = "softcm_roce",
	.test_cases = roce_cases,
};

kunit_test_suite(roce_suite);
