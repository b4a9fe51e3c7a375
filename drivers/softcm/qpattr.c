// SPDX-License-Identifier: GPL-2.0
/*
 * INIT_QP_ATTR: the attributes that move an id's QP to INIT, RTR or RTS,
 * as rdma_init_qp_attr() computes them for RoCE.  Before a connection
 * exchange only INIT is known, from the id's device (cma_ib_init_qp_attr():
 * port, P_Key index and no remote access); once a REQ is sent or received
 * the exchange gives what the Linux CM's ib_cm_init_qp_attr() gives, state
 * by state, and what it does not allow is EINVAL here too.
 *
 * The PSNs follow the Linux CM: the starting PSN a side puts in its REQ
 * or REP is the one its own QP receives from (rdma_init_qp_attr() sets
 * rq_psn to the id's seq_num), and the peer sends from it (its sq_psn is
 * the starting PSN it received).  A peer running the Linux rdma_cm
 * therefore sends exactly what our QP expects, and expects what ours
 * sends.
 *
 * UD ids have no connection: INIT gives rdma_cm's Q_Key, RTR and RTS
 * what librdmacm applies (the state, and for RTS a send PSN of 0).
 */

#include <linux/errno.h>
#include <linux/lockdep.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>
#include <uapi/linux/softcm.h>

#include "gid.h"
#include "id.h"
#include "netns.h"
#include "qpattr.h"
#include "sockaddr.h"

#define INIT_MASK	(IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT)
#define CM_RTR_MASK	(IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | \
			 IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER)
#define CM_RTS_MASK	(IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | \
			 IB_QP_MAX_QP_RD_ATOMIC | IB_QP_TIMEOUT)

/*
 * The id has a device, as rdma_cm's ids get one: bound to an address of
 * the namespace, explicitly, by address resolution or by a request.  A
 * wildcard has none (ucma answers EINVAL without a device).
 */
static bool has_device(const struct softcm_id *id)
{
	return !softcm_addr_any(&id->src);
}

/* A REQ is out: ib_cm_init_qp_attr() answers for INIT only. */
static bool cm_requested(enum softcm_cm_state state)
{
	return state == SOFTCM_CM_REQ_SENT || state == SOFTCM_CM_MRA_REQ_RCVD;
}

/* The peer's QP number and PSN are known: INIT, RTR and RTS. */
static bool cm_has_peer(enum softcm_cm_state state)
{
	switch (state) {
	case SOFTCM_CM_REQ_RCVD:
	case SOFTCM_CM_MRA_REQ_SENT:
	case SOFTCM_CM_REP_RCVD:
	case SOFTCM_CM_MRA_REP_SENT:
	case SOFTCM_CM_REP_SENT:
	case SOFTCM_CM_MRA_REP_RCVD:
	case SOFTCM_CM_ESTABLISHED:
		return true;
	default:
		return false;
	}
}

/* An RC id that has not begun a connection: cma_ib_init_qp_attr(). */
static bool before_connection(const struct softcm_id *id)
{
	switch (id->state) {
	case SOFTCM_STATE_IDLE:
	case SOFTCM_STATE_ADDR_QUERY:
	case SOFTCM_STATE_ADDR_RESOLVED:
	case SOFTCM_STATE_ROUTE_QUERY:
	case SOFTCM_STATE_ROUTE_RESOLVED:
	case SOFTCM_STATE_ADDR_BOUND:
	case SOFTCM_STATE_LISTEN:
		return id->cm.state == SOFTCM_CM_IDLE;
	default:
		return false;
	}
}

static int init_attr(struct softcm_id *id, u32 *mask, struct softcm_qp_attr *attr)
{
	if (!has_device(id))
		return -EINVAL;
	attr->port_num = SOFTCM_PORT_NUM;
	attr->pkey_index = 0;		/* the default P_Key, RoCE's only one */
	*mask = INIT_MASK;
	return 0;
}

static int ud_attr(struct softcm_id *id, u32 *mask, struct softcm_qp_attr *attr)
{
	if (!has_device(id))
		return -EINVAL;
	switch (attr->qp_state) {
	case IB_QPS_INIT:
		init_attr(id, mask, attr);
		attr->qkey = SOFTCM_UDP_QKEY;
		*mask |= IB_QP_QKEY;
		break;
	case IB_QPS_RTR:
		*mask = IB_QP_STATE;
		break;
	default:
		/* The IBTA's RTR -> RTS of a UD QP needs a send PSN: 0. */
		attr->sq_psn = 0;
		*mask = IB_QP_STATE | IB_QP_SQ_PSN;
		break;
	}
	return 0;
}

static int rc_init_attr(struct softcm_id *id, u32 *mask, struct softcm_qp_attr *attr)
{
	int ret;

	if (before_connection(id)) {
		ret = init_attr(id, mask, attr);
		*mask |= IB_QP_ACCESS_FLAGS;	/* and none granted */
		return ret;
	}
	if (!cm_requested(id->cm.state) && !cm_has_peer(id->cm.state))
		return -EINVAL;
	attr->port_num = SOFTCM_PORT_NUM;
	attr->pkey_index = 0;
	/* as cm_init_qp_init_attr(): READs and atomics share the resources */
	attr->qp_access_flags = IB_ACCESS_REMOTE_WRITE;
	if (id->cm.responder_resources)
		attr->qp_access_flags |= IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC;
	*mask = INIT_MASK | IB_QP_ACCESS_FLAGS;
	return 0;
}

/*
 * The address vector: the path, with the GID table's index of our
 * source address, the one the REQ named.  An address that has gone since
 * has no entry, and our QP no source to send from: EADDRNOTAVAIL.
 */
static int cm_av(struct softcm_id *id, struct softcm_ah_attr *ah)
{
	const struct softcm_path *path = &id->path;
	int index;

	index = softcm_gid_find(softcm_net(id->net), path->sgid);
	if (index < 0)
		return -EADDRNOTAVAIL;
	memcpy(ah->dgid, path->dgid, sizeof(ah->dgid));
	ah->flow_label = path->flow_label;
	ah->sgid_index = index;
	ah->hop_limit = path->hop_limit;
	ah->traffic_class = path->traffic_class;
	ah->is_global = 1;
	ah->port_num = SOFTCM_PORT_NUM;
	return 0;
}

/* cm_init_qp_rtr_attr(), with rdma_init_qp_attr()'s rq_psn. */
static int cm_rtr_attr(struct softcm_id *id, u32 *mask, struct softcm_qp_attr *attr)
{
	int ret = cm_av(id, &attr->ah_attr);

	if (ret)
		return ret;
	attr->path_mtu = id->path.mtu;
	attr->dest_qp_num = id->cm.remote_qpn;
	attr->rq_psn = id->psn;
	attr->max_dest_rd_atomic = id->cm.responder_resources;
	attr->min_rnr_timer = 0;
	*mask = CM_RTR_MASK;
	return 0;
}

/* cm_init_qp_rts_attr(), with rdma_init_qp_attr()'s ACK timeout. */
static void cm_rts_attr(struct softcm_id *id, u32 *mask, struct softcm_qp_attr *attr)
{
	attr->sq_psn = id->cm.remote_psn;
	attr->retry_cnt = id->cm.retry_count;
	attr->rnr_retry = id->cm.rnr_retry_count;
	attr->max_rd_atomic = id->cm.initiator_depth;
	attr->timeout = id->ack_timeout_set ? id->ack_timeout : id->cm.qp_timeout;
	*mask = CM_RTS_MASK;
}

static int rc_attr(struct softcm_id *id, u32 *mask, struct softcm_qp_attr *attr)
{
	if (attr->qp_state == IB_QPS_INIT)
		return rc_init_attr(id, mask, attr);
	if (!cm_has_peer(id->cm.state))
		return -EINVAL;
	if (attr->qp_state == IB_QPS_RTR)
		return cm_rtr_attr(id, mask, attr);
	cm_rts_attr(id, mask, attr);
	return 0;
}

int softcm_qpattr_init(struct softcm_id *id, struct softcm_init_qp_attr *c)
{
	struct softcm_qp_attr *attr = &c->attr;

	lockdep_assert_held(&id->mutex);

	if (c->reserved0)
		return -EINVAL;
	if (c->qp_state != IB_QPS_INIT && c->qp_state != IB_QPS_RTR &&
	    c->qp_state != IB_QPS_RTS)
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = c->qp_state;
	c->attr_mask = 0;
	if (id->ps == SOFTCM_PS_UDP)
		return ud_attr(id, &c->attr_mask, attr);
	return rc_attr(id, &c->attr_mask, attr);
}
