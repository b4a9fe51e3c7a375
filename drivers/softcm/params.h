/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_PARAMS_H
#define _SOFTCM_PARAMS_H

#include <linux/types.h>

extern unsigned short softcm_udp_port;

#endif /* _SOFTCM_PARAMS_H */
