// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameter parsing: what udp_port= and rx_queue_max= accept and
 * refuse.
 */

#include <kunit/test.h>

#include "params.h"

static void port_accepts_every_valid_port(struct kunit *test)
{
	static const struct {
		const char *in;
		u16 want;
	} cases[] = {
		{ "1", 1 }, { "4791", 4791 }, { "65535", 65535 },
		{ "0x12b7", 4791 }, { "4791\n", 4791 },
	};
	unsigned int i;
	u16 port;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		port = 0;
		KUNIT_EXPECT_EQ_MSG(test, 0, softcm_parse_port(cases[i].in, &port),
				    "input '%s'", cases[i].in);
		KUNIT_EXPECT_EQ_MSG(test, cases[i].want, port, "input '%s'", cases[i].in);
	}
}

static void port_refuses_invalid_and_keeps_value(struct kunit *test)
{
	static const char *const bad[] = {
		"0", "65536", "-1", "", "abc", "4791x", " 4791", "99999999999",
	};
	unsigned int i;
	u16 port;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		port = 1234;
		KUNIT_EXPECT_EQ_MSG(test, -EINVAL, softcm_parse_port(bad[i], &port),
				    "input '%s'", bad[i]);
		KUNIT_EXPECT_EQ_MSG(test, 1234, port, "input '%s'", bad[i]);
	}
}

/* The receive queues' bound: within 64..65536, or the load fails. */
static void rx_queue_max_bounded(struct kunit *test)
{
	static const struct {
		const char *in;
		int ret;
		unsigned int want;
	} cases[] = {
		{ "64", 0, 64 }, { "4096", 0, 4096 }, { "65536", 0, 65536 }, { "0x100", 0, 256 },
		{ "63", -EINVAL, 77 }, { "0", -EINVAL, 77 }, { "65537", -EINVAL, 77 },
		{ "-1", -EINVAL, 77 }, { "", -EINVAL, 77 }, { "4096k", -EINVAL, 77 },
		{ "4294967296", -EINVAL, 77 },
	};
	unsigned int i, max;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		max = 77;
		KUNIT_EXPECT_EQ_MSG(test, cases[i].ret,
				    softcm_parse_rx_queue_max(cases[i].in, &max),
				    "input '%s'", cases[i].in);
		KUNIT_EXPECT_EQ_MSG(test, cases[i].want, max, "input '%s'", cases[i].in);
	}
}

static struct kunit_case params_cases[] = {
	KUNIT_CASE(port_accepts_every_valid_port),
	KUNIT_CASE(port_refuses_invalid_and_keeps_value),
	KUNIT_CASE(rx_queue_max_bounded),
	{}
};

static struct kunit_suite params_suite = {
	.name = "softcm_params",
	.test_cases = params_cases,
};

kunit_test_suite(params_suite);
