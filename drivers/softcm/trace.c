// SPDX-License-Identifier: GPL-2.0
/* The tracepoints' definitions (trace.h), and the MAD reader they share. */

#include <net/net_namespace.h>
#include <softcm/wire.h>

#include "compat.h"
#include "netns.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/* The header fields and first two words of a CM MAD, as sent or received. */
void softcm_trace_mad(struct softcm_net *sn, bool tx,
		      const struct sockaddr *peer, const u8 *mad, int err)
{
	if (!trace_softcm_cm_msg_enabled())
		return;
	trace_softcm_cm_msg(sn->net->ns.inum, tx, peer,
			    get_unaligned_be16(mad + SOFTCM_MAD_ATTR_ID_OFF) & 0xff,
			    get_unaligned_be64(mad + SOFTCM_MAD_TID_OFF),
			    get_unaligned_be32(mad + SOFTCM_MAD_HDR_SIZE),
			    get_unaligned_be32(mad + SOFTCM_MAD_HDR_SIZE + 4), err);
}
