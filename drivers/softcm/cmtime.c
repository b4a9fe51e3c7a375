// SPDX-License-Identifier: GPL-2.0
/*
 * IBTA time values: 4.096 us * 2^n, as the CM carries them, and the
 * timeouts the Linux CM derives from them, so that our retransmissions
 * and timewait last what a Linux peer expects.
 */

#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/export.h>
#include <kunit/visibility.h>

#include "cmtime.h"

/*
 * The Linux CM's cm_convert_to_ms(): 2^n * 4.096 us rounded to a power of
 * two of milliseconds, never below 1 ms.  Exponents beyond 31 do not fit
 * the 5-bit fields; they are clamped.
 */
unsigned int softcm_cm_ms(u8 ib_time)
{
	ib_time = min_t(u8, ib_time, 31);
	return 1U << max_t(int, ib_time - 8, 0);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_cm_ms);

/*
 * The local ACK timeout from the CA's ACK delay and the path's packet life
 * time (IBTA 12.7.34, the Linux CM's cm_ack_timeout()): twice the life
 * time plus the delay, i.e. one more than the larger exponent when they
 * are close, capped at the field's maximum.
 */
u8 softcm_cm_ack_timeout(u8 ca_ack_delay, u8 packet_life_time)
{
	int t = packet_life_time + 1;

	if (t >= ca_ack_delay)
		t += (ca_ack_delay >= t - 1);
	else
		t = ca_ack_delay + (t >= ca_ack_delay - 1);
	return min(t, 31);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_cm_ack_timeout);

/* A REQ waits for the round trip and the peer's response time. */
unsigned int softcm_cm_req_timeout_ms(u8 packet_life_time, u8 response_timeout)
{
	return 2 * softcm_cm_ms(packet_life_time) + softcm_cm_ms(response_timeout);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_cm_req_timeout_ms);

/*
 * The wait after the @n-th retransmission (0: the first transmission) of
 * a message whose first wait is @base_ms: @base_ms for the first few,
 * then doubling, as the Linux MAD layer backs off since it lowered the
 * CM response timeout to about a second ("IB/mad: Exponential backoff
 * when retrying sends"), and never above SOFTCM_CM_BACKOFF_MAX_MS unless
 * @base_ms itself is.  An overloaded peer then sees fewer of our
 * retransmissions while a lost packet still costs only @base_ms.
 */
unsigned int softcm_cm_backoff_ms(unsigned int base_ms, unsigned int n)
{
	unsigned int shift;

	if (n < SOFTCM_CM_LINEAR_TIMEOUTS)
		return base_ms;
	shift = min(n - SOFTCM_CM_LINEAR_TIMEOUTS + 1, 16U);
	return max_t(u64, base_ms, min_t(u64, (u64)base_ms << shift,
					  SOFTCM_CM_BACKOFF_MAX_MS));
}
EXPORT_SYMBOL_IF_KUNIT(softcm_cm_backoff_ms);

/*
 * How long retransmissions may go on in all: twice what @retries linear
 * ones took, 2 * (retries + 1) * base.  With the defaults that is what
 * linear retries took at 6.1's 4-second response timeout (a 6144 ms REQ
 * interval where ours is 3072 ms), as upstream kept the CM's total time
 * when it lowered the timeout ("IB/cm: Set deadline when sending MADs").
 * Whichever comes first, the retries or the budget, ends the message; up
 * to five retries all fit, so tests' short settings see every one.
 */
unsigned int softcm_cm_retry_budget_ms(unsigned int base_ms, u8 retries)
{
	return min_t(u64, 2ULL * base_ms * (retries + 1), UINT_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_cm_retry_budget_ms);
