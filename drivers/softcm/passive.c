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
 * beyond the listener's backlog, or one we cannot allocate for, is
 * dropped so that the peer retries.
 *
 * Lock order: the listener's mutex, then the new id's (nested: the new id
 * is not published yet, nobody else can hold it).
 */

#include <linux/inetdevice.h>
#include <linux/memcontrol.h>
#include <linux/netdevice.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/inet_ecn.h>
#include <net/route.h>

#include "cm.h"
#include "cmahdr.h"
#include "cmproto.h"
#include "cmtime.h"
#include "conntab.h"
#include "event.h"
#include "file.h"
#include "id.h"
#include "netns.h"
#include "port.h"
#include "sockaddr.h"
#include "state.h"
#include "stats.h"
#include "trace.h"

static bool is_local(struct net *net, const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return inet_addr_type(net, ((const struct sockaddr_in *)ss)->sin_addr.s_addr) ==
		       RTN_LOCAL;
#if IS_ENABLED(CONFIG_IPV6)
	if (ss->ss_family == AF_INET6)
		return ipv6_chk_addr(net, &((const struct sockaddr_in6 *)ss)->sin6_addr,
				     NULL, 0);
#endif
	return false;
}

/* Did the packet come in over a loopback device (from this host)? */
static bool via_loopback(struct net *net, int ifindex)
{
	struct net_device *dev;
	bool ret;

	rcu_read_lock();
	dev = dev_get_by_index_rcu(net, ifindex);
	ret = dev && dev->flags & IFF_LOOPBACK;
	rcu_read_unlock();
	return ret;
}

/*
 * A request's service ID and rdma_cm header, and the listener they name;
 * the header's addresses are the packet's (or the request is refused),
 * so @src is where the request came from, with the peer's rdma_cm port.
 * Returns 0 with a referenced listener, or the REJ reason to answer with.
 */
int softcm_cm_parse_request(struct softcm_net *sn, const struct softcm_pkt *pkt,
			    u64 service_id, u16 want_ps, const u8 *pdata,
			    struct sockaddr_storage *src, struct sockaddr_storage *dst,
			    struct softcm_id **listener)
{
	bool any;
	u16 ps, port;

	*listener = NULL;
	if (softcm_service_split(service_id, &ps, &port) || ps != want_ps)
		return SOFTCM_REJ_INVALID_SERVICE_ID;
	if (softcm_cma_hdr_get(pdata, port, src, dst)) {
		/* Not rdma_cm's header: only a listener could have told. */
		memset(dst, 0, sizeof(*dst));
	} else if (!softcm_cma_hdr_matches(src, dst, &pkt->src, &pkt->dst,
					   via_loopback(sn->net, pkt->ifindex))) {
		/*
		 * The header would choose the listener and the peer address
		 * the application sees: one that lies about the packet is
		 * refused as the Linux CM refuses it.  As there, the service
		 * comes first: with nothing on the port the CM answers REJ 8
		 * before rdma_cm's handler could look at the header; with a
		 * listener, its handler fails the request (REJ 28).
		 */
		memset(dst, 0, sizeof(*dst));	/* AF_UNSPEC: whether any listens */
		softcm_port_find_listener(sn->net, ps, port, dst, pkt->ifindex, &any);
		if (!any)
			return SOFTCM_REJ_INVALID_SERVICE_ID;
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_BAD_ADDRESS);
		return SOFTCM_REJ_CONSUMER;
	} else if (dst->ss_family == AF_INET6 &&
		   ipv6_addr_type(&((struct sockaddr_in6 *)dst)->sin6_addr) &
		   IPV6_ADDR_LINKLOCAL) {
		((struct sockaddr_in6 *)dst)->sin6_scope_id = pkt->ifindex;
		((struct sockaddr_in6 *)src)->sin6_scope_id = pkt->ifindex;
	}
	*listener = softcm_port_find_listener(sn->net, ps, port, dst, pkt->ifindex, &any);
	if (*listener && !is_local(sn->net, dst)) {
		softcm_id_put(*listener);
		*listener = NULL;
	}
	if (*listener)
		return 0;
	return any ? SOFTCM_REJ_CONSUMER : SOFTCM_REJ_INVALID_SERVICE_ID;
}

/*
 * A new id for a request to @listener, locked, with its addresses, wire
 * addresses and comm IDs (ours, and @comm_id of @guid's) set, and a
 * CONNECT_REQUEST event to fill; NULL (counted) when the backlog is full
 * or memory short: the request is then dropped, and the peer retries.
 */
struct softcm_id *softcm_cm_new_request(struct softcm_id *listener,
					const struct softcm_pkt *pkt,
					const struct sockaddr_storage *src,
					const struct sockaddr_storage *dst,
					u64 guid, u32 comm_id,
					struct softcm_event_entry **event)
{
	struct softcm_net *sn = softcm_net(listener->net);
	struct mem_cgroup *old_memcg;
	struct softcm_id *id;

	lockdep_assert_held(&listener->mutex);

	if (atomic_read(&listener->requests_pending) >= listener->backlog) {
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_DROP_BACKLOG);
		return NULL;
	}
	/*
	 * What a peer makes us allocate is charged to the listener's memory
	 * cgroup, as TCP charges a request socket to its listener's: the new
	 * id (which remembers that cgroup for what it allocates later) and
	 * its event.
	 */
	old_memcg = set_active_memcg(listener->memcg);
	*event = softcm_event_alloc(SOFTCM_EVENT_CONNECT_REQUEST, 0, GFP_KERNEL);
	id = *event ? softcm_id_create(listener->net, listener->ps, 0) : NULL;
	set_active_memcg(old_memcg);
	if (!*event)
		goto err_nomem;
	if (IS_ERR(id))
		goto err_free_event;
	softcm_cm_id_init(id);
	softcm_id_register(id);	/* listed, and told of its device's changes */
	mutex_lock_nested(&id->mutex, SINGLE_DEPTH_NESTING);
	/* rdma_cm creates the id of a request directly in CONNECT. */
	id->state = SOFTCM_STATE_CONNECT;
	trace_softcm_state(id->net->ns.inum, 0, softcm_state_name(SOFTCM_STATE_IDLE),
			   softcm_state_name(SOFTCM_STATE_CONNECT));
	id->quiet = true;
	id->src = *dst;
	id->dst = *src;
	id->tos = listener->tos;
	id->dev.ifindex = pkt->ifindex;
	softcm_inaddr_set(&id->cm.wire_src, &pkt->dst);
	softcm_inaddr_set(&id->cm.wire_dst, &pkt->src);
	id->cm.ifindex = pkt->ifindex;
	if (softcm_conn_insert(id) || softcm_conn_insert_remote(id, guid, comm_id))
		goto err_abort;
	return id;

err_abort:
	softcm_cm_end(id);
	mutex_unlock(&id->mutex);
	softcm_id_abort(id);
err_free_event:
	kfree(*event);
err_nomem:
	softcm_stat_inc(&sn->stats, SOFTCM_STAT_DROP_NOMEM);
	return NULL;
}

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

static void reject_req(struct softcm_net *sn, const struct softcm_pkt *pkt,
		       const struct softcm_cm_msg *req, u16 reason)
{
	struct softcm_cm_msg *msg = kzalloc(sizeof(*msg), GFP_KERNEL);

	if (!msg)
		return;
	msg->attr = SOFTCM_CM_REJ;
	msg->hdr.tid = req->hdr.tid;
	msg->remote_comm_id = req->local_comm_id;
	msg->msg_type = SOFTCM_MSG_REQ;
	msg->reason = reason;
	softcm_cm_reply(sn, pkt, msg);
	kfree(msg);
}

static void setup_conn(struct softcm_id *id, const struct softcm_cm_msg *req)
{
	lockdep_assert_held(&id->mutex);

	req_path(id, req);
	/* The peer's traffic class, but ECN is the IP layer's, not the peer's. */
	id->cm.tos = req->traffic_class & ~INET_ECN_MASK;
	id->cm.tid = req->hdr.tid;
	id->cm.remote_qpn = req->qpn;
	id->cm.remote_psn = req->starting_psn;
	id->cm.max_retries = req->max_cm_retries;
	/* How long we wait for the peer is the peer's to say, up to a limit. */
	id->cm.timeout_ms = softcm_cm_ms(min_t(u8, req->local_cm_timeout,
					       READ_ONCE(softcm_net(id->net)->max_peer_timeout)));
	id->cm.av_timeout = softcm_cm_ack_timeout(SOFTCM_CA_ACK_DELAY,
						  id->path.packet_life_time);
	id->cm.resp_resources = req->responder_resources;
	id->cm.init_depth = req->initiator_depth;
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
	reason = softcm_cm_parse_request(sn, pkt, msg->service_id, SOFTCM_PS_TCP,
					 msg->pdata, &src, &dst, &listener);
	/* rdma_cm's ids are RC: a request for another transport does not match. */
	if (!reason && msg->transport_type != 0) {
		softcm_id_put(listener);
		reason = SOFTCM_REJ_CONSUMER;
	}
	if (reason) {
		reject_req(sn, pkt, msg, reason);
		return;
	}

	mutex_lock(&listener->mutex);
	if (listener->state != SOFTCM_STATE_LISTEN) {
		reject_req(sn, pkt, msg, SOFTCM_REJ_CONSUMER);
		goto out;
	}
	id = softcm_cm_new_request(listener, pkt, &src, &dst, msg->ca_guid,
				   msg->local_comm_id, &e);
	if (!id)
		goto out;
	setup_conn(id, msg);
	req_param(&e->ev.param, msg);
	softcm_file_publish_request(listener, id, e);
out:
	mutex_unlock(&listener->mutex);
	softcm_id_put(listener);
}

int softcm_cm_accept(struct softcm_id *id, const struct softcm_accept *c)
{
	const struct softcm_conn_param *p = &c->param;
	struct softcm_cm_msg *rep;
	int ret;

	lockdep_assert_held(&id->mutex);

	if (c->flags & ~SOFTCM_ACCEPT_ESTABLISH)
		return -EINVAL;
	/* "No parameters": refused rather than ignored, so they may mean something later. */
	if (c->flags & SOFTCM_ACCEPT_ESTABLISH)
		return memchr_inv(p, 0, sizeof(*p)) ? -EINVAL : softcm_cm_establish(id);
	if (id->state != SOFTCM_STATE_CONNECT)
		return -EINVAL;
	if (id->ps == SOFTCM_PS_UDP) {
		if (id->cm.state != SOFTCM_CM_SIDR_REQ_RCVD ||
		    p->private_data_len > SOFTCM_SIDR_REP_PRIVATE_DATA || p->reserved0)
			return -EINVAL;
		ret = softcm_cm_sidr_answer(id, SOFTCM_SIDR_SUCCESS, p->qp_num,
					    p->private_data, p->private_data_len);
		if (ret)
			return ret;	/* nothing was sent: nothing changed */
		WRITE_ONCE(id->uid, c->uid);
		id->quiet = false;
		id->conn_up = true;	/* answered: a UD peer is known */
		return 0;
	}
	if ((id->cm.state != SOFTCM_CM_REQ_RCVD && id->cm.state != SOFTCM_CM_MRA_REQ_SENT) ||
	    p->private_data_len > SOFTCM_REP_PRIVATE_DATA || p->reserved0)
		return -EINVAL;

	rep = softcm_cm_msg(id, SOFTCM_CM_REP);
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
	rep->ca_guid = softcm_net(id->net)->guid;
	memcpy(rep->pdata, p->private_data, p->private_data_len);
	rep->pdata_len = p->private_data_len;

	ret = softcm_cm_send_retry(id, rep, id->cm.timeout_ms, id->cm.max_retries);
	kfree(rep);
	if (ret)
		return ret;	/* nothing was sent: the request is still ours to answer */
	softcm_cm_set_state(id, SOFTCM_CM_REP_SENT);
	/* From now on the id's events are the application's. */
	WRITE_ONCE(id->uid, c->uid);
	id->quiet = false;
	return 0;
}

int softcm_cm_reject(struct softcm_id *id, const struct softcm_reject *c)
{
	u8 reason = c->reason ?: SOFTCM_REJ_CONSUMER;
	u8 msg_type;

	lockdep_assert_held(&id->mutex);

	if (c->reserved0 || (reason != SOFTCM_REJ_CONSUMER &&
			     reason != SOFTCM_REJ_VENDOR_OPTION_NOT_SUPPORTED))
		return -EINVAL;
	if (id->state != SOFTCM_STATE_CONNECT)
		return -EINVAL;
	switch (id->cm.state) {
	case SOFTCM_CM_SIDR_REQ_RCVD:
		if (c->private_data_len > SOFTCM_SIDR_REP_PRIVATE_DATA)
			return -EINVAL;
		softcm_cm_sidr_answer(id, SOFTCM_SIDR_REJECT, 0, c->private_data,
				      c->private_data_len);
		softcm_cm_ended(id);
		return 0;
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
	softcm_cm_end(id);
	softcm_cm_ended(id);
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
		softcm_cm_stop(id);
		softcm_cm_set_state(id, SOFTCM_CM_ESTABLISHED);
		softcm_cm_report(id, SOFTCM_EVENT_ESTABLISHED, 0, NULL);
	} else {
		/* The Linux CM counts an RTU in any other state as a duplicate. */
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_DUPLICATES);
	}
	softcm_id_unlock_put(id);
}
