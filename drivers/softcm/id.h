/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_ID_H
#define _SOFTCM_ID_H

#include <linux/if_ether.h>
#include <linux/in6.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rhashtable-types.h>
#include <linux/socket.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <uapi/linux/softcm.h>

#include "cmstate.h"
#include "sockaddr.h"

struct mem_cgroup;
struct net;
struct softcm_evq;
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

/* What a CM timer is armed for; the work checks it under the id's mutex. */
enum softcm_cm_timer {
	SOFTCM_CM_TIMER_NONE,
	SOFTCM_CM_TIMER_RETRY,		/* resend @mad, or give up */
	SOFTCM_CM_TIMER_TIMEWAIT,
};

/*
 * A connection's key in the namespace's table of peers' comm IDs, and
 * in that of their QP numbers (comm_id then holds the QPN).
 */
struct softcm_remote_key {
	u64 guid;
	u32 comm_id;
	u32 zero;		/* hashed: must be 0 */
};

/*
 * The IB CM side of an id (cm.c and its message handlers).  An id in the
 * namespace's comm-ID table is referenced by it: a connection in timewait
 * keeps its id after the application destroyed it, as the Linux CM keeps
 * its timewait info.
 */
struct softcm_cm {
	enum softcm_cm_state state;
	u32 local_id;			/* our comm ID, 0 until connecting */
	struct softcm_remote_key remote;	/* the peer's comm ID and CA GUID */
	struct rhash_head local_node;
	struct rhash_head remote_node;
	bool in_remote;
	/*
	 * The peer's QP number with its CA GUID, in the namespace's table
	 * of them (softcm_conn_insert_remote_qp()) from our REP, or the
	 * peer's, until timewait, when our end is a QP: what the stale-QPN
	 * check looks a new REQ or REP up in.
	 */
	struct softcm_remote_key remote_qp;
	struct rhash_head remote_qp_node;
	bool in_remote_qp;
	/* CONNECT or ACCEPT announced the number of an RC QP of the namespace */
	bool qp_backed;

	/* The packets' addresses: the request's for a passive id. */
	union softcm_inaddr wire_src;
	union softcm_inaddr wire_dst;
	int ifindex;			/* egress for link-local peers, else 0 */
	u8 tos;

	u64 tid;			/* transaction of the exchange in flight */
	u64 service_id;			/* SIDR: the request's, for the reply */
	u32 qpn;			/* ours, as the application gave it */
	u32 remote_qpn;
	/*
	 * What our QP's RTR and RTS take from the exchange (qpattr.c), as
	 * the Linux CM keeps them: the peer's starting PSN (our send PSN),
	 * responder resources and initiator depth as seen from our end, the
	 * retry counts and our QP's local ACK timeout.
	 */
	u32 remote_psn;
	u8 responder_resources;
	u8 initiator_depth;
	u8 retry_count;
	u8 rnr_retry_count;
	u8 qp_timeout;
	u8 max_retries;			/* of our messages */
	u8 av_timeout;			/* IB time: sets timewait */
	unsigned int timeout_ms;	/* retransmission timeout */

	/* A message that may have to be sent again, and when. */
	u8 *mad;
	u8 mad_attr;
	u8 retries_left;
	u8 resent;			/* retransmissions so far: the backoff */
	unsigned long give_up;		/* jiffies: the retry budget's end */
	enum softcm_cm_timer timer;
	unsigned long deadline;
	struct delayed_work work;
};

/*
 * One connection-manager id, what rdma_cm calls an rdma_cm_id.
 *
 * References: the owning file's handle table holds one for as long as the
 * id is published there (before that, the CONNECT_REQUEST that announces
 * a request's new id), every queued event holds one, and so does every
 * command in flight.  @mutex serialises user commands and protocol
 * handlers on the id; it protects everything below it unless noted.
 */
struct softcm_id {
	struct kref ref;
	struct mutex mutex;		/* commands and handlers on this id */

	/* In the namespace's id list (softcm_id_register()). */
	struct list_head net_node;

	/*
	 * Owner, its event queue (&file->evq) and the handle there: NULL and
	 * 0 until the id is published (a request's new id: until its
	 * CONNECT_REQUEST is read); written under @mutex, and change only on
	 * migration after that.  Under @mutex, an id with a file that is not
	 * DESTROYING keeps that file alive: the file's release destroys its
	 * ids before it is freed.
	 */
	struct softcm_file *file;
	struct softcm_evq *evq;
	u32 handle;
	u64 uid;

	struct net *net;		/* immutable, referenced */
	/*
	 * Immutable, referenced: the memory cgroup of the id's creator (for
	 * a request's id, its listener's), charged for what workers
	 * allocate on the id's behalf.
	 */
	struct mem_cgroup *memcg;
	u16 ps;				/* immutable */
	unsigned long created;		/* jiffies; immutable */
	enum softcm_state state;	/* written under @mutex, read with READ_ONCE */

	struct sockaddr_storage src;
	struct sockaddr_storage dst;
	int bound_ifindex;
	int backlog;

	struct rcu_head rcu;		/* comm-ID lookups are lockless */

	struct softcm_addr_req *addr_req;	/* resolution in flight */
	struct softcm_dev_addr dev;		/* from ADDR_RESOLVED on */
	struct softcm_path path;		/* from ROUTE_RESOLVED on */

	u8 tos;
	u8 ack_timeout;
	bool ack_timeout_set;		/* rdma_set_ack_timeout(): the QP's, too */
	bool reuseaddr;
	bool afonly;
	bool afonly_set;

	/* Port table membership: protected by the namespace's port lock. */
	struct softcm_bind_list *bind_list;
	struct hlist_node bind_node;

	/* Events of this id read by userspace. */
	atomic_t events_reported;

	/* Listeners: CONNECT_REQUESTs queued and not yet read. */
	atomic_t requests_pending;
	/* Listeners: requests beyond the backlog, waiting (backlog.c). */
	struct list_head held;
	unsigned int nr_held;
	/* A request's new id reports nothing but its request until accepted. */
	bool unaccepted;
	/* The peer address is no longer a connection's (getpeername ENOTCONN). */
	bool peer_gone;
	/* The connection was established: getpeername answers until it is over. */
	bool conn_up;
	u32 psn;			/* starting PSN we advertise: our QP's receive PSN */

	struct softcm_cm cm;
};

int softcm_id_init(void);
void softcm_id_uninit(void);
struct softcm_id *softcm_id_create(struct net *net, u16 ps, u64 uid);
void softcm_id_abort(struct softcm_id *id);
void softcm_id_register(struct softcm_id *id);
void softcm_id_unregister(struct softcm_id *id);
struct softcm_id **softcm_id_snapshot(struct net *net, unsigned int *count);
void softcm_id_put_snapshot(struct softcm_id **ids, unsigned int count);
unsigned int softcm_id_get_batch(struct net *net, loff_t *skip,
				 struct softcm_id **batch, unsigned int max);

static inline void softcm_id_get(struct softcm_id *id)
{
	kref_get(&id->ref);
}

void softcm_id_put(struct softcm_id *id);

/* Release an id its user holds both locked and referenced. */
static inline void softcm_id_unlock_put(struct softcm_id *id)
{
	mutex_unlock(&id->mutex);
	softcm_id_put(id);
}

bool softcm_id_cas_state(struct softcm_id *id, enum softcm_state from,
			 enum softcm_state to);
void softcm_id_force_state(struct softcm_id *id, enum softcm_state to);
void softcm_id_start_as_request(struct softcm_id *id);

#endif /* _SOFTCM_ID_H */
