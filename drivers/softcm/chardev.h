/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_CHARDEV_H
#define _SOFTCM_CHARDEV_H

struct file;
struct softcm_file;

struct softcm_file *softcm_chardev_file(struct file *filp);

int softcm_chardev_init(void);
void softcm_chardev_uninit(void);

#endif /* _SOFTCM_CHARDEV_H */
