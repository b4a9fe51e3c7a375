// SPDX-License-Identifier: GPL-2.0
/*
 * Protection domains.  A PD is a handle in its file's table (uobj.c) and
 * a use count: every MR, AH and QP created in it holds one use, and
 * DEALLOC_PD answers EBUSY until they are gone, as uverbs does.
 */

#include <linux/errno.h>
#include <linux/slab.h>

#include "file.h"
#include "netns.h"
#include "pd.h"

static void pd_destroy(struct softcm_uobj *obj)
{
	struct softcm_pd *pd = container_of(obj, struct softcm_pd, uobj);

	atomic_dec(&pd->sn->nr_uobjs);
}

static void pd_free(struct softcm_uobj *obj)
{
	kfree_rcu(container_of(obj, struct softcm_pd, uobj), rcu);
}

static const struct softcm_uobj_ops pd_ops = {
	.destroy = pd_destroy,
	.free = pd_free,
};

int softcm_pd_alloc(struct softcm_file *sf, struct softcm_alloc_pd *c)
{
	struct softcm_pd *pd;
	int ret;

	if (c->reserved0)
		return -EINVAL;
	pd = kzalloc(sizeof(*pd), GFP_KERNEL_ACCOUNT);
	if (!pd)
		return -ENOMEM;
	softcm_uobj_init(&pd->uobj, SOFTCM_UOBJ_PD, &pd_ops);
	pd->sn = softcm_net(sf->net);

	mutex_lock(&sf->uobjs.lock);
	atomic_inc(&pd->sn->nr_uobjs);
	ret = softcm_uobj_add(&sf->uobjs, &pd->uobj);
	if (ret)
		atomic_dec(&pd->sn->nr_uobjs);
	else
		c->handle = pd->uobj.handle;	/* ours until committed */
	mutex_unlock(&sf->uobjs.lock);
	if (ret)
		kfree(pd);
	return ret;
}

int softcm_pd_dealloc(struct softcm_file *sf, struct softcm_destroy_obj *c)
{
	struct softcm_uobj *obj;

	if (c->reserved0)
		return -EINVAL;
	obj = softcm_uobj_remove(&sf->uobjs, SOFTCM_UOBJ_PD, c->handle);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	softcm_uobj_put(obj);
	return 0;
}

struct softcm_pd *softcm_pd_use(struct softcm_file *sf, u32 handle)
{
	struct softcm_uobj *obj;

	obj = softcm_uobj_use(&sf->uobjs, SOFTCM_UOBJ_PD, handle);
	if (IS_ERR(obj))
		return ERR_CAST(obj);
	return container_of(obj, struct softcm_pd, uobj);
}

void softcm_pd_unuse(struct softcm_pd *pd)
{
	softcm_uobj_unuse(&pd->uobj);
}
