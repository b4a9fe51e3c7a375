/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_ICRC_H
#define _SOFTCM_ICRC_H

#include <linux/types.h>

struct crypto_shash;
struct sk_buff;

int softcm_icrc_init(void);
void softcm_icrc_uninit(void);

/*
 * The ICRC (0 to U32_MAX), or -EINVAL for a length short of a BTH, which
 * no ICRC of a packet equals: compare the result as it is.
 */
s64 softcm_icrc(const u8 *iph, bool ipv6, const u8 *udph, const u8 *bth,
		unsigned int bth_len);
s64 softcm_icrc_skb(const u8 *iph, bool ipv6, const u8 *udph,
		    struct sk_buff *skb, unsigned int bth_off,
		    unsigned int bth_len);

/* For KUnit: a tfm of its own, or NULL for the library's crc32_le. */
struct crypto_shash *softcm_icrc_alloc_tfm(void);
const char *softcm_icrc_driver(void);
s64 softcm_icrc_with(struct crypto_shash *tfm, const u8 *iph, bool ipv6,
		     const u8 *udph, const u8 *bth, unsigned int bth_len);
s64 softcm_icrc_skb_with(struct crypto_shash *tfm, const u8 *iph, bool ipv6,
			 const u8 *udph, struct sk_buff *skb,
			 unsigned int bth_off, unsigned int bth_len);

#endif /* _SOFTCM_ICRC_H */
