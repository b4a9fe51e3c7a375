/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_CHARDEV_H
#define _SOFTCM_CHARDEV_H

int softcm_chardev_init(void);
void softcm_chardev_uninit(void);

#endif /* _SOFTCM_CHARDEV_H */
