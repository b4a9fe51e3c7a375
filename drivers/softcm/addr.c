// SPDX-License-Identifier: GPL-2.0
/*
 * Address resolution through the kernel's route and neighbour tables, as
 * the RDMA core's addr.c does it for RoCE, for any IP net device.
 *
 * A resolution looks the route up (which also selects the source address)
 * and then the next hop's neighbour.  A valid neighbour completes it; else
 * we kick ARP/ND and wait: each request is a delayed work armed at its
 * deadline, and a netevent (neighbour update) for its next hop reruns it
 * now.  Nothing polls.  Completion always runs from the work, so
 * ADDR_RESOLVED and ADDR_ERROR are always asynchronous.
 *
 * A resolved request stays with its id as the watch on its neighbour: a
 * new MAC for it reaches the id (UNREACHABLE, as rdma_cm's netevent
 * handler reports it) through the same work.  Requests are indexed by
 * (namespace, egress device, next hop), so that a neighbour update, which
 * any host on the link can cause (one ARP request from a fresh sender
 * address makes one), costs one bucket walk and wakes only the ids that
 * use that neighbour; the wake-up is the request's own work, queued at
 * most once however many updates come.
 *
 * A request belongs to its id (id->addr_req, under the id's mutex) and
 * holds a reference on it; only its own work frees it, after it has left
 * the index and id->addr_req (see resolve_work()).  Lock order: id->mutex,
 * then index_lock (a spinlock, also taken from the netevent notifier,
 * which can run in softirq context).
 */

#include <linux/etherdevice.h>
#include <linux/hashtable.h>
#include <linux/inetdevice.h>
#include <linux/jhash.h>
#include <linux/lockdep.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/addrconf.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/neighbour.h>
#include <net/route.h>

#include "addr.h"
#include "bind.h"
#include "core.h"
#include "event.h"
#include "id.h"
#include "netns.h"
#include "port.h"
#include "sockaddr.h"
#include "stats.h"
#include "trace.h"

struct softcm_addr_req {
	struct hlist_node node;		/* in the index while indexed */
	struct delayed_work work;
	struct softcm_id *id;		/* referenced */
	struct softcm_event_entry *event;	/* preallocated; NULL once resolved */
	unsigned long deadline;
	/* The index key, under index_lock: the next hop and its device. */
	struct net *net;
	int ifindex;
	struct in6_addr nexthop;	/* IPv4 as v4-mapped */
	/* Resolved: the MAC the id has, and a newer one to give it. */
	bool resolved;
	bool mac_changed;
	u8 mac[ETH_ALEN];
	u8 new_mac[ETH_ALEN];
};

/* Requests by next hop, of every namespace: the key includes the net. */
#define INDEX_BITS	10
static DEFINE_HASHTABLE(by_nexthop, INDEX_BITS);
static DEFINE_SPINLOCK(index_lock);
static u32 index_seed __read_mostly;

static u32 index_hash(const struct net *net, int ifindex, const struct in6_addr *nexthop)
{
	return jhash2((const u32 *)nexthop, 4,
		      jhash_2words((u32)(unsigned long)net, ifindex, index_seed));
}

static void index_add(struct softcm_addr_req *req, int ifindex,
		      const struct in6_addr *nexthop)
{
	spin_lock_bh(&index_lock);
	if (!hlist_unhashed(&req->node))
		hlist_del(&req->node);
	req->ifindex = ifindex;
	req->nexthop = *nexthop;
	hash_add(by_nexthop, &req->node, index_hash(req->net, ifindex, nexthop));
	spin_unlock_bh(&index_lock);
}

static void index_del(struct softcm_addr_req *req)
{
	spin_lock_bh(&index_lock);
	if (!hlist_unhashed(&req->node))
		hlist_del_init(&req->node);
	spin_unlock_bh(&index_lock);
}

/*
 * The neighbour's MAC, never more than its size: a neighbour's address
 * length is its device's, which may change (and ip6gre's static
 * neighbours need not have it at all), so check it under the lock that
 * neigh_ha_snapshot() takes.
 */
static int snapshot_mac(struct neighbour *n, u8 mac[ETH_ALEN])
{
	unsigned int seq;
	int ret;

	do {
		seq = read_seqbegin(&n->ha_lock);
		ret = n->dev->addr_len == ETH_ALEN ? 0 : -EPROTONOSUPPORT;
		if (!ret)
			ether_addr_copy(mac, n->ha);
	} while (read_seqretry(&n->ha_lock, seq));
	return ret;
}

/* The outcome of one route and neighbour lookup. */
struct resolution {
	struct sockaddr_storage src;	/* the selected source address */
	struct softcm_dev_addr dev;
};

/*
 * The route's device is the loopback device for a local destination; the
 * device to report is then the one that owns the source address, as in the
 * RDMA core.
 */
static struct net_device *owner_of_src(struct net *net, struct net_device *dev,
				       const struct sockaddr_storage *src)
{
	struct net_device *ndev;

	if (!(dev->flags & IFF_LOOPBACK))
		return dev;
	if (src->ss_family == AF_INET) {
		ndev = __ip_dev_find(net, ((const struct sockaddr_in *)src)->sin_addr.s_addr,
				     false);
		return ndev ?: dev;
	}
#if IS_ENABLED(CONFIG_IPV6)
	for_each_netdev_rcu(net, ndev) {
		if (ipv6_chk_addr(net, &((const struct sockaddr_in6 *)src)->sin6_addr, ndev, 1))
			return ndev;
	}
#endif
	return dev;
}

/*
 * Fill @res from @dst's device and neighbour; -ENODATA while unresolved.
 * RoCE addresses are Ethernet MACs: a device with another kind of
 * hardware address (IPoIB's 20 bytes, an NBMA ip6gre's 16, a tunnel's 4)
 * has nothing to put in a path, and its neighbour's address would not fit
 * ours: such devices are refused.
 */
static int lookup_neigh(struct net *net, struct dst_entry *dst, const void *daddr,
			struct resolution *res)
{
	struct net_device *dev = dst->dev;
	struct net_device *ndev;
	struct neighbour *n;
	int ret = 0;

	if (dev->addr_len != ETH_ALEN)
		return -EPROTONOSUPPORT;
	rcu_read_lock();
	ndev = owner_of_src(net, dev, &res->src);
	if (ndev->addr_len != ETH_ALEN) {
		rcu_read_unlock();
		return -EPROTONOSUPPORT;
	}
	res->dev.ifindex = ndev->ifindex;
	res->dev.mtu = READ_ONCE(ndev->mtu);
	ether_addr_copy(res->dev.smac, ndev->dev_addr);
	rcu_read_unlock();

	/* A local destination needs no ARP: the peer is us. */
	if (dev->flags & (IFF_LOOPBACK | IFF_NOARP)) {
		memcpy(res->dev.dmac, res->dev.smac, ETH_ALEN);
		return 0;
	}

	n = dst_neigh_lookup(dst, daddr);
	if (!n)
		return -ENODATA;
	if (READ_ONCE(n->nud_state) & NUD_VALID) {
		ret = snapshot_mac(n, res->dev.dmac);
	} else {
		neigh_event_send(n, NULL);
		ret = -ENODATA;
	}
	neigh_release(n);
	return ret;
}

static int resolve4(struct softcm_id *id, struct resolution *res)
{
	const struct sockaddr_in *dst = (const struct sockaddr_in *)&id->dst;
	struct sockaddr_in *src = (struct sockaddr_in *)&res->src;
	struct flowi4 fl4 = {
		.daddr = dst->sin_addr.s_addr,
		.saddr = src->sin_addr.s_addr,
		.flowi4_oif = id->bound_ifindex,
	};
	struct rtable *rt;
	int ret;

	rt = ip_route_output_key(id->net, &fl4);
	if (IS_ERR(rt))
		return PTR_ERR(rt);
	src->sin_addr.s_addr = fl4.saddr;
	res->dev.gateway = rt->rt_uses_gateway;
	ipv6_addr_set_v4mapped(rt_nexthop(rt, fl4.daddr), &res->dev.nexthop);
	res->dev.hop_limit = ip4_dst_hoplimit(&rt->dst);
	ret = lookup_neigh(id->net, &rt->dst, &fl4.daddr, res);
	ip_rt_put(rt);
	return ret;
}

static int resolve6(struct softcm_id *id, struct resolution *res)
{
#if IS_ENABLED(CONFIG_IPV6)
	const struct sockaddr_in6 *dst = (const struct sockaddr_in6 *)&id->dst;
	struct sockaddr_in6 *src = (struct sockaddr_in6 *)&res->src;
	struct flowi6 fl6 = {
		.daddr = dst->sin6_addr,
		.saddr = src->sin6_addr,
		.flowi6_oif = id->bound_ifindex ?: dst->sin6_scope_id,
	};
	struct dst_entry *d;
	int ret;

	d = ip6_dst_lookup_flow(id->net, NULL, &fl6, NULL);
	if (IS_ERR(d))
		return PTR_ERR(d);
	src->sin6_addr = fl6.saddr;
	res->dev.gateway = !!(((struct rt6_info *)d)->rt6i_flags & RTF_GATEWAY);
	res->dev.nexthop = *rt6_nexthop((struct rt6_info *)d, &fl6.daddr);
	res->dev.hop_limit = ip6_dst_hoplimit(d);
	ret = lookup_neigh(id->net, d, &fl6.daddr, res);
	dst_release(d);
	return ret;
#else
	return -EAFNOSUPPORT;
#endif
}

static int resolve(struct softcm_id *id, struct resolution *res)
{
	memset(res, 0, sizeof(*res));
	res->src = id->src;
	return id->dst.ss_family == AF_INET ? resolve4(id, res) : resolve6(id, res);
}

static void free_req(struct softcm_addr_req *req)
{
	softcm_id_put(req->id);
	kfree(req->event);
	kfree(req);
}

static void finish(struct softcm_id *id, struct softcm_addr_req *req, int status,
		   struct resolution *res)
{
	struct softcm_event_entry *e = req->event;

	lockdep_assert_held(&id->mutex);

	req->event = NULL;
	trace_softcm_resolve(id->net->ns.inum, id->handle,
			     status ? &id->src : &res->src, &id->dst,
			     status ? 0 : res->dev.ifindex, status);
	if (!status) {
		softcm_port_set_src(id, &res->src);
		id->dev = res->dev;
		softcm_id_cas_state(id, SOFTCM_STATE_ADDR_QUERY, SOFTCM_STATE_ADDR_RESOLVED);
		e->ev.event = SOFTCM_EVENT_ADDR_RESOLVED;
	} else {
		memset(&id->dst, 0, sizeof(id->dst));
		softcm_id_cas_state(id, SOFTCM_STATE_ADDR_QUERY, SOFTCM_STATE_ADDR_BOUND);
		e->ev.event = SOFTCM_EVENT_ADDR_ERROR;
		e->ev.status = status;
	}
	softcm_event_queue(id, e);
}

/* From now on the request watches the neighbour the id resolved. */
static void watch(struct softcm_addr_req *req, const struct softcm_dev_addr *dev)
{
	spin_lock_bh(&index_lock);
	hlist_del(&req->node);
	req->ifindex = dev->ifindex;
	req->nexthop = dev->nexthop;
	req->resolved = true;
	req->mac_changed = false;
	ether_addr_copy(req->mac, dev->dmac);
	hash_add(by_nexthop, &req->node, index_hash(req->net, req->ifindex, &req->nexthop));
	spin_unlock_bh(&index_lock);
}

/*
 * The resolved neighbour has a new MAC.  Once the id has a path (route
 * resolved or connected) that is rdma_cm's UNREACHABLE; before, the id
 * just learns it, for the path it will build.
 */
static void neigh_changed(struct softcm_id *id, struct softcm_addr_req *req)
{
	struct softcm_event_entry *e;
	bool changed;
	u8 mac[ETH_ALEN];

	lockdep_assert_held(&id->mutex);

	spin_lock_bh(&index_lock);
	changed = req->mac_changed && !ether_addr_equal(req->new_mac, req->mac);
	req->mac_changed = false;
	ether_addr_copy(mac, req->new_mac);
	if (changed)
		ether_addr_copy(req->mac, mac);
	spin_unlock_bh(&index_lock);
	if (!changed)
		return;

	switch (id->state) {
	case SOFTCM_STATE_ADDR_RESOLVED:
	case SOFTCM_STATE_ROUTE_QUERY:
		ether_addr_copy(id->dev.dmac, mac);
		return;
	case SOFTCM_STATE_ROUTE_RESOLVED:
	case SOFTCM_STATE_CONNECT:
	case SOFTCM_STATE_DISCONNECT:
		ether_addr_copy(id->dev.dmac, mac);
		e = softcm_event_alloc(SOFTCM_EVENT_UNREACHABLE, -ETIMEDOUT, GFP_KERNEL);
		if (e)
			softcm_event_queue(id, e);
		else
			net_warn_ratelimited("softcm: UNREACHABLE lost: out of memory\n");
		return;
	default:
		return;
	}
}

static void resolve_work(struct work_struct *work)
{
	struct softcm_addr_req *req =
		container_of(to_delayed_work(work), struct softcm_addr_req, work);
	struct softcm_id *id = req->id;
	struct resolution res;
	int ret;

	mutex_lock(&id->mutex);
	if (id->addr_req != req)
		goto out_unlock;	/* cancelled: the request is ours to free */
	if (req->resolved) {
		neigh_changed(id, req);
		mutex_unlock(&id->mutex);
		return;
	}

	ret = resolve(id, &res);
	if (ret == -ENODATA && time_before(jiffies, req->deadline)) {
		/*
		 * Not yet: sleep until the deadline or an update of the next
		 * hop, which the route may have changed since we last looked.
		 */
		if (req->ifindex != res.dev.ifindex ||
		    !ipv6_addr_equal(&req->nexthop, &res.dev.nexthop))
			index_add(req, res.dev.ifindex, &res.dev.nexthop);
		mod_delayed_work(softcm_workqueue(), &req->work, req->deadline - jiffies);
		mutex_unlock(&id->mutex);
		return;
	}
	if (ret == -ENODATA)
		ret = -ETIMEDOUT;
	if (!ret) {
		finish(id, req, 0, &res);
		watch(req, &res.dev);
		mutex_unlock(&id->mutex);
		return;
	}
	index_del(req);
	id->addr_req = NULL;
	finish(id, req, ret, &res);
out_unlock:
	mutex_unlock(&id->mutex);
	/*
	 * Only this work frees a request, once it is out of the index and
	 * no longer current: nobody can queue it again, and a work never
	 * runs concurrently with itself, so at most one more instance can be
	 * pending (a netevent that came before the removal): drop it.
	 */
	cancel_delayed_work(&req->work);
	free_req(req);
}

/* A destination: a wildcard address means this host, as rdma_resolve_addr() takes it. */
static int parse(const void *addr, u32 len, struct sockaddr_storage *ss)
{
	int ret = softcm_addr_parse(addr, len, ss);

	if (ret)
		return ret;
	if (ss->ss_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (ipv4_is_zeronet(sin->sin_addr.s_addr))
			sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	} else if (ipv6_addr_any(&((struct sockaddr_in6 *)ss)->sin6_addr)) {
		((struct sockaddr_in6 *)ss)->sin6_addr = in6addr_loopback;
	}
	return 0;
}

/*
 * A link-local destination means nothing without its link, which comes
 * from its scope id or the device the id is bound to; the two must agree.
 */
static int check_scope(struct softcm_id *id, const struct sockaddr_storage *dst)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)dst;

	if (dst->ss_family != AF_INET6 ||
	    !(ipv6_addr_type(&sin6->sin6_addr) & IPV6_ADDR_LINKLOCAL))
		return 0;
	if (!sin6->sin6_scope_id && !id->bound_ifindex)
		return -EINVAL;
	if (sin6->sin6_scope_id && id->bound_ifindex &&
	    sin6->sin6_scope_id != id->bound_ifindex)
		return -EINVAL;
	return 0;
}

/* rdma_resolve_addr()'s implicit bind: the wildcard of dst's family. */
static int bind_for(struct softcm_id *id, const void *src, u32 src_len,
		    const struct sockaddr_storage *dst)
{
	struct sockaddr_storage any = { .ss_family = dst->ss_family };
	int ret;

	if (src_len)
		return softcm_id_bind(id, src, src_len);
	ret = softcm_id_bind(id, &any, softcm_addr_size(&any));
	if (ret)
		return ret;
	/* A link-local destination names the link to use. */
	if (dst->ss_family == AF_INET6)
		id->bound_ifindex = ((const struct sockaddr_in6 *)dst)->sin6_scope_id;
	return 0;
}

int softcm_id_resolve_addr(struct softcm_id *id, const void *src, u32 src_len,
			   const void *dst, u32 dst_len, u32 timeout_ms)
{
	struct softcm_addr_req *req;
	struct sockaddr_storage d;
	struct resolution res;
	int ret;

	lockdep_assert_held(&id->mutex);

	ret = parse(dst, dst_len, &d);
	if (ret)
		return ret;
	if (src_len && (src_len < sizeof(sa_family_t) ||
			((const struct sockaddr *)src)->sa_family == AF_UNSPEC))
		src_len = 0;
	if (src_len && ((const struct sockaddr *)src)->sa_family != d.ss_family)
		return -EINVAL;
	ret = check_scope(id, &d);
	if (ret)
		return ret;

	if (id->state == SOFTCM_STATE_IDLE) {
		ret = bind_for(id, src, src_len, &d);
		if (ret)
			return ret;
	}
	if (id->state != SOFTCM_STATE_ADDR_BOUND || id->src.ss_family != d.ss_family)
		return -EINVAL;

	req = kzalloc(sizeof(*req), GFP_KERNEL_ACCOUNT);
	if (!req)
		return -ENOMEM;
	req->event = softcm_event_alloc(SOFTCM_EVENT_ADDR_RESOLVED, 0, GFP_KERNEL);
	if (!req->event) {
		ret = -ENOMEM;
		goto err_free_req;
	}

	id->dst = d;
	softcm_id_cas_state(id, SOFTCM_STATE_ADDR_BOUND, SOFTCM_STATE_ADDR_QUERY);
	ret = resolve(id, &res);
	if (ret && ret != -ENODATA)
		goto err_restore;

	INIT_HLIST_NODE(&req->node);
	INIT_DELAYED_WORK(&req->work, resolve_work);
	softcm_id_get(id);
	req->id = id;
	req->net = id->net;
	req->deadline = jiffies + msecs_to_jiffies(timeout_ms);
	id->addr_req = req;
	index_add(req, res.dev.ifindex, &res.dev.nexthop);
	/*
	 * A neighbour that answered before we were in the index woke
	 * nobody: look once more now that its netevent would find us.
	 */
	if (ret == -ENODATA && !resolve(id, &res))
		ret = 0;
	/* Resolved now or not, the answer comes from the work, as an event. */
	queue_delayed_work(softcm_workqueue(), &req->work, ret ? req->deadline - jiffies : 0);
	return 0;

err_restore:
	memset(&id->dst, 0, sizeof(id->dst));
	softcm_id_cas_state(id, SOFTCM_STATE_ADDR_QUERY, SOFTCM_STATE_ADDR_BOUND);
	kfree(req->event);
err_free_req:
	kfree(req);
	return ret;
}

/*
 * Forget a resolution in flight, or the watch on a resolved neighbour
 * (destroy, close, device removal).  The request's work frees it: we make
 * it run now, and it will find itself no longer current once we drop the
 * mutex.
 */
void softcm_addr_cancel(struct softcm_id *id)
{
	struct softcm_addr_req *req = id->addr_req;

	lockdep_assert_held(&id->mutex);

	if (!req)
		return;
	id->addr_req = NULL;
	index_del(req);
	mod_delayed_work(softcm_workqueue(), &req->work, 0);
}

/* The neighbour's key in the index: its address, IPv4 as v4-mapped. */
static bool neigh_key(const struct neighbour *n, struct in6_addr *a)
{
	if (n->tbl->family == AF_INET) {
		ipv6_addr_set_v4mapped(*(const __be32 *)n->primary_key, a);
		return true;
	}
	if (n->tbl->family == AF_INET6) {
		*a = *(const struct in6_addr *)n->primary_key;
		return true;
	}
	return false;
}

/*
 * A neighbour of @sn's namespace was updated and is valid (notify.c's
 * netevent notifier, any context up to softirq): run the requests waiting
 * for it, and tell the ids resolved through it if its MAC changed.  One
 * bucket of the index is all we look at; each request's work is queued
 * at most once however many updates come before it runs.
 */
void softcm_addr_neigh_valid(struct softcm_net *sn, struct neighbour *n)
{
	struct softcm_addr_req *req;
	struct net *net = sn->net;
	struct in6_addr key;
	u8 mac[ETH_ALEN];
	int ifindex;
	u32 hash;

	if (!neigh_key(n, &key) || snapshot_mac(n, mac))
		return;
	softcm_stat_inc(&sn->stats, SOFTCM_STAT_NEIGH_UPDATES);

	ifindex = n->dev->ifindex;
	hash = index_hash(net, ifindex, &key);
	spin_lock_bh(&index_lock);
	hash_for_each_possible(by_nexthop, req, node, hash) {
		if (req->net != net || req->ifindex != ifindex ||
		    !ipv6_addr_equal(&req->nexthop, &key))
			continue;
		if (req->resolved) {
			if (!req->mac_changed && ether_addr_equal(req->mac, mac))
				continue;
			ether_addr_copy(req->new_mac, mac);
			req->mac_changed = true;
		}
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_NEIGH_WAKEUPS);
		mod_delayed_work(softcm_workqueue(), &req->work, 0);
	}
	spin_unlock_bh(&index_lock);
}

int softcm_addr_init(void)
{
	index_seed = get_random_u32();
	return 0;
}

/* Every id is gone by now, and every request with it. */
void softcm_addr_uninit(void)
{
	WARN_ON(!hash_empty(by_nexthop));
}
