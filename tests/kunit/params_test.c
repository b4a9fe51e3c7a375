// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameter parsing: what udp_port= accepts and refuses.
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

static struct kunit_case params_cases[] = {
	KUNIT_CASE(port_accepts_every_valid_port),
	KUNIT_CASE(port_refuses_invalid_and_keeps_value),
	{}
};

static struct kunit_suite params_suite = {
	.name = "softcm_params",
	.test_cases = params_cases,
};

kunit_test_suite(params_suite);
