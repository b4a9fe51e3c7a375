/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_ID_H
#define _SOFTCM_ID_H

#include <linux/if_ether.h>
#include <linux/in6.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/socket.h>
#include <linux/types.h>
#include <uapi/linux/softcm.h>

struct net;
struct softcm_file;
struct softcm_bind_list;
struct softcm_addr_req;

/* What address resolution learnt: the egress device and the next hop. */
struct softcm_dev_addr {
	int ifindex;
	unsigned int mtu;
	u8 smac[ETH_ALEN];
	u8 dmac[ETH_ALEN];		/* the neighbour's: the gateway's if any */
	u8 hop_limit;
	bool gateway;
	struct in6_addr nexthop;	/* IPv4 as v4-mapped */
};

/* The path rdma_cm builds locally for RoCE (route.c). */
struct softcm_path {
	u8 sgid[16];
	u8 dgid[16];
	u32 flow_label;
	u8 mtu;				/* IB MTU enum */
	u8 hop_limit;
	u8 traffic_class;
	u8 packet_life_time;
};

/*
 * One connection-manager id, what rdma_cm calls an rdma_cm_id.
 *
 * References: the owning file's handle table holds one for as long as the
 * id is published there, every queued event holds one, and so does every
 * command in flight.  @mutex serialises user commands and protocol
 * handlers on the id; it protects everything below it unless noted.
 */
struct softcm_id {
	struct kref ref;
	struct mutex mutex;		/* commands and handlers on this id */

	/* In the namespace's id list (netns.c), for device notifications. */
	struct list_head net_node;

	/* Owner and handle there; both change only on migration. */
	struct softcm_file *file;
	u32 handle;
	u64 uid;

	struct net *net;		/* immutable, referenced */
	u16 ps;				/* immutable */
	enum softcm_state state;	/* written under @mutex, read with READ_ONCE */

	struct sockaddr_storage src;
	struct sockaddr_storage dst;
	int bound_ifindex;
	int backlog;

	struct softcm_addr_req *addr_req;	/* resolution in flight */
	struct softcm_dev_addr dev;		/* from ADDR_RESOLVED on */
	struct softcm_path path;		/* from ROUTE_RESOLVED on */

	u8 tos;
	u8 ack_timeout;
	bool reuseaddr;
	bool afonly;
	bool afonly_set;

	/* Port table membership: protected by the namespace's port lock. */
	struct softcm_bind_list *bind_list;
	struct hlist_node bind_node;

	/* Events of this id read by userspace: under the file's event lock. */
	u32 events_reported;
};

struct softcm_id *softcm_id_create(struct softcm_file *file, u16 ps, u64 uid);
void softcm_id_abort(struct softcm_id *id);
void softcm_id_destroy(struct softcm_id *id, u32 *events_reported);

static inline void softcm_id_get(struct softcm_id *id)
{
	kref_get(&id->ref);
}

void softcm_id_put(struct softcm_id *id);

bool softcm_id_set_state(struct softcm_id *id, enum softcm_state from,
			 enum softcm_state to);

#endif /* _SOFTCM_ID_H */
