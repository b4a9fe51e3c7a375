// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * Protection domains, memory regions and address handles: each a kernel
 * object named by its handle in the context's file.  Creating returns
 * NULL with errno; destroying returns an errno value, as libibverbs.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* verbs.h turns these names into inline wrappers; we define the functions. */
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* DEALLOC_PD, DEREG_MR and DESTROY_AH; an errno value. */
static int destroy_obj(struct ibv_context *ctx, unsigned long cmd, uint32_t handle)
{
	struct softcm_destroy_obj d = { .handle = handle };

	if (softcm_vioctl(ctx, cmd, &d))
		return errno;
	softcm_ctx_put(ctx);
	return 0;
}

SOFTCM_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct softcm_alloc_pd a = { 0 };
	struct ibv_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	if (softcm_vioctl(context, SOFTCM_IOCTL_ALLOC_PD, &a)) {
		free(pd);
		return NULL;
	}
	pd->context = context;
	pd->handle = a.handle;
	softcm_ctx_hold(context);
	return pd;
}

/* EBUSY while an MR, QP or AH uses it. */
SOFTCM_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	int ret = destroy_obj(pd->context, SOFTCM_IOCTL_DEALLOC_PD, pd->handle);

	if (!ret)
		free(pd);
	return ret;
}

/*
 * The kernel pins the pages and charges them to RLIMIT_MEMLOCK: ENOMEM
 * beyond it.  Access flags it does not support are EOPNOTSUPP or EINVAL.
 */
SOFTCM_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
					      uint64_t iova, unsigned int access)
{
	struct softcm_reg_mr r;
	struct ibv_mr *mr;

	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&r, 0, sizeof(r));
	r.addr = (uintptr_t)addr;
	r.length = length;
	r.iova = iova;
	r.pd_handle = pd->handle;
	r.access = access;
	if (softcm_vioctl(pd->context, SOFTCM_IOCTL_REG_MR, &r)) {
		free(mr);
		return NULL;
	}
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->handle = r.handle;
	mr->lkey = r.lkey;
	mr->rkey = r.rkey;
	softcm_ctx_hold(pd->context);
	return mr;
}

SOFTCM_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
					int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, access);
}

SOFTCM_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
					     uint64_t iova, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, access);
}

SOFTCM_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	int ret = destroy_obj(mr->context, SOFTCM_IOCTL_DEREG_MR, mr->handle);

	if (!ret)
		free(mr);
	return ret;
}

/* Not supported (see softcm(7)): the MR stays as it was. */
SOFTCM_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			       void *addr, size_t length, int access)
{
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}

SOFTCM_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					       size_t length, uint64_t iova, int fd,
					       int access)
{
	errno = EOPNOTSUPP;
	return NULL;
}

SOFTCM_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct softcm_create_ah c;
	struct ibv_ah *ah;

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&c, 0, sizeof(c));
	c.pd_handle = pd->handle;
	memcpy(c.attr.dgid, attr->grh.dgid.raw, sizeof(c.attr.dgid));
	c.attr.flow_label = attr->grh.flow_label;
	c.attr.sgid_index = attr->grh.sgid_index;
	c.attr.hop_limit = attr->grh.hop_limit;
	c.attr.traffic_class = attr->grh.traffic_class;
	c.attr.dlid = attr->dlid;
	c.attr.sl = attr->sl;
	c.attr.src_path_bits = attr->src_path_bits;
	c.attr.static_rate = attr->static_rate;
	c.attr.is_global = attr->is_global;
	c.attr.port_num = attr->port_num;
	if (softcm_vioctl(pd->context, SOFTCM_IOCTL_CREATE_AH, &c)) {
		free(ah);
		return NULL;
	}
	ah->context = pd->context;
	ah->pd = pd;
	ah->handle = c.handle;
	softcm_ctx_hold(pd->context);
	return ah;
}

SOFTCM_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	int ret = destroy_obj(ah->context, SOFTCM_IOCTL_DESTROY_AH, ah->handle);

	if (!ret)
		free(ah);
	return ret;
}
