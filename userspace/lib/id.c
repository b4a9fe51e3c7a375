// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * The library's private id: its memory, the system calls made for it, the
 * addresses and path it mirrors from the kernel, the count of its events
 * given back, migration to another channel and destruction.  The public
 * calls in cma.c, resolve.c and conn.c and the event reader in event.c are
 * built on these; nothing here calls back up into them.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "internal.h"

/* EACCES in a forked child (abi.c), as rdma_ucm's commands. */
int softcm_ioctl(struct softcm_id_priv *priv, unsigned long cmd, void *arg)
{
	if (softcm_channel_check(to_schannel(priv->id.channel)))
		return -1;
	return ioctl(priv->id.channel->fd, cmd, arg) ? -1 : 0;
}

/* One of the id's addresses (@which: SOFTCM_QUERY_*); *@len in and out. */
int softcm_query_addr_at(int fd, __u32 handle, int which, void *buf, __u32 *len)
{
	struct softcm_query_addr q = {
		.handle = handle,
		.which = which,
		.addr_len = *len,
		.addr = (__u64)(uintptr_t)buf,
	};

	if (ioctl(fd, SOFTCM_IOCTL_QUERY_ADDR, &q))
		return -1;
	*len = q.addr_len;
	return 0;
}

/*
 * Refresh id->route.addr from the kernel, after a call that may have
 * changed it.  A missing peer reads as zeroes of the local address's
 * family.
 */
int softcm_refresh_addr(struct softcm_id_priv *priv)
{
	struct rdma_addr *a = &priv->id.route.addr;
	int fd = priv->id.channel->fd;
	__u32 len = sizeof(a->src_storage);

	if (softcm_query_addr_at(fd, priv->handle, SOFTCM_QUERY_LOCAL, &a->src_storage, &len))
		return -1;
	len = sizeof(a->dst_storage);
	if (softcm_query_addr_at(fd, priv->handle, SOFTCM_QUERY_PEER, &a->dst_storage, &len)) {
		if (errno != ENOTCONN)
			return -1;
		/* As rdma_bind_addr() leaves it: the bound family, no address. */
		memset(&a->dst_storage, 0, sizeof(a->dst_storage));
		a->dst_storage.ss_family = a->src_storage.ss_family;
	}
	return 0;
}

static __u32 min_len(__u32 len, size_t max)
{
	return len < max ? len : max;
}

/*
 * The same from an event's record, which carries what QUERY_ADDR answered
 * as it was read (ENOENT when the local address was not there).
 */
int softcm_addr_from_record(struct softcm_id_priv *priv, const struct softcm_event_full *rec)
{
	struct rdma_addr *a = &priv->id.route.addr;

	if (!(rec->flags & SOFTCM_EVENT_HAS_LOCAL))
		return softcm_err(ENOENT);
	memcpy(&a->src_storage, &rec->local, min_len(rec->local_len, sizeof(a->src_storage)));
	if (rec->flags & SOFTCM_EVENT_HAS_PEER) {
		memcpy(&a->dst_storage, &rec->peer, min_len(rec->peer_len, sizeof(a->dst_storage)));
	} else {
		memset(&a->dst_storage, 0, sizeof(a->dst_storage));
		a->dst_storage.ss_family = a->src_storage.ss_family;
	}
	return 0;
}

/*
 * Mirror the kernel's path, as the event's record carries it, into
 * id->route, as librdmacm does for RoCE.
 */
void softcm_route_from_record(struct softcm_id_priv *priv, const struct softcm_event_full *rec)
{
	const struct softcm_query_route *q = &rec->route;
	struct ibv_sa_path_rec *p = &priv->path;
	struct rdma_route *route = &priv->id.route;

	if (!(rec->flags & SOFTCM_EVENT_HAS_ROUTE))
		return;
	memset(p, 0, sizeof(*p));
	memcpy(p->sgid.raw, q->sgid, sizeof(q->sgid));
	memcpy(p->dgid.raw, q->dgid, sizeof(q->dgid));
	p->flow_label = htonl(q->flow_label);
	p->hop_limit = q->hop_limit;
	p->traffic_class = q->traffic_class;
	p->reversible = 1;	/* a host int in ibv_sa_path_rec, as libibverbs sets it */
	p->numb_path = 1;
	p->pkey = htons(q->pkey);
	p->sl = q->sl;
	p->mtu_selector = 2;	/* exactly */
	p->mtu = q->mtu;
	p->rate_selector = 2;
	p->packet_life_time_selector = 2;
	p->packet_life_time = q->packet_life_time;
	route->path_rec = p;
	route->num_paths = 1;
	memcpy(route->addr.addr.ibaddr.sgid.raw, q->sgid, sizeof(q->sgid));
	memcpy(route->addr.addr.ibaddr.dgid.raw, q->dgid, sizeof(q->dgid));
	route->addr.addr.ibaddr.pkey = htons(q->pkey);
}

/*
 * The errno a failed event stands for, as librdmacm's: ECONNREFUSED for a
 * rejection (whose status is the IB reason), else the status's magnitude.
 * 0 when the event did not fail.
 */
int softcm_event_errno(const struct rdma_cm_event *event)
{
	if (!event->status)
		return 0;
	if (event->event == RDMA_CM_EVENT_REJECTED)
		return ECONNREFUSED;
	return event->status < 0 ? -event->status : event->status;
}

/*
 * rdma_ack_cm_event() of an event read by event.c, which allocated it: it
 * counts against the id the kernel reported it on (a CONNECT_REQUEST's
 * against the listener).
 */
void softcm_ack_event(struct rdma_cm_event *event)
{
	struct softcm_event_priv *evt = container_of(event, struct softcm_event_priv, event);

	softcm_id_event_acked(evt->id_priv, evt->mig_gen);
	free(evt);
}

/* Give back the event a synchronous call left in id->event. */
void softcm_put_event(struct softcm_id_priv *priv)
{
	if (priv->id.event) {
		softcm_ack_event(priv->id.event);
		priv->id.event = NULL;
	}
}

/*
 * Until every one of the @reported events the kernel returned of the id
 * is given back: acknowledged by the application or dropped unread
 * (evbuf.c), or, for a migration (@moved), moved along with the id; not
 * those yet to be handed out on the id's new channel.
 */
static void wait_acked(struct softcm_id_priv *priv, uint32_t reported, int moved)
{
	pthread_mutex_lock(&priv->mut);
	/* Moved, then handed out on the new channel and given back: once. */
	while (priv->events_completed +
	       (moved ? priv->events_moved - priv->events_moved_acked : 0) < reported)
		pthread_cond_wait(&priv->cond, &priv->mut);
	pthread_mutex_unlock(&priv->mut);
}

/*
 * A NULL @channel makes a synchronous id with a channel of its own.  Also
 * the priv of a CONNECT_REQUEST's new id, whose handle event.c sets.
 * Every id holds a user of its channel (review R6): a program that
 * destroys the channel before its ids (which librdmacm's contract
 * forbids) leaves the ids a channel, whose descriptor closes with the
 * last of them, not freed memory and a descriptor number the next
 * open() may take.
 */
struct softcm_id_priv *softcm_id_alloc(struct rdma_event_channel *channel,
				       void *context, enum rdma_port_space ps)
{
	struct softcm_channel *own;
	struct softcm_id_priv *priv;

	priv = calloc(1, sizeof(*priv));
	if (!priv)
		return NULL;
	priv->id.context = context;
	priv->id.ps = ps;
	priv->id.qp_type = ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
	if (!channel) {
		own = softcm_channel_open();
		if (!own) {
			free(priv);
			return NULL;
		}
		channel = &own->channel;
		priv->sync = 1;
	} else {
		softcm_channel_get(to_schannel(channel));
	}
	priv->id.channel = channel;
	pthread_mutex_init(&priv->mut, NULL);
	pthread_cond_init(&priv->cond, NULL);
	return priv;
}

/* The id's user of its channel goes with it (a synchronous id's is the only one). */
void softcm_id_free(struct softcm_id_priv *priv)
{
	softcm_cmdev_put(priv->cmdev);
	free(priv->qp_init_attr);
	softcm_channel_put(to_schannel(priv->id.channel));
	pthread_cond_destroy(&priv->cond);
	pthread_mutex_destroy(&priv->mut);
	free(priv);
}

/*
 * The kernel's id goes first; its buffered records are dropped; then we
 * wait until the application has acknowledged every event of the id it
 * has been given, as librdmacm does, before the memory those events point
 * at goes.
 */
int softcm_id_destroy(struct softcm_id_priv *priv)
{
	struct softcm_channel *sch = to_schannel(priv->id.channel);
	struct softcm_destroy_id c = { .handle = priv->handle };

	if (softcm_ioctl(priv, SOFTCM_IOCTL_DESTROY_ID, &c))
		return -1;
	softcm_evbuf_forget(sch, priv);
	if (priv->id.event)
		softcm_ack_event(priv->id.event);
	wait_acked(priv, c.events_reported, 0);
	softcm_evbuf_departed(sch, priv);
	softcm_id_free(priv);
	return 0;
}

/*
 * rdma_migrate_id() of an id whose arguments were checked: a NULL @channel
 * is a new private channel, for an id that is not synchronous yet.  The
 * id's buffered records go first (evbuf.c); then the kernel gives the id a
 * new handle in @channel's file.  Handle and channel are switched before
 * we wait for the events already handed out on the old channel to be
 * acknowledged, as librdmacm switches the channel: from the moment the
 * kernel moved the id, another thread that uses the id, or reads its
 * events from @channel, must name it there.
 */
int softcm_id_migrate(struct softcm_id_priv *priv, struct rdma_event_channel *channel)
{
	struct softcm_channel *old = to_schannel(priv->id.channel), *to, *own = NULL;
	struct softcm_migrate_id c = { 0 };
	int err, was_sync = priv->sync;

	if (softcm_channel_check(old) || (channel && softcm_channel_check(to_schannel(channel))))
		return -1;
	if (!channel) {
		own = softcm_channel_open();
		if (!own)
			return -1;
		channel = &own->channel;
	}
	to = to_schannel(channel);
	pthread_mutex_lock(&priv->mut);
	priv->events_moved = 0;
	priv->events_moved_acked = 0;
	__atomic_store_n(&priv->mig_gen, priv->mig_gen + 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&priv->mut);
	/* The id's records read from @channel's file wait for the older ones. */
	if (to != old)
		__atomic_store_n(&priv->mig_hold, 1, __ATOMIC_RELEASE);
	softcm_evbuf_move(old, to, priv, to != old);
	c.fd = old->channel.fd;
	c.handle = priv->handle;
	if (ioctl(channel->fd, SOFTCM_IOCTL_MIGRATE_ID, &c)) {
		err = errno;
		if (to != old) {
			softcm_evbuf_departed(old, priv);
			softcm_evbuf_move(to, old, priv, 0);
			softcm_evbuf_release(to, priv);
		}
		if (own)
			softcm_channel_put(own);
		return softcm_err(err);
	}

	pthread_mutex_lock(&priv->mut);
	priv->handle = c.handle;
	priv->id.channel = channel;
	/* Onto the channel it is on: a synchronous id stays one. */
	if (to != old)
		priv->sync = own != NULL;
	pthread_mutex_unlock(&priv->mut);

	/*
	 * Records forwarded after the id may have come after MIGRATE_ID woke
	 * the new file's pollers: a MIGRATE_ID of the id within its own file,
	 * which changes nothing but wakes them (uapi.rst), says they are there.
	 */
	if (to != old && softcm_evbuf_arrived(old, to, priv, c.events_reported)) {
		struct softcm_migrate_id w = { .fd = channel->fd, .handle = c.handle };

		ioctl(channel->fd, SOFTCM_IOCTL_MIGRATE_ID, &w);
	}
	/* A synchronous id's last event is ours to give back. */
	if (was_sync)
		softcm_put_event(priv);
	wait_acked(priv, c.events_reported, 1);
	if (to != old)
		softcm_evbuf_departed(old, priv);
	/* the id's user moves with it: a new private channel's first is it */
	if (to != old) {
		if (!own)
			softcm_channel_get(to);
		softcm_channel_put(old);
	}
	return 0;
}
