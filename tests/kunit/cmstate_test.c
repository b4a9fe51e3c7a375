// SPDX-License-Identifier: GPL-2.0
/*
 * The CM state table: the paths IBTA chapter 12 and the Linux CM take are
 * allowed end to end, the shortcuts they never take are refused, and the
 * whole matrix is compared with the documented list.
 */

#include <kunit/test.h>

#include "cmstate.h"

#define CS(x) SOFTCM_CM_##x

static void expect_path(struct kunit *test, const enum softcm_cm_state *path,
			unsigned int n)
{
	unsigned int i;

	for (i = 0; i + 1 < n; i++)
		KUNIT_EXPECT_TRUE_MSG(test, softcm_cm_state_allowed(path[i], path[i + 1]),
				      "%s -> %s", softcm_cm_state_name(path[i]),
				      softcm_cm_state_name(path[i + 1]));
}

static void active_paths(struct kunit *test)
{
	static const enum softcm_cm_state rtu_by_kernel[] = {
		CS(IDLE), CS(REQ_SENT), CS(MRA_REQ_RCVD), CS(REP_RCVD),
		CS(ESTABLISHED), CS(DREQ_SENT), CS(TIMEWAIT), CS(IDLE),
	};
	static const enum softcm_cm_state slow_establish[] = {
		CS(REP_RCVD), CS(MRA_REP_SENT), CS(ESTABLISHED), CS(DREQ_RCVD),
		CS(TIMEWAIT),
	};
	static const enum softcm_cm_state rejected[] = { CS(REQ_SENT), CS(IDLE) };
	/* REJ 10 to our REQ; any REJ once established (cm_rej_handler()) */
	static const enum softcm_cm_state stale[] = { CS(REQ_SENT), CS(TIMEWAIT), CS(IDLE) };
	static const enum softcm_cm_state rej_established[] = {
		CS(REP_RCVD), CS(ESTABLISHED), CS(TIMEWAIT),
	};

	expect_path(test, rtu_by_kernel, ARRAY_SIZE(rtu_by_kernel));
	expect_path(test, slow_establish, ARRAY_SIZE(slow_establish));
	expect_path(test, rejected, ARRAY_SIZE(rejected));
	expect_path(test, stale, ARRAY_SIZE(stale));
	expect_path(test, rej_established, ARRAY_SIZE(rej_established));
}

static void passive_paths(struct kunit *test)
{
	static const enum softcm_cm_state accepted[] = {
		CS(IDLE), CS(REQ_RCVD), CS(MRA_REQ_SENT), CS(REP_SENT),
		CS(MRA_REP_RCVD), CS(ESTABLISHED), CS(DREQ_RCVD), CS(TIMEWAIT),
		CS(IDLE),
	};
	/* RTU lost, DREQ first; REJ after our REP goes through timewait */
	static const enum softcm_cm_state rtu_lost[] = { CS(REP_SENT), CS(DREQ_RCVD) };
	static const enum softcm_cm_state rej_after_rep[] = { CS(REP_SENT), CS(TIMEWAIT) };
	static const enum softcm_cm_state crossing[] = { CS(DREQ_SENT), CS(DREQ_RCVD) };
	static const enum softcm_cm_state sidr[] = {
		CS(IDLE), CS(SIDR_REQ_RCVD), CS(IDLE), CS(SIDR_REQ_SENT), CS(IDLE),
	};

	expect_path(test, accepted, ARRAY_SIZE(accepted));
	expect_path(test, rtu_lost, ARRAY_SIZE(rtu_lost));
	expect_path(test, rej_after_rep, ARRAY_SIZE(rej_after_rep));
	expect_path(test, crossing, ARRAY_SIZE(crossing));
	expect_path(test, sidr, ARRAY_SIZE(sidr));
}

static void shortcuts_refused(struct kunit *test)
{
	static const enum softcm_cm_state pairs[][2] = {
		{ CS(IDLE), CS(ESTABLISHED) },
		{ CS(IDLE), CS(TIMEWAIT) },
		{ CS(REQ_SENT), CS(ESTABLISHED) },	/* not without a REP */
		{ CS(REQ_RCVD), CS(ESTABLISHED) },	/* not without a REP */
		{ CS(ESTABLISHED), CS(IDLE) },		/* only through timewait */
		{ CS(DREQ_RCVD), CS(DREQ_SENT) },
		{ CS(TIMEWAIT), CS(ESTABLISHED) },
		{ CS(TIMEWAIT), CS(TIMEWAIT) },
		{ CS(SIDR_REQ_SENT), CS(ESTABLISHED) },
		{ CS(SIDR_REQ_RCVD), CS(REP_SENT) },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pairs); i++)
		KUNIT_EXPECT_FALSE_MSG(test, softcm_cm_state_allowed(pairs[i][0], pairs[i][1]),
				       "%s -> %s", softcm_cm_state_name(pairs[i][0]),
				       softcm_cm_state_name(pairs[i][1]));
}

/*
 * The documented table, written out again pair by pair: every (from, to)
 * of the whole matrix, self-transitions included, must be allowed exactly
 * when it is listed here, so that a transition added to cmstate.c without
 * a reason written here fails.
 */
static void whole_matrix(struct kunit *test)
{
	static const enum softcm_cm_state pairs[][2] = {
		/* a connection starts by a REQ or SIDR_REQ, either way */
		{ CS(IDLE), CS(REQ_SENT) },
		{ CS(IDLE), CS(REQ_RCVD) },
		{ CS(IDLE), CS(SIDR_REQ_SENT) },
		{ CS(IDLE), CS(SIDR_REQ_RCVD) },
		/* active: REJ or timeout (IDLE), MRA, REP, REJ 10 (TIMEWAIT) */
		{ CS(REQ_SENT), CS(IDLE) },
		{ CS(REQ_SENT), CS(MRA_REQ_RCVD) },
		{ CS(REQ_SENT), CS(REP_RCVD) },
		{ CS(REQ_SENT), CS(TIMEWAIT) },
		{ CS(MRA_REQ_RCVD), CS(IDLE) },
		{ CS(MRA_REQ_RCVD), CS(REP_RCVD) },
		{ CS(MRA_REQ_RCVD), CS(TIMEWAIT) },
		/*
		 * REP: RTU (ESTABLISHED), MRA while rdma_establish() waits, our
		 * REJ (IDLE), the peer's REJ (TIMEWAIT)
		 */
		{ CS(REP_RCVD), CS(IDLE) },
		{ CS(REP_RCVD), CS(MRA_REP_SENT) },
		{ CS(REP_RCVD), CS(ESTABLISHED) },
		{ CS(REP_RCVD), CS(TIMEWAIT) },
		{ CS(MRA_REP_SENT), CS(IDLE) },
		{ CS(MRA_REP_SENT), CS(ESTABLISHED) },
		{ CS(MRA_REP_SENT), CS(TIMEWAIT) },
		/* passive: reject or the peer gives up (IDLE), MRA, accept, REJ 10 */
		{ CS(REQ_RCVD), CS(IDLE) },
		{ CS(REQ_RCVD), CS(MRA_REQ_SENT) },
		{ CS(REQ_RCVD), CS(REP_SENT) },
		{ CS(REQ_RCVD), CS(TIMEWAIT) },
		{ CS(MRA_REQ_SENT), CS(IDLE) },
		{ CS(MRA_REQ_SENT), CS(REP_SENT) },
		{ CS(MRA_REQ_SENT), CS(TIMEWAIT) },
		/* REP out: RTU, MRA, a DREQ (the RTU was lost), REJ or timeout */
		{ CS(REP_SENT), CS(IDLE) },
		{ CS(REP_SENT), CS(MRA_REP_RCVD) },
		{ CS(REP_SENT), CS(ESTABLISHED) },
		{ CS(REP_SENT), CS(DREQ_RCVD) },
		{ CS(REP_SENT), CS(TIMEWAIT) },
		{ CS(MRA_REP_RCVD), CS(IDLE) },
		{ CS(MRA_REP_RCVD), CS(ESTABLISHED) },
		{ CS(MRA_REP_RCVD), CS(DREQ_RCVD) },
		{ CS(MRA_REP_RCVD), CS(TIMEWAIT) },
		/* established: disconnect either way, or straight to timewait */
		{ CS(ESTABLISHED), CS(DREQ_SENT) },
		{ CS(ESTABLISHED), CS(DREQ_RCVD) },
		{ CS(ESTABLISHED), CS(TIMEWAIT) },
		{ CS(DREQ_SENT), CS(DREQ_RCVD) },	/* crossing DREQs */
		{ CS(DREQ_SENT), CS(TIMEWAIT) },	/* DREP or timeout */
		{ CS(DREQ_RCVD), CS(TIMEWAIT) },	/* our DREP */
		{ CS(TIMEWAIT), CS(IDLE) },
		{ CS(SIDR_REQ_SENT), CS(IDLE) },
		{ CS(SIDR_REQ_RCVD), CS(IDLE) },
	};
	bool want[SOFTCM_CM_STATE_COUNT][SOFTCM_CM_STATE_COUNT] = { };
	enum softcm_cm_state from, to;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pairs); i++)
		want[pairs[i][0]][pairs[i][1]] = true;
	for (from = 0; from < SOFTCM_CM_STATE_COUNT; from++)
		for (to = 0; to < SOFTCM_CM_STATE_COUNT; to++)
			KUNIT_EXPECT_EQ_MSG(test, want[from][to],
					    softcm_cm_state_allowed(from, to), "%s -> %s",
					    softcm_cm_state_name(from),
					    softcm_cm_state_name(to));
}

static void out_of_range_refused(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, softcm_cm_state_allowed(SOFTCM_CM_STATE_COUNT, CS(IDLE)));
	KUNIT_EXPECT_FALSE(test, softcm_cm_state_allowed(CS(IDLE), SOFTCM_CM_STATE_COUNT));
	KUNIT_EXPECT_STREQ(test, "UNKNOWN", softcm_cm_state_name(SOFTCM_CM_STATE_COUNT));
	KUNIT_EXPECT_STREQ(test, "TIMEWAIT", softcm_cm_state_name(CS(TIMEWAIT)));
}

static struct kunit_case cmstate_cases[] = {
	KUNIT_CASE(active_paths),
	KUNIT_CASE(passive_paths),
	KUNIT_CASE(shortcuts_refused),
	KUNIT_CASE(whole_matrix),
	KUNIT_CASE(out_of_range_refused),
	{}
};

static struct kunit_suite cmstate_suite = {
	.name = "softcm_cmstate",
	.test_cases = cmstate_cases,
};

kunit_test_suite(cmstate_suite);
