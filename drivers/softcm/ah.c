// SPDX-License-Identifier: GPL-2.0
/* Not yet implemented: every command answers EOPNOTSUPP (issue 19). */

#include <linux/errno.h>

#include "ah.h"

int softcm_ah_create(struct softcm_file *sf, struct softcm_create_ah *c)
{
	return -EOPNOTSUPP;
}

int softcm_ah_destroy(struct softcm_file *sf, struct softcm_destroy_obj *c)
{
	return -EOPNOTSUPP;
}
