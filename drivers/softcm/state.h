/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_STATE_H
#define _SOFTCM_STATE_H

#include <linux/types.h>
#include <uapi/linux/softcm.h>

bool softcm_state_allowed(enum softcm_state from, enum softcm_state to);
const char *softcm_state_name(enum softcm_state state);

#endif /* _SOFTCM_STATE_H */
