/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_PARAMS_H
#define _SOFTCM_PARAMS_H

#include <linux/types.h>
#include <kunit/visibility.h>

#define SOFTCM_RX_QUEUE_DEFAULT	4096
#define SOFTCM_RX_QUEUE_MIN	64
#define SOFTCM_RX_QUEUE_LIMIT	65536

extern unsigned short softcm_udp_port;
extern unsigned int softcm_rx_queue_max;

#if IS_ENABLED(CONFIG_KUNIT)
int softcm_parse_port(const char *val, u16 *port);
int softcm_parse_rx_queue_max(const char *val, unsigned int *max);
#endif

#endif /* _SOFTCM_PARAMS_H */
