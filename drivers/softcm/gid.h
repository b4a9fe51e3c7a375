/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_GID_H
#define _SOFTCM_GID_H

#include <linux/in6.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <uapi/linux/softcm.h>

struct net_device;
struct softcm_net;

struct softcm_gid_entry {
	struct in6_addr gid;		/* IPv4 as v4-mapped */
	int ifindex;			/* 0: the slot is free */
};

/*
 * The namespace's GID table: one RoCEv2 entry per address, at the index
 * it got when its address appeared, until the address goes.
 */
struct softcm_gid_table {
	spinlock_t lock;		/* BH: IPv6 adds addresses in softirq */
	struct softcm_gid_entry e[SOFTCM_GID_TABLE_LEN];
};

void softcm_gid_init(struct softcm_net *sn);

/* From the address notifiers: @a appeared on, or left, @ifindex. */
void softcm_gid_add(struct softcm_net *sn, const struct in6_addr *a, int ifindex);
void softcm_gid_del(struct softcm_net *sn, const struct in6_addr *a, int ifindex);
/*
 * From the netdev notifier (RTNL), when @dev registers or comes up: its
 * entries made its addresses again.  Registering the notifier replays
 * both events for every device, which catches up with the addresses that
 * changed between the namespaces' initial scans and the address
 * notifiers' registration at module load.
 */
void softcm_gid_sync_dev(struct softcm_net *sn, struct net_device *dev);

/* The index of @gid in the namespace's GID table, or -ENOENT. */
int softcm_gid_find(struct softcm_net *sn, const u8 gid[16]);
/* Entry @index (< SOFTCM_GID_TABLE_LEN): its GID and device, false if free. */
bool softcm_gid_get(struct softcm_net *sn, u32 index, u8 gid[16], int *ifindex);
/* Whether some entry's device is up: the port's state. */
bool softcm_gid_usable(struct softcm_net *sn);

#endif /* _SOFTCM_GID_H */
