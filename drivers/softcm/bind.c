// SPDX-License-Identifier: GPL-2.0
/*
 * Binding an id to a local address and port, listening, and the id options
 * that govern both, with rdma_bind_addr()'s and rdma_listen()'s rules; and
 * what an id answers for its addresses, as getsockname() and getpeername().
 */

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/inetdevice.h>
#include <linux/lockdep.h>
#include <linux/netdevice.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <net/route.h>

#include "bind.h"
#include "id.h"
#include "netns.h"
#include "port.h"
#include "sockaddr.h"
#include "transport.h"

/* Is @sin a usable source address in @net? */
static int check_local4(struct net *net, const struct sockaddr_in *sin)
{
	if (sin->sin_addr.s_addr == htonl(INADDR_ANY))
		return 0;
	return inet_addr_type(net, sin->sin_addr.s_addr) == RTN_LOCAL ?
	       0 : -EADDRNOTAVAIL;
}

/*
 * A link-local address means nothing without its link: it needs a scope
 * id, which binds the id to that device, as in rdma_bind_addr().
 */
static int check_local6(struct net *net, const struct sockaddr_in6 *sin6,
			int *ifindex)
{
	struct net_device *dev = NULL;
	int ret = 0;

	if (!IS_ENABLED(CONFIG_IPV6))
		return -EAFNOSUPPORT;
	if (ipv6_addr_any(&sin6->sin6_addr))
		return 0;

	rcu_read_lock();
	if (ipv6_addr_type(&sin6->sin6_addr) & IPV6_ADDR_LINKLOCAL) {
		if (!sin6->sin6_scope_id) {
			ret = -EINVAL;
			goto out;
		}
		dev = dev_get_by_index_rcu(net, sin6->sin6_scope_id);
		if (!dev) {
			ret = -ENODEV;
			goto out;
		}
		*ifindex = dev->ifindex;
	}
	if (!ipv6_chk_addr(net, &sin6->sin6_addr, dev, 0))
		ret = -EADDRNOTAVAIL;
out:
	rcu_read_unlock();
	return ret;
}

/*
 * A bound address keeps no flow label, and a link-local one the index of
 * the device its scope id names.
 */
static int parse_addr(struct softcm_id *id, const void *addr, u32 addr_len,
		      struct sockaddr_storage *ss, int *ifindex)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	int ret;

	*ifindex = 0;
	ret = softcm_addr_parse(addr, addr_len, ss);
	if (ret)
		return ret;
	if (ss->ss_family == AF_INET)
		return check_local4(id->net, (struct sockaddr_in *)ss);

	ret = check_local6(id->net, sin6, ifindex);
	sin6->sin6_flowinfo = 0;
	sin6->sin6_scope_id = *ifindex;
	return ret;
}

static bool default_afonly(struct softcm_id *id, sa_family_t family)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (family == AF_INET6)
		return READ_ONCE(id->net->ipv6.sysctl.bindv6only);
#endif
	return true;
}

int softcm_id_bind(struct softcm_id *id, const void *addr, u32 addr_len)
{
	struct sockaddr_storage ss;
	int ifindex, ret;

	lockdep_assert_held(&id->mutex);

	if (id->state != SOFTCM_STATE_IDLE)
		return -EINVAL;
	ret = parse_addr(id, addr, addr_len, &ss, &ifindex);
	if (ret)
		return ret;

	/* Not in any table yet: nobody else reads these. */
	id->src = ss;
	id->bound_ifindex = ifindex;
	if (!id->afonly_set)
		id->afonly = default_afonly(id, ss.ss_family);

	ret = softcm_port_bind(id);
	if (ret)
		goto err_clear_addr;
	softcm_id_cas_state(id, SOFTCM_STATE_IDLE, SOFTCM_STATE_ADDR_BOUND);
	return 0;

err_clear_addr:
	memset(&id->src, 0, sizeof(id->src));
	id->bound_ifindex = 0;
	return ret;
}

int softcm_id_listen(struct softcm_id *id, int backlog)
{
	int max = READ_ONCE(softcm_net(id->net)->max_backlog);
	int ret;

	lockdep_assert_held(&id->mutex);

	if (id->state == SOFTCM_STATE_IDLE) {
		struct sockaddr_in any = { .sin_family = AF_INET };

		ret = softcm_id_bind(id, &any, sizeof(any));
		if (ret)
			return ret;
	}
	if (id->state != SOFTCM_STATE_ADDR_BOUND)
		return -EINVAL;

	ret = softcm_port_make_unique(id);
	if (ret)
		return ret;
	/* Requests arrive on the namespace's socket: it must be open. */
	ret = softcm_transport_get(softcm_net(id->net));
	if (ret)
		return ret;
	id->backlog = backlog <= 0 || backlog > max ? max : backlog;
	softcm_id_cas_state(id, SOFTCM_STATE_ADDR_BOUND, SOFTCM_STATE_LISTEN);
	return 0;
}

int softcm_id_set_option(struct softcm_id *id, u32 level, u32 optname, u32 value)
{
	enum softcm_state state = id->state;

	lockdep_assert_held(&id->mutex);

	if (level != SOFTCM_OPTION_ID)
		return -ENOPROTOOPT;

	switch (optname) {
	case SOFTCM_OPTION_ID_TOS:
		if (value > 255)
			return -EINVAL;
		id->tos = value;
		return 0;
	case SOFTCM_OPTION_ID_REUSEADDR:
		if (value > 1)
			return -EINVAL;
		if (state != SOFTCM_STATE_IDLE &&
		    (!value || state == SOFTCM_STATE_LISTEN))
			return -EINVAL;
		softcm_port_set_flags(id, value, id->afonly);
		return 0;
	case SOFTCM_OPTION_ID_AFONLY:
		if (value > 1)
			return -EINVAL;
		if (state != SOFTCM_STATE_IDLE && state != SOFTCM_STATE_ADDR_BOUND)
			return -EINVAL;
		softcm_port_set_flags(id, id->reuseaddr, value);
		id->afonly_set = true;
		return 0;
	case SOFTCM_OPTION_ID_ACK_TIMEOUT:
		if (value > 31 || id->ps != SOFTCM_PS_TCP)
			return -EINVAL;
		id->ack_timeout = value;
		id->ack_timeout_set = true;
		return 0;
	default:
		return -ENOPROTOOPT;
	}
}

/*
 * The id's local address, or its peer's as getpeername() answers: a
 * connection that is over has no peer any more, as a socket.  QUERY_ADDR
 * and the full event records (file.c) both ask here, so that they agree.
 */
int softcm_id_query_addr(struct softcm_id *id, u32 which, struct sockaddr_storage *ss)
{
	lockdep_assert_held(&id->mutex);

	if (which == SOFTCM_QUERY_LOCAL) {
		*ss = id->src;
		return 0;
	}
	if (id->peer_gone || (which == SOFTCM_QUERY_CONNECTED_PEER && !id->conn_up) ||
	    id->dst.ss_family == AF_UNSPEC)
		return -ENOTCONN;
	*ss = id->dst;
	return 0;
}
