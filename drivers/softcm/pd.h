/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_PD_H
#define _SOFTCM_PD_H

#include <linux/rcupdate.h>
#include <uapi/linux/softcm.h>

#include "uobj.h"

struct softcm_file;
struct softcm_net;

/*
 * A protection domain: nothing but a name that MRs, AHs and QPs are
 * created in, and that the data path compares (an lkey or rkey must be
 * of the QP's PD).
 */
struct softcm_pd {
	struct softcm_uobj uobj;
	struct softcm_net *sn;		/* its file's namespace */
	struct rcu_head rcu;
};

int softcm_pd_alloc(struct softcm_file *sf, struct softcm_alloc_pd *c);
int softcm_pd_dealloc(struct softcm_file *sf, struct softcm_destroy_obj *c);

/*
 * For the objects created in a PD (under the file's sf->uobjs.lock): a
 * use of the PD @handle, which makes DEALLOC_PD EBUSY until
 * softcm_pd_unuse(); ERR_PTR(-ENOENT) if @sf has no such PD.
 */
struct softcm_pd *softcm_pd_use(struct softcm_file *sf, u32 handle);
void softcm_pd_unuse(struct softcm_pd *pd);

#endif /* _SOFTCM_PD_H */
