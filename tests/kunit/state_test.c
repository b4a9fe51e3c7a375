// SPDX-License-Identifier: GPL-2.0
/*
 * The id state table: the transitions rdma_cm makes are allowed, the ones
 * it never makes are refused, and the terminal states stay terminal; the
 * whole matrix is compared with the documented list.
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

/*
 * The documented table, written out again pair by pair: every (from, to)
 * of the whole matrix, self-transitions included, must be allowed exactly
 * when it is listed here, so that a transition added to state.c without
 * a reason written here fails.
 */
static void whole_matrix(struct kunit *test)
{
	static const enum softcm_state pairs[][2] = {
		{ ST(IDLE), ST(ADDR_BOUND) },		/* bind, or resolve's implicit bind */
		{ ST(ADDR_BOUND), ST(IDLE) },		/* a bind that failed late */
		{ ST(ADDR_BOUND), ST(ADDR_QUERY) },	/* resolve_addr */
		{ ST(ADDR_BOUND), ST(LISTEN) },		/* listen */
		{ ST(ADDR_QUERY), ST(ADDR_RESOLVED) },
		{ ST(ADDR_QUERY), ST(ADDR_BOUND) },	/* resolution failed */
		{ ST(ADDR_RESOLVED), ST(ROUTE_QUERY) },	/* resolve_route */
		{ ST(ADDR_RESOLVED), ST(ROUTE_RESOLVED) }, /* route known at once */
		{ ST(ROUTE_QUERY), ST(ROUTE_RESOLVED) },
		{ ST(ROUTE_QUERY), ST(ADDR_RESOLVED) },	/* route error */
		{ ST(ROUTE_RESOLVED), ST(CONNECT) },	/* connect */
		{ ST(CONNECT), ST(DISCONNECT) },
		{ ST(CONNECT), ST(ROUTE_RESOLVED) },	/* a connect that was not sent */
		{ ST(LISTEN), ST(ADDR_BOUND) },		/* a listen that failed late */
	};
	bool want[SOFTCM_STATE_COUNT][SOFTCM_STATE_COUNT] = { };
	enum softcm_state from, to;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pairs); i++)
		want[pairs[i][0]][pairs[i][1]] = true;
	/* every state may be destroyed, every live one lose its device */
	for (from = 0; from < SOFTCM_STATE_DESTROYING; from++) {
		want[from][ST(DESTROYING)] = true;
		if (from != ST(DEVICE_REMOVAL))
			want[from][ST(DEVICE_REMOVAL)] = true;
	}
	for (from = 0; from < SOFTCM_STATE_COUNT; from++)
		for (to = 0; to < SOFTCM_STATE_COUNT; to++)
			KUNIT_EXPECT_EQ_MSG(test, want[from][to], softcm_state_allowed(from, to),
					    "%s -> %s", softcm_state_name(from),
					    softcm_state_name(to));
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
	KUNIT_CASE(whole_matrix),
	KUNIT_CASE(destroying_is_terminal),
	KUNIT_CASE(out_of_range_refused),
	{}
};

static struct kunit_suite state_suite = {
	.name = "softcm_state",
	.test_cases = state_cases,
};

kunit_test_suite(state_suite);
