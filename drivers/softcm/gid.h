/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_GID_H
#define _SOFTCM_GID_H

#include <linux/types.h>

struct softcm_net;

/* The index of @gid in the namespace's GID table, or -ENOENT. */
int softcm_gid_find(struct softcm_net *sn, const u8 gid[16]);

#endif /* _SOFTCM_GID_H */
