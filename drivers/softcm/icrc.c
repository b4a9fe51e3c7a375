// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2's invariant CRC (IBTA Vol. 1 Annex A17.3.3): a CRC-32 over the
 * IP and UDP headers with their variant fields masked to ones, the BTH
 * with its FECN/BECN byte masked, and everything after it up to the ICRC.
 * Exactly what rxe computes (rxe_icrc.c), so that each accepts the
 * other's packets.
 *
 * The CRC goes through the crypto API's "crc32" shash rather than lib's
 * crc32_le: on 6.1 and 6.12 crc32_le is the portable slice-by-8 loop,
 * while on x86 the shash resolves to crc32-pclmul (carry-less multiply,
 * 16 bytes a step).  The data path runs it over every byte it moves.
 */

#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/err.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <linux/udp.h>
#include <kunit/visibility.h>

#include "compat.h"
#include "icrc.h"
#include "ibhdr.h"

/*
 * The CRC register after eight 0xff bytes from the standard initial value:
 * the masked LRH that RoCEv2's ICRC still covers, as rxe seeds it.
 */
#define ICRC_SEED	0xdebb20e3

/*
 * The module's transform, allocated at load and shared by every CPU and
 * namespace: a shash's tfm holds only the key (here the seed), each
 * computation has its descriptor on its own stack, so concurrent users
 * need no lock and softirq context is fine.  NULL if the crypto API has
 * no "crc32" (CONFIG_CRYPTO_CRC32 off, or its module not installed): then
 * crc32_le computes the same value, slower.
 */
static struct crypto_shash *icrc_tfm;

/*
 * Two pitfalls of the crypto API on 6.1 and 6.12, both for load time:
 *
 * - "crc32" is found by name among the algorithms registered so far and a
 *   module is requested only when there is none.  crc32_generic is often
 *   there already (rdma_rxe pulls it in), and then crc32-pclmul, which
 *   Debian builds as a module, is never loaded.  So on x86 ask for it by
 *   its driver name first: that requests its module.
 * - Requesting a module runs modprobe.  softcm is loaded from userspace, so
 *   modprobe is there; if it fails, the generic "crc32" or crc32_le is used.
 *
 * The tfm is seeded through setkey, which "crc32" defines as the initial
 * register (little-endian), so that init() starts from ICRC_SEED without
 * touching the descriptor's private state as rxe does.
 */
struct crypto_shash *softcm_icrc_alloc_tfm(void)
{
	struct crypto_shash *tfm = ERR_PTR(-ENOENT);
	__le32 seed = cpu_to_le32(ICRC_SEED);
	int ret;

	if (IS_ENABLED(CONFIG_X86))
		tfm = crypto_alloc_shash("crc32-pclmul", 0, 0);
	if (IS_ERR(tfm))
		tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(tfm))
		return tfm;
	ret = crypto_shash_setkey(tfm, (const u8 *)&seed, sizeof(seed));
	if (ret) {
		crypto_free_shash(tfm);
		return ERR_PTR(ret);
	}
	return tfm;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_icrc_alloc_tfm);

/* Which implementation the module uses, for the log and KUnit. */
const char *softcm_icrc_driver(void)
{
	return icrc_tfm ? crypto_shash_driver_name(icrc_tfm) : "crc32_le";
}
EXPORT_SYMBOL_IF_KUNIT(softcm_icrc_driver);

int softcm_icrc_init(void)
{
	struct crypto_shash *tfm = softcm_icrc_alloc_tfm();

	if (IS_ERR(tfm)) {
		pr_notice("no crypto crc32 (%ld): the ICRC uses crc32_le\n",
			  PTR_ERR(tfm));
		return 0;
	}
	icrc_tfm = tfm;
	pr_debug("ICRC through %s\n", softcm_icrc_driver());
	return 0;
}

void softcm_icrc_uninit(void)
{
	crypto_free_shash(icrc_tfm);
	icrc_tfm = NULL;
}

/* One computation: the crypto descriptor, or crc32_le's register. */
struct icrc {
	struct shash_desc *desc;
	u32 crc;
};

static void icrc_start(struct icrc *c, struct crypto_shash *tfm,
		       struct shash_desc *desc)
{
	c->crc = ICRC_SEED;
	c->desc = tfm ? desc : NULL;
	if (c->desc) {
		desc->tfm = tfm;
		crypto_shash_init(desc);
	}
}

static void icrc_update(struct icrc *c, const void *p, unsigned int len)
{
	if (c->desc)
		crypto_shash_update(c->desc, p, len);
	else
		c->crc = crc32_le(c->crc, p, len);
}

/* The ICRC as rxe stores it in host order: write it with put_unaligned_le32. */
static u32 icrc_end(struct icrc *c)
{
	__le32 out;

	if (!c->desc)
		return ~c->crc;
	/* "crc32" outputs its register little-endian, without inverting */
	crypto_shash_final(c->desc, (u8 *)&out);
	return ~le32_to_cpu(out);
}

/*
 * The IP and UDP headers with their variant fields masked: IPv4 TOS, TTL
 * and checksum; IPv6 traffic class, flow label and hop limit; the UDP
 * checksum.  The IPv4 header is 20 bytes: rxe sends no options and the
 * receive path drops packets with them before the ICRC.
 */
static void icrc_ip_udp(struct icrc *c, const u8 *iph, bool ipv6,
			const u8 *udph)
{
	union {
		struct iphdr v4;
		struct ipv6hdr v6;
	} ip;
	struct udphdr udp;

	if (ipv6) {
		memcpy(&ip.v6, iph, sizeof(ip.v6));
		ip.v6.priority = 0xf;
		memset(ip.v6.flow_lbl, 0xff, sizeof(ip.v6.flow_lbl));
		ip.v6.hop_limit = 0xff;
		icrc_update(c, &ip.v6, sizeof(ip.v6));
	} else {
		memcpy(&ip.v4, iph, sizeof(ip.v4));
		ip.v4.tos = 0xff;
		ip.v4.ttl = 0xff;
		ip.v4.check = (__force __sum16)0xffff;
		icrc_update(c, &ip.v4, sizeof(ip.v4));
	}
	memcpy(&udp, udph, sizeof(udp));
	udp.check = (__force __sum16)0xffff;
	icrc_update(c, &udp, sizeof(udp));
}

/* The BTH with byte 4 (FECN, BECN and six reserved bits) masked. */
static void icrc_bth(struct icrc *c, const u8 *bth)
{
	u8 b[SOFTCM_IB_BTH];

	memcpy(b, bth, sizeof(b));
	b[4] = 0xff;
	icrc_update(c, b, sizeof(b));
}

/*
 * @bth_len bytes from the BTH on (headers, payload and pad, not the ICRC
 * itself), contiguous at @bth; the IP and UDP headers at @iph and @udph.
 * The ICRC, 0 to U32_MAX, or -EINVAL if @bth_len does not cover a BTH
 * (the length after it would wrap): a value no ICRC read from a packet
 * equals, so that a receive check comparing the two (as s64, never
 * stored in a u32 first) drops the packet.  Every caller checks its
 * packet's length first; there is no WARN because KUnit passes short
 * lengths on purpose, and the test guests run with panic_on_warn.
 */
s64 softcm_icrc_with(struct crypto_shash *tfm, const u8 *iph, bool ipv6,
		     const u8 *udph, const u8 *bth, unsigned int bth_len)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	struct icrc c;

	if (unlikely(bth_len < SOFTCM_IB_BTH))
		return -EINVAL;
	icrc_start(&c, tfm, desc);
	icrc_ip_udp(&c, iph, ipv6, udph);
	icrc_bth(&c, bth);
	icrc_update(&c, bth + SOFTCM_IB_BTH, bth_len - SOFTCM_IB_BTH);
	return icrc_end(&c);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_icrc_with);

s64 softcm_icrc(const u8 *iph, bool ipv6, const u8 *udph, const u8 *bth,
		unsigned int bth_len)
{
	return softcm_icrc_with(icrc_tfm, iph, ipv6, udph, bth, bth_len);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_icrc);

/*
 * The same for a packet whose BTH is at offset @bth_off of @skb and whose
 * @bth_len bytes from there may lie in the linear part, page fragments
 * and the frag list alike, read in place (skb_seq_read maps one page at a
 * time, atomically: any context).  The IP and UDP headers are the linear
 * ones the stack pulled or pushed.  The caller has checked that @skb holds
 * @bth_len bytes from @bth_off and that @bth_len covers a BTH; -EINVAL,
 * as above, if not.
 */
s64 softcm_icrc_skb_with(struct crypto_shash *tfm, const u8 *iph, bool ipv6,
			 const u8 *udph, struct sk_buff *skb,
			 unsigned int bth_off, unsigned int bth_len)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	u8 bth_buf[SOFTCM_IB_BTH];
	struct skb_seq_state st;
	unsigned int done = 0, rest, n;
	const u8 *bth, *data;
	struct icrc c;

	if (unlikely(bth_len < SOFTCM_IB_BTH))
		return -EINVAL;
	icrc_start(&c, tfm, desc);
	icrc_ip_udp(&c, iph, ipv6, udph);
	bth = skb_header_pointer(skb, bth_off, sizeof(bth_buf), bth_buf);
	if (WARN_ON_ONCE(!bth))
		return -EINVAL;
	icrc_bth(&c, bth);

	rest = bth_len - SOFTCM_IB_BTH;
	skb_prepare_seq_read(skb, bth_off + SOFTCM_IB_BTH, bth_off + bth_len, &st);
	/* A block may run past the end asked for: the ICRC itself, say. */
	while (done < rest && (n = skb_seq_read(done, &data, &st)) != 0) {
		n = min(n, rest - done);
		icrc_update(&c, data, n);
		done += n;
	}
	skb_abort_seq_read(&st);
	return icrc_end(&c);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_icrc_skb_with);

s64 softcm_icrc_skb(const u8 *iph, bool ipv6, const u8 *udph,
		    struct sk_buff *skb, unsigned int bth_off,
		    unsigned int bth_len)
{
	return softcm_icrc_skb_with(icrc_tfm, iph, ipv6, udph, skb, bth_off,
				    bth_len);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_icrc_skb);
