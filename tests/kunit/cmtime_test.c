// SPDX-License-Identifier: GPL-2.0
/*
 * IBTA time arithmetic against the values the Linux CM produces: the
 * reference's 6144 ms REQ timeout and 2048 ms timewait with rxe's ACK
 * delay, and cm_ack_timeout()'s rounding on both sides of the delay.
 */

#include <kunit/test.h>
#include <linux/limits.h>

#include "cmtime.h"

static void ms_is_a_power_of_two_of_4us_rounded(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 1u, softcm_cm_ms(0));
	KUNIT_EXPECT_EQ(test, 1u, softcm_cm_ms(8));
	KUNIT_EXPECT_EQ(test, 2u, softcm_cm_ms(9));
	KUNIT_EXPECT_EQ(test, 64u, softcm_cm_ms(14));
	KUNIT_EXPECT_EQ(test, 1024u, softcm_cm_ms(18));
	KUNIT_EXPECT_EQ(test, 4096u, softcm_cm_ms(20));
	KUNIT_EXPECT_EQ(test, 1u << 23, softcm_cm_ms(31));
	/* beyond the 5-bit fields: clamped, never a shift past 31 */
	KUNIT_EXPECT_EQ(test, 1u << 23, softcm_cm_ms(32));
	KUNIT_EXPECT_EQ(test, 1u << 23, softcm_cm_ms(255));
}

static void ack_timeout_rounds_as_linux(struct kunit *test)
{
	/* rxe's delay 15 with rdma_cm's RoCE life time 18 */
	KUNIT_EXPECT_EQ(test, 19, softcm_cm_ack_timeout(15, 18));
	/* life time well above the delay: one more than the life time */
	KUNIT_EXPECT_EQ(test, 19, softcm_cm_ack_timeout(0, 18));
	/* close: both add up */
	KUNIT_EXPECT_EQ(test, 20, softcm_cm_ack_timeout(18, 18));
	KUNIT_EXPECT_EQ(test, 21, softcm_cm_ack_timeout(20, 18));
	/* delay well above the life time: the delay */
	KUNIT_EXPECT_EQ(test, 15, softcm_cm_ack_timeout(15, 8));
	KUNIT_EXPECT_EQ(test, 16, softcm_cm_ack_timeout(15, 13));
	/* capped at the field's maximum */
	KUNIT_EXPECT_EQ(test, 31, softcm_cm_ack_timeout(31, 31));
}

static void req_timeout_and_timewait_as_reference(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 6144u, softcm_cm_req_timeout_ms(18, 20));
	KUNIT_EXPECT_EQ(test, 72u, softcm_cm_req_timeout_ms(10, 14));
	KUNIT_EXPECT_EQ(test, 2048u, softcm_cm_ms(softcm_cm_ack_timeout(SOFTCM_CA_ACK_DELAY, 18)));
}

/* The wait after each transmission: linear, then doubling, then capped. */
static const struct {
	unsigned int base_ms;
	unsigned int n;
	unsigned int want_ms;
} backoff_table[] = {
	/* the default REQ: 2 * 1024 ms of life time + 1024 ms response */
	{ 3072, 0, 3072 }, { 3072, 3, 3072 }, { 3072, 4, 6144 },
	{ 3072, 5, 12288 }, { 3072, 7, 49152 }, { 3072, 8, 60000 },
	{ 3072, 15, 60000 }, { 3072, 255, 60000 },
	/* the tests' fast timers: 64 ms, doubling from the fifth */
	{ 64, 0, 64 }, { 64, 1, 64 }, { 64, 4, 128 }, { 64, 10, 8192 },
	{ 64, 20, 60000 },
	/* a base above the cap is never shortened */
	{ 100000, 0, 100000 }, { 100000, 9, 100000 },
	/* the shift is bounded: no overflow for any n */
	{ 1, 10, 128 }, { 1, 200, 60000 }, { 0, 9, 0 },
};

static void backoff_doubles_after_linear_timeouts(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(backoff_table); i++)
		KUNIT_EXPECT_EQ_MSG(test, backoff_table[i].want_ms,
				    softcm_cm_backoff_ms(backoff_table[i].base_ms,
							 backoff_table[i].n),
				    "base %u n %u", backoff_table[i].base_ms,
				    backoff_table[i].n);
}

/* Twice the linear total: the defaults' 6.1 total, and room for 5 retries. */
static void retry_budget_is_twice_linear_total(struct kunit *test)
{
	unsigned int base = 72, sum = 0, n;

	KUNIT_EXPECT_EQ(test, 16u * 6144, softcm_cm_retry_budget_ms(3072, 15));
	KUNIT_EXPECT_EQ(test, 144u, softcm_cm_retry_budget_ms(72, 0));
	KUNIT_EXPECT_EQ(test, UINT_MAX, softcm_cm_retry_budget_ms(UINT_MAX, 15));
	/* five retransmissions and the last wait fit in the budget for 5 */
	for (n = 0; n <= 5; n++)
		sum += softcm_cm_backoff_ms(base, n);
	KUNIT_EXPECT_LE(test, sum, softcm_cm_retry_budget_ms(base, 5));
}

/* 18 is "roughly 1s", as the Linux CM now advertises. */
static void default_req_timeout_with_short_response(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 1024u, softcm_cm_ms(18));
	KUNIT_EXPECT_EQ(test, 3072u, softcm_cm_req_timeout_ms(18, 18));
}

static struct kunit_case cmtime_cases[] = {
	KUNIT_CASE(ms_is_a_power_of_two_of_4us_rounded),
	KUNIT_CASE(ack_timeout_rounds_as_linux),
	KUNIT_CASE(req_timeout_and_timewait_as_reference),
	KUNIT_CASE(backoff_doubles_after_linear_timeouts),
	KUNIT_CASE(retry_budget_is_twice_linear_total),
	KUNIT_CASE(default_req_timeout_with_short_response),
	{}
};

static struct kunit_suite cmtime_suite = {
	.name = "softcm_cmtime",
	.test_cases = cmtime_cases,
};

kunit_test_suite(cmtime_suite);
