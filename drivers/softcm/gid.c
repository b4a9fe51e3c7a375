// SPDX-License-Identifier: GPL-2.0
/*
 * The namespace's GID table, as the verbs device shows it (QUERY_GID) and
 * as the CM indexes it (a QP's sgid_index).
 *
 * Like rdma_rxe's table, which ib_core's roce_gid_mgmt.c fills from its
 * netdev's addresses, it holds one RoCEv2 GID per IP address: IPv4 as
 * ::ffff:a.b.c.d, IPv6 as is, link-local included, each with the index of
 * its device.  Unlike rxe's, there is one table for the namespace, not one
 * per device: softcm's one port reaches every device of the namespace.
 * It is filled when the namespace's state is created, from the addresses
 * that exist, and kept current by the address notifiers (notify.c).
 *
 * An entry keeps its index while its address exists, because a QP's
 * sgid_index names it; a removed address frees its slot for the next one.
 * A full table drops a new address and counts it (gid_table_full).
 *
 * Locking: one spinlock, BH-safe because IPv6 may add an address from
 * softirq (a router advertisement); every operation is a scan of at most
 * SOFTCM_GID_TABLE_LEN entries under it, cheap enough for the CM and
 * QUERY_GID, and no writer allocates.
 */

#include <linux/errno.h>
#include <linux/export.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/nospec.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <kunit/visibility.h>

#include "gid.h"
#include "netns.h"
#include "stats.h"

/* The slot of (@a, @ifindex), or of @a on any device with @ifindex 0. */
static int lookup(struct softcm_gid_table *t, const struct in6_addr *a, int ifindex)
{
	int i;

	lockdep_assert_held(&t->lock);
	for (i = 0; i < SOFTCM_GID_TABLE_LEN; i++) {
		if (t->e[i].ifindex && ipv6_addr_equal(&t->e[i].gid, a) &&
		    (!ifindex || t->e[i].ifindex == ifindex))
			return i;
	}
	return -ENOENT;
}

void softcm_gid_add(struct softcm_net *sn, const struct in6_addr *a, int ifindex)
{
	struct softcm_gid_table *t = &sn->gids;
	int i;

	spin_lock_bh(&t->lock);
	if (lookup(t, a, ifindex) >= 0)
		goto out;	/* the initial scan and a notifier both saw it */
	for (i = 0; i < SOFTCM_GID_TABLE_LEN; i++) {
		if (!t->e[i].ifindex) {
			t->e[i].gid = *a;
			t->e[i].ifindex = ifindex;
			goto out;
		}
	}
	softcm_stat_inc(&sn->stats, SOFTCM_STAT_GID_TABLE_FULL);
out:
	spin_unlock_bh(&t->lock);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_gid_add);

void softcm_gid_del(struct softcm_net *sn, const struct in6_addr *a, int ifindex)
{
	struct softcm_gid_table *t = &sn->gids;
	int i;

	spin_lock_bh(&t->lock);
	i = lookup(t, a, ifindex);
	if (i >= 0)
		memset(&t->e[i], 0, sizeof(t->e[i]));
	spin_unlock_bh(&t->lock);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_gid_del);

/* The addresses @dev has now, IPv4 then IPv6. */
static void add_dev(struct softcm_net *sn, struct net_device *dev)
{
	struct inet6_ifaddr *ifa6;
	struct in_device *in_dev;
	struct inet6_dev *idev;
	struct in_ifaddr *ifa;
	struct in6_addr a;

	ASSERT_RTNL();
	in_dev = __in_dev_get_rtnl(dev);
	if (in_dev) {
		in_dev_for_each_ifa_rtnl(ifa, in_dev) {
			ipv6_addr_set_v4mapped(ifa->ifa_local, &a);
			softcm_gid_add(sn, &a, dev->ifindex);
		}
	}
	idev = __in6_dev_get(dev);
	if (idev) {
		read_lock_bh(&idev->lock);
		list_for_each_entry(ifa6, &idev->addr_list, if_list)
			softcm_gid_add(sn, &ifa6->addr, dev->ifindex);
		read_unlock_bh(&idev->lock);
	}
}

/* Whether @dev has @a now: under RTNL (IPv4) and @idev's lock (IPv6). */
static bool dev_has(struct net_device *dev, struct inet6_dev *idev,
		    const struct in6_addr *a)
{
	struct inet6_ifaddr *ifa6;
	struct in_device *in_dev;
	struct in_ifaddr *ifa;

	if (ipv6_addr_v4mapped(a)) {
		in_dev = __in_dev_get_rtnl(dev);
		if (!in_dev)
			return false;
		in_dev_for_each_ifa_rtnl(ifa, in_dev) {
			if (ifa->ifa_local == a->s6_addr32[3])
				return true;
		}
		return false;
	}
	if (!idev)
		return false;
	list_for_each_entry(ifa6, &idev->addr_list, if_list) {
		if (ipv6_addr_equal(&ifa6->addr, a))
			return true;
	}
	return false;
}

/*
 * Make @dev's entries its addresses: drop those whose address is gone,
 * add those missing.  Under RTNL, which every IPv4 change and every IPv6
 * removal hold; the IPv6 list is read under its lock, which an IPv6 add
 * (in softirq, without RTNL) takes to link the address before its
 * notifier adds the entry, so no entry is dropped for an address that is
 * being added.
 */
static void drop_gone(struct softcm_gid_table *t, struct net_device *dev,
		      struct inet6_dev *idev)
{
	int i;

	spin_lock_bh(&t->lock);
	for (i = 0; i < SOFTCM_GID_TABLE_LEN; i++) {
		if (t->e[i].ifindex == dev->ifindex &&
		    !dev_has(dev, idev, &t->e[i].gid))
			memset(&t->e[i], 0, sizeof(t->e[i]));
	}
	spin_unlock_bh(&t->lock);
}

void softcm_gid_sync_dev(struct softcm_net *sn, struct net_device *dev)
{
	struct inet6_dev *idev = __in6_dev_get(dev);

	ASSERT_RTNL();
	if (idev) {
		read_lock_bh(&idev->lock);
		drop_gone(&sn->gids, dev, idev);
		read_unlock_bh(&idev->lock);
	} else {
		drop_gone(&sn->gids, dev, NULL);
	}
	add_dev(sn, dev);
}

/*
 * Fill the table from the addresses the namespace has.  Under RTNL, which
 * every IPv4 change and every IPv6 removal hold, so that no address can
 * go between our reading it and its entry's creation; an IPv6 address
 * added meanwhile in softirq is added twice, which is harmless.
 */
void softcm_gid_init(struct softcm_net *sn)
{
	struct net_device *dev;

	spin_lock_init(&sn->gids.lock);
	rtnl_lock();
	for_each_netdev(sn->net, dev)
		add_dev(sn, dev);
	rtnl_unlock();
}

int softcm_gid_find(struct softcm_net *sn, const u8 gid[16])
{
	struct in6_addr a;	/* @gid may be unaligned: a wire field */
	int i;

	memcpy(&a, gid, sizeof(a));
	spin_lock_bh(&sn->gids.lock);
	i = lookup(&sn->gids, &a, 0);
	spin_unlock_bh(&sn->gids.lock);
	return i;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_gid_find);

bool softcm_gid_get(struct softcm_net *sn, u32 index, u8 gid[16], int *ifindex)
{
	struct softcm_gid_entry *e;

	e = &sn->gids.e[array_index_nospec(index, SOFTCM_GID_TABLE_LEN)];

	spin_lock_bh(&sn->gids.lock);
	memcpy(gid, &e->gid, sizeof(e->gid));
	*ifindex = e->ifindex;
	spin_unlock_bh(&sn->gids.lock);
	return *ifindex != 0;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_gid_get);

/*
 * Up with carrier, as rxe's port follows its netdev (a veth has carrier
 * while its peer is up).
 */
static bool dev_usable(struct net *net, int ifindex)
{
	struct net_device *dev = dev_get_by_index_rcu(net, ifindex);

	return dev && netif_running(dev) && netif_carrier_ok(dev);
}

bool softcm_gid_usable(struct softcm_net *sn)
{
	bool usable = false;
	int i;

	rcu_read_lock();
	spin_lock_bh(&sn->gids.lock);
	for (i = 0; i < SOFTCM_GID_TABLE_LEN && !usable; i++)
		usable = sn->gids.e[i].ifindex &&
			 dev_usable(sn->net, sn->gids.e[i].ifindex);
	spin_unlock_bh(&sn->gids.lock);
	rcu_read_unlock();
	return usable;
}
