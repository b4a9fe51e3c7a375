/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_MR_H
#define _SOFTCM_MR_H

#include <uapi/linux/softcm.h>

struct softcm_file;

int softcm_mr_reg(struct softcm_file *sf, struct softcm_reg_mr *c);
int softcm_mr_dereg(struct softcm_file *sf, struct softcm_destroy_obj *c);

#endif /* _SOFTCM_MR_H */
