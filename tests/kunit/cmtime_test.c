// SPDX-License-Identifier: GPL-2.0
/*
 * IBTA time arithmetic against the values the Linux CM produces: the
 * reference's 6144 ms REQ timeout and 2048 ms timewait with rxe's ACK
 * delay, and cm_ack_timeout()'s rounding on both sides of the delay.
 */

#include <kunit/test.h>

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

static struct kunit_case cmtime_cases[] = {
	KUNIT_CASE(ms_is_a_power_of_two_of_4us_rounded),
	KUNIT_CASE(ack_timeout_rounds_as_linux),
	KUNIT_CASE(req_timeout_and_timewait_as_reference),
	{}
};

static struct kunit_suite cmtime_suite = {
	.name = "softcm_cmtime",
	.test_cases = cmtime_cases,
};

kunit_test_suite(cmtime_suite);
