// SPDX-License-Identifier: GPL-2.0
/* Not yet implemented: every command answers EOPNOTSUPP (issue 19). */

#include <linux/errno.h>

#include "pd.h"

int softcm_pd_alloc(struct softcm_file *sf, struct softcm_alloc_pd *c)
{
	return -EOPNOTSUPP;
}

int softcm_pd_dealloc(struct softcm_file *sf, struct softcm_destroy_obj *c)
{
	return -EOPNOTSUPP;
}
