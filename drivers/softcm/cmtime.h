/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_CMTIME_H
#define _SOFTCM_CMTIME_H

#include <linux/types.h>

/* The CA ACK delay we advertise: rxe's, so timers match a soft-RoCE peer. */
#define SOFTCM_CA_ACK_DELAY	15

unsigned int softcm_cm_ms(u8 ib_time);
u8 softcm_cm_ack_timeout(u8 ca_ack_delay, u8 packet_life_time);
unsigned int softcm_cm_req_timeout_ms(u8 packet_life_time, u8 response_timeout);

#endif /* _SOFTCM_CMTIME_H */
