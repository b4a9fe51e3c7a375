// SPDX-License-Identifier: GPL-2.0
/*
 * What ids learn from the network stack after the fact:
 *
 *   device unregistered   ids bound to it or resolved over it go to
 *                         DEVICE_REMOVAL, with that event;
 *   device down           ids resolved over it get ADDR_CHANGE;
 *   address removed       ids whose source address it was get ADDR_CHANGE;
 *   address added/removed the GID table (gid.c) follows, at once;
 *   neighbour valid       the resolutions waiting for it run, and the ids
 *                         resolved through it learn its new MAC.
 *
 * The device and address notifiers run with RTNL held, in which we cannot
 * take an id's mutex, so each posts a notice, handled by a work that
 * visits a snapshot of the namespace's ids.  These events are made by the
 * namespace's administrator, not by the network.  A neighbour update is
 * made by the network (one ARP request from a fresh sender address makes
 * one) and may come in softirq: it goes to addr.c's index of next hops,
 * which finds the few requests that use that neighbour without a walk
 * over the ids or an allocation.
 */

#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/addrconf.h>
#include <net/neighbour.h>
#include <net/netevent.h>

#include "addr.h"
#include "core.h"
#include "event.h"
#include "gid.h"
#include "id.h"
#include "netns.h"
#include "notify.h"
#include "sockaddr.h"

enum notice_type {
	NOTICE_DEV_DOWN,
	NOTICE_DEV_GONE,
	NOTICE_ADDR_GONE,
};

struct notice {
	struct work_struct work;
	struct net *net;		/* referenced */
	enum notice_type type;
	int ifindex;
	struct in6_addr addr;		/* IPv4 as v4-mapped */
};

/* States in which an id has an egress device (ADDR_RESOLVED on). */
static bool has_dev(enum softcm_state state)
{
	switch (state) {
	case SOFTCM_STATE_ADDR_RESOLVED:
	case SOFTCM_STATE_ROUTE_QUERY:
	case SOFTCM_STATE_ROUTE_RESOLVED:
	case SOFTCM_STATE_CONNECT:
	case SOFTCM_STATE_DISCONNECT:
		return true;
	default:
		return false;
	}
}

static bool src_is(const struct softcm_id *id, const struct in6_addr *addr)
{
	struct in6_addr a;

	if (id->src.ss_family != AF_INET && id->src.ss_family != AF_INET6)
		return false;
	softcm_addr_to_in6(&id->src, &a);
	return ipv6_addr_equal(&a, addr);
}

static void raise_event(struct softcm_id *id, enum softcm_event_type type, int status)
{
	struct softcm_event_entry *e = softcm_event_alloc(type, status, GFP_KERNEL);

	if (e)
		softcm_event_queue(id, e);
	else
		net_warn_ratelimited("softcm: event %u lost: out of memory\n", type);
}

static void apply(struct softcm_id *id, const struct notice *nt)
{
	bool on_dev = has_dev(id->state) && id->dev.ifindex == nt->ifindex;

	lockdep_assert_held(&id->mutex);

	switch (nt->type) {
	case NOTICE_DEV_GONE:
		if (!on_dev && id->bound_ifindex != nt->ifindex)
			return;
		if (id->state == SOFTCM_STATE_DEVICE_REMOVAL)
			return;
		softcm_addr_cancel(id);
		softcm_id_force_state(id, SOFTCM_STATE_DEVICE_REMOVAL);
		raise_event(id, SOFTCM_EVENT_DEVICE_REMOVAL, 0);
		return;
	case NOTICE_DEV_DOWN:
		if (on_dev)
			raise_event(id, SOFTCM_EVENT_ADDR_CHANGE, 0);
		return;
	case NOTICE_ADDR_GONE:
		if (id->state != SOFTCM_STATE_IDLE &&
		    id->state != SOFTCM_STATE_DEVICE_REMOVAL && src_is(id, &nt->addr))
			raise_event(id, SOFTCM_EVENT_ADDR_CHANGE, 0);
		return;
	}
}

static void notice_work(struct work_struct *work)
{
	struct notice *nt = container_of(work, struct notice, work);
	struct softcm_id **ids;
	unsigned int i, n;

	ids = softcm_id_snapshot(nt->net, &n);
	for (i = 0; ids && i < n; i++) {
		mutex_lock(&ids[i]->mutex);
		if (ids[i]->state != SOFTCM_STATE_DESTROYING)
			apply(ids[i], nt);
		mutex_unlock(&ids[i]->mutex);
	}
	if (ids)
		softcm_id_put_snapshot(ids, n);
	put_net(nt->net);
	kfree(nt);
}

static void post(struct net *net, enum notice_type type, int ifindex,
		 const struct in6_addr *addr)
{
	struct notice *nt;

	if (!READ_ONCE(softcm_net(net)->ready))
		return;
	nt = kzalloc(sizeof(*nt), GFP_ATOMIC);
	if (!nt)
		return;
	nt->net = maybe_get_net(net);
	if (!nt->net) {
		kfree(nt);
		return;
	}
	INIT_WORK(&nt->work, notice_work);
	nt->type = type;
	nt->ifindex = ifindex;
	if (addr)
		nt->addr = *addr;
	queue_work(softcm_workqueue(), &nt->work);
}

static int netdev_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);

	if ((event == NETDEV_REGISTER || event == NETDEV_UP) &&
	    READ_ONCE(softcm_net(dev_net(dev))->ready))
		softcm_gid_sync_dev(softcm_net(dev_net(dev)), dev);
	if (event == NETDEV_DOWN)
		post(dev_net(dev), NOTICE_DEV_DOWN, dev->ifindex, NULL);
	else if (event == NETDEV_UNREGISTER)
		post(dev_net(dev), NOTICE_DEV_GONE, dev->ifindex, NULL);
	return NOTIFY_DONE;
}

/* The GID table follows every address, in the notifier's own context. */
static void gid_update(struct net_device *dev, unsigned long event,
		       const struct in6_addr *a)
{
	struct softcm_net *sn = softcm_net(dev_net(dev));

	if (!READ_ONCE(sn->ready))
		return;
	if (event == NETDEV_UP)
		softcm_gid_add(sn, a, dev->ifindex);
	else if (event == NETDEV_DOWN)
		softcm_gid_del(sn, a, dev->ifindex);
}

static int inetaddr_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct in_ifaddr *ifa = ptr;
	struct in6_addr a;

	ipv6_addr_set_v4mapped(ifa->ifa_local, &a);
	gid_update(ifa->ifa_dev->dev, event, &a);
	if (event != NETDEV_DOWN)
		return NOTIFY_DONE;
	post(dev_net(ifa->ifa_dev->dev), NOTICE_ADDR_GONE, ifa->ifa_dev->dev->ifindex,
	     &a);
	return NOTIFY_DONE;
}

static int inet6addr_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct inet6_ifaddr *ifa = ptr;

	gid_update(ifa->idev->dev, event, &ifa->addr);
	if (event != NETDEV_DOWN)
		return NOTIFY_DONE;
	post(dev_net(ifa->idev->dev), NOTICE_ADDR_GONE, ifa->idev->dev->ifindex,
	     &ifa->addr);
	return NOTIFY_DONE;
}

/* Neighbour updates are looked at in the namespace's state, once it is ready. */
static int netevent(struct notifier_block *nb, unsigned long event, void *ctx)
{
	struct neighbour *n = ctx;
	struct softcm_net *sn;

	if (event != NETEVENT_NEIGH_UPDATE || !(READ_ONCE(n->nud_state) & NUD_VALID))
		return NOTIFY_DONE;
	sn = softcm_net(dev_net(n->dev));
	if (READ_ONCE(sn->ready))
		softcm_addr_neigh_valid(sn, n);
	return NOTIFY_DONE;
}

static struct notifier_block netdev_nb = { .notifier_call = netdev_event };
static struct notifier_block inetaddr_nb = { .notifier_call = inetaddr_event };
static struct notifier_block inet6addr_nb = { .notifier_call = inet6addr_event };
static struct notifier_block netevent_nb = { .notifier_call = netevent };

int softcm_notify_init(void)
{
	int ret;

	ret = register_inetaddr_notifier(&inetaddr_nb);
	if (ret)
		return ret;
	ret = register_inet6addr_notifier(&inet6addr_nb);
	if (ret)
		goto err_unregister_inetaddr;
	ret = register_netdevice_notifier(&netdev_nb);
	if (ret)
		goto err_unregister_inet6addr;
	/* Neighbour updates wake requests and ids: last of the notifiers. */
	ret = register_netevent_notifier(&netevent_nb);
	if (ret)
		goto err_unregister_netdev;
	return 0;

err_unregister_netdev:
	unregister_netdevice_notifier(&netdev_nb);
err_unregister_inet6addr:
	unregister_inet6addr_notifier(&inet6addr_nb);
err_unregister_inetaddr:
	unregister_inetaddr_notifier(&inetaddr_nb);
	return ret;
}

/*
 * No notice may outlive us: the namespace state they use goes next.  The
 * netevent notifier goes first, so that from then on the network cannot
 * queue work on ids; the flush then also runs every other work queued so
 * far, such as the requests cancelled when files closed.
 */
void softcm_notify_uninit(void)
{
	unregister_netevent_notifier(&netevent_nb);
	unregister_netdevice_notifier(&netdev_nb);
	unregister_inet6addr_notifier(&inet6addr_nb);
	unregister_inetaddr_notifier(&inetaddr_nb);
	flush_workqueue(softcm_workqueue());
}
