/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_QPSTATE_H
#define _SOFTCM_QPSTATE_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

/*
 * The IBTA modify-QP table for the QP types softcm has (RC and UD):
 * whether @cur may move to @next, and whether @mask names every attribute
 * the transition requires and none it does not allow.  The values are
 * libibverbs' (IBV_QPS_*, IBV_QPT_*, IBV_QP_*), which are the kernel's.
 */
bool softcm_qpstate_is_ok(enum ib_qp_state cur, enum ib_qp_state next,
			  enum ib_qp_type type, u32 mask);
u32 softcm_qpstate_required(enum ib_qp_state cur, enum ib_qp_state next,
			    enum ib_qp_type type);
u32 softcm_qpstate_optional(enum ib_qp_state cur, enum ib_qp_state next,
			    enum ib_qp_type type);
const char *softcm_qp_state_name(u32 state);

#endif /* _SOFTCM_QPSTATE_H */
