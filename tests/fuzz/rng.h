/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fuzzers' random numbers: xorshift64*, so that a run's choices depend
 * only on its printed seed (each thread its own state, seeded from it).
 */
#ifndef _SOFTCM_FUZZ_RNG_H
#define _SOFTCM_FUZZ_RNG_H

#include <linux/types.h>

struct rng {
	__u64 s;	/* never 0 */
};

static inline __u32 rnd(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (r->s * 0x2545F4914F6CDD1DULL) >> 32;
}

static inline __u32 below(struct rng *r, __u32 n)
{
	return rnd(r) % n;
}

#endif /* _SOFTCM_FUZZ_RNG_H */
