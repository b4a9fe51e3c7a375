/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_NOTIFY_H
#define _SOFTCM_NOTIFY_H

int softcm_notify_init(void);
void softcm_notify_uninit(void);

#endif /* _SOFTCM_NOTIFY_H */
