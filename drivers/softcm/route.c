// SPDX-License-Identifier: GPL-2.0
/*
 * Route resolution: the path record rdma_cm builds locally for RoCE
 * (cma_resolve_iboe_route()) from what address resolution learnt.  There
 * is nothing to ask the network, so the answer is immediate; it is still
 * delivered as a ROUTE_RESOLVED event, as rdma_cm does.
 */

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/lockdep.h>
#include <net/ipv6.h>
#include <softcm/wire.h>
#include <uapi/linux/softcm.h>

#include "event.h"
#include "id.h"
#include "netns.h"
#include "route.h"
#include "sockaddr.h"

/* RoCE headers around a payload: GRH 40, UDP 8, BTH 12, XRC 4, AtomicETH 28, ICRC 4. */
#define ROCE_OVERHEAD		96
#define IB_MTU_256		1
#define IB_MTU_4096		5

/* The largest IB MTU (256 << (n - 1)) that fits the device's MTU, or 0. */
u8 softcm_ib_mtu(unsigned int netdev_mtu)
{
	u8 mtu;

	if (netdev_mtu < ROCE_OVERHEAD + 256)
		return 0;
	for (mtu = IB_MTU_4096; mtu > IB_MTU_256; mtu--) {
		if (netdev_mtu - ROCE_OVERHEAD >= 256u << (mtu - 1))
			break;
	}
	return mtu;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_ib_mtu);

/* RoCE GIDs are IPv6 addresses, IPv4 ones v4-mapped (rdma_ip2gid()). */
VISIBLE_IF_KUNIT void softcm_ip_to_gid(const struct sockaddr_storage *ss, u8 gid[16])
{
	softcm_addr_to_in6(ss, (struct in6_addr *)gid);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_ip_to_gid);

/*
 * rdma_cm's RoCEv2 flow label: the IPv6 flow label the application set on
 * the destination, else a hash of the two ports.
 */
VISIBLE_IF_KUNIT u32 softcm_flow_label(const struct sockaddr_storage *src,
				       const struct sockaddr_storage *dst)
{
	u32 fl;

	if (dst->ss_family == AF_INET6) {
		fl = be32_to_cpu(((const struct sockaddr_in6 *)dst)->sin6_flowinfo &
				 IPV6_FLOWLABEL_MASK);
		if (fl)
			return fl;
	}
	return (softcm_addr_port(src) * 31 + softcm_addr_port(dst)) & 0xfffff;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_flow_label);

int softcm_id_resolve_route(struct softcm_id *id, u32 timeout_ms)
{
	struct softcm_path *p = &id->path;
	struct softcm_event_entry *e;
	u8 mtu;

	lockdep_assert_held(&id->mutex);

	if (!timeout_ms || id->state != SOFTCM_STATE_ADDR_RESOLVED)
		return -EINVAL;
	mtu = softcm_ib_mtu(id->dev.mtu);
	if (!mtu)
		return -EINVAL;
	e = softcm_event_alloc(SOFTCM_EVENT_ROUTE_RESOLVED, 0, GFP_KERNEL);
	if (!e)
		return -ENOMEM;

	softcm_id_cas_state(id, SOFTCM_STATE_ADDR_RESOLVED, SOFTCM_STATE_ROUTE_QUERY);
	memset(p, 0, sizeof(*p));
	softcm_ip_to_gid(&id->src, p->sgid);
	softcm_ip_to_gid(&id->dst, p->dgid);
	p->mtu = mtu;
	p->hop_limit = id->dev.hop_limit;
	p->traffic_class = id->tos;
	p->flow_label = softcm_flow_label(&id->src, &id->dst);
	p->packet_life_time = id->ack_timeout ? id->ack_timeout - 1 :
			      READ_ONCE(softcm_net(id->net)->packet_life_time);
	softcm_id_cas_state(id, SOFTCM_STATE_ROUTE_QUERY, SOFTCM_STATE_ROUTE_RESOLVED);
	softcm_event_queue(id, e);
	return 0;
}

/* A path exists from ROUTE_RESOLVED until the connection is torn down. */
static bool has_path(enum softcm_state state)
{
	return state == SOFTCM_STATE_ROUTE_RESOLVED || state == SOFTCM_STATE_CONNECT ||
	       state == SOFTCM_STATE_DISCONNECT;
}

int softcm_id_query_route(struct softcm_id *id, struct softcm_query_route *q)
{
	lockdep_assert_held(&id->mutex);

	if (!has_path(id->state))
		return -EINVAL;
	q->ifindex = id->dev.ifindex;
	memcpy(q->sgid, id->path.sgid, sizeof(q->sgid));
	memcpy(q->dgid, id->path.dgid, sizeof(q->dgid));
	memcpy(q->smac, id->dev.smac, sizeof(q->smac));
	memcpy(q->dmac, id->dev.dmac, sizeof(q->dmac));
	q->flow_label = id->path.flow_label;
	q->pkey = SOFTCM_PKEY_DEFAULT;
	q->mtu = id->path.mtu;
	q->hop_limit = id->path.hop_limit;
	q->traffic_class = id->path.traffic_class;
	q->sl = 0;
	q->packet_life_time = id->path.packet_life_time;
	q->gateway = id->dev.gateway;
	return 0;
}
