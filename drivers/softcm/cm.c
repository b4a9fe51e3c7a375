// SPDX-License-Identifier: GPL-2.0
/*
 * The IB CM's entry points (IBTA Vol. 1 chapter 12, as the Linux CM runs
 * it for rdma_cm over RoCEv2): what the device layer asks of an id
 * (connect, accept, reject, disconnect, destroy) and the transport's one
 * receive upcall, each dispatched by port space, flags and message to
 * active.c, passive.c or sidr.c; and what both sides handle alike (REJ,
 * MRA, DREQ, DREP and the timers).  The machinery under all of them is
 * cmcore.c.
 *
 * Everything about an id's connection is under the id's mutex.  Received
 * messages are handled in the namespace's receive work, timers in their
 * own work, both in process context.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/slab.h>
#include <linux/udp.h>

#include "cm.h"
#include "cmproto.h"
#include "cmtime.h"
#include "compat.h"
#include "conntab.h"
#include "core.h"
#include "id.h"
#include "netns.h"
#include "stats.h"
#include "trace.h"
#include "transport.h"

static void count_stale(struct softcm_net *sn)
{
	softcm_stat_inc(&sn->stats, SOFTCM_STAT_DROP_STALE);
}

static void rej_param(struct softcm_conn_param *p, const struct softcm_cm_msg *msg)
{
	memset(p, 0, sizeof(*p));
	p->private_data_len = SOFTCM_REJ_PDATA;
	memcpy(p->private_data, msg->pdata, SOFTCM_REJ_PDATA);
}

static void rcv_rej(struct softcm_net *sn, const struct softcm_pkt *pkt,
		    const struct softcm_cm_msg *msg)
{
	struct softcm_conn_param *p;
	struct softcm_id *id;

	/* A requester that gave up names itself by its GUID and comm ID. */
	if (msg->reason == SOFTCM_REJ_TIMEOUT && msg->info_len >= sizeof(u64) &&
	    !msg->remote_comm_id) {
		id = softcm_conn_find_remote(sn, get_unaligned_be64(msg->info),
					     msg->local_comm_id);
		if (!id) {
			softcm_stat_inc(&sn->stats, SOFTCM_STAT_DROP_UNKNOWN);
			return;
		}
		mutex_lock(&id->mutex);
		if (!softcm_cm_matches(id, id->cm.local_id, msg->local_comm_id, pkt)) {
			softcm_stat_inc(&sn->stats, SOFTCM_STAT_DROP_PEER);
			softcm_id_unlock_put(id);
			return;
		}
	} else {
		/* Its own comm ID is checked only once we know it. */
		id = softcm_cm_lookup(sn, msg->remote_comm_id, msg->local_comm_id, pkt);
		if (!id)
			return;
	}

	p = kmalloc(sizeof(*p), GFP_KERNEL);
	/*
	 * Where the Linux CM goes (cm_rej_handler()): before a connection
	 * is settled, back to IDLE, unless the peer calls it stale, when
	 * its comm IDs stay reserved in timewait; once we have accepted
	 * the peer's REP, or it ours and the connection is up, through
	 * timewait whatever the reason.  rdma_cm reports every one of
	 * these as REJECTED while the id is connecting or connected, an
	 * established one included.
	 */
	switch (id->cm.state) {
	case SOFTCM_CM_REQ_SENT:
	case SOFTCM_CM_MRA_REQ_RCVD:
	case SOFTCM_CM_REP_SENT:
	case SOFTCM_CM_MRA_REP_RCVD:
	case SOFTCM_CM_REQ_RCVD:
	case SOFTCM_CM_MRA_REQ_SENT:
		if (msg->reason == SOFTCM_REJ_STALE_CONN)
			softcm_cm_timewait(id);
		else
			softcm_cm_release_ids(id);
		break;
	case SOFTCM_CM_REP_RCVD:
	case SOFTCM_CM_MRA_REP_SENT:
	case SOFTCM_CM_ESTABLISHED:
	case SOFTCM_CM_DREQ_SENT:
		softcm_cm_timewait(id);
		break;
	default:
		count_stale(sn);
		goto out;
	}
	softcm_cm_mark_peer_gone(id);
	if (p)
		rej_param(p, msg);
	softcm_cm_report(id, SOFTCM_EVENT_REJECTED, msg->reason, p);
out:
	kfree(p);
	softcm_id_unlock_put(id);
}

/*
 * The peer needs more time: wait for its service timeout (plus a round
 * trip) before the next retransmission, as the Linux MAD layer does.
 */
static void rcv_mra(struct softcm_net *sn, const struct softcm_pkt *pkt,
		    const struct softcm_cm_msg *msg)
{
	enum softcm_cm_state sent, waiting;
	struct softcm_id *id;

	id = softcm_cm_lookup(sn, msg->remote_comm_id, msg->local_comm_id, pkt);
	if (!id)
		return;
	/* Exactly the message we sent: LAP (type 2) is not ours, 3 is nothing. */
	if (msg->msg_type == SOFTCM_MSG_REQ) {
		sent = SOFTCM_CM_REQ_SENT;
		waiting = SOFTCM_CM_MRA_REQ_RCVD;
	} else if (msg->msg_type == SOFTCM_MSG_REP) {
		sent = SOFTCM_CM_REP_SENT;
		waiting = SOFTCM_CM_MRA_REP_RCVD;
	} else {
		count_stale(sn);
		goto out;
	}
	/*
	 * Only the first MRA delays the retransmission, as in the Linux CM
	 * (cm_mra_handler()): one that re-armed the timer each time would
	 * let the peer, or whoever can pass for it, hold the message
	 * forever.  The delay the peer asks for is capped, like every time
	 * a peer chooses.
	 */
	if (id->cm.state == waiting) {
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_DUPLICATES);
		goto out;
	}
	if (id->cm.state != sent) {
		count_stale(sn);
		goto out;
	}
	softcm_cm_set_state(id, waiting);
	if (id->cm.timer == SOFTCM_CM_TIMER_RETRY) {
		unsigned int ms = softcm_cm_ms(min_t(u8, msg->service_timeout,
						     READ_ONCE(sn->max_peer_timeout))) +
				  softcm_cm_ms(id->cm.av_timeout);

		/*
		 * The peer is busy, not gone: the budget grows by the wait it
		 * asked for, and the backoff starts over after it, as the
		 * Linux MAD layer resets it on an MRA.
		 */
		id->cm.give_up += msecs_to_jiffies(ms);
		id->cm.resent = 0;
		softcm_cm_arm(id, ms);
	}
out:
	softcm_id_unlock_put(id);
}

/* A DREQ for no connection still gets its DREP: the peer is done with it. */
static void drep_unknown(struct softcm_net *sn, const struct softcm_pkt *pkt,
			 const struct softcm_cm_msg *dreq)
{
	struct softcm_cm_msg *msg = softcm_cm_alloc_reply(dreq, SOFTCM_CM_DREP);

	if (msg)
		softcm_cm_reply(sn, pkt, msg);
}

static void rcv_dreq(struct softcm_net *sn, const struct softcm_pkt *pkt,
		     const struct softcm_cm_msg *msg)
{
	struct softcm_id *id = softcm_conn_find(sn, msg->remote_comm_id);

	if (!id) {
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_DROP_UNKNOWN);
		drep_unknown(sn, pkt, msg);
		return;
	}
	softcm_id_put(id);
	id = softcm_cm_lookup(sn, msg->remote_comm_id, msg->local_comm_id, pkt);
	if (!id)
		return;
	/* The DREQ names our QP: one of another connection is not for us. */
	if (msg->qpn != id->cm.qpn) {
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_DROP_UNKNOWN);
		goto out;
	}
	switch (id->cm.state) {
	case SOFTCM_CM_REP_SENT:
	case SOFTCM_CM_MRA_REP_RCVD:
	case SOFTCM_CM_DREQ_SENT:
		/* our REP or DREQ is answered, by a crossing DREQ */
		softcm_cm_cancel_retransmit(id);
		fallthrough;
	case SOFTCM_CM_ESTABLISHED:
		/*
		 * The DREP waits for rdma_disconnect() or destroy, as with
		 * rdma_cm.  A destroyed id is never here: destroy takes these
		 * states to timewait.
		 */
		softcm_cm_set_state(id, SOFTCM_CM_DREQ_RCVD);
		id->cm.tid = msg->hdr.tid;
		softcm_cm_report_disconnected(id, 0);
		break;
	case SOFTCM_CM_TIMEWAIT:
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_DUPLICATES);
		id->cm.tid = msg->hdr.tid;
		softcm_cm_send_bare(id, SOFTCM_CM_DREP);
		break;
	case SOFTCM_CM_DREQ_RCVD:
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_DUPLICATES);
		break;
	default:
		count_stale(sn);
	}
out:
	softcm_id_unlock_put(id);
}

static void rcv_drep(struct softcm_net *sn, const struct softcm_pkt *pkt,
		     const struct softcm_cm_msg *msg)
{
	struct softcm_id *id;

	id = softcm_cm_lookup(sn, msg->remote_comm_id, msg->local_comm_id, pkt);
	if (!id)
		return;
	if (id->cm.state == SOFTCM_CM_DREQ_SENT || id->cm.state == SOFTCM_CM_DREQ_RCVD) {
		softcm_cm_timewait(id);
		softcm_cm_report_disconnected(id, 0);
	} else {
		count_stale(sn);
	}
	softcm_id_unlock_put(id);
}

/*
 * rdma_connect().  SOFTCM_CONNECT_RESPONSE is accepted and means nothing:
 * CONNECT_RESPONSE is what every connection gets now, as under rdma_cm.
 */
int softcm_cm_connect(struct softcm_id *id, const struct softcm_connect *c)
{
	lockdep_assert_held(&id->mutex);

	if (id->state != SOFTCM_STATE_ROUTE_RESOLVED || c->flags & ~SOFTCM_CONNECT_RESPONSE)
		return -EINVAL;
	if (id->ps == SOFTCM_PS_UDP)
		return softcm_cm_sidr_connect(id, c);
	return softcm_cm_active_connect(id, c);
}

/*
 * Every EINVAL of ACCEPT on an RC id, found without sending or changing
 * anything: ACCEPT with SOFTCM_ACCEPT_QP calls it before it moves the QP
 * (ucmd.c), so that a refused answer leaves a working QP as it was, and
 * softcm_cm_accept() calls it again under the same hold of the mutex.
 * With SOFTCM_ACCEPT_QP, @qpn is that QP's number: a REP must announce
 * it (param.qp_num), an RTU must follow the REQ that announced it.  A
 * SIDR_REP's own checks are softcm_cm_sidr_accept()'s.
 */
int softcm_cm_accept_check(struct softcm_id *id, const struct softcm_accept *c, u32 qpn)
{
	const struct softcm_conn_param *p = &c->param;
	bool with_qp = c->flags & SOFTCM_ACCEPT_QP;

	lockdep_assert_held(&id->mutex);

	if (c->flags & ~(SOFTCM_ACCEPT_ESTABLISH | SOFTCM_ACCEPT_QP))
		return -EINVAL;
	/* a UD id's answer is a SIDR reply: no connection for a QP to follow */
	if (with_qp && id->ps == SOFTCM_PS_UDP)
		return -EINVAL;
	if (c->flags & SOFTCM_ACCEPT_ESTABLISH) {
		/* "No parameters": refused, not ignored, so they may mean something later. */
		if (memchr_inv(p, 0, sizeof(*p)))
			return -EINVAL;
		if (id->state != SOFTCM_STATE_CONNECT ||
		    (id->cm.state != SOFTCM_CM_REP_RCVD &&
		     id->cm.state != SOFTCM_CM_MRA_REP_SENT))
			return -EINVAL;
		/* the peer's QP was set up for the QP our REQ announced */
		if (with_qp && qpn != id->cm.qpn)
			return -EINVAL;
		return 0;
	}
	if (id->state != SOFTCM_STATE_CONNECT)
		return -EINVAL;
	if (id->ps == SOFTCM_PS_UDP)
		return 0;
	if ((id->cm.state != SOFTCM_CM_REQ_RCVD && id->cm.state != SOFTCM_CM_MRA_REQ_SENT) ||
	    p->private_data_len > SOFTCM_REP_PRIVATE_DATA || p->reserved0)
		return -EINVAL;
	/* the REP announces the QP that moves, no other */
	if (with_qp && p->qp_num != qpn)
		return -EINVAL;
	return 0;
}

/*
 * rdma_accept() of a request, or rdma_establish() after CONNECT_RESPONSE;
 * @qpn as for softcm_cm_accept_check().
 */
int softcm_cm_accept(struct softcm_id *id, const struct softcm_accept *c, u32 qpn)
{
	int ret;

	lockdep_assert_held(&id->mutex);

	ret = softcm_cm_accept_check(id, c, qpn);
	if (ret)
		return ret;
	if (c->flags & SOFTCM_ACCEPT_ESTABLISH)
		return softcm_cm_establish(id);
	if (id->ps == SOFTCM_PS_UDP)
		return softcm_cm_sidr_accept(id, c);
	return softcm_cm_passive_accept(id, c);
}

/* rdma_reject(): of a request (either port space), or of a REP. */
int softcm_cm_reject(struct softcm_id *id, const struct softcm_reject *c)
{
	u8 reason = c->reason ?: SOFTCM_REJ_CONSUMER;

	lockdep_assert_held(&id->mutex);

	if (c->reserved0 || (reason != SOFTCM_REJ_CONSUMER &&
			     reason != SOFTCM_REJ_VENDOR_OPTION_NOT_SUPPORTED))
		return -EINVAL;
	if (id->state != SOFTCM_STATE_CONNECT)
		return -EINVAL;
	if (id->cm.state == SOFTCM_CM_SIDR_REQ_RCVD)
		return softcm_cm_sidr_reject(id, c);
	return softcm_cm_passive_reject(id, c, reason);
}

/*
 * rdma_disconnect(): a DREQ on an established connection, the DREP that
 * a received DREQ waits for, and nothing once the connection is over.
 */
int softcm_cm_disconnect(struct softcm_id *id)
{
	lockdep_assert_held(&id->mutex);

	if (id->state != SOFTCM_STATE_CONNECT && id->state != SOFTCM_STATE_DISCONNECT)
		return -EINVAL;
	switch (id->cm.state) {
	case SOFTCM_CM_ESTABLISHED:
		return softcm_cm_send_dreq(id);
	case SOFTCM_CM_DREQ_RCVD:
		softcm_cm_send_bare(id, SOFTCM_CM_DREP);
		softcm_cm_timewait(id);
		return 0;
	default:
		return 0;
	}
}

/*
 * The application let go of @id (state DESTROYING): end its connection
 * as the Linux CM's cm_destroy_id() does.  A connection that must pass
 * through timewait keeps the id until then.
 */
void softcm_cm_destroy(struct softcm_id *id)
{
	struct softcm_cm_msg *msg;

	lockdep_assert_held(&id->mutex);

	switch (id->cm.state) {
	case SOFTCM_CM_REQ_SENT:
	case SOFTCM_CM_MRA_REQ_RCVD:
		softcm_cm_send_rej(id, SOFTCM_MSG_OTHER, SOFTCM_REJ_TIMEOUT, NULL, 0);
		break;
	case SOFTCM_CM_REQ_RCVD:
	case SOFTCM_CM_MRA_REQ_SENT:
		softcm_cm_send_rej(id, SOFTCM_MSG_REQ, SOFTCM_REJ_CONSUMER, NULL, 0);
		break;
	case SOFTCM_CM_REP_RCVD:
	case SOFTCM_CM_MRA_REP_SENT:
		softcm_cm_send_rej(id, SOFTCM_MSG_REP, SOFTCM_REJ_CONSUMER, NULL, 0);
		break;
	case SOFTCM_CM_REP_SENT:
	case SOFTCM_CM_MRA_REP_RCVD:
		softcm_cm_send_rej(id, SOFTCM_MSG_OTHER, SOFTCM_REJ_CONSUMER, NULL, 0);
		softcm_cm_timewait(id);
		return;
	case SOFTCM_CM_ESTABLISHED:
		/* One DREQ, no retransmissions: nobody waits for the answer. */
		msg = softcm_cm_dreq_msg(id);
		if (msg) {
			softcm_cm_send(id, msg);
			kfree(msg);
		}
		softcm_cm_set_state(id, SOFTCM_CM_DREQ_SENT);
		softcm_cm_timewait(id);
		return;
	case SOFTCM_CM_DREQ_SENT:
		softcm_cm_timewait(id);
		return;
	case SOFTCM_CM_DREQ_RCVD:
		softcm_cm_send_bare(id, SOFTCM_CM_DREP);
		softcm_cm_timewait(id);
		return;
	case SOFTCM_CM_TIMEWAIT:
		return;
	case SOFTCM_CM_SIDR_REQ_RCVD:
		softcm_cm_sidr_answer(id, SOFTCM_SIDR_REJECT, 0, NULL, 0);
		break;
	default:
		break;
	}
	softcm_cm_release_ids(id);
}

/* A connection of a destroyed id (in timewait, say) that must end now. */
static void drop_conn(struct softcm_id *id)
{
	mutex_lock(&id->mutex);
	id->cm.timer = SOFTCM_CM_TIMER_NONE;
	mutex_unlock(&id->mutex);
	if (cancel_delayed_work_sync(&id->cm.work))
		softcm_id_put(id);
	mutex_lock(&id->mutex);
	softcm_conn_remove(id);
	mutex_unlock(&id->mutex);
	softcm_id_put(id);
}

/*
 * The namespace goes, its transport closed already.  Only connections in
 * timewait whose ids userspace destroyed can remain: every other id pins
 * the namespace.  When the module goes away they go now rather than at
 * the end of their timewait.  Nothing adds to the table any more, so
 * walks until one finds nothing take them all.
 */
void softcm_cm_net_uninit(struct softcm_net *sn)
{
	struct softcm_conn_iter iter;
	struct softcm_id *id;
	bool found;

	do {
		found = false;
		softcm_conn_iter_enter(sn, &iter);
		while ((id = softcm_conn_take_one(&iter))) {
			drop_conn(id);
			found = true;
		}
		softcm_conn_iter_exit(&iter);
	} while (found);
	/*
	 * A work that lost a race with the cancellations above (or was
	 * queued by a packet before the transport closed) may still hold
	 * an id whose release counts it in this namespace: let it finish
	 * before the namespace's state goes.
	 */
	flush_workqueue(softcm_workqueue());
}

/* Where a queued packet came from, from its IP header. */
static void pkt_of(struct sk_buff *skb, struct softcm_pkt *pkt)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->ifindex = softcm_rx_cb(skb)->ifindex;
	if (ip_hdr(skb)->version == 4) {
		struct sockaddr_in *s = (struct sockaddr_in *)&pkt->src;
		struct sockaddr_in *d = (struct sockaddr_in *)&pkt->dst;

		s->sin_family = AF_INET;
		d->sin_family = AF_INET;
		s->sin_addr.s_addr = ip_hdr(skb)->saddr;
		d->sin_addr.s_addr = ip_hdr(skb)->daddr;
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&pkt->src;
		struct sockaddr_in6 *d = (struct sockaddr_in6 *)&pkt->dst;

		s->sin6_family = AF_INET6;
		d->sin6_family = AF_INET6;
		s->sin6_addr = ipv6_hdr(skb)->saddr;
		d->sin6_addr = ipv6_hdr(skb)->daddr;
		/* A link-local peer is reached over the link it came from. */
		if (ipv6_addr_type(&s->sin6_addr) & IPV6_ADDR_LINKLOCAL) {
			s->sin6_scope_id = pkt->ifindex;
			d->sin6_scope_id = pkt->ifindex;
		}
	}
}

/* One received CM MAD, checked by the transport; the skb stays the caller's. */
void softcm_cm_rcv(struct softcm_net *sn, struct sk_buff *skb)
{
	const u8 *mad = skb_transport_header(skb) + sizeof(struct udphdr) +
			SOFTCM_BTH_SIZE + SOFTCM_DETH_SIZE;
	struct softcm_cm_msg *msg;
	struct softcm_pkt pkt;
	int ret;

	pkt_of(skb, &pkt);
	msg = kmalloc(sizeof(*msg), GFP_KERNEL);
	if (!msg) {
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_DROP_NOMEM);
		softcm_trace_mad(sn, false, (struct sockaddr *)&pkt.src, mad, -ENOMEM);
		return;
	}
	ret = softcm_wire_decode(mad, SOFTCM_MAD_SIZE, msg);
	softcm_trace_mad(sn, false, (struct sockaddr *)&pkt.src, mad, ret);
	if (ret) {
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_DROP_MAD);
		goto out;
	}
	softcm_stat_inc(&sn->stats, softcm_stat_msg(SOFTCM_STAT_RX, msg->attr));
	if (msg->attr == SOFTCM_CM_REJ)
		softcm_stat_rej(&sn->stats, false, msg->reason);

	switch (msg->attr) {
	case SOFTCM_CM_REQ:
		softcm_cm_rcv_req(sn, &pkt, msg);
		break;
	case SOFTCM_CM_MRA:
		rcv_mra(sn, &pkt, msg);
		break;
	case SOFTCM_CM_REJ:
		rcv_rej(sn, &pkt, msg);
		break;
	case SOFTCM_CM_REP:
		softcm_cm_rcv_rep(sn, &pkt, msg);
		break;
	case SOFTCM_CM_RTU:
		softcm_cm_rcv_rtu(sn, &pkt, msg);
		break;
	case SOFTCM_CM_DREQ:
		rcv_dreq(sn, &pkt, msg);
		break;
	case SOFTCM_CM_DREP:
		rcv_drep(sn, &pkt, msg);
		break;
	case SOFTCM_CM_SIDR_REQ:
		softcm_cm_rcv_sidr_req(sn, &pkt, msg);
		break;
	case SOFTCM_CM_SIDR_REP:
		softcm_cm_rcv_sidr_rep(sn, &pkt, msg);
		break;
	}
out:
	kfree(msg);
}
