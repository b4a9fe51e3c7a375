/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_CORE_H
#define _SOFTCM_CORE_H

struct workqueue_struct;

struct workqueue_struct *softcm_workqueue(void);

int softcm_core_init(void);
void softcm_core_uninit(void);

#endif /* _SOFTCM_CORE_H */
