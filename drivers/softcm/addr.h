/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_ADDR_H
#define _SOFTCM_ADDR_H

#include <linux/types.h>

struct neighbour;
struct softcm_id;
struct softcm_net;

int softcm_id_resolve_addr(struct softcm_id *id, const void *src, u32 src_len,
			   const void *dst, u32 dst_len, u32 timeout_ms);
void softcm_addr_cancel(struct softcm_id *id);
void softcm_addr_neigh_valid(struct softcm_net *sn, struct neighbour *n);

int softcm_addr_init(void);
void softcm_addr_uninit(void);

#endif /* _SOFTCM_ADDR_H */
