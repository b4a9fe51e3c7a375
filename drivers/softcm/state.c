// SPDX-License-Identifier: GPL-2.0
/*
 * The id state machine's one table: which transitions rdma_cm allows.  The
 * states and their numbers are rdma_cm's (include/rdma/rdma_cm.h); the CM
 * protocol's own sub-states live with the protocol.
 *
 * Every state may go to DESTROYING, and every state but the terminal ones
 * to DEVICE_REMOVAL.  Failure paths return to the state they came from.
 */

#include <linux/bits.h>
#include <linux/kernel.h>
#include <kunit/visibility.h>

#include "state.h"

#define S(x) BIT(SOFTCM_STATE_##x)
#define ALWAYS (S(DESTROYING) | S(DEVICE_REMOVAL))

static const u16 allowed[SOFTCM_STATE_COUNT] = {
	[SOFTCM_STATE_IDLE]		= ALWAYS | S(ADDR_BOUND),
	/* ADDR_BOUND -> IDLE: a bind that failed after the state changed */
	[SOFTCM_STATE_ADDR_BOUND]	= ALWAYS | S(IDLE) | S(ADDR_QUERY) | S(LISTEN),
	[SOFTCM_STATE_ADDR_QUERY]	= ALWAYS | S(ADDR_RESOLVED) | S(ADDR_BOUND),
	[SOFTCM_STATE_ADDR_RESOLVED]	= ALWAYS | S(ROUTE_QUERY) | S(ROUTE_RESOLVED),
	[SOFTCM_STATE_ROUTE_QUERY]	= ALWAYS | S(ROUTE_RESOLVED) | S(ADDR_RESOLVED),
	[SOFTCM_STATE_ROUTE_RESOLVED]	= ALWAYS | S(CONNECT),
	/* CONNECT -> ROUTE_RESOLVED: a connect that could not be sent */
	[SOFTCM_STATE_CONNECT]		= ALWAYS | S(DISCONNECT) | S(ROUTE_RESOLVED),
	[SOFTCM_STATE_DISCONNECT]	= ALWAYS,
	/* LISTEN -> ADDR_BOUND: a listen that failed after the state changed */
	[SOFTCM_STATE_LISTEN]		= ALWAYS | S(ADDR_BOUND),
	[SOFTCM_STATE_DEVICE_REMOVAL]	= S(DESTROYING),
	[SOFTCM_STATE_DESTROYING]	= 0,
};

static const char *const names[SOFTCM_STATE_COUNT] = {
	[SOFTCM_STATE_IDLE]		= "IDLE",
	[SOFTCM_STATE_ADDR_QUERY]	= "ADDR_QUERY",
	[SOFTCM_STATE_ADDR_RESOLVED]	= "ADDR_RESOLVED",
	[SOFTCM_STATE_ROUTE_QUERY]	= "ROUTE_QUERY",
	[SOFTCM_STATE_ROUTE_RESOLVED]	= "ROUTE_RESOLVED",
	[SOFTCM_STATE_CONNECT]		= "CONNECT",
	[SOFTCM_STATE_DISCONNECT]	= "DISCONNECT",
	[SOFTCM_STATE_ADDR_BOUND]	= "ADDR_BOUND",
	[SOFTCM_STATE_LISTEN]		= "LISTEN",
	[SOFTCM_STATE_DEVICE_REMOVAL]	= "DEVICE_REMOVAL",
	[SOFTCM_STATE_DESTROYING]	= "DESTROYING",
};

bool softcm_state_allowed(enum softcm_state from, enum softcm_state to)
{
	if ((unsigned int)from >= SOFTCM_STATE_COUNT ||
	    (unsigned int)to >= SOFTCM_STATE_COUNT)
		return false;
	return allowed[from] & BIT(to);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_state_allowed);

const char *softcm_state_name(enum softcm_state state)
{
	if ((unsigned int)state >= SOFTCM_STATE_COUNT)
		return "UNKNOWN";
	return names[state];
}
EXPORT_SYMBOL_IF_KUNIT(softcm_state_name);
