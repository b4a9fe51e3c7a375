// SPDX-License-Identifier: GPL-2.0
/* Not yet implemented: every command answers EOPNOTSUPP (issue 19). */

#include <linux/errno.h>

#include "qp.h"

int softcm_qp_create(struct softcm_file *sf, struct softcm_create_qp *c)
{
	return -EOPNOTSUPP;
}

int softcm_qp_modify(struct softcm_file *sf, struct softcm_modify_qp *c)
{
	return -EOPNOTSUPP;
}

int softcm_qp_query(struct softcm_file *sf, struct softcm_query_qp *c)
{
	return -EOPNOTSUPP;
}

int softcm_qp_destroy(struct softcm_file *sf, struct softcm_destroy_qp *c)
{
	return -EOPNOTSUPP;
}

int softcm_qp_post_send(struct softcm_file *sf, struct softcm_post *c)
{
	return -EOPNOTSUPP;
}

int softcm_qp_post_recv(struct softcm_file *sf, struct softcm_post *c)
{
	return -EOPNOTSUPP;
}
