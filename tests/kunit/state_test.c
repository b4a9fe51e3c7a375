// SPDX-License-Identifier: GPL-2.0
/*
 * The id state table: the transitions rdma_cm makes are allowed, the ones
 * it never makes are refused, and the terminal states stay terminal.
 */

#include <kunit/test.h>

#include "state.h"

#define ST(x) SOFTCM_STATE_##x

static void rdma_cm_transitions_allowed(struct kunit *test)
{
	static const enum softcm_state pairs[][2] = {
		{ ST(IDLE), ST(ADDR_BOUND) },		/* bind */
		{ ST(ADDR_BOUND), ST(IDLE) },		/* failed bind */
		{ ST(ADDR_BOUND), ST(LISTEN) },		/* listen */
		{ ST(ADDR_BOUND), ST(ADDR_QUERY) },	/* resolve_addr */
		{ ST(ADDR_QUERY), ST(ADDR_RESOLVED) },
		{ ST(ADDR_QUERY), ST(ADDR_BOUND) },	/* resolution failed */
		{ ST(ADDR_RESOLVED), ST(ROUTE_QUERY) },
		{ ST(ROUTE_QUERY), ST(ROUTE_RESOLVED) },
		{ ST(ROUTE_QUERY), ST(ADDR_RESOLVED) },	/* route error */
		{ ST(ROUTE_RESOLVED), ST(CONNECT) },
		{ ST(CONNECT), ST(DISCONNECT) },
		{ ST(LISTEN), ST(ADDR_BOUND) },		/* failed listen */
		{ ST(DEVICE_REMOVAL), ST(DESTROYING) },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pairs); i++)
		KUNIT_EXPECT_TRUE_MSG(test, softcm_state_allowed(pairs[i][0], pairs[i][1]),
				      "%s -> %s", softcm_state_name(pairs[i][0]),
				      softcm_state_name(pairs[i][1]));
}

static void every_live_state_can_be_destroyed(struct kunit *test)
{
	enum softcm_state s;

	for (s = 0; s < SOFTCM_STATE_DESTROYING; s++)
		KUNIT_EXPECT_TRUE_MSG(test, softcm_state_allowed(s, ST(DESTROYING)),
				      "%s", softcm_state_name(s));
}

static void never_made_transitions_refused(struct kunit *test)
{
	static const enum softcm_state pairs[][2] = {
		{ ST(IDLE), ST(LISTEN) },		/* listen binds first */
		{ ST(IDLE), ST(CONNECT) },
		{ ST(IDLE), ST(IDLE) },
		{ ST(LISTEN), ST(CONNECT) },
		{ ST(LISTEN), ST(LISTEN) },
		{ ST(ADDR_BOUND), ST(ADDR_BOUND) },	/* no second bind */
		{ ST(ADDR_RESOLVED), ST(ADDR_QUERY) },
		{ ST(DISCONNECT), ST(CONNECT) },
		{ ST(DEVICE_REMOVAL), ST(IDLE) },
		{ ST(DEVICE_REMOVAL), ST(DEVICE_REMOVAL) },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pairs); i++)
		KUNIT_EXPECT_FALSE_MSG(test, softcm_state_allowed(pairs[i][0], pairs[i][1]),
				       "%s -> %s", softcm_state_name(pairs[i][0]),
				       softcm_state_name(pairs[i][1]));
}

static void destroying_is_terminal(struct kunit *test)
{
	enum softcm_state s;

	for (s = 0; s < SOFTCM_STATE_COUNT; s++)
		KUNIT_EXPECT_FALSE(test, softcm_state_allowed(ST(DESTROYING), s));
}

static void out_of_range_refused(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, softcm_state_allowed(SOFTCM_STATE_COUNT, ST(IDLE)));
	KUNIT_EXPECT_FALSE(test, softcm_state_allowed(ST(IDLE), SOFTCM_STATE_COUNT));
	KUNIT_EXPECT_FALSE(test, softcm_state_allowed(-1, ST(IDLE)));
	KUNIT_EXPECT_STREQ(test, "UNKNOWN", softcm_state_name(SOFTCM_STATE_COUNT));
	KUNIT_EXPECT_STREQ(test, "LISTEN", softcm_state_name(ST(LISTEN)));
}

static struct kunit_case state_cases[] = {
	KUNIT_CASE(rdma_cm_transitions_allowed),
	KUNIT_CASE(every_live_state_can_be_destroyed),
	KUNIT_CASE(never_made_transitions_refused),
	KUNIT_CASE(destroying_is_terminal),
	KUNIT_CASE(out_of_range_refused),
	{}
};

static struct kunit_suite state_suite = {
	.name = "softcm_state",
	.test_cases = state_cases,
};

kunit_test_suite(state_suite);
