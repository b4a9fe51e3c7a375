// SPDX-License-Identifier: GPL-2.0
/* Not yet implemented: every command answers EOPNOTSUPP (issue 19). */

#include <linux/errno.h>

#include "device.h"

int softcm_device_query(struct softcm_file *sf, struct softcm_query_device *c)
{
	return -EOPNOTSUPP;
}

int softcm_device_query_port(struct softcm_file *sf, struct softcm_query_port *c)
{
	return -EOPNOTSUPP;
}

int softcm_device_query_gid(struct softcm_file *sf, struct softcm_query_gid *c)
{
	return -EOPNOTSUPP;
}
