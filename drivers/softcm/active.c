// SPDX-License-Identifier: GPL-2.0
/*
 * The active side of a connection: rdma_connect() sends a REQ built as
 * rdma_cm builds it for RoCEv2 (cma_connect_ib() and cm_format_req()),
 * and the REP that answers it is acknowledged with an RTU.  There is no
 * QP to move to RTR/RTS in between: as rdma_cm does for an id without a
 * QP, the REP is reported as CONNECT_RESPONSE and the application sends
 * the RTU with rdma_establish().
 */

#include <linux/slab.h>

#include "cmproto.h"
#include "cmtime.h"
#include "conntab.h"
#include "id.h"
#include "netns.h"
#include "stats.h"

#define LID_PERMISSIVE	0xffff

static void fill_req(struct softcm_id *id, struct softcm_cm_msg *req,
		     const struct softcm_conn_param *p, u8 resp_timeout)
{
	const struct softcm_path *path = &id->path;

	req->ca_guid = softcm_net(id->net)->conntab.guid;
	req->qpn = id->cm.qpn;
	req->responder_resources = p->responder_resources;
	req->initiator_depth = p->initiator_depth;
	req->remote_cm_timeout = resp_timeout;
	req->local_cm_timeout = resp_timeout;
	req->transport_type = 0;	/* RC */
	/*
	 * As cma_connect_ib() and cm_format_req() take the parameters: the
	 * retry counts clamped to 7, srq as "nonzero", and flow_control a
	 * one-bit field that keeps the low bit.  The caller's copy is
	 * written back unchanged.
	 */
	req->flow_control = p->flow_control & 1;
	req->starting_psn = id->psn;
	req->retry_count = min_t(u8, 7, p->retry_count);
	req->rnr_retry_count = min_t(u8, 7, p->rnr_retry_count);
	req->max_cm_retries = id->cm.max_retries;
	req->srq = p->srq ? 1 : 0;
	req->pkey = SOFTCM_PKEY_DEFAULT;
	req->path_mtu = path->mtu;
	/* A routed path has no LIDs: permissive ones, not subnet-local. */
	if (path->hop_limit > 1) {
		req->local_lid = LID_PERMISSIVE;
		req->remote_lid = LID_PERMISSIVE;
	} else {
		req->subnet_local = 1;
	}
	memcpy(req->local_gid, path->sgid, sizeof(req->local_gid));
	memcpy(req->remote_gid, path->dgid, sizeof(req->remote_gid));
	req->flow_label = path->flow_label;
	req->traffic_class = path->traffic_class;
	req->hop_limit = path->hop_limit;
	req->local_ack_timeout = softcm_cm_ack_timeout(SOFTCM_CA_ACK_DELAY,
						       path->packet_life_time);
}

/* rdma_connect() on an RC id: the REQ. */
int softcm_cm_active_connect(struct softcm_id *id, const struct softcm_connect *c)
{
	u8 resp_timeout = READ_ONCE(softcm_net(id->net)->cm_response_timeout);
	struct softcm_cm_msg *req;

	lockdep_assert_held(&id->mutex);

	req = softcm_cm_begin_request(id, c, SOFTCM_CM_REQ, SOFTCM_REQ_PRIVATE_DATA);
	if (IS_ERR(req))
		return PTR_ERR(req);
	fill_req(id, req, &c->param, resp_timeout);
	/* As the Linux CM keeps them for the QP until the REP says more. */
	id->cm.responder_resources = c->param.responder_resources;
	id->cm.initiator_depth = c->param.initiator_depth;
	id->cm.retry_count = req->retry_count;
	return softcm_cm_send_request(id, req, SOFTCM_CM_REQ_SENT,
				      softcm_cm_req_timeout_ms(id->path.packet_life_time,
							       resp_timeout));
}

static void rep_param(struct softcm_conn_param *p, const struct softcm_cm_msg *rep)
{
	memset(p, 0, sizeof(*p));
	p->qp_num = rep->qpn;
	/* the peer's view, turned into ours */
	p->responder_resources = rep->initiator_depth;
	p->initiator_depth = rep->responder_resources;
	p->flow_control = rep->flow_control;
	p->rnr_retry_count = rep->rnr_retry_count;
	p->srq = rep->srq;
	p->private_data_len = SOFTCM_REP_PDATA;
	memcpy(p->private_data, rep->pdata, SOFTCM_REP_PDATA);
}

/* A REP again: our RTU (or the MRA for it) was lost. */
static void dup_rep(struct softcm_net *sn, struct softcm_id *id)
{
	lockdep_assert_held(&id->mutex);

	softcm_stat_inc(&sn->stats, SOFTCM_STAT_DUPLICATES);
	switch (id->cm.state) {
	case SOFTCM_CM_ESTABLISHED:
		softcm_cm_send_bare(id, SOFTCM_CM_RTU);
		break;
	case SOFTCM_CM_REP_RCVD:
		softcm_cm_set_state(id, SOFTCM_CM_MRA_REP_SENT);
		fallthrough;
	case SOFTCM_CM_MRA_REP_SENT:
		softcm_cm_send_mra(id, SOFTCM_MSG_REP);
		break;
	default:
		break;
	}
}

void softcm_cm_rcv_rep(struct softcm_net *sn, const struct softcm_pkt *pkt,
		       const struct softcm_cm_msg *msg)
{
	struct softcm_conn_param *p;
	struct softcm_id *id, *old;

	id = softcm_cm_lookup(sn, msg->remote_comm_id, msg->local_comm_id, pkt);
	if (!id)
		return;
	if (id->cm.state != SOFTCM_CM_REQ_SENT && id->cm.state != SOFTCM_CM_MRA_REQ_RCVD) {
		if (id->cm.in_remote)
			dup_rep(sn, id);
		else
			softcm_stat_inc(&sn->stats, SOFTCM_STAT_DROP_STALE);
		goto out;
	}
	/*
	 * The peer answers from a QP one of our connections is still
	 * connected to: REJ(stale) for this REP, and the old one ends
	 * (cm_rep_handler()).  This id keeps waiting, as the Linux CM's: its
	 * REQ comes again, to a peer now in timewait, which rejects it as
	 * stale.
	 */
	old = softcm_conn_find_remote_qp(sn, msg->ca_guid, msg->qpn);
	if (old && softcm_cm_end_stale(old, pkt)) {
		softcm_cm_reject_rcvd(sn, pkt, msg, SOFTCM_MSG_REP, SOFTCM_REJ_STALE_CONN);
		goto out;
	}
	p = kmalloc(sizeof(*p), GFP_KERNEL);
	if (!p || softcm_conn_insert_remote(id, msg->ca_guid, msg->local_comm_id)) {
		/* Dropped: the REP comes again. */
		softcm_stat_inc(&sn->stats, p ? SOFTCM_STAT_DROP_STALE : SOFTCM_STAT_DROP_NOMEM);
		kfree(p);
		goto out;
	}
	softcm_cm_cancel_retransmit(id);
	id->cm.remote_qpn = msg->qpn;
	id->cm.av_timeout = softcm_cm_ack_timeout(msg->target_ack_delay,
						  id->path.packet_life_time);
	/* Our QP sends from the PSN the peer announced (cm_rep_handler()). */
	id->cm.remote_psn = msg->starting_psn;
	id->cm.responder_resources = msg->initiator_depth;
	id->cm.initiator_depth = msg->responder_resources;
	id->cm.rnr_retry_count = msg->rnr_retry_count;
	id->cm.qp_timeout = id->cm.av_timeout;
	softcm_cm_set_state(id, SOFTCM_CM_REP_RCVD);
	if (id->cm.qp_backed)
		softcm_conn_insert_remote_qp(id);
	rep_param(p, msg);
	/* No QP to move to RTS: the RTU waits for rdma_establish(). */
	softcm_cm_report(id, SOFTCM_EVENT_CONNECT_RESPONSE, 0, p);
	kfree(p);
out:
	softcm_id_unlock_put(id);
}

/*
 * rdma_establish() after CONNECT_RESPONSE: the RTU, and nothing to report.
 * softcm_cm_accept_check() (cm.c) has found the id waiting for it.
 */
int softcm_cm_establish(struct softcm_id *id)
{
	lockdep_assert_held(&id->mutex);

	softcm_cm_send_bare(id, SOFTCM_CM_RTU);
	softcm_cm_set_state(id, SOFTCM_CM_ESTABLISHED);
	return 0;
}
