/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_PD_H
#define _SOFTCM_PD_H

#include <uapi/linux/softcm.h>

struct softcm_file;

int softcm_pd_alloc(struct softcm_file *sf, struct softcm_alloc_pd *c);
int softcm_pd_dealloc(struct softcm_file *sf, struct softcm_destroy_obj *c);

#endif /* _SOFTCM_PD_H */
