// SPDX-License-Identifier: GPL-2.0
/*
 * The ICRC through the crypto API: the same value as lib's crc32_le for
 * the same packet, the same value whether the packet is one buffer or a
 * linear part and page fragments, an RC packet's value computed
 * independently (zlib's CRC-32 over eight 0xff bytes and the masked
 * headers), a CM MAD rdma_rxe sent, captured with its ICRC, and a length
 * short of a BTH refused.  Then a throughput figure of each
 * implementation, reported and never judged.
 */

#include <crypto/hash.h>
#include <kunit/test.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/string.h>

#include "compat.h"
#include "icrc.h"

/*
 * An RC WRITE ONLY of 1001 bytes (pad 3) from 10.77.1.1 to 10.77.1.254:
 * IPv4, UDP, BTH, RETH, then payload bytes i * 7 + 3 and three zero pad
 * bytes.  Its ICRC, from zlib: 0xe2a5abcc.
 */
#define WRITE_PAYLOAD	1001
#define WRITE_BTH_LEN	(12 + 16 + WRITE_PAYLOAD + 3)
#define WRITE_ICRC	0xe2a5abccu

static const u8 write_ip[20] = {
	0x45, 0x00, 0x04, 0x28, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
	0x0a, 0x4d, 0x01, 0x01, 0x0a, 0x4d, 0x01, 0xfe,
};

static const u8 write_udp[8] = { 0xc1, 0x23, 0x12, 0xb7, 0x04, 0x14, 0x00, 0x00 };

static const u8 write_hdr[28] = {
	0x0a, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x12, 0x34, 0x56,
	0x00, 0x00, 0x7f, 0x00, 0x00, 0x10, 0x00, 0x00,
	0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x03, 0xe9,
};

/* BTH through pad, and four bytes of ICRC that no computation may cover. */
static u8 *write_packet(struct kunit *test)
{
	u8 *p = kunit_kzalloc(test, WRITE_BTH_LEN + 4, GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	memcpy(p, write_hdr, sizeof(write_hdr));
	for (i = 0; i < WRITE_PAYLOAD; i++)
		p[28 + i] = i * 7 + 3;
	put_unaligned_le32(0xa5a5a5a5, p + WRITE_BTH_LEN);
	return p;
}

static struct crypto_shash *tfm_of(struct kunit *test)
{
	struct crypto_shash *tfm = softcm_icrc_alloc_tfm();

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(tfm), "crypto crc32: %ld", PTR_ERR(tfm));
	kunit_info(test, "crypto: %s; the module's: %s\n",
		   crypto_shash_driver_name(tfm), softcm_icrc_driver());
	return tfm;
}

static void lib_and_crypto_agree(struct kunit *test)
{
	struct crypto_shash *tfm = tfm_of(test);
	u8 *p = write_packet(test);
	unsigned int len;

	KUNIT_EXPECT_EQ(test, WRITE_ICRC,
			softcm_icrc_with(NULL, write_ip, false, write_udp, p,
					 WRITE_BTH_LEN));
	KUNIT_EXPECT_EQ(test, WRITE_ICRC,
			softcm_icrc_with(tfm, write_ip, false, write_udp, p,
					 WRITE_BTH_LEN));
	KUNIT_EXPECT_EQ(test, WRITE_ICRC,
			softcm_icrc(write_ip, false, write_udp, p, WRITE_BTH_LEN));
	/* Every length from a bare BTH on, across pclmul's 16 and 64 bytes. */
	for (len = 12; len <= 300; len++)
		KUNIT_EXPECT_EQ_MSG(test,
				    softcm_icrc_with(NULL, write_ip, false, write_udp,
						     p, len),
				    softcm_icrc_with(tfm, write_ip, false, write_udp,
						     p, len),
				    "length %u", len);
	crypto_free_shash(tfm);
}

/*
 * @p's BTH_LEN + 4 bytes as an skb: @lin of them (the BTH, or part of it)
 * after IP and UDP headers in the linear part, the rest in page fragments
 * of @chunk bytes each, starting at odd page offsets.
 */
static struct sk_buff *frag_skb(struct kunit *test, const u8 *p,
				unsigned int lin, unsigned int chunk)
{
	unsigned int total = WRITE_BTH_LEN + 4, off = lin, i = 0;
	struct sk_buff *skb = alloc_skb(64 + lin, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, write_ip, sizeof(write_ip));
	skb_put_data(skb, write_udp, sizeof(write_udp));
	skb_put_data(skb, p, lin);
	while (off < total) {
		unsigned int n = min(chunk, total - off), poff = 1 + i * 5;
		struct page *page = alloc_page(GFP_KERNEL);

		if (!page) {
			kfree_skb(skb);
			KUNIT_ASSERT_NOT_NULL(test, page);
		}
		memcpy(page_address(page) + poff, p + off, n);
		skb_fill_page_desc(skb, i++, page, poff, n);
		skb->len += n;
		skb->data_len += n;
		skb->truesize += PAGE_SIZE;
		off += n;
	}
	return skb;
}

static void fragments_agree_with_linear(struct kunit *test)
{
	static const struct {
		unsigned int lin, chunk;
	} shapes[] = {
		{ 28, 4096 },	/* headers linear, payload in one fragment */
		{ 28, 100 },	/* ... in eleven */
		{ 40, 333 },	/* payload split at odd offsets */
		{ 5, 70 },	/* the BTH itself across linear and fragments */
		{ WRITE_BTH_LEN, 4096 },	/* the ICRC alone in a fragment */
		{ WRITE_BTH_LEN + 4, 4096 },	/* all linear */
	};
	struct crypto_shash *tfm = tfm_of(test);
	u8 *p = write_packet(test);
	unsigned int s;

	for (s = 0; s < ARRAY_SIZE(shapes); s++) {
		struct sk_buff *skb;
		u32 lib, crypto;

		skb = frag_skb(test, p, shapes[s].lin, shapes[s].chunk);
		lib = softcm_icrc_skb_with(NULL, skb->data, false, skb->data + 20,
					   skb, 28, WRITE_BTH_LEN);
		crypto = softcm_icrc_skb_with(tfm, skb->data, false,
					      skb->data + 20, skb, 28,
					      WRITE_BTH_LEN);
		KUNIT_EXPECT_EQ_MSG(test, WRITE_ICRC, lib, "shape %u", s);
		KUNIT_EXPECT_EQ_MSG(test, WRITE_ICRC, crypto, "shape %u", s);
		kfree_skb(skb);
	}
	crypto_free_shash(tfm);
}

/*
 * A length short of a BTH would make the length after it wrap: each form
 * refuses it with -EINVAL, which no ICRC of a packet (a u32) equals.
 */
static void short_length_is_refused(struct kunit *test)
{
	struct crypto_shash *tfm = tfm_of(test);
	u8 *p = write_packet(test);
	struct sk_buff *skb = frag_skb(test, p, 28, 100);
	unsigned int len;

	for (len = 0; len < 12; len++) {
		KUNIT_EXPECT_EQ_MSG(test, -EINVAL,
				    softcm_icrc_skb_with(NULL, skb->data, false,
							 skb->data + 20, skb, 28,
							 len), "length %u", len);
		KUNIT_EXPECT_EQ_MSG(test, -EINVAL,
				    softcm_icrc_skb_with(tfm, skb->data, false,
							 skb->data + 20, skb, 28,
							 len), "length %u", len);
		KUNIT_EXPECT_EQ_MSG(test, -EINVAL,
				    softcm_icrc_with(NULL, write_ip, false,
						     write_udp, p, len),
				    "length %u", len);
		KUNIT_EXPECT_EQ_MSG(test, -EINVAL,
				    softcm_icrc_with(tfm, write_ip, false,
						     write_udp, p, len),
				    "length %u", len);
		KUNIT_EXPECT_EQ_MSG(test, -EINVAL,
				    softcm_icrc(write_ip, false, write_udp, p, len),
				    "length %u", len);
	}
	/* ...and the compare a receive check makes never matches */
	KUNIT_EXPECT_NE(test, softcm_icrc(write_ip, false, write_udp, p, 11),
			(s64)(u32)-EINVAL);
	/* a bare BTH is a length */
	KUNIT_EXPECT_GE(test, softcm_icrc(write_ip, false, write_udp, p, 12), 0);
	kfree_skb(skb);
	crypto_free_shash(tfm);
}

/*
 * A REQ rdma_rxe (10.90.0.1, Debian's 6.1 kernel) sent to softcm
 * (10.90.0.2) in tests/interop/rxe_test.sh, from the capture that run left
 * on r0: IPv4 and UDP headers, BTH, DETH, the 256-byte MAD and rxe's ICRC.
 */
static const u8 rxe_req[308] = {
	0x45, 0x00, 0x01, 0x34, 0xc3, 0x47, 0x40, 0x00, 0x40, 0x11, 0x61, 0xbb,
	0x0a, 0x5a, 0x00, 0x01, 0x0a, 0x5a, 0x00, 0x02, 0xd8, 0x72, 0x12, 0xb7,
	0x01, 0x20, 0x00, 0x00, 0x64, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01,
	0x80, 0x00, 0x00, 0x02, 0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x01, 0x07, 0x02, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x9f, 0xaf, 0x6d, 0x51, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x51, 0x6d, 0xaf, 0x9f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x06, 0x1d, 0x2f, 0xe0, 0x8a, 0x85, 0xff, 0xfe, 0x94, 0x5d, 0xe2,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x12, 0x01,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xa0, 0x06, 0xd7, 0x37, 0xa5,
	0xff, 0xff, 0x30, 0xf0, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x0a, 0x5a, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff,
	0x0a, 0x5a, 0x00, 0x02, 0x73, 0x3c, 0x50, 0x00, 0x00, 0x40, 0x00, 0x98,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0xbe, 0xaa,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x0a, 0x5a, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x0a, 0x5a, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x56, 0x82, 0x1f, 0x38,
};

static void rxe_captured_vector(struct kunit *test)
{
	struct crypto_shash *tfm = tfm_of(test);
	const u8 *ip = rxe_req, *udp = rxe_req + 20, *bth = rxe_req + 28;
	unsigned int bth_len = sizeof(rxe_req) - 28 - 4;
	u32 want = get_unaligned_le32(rxe_req + sizeof(rxe_req) - 4);

	KUNIT_EXPECT_EQ(test, want, softcm_icrc_with(NULL, ip, false, udp, bth,
						     bth_len));
	KUNIT_EXPECT_EQ(test, want, softcm_icrc_with(tfm, ip, false, udp, bth,
						     bth_len));
	KUNIT_EXPECT_EQ(test, want, softcm_icrc(ip, false, udp, bth, bth_len));
	crypto_free_shash(tfm);
}

/*
 * MB/s of each over a 64 KiB buffer, for Documentation/protocol.rst.
 * Printed only: a time is not a pass or a failure, and on the debug
 * kernel (KASAN, no crc32-pclmul) it says little.
 */
static void throughput_report(struct kunit *test)
{
	struct crypto_shash *tfm = tfm_of(test);
	const unsigned int len = 65536, rounds = 256;
	u8 *buf = kunit_kzalloc(test, len, GFP_KERNEL);
	u64 t0, lib_ns, crypto_ns;
	unsigned int i;
	u32 a = 0, b = 0;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	memcpy(buf, write_hdr, sizeof(write_hdr));
	t0 = ktime_get_ns();
	for (i = 0; i < rounds; i++)
		a += softcm_icrc_with(NULL, write_ip, false, write_udp, buf, len);
	lib_ns = ktime_get_ns() - t0;
	t0 = ktime_get_ns();
	for (i = 0; i < rounds; i++)
		b += softcm_icrc_with(tfm, write_ip, false, write_udp, buf, len);
	crypto_ns = ktime_get_ns() - t0;
	KUNIT_EXPECT_EQ(test, a, b);
	kunit_info(test, "crc32_le %llu MB/s, %s %llu MB/s\n",
		   div64_u64((u64)len * rounds * 1000, lib_ns ?: 1),
		   crypto_shash_driver_name(tfm),
		   div64_u64((u64)len * rounds * 1000, crypto_ns ?: 1));
	crypto_free_shash(tfm);
}

static struct kunit_case icrc_cases[] = {
	KUNIT_CASE(lib_and_crypto_agree),
	KUNIT_CASE(fragments_agree_with_linear),
	KUNIT_CASE(rxe_captured_vector),
	KUNIT_CASE(short_length_is_refused),
	KUNIT_CASE(throughput_report),
	{}
};

static struct kunit_suite icrc_suite = {
	.name = "softcm_icrc",
	.test_cases = icrc_cases,
};

kunit_test_suite(icrc_suite);
