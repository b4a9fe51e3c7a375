// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * rdma_resolve_addr() and rdma_resolve_route().  The path record the
 * library shows in id->route is refreshed (id.c) when the ROUTE_RESOLVED
 * event is read.
 */
#include <string.h>

#include "internal.h"

SOFTCM_EXPORT int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
				    struct sockaddr *dst_addr, int timeout_ms)
{
	struct softcm_resolve_addr c;
	struct softcm_id_priv *priv;
	socklen_t dlen = softcm_sa_len(dst_addr), slen = softcm_sa_len(src_addr);

	if (!id || !dlen || timeout_ms < 0 || (src_addr && !slen))
		return softcm_err(EINVAL);
	priv = to_priv(id);
	memset(&c, 0, sizeof(c));
	c.handle = priv->handle;
	c.timeout_ms = timeout_ms;
	c.src_len = slen;
	c.dst_len = dlen;
	if (slen)
		memcpy(c.src, src_addr, slen);
	memcpy(c.dst, dst_addr, dlen);
	if (softcm_ioctl(priv, SOFTCM_IOCTL_RESOLVE_ADDR, &c))
		return -1;
	softcm_resolved_addr(priv, &c, dst_addr);
	return softcm_wait_sync(priv);
}

/*
 * After RESOLVE_ADDR: the implicit bind's source, which the command
 * returned, and, as librdmacm, the destination.
 */
void softcm_resolved_addr(struct softcm_id_priv *priv, const struct softcm_resolve_addr *c,
			  const struct sockaddr *dst_addr)
{
	struct rdma_addr *a = &priv->id.route.addr;

	memset(&a->src_storage, 0, sizeof(a->src_storage));
	memcpy(&a->src_storage, c->local,
	       c->local_len < sizeof(a->src_storage) ? c->local_len : sizeof(a->src_storage));
	memset(&a->dst_storage, 0, sizeof(a->dst_storage));
	memcpy(&a->dst_storage, dst_addr, softcm_sa_len(dst_addr));
}

SOFTCM_EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct softcm_resolve_route c;
	struct softcm_id_priv *priv;

	if (!id || timeout_ms < 0)
		return softcm_err(EINVAL);
	priv = to_priv(id);
	c.handle = priv->handle;
	c.timeout_ms = timeout_ms;
	if (softcm_ioctl(priv, SOFTCM_IOCTL_RESOLVE_ROUTE, &c))
		return -1;
	return softcm_wait_sync(priv);
}
