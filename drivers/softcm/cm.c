// SPDX-License-Identifier: GPL-2.0
/*
 * The IB CM on each id (IBTA Vol. 1 chapter 12), as the Linux CM runs it
 * for rdma_cm over RoCEv2: this file holds the machinery every message
 * handler uses (sending, the one retransmission timer per id, timewait,
 * events) and what both sides handle alike (REJ, MRA, DREQ, DREP,
 * disconnect and destroy).  The active side is in active.c, the passive
 * side in passive.c, service ID resolution (UD) in sidr.c.
 *
 * Everything about an id's connection is under the id's mutex.  Received
 * messages are handled in the namespace's receive work, timers in their
 * own work, both in process context.  A message is matched to an id by
 * our comm ID (or, for requests and REJ(TIMEOUT), the peer's) and must
 * come from the id's peer and carry the peer's comm ID once we know it:
 * nobody else can affect the connection.
 *
 * Timers: one delayed work per id, armed for a retransmission or for the
 * end of timewait.  A pending work holds a reference on the id; the work
 * acts only if it is still armed (@timer) and due (@deadline), so a cancel
 * that lost the race against a running work is harmless.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <asm/unaligned.h>

#include "addr.h"
#include "cm.h"
#include "cmproto.h"
#include "cmtime.h"
#include "conntab.h"
#include "event.h"
#include "id.h"
#include "netns.h"
#include "sockaddr.h"
#include "state.h"
#include "stats.h"
#include "trace.h"
#include "transport.h"

static struct softcm_net *sn_of(struct softcm_id *id)
{
	return softcm_net(id->net);
}

/* A transition the table forbids is a bug here, never a peer's doing. */
void softcm_cm_set_state(struct softcm_id *id, enum softcm_cm_state to)
{
	lockdep_assert_held(&id->mutex);

	WARN_ONCE(!softcm_cm_state_allowed(id->cm.state, to), "softcm: CM %s -> %s\n",
		  softcm_cm_state_name(id->cm.state), softcm_cm_state_name(to));
	trace_softcm_cm_state(id->net->ns.inum, id->handle, id->cm.local_id,
			      id->cm.remote.comm_id, softcm_cm_state_name(id->cm.state),
			      softcm_cm_state_name(to));
	id->cm.state = to;
	if (to == SOFTCM_CM_ESTABLISHED)
		id->conn_up = true;
}

/* A message of @id's connection: header, both comm IDs, transaction. */
struct softcm_cm_msg *softcm_cm_msg(struct softcm_id *id, u8 attr)
{
	struct softcm_cm_msg *msg = kzalloc(sizeof(*msg), GFP_KERNEL);

	if (!msg)
		return NULL;
	msg->attr = attr;
	msg->hdr.tid = id->cm.tid;
	msg->local_comm_id = id->cm.local_id;
	msg->remote_comm_id = id->cm.remote.comm_id;
	return msg;
}

static void count_tx(struct softcm_net *sn, u8 attr)
{
	softcm_stat_inc(&sn->stats, softcm_stat_msg(SOFTCM_STAT_TX, attr));
}

static void count_tx_msg(struct softcm_net *sn, const struct softcm_cm_msg *msg)
{
	count_tx(sn, msg->attr);
	if (msg->attr == SOFTCM_CM_REJ)
		softcm_stat_rej(&sn->stats, true, msg->reason);
}

static int xmit(struct softcm_id *id, const u8 *mad)
{
	return softcm_xmit(sn_of(id), &id->cm.wire_src.sa, &id->cm.wire_dst.sa,
			   id->cm.ifindex, id->cm.tos, mad);
}

/*
 * Send once.  A message that does not leave (no route any more) is not
 * an error the caller can act on: the peer's retransmissions or ours
 * cover it, as a lost packet.
 */
int softcm_cm_send(struct softcm_id *id, struct softcm_cm_msg *msg)
{
	u8 mad[SOFTCM_MAD_SIZE];
	int ret;

	lockdep_assert_held(&id->mutex);

	ret = softcm_wire_encode(msg, mad);
	if (ret)
		return ret;
	count_tx_msg(sn_of(id), msg);
	xmit(id, mad);
	return 0;
}

/* A message of nothing but comm IDs (RTU, DREP), sent once. */
int softcm_cm_send_bare(struct softcm_id *id, u8 attr)
{
	struct softcm_cm_msg *msg = softcm_cm_msg(id, attr);
	int ret;

	if (!msg)
		return -ENOMEM;
	ret = softcm_cm_send(id, msg);
	kfree(msg);
	return ret;
}

void softcm_cm_arm(struct softcm_id *id, unsigned int ms)
{
	unsigned long delay = msecs_to_jiffies(ms);

	lockdep_assert_held(&id->mutex);

	id->cm.deadline = jiffies + delay;
	if (!mod_delayed_work(softcm_workqueue(), &id->cm.work, delay))
		softcm_id_get(id);
}

static void disarm(struct softcm_id *id)
{
	lockdep_assert_held(&id->mutex);

	id->cm.timer = SOFTCM_CM_TIMER_NONE;
	/* Not the last reference: the caller holds one. */
	if (cancel_delayed_work(&id->cm.work))
		softcm_id_put(id);
}

/* Send and keep the message for retransmission until it is answered. */
int softcm_cm_send_retry(struct softcm_id *id, struct softcm_cm_msg *msg,
			 unsigned int timeout_ms, u8 retries)
{
	u8 *mad;
	int ret;

	lockdep_assert_held(&id->mutex);

	mad = kmalloc(SOFTCM_MAD_SIZE, GFP_KERNEL);
	if (!mad)
		return -ENOMEM;
	ret = softcm_wire_encode(msg, mad);
	if (ret) {
		kfree(mad);
		return ret;
	}
	kfree(id->cm.mad);
	id->cm.mad = mad;
	id->cm.mad_attr = msg->attr;
	id->cm.retries_left = retries;
	id->cm.timeout_ms = timeout_ms;
	count_tx_msg(sn_of(id), msg);
	xmit(id, mad);
	id->cm.timer = SOFTCM_CM_TIMER_RETRY;
	softcm_cm_arm(id, timeout_ms);
	return 0;
}

/* The message in flight again, for a duplicate of what it answers. */
void softcm_cm_resend(struct softcm_id *id)
{
	lockdep_assert_held(&id->mutex);

	if (!id->cm.mad)
		return;
	count_tx(sn_of(id), id->cm.mad_attr);
	xmit(id, id->cm.mad);
}

/* The message in flight was answered. */
void softcm_cm_stop(struct softcm_id *id)
{
	lockdep_assert_held(&id->mutex);

	disarm(id);
	kfree(id->cm.mad);
	id->cm.mad = NULL;
}

/* To a packet's sender, from no connection (anonymous REJ, DREP, ...). */
void softcm_cm_reply(struct softcm_net *sn, const struct softcm_pkt *pkt,
		     struct softcm_cm_msg *msg)
{
	u8 mad[SOFTCM_MAD_SIZE];

	if (softcm_wire_encode(msg, mad))
		return;
	count_tx_msg(sn, msg);
	softcm_xmit(sn, (const struct sockaddr *)&pkt->dst, (const struct sockaddr *)&pkt->src,
		    pkt->ifindex, 0, mad);
}

/*
 * Timewait: the comm IDs stay reserved so that late packets of this
 * connection find it, for the time IBTA derives from the path.
 */
void softcm_cm_timewait(struct softcm_id *id)
{
	/* The path's times come from the peer's REQ or REP: capped. */
	u8 t = min_t(u8, id->cm.av_timeout, READ_ONCE(sn_of(id)->max_timewait));

	lockdep_assert_held(&id->mutex);
	softcm_cm_stop(id);
	softcm_cm_set_state(id, SOFTCM_CM_TIMEWAIT);
	id->cm.timer = SOFTCM_CM_TIMER_TIMEWAIT;
	softcm_cm_arm(id, softcm_cm_ms(t));
}

/* The connection is over: back to IDLE, its comm IDs free. */
void softcm_cm_end(struct softcm_id *id)
{
	lockdep_assert_held(&id->mutex);

	softcm_cm_stop(id);
	if (id->cm.state != SOFTCM_CM_IDLE)
		softcm_cm_set_state(id, SOFTCM_CM_IDLE);
	softcm_conn_remove(id);
}

/* The peer address is no longer a connection's: getpeername says so. */
void softcm_cm_ended(struct softcm_id *id)
{
	lockdep_assert_held(&id->mutex);

	id->conn_over = true;
}

/* An event for the application, unless it has let go of the id. */
void softcm_cm_report(struct softcm_id *id, enum softcm_event_type type,
		      int status, const struct softcm_conn_param *param)
{
	struct softcm_event_entry *e;
	struct mem_cgroup *old_memcg;

	lockdep_assert_held(&id->mutex);

	if (id->state == SOFTCM_STATE_DESTROYING)
		return;
	/* Charged to the id's memory cgroup, from whatever context reports. */
	old_memcg = set_active_memcg(id->memcg);
	e = softcm_event_alloc(type, status, GFP_KERNEL);
	set_active_memcg(old_memcg);
	if (!e) {
		softcm_stat_inc(&sn_of(id)->stats, SOFTCM_STAT_DROP_NOMEM);
		return;
	}
	if (param)
		e->ev.param = *param;
	softcm_event_queue(id, e);
}

/* DISCONNECTED once per connection: the first DREQ, DREP or timeout. */
static void disconnected(struct softcm_id *id, int status)
{
	if (!softcm_id_set_state(id, SOFTCM_STATE_CONNECT, SOFTCM_STATE_DISCONNECT))
		return;
	softcm_cm_ended(id);
	softcm_cm_report(id, SOFTCM_EVENT_DISCONNECTED, status, NULL);
}

int softcm_cm_send_rej(struct softcm_id *id, u8 msg_type, u16 reason,
		       const u8 *pdata, u8 len)
{
	struct softcm_cm_msg *msg = softcm_cm_msg(id, SOFTCM_CM_REJ);
	int ret;

	if (!msg)
		return -ENOMEM;
	msg->msg_type = msg_type;
	msg->reason = reason;
	if (reason == SOFTCM_REJ_TIMEOUT) {
		/* The peer finds us by our CA GUID before it knows our id. */
		put_unaligned_be64(sn_of(id)->guid, msg->info);
		msg->info_len = sizeof(u64);
	}
	if (len)
		memcpy(msg->pdata, pdata, len);
	msg->pdata_len = len;
	ret = softcm_cm_send(id, msg);
	kfree(msg);
	return ret;
}

int softcm_cm_send_mra(struct softcm_id *id, u8 msg_type)
{
	struct softcm_cm_msg *msg = softcm_cm_msg(id, SOFTCM_CM_MRA);
	int ret;

	if (!msg)
		return -ENOMEM;
	msg->msg_type = msg_type;
	msg->service_timeout = READ_ONCE(sn_of(id)->mra_timeout);
	ret = softcm_cm_send(id, msg);
	kfree(msg);
	return ret;
}

/*
 * Is this message for @id's connection: our comm ID, the peer's once we
 * know it, and the peer's address?
 */
bool softcm_cm_matches(struct softcm_id *id, u32 local_id, u32 remote_id,
		       const struct softcm_pkt *pkt)
{
	lockdep_assert_held(&id->mutex);

	if (!id->cm.local_id || id->cm.local_id != local_id)
		return false;
	if (id->cm.in_remote && remote_id != id->cm.remote.comm_id)
		return false;
	return softcm_sa_equal((const struct sockaddr *)&pkt->src, &id->cm.wire_dst.sa);
}

/*
 * The id a message names by our comm ID, locked and referenced, if the
 * message is for it; counted as dropped otherwise.  Release with
 * mutex_unlock() and softcm_id_put().
 */
struct softcm_id *softcm_cm_lookup(struct softcm_net *sn, u32 local_id,
				   u32 remote_id, const struct softcm_pkt *pkt)
{
	struct softcm_id *id = softcm_conn_find(sn, local_id);

	if (!id) {
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_DROP_UNKNOWN);
		return NULL;
	}
	mutex_lock(&id->mutex);
	if (!softcm_cm_matches(id, local_id, remote_id, pkt)) {
		softcm_stat_inc(&sn->stats, id->cm.local_id == local_id ?
				SOFTCM_STAT_DROP_PEER : SOFTCM_STAT_DROP_UNKNOWN);
		softcm_id_unlock_put(id);
		return NULL;
	}
	return id;
}

static void stale(struct softcm_net *sn)
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
	switch (id->cm.state) {
	case SOFTCM_CM_REQ_SENT:
	case SOFTCM_CM_MRA_REQ_RCVD:
	case SOFTCM_CM_REP_RCVD:
	case SOFTCM_CM_MRA_REP_SENT:
	case SOFTCM_CM_REQ_RCVD:
	case SOFTCM_CM_MRA_REQ_SENT:
		softcm_cm_end(id);
		break;
	case SOFTCM_CM_REP_SENT:
	case SOFTCM_CM_MRA_REP_RCVD:
		softcm_cm_timewait(id);
		break;
	default:
		stale(sn);
		goto out;
	}
	softcm_cm_ended(id);
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
		stale(sn);
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
		stale(sn);
		goto out;
	}
	softcm_cm_set_state(id, waiting);
	if (id->cm.timer == SOFTCM_CM_TIMER_RETRY)
		softcm_cm_arm(id, softcm_cm_ms(min_t(u8, msg->service_timeout,
						     READ_ONCE(sn->max_peer_timeout))) +
			      softcm_cm_ms(id->cm.av_timeout));
out:
	softcm_id_unlock_put(id);
}

static struct softcm_cm_msg *dreq_msg(struct softcm_id *id)
{
	struct softcm_cm_msg *msg;

	id->cm.tid = softcm_conn_new_tid(sn_of(id));
	msg = softcm_cm_msg(id, SOFTCM_CM_DREQ);
	if (msg)
		msg->qpn = id->cm.remote_qpn;
	return msg;
}

/* A DREQ for no connection still gets its DREP: the peer is done with it. */
static void drep_unknown(struct softcm_net *sn, const struct softcm_pkt *pkt,
			 const struct softcm_cm_msg *dreq)
{
	struct softcm_cm_msg *msg = kzalloc(sizeof(*msg), GFP_KERNEL);

	if (!msg)
		return;
	msg->attr = SOFTCM_CM_DREP;
	msg->hdr.tid = dreq->hdr.tid;
	msg->local_comm_id = dreq->remote_comm_id;
	msg->remote_comm_id = dreq->local_comm_id;
	softcm_cm_reply(sn, pkt, msg);
	kfree(msg);
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
		softcm_cm_stop(id);
		fallthrough;
	case SOFTCM_CM_ESTABLISHED:
		/*
		 * The DREP waits for rdma_disconnect() or destroy, as with
		 * rdma_cm.  A destroyed id is never here: destroy takes these
		 * states to timewait.
		 */
		softcm_cm_set_state(id, SOFTCM_CM_DREQ_RCVD);
		id->cm.tid = msg->hdr.tid;
		disconnected(id, 0);
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
		stale(sn);
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
		disconnected(id, 0);
	} else {
		stale(sn);
	}
	softcm_id_unlock_put(id);
}

/*
 * rdma_disconnect(): a DREQ on an established connection, the DREP that
 * a received DREQ waits for, and nothing once the connection is over.
 */
int softcm_cm_disconnect(struct softcm_id *id)
{
	struct softcm_cm_msg *msg;
	int ret;

	lockdep_assert_held(&id->mutex);

	if (id->state != SOFTCM_STATE_CONNECT && id->state != SOFTCM_STATE_DISCONNECT)
		return -EINVAL;
	switch (id->cm.state) {
	case SOFTCM_CM_ESTABLISHED:
		msg = dreq_msg(id);
		if (!msg)
			return -ENOMEM;
		softcm_cm_set_state(id, SOFTCM_CM_DREQ_SENT);
		ret = softcm_cm_send_retry(id, msg, id->cm.timeout_ms, id->cm.max_retries);
		kfree(msg);
		if (ret) {
			/* Without its retransmissions the DREQ is as if lost. */
			softcm_cm_timewait(id);
			disconnected(id, -ETIMEDOUT);
		}
		return 0;
	case SOFTCM_CM_DREQ_RCVD:
		softcm_cm_send_bare(id, SOFTCM_CM_DREP);
		softcm_cm_timewait(id);
		return 0;
	default:
		return 0;
	}
}

/* The retransmissions are exhausted. */
static void timed_out(struct softcm_id *id)
{
	lockdep_assert_held(&id->mutex);

	softcm_stat_inc(&sn_of(id)->stats, SOFTCM_STAT_TIMEOUTS);
	switch (id->cm.state) {
	case SOFTCM_CM_REQ_SENT:
	case SOFTCM_CM_MRA_REQ_RCVD:
	case SOFTCM_CM_REP_SENT:
	case SOFTCM_CM_MRA_REP_RCVD:
	case SOFTCM_CM_SIDR_REQ_SENT:
		softcm_cm_end(id);
		softcm_cm_ended(id);
		softcm_cm_report(id, SOFTCM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL);
		break;
	case SOFTCM_CM_DREQ_SENT:
		softcm_cm_timewait(id);
		disconnected(id, -ETIMEDOUT);
		break;
	default:
		softcm_cm_stop(id);
	}
}

static void timer_expired(struct softcm_id *id)
{
	enum softcm_cm_timer timer = id->cm.timer;

	lockdep_assert_held(&id->mutex);

	id->cm.timer = SOFTCM_CM_TIMER_NONE;
	if (timer == SOFTCM_CM_TIMER_TIMEWAIT) {
		softcm_cm_end(id);
		if (id->state == SOFTCM_STATE_DISCONNECT)
			softcm_cm_report(id, SOFTCM_EVENT_TIMEWAIT_EXIT, 0, NULL);
		return;
	}
	if (id->cm.retries_left && id->cm.mad) {
		id->cm.retries_left--;
		softcm_stat_inc(&sn_of(id)->stats, SOFTCM_STAT_RETRANSMITS);
		softcm_cm_resend(id);
		id->cm.timer = SOFTCM_CM_TIMER_RETRY;
		softcm_cm_arm(id, id->cm.timeout_ms);
		return;
	}
	timed_out(id);
}

static void cm_work(struct work_struct *work)
{
	struct softcm_id *id = container_of(to_delayed_work(work), struct softcm_id,
					    cm.work);

	mutex_lock(&id->mutex);
	if (id->cm.timer != SOFTCM_CM_TIMER_NONE &&
	    !time_before(jiffies, id->cm.deadline))
		timer_expired(id);
	mutex_unlock(&id->mutex);
	softcm_id_put(id);
}

void softcm_cm_id_init(struct softcm_id *id)
{
	INIT_DELAYED_WORK(&id->cm.work, cm_work);
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
		msg = dreq_msg(id);
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
	softcm_cm_end(id);
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
