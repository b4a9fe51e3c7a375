/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_NETNS_H
#define _SOFTCM_NETNS_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rhashtable-types.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "conntab.h"
#include "gid.h"
#include "port.h"
#include "stats.h"
#include "transport.h"
#include "uobj.h"

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
	int max_held_requests;		/* per listener, beyond its backlog */
	unsigned long max_ring_bytes;	/* the rings of all its QPs and CQs */
	/*
	 * 1: SEND and WRITE payloads of SOFTCM_RC_ZCOPY_MIN bytes and more
	 * leave from the region's pages (rcxmit.c); 0, the default: every
	 * one is copied (design.rst, "Zero-copy transmit", says why).  Read
	 * once per packet, unlocked.
	 */
	int tx_zcopy;
	/*
	 * tx_gso: 1, the default, and the copied packets a requester or
	 * responder run sends back to back leave as UDP GSO skbs of up to
	 * MAX_SKB_FRAGS packets where the route's device is a veth or the
	 * loopback (rcxmit.c's batches); 0, one skb each.  Read once per
	 * packet, unlocked.
	 */
	int tx_gso;
	/*
	 * max_ahs, max_qps, max_mrs, max_cqs, max_pds: the objects of all
	 * its files, by type (uobj.c), charged in nr_objs from
	 * softcm_uobj_add() to the end of their destroy.
	 */
	int max_objs[SOFTCM_UOBJ_TYPE_MAX + 1];
	atomic_t nr_objs[SOFTCM_UOBJ_TYPE_MAX + 1];
	/* creations refused by max_objs (by type), max_ring_bytes, rdma cgroup */
	atomic_long_t refused_objs[SOFTCM_UOBJ_TYPE_MAX + 1];
	atomic_long_t refused_ring_bytes;
	atomic_long_t refused_rdmacg;
#if IS_ENABLED(CONFIG_CGROUP_RDMA)
	/* the namespace's verbs device for the rdma cgroup: "softcm-<inum>" */
#endif

	struct softcm_conntab conntab;
	/* live objects, for leak accounting: created and not yet freed */
	atomic_t nr_ids;
	atomic_t nr_files;
	atomic_t nr_held;		/* REQs listeners hold (backlog.c) */
	atomic_t nr_uobjs;		/* verbs objects in files' tables */
	atomic_t nr_cqs;		/* verbs objects not yet destroyed */
	atomic_t nr_qps;
	atomic_long_t ring_bytes;	/* ring memory allocated (ring.c) */
	/*
	 * QP number -> struct softcm_qp (qp.c), for the data path to find a
	 * packet's destination under RCU; cyclic from 2, 24 bits.
	 */
	struct xarray qpns;
	u32 qpn_next;
	struct softcm_stats stats;
	struct softcm_transport transport;
	struct softcm_gid_table gids;	/* gid.c */
	struct xarray mr_keys;		/* lkeys and rkeys -> MR (mr.c) */
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
