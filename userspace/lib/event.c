// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * Events.  A channel (abi.c) is one open of /dev/softcm; its events are
 * the kernel's full records, read in batches (evbuf.c), turned into
 * rdma_cm events that point at the library's ids (id.c), which a
 * CONNECT_REQUEST creates.  A record carries the addresses and route the
 * event changed: handing an event out makes no system call of its own.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "internal.h"

/*
 * The event's private data, or NULL when it carries none, as librdmacm
 * and rdma_get_cm_event(3) have it: a program may test the pointer.
 */
static const void *copy_private_data(struct softcm_event_priv *evt,
				     const struct softcm_conn_param *kp)
{
	if (!kp->private_data_len)
		return NULL;
	memcpy(evt->private_data, kp->private_data, sizeof(evt->private_data));
	return evt->private_data;
}

static void copy_conn_param(struct softcm_event_priv *evt, const struct softcm_event *kev)
{
	struct rdma_conn_param *conn = &evt->event.param.conn;
	const struct softcm_conn_param *kp = &kev->param;

	conn->private_data = copy_private_data(evt, kp);
	conn->private_data_len = kp->private_data_len;
	conn->responder_resources = kp->responder_resources;
	conn->initiator_depth = kp->initiator_depth;
	conn->flow_control = kp->flow_control;
	conn->retry_count = kp->retry_count;
	conn->rnr_retry_count = kp->rnr_retry_count;
	conn->srq = kp->srq;
	conn->qp_num = kp->qp_num;
}

/* ah_attr is filled in once the event's id is known (get_cm_event()). */
static void copy_ud_param(struct softcm_event_priv *evt, const struct softcm_event *kev)
{
	struct rdma_ud_param *ud = &evt->event.param.ud;
	const struct softcm_conn_param *kp = &kev->param;

	ud->private_data = copy_private_data(evt, kp);
	ud->private_data_len = kp->private_data_len;
	ud->qp_num = kp->qp_num;
	ud->qkey = kp->qkey;
}

/*
 * A CONNECT_REQUEST names the listener (uid) and a new id (handle) that
 * the library has never seen: it gets a priv of its own, inheriting the
 * listener's channel, context and port space, as librdmacm's does.  The
 * event itself stays the listener's: the kernel counted it among the
 * listener's, so it is acknowledged against the listener.
 *
 * The new id is in the file the record was read from; it moves to the
 * listener's channel if the listener has moved since, with the record.
 * A synchronous listener's new id is synchronous on a private channel of
 * its own, as librdmacm migrates it (ucma_process_conn_req()): its fd's
 * flags, poll() and close are its own.  The kernel reports nothing of a
 * new id before rdma_accept() gives it a uid: it moves with nothing.
 */
static int conn_request(struct softcm_event_priv *evt, const struct softcm_evrec *rec)
{
	struct softcm_id_priv *listen = evt->id_priv, *priv;
	struct rdma_event_channel *ch = listen->id.channel;
	const struct softcm_event *kev = &rec->full.ev;
	struct softcm_destroy_id d = { .handle = kev->handle };
	struct softcm_migrate_id m = { .fd = rec->from->channel.fd, .handle = kev->handle };
	struct softcm_channel *own = NULL;
	int err;

	if (listen->sync) {
		own = softcm_channel_open();
		if (!own) {
			err = errno;
			ioctl(rec->from->channel.fd, SOFTCM_IOCTL_DESTROY_ID, &d);
			return softcm_err(err);
		}
		ch = &own->channel;
	}
	if (ch != &rec->from->channel) {
		if (ioctl(ch->fd, SOFTCM_IOCTL_MIGRATE_ID, &m)) {
			err = errno;
			ioctl(rec->from->channel.fd, SOFTCM_IOCTL_DESTROY_ID, &d);
			goto err_put;
		}
		d.handle = m.handle;
	}
	priv = softcm_id_alloc(ch, listen->id.context, listen->id.ps);
	if (!priv) {
		err = errno;
		ioctl(ch->fd, SOFTCM_IOCTL_DESTROY_ID, &d);
		goto err_put;
	}
	/* The private channel's user is the id's from here (it took its own). */
	if (own)
		softcm_channel_put(own);
	priv->sync = listen->sync;
	priv->handle = d.handle;
	priv->responder_resources = kev->param.responder_resources;
	priv->initiator_depth = kev->param.initiator_depth;
	evt->event.listen_id = &listen->id;
	evt->event.id = &priv->id;

	if (softcm_addr_from_record(priv, &rec->full))
		goto err_destroy;
	/* The request came to one of the namespace's addresses: its device. */
	softcm_cmdev_share(priv, listen);
	softcm_cmdev_attach(priv);
	return 0;

err_destroy:
	err = errno;
	softcm_id_destroy(priv);
	return softcm_err(err);

err_put:
	if (own)
		softcm_channel_put(own);
	return softcm_err(err);
}

/*
 * The event of @rec, or 1 when it is not to be reported (and is given
 * back): a CONNECT_REQUEST without its new id, or a connection's end after
 * the library reported CONNECT_ERROR.
 */
static int process(struct softcm_event_priv *evt, const struct softcm_evrec *rec)
{
	const struct softcm_event *kev = &rec->full.ev;
	struct softcm_id_priv *priv = (struct softcm_id_priv *)(uintptr_t)kev->uid;

	memset(evt, 0, sizeof(*evt));
	evt->id_priv = priv;
	evt->event.id = &priv->id;
	evt->event.event = kev->event;
	evt->event.status = kev->status;
	if (priv->id.qp_type == IBV_QPT_UD)
		copy_ud_param(evt, kev);
	else
		copy_conn_param(evt, kev);

	switch (kev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		softcm_addr_from_record(priv, &rec->full);
		if (!kev->status)
			softcm_cmdev_attach(priv);
		break;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		softcm_addr_from_record(priv, &rec->full);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		softcm_addr_from_record(priv, &rec->full);
		softcm_route_from_record(priv, &rec->full);
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		/*
		 * With a QP, the library answers the REP and the application
		 * sees ESTABLISHED (or CONNECT_ERROR, after which the
		 * connection's REJECTED or DISCONNECTED is not reported), as
		 * librdmacm's ucma_process_conn_resp().
		 */
		if (!priv->id.qp || kev->status)
			break;
		if (softcm_qp_conn_resp(priv)) {
			evt->event.event = RDMA_CM_EVENT_CONNECT_ERROR;
			evt->event.status = -errno;
			priv->connect_error = 1;
		} else {
			evt->event.event = RDMA_CM_EVENT_ESTABLISHED;
		}
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DISCONNECTED:
		if (priv->connect_error)
			return 1;
		if (kev->event == RDMA_CM_EVENT_REJECTED)
			softcm_qp_err(priv);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* Without a new id the event means nothing: skip it. */
		if (conn_request(evt, rec))
			return 1;
		break;
	default:
		break;
	}
	/* A UD peer's address handle, as rdma_cm's, for ibv_create_ah() */
	if (priv->id.qp_type == IBV_QPT_UD && !evt->event.status &&
	    (kev->event == RDMA_CM_EVENT_ESTABLISHED ||
	     kev->event == RDMA_CM_EVENT_CONNECT_REQUEST))
		softcm_ud_ah_attr(to_priv(evt->event.id), &evt->event.param.ud.ah_attr);
	return 0;
}

/*
 * The next event of @channel, or of @priv alone (a synchronous id's, on
 * its private channel), from the channel's buffer or its next read().
 */
int softcm_get_event(struct rdma_event_channel *channel, struct softcm_id_priv *priv,
		     struct rdma_cm_event **event)
{
	struct softcm_event_priv *evt;
	struct softcm_evrec *rec;
	int skip;

	evt = malloc(sizeof(*evt));
	if (!evt)
		return softcm_err(ENOMEM);
	do {
		if (softcm_evbuf_take(to_schannel(channel), priv, &rec)) {
			free(evt);
			return -1;
		}
		evt->mig_gen = rec->mig_gen;
		skip = process(evt, rec);
		if (skip)
			softcm_id_event_acked(evt->id_priv, evt->mig_gen);
		softcm_evrec_free(rec);
	} while (skip);
	*event = &evt->event;
	return 0;
}

/*
 * Blocks unless the channel's fd was made O_NONBLOCK (then EAGAIN), as
 * librdmacm.  Every event must be given back with rdma_ack_cm_event().
 */
SOFTCM_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel,
				    struct rdma_cm_event **event)
{
	if (!channel || !event)
		return softcm_err(EINVAL);
	return softcm_get_event(channel, NULL, event);
}

SOFTCM_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	if (!event)
		return softcm_err(EINVAL);
	softcm_ack_event(event);
	return 0;
}

/*
 * A synchronous id's call waits here for the event that completes it,
 * which stays in id->event until the next call or rdma_destroy_id(), as in
 * librdmacm's ucma_complete().  A failing event becomes -1 with errno
 * (softcm_event_errno()).
 */
int softcm_wait_sync(struct softcm_id_priv *priv)
{
	int err;

	if (!priv->sync)
		return 0;
	softcm_put_event(priv);
	if (softcm_get_event(priv->id.channel, priv, &priv->id.event))
		return -1;
	err = softcm_event_errno(priv->id.event);
	return err ? softcm_err(err) : 0;
}

SOFTCM_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < sizeof(names) / sizeof(names[0]))
		return names[event];
	return "UNKNOWN EVENT";
}
