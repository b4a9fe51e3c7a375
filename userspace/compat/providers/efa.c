// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * softcm exec's libefa.so.1, for the same reason as its libmlx5.so.1
 * (mlx5.c): the soname, the versions and the entry points perftest
 * imports, each saying "not this device" (EOPNOTSUPP), as libefa does
 * for a device that is not an EFA one.
 */
#include <errno.h>
#include <stddef.h>

#include <infiniband/efadv.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int efadv_query_device(struct ibv_context *ibvctx, struct efadv_device_attr *attr,
			      uint32_t inlen)
{
	return EOPNOTSUPP;
}

EXPORT struct ibv_qp *efadv_create_qp_ex(struct ibv_context *ibvctx,
					 struct ibv_qp_init_attr_ex *attr_ex,
					 struct efadv_qp_init_attr *efa_attr, uint32_t inlen)
{
	errno = EOPNOTSUPP;
	return NULL;
}
