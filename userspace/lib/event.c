// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * Event channels and events.  A channel is one open of /dev/softcm; its
 * events are the kernel's fixed-size records, turned into rdma_cm events
 * that point at the library's ids.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

SOFTCM_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct rdma_event_channel *channel;

	channel = malloc(sizeof(*channel));
	if (!channel) {
		errno = ENOMEM;
		return NULL;
	}
	channel->fd = softcm_open_device();
	if (channel->fd < 0) {
		free(channel);
		return NULL;
	}
	return channel;
}

SOFTCM_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	if (!channel)
		return;
	close(channel->fd);
	free(channel);
}

static void copy_conn_param(struct softcm_event_priv *evt, const struct softcm_event *kev)
{
	struct rdma_conn_param *conn = &evt->event.param.conn;
	const struct softcm_conn_param *kp = &kev->param;

	memcpy(evt->private_data, kp->private_data, sizeof(evt->private_data));
	conn->private_data = evt->private_data;
	conn->private_data_len = kp->private_data_len;
	conn->responder_resources = kp->responder_resources;
	conn->initiator_depth = kp->initiator_depth;
	conn->flow_control = kp->flow_control;
	conn->retry_count = kp->retry_count;
	conn->rnr_retry_count = kp->rnr_retry_count;
	conn->srq = kp->srq;
	conn->qp_num = kp->qp_num;
}

/*
 * Blocks unless the channel's fd was made O_NONBLOCK (then EAGAIN), as
 * librdmacm.  Every event must be given back with rdma_ack_cm_event().
 */
SOFTCM_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel,
				    struct rdma_cm_event **event)
{
	struct softcm_event_priv *evt;
	struct softcm_id_priv *priv;
	struct softcm_event kev;
	ssize_t len;

	if (!channel || !event)
		return softcm_err(EINVAL);

	evt = calloc(1, sizeof(*evt));
	if (!evt)
		return softcm_err(ENOMEM);
retry:
	len = read(channel->fd, &kev, sizeof(kev));
	if (len != sizeof(kev)) {
		free(evt);
		return softcm_err(len < 0 ? errno : EIO);
	}

	priv = (struct softcm_id_priv *)(uintptr_t)kev.uid;
	if (!priv)
		goto retry;	/* an id the application never saw */

	evt->id_priv = priv;
	evt->event.id = &priv->id;
	evt->event.event = kev.event;
	evt->event.status = kev.status;
	copy_conn_param(evt, &kev);

	switch (kev.event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		softcm_sync_addr(priv);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		softcm_sync_addr(priv);
		softcm_sync_route(priv);
		break;
	default:
		break;
	}
	*event = &evt->event;
	return 0;
}

SOFTCM_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct softcm_event_priv *evt;
	struct softcm_id_priv *priv;

	if (!event)
		return softcm_err(EINVAL);
	evt = container_of(event, struct softcm_event_priv, event);
	priv = evt->id_priv;

	pthread_mutex_lock(&priv->mut);
	priv->events_completed++;
	pthread_cond_broadcast(&priv->cond);
	pthread_mutex_unlock(&priv->mut);
	free(evt);
	return 0;
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
