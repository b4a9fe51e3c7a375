// SPDX-License-Identifier: GPL-2.0
/* Not yet implemented: every command answers EOPNOTSUPP (issue 19). */

#include <linux/errno.h>

#include "gid.h"
#include "netns.h"

int softcm_gid_find(struct softcm_net *sn, const u8 gid[16])
{
	return -ENOENT;
}
