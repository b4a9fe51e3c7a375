/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_CMSTATE_H
#define _SOFTCM_CMSTATE_H

#include <linux/types.h>

/* The IBTA CM states of one connection (Vol. 1 chapter 12, enum ib_cm_state). */
enum softcm_cm_state {
	SOFTCM_CM_IDLE,
	SOFTCM_CM_REQ_SENT,
	SOFTCM_CM_REQ_RCVD,
	SOFTCM_CM_MRA_REQ_SENT,
	SOFTCM_CM_MRA_REQ_RCVD,
	SOFTCM_CM_REP_SENT,
	SOFTCM_CM_REP_RCVD,
	SOFTCM_CM_MRA_REP_SENT,
	SOFTCM_CM_MRA_REP_RCVD,
	SOFTCM_CM_ESTABLISHED,
	SOFTCM_CM_DREQ_SENT,
	SOFTCM_CM_DREQ_RCVD,
	SOFTCM_CM_TIMEWAIT,
	SOFTCM_CM_SIDR_REQ_SENT,
	SOFTCM_CM_SIDR_REQ_RCVD,
	SOFTCM_CM_STATE_COUNT
};

bool softcm_cm_state_allowed(enum softcm_cm_state from, enum softcm_cm_state to);
const char *softcm_cm_state_name(enum softcm_cm_state state);

#endif /* _SOFTCM_CMSTATE_H */
