/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_CMTIME_H
#define _SOFTCM_CMTIME_H

#include <linux/types.h>

/* The CA ACK delay we advertise: rxe's, so timers match a soft-RoCE peer. */
#define SOFTCM_CA_ACK_DELAY	15

unsigned int softcm_cm_ms(u8 ib_time);
u8 softcm_cm_ack_timeout(u8 ca_ack_delay, u8 packet_life_time);
unsigned int softcm_cm_req_timeout_ms(u8 packet_life_time, u8 response_timeout);

/* Retransmission backoff: as the Linux MAD layer's defaults. */
#define SOFTCM_CM_LINEAR_TIMEOUTS	4
#define SOFTCM_CM_BACKOFF_MAX_MS	60000U

unsigned int softcm_cm_backoff_ms(unsigned int base_ms, unsigned int n);
unsigned int softcm_cm_retry_budget_ms(unsigned int base_ms, u8 retries);

#endif /* _SOFTCM_CMTIME_H */
