/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_AH_H
#define _SOFTCM_AH_H

#include <linux/rcupdate.h>
#include <uapi/linux/softcm.h>

#include "uobj.h"

struct softcm_file;
struct softcm_net;
struct softcm_pd;

/* An address handle: where a UD send goes, checked once at creation. */
struct softcm_ah {
	struct softcm_uobj uobj;
	struct softcm_net *sn;
	struct softcm_pd *pd;		/* used until destroy */
	struct softcm_ah_attr attr;
	struct rcu_head rcu;
};

int softcm_ah_create(struct softcm_file *sf, struct softcm_create_ah *c);
int softcm_ah_destroy(struct softcm_file *sf, struct softcm_destroy_obj *c);

struct softcm_net;

int softcm_ah_check_av(struct softcm_net *sn, const struct softcm_ah_attr *a);
bool softcm_ah_mtu_fits(struct softcm_net *sn, const struct softcm_ah_attr *a, u8 path_mtu);
int softcm_ah_resolve_hop_limit(struct softcm_net *sn, struct softcm_ah_attr *a);

/* For UD posts: @sf's AH @handle, referenced (softcm_ah_put()), or ERR_PTR. */
struct softcm_ah *softcm_ah_get(struct softcm_file *sf, u32 handle);
void softcm_ah_put(struct softcm_ah *ah);

#endif /* _SOFTCM_AH_H */
