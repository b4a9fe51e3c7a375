// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * rdma_resolve_addr() and rdma_resolve_route(), and the path record the
 * library shows in id->route once the route is resolved.
 */
#include <arpa/inet.h>
#include <string.h>
#include <sys/ioctl.h>

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
	/* The implicit bind's source, and, as librdmacm, the destination. */
	softcm_sync_addr(priv);
	memcpy(&id->route.addr.dst_storage, dst_addr, dlen);
	return softcm_complete(priv);
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
	return softcm_complete(priv);
}

/*
 * Mirror the kernel's path into id->route, as librdmacm does for RoCE;
 * the id named as in softcm_sync_addr_at().
 */
int softcm_sync_route_at(struct softcm_id_priv *priv, int fd, __u32 handle)
{
	struct ibv_sa_path_rec *p = &priv->path;
	struct softcm_query_route q = { .handle = handle };
	struct rdma_route *route = &priv->id.route;

	if (ioctl(fd, SOFTCM_IOCTL_QUERY_ROUTE, &q))
		return -1;
	memset(p, 0, sizeof(*p));
	memcpy(p->sgid.raw, q.sgid, sizeof(q.sgid));
	memcpy(p->dgid.raw, q.dgid, sizeof(q.dgid));
	p->flow_label = htonl(q.flow_label);
	p->hop_limit = q.hop_limit;
	p->traffic_class = q.traffic_class;
	p->reversible = 1;	/* a host int in ibv_sa_path_rec, as libibverbs sets it */
	p->numb_path = 1;
	p->pkey = htons(q.pkey);
	p->sl = q.sl;
	p->mtu_selector = 2;	/* exactly */
	p->mtu = q.mtu;
	p->rate_selector = 2;
	p->packet_life_time_selector = 2;
	p->packet_life_time = q.packet_life_time;
	route->path_rec = p;
	route->num_paths = 1;
	memcpy(route->addr.addr.ibaddr.sgid.raw, q.sgid, sizeof(q.sgid));
	memcpy(route->addr.addr.ibaddr.dgid.raw, q.dgid, sizeof(q.dgid));
	route->addr.addr.ibaddr.pkey = htons(q.pkey);
	return 0;
}
