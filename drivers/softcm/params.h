/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_PARAMS_H
#define _SOFTCM_PARAMS_H

#include <linux/types.h>
#include <kunit/visibility.h>

extern unsigned short softcm_udp_port;

#if IS_ENABLED(CONFIG_KUNIT)
int softcm_parse_port(const char *val, u16 *port);
#endif

#endif /* _SOFTCM_PARAMS_H */
