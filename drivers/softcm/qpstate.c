// SPDX-License-Identifier: GPL-2.0
/*
 * The modify-QP table of IBTA Vol. 1 section 11.2.1.2 (table 91), for RC
 * and UD queue pairs, as the Linux RDMA core reads it: for each allowed
 * (current, next) pair, the attributes a Modify QP must carry and those it
 * may carry.  A modify without IB_QP_STATE stays in its state, so the
 * diagonal rows are the attribute-only modifies (INIT, RTS, SQD).
 *
 * Where the Linux core and the spec differ, softcm follows the core, so
 * that a program behaves here as on rdma_rxe: RESET -> ERR is refused
 * (the core's table has no such entry), and IB_QP_CUR_STATE may only name
 * RTR, RTS, SQD or SQE.
 */

#include <linux/bits.h>
#include <linux/export.h>
#include <linux/kernel.h>
#include <kunit/visibility.h>

#include "qpstate.h"

enum { T_RC, T_UD, T_COUNT };

struct transition {
	bool valid;
	u32 req[T_COUNT];
	u32 opt[T_COUNT];
};

#define ANY_TO_RESET_ERR					\
	[IB_QPS_RESET] = { .valid = true },			\
	[IB_QPS_ERR] = { .valid = true }

/* The attributes an RC QP may change in RTS, or on its way back to RTS. */
#define RC_RTS_OPT	(IB_QP_CUR_STATE | IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | \
			 IB_QP_MIN_RNR_TIMER | IB_QP_PATH_MIG_STATE)
#define UD_RTS_OPT	(IB_QP_CUR_STATE | IB_QP_QKEY)

static const struct transition table[IB_QPS_ERR + 1][IB_QPS_ERR + 1] = {
	[IB_QPS_RESET] = {
		[IB_QPS_RESET] = { .valid = true },
		[IB_QPS_INIT] = {
			.valid = true,
			.req[T_RC] = IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS,
			.req[T_UD] = IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY,
		},
	},
	[IB_QPS_INIT] = {
		ANY_TO_RESET_ERR,
		[IB_QPS_INIT] = {
			.valid = true,
			.opt[T_RC] = IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS,
			.opt[T_UD] = IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY,
		},
		[IB_QPS_RTR] = {
			.valid = true,
			.req[T_RC] = IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
				     IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |
				     IB_QP_MIN_RNR_TIMER,
			.opt[T_RC] = IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS |
				     IB_QP_PKEY_INDEX,
			.opt[T_UD] = IB_QP_PKEY_INDEX | IB_QP_QKEY,
		},
	},
	[IB_QPS_RTR] = {
		ANY_TO_RESET_ERR,
		[IB_QPS_RTS] = {
			.valid = true,
			.req[T_RC] = IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
				     IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC,
			.req[T_UD] = IB_QP_SQ_PSN,
			.opt[T_RC] = RC_RTS_OPT,
			.opt[T_UD] = UD_RTS_OPT,
		},
	},
	[IB_QPS_RTS] = {
		ANY_TO_RESET_ERR,
		[IB_QPS_RTS] = {
			.valid = true,
			.opt[T_RC] = RC_RTS_OPT,
			.opt[T_UD] = UD_RTS_OPT,
		},
		[IB_QPS_SQD] = {
			.valid = true,
			.opt[T_RC] = IB_QP_EN_SQD_ASYNC_NOTIFY,
			.opt[T_UD] = IB_QP_EN_SQD_ASYNC_NOTIFY,
		},
	},
	[IB_QPS_SQD] = {
		ANY_TO_RESET_ERR,
		[IB_QPS_RTS] = {
			.valid = true,
			.opt[T_RC] = RC_RTS_OPT,
			.opt[T_UD] = UD_RTS_OPT,
		},
		[IB_QPS_SQD] = {
			.valid = true,
			.opt[T_RC] = IB_QP_PORT | IB_QP_AV | IB_QP_TIMEOUT |
				     IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
				     IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MAX_DEST_RD_ATOMIC |
				     IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS |
				     IB_QP_PKEY_INDEX | IB_QP_MIN_RNR_TIMER |
				     IB_QP_PATH_MIG_STATE,
			.opt[T_UD] = IB_QP_PKEY_INDEX | IB_QP_QKEY,
		},
	},
	[IB_QPS_SQE] = {
		ANY_TO_RESET_ERR,
		/* RC never enters SQE (a send error takes it to ERR) */
		[IB_QPS_RTS] = {
			.valid = true,
			.opt[T_UD] = UD_RTS_OPT,
		},
	},
	[IB_QPS_ERR] = {
		ANY_TO_RESET_ERR,
	},
};

static const struct transition *lookup(enum ib_qp_state cur, enum ib_qp_state next,
				       enum ib_qp_type type, int *t)
{
	if ((unsigned int)cur > IB_QPS_ERR || (unsigned int)next > IB_QPS_ERR)
		return NULL;
	if (type == IB_QPT_RC)
		*t = T_RC;
	else if (type == IB_QPT_UD)
		*t = T_UD;
	else
		return NULL;
	return table[cur][next].valid ? &table[cur][next] : NULL;
}

u32 softcm_qpstate_required(enum ib_qp_state cur, enum ib_qp_state next,
			    enum ib_qp_type type)
{
	const struct transition *tr;
	int t;

	tr = lookup(cur, next, type, &t);
	return tr ? tr->req[t] : 0;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_qpstate_required);

u32 softcm_qpstate_optional(enum ib_qp_state cur, enum ib_qp_state next,
			    enum ib_qp_type type)
{
	const struct transition *tr;
	int t;

	tr = lookup(cur, next, type, &t);
	return tr ? tr->opt[t] : 0;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_qpstate_optional);

bool softcm_qpstate_is_ok(enum ib_qp_state cur, enum ib_qp_state next,
			  enum ib_qp_type type, u32 mask)
{
	const struct transition *tr;
	u32 req, opt;
	int t;

	tr = lookup(cur, next, type, &t);
	if (!tr)
		return false;
	/* the caller's idea of the current state is only asked for here */
	if ((mask & IB_QP_CUR_STATE) && cur != IB_QPS_RTR && cur != IB_QPS_RTS &&
	    cur != IB_QPS_SQD && cur != IB_QPS_SQE)
		return false;
	req = tr->req[t];
	opt = tr->opt[t];
	if ((mask & req) != req)
		return false;
	return !(mask & ~(req | opt | IB_QP_STATE));
}
EXPORT_SYMBOL_IF_KUNIT(softcm_qpstate_is_ok);

/* As `rdma resource show qp` and rxe name them. */
const char *softcm_qp_state_name(u32 state)
{
	static const char *const names[IB_QPS_ERR + 1] = {
		[IB_QPS_RESET] = "RESET", [IB_QPS_INIT] = "INIT",
		[IB_QPS_RTR] = "RTR", [IB_QPS_RTS] = "RTS", [IB_QPS_SQD] = "SQD",
		[IB_QPS_SQE] = "SQE", [IB_QPS_ERR] = "ERR",
	};

	return state <= IB_QPS_ERR ? names[state] : "?";
}
EXPORT_SYMBOL_IF_KUNIT(softcm_qp_state_name);
