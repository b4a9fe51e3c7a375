// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * Connections: rdma_connect(), rdma_get_request(), rdma_accept(),
 * rdma_reject(), rdma_establish() and rdma_disconnect(), as librdmacm's.
 * The kernel checks private data lengths and states; the library fills in
 * the defaults librdmacm would have, and moves the id's QP, if it has one,
 * where librdmacm does (verbs.c).
 */
#include <string.h>

#include "internal.h"

/*
 * For RDMA_PS_TCP, librdmacm refuses depths above the device's maximum
 * (0xFF asks for that maximum) and, in rdma_connect(), a NULL conn_param
 * on an id without a QP: the REQ's QP number would come from nowhere.
 */
static int check_param(struct softcm_id_priv *priv, const struct rdma_conn_param *param,
		       int null_ok)
{
	if (priv->id.ps != RDMA_PS_TCP)
		return 0;
	if (!param)
		return null_ok || priv->id.qp ? 0 : softcm_err(EINVAL);
	if (param->responder_resources != RDMA_MAX_RESP_RES &&
	    param->responder_resources > softcm_max_resp_res(priv))
		return softcm_err(EINVAL);
	if (param->initiator_depth != RDMA_MAX_INIT_DEPTH &&
	    param->initiator_depth > softcm_max_init_depth(priv))
		return softcm_err(EINVAL);
	return 0;
}

/*
 * The kernel's parameters: @param's, or librdmacm's defaults without one
 * (the maximum depths, 7 retries of each kind).  Responder resources and
 * initiator depth of 0xFF ask for the maximum: @max_res and @max_depth.
 * The id's QP, when it has one, gives the QP number, as librdmacm.
 */
static void copy_param(struct softcm_conn_param *kp, const struct rdma_conn_param *param,
		       uint8_t max_res, uint8_t max_depth)
{
	if (!param) {
		kp->responder_resources = max_res;
		kp->initiator_depth = max_depth;
		kp->retry_count = 7;
		kp->rnr_retry_count = 7;
		return;
	}
	kp->responder_resources = param->responder_resources == RDMA_MAX_RESP_RES ?
				  max_res : param->responder_resources;
	kp->initiator_depth = param->initiator_depth == RDMA_MAX_INIT_DEPTH ?
			      max_depth : param->initiator_depth;
	kp->qp_num = param->qp_num;
	kp->srq = param->srq;
	kp->flow_control = param->flow_control;
	kp->retry_count = param->retry_count;
	kp->rnr_retry_count = param->rnr_retry_count;
	if (param->private_data && param->private_data_len) {
		memcpy(kp->private_data, param->private_data, param->private_data_len);
		kp->private_data_len = param->private_data_len;
	}
}

static void fill_param(struct softcm_conn_param *kp, const struct rdma_conn_param *param,
		       uint8_t max_res, uint8_t max_depth, const struct ibv_qp *qp)
{
	copy_param(kp, param, max_res, max_depth);
	if (qp) {
		kp->qp_num = qp->qp_num;
		kp->srq = 0;
	}
}

static uint8_t min_u8(uint8_t a, uint8_t b)
{
	return a < b ? a : b;
}

/*
 * Without a QP, the REP is reported as CONNECT_RESPONSE and the
 * application sends the RTU with rdma_establish(), as librdmacm makes it
 * do; with one, the library moves it to RTS and answers (event.c), and
 * the application sees ESTABLISHED.  A synchronous id returns 0 on that
 * event.
 */
SOFTCM_EXPORT int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct softcm_id_priv *priv;
	struct softcm_connect c;

	if (!id)
		return softcm_err(EINVAL);
	priv = to_priv(id);
	if (softcm_connect_args(priv, conn_param, &c))
		return -1;
	if (softcm_ioctl(priv, SOFTCM_IOCTL_CONNECT, &c))
		return -1;
	return softcm_wait_sync(priv);
}

/* rdma_connect()'s command, for it and for softcm_submit() (batch.c). */
int softcm_connect_args(struct softcm_id_priv *priv, const struct rdma_conn_param *conn_param,
			struct softcm_connect *c)
{
	if (check_param(priv, conn_param, 0))
		return -1;
	memset(c, 0, sizeof(*c));
	c->handle = priv->handle;
	fill_param(&c->param, conn_param, softcm_max_resp_res(priv),
		   softcm_max_init_depth(priv), priv->id.qp);
	return 0;
}

/*
 * Only for a synchronous listener.  The new id holds the request event in
 * id->event until rdma_accept(), rdma_reject() or rdma_destroy_id(); it is
 * acknowledged against the listener, which the kernel counted it on.  A
 * listener from rdma_create_ep() with QP attributes gives the new id its
 * QP, on the listener's PD (or the new id's device's), as librdmacm.
 */
SOFTCM_EXPORT int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct softcm_id_priv *priv;
	struct rdma_cm_event *event;
	int err;

	if (!listen || !id)
		return softcm_err(EINVAL);
	priv = to_priv(listen);
	if (!priv->sync)
		return softcm_err(EINVAL);
	softcm_put_event(priv);
	if (softcm_get_event(listen->channel, priv, &event))
		return -1;

	err = softcm_event_errno(event);
	if (!err && event->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		err = EINVAL;
	if (!err && priv->qp_init_attr) {
		struct ibv_qp_init_attr attr = *priv->qp_init_attr;

		if (rdma_create_qp(event->id, listen->pd, &attr))
			err = errno;
	}
	if (err) {
		listen->event = event;
		return softcm_err(err);
	}
	*id = event->id;
	(*id)->event = event;
	return 0;
}

/*
 * Without conn_param (which librdmacm allows only to an id with a QP) the
 * reply carries no private data and the depths the request asked for.
 * A connected id's QP goes to RTR and RTS before the REP leaves, and to
 * ERR if it cannot leave, as librdmacm's.  ESTABLISHED follows the peer's
 * RTU; a synchronous RC id waits for it.
 */
SOFTCM_EXPORT int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct softcm_id_priv *priv;
	struct softcm_accept c;

	if (!id)
		return softcm_err(EINVAL);
	priv = to_priv(id);
	if (softcm_accept_args(priv, conn_param, &c))
		return -1;
	if (softcm_ioctl(priv, SOFTCM_IOCTL_ACCEPT, &c)) {
		int err = errno;

		softcm_qp_err(priv);
		return softcm_err(err);
	}

	/* rdma_get_request()'s event is answered now. */
	if (priv->sync)
		softcm_put_event(priv);
	if (id->qp_type == IBV_QPT_UD)
		return 0;
	return softcm_wait_sync(priv);
}

/* rdma_accept()'s command, for it and for softcm_submit() (batch.c). */
int softcm_accept_args(struct softcm_id_priv *priv, const struct rdma_conn_param *conn_param,
		       struct softcm_accept *c)
{
	struct rdma_cm_id *id = &priv->id;

	if (check_param(priv, conn_param, 1))
		return -1;
	memset(c, 0, sizeof(*c));
	c->uid = (uintptr_t)priv;
	c->handle = priv->handle;
	/* The device's maximum is bounded by what the peer asked for. */
	fill_param(&c->param, conn_param,
		   min_u8(priv->responder_resources, softcm_max_resp_res(priv)),
		   min_u8(priv->initiator_depth, softcm_max_init_depth(priv)), id->qp);
	/*
	 * The kernel moves the QP (INIT again, RTR, RTS, with the depths the
	 * REP announces) before the REP, as librdmacm's ucma_modify_qp_rtr()
	 * and _rts(), in the same call.
	 */
	if (id->qp && id->qp_type != IBV_QPT_UD) {
		c->flags = SOFTCM_ACCEPT_QP;
		c->qp_fd = id->qp->context->cmd_fd;
		c->qp_handle = id->qp->handle;
	}
	return 0;
}

static int reject(struct rdma_cm_id *id, const void *private_data, uint8_t len,
		  uint8_t reason)
{
	struct softcm_id_priv *priv;
	struct softcm_reject c;

	if (!id)
		return softcm_err(EINVAL);
	priv = to_priv(id);
	memset(&c, 0, sizeof(c));
	c.handle = priv->handle;
	c.reason = reason;
	if (private_data && len) {
		memcpy(c.private_data, private_data, len);
		c.private_data_len = len;
	}
	/* A synchronous id's event stays in id->event until destroy, as librdmacm's. */
	return softcm_ioctl(priv, SOFTCM_IOCTL_REJECT, &c);
}

/* Reason 0 is the kernel's "consumer defined" (28), as rdma_cm's. */
SOFTCM_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data,
			      uint8_t private_data_len)
{
	return reject(id, private_data, private_data_len, 0);
}

SOFTCM_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
				  uint8_t private_data_len)
{
	return reject(id, private_data, private_data_len,
		      SOFTCM_REJ_VENDOR_OPTION_NOT_SUPPORTED);
}

/*
 * After CONNECT_RESPONSE, which an id without a QP gets: send the RTU.
 * librdmacm's does not wait for anything either, there being no event to
 * wait for; and refuses an id with a QP, whose RTU the library sent.
 */
SOFTCM_EXPORT int rdma_establish(struct rdma_cm_id *id)
{
	struct softcm_id_priv *priv;
	struct softcm_accept c;

	if (!id)
		return softcm_err(EINVAL);
	if (id->qp)
		return softcm_err(EINVAL);
	priv = to_priv(id);
	memset(&c, 0, sizeof(c));
	c.uid = (uintptr_t)priv;
	c.handle = priv->handle;
	c.flags = SOFTCM_ACCEPT_ESTABLISH;
	return softcm_ioctl(priv, SOFTCM_IOCTL_ACCEPT, &c);
}

/*
 * The QP goes to ERR first, flushing its work, as librdmacm's for an IB
 * transport.  A synchronous id waits for DISCONNECTED, as librdmacm's.
 */
SOFTCM_EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
	struct softcm_disconnect c = { 0 };
	struct softcm_id_priv *priv;

	if (!id)
		return softcm_err(EINVAL);
	priv = to_priv(id);
	if (softcm_qp_err(priv))
		return -1;
	c.handle = priv->handle;
	if (softcm_ioctl(priv, SOFTCM_IOCTL_DISCONNECT, &c))
		return -1;
	return softcm_wait_sync(priv);
}
