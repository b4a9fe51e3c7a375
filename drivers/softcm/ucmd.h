/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_UCMD_H
#define _SOFTCM_UCMD_H

struct softcm_file;

long softcm_ucmd_ioctl(struct softcm_file *sf, unsigned int cmd,
		       unsigned long arg);

#endif /* _SOFTCM_UCMD_H */
