// SPDX-License-Identifier: GPL-2.0
/*
 * The CM protocol's one transition table.  A connection that ends before
 * it was established (rejected, timed out) goes back to IDLE; one that
 * the passive side had answered, that was established, or that the peer
 * rejects as stale, ends through TIMEWAIT, as the Linux CM does.
 */

#include <linux/bits.h>
#include <linux/kernel.h>
#include <linux/export.h>
#include <kunit/visibility.h>

#include "cmstate.h"

#define S(x) BIT(SOFTCM_CM_##x)

static const u32 allowed[SOFTCM_CM_STATE_COUNT] = {
	[SOFTCM_CM_IDLE]	= S(REQ_SENT) | S(REQ_RCVD) | S(SIDR_REQ_SENT) |
				  S(SIDR_REQ_RCVD),
	/*
	 * active: REQ out, then an MRA, a REP, a REJ or the timeout; a REJ
	 * that calls the connection stale, and any REJ once the REP is
	 * ours, leaves through timewait (the Linux CM's cm_rej_handler())
	 */
	[SOFTCM_CM_REQ_SENT]	= S(IDLE) | S(MRA_REQ_RCVD) | S(REP_RCVD) |
				  S(TIMEWAIT),
	[SOFTCM_CM_MRA_REQ_RCVD] = S(IDLE) | S(REP_RCVD) | S(TIMEWAIT),
	[SOFTCM_CM_REP_RCVD]	= S(IDLE) | S(MRA_REP_SENT) | S(ESTABLISHED) |
				  S(TIMEWAIT),
	[SOFTCM_CM_MRA_REP_SENT] = S(IDLE) | S(ESTABLISHED) | S(TIMEWAIT),
	/* passive: the application accepts, rejects, or the peer gives up */
	[SOFTCM_CM_REQ_RCVD]	= S(IDLE) | S(MRA_REQ_SENT) | S(REP_SENT) |
				  S(TIMEWAIT),
	[SOFTCM_CM_MRA_REQ_SENT] = S(IDLE) | S(REP_SENT) | S(TIMEWAIT),
	/* a DREQ before the RTU means the RTU was lost */
	[SOFTCM_CM_REP_SENT]	= S(IDLE) | S(MRA_REP_RCVD) | S(ESTABLISHED) |
				  S(DREQ_RCVD) | S(TIMEWAIT),
	[SOFTCM_CM_MRA_REP_RCVD] = S(IDLE) | S(ESTABLISHED) | S(DREQ_RCVD) |
				  S(TIMEWAIT),
	[SOFTCM_CM_ESTABLISHED]	= S(DREQ_SENT) | S(DREQ_RCVD) | S(TIMEWAIT),
	/* crossing DREQs: DREQ_SENT -> DREQ_RCVD */
	[SOFTCM_CM_DREQ_SENT]	= S(DREQ_RCVD) | S(TIMEWAIT),
	[SOFTCM_CM_DREQ_RCVD]	= S(TIMEWAIT),
	[SOFTCM_CM_TIMEWAIT]	= S(IDLE),
	[SOFTCM_CM_SIDR_REQ_SENT] = S(IDLE),
	[SOFTCM_CM_SIDR_REQ_RCVD] = S(IDLE),
};

static const char *const names[SOFTCM_CM_STATE_COUNT] = {
	[SOFTCM_CM_IDLE]		= "IDLE",
	[SOFTCM_CM_REQ_SENT]		= "REQ_SENT",
	[SOFTCM_CM_REQ_RCVD]		= "REQ_RCVD",
	[SOFTCM_CM_MRA_REQ_SENT]	= "MRA_REQ_SENT",
	[SOFTCM_CM_MRA_REQ_RCVD]	= "MRA_REQ_RCVD",
	[SOFTCM_CM_REP_SENT]		= "REP_SENT",
	[SOFTCM_CM_REP_RCVD]		= "REP_RCVD",
	[SOFTCM_CM_MRA_REP_SENT]	= "MRA_REP_SENT",
	[SOFTCM_CM_MRA_REP_RCVD]	= "MRA_REP_RCVD",
	[SOFTCM_CM_ESTABLISHED]		= "ESTABLISHED",
	[SOFTCM_CM_DREQ_SENT]		= "DREQ_SENT",
	[SOFTCM_CM_DREQ_RCVD]		= "DREQ_RCVD",
	[SOFTCM_CM_TIMEWAIT]		= "TIMEWAIT",
	[SOFTCM_CM_SIDR_REQ_SENT]	= "SIDR_REQ_SENT",
	[SOFTCM_CM_SIDR_REQ_RCVD]	= "SIDR_REQ_RCVD",
};

bool softcm_cm_state_allowed(enum softcm_cm_state from, enum softcm_cm_state to)
{
	if ((unsigned int)from >= SOFTCM_CM_STATE_COUNT ||
	    (unsigned int)to >= SOFTCM_CM_STATE_COUNT)
		return false;
	return allowed[from] & BIT(to);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_cm_state_allowed);

const char *softcm_cm_state_name(enum softcm_cm_state state)
{
	if ((unsigned int)state >= SOFTCM_CM_STATE_COUNT)
		return "UNKNOWN";
	return names[state];
}
EXPORT_SYMBOL_IF_KUNIT(softcm_cm_state_name);
