// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * rdma_cm ids: creation and destruction, binding, listening, options,
 * migration between channels, their ports and names, and rdma_create_ep().
 * The addresses the library keeps in id->route.addr, so that
 * rdma_get_local_addr()/rdma_get_peer_addr() answer without a system call,
 * are refreshed (id.c) after each call that can change them.
 */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "softcm.h"

/* The rdma_create_ep() resolutions' timeout, each, as librdmacm's. */
#define CREATE_EP_RESOLVE_MS	2000

static int query(struct softcm_id_priv *priv, int which, void *buf, __u32 *len)
{
	return softcm_query_addr_at(priv->id.channel->fd, priv->handle, which, buf, len);
}

static int is_wildcard(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/* A NULL channel makes a synchronous id with a channel of its own. */
SOFTCM_EXPORT int rdma_create_id(struct rdma_event_channel *channel,
				 struct rdma_cm_id **id, void *context,
				 enum rdma_port_space ps)
{
	struct softcm_create_id c = { .ps = ps };
	struct softcm_id_priv *priv;
	int err;

	if (!id)
		return softcm_err(EINVAL);
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP)
		return softcm_err(EINVAL);
	priv = softcm_id_alloc(channel, context, ps);
	if (!priv)
		return -1;
	c.uid = (uintptr_t)priv;
	if (softcm_ioctl(priv, SOFTCM_IOCTL_CREATE_ID, &c)) {
		err = errno;
		softcm_id_free(priv);
		return softcm_err(err);
	}
	priv->handle = c.handle;
	*id = &priv->id;
	return 0;
}

/*
 * Waits until the application has acknowledged every event of the id it
 * has been given, as librdmacm does: destroying an id with unacknowledged
 * events blocks until they are acknowledged.
 */
SOFTCM_EXPORT int rdma_destroy_id(struct rdma_cm_id *id)
{
	if (!id)
		return softcm_err(EINVAL);
	return softcm_id_destroy(to_priv(id));
}

SOFTCM_EXPORT int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct softcm_id_priv *priv;
	struct softcm_bind c;
	socklen_t len;

	if (!id || !addr)
		return softcm_err(EINVAL);
	len = softcm_sa_len(addr);
	if (!len)
		return softcm_err(EINVAL);
	priv = to_priv(id);
	memset(&c, 0, sizeof(c));
	c.handle = priv->handle;
	c.addr_len = len;
	memcpy(c.addr, addr, len);
	if (softcm_ioctl(priv, SOFTCM_IOCTL_BIND, &c))
		return -1;
	if (softcm_refresh_addr(priv))
		return -1;
	/* As librdmacm: a specific address has a device, a wildcard none. */
	if (!is_wildcard(addr))
		softcm_cmdev_attach(priv);
	return 0;
}

SOFTCM_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct softcm_id_priv *priv;
	struct softcm_listen c;

	if (!id)
		return softcm_err(EINVAL);
	priv = to_priv(id);
	c.handle = priv->handle;
	c.backlog = backlog;
	if (softcm_ioctl(priv, SOFTCM_IOCTL_LISTEN, &c))
		return -1;
	return softcm_refresh_addr(priv);
}

/*
 * Option values are checked here for their size, in the order the kernel's
 * ucma checks them, so that the errors are librdmacm's: EFAULT for a NULL
 * optval of non-zero length, ENOSYS for an unknown level or option name,
 * EINVAL for a wrong size, and EINVAL for RDMA_OPTION_IB_PATH, there being
 * no InfiniBand device to take a path record.
 * SOFTCM_OPTION_ID_CONNECT_RESPONSE is kept for compatibility and changes
 * nothing (CONNECT_RESPONSE is the only handshake): it stays in the library.
 */
SOFTCM_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level, int optname,
				  void *optval, size_t optlen)
{
	struct softcm_set_option c = { .level = SOFTCM_OPTION_ID, .optname = optname };

	if (!id)
		return softcm_err(EINVAL);
	if (!optval && optlen)
		return softcm_err(EFAULT);
	if (level == RDMA_OPTION_IB)
		return softcm_err(optname == RDMA_OPTION_IB_PATH ? EINVAL : ENOSYS);
	if (level != RDMA_OPTION_ID)
		return softcm_err(ENOSYS);

	switch (optname) {
	case SOFTCM_OPTION_ID_CONNECT_RESPONSE:
		if (optlen != sizeof(int))
			return softcm_err(EINVAL);
		to_priv(id)->connect_response = *(int *)optval ? 1 : 0;
		return 0;
	case RDMA_OPTION_ID_TOS:
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t))
			return softcm_err(EINVAL);
		c.value = *(uint8_t *)optval;
		break;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int))
			return softcm_err(EINVAL);
		c.value = *(int *)optval ? 1 : 0;
		break;
	default:
		return softcm_err(ENOSYS);
	}
	c.handle = to_priv(id)->handle;
	return softcm_ioctl(to_priv(id), SOFTCM_IOCTL_SET_OPTION, &c);
}

/*
 * Moves the id and its unread events to @channel (NULL: a new private
 * channel, making the id synchronous; EINVAL for an id that already is, as
 * in librdmacm), once the events already handed out on the old channel are
 * acknowledged.
 */
SOFTCM_EXPORT int rdma_migrate_id(struct rdma_cm_id *id,
				  struct rdma_event_channel *channel)
{
	if (!id)
		return softcm_err(EINVAL);
	if (to_priv(id)->sync && !channel)
		return softcm_err(EINVAL);
	return softcm_id_migrate(to_priv(id), channel);
}

SOFTCM_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	const struct sockaddr *sa = &id->route.addr.src_addr;

	if (sa->sa_family == AF_INET6)
		return id->route.addr.src_sin6.sin6_port;
	return sa->sa_family == AF_INET ? id->route.addr.src_sin.sin_port : 0;
}

SOFTCM_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	const struct sockaddr *sa = &id->route.addr.dst_addr;

	if (sa->sa_family == AF_INET6)
		return id->route.addr.dst_sin6.sin6_port;
	return sa->sa_family == AF_INET ? id->route.addr.dst_sin.sin_port : 0;
}

/*
 * getpeername(2)/getsockname(2) contracts, answered by the kernel, with
 * Linux's order of errors: EBADF, ENOTCONN, then EFAULT/EINVAL for the
 * caller's buffers.  A NULL addr with *addrlen 0 is no fault: nothing is
 * copied.  *addrlen is read and written here, in userspace: an unreadable
 * or unwritable addrlen pointer is SIGSEGV, not EFAULT.
 */
static int get_name(struct rdma_cm_id *id, int which, struct sockaddr *addr,
		    socklen_t *addrlen)
{
	__u32 len = 0;
	int err = 0;

	if (!id)
		return softcm_err(EBADF);
	if (!addrlen)
		err = EFAULT;
	else if ((int)*addrlen < 0)
		err = EINVAL;
	else if (!addr && *addrlen)
		err = EFAULT;
	if (err) {
		/* ENOTCONN (or ENOENT) comes first, as in Linux */
		if (query(to_priv(id), which, NULL, &len))
			return -1;
		return softcm_err(err);
	}
	len = *addrlen;
	if (query(to_priv(id), which, addr, &len))
		return -1;
	*addrlen = len;
	return 0;
}

SOFTCM_EXPORT int softcm_getpeername(struct rdma_cm_id *id, struct sockaddr *addr,
				     socklen_t *addrlen)
{
	return get_name(id, SOFTCM_QUERY_CONNECTED_PEER, addr, addrlen);
}

SOFTCM_EXPORT int softcm_getsockname(struct rdma_cm_id *id, struct sockaddr *addr,
				     socklen_t *addrlen)
{
	return get_name(id, SOFTCM_QUERY_LOCAL, addr, addrlen);
}

/*
 * Always synchronous, as librdmacm's: a passive endpoint is bound to the
 * source address (none is EINVAL, as rdma_bind_addr(NULL)) and keeps
 * @qp_init_attr for the QPs rdma_get_request() makes, with @pd as the
 * id's; an active one is resolved to the destination (address and route,
 * 2 s each) and gets its QP now.
 */
SOFTCM_EXPORT int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
				 struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct softcm_id_priv *priv;
	struct rdma_cm_id *cm_id;
	int err;

	if (!id || !res)
		return softcm_err(EINVAL);
	if (!(res->ai_flags & RAI_PASSIVE) && !res->ai_dst_addr)
		return softcm_err(EINVAL);
	if ((res->ai_flags & RAI_PASSIVE) && !res->ai_src_addr)
		return softcm_err(EINVAL);
	if (rdma_create_id(NULL, &cm_id, NULL, res->ai_port_space))
		return -1;
	priv = to_priv(cm_id);
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cm_id, res->ai_src_addr))
			goto err_destroy;
		if (pd)
			cm_id->pd = pd;
		if (qp_init_attr) {
			priv->qp_init_attr = malloc(sizeof(*qp_init_attr));
			if (!priv->qp_init_attr) {
				errno = ENOMEM;
				goto err_destroy;
			}
			*priv->qp_init_attr = *qp_init_attr;
			priv->qp_init_attr->qp_type = res->ai_qp_type;
		}
	} else {
		if (rdma_resolve_addr(cm_id, res->ai_src_addr, res->ai_dst_addr,
				      CREATE_EP_RESOLVE_MS) ||
		    rdma_resolve_route(cm_id, CREATE_EP_RESOLVE_MS))
			goto err_destroy;
		if (qp_init_attr) {
			qp_init_attr->qp_type = res->ai_qp_type;
			if (rdma_create_qp(cm_id, pd, qp_init_attr))
				goto err_destroy;
		}
	}
	*id = cm_id;
	return 0;

err_destroy:
	err = errno;
	rdma_destroy_ep(cm_id);
	return softcm_err(err);
}

/* Its QP (and the CQs made for it) first, as librdmacm's. */
SOFTCM_EXPORT void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (!id)
		return;
	if (id->qp)
		rdma_destroy_qp(id);
	rdma_destroy_id(id);
}
