// SPDX-License-Identifier: GPL-2.0
/* Not yet implemented: every command answers EOPNOTSUPP (issue 19). */

#include <linux/errno.h>

#include "evfd.h"

int softcm_evfd_create_comp_channel(struct softcm_file *sf,
				    struct softcm_create_comp_channel *c,
				    struct softcm_newfd *nf)
{
	return -EOPNOTSUPP;
}

int softcm_evfd_create_async(struct softcm_file *sf,
			     struct softcm_create_async_fd *c,
			     struct softcm_newfd *nf)
{
	return -EOPNOTSUPP;
}
