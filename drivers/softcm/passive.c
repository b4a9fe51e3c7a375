// SPDX-License-Identifier: GPL-2.0
/*
 * The passive side: a REQ (or SIDR_REQ) is matched to a listener as
 * rdma_cm matches it (cma_ib_req_handler(): service ID, then the
 * addresses in rdma_cm's private-data header), and becomes a new id in
 * the listener's file, in state CONNECT, reported by a CONNECT_REQUEST;
 * the application answers with rdma_accept() (REP) or rdma_reject()
 * (REJ), and the RTU establishes the connection.
 *
 * REJ reasons as the Linux CM gives them: 8 when nothing listens on the
 * service ID, 28 when a listener exists but does not match; a request
 * beyond the listener's backlog is held (backlog.c), and one beyond what
 * it may hold, or one we cannot allocate for, is dropped so that the peer
 * retries.  Matching a request to its listener and making its id is
 * cmcore.c's, shared with sidr.c.
 */

#include <linux/slab.h>
#include <net/inet_ecn.h>

#include "backlog.h"
#include "cmproto.h"
#include "cmtime.h"
#include "conntab.h"
#include "event.h"
#include "id.h"
#include "netns.h"
#include "sockaddr.h"
#include "stats.h"

static void req_param(struct softcm_conn_param *p, const struct softcm_cm_msg *req)
{
	p->qp_num = req->qpn;
	/* the peer's view, turned into ours */
	p->responder_resources = req->initiator_depth;
	p->initiator_depth = req->responder_resources;
	p->flow_control = req->flow_control;
	p->retry_count = req->retry_count;
	p->rnr_retry_count = req->rnr_retry_count;
	p->srq = req->srq;
	p->private_data_len = SOFTCM_REQ_PRIVATE_DATA;
	memcpy(p->private_data, req->pdata + SOFTCM_CMA_HDR_SIZE, SOFTCM_REQ_PRIVATE_DATA);
}

/* The path as the REQ describes it, seen from our end (for QUERY_ROUTE). */
static void req_path(struct softcm_id *id, const struct softcm_cm_msg *req)
{
	struct softcm_path *p = &id->path;

	memcpy(p->sgid, req->remote_gid, sizeof(p->sgid));
	memcpy(p->dgid, req->local_gid, sizeof(p->dgid));
	p->flow_label = req->flow_label;
	p->mtu = req->path_mtu;
	p->hop_limit = req->hop_limit;
	p->traffic_class = req->traffic_class;
	p->packet_life_time = req->local_ack_timeout ? req->local_ack_timeout - 1 : 0;
}

/* A REQ we have seen: its answer was lost, or the application is slow. */
static void dup_req(struct softcm_net *sn, struct softcm_id *id,
		    const struct softcm_pkt *pkt)
{
	mutex_lock(&id->mutex);
	if (!softcm_sa_equal((const struct sockaddr *)&pkt->src, &id->cm.wire_dst.sa) ||
	    !id->cm.in_remote) {
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_DROP_PEER);
		goto out;
	}
	softcm_stat_inc(&sn->stats, SOFTCM_STAT_DUPLICATES);
	switch (id->cm.state) {
	case SOFTCM_CM_REQ_RCVD:
		softcm_cm_set_state(id, SOFTCM_CM_MRA_REQ_SENT);
		fallthrough;
	case SOFTCM_CM_MRA_REQ_SENT:
		softcm_cm_send_mra(id, SOFTCM_MSG_REQ);
		break;
	case SOFTCM_CM_REP_SENT:
	case SOFTCM_CM_MRA_REP_RCVD:
		softcm_cm_resend(id);
		break;
	case SOFTCM_CM_TIMEWAIT:
		/* The peer reuses a connection we still remember. */
		softcm_cm_send_rej(id, SOFTCM_MSG_REQ, SOFTCM_REJ_STALE_CONN, NULL, 0);
		break;
	default:
		break;
	}
out:
	mutex_unlock(&id->mutex);
}

static void setup_conn(struct softcm_id *id, const struct softcm_cm_msg *req)
{
	lockdep_assert_held(&id->mutex);

	req_path(id, req);
	/* The peer's traffic class, but ECN is the IP layer's, not the peer's. */
	id->cm.tos = req->traffic_class & ~INET_ECN_MASK;
	id->cm.tid = req->hdr.tid;
	id->cm.remote_qpn = req->qpn;
	id->cm.max_retries = req->max_cm_retries;
	/* How long we wait for the peer is the peer's to say, up to a limit. */
	id->cm.timeout_ms = softcm_cm_ms(min_t(u8, req->local_cm_timeout,
					       READ_ONCE(softcm_net(id->net)->max_peer_timeout)));
	id->cm.av_timeout = softcm_cm_ack_timeout(SOFTCM_CA_ACK_DELAY,
						  id->path.packet_life_time);
	/*
	 * For our QP, as cm_req_handler() keeps them: we send from the
	 * peer's starting PSN, its view turned into ours, and the ACK
	 * timeout is the path's packet life time plus one, as the Linux CM
	 * makes its address vector's from the REQ.
	 */
	id->cm.remote_psn = req->starting_psn;
	id->cm.responder_resources = req->initiator_depth;
	id->cm.initiator_depth = req->responder_resources;
	id->cm.retry_count = req->retry_count;
	id->cm.rnr_retry_count = req->rnr_retry_count;
	id->cm.qp_timeout = min(id->path.packet_life_time + 1, 31);
	softcm_cm_set_state(id, SOFTCM_CM_REQ_RCVD);
}

void softcm_cm_rcv_req(struct softcm_net *sn, const struct softcm_pkt *pkt,
		       const struct softcm_cm_msg *msg)
{
	struct sockaddr_storage src, dst;
	struct softcm_id *listener, *id;
	struct softcm_event_entry *e;
	int reason;

	id = softcm_conn_find_remote(sn, msg->ca_guid, msg->local_comm_id);
	if (id) {
		dup_req(sn, id, pkt);
		softcm_id_put(id);
		return;
	}
	/*
	 * A new connection from a QP one of ours is still connected to: the
	 * peer has reused it, and the old connection is stale (cm_match_req(),
	 * before any listener is looked for).
	 */
	id = softcm_conn_find_remote_qp(sn, msg->ca_guid, msg->qpn);
	if (id && softcm_cm_end_stale(id, pkt)) {
		softcm_cm_reject_rcvd(sn, pkt, msg, SOFTCM_MSG_REQ, SOFTCM_REJ_STALE_CONN);
		return;
	}
	reason = softcm_cm_parse_request(sn, pkt, msg->service_id, SOFTCM_PS_TCP,
					 msg->pdata, &src, &dst, &listener);
	/* rdma_cm's ids are RC: a request for another transport does not match. */
	if (!reason && msg->transport_type != 0) {
		softcm_id_put(listener);
		reason = SOFTCM_REJ_CONSUMER;
	}
	if (reason) {
		softcm_cm_reject_rcvd(sn, pkt, msg, SOFTCM_MSG_REQ, reason);
		return;
	}

	mutex_lock(&listener->mutex);
	if (listener->state != SOFTCM_STATE_LISTEN) {
		softcm_cm_reject_rcvd(sn, pkt, msg, SOFTCM_MSG_REQ, SOFTCM_REJ_CONSUMER);
		goto out;
	}
	if (!softcm_backlog_admit(listener))
		goto out;	/* beyond the backlog and what it may hold */
	id = softcm_cm_new_request(listener, pkt, &src, &dst, msg->ca_guid,
				   msg->local_comm_id, &e);
	if (!id)
		goto out;
	setup_conn(id, msg);
	req_param(&e->ev.param, msg);
	softcm_backlog_queue(listener, id, e);	/* reported, or held */
out:
	mutex_unlock(&listener->mutex);
	softcm_id_put(listener);
}

/*
 * rdma_accept() of an RC request: the REP.  softcm_cm_accept_check()
 * (cm.c) has found the request unanswered and the parameters valid.
 */
int softcm_cm_passive_accept(struct softcm_id *id, const struct softcm_accept *c)
{
	const struct softcm_conn_param *p = &c->param;
	struct softcm_cm_msg *rep;
	int ret;

	lockdep_assert_held(&id->mutex);

	rep = softcm_cm_alloc_msg(id, SOFTCM_CM_REP);
	if (!rep)
		return -ENOMEM;
	id->cm.qpn = p->qp_num & 0xffffff;
	rep->qpn = id->cm.qpn;
	rep->starting_psn = id->psn;
	rep->responder_resources = p->responder_resources;
	rep->initiator_depth = p->initiator_depth;
	rep->target_ack_delay = SOFTCM_CA_ACK_DELAY;
	/*
	 * As cma_accept_ib() and cm_format_rep() take them: rnr_retry_count
	 * clamped to 7, srq as "nonzero", flow_control's low bit.
	 */
	rep->flow_control = p->flow_control & 1;
	rep->rnr_retry_count = min_t(u8, 7, p->rnr_retry_count);
	rep->srq = p->srq ? 1 : 0;
	/* the QP ACCEPT moved is ours, and none of ours has an SRQ */
	if (c->flags & SOFTCM_ACCEPT_QP)
		rep->srq = 0;
	rep->ca_guid = softcm_net(id->net)->conntab.guid;
	memcpy(rep->pdata, p->private_data, p->private_data_len);
	rep->pdata_len = p->private_data_len;

	ret = softcm_cm_send_retry(id, rep, id->cm.timeout_ms, id->cm.max_retries);
	kfree(rep);
	if (ret)
		return ret;	/* nothing was sent: the request is still ours to answer */
	softcm_cm_set_state(id, SOFTCM_CM_REP_SENT);
	/*
	 * Our end is a QP: a later REQ from the peer's QP means this
	 * connection is stale.  Another of ours may hold the number, if two
	 * REQs from it came before either was answered: that one keeps it.
	 */
	if (id->cm.qp_backed)
		softcm_conn_insert_remote_qp(id);
	/* What we answered is what our QP gets (ib_send_cm_rep()). */
	id->cm.responder_resources = p->responder_resources;
	id->cm.initiator_depth = p->initiator_depth;
	/* From now on the id's events are the application's. */
	WRITE_ONCE(id->uid, c->uid);
	id->unaccepted = false;
	return 0;
}

/* rdma_reject() of an RC request or reply: the REJ, with @reason. */
int softcm_cm_passive_reject(struct softcm_id *id, const struct softcm_reject *c, u8 reason)
{
	u8 msg_type;

	lockdep_assert_held(&id->mutex);

	switch (id->cm.state) {
	case SOFTCM_CM_REQ_RCVD:
	case SOFTCM_CM_MRA_REQ_SENT:
		msg_type = SOFTCM_MSG_REQ;
		break;
	case SOFTCM_CM_REP_RCVD:
	case SOFTCM_CM_MRA_REP_SENT:
		msg_type = SOFTCM_MSG_REP;
		break;
	default:
		return -EINVAL;
	}
	if (c->private_data_len > SOFTCM_REJ_PRIVATE_DATA)
		return -EINVAL;
	softcm_cm_send_rej(id, msg_type, reason, c->private_data, c->private_data_len);
	softcm_cm_release_ids(id);
	softcm_cm_mark_peer_gone(id);
	return 0;
}

void softcm_cm_rcv_rtu(struct softcm_net *sn, const struct softcm_pkt *pkt,
		       const struct softcm_cm_msg *msg)
{
	struct softcm_id *id;

	id = softcm_cm_lookup(sn, msg->remote_comm_id, msg->local_comm_id, pkt);
	if (!id)
		return;
	if (id->cm.state == SOFTCM_CM_REP_SENT || id->cm.state == SOFTCM_CM_MRA_REP_RCVD) {
		softcm_cm_cancel_retransmit(id);
		softcm_cm_set_state(id, SOFTCM_CM_ESTABLISHED);
		softcm_cm_report(id, SOFTCM_EVENT_ESTABLISHED, 0, NULL);
	} else {
		/* The Linux CM counts an RTU in any other state as a duplicate. */
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_DUPLICATES);
	}
	softcm_id_unlock_put(id);
}
