// SPDX-License-Identifier: GPL-2.0
/*
 * Address resolution through the kernel's route and neighbour tables, as
 * the RDMA core's addr.c does it for RoCE, for any IP net device.
 *
 * A resolution looks the route up (which also selects the source address)
 * and then the next hop's neighbour.  A valid neighbour completes it; else
 * we kick ARP/ND and wait: each request is a delayed work armed at its
 * deadline, and a netevent (neighbour update) rearms the requests on that
 * device to run now.  Nothing polls.  Completion always runs from the work,
 * so ADDR_RESOLVED and ADDR_ERROR are always asynchronous.
 *
 * A request belongs to its id (id->addr_req, under the id's mutex) and
 * holds a reference on it; only its own work frees it, after it has left
 * the pending list and id->addr_req (see resolve_work()).  Lock order:
 * id->mutex, then the namespace's pending_lock (a spinlock, also taken
 * from the netevent notifier in softirq context).
 */

#include <linux/inetdevice.h>
#include <linux/lockdep.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/addrconf.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/neighbour.h>
#include <net/netevent.h>
#include <net/route.h>

#include "addr.h"
#include "bind.h"
#include "event.h"
#include "id.h"
#include "netns.h"
#include "notify.h"
#include "port.h"
#include "sockaddr.h"
#include "state.h"
#include "trace.h"

struct softcm_addr_req {
	struct list_head node;		/* in the namespace's pending list */
	struct delayed_work work;
	struct softcm_id *id;		/* referenced */
	struct softcm_event_entry *event;	/* preallocated */
	unsigned long deadline;
	int ifindex;			/* egress device, for netevents */
};

static struct workqueue_struct *softcm_wq;

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

/* Fill @res from @dst's device and neighbour; -ENODATA while unresolved. */
static int lookup_neigh(struct net *net, struct dst_entry *dst, const void *daddr,
			struct resolution *res)
{
	struct net_device *dev = dst->dev;
	struct net_device *ndev;
	struct neighbour *n;
	int ret = 0;

	rcu_read_lock();
	ndev = owner_of_src(net, dev, &res->src);
	res->dev.ifindex = ndev->ifindex;
	res->dev.mtu = READ_ONCE(ndev->mtu);
	memcpy(res->dev.smac, ndev->dev_addr, min_t(size_t, ETH_ALEN, ndev->addr_len));
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
		neigh_ha_snapshot(res->dev.dmac, n, dev);
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

static struct softcm_net *net_of(struct softcm_addr_req *req)
{
	return softcm_net(req->id->net);
}

static void unlink_req(struct softcm_addr_req *req)
{
	struct softcm_net *sn = net_of(req);

	spin_lock_bh(&sn->pending_lock);
	list_del_init(&req->node);
	spin_unlock_bh(&sn->pending_lock);
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
		softcm_id_set_state(id, SOFTCM_STATE_ADDR_QUERY, SOFTCM_STATE_ADDR_RESOLVED);
		e->ev.event = SOFTCM_EVENT_ADDR_RESOLVED;
	} else {
		memset(&id->dst, 0, sizeof(id->dst));
		softcm_id_set_state(id, SOFTCM_STATE_ADDR_QUERY, SOFTCM_STATE_ADDR_BOUND);
		e->ev.event = SOFTCM_EVENT_ADDR_ERROR;
		e->ev.status = status;
	}
	softcm_event_queue(id, e);
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

	ret = resolve(id, &res);
	if (ret == -ENODATA && time_before(jiffies, req->deadline)) {
		/* Not yet: sleep until the deadline or a neighbour update. */
		mod_delayed_work(softcm_wq, &req->work, req->deadline - jiffies);
		mutex_unlock(&id->mutex);
		return;
	}
	if (ret == -ENODATA)
		ret = -ETIMEDOUT;
	unlink_req(req);
	id->addr_req = NULL;
	finish(id, req, ret, &res);
out_unlock:
	mutex_unlock(&id->mutex);
	/*
	 * Only this work frees a request, once it is off the pending list
	 * and no longer current: nobody can queue it again, and a work never
	 * runs concurrently with itself, so at most one more instance can be
	 * pending (a netevent that came before the unlink): drop it.
	 */
	cancel_delayed_work(&req->work);
	free_req(req);
}

/* Parse a user address of the given family into a clean sockaddr. */
static int parse(const void *addr, u32 len, struct sockaddr_storage *ss)
{
	const struct sockaddr *sa = addr;

	memset(ss, 0, sizeof(*ss));
	if (len < sizeof(sa->sa_family))
		return -EINVAL;
	switch (sa->sa_family) {
	case AF_INET: {
		const struct sockaddr_in *in = addr;
		struct sockaddr_in *out = (struct sockaddr_in *)ss;

		if (len < sizeof(*in))
			return -EINVAL;
		out->sin_family = AF_INET;
		out->sin_port = in->sin_port;
		out->sin_addr = in->sin_addr;
		if (ipv4_is_zeronet(in->sin_addr.s_addr))
			out->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return 0;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = addr;
		struct sockaddr_in6 *out = (struct sockaddr_in6 *)ss;

		if (len < sizeof(*in6))
			return -EINVAL;
		out->sin6_family = AF_INET6;
		out->sin6_port = in6->sin6_port;
		out->sin6_addr = in6->sin6_addr;
		if (ipv6_addr_any(&in6->sin6_addr))
			out->sin6_addr = in6addr_loopback;
		if (ipv6_addr_type(&in6->sin6_addr) & IPV6_ADDR_LINKLOCAL)
			out->sin6_scope_id = in6->sin6_scope_id;
		return 0;
	}
	default:
		return -EAFNOSUPPORT;
	}
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
	struct softcm_net *sn = softcm_net(id->net);
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
	softcm_id_set_state(id, SOFTCM_STATE_ADDR_BOUND, SOFTCM_STATE_ADDR_QUERY);
	ret = resolve(id, &res);
	if (ret && ret != -ENODATA)
		goto err_restore;

	INIT_LIST_HEAD(&req->node);
	INIT_DELAYED_WORK(&req->work, resolve_work);
	softcm_id_get(id);
	req->id = id;
	req->ifindex = res.dev.ifindex;
	req->deadline = jiffies + msecs_to_jiffies(timeout_ms);
	id->addr_req = req;
	spin_lock_bh(&sn->pending_lock);
	list_add_tail(&req->node, &sn->pending);
	spin_unlock_bh(&sn->pending_lock);
	/*
	 * A neighbour that answered before we were on the pending list woke
	 * nobody: look once more now that its netevent would find us.
	 */
	if (ret == -ENODATA && !resolve(id, &res))
		ret = 0;
	/* Resolved now or not, the answer comes from the work, as an event. */
	queue_delayed_work(softcm_wq, &req->work, ret ? req->deadline - jiffies : 0);
	return 0;

err_restore:
	memset(&id->dst, 0, sizeof(id->dst));
	softcm_id_set_state(id, SOFTCM_STATE_ADDR_QUERY, SOFTCM_STATE_ADDR_BOUND);
	kfree(req->event);
err_free_req:
	kfree(req);
	return ret;
}

/*
 * Forget a resolution in flight (destroy, close, device removal).  The
 * request's work frees it: we make it run now, and it will find itself no
 * longer current once we drop the mutex.
 */
void softcm_addr_cancel(struct softcm_id *id)
{
	struct softcm_addr_req *req = id->addr_req;

	lockdep_assert_held(&id->mutex);

	if (!req)
		return;
	id->addr_req = NULL;
	unlink_req(req);
	mod_delayed_work(softcm_wq, &req->work, 0);
}

/* A neighbour became valid: rerun the requests waiting on its device. */
static int netevent(struct notifier_block *nb, unsigned long event, void *ctx)
{
	struct neighbour *n = ctx;
	struct softcm_addr_req *req;
	struct softcm_net *sn;

	if (event != NETEVENT_NEIGH_UPDATE || !(READ_ONCE(n->nud_state) & NUD_VALID))
		return NOTIFY_DONE;
	sn = softcm_net(dev_net(n->dev));
	if (!READ_ONCE(sn->ready))
		return NOTIFY_DONE;
	softcm_notify_neigh(n);

	spin_lock_bh(&sn->pending_lock);
	list_for_each_entry(req, &sn->pending, node) {
		if (req->ifindex == n->dev->ifindex)
			mod_delayed_work(softcm_wq, &req->work, 0);
	}
	spin_unlock_bh(&sn->pending_lock);
	return NOTIFY_DONE;
}

static struct notifier_block netevent_nb = {
	.notifier_call = netevent,
};

int softcm_addr_init(void)
{
	softcm_wq = alloc_workqueue("softcm", WQ_MEM_RECLAIM, 0);
	return softcm_wq ? 0 : -ENOMEM;
}

/* Every id is gone by now; stale works may still run: wait for them. */
void softcm_addr_uninit(void)
{
	destroy_workqueue(softcm_wq);
}

/*
 * Neighbour updates are looked at in the namespace's state: only once
 * every namespace has it (after the pernet registration) may they come.
 */
int softcm_addr_start(void)
{
	return register_netevent_notifier(&netevent_nb);
}

void softcm_addr_stop(void)
{
	unregister_netevent_notifier(&netevent_nb);
}

struct workqueue_struct *softcm_workqueue(void)
{
	return softcm_wq;
}
