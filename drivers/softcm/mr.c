// SPDX-License-Identifier: GPL-2.0
/* Not yet implemented: every command answers EOPNOTSUPP (issue 19). */

#include <linux/errno.h>

#include "mr.h"

int softcm_mr_reg(struct softcm_file *sf, struct softcm_reg_mr *c)
{
	return -EOPNOTSUPP;
}

int softcm_mr_dereg(struct softcm_file *sf, struct softcm_destroy_obj *c)
{
	return -EOPNOTSUPP;
}
