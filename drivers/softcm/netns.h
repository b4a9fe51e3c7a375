/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_NETNS_H
#define _SOFTCM_NETNS_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rhashtable-types.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "port.h"
#include "stats.h"

struct socket;

struct ctl_table_header;

/*
 * Everything softcm keeps per network namespace.  It lives exactly as long
 * as the namespace: created by softcm_pernet_ops.init, freed after .exit.
 */
struct softcm_net {
	struct net *net;
	struct ctl_table_header *sysctl;
	struct softcm_ports ports;
	/* every id of the namespace (id.c), for device and neighbour changes */
	struct mutex ids_lock;
	struct list_head ids;
	bool ready;			/* set once .init has run */
	/* sysctls: written through procfs, read locklessly with READ_ONCE */
	int max_backlog;
	int max_ids_per_file;
	int cm_response_timeout;
	int cm_retries;
	int packet_life_time;
	int mra_timeout;
	/* caps on the times a peer chooses: its response time, timewait */
	int max_peer_timeout;
	int max_timewait;

	/* The CM (conntab.c): our CA GUID here, transaction IDs, comm IDs. */
	u64 guid;
	u32 tid_hi;
	atomic_t tid_lo;
	struct rhashtable local_ids;	/* our comm ID -> id */
	struct rhashtable remote_ids;	/* peer's (GUID, comm ID) -> id */
	atomic_t nr_conns;		/* ids in local_ids */
	/* live objects, for leak accounting: created and not yet freed */
	atomic_t nr_ids;
	atomic_t nr_files;
	struct softcm_stats stats;

	/*
	 * The transport (transport.c): UDP sockets opened on first use,
	 * index 0 for IPv4 and 1 for IPv6, and the packets they received,
	 * processed in order by @rx_work.
	 */
	struct mutex sock_lock;
	atomic_t gsi_psn;		/* the next BTH PSN, as rxe's QP1 */
	struct socket *sock[2];
	int sock_state[2];		/* 1 open, 0 not yet, -errno */
	struct sk_buff_head rxq;
	struct work_struct rx_work;
};

extern unsigned int softcm_net_id;

/* Inline: every layer reads this state, and only main.c calls netns.c. */
static inline struct softcm_net *softcm_net(const struct net *net)
{
	return net_generic(net, softcm_net_id);
}

u16 softcm_net_port(const struct softcm_net *sn);

int softcm_netns_init(void);
void softcm_netns_uninit(void);

#endif /* _SOFTCM_NETNS_H */
