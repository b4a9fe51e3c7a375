/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_AH_H
#define _SOFTCM_AH_H

#include <uapi/linux/softcm.h>

struct softcm_file;

int softcm_ah_create(struct softcm_file *sf, struct softcm_create_ah *c);
int softcm_ah_destroy(struct softcm_file *sf, struct softcm_destroy_obj *c);

#endif /* _SOFTCM_AH_H */
