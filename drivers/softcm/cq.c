// SPDX-License-Identifier: GPL-2.0
/* Not yet implemented: every command answers EOPNOTSUPP (issue 19). */

#include <linux/errno.h>

#include "cq.h"

int softcm_cq_create(struct softcm_file *sf, struct softcm_create_cq *c)
{
	return -EOPNOTSUPP;
}

int softcm_cq_destroy(struct softcm_file *sf, struct softcm_destroy_cq *c)
{
	return -EOPNOTSUPP;
}

int softcm_cq_req_notify(struct softcm_file *sf, struct softcm_req_notify_cq *c)
{
	return -EOPNOTSUPP;
}

int softcm_cq_poll(struct softcm_file *sf, struct softcm_poll_cq *c)
{
	return -EOPNOTSUPP;
}
