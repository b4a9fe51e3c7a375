// SPDX-License-Identifier: GPL-2.0
/*
 * The modify-QP table, row by row for RC and UD: every allowed transition
 * with exactly its required attributes and with all its optional ones,
 * each required attribute missing, each attribute the row does not allow
 * added, the transitions the table has no row for, and any state to RESET
 * and ERR.
 */

#include <kunit/test.h>

#include "qpstate.h"

#define QPS(x) IB_QPS_##x

struct row {
	enum ib_qp_state cur, next;
	u32 req_rc, opt_rc, req_ud, opt_ud;
};

#define RC_RTS_OPT	(IB_QP_CUR_STATE | IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | \
			 IB_QP_MIN_RNR_TIMER | IB_QP_PATH_MIG_STATE)
#define UD_RTS_OPT	(IB_QP_CUR_STATE | IB_QP_QKEY)

/* IBTA Vol. 1 table 91, as include/rdma/ib_verbs.h's users read it. */
static const struct row rows[] = {
	{ QPS(RESET), QPS(RESET), 0, 0, 0, 0 },
	{ QPS(RESET), QPS(INIT),
	  IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS, 0,
	  IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY, 0 },
	{ QPS(INIT), QPS(INIT),
	  0, IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS,
	  0, IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY },
	{ QPS(INIT), QPS(RTR),
	  IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
	  IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER,
	  IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX,
	  0, IB_QP_PKEY_INDEX | IB_QP_QKEY },
	{ QPS(RTR), QPS(RTS),
	  IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
	  IB_QP_MAX_QP_RD_ATOMIC, RC_RTS_OPT,
	  IB_QP_SQ_PSN, UD_RTS_OPT },
	{ QPS(RTS), QPS(RTS), 0, RC_RTS_OPT, 0, UD_RTS_OPT },
	{ QPS(RTS), QPS(SQD), 0, IB_QP_EN_SQD_ASYNC_NOTIFY,
	  0, IB_QP_EN_SQD_ASYNC_NOTIFY },
	{ QPS(SQD), QPS(RTS), 0, RC_RTS_OPT, 0, UD_RTS_OPT },
	{ QPS(SQD), QPS(SQD),
	  0, IB_QP_PORT | IB_QP_AV | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
	  IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MAX_DEST_RD_ATOMIC |
	  IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX |
	  IB_QP_MIN_RNR_TIMER | IB_QP_PATH_MIG_STATE,
	  0, IB_QP_PKEY_INDEX | IB_QP_QKEY },
	{ QPS(SQE), QPS(RTS), 0, 0, 0, UD_RTS_OPT },
};

static const enum ib_qp_type types[] = { IB_QPT_RC, IB_QPT_UD };

/* The last attribute bit the kernel defines (IB_QP_RATE_LIMIT) and one more. */
#define LAST_BIT	26

static u32 req_of(const struct row *r, enum ib_qp_type t)
{
	return t == IB_QPT_RC ? r->req_rc : r->req_ud;
}

static u32 opt_of(const struct row *r, enum ib_qp_type t)
{
	return t == IB_QPT_RC ? r->opt_rc : r->opt_ud;
}

/* A modify names its next state unless it stays where it is. */
static u32 state_bit(const struct row *r)
{
	return r->cur == r->next ? 0 : IB_QP_STATE;
}

static void allowed_rows(struct kunit *test)
{
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct row *r = &rows[i];

		for (j = 0; j < ARRAY_SIZE(types); j++) {
			enum ib_qp_type t = types[j];
			u32 req = req_of(r, t), opt = opt_of(r, t);
			bool ok;

			ok = softcm_qpstate_is_ok(r->cur, r->next, t, req | state_bit(r));
			KUNIT_EXPECT_TRUE_MSG(test, ok, "row %u type %d required only", i, t);
			ok = softcm_qpstate_is_ok(r->cur, r->next, t, req | opt | IB_QP_STATE);
			KUNIT_EXPECT_TRUE_MSG(test, ok, "row %u type %d all optional", i, t);
			KUNIT_EXPECT_EQ_MSG(test, req, softcm_qpstate_required(r->cur, r->next, t),
					    "row %u type %d", i, t);
			KUNIT_EXPECT_EQ_MSG(test, opt, softcm_qpstate_optional(r->cur, r->next, t),
					    "row %u type %d", i, t);
		}
	}
}

static void missing_required(struct kunit *test)
{
	unsigned int i, j, b;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct row *r = &rows[i];

		for (j = 0; j < ARRAY_SIZE(types); j++) {
			enum ib_qp_type t = types[j];
			u32 req = req_of(r, t);
			bool ok;

			for (b = 0; b < LAST_BIT; b++) {
				if (!(req & BIT(b)))
					continue;
				ok = softcm_qpstate_is_ok(r->cur, r->next, t,
							  (req & ~BIT(b)) | IB_QP_STATE);
				KUNIT_EXPECT_FALSE_MSG(test, ok, "row %u type %d without bit %u",
						       i, t, b);
			}
		}
	}
}

static void extra_bit(struct kunit *test)
{
	unsigned int i, j, b;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct row *r = &rows[i];

		for (j = 0; j < ARRAY_SIZE(types); j++) {
			enum ib_qp_type t = types[j];
			u32 req = req_of(r, t) | IB_QP_STATE;
			u32 allowed = req | opt_of(r, t);
			bool ok;

			for (b = 0; b < LAST_BIT; b++) {
				if (allowed & BIT(b))
					continue;
				ok = softcm_qpstate_is_ok(r->cur, r->next, t, req | BIT(b));
				KUNIT_EXPECT_FALSE_MSG(test, ok, "row %u type %d with bit %u",
						       i, t, b);
			}
		}
	}
}

static bool listed(enum ib_qp_state cur, enum ib_qp_state next)
{
	unsigned int i;

	if (cur != QPS(RESET) && (next == QPS(RESET) || next == QPS(ERR)))
		return true;
	for (i = 0; i < ARRAY_SIZE(rows); i++)
		if (rows[i].cur == cur && rows[i].next == next)
			return true;
	return false;
}

/* Every pair of states: exactly the listed ones are transitions. */
static void whole_matrix(struct kunit *test)
{
	enum ib_qp_state cur, next;
	unsigned int j;

	for (cur = QPS(RESET); cur <= QPS(ERR); cur++)
		for (next = QPS(RESET); next <= QPS(ERR); next++)
			for (j = 0; j < ARRAY_SIZE(types); j++) {
				enum ib_qp_type t = types[j];
				u32 mask = softcm_qpstate_required(cur, next, t) | IB_QP_STATE;
				bool ok = softcm_qpstate_is_ok(cur, next, t, mask);

				KUNIT_EXPECT_EQ_MSG(test, listed(cur, next), ok,
						    "%d -> %d type %d", cur, next, t);
			}
	/* the shortcuts and repeats an application might try */
	KUNIT_EXPECT_FALSE(test, softcm_qpstate_is_ok(QPS(RESET), QPS(RTR), IB_QPT_UD,
						      IB_QP_STATE));
	KUNIT_EXPECT_FALSE(test, softcm_qpstate_is_ok(QPS(INIT), QPS(RTS), IB_QPT_UD,
						      IB_QP_STATE | IB_QP_SQ_PSN));
	KUNIT_EXPECT_FALSE(test, softcm_qpstate_is_ok(QPS(RTR), QPS(RTR), IB_QPT_UD, 0));
	KUNIT_EXPECT_FALSE(test, softcm_qpstate_is_ok(QPS(ERR), QPS(RTS), IB_QPT_UD,
						      IB_QP_STATE | IB_QP_SQ_PSN));
}

static void any_to_reset_or_err(struct kunit *test)
{
	enum ib_qp_state cur;
	unsigned int j;

	for (cur = QPS(INIT); cur <= QPS(ERR); cur++)
		for (j = 0; j < ARRAY_SIZE(types); j++) {
			KUNIT_EXPECT_TRUE(test, softcm_qpstate_is_ok(cur, QPS(RESET), types[j],
								     IB_QP_STATE));
			KUNIT_EXPECT_TRUE(test, softcm_qpstate_is_ok(cur, QPS(ERR), types[j],
								     IB_QP_STATE));
			/* nothing may ride along */
			KUNIT_EXPECT_FALSE(test, softcm_qpstate_is_ok(cur, QPS(ERR), types[j],
								      IB_QP_STATE | IB_QP_QKEY));
		}
	/* the Linux core's table, which rxe applies, has no RESET -> ERR */
	KUNIT_EXPECT_FALSE(test, softcm_qpstate_is_ok(QPS(RESET), QPS(ERR), IB_QPT_RC,
						      IB_QP_STATE));
}

static void refused_inputs(struct kunit *test)
{
	/* types softcm has not */
	KUNIT_EXPECT_FALSE(test, softcm_qpstate_is_ok(QPS(RESET), QPS(INIT), IB_QPT_UC,
						      IB_QP_STATE | IB_QP_PKEY_INDEX |
						      IB_QP_PORT | IB_QP_ACCESS_FLAGS));
	KUNIT_EXPECT_FALSE(test, softcm_qpstate_is_ok(QPS(RESET), QPS(RESET),
						      IB_QPT_RAW_PACKET, 0));
	/* states out of range */
	KUNIT_EXPECT_FALSE(test, softcm_qpstate_is_ok(QPS(ERR) + 1, QPS(RESET),
						      IB_QPT_RC, IB_QP_STATE));
	KUNIT_EXPECT_FALSE(test, softcm_qpstate_is_ok(QPS(INIT), QPS(ERR) + 1,
						      IB_QPT_RC, IB_QP_STATE));
	/* CUR_STATE is only for RTR, RTS, SQD and SQE */
	KUNIT_EXPECT_FALSE(test, softcm_qpstate_is_ok(QPS(INIT), QPS(INIT), IB_QPT_UD,
						      IB_QP_CUR_STATE));
	KUNIT_EXPECT_TRUE(test, softcm_qpstate_is_ok(QPS(RTS), QPS(RTS), IB_QPT_UD,
						     IB_QP_CUR_STATE));
	KUNIT_EXPECT_EQ(test, 0U, softcm_qpstate_required(QPS(RESET), QPS(RTS), IB_QPT_RC));
}

static struct kunit_case qpstate_cases[] = {
	KUNIT_CASE(allowed_rows),
	KUNIT_CASE(missing_required),
	KUNIT_CASE(extra_bit),
	KUNIT_CASE(whole_matrix),
	KUNIT_CASE(any_to_reset_or_err),
	KUNIT_CASE(refused_inputs),
	{}
};

static struct kunit_suite qpstate_suite = {
	.name = "softcm_qpstate",
	.test_cases = qpstate_cases,
};

kunit_test_suite(qpstate_suite);
