/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 24-bit packet sequence numbers (IBTA 9.7.1): they wrap, so "before" and
 * "after" mean within half the space (2^23) of each other, as rxe and
 * every NIC compare them.
 */
#ifndef _SOFTCM_PSN_H
#define _SOFTCM_PSN_H

#include <linux/types.h>

#define SOFTCM_PSN_MASK		0xffffffu

static inline u32 softcm_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SOFTCM_PSN_MASK;
}

/*
 * Negative, zero or positive as @a is before, equal to or after @b:
 * the 24-bit difference shifted into the sign of an s32.  Two PSNs
 * exactly 2^23 apart compare as @a before @b, whichever is which; the
 * windows in use (rxe: 128 PSNs, at most 2^23 by the IBTA) never get
 * there.
 */
static inline s32 softcm_psn_cmp(u32 a, u32 b)
{
	return (s32)((a - b) << 8);
}

/* How far @a is ahead of @b, modulo 2^24. */
static inline u32 softcm_psn_diff(u32 a, u32 b)
{
	return (a - b) & SOFTCM_PSN_MASK;
}

#endif /* _SOFTCM_PSN_H */
