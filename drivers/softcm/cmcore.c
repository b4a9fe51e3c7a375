// SPDX-License-Identifier: GPL-2.0
/*
 * The CM's machinery, under active.c, passive.c and sidr.c and beside
 * cm.c's entry points (IBTA Vol. 1 chapter 12, as the Linux CM runs it
 * for rdma_cm over RoCEv2): an id's CM state, building, sending and
 * retransmitting its messages, timewait, reporting events, matching a
 * received message to its id, starting a connect, and turning a request
 * into a new id for a listener.  The side files call only this file, and
 * never each other: what differs by side or port space is dispatched in
 * cm.c.
 *
 * Everything about an id's connection is under the id's mutex.  A message
 * is matched to an id by our comm ID (or, for requests and REJ(TIMEOUT),
 * the peer's) and must come from the id's peer and carry the peer's comm
 * ID once we know it: nobody else can affect the connection.
 *
 * Timers: one delayed work per id, armed for a retransmission or the end
 * of timewait.  A pending work holds a
 * reference on the id; the work acts only if it is still armed (@timer)
 * and due (@deadline), so a cancel that lost the race against a running
 * work is harmless.
 *
 * Lock order for a request: the listener's mutex, then the new id's
 * (nested: the new id is not published yet, nobody else can hold it).
 */

#include <linux/inetdevice.h>
#include <linux/memcontrol.h>
#include <linux/netdevice.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/route.h>

#include "cm.h"
#include "cmahdr.h"
#include "cmproto.h"
#include "cmtime.h"
#include "compat.h"
#include "conntab.h"
#include "core.h"
#include "event.h"
#include "id.h"
#include "netns.h"
#include "port.h"
#include "sockaddr.h"
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
struct softcm_cm_msg *softcm_cm_alloc_msg(struct softcm_id *id, u8 attr)
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
	struct softcm_cm_msg *msg = softcm_cm_alloc_msg(id, attr);
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
	id->cm.resent = 0;
	id->cm.give_up = jiffies +
		msecs_to_jiffies(softcm_cm_retry_budget_ms(timeout_ms, retries));
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
void softcm_cm_cancel_retransmit(struct softcm_id *id)
{
	lockdep_assert_held(&id->mutex);

	disarm(id);
	kfree(id->cm.mad);
	id->cm.mad = NULL;
}

/*
 * An answer from no connection (anonymous REJ, DREP, SIDR_REP) to a
 * received @rcvd: a message of type @attr in @rcvd's transaction, its
 * comm IDs @rcvd's the other way round (as the Linux CM's cm_issue_rej()),
 * for the caller to fill and softcm_cm_reply() to send.
 */
struct softcm_cm_msg *softcm_cm_alloc_reply(const struct softcm_cm_msg *rcvd, u8 attr)
{
	struct softcm_cm_msg *msg = kzalloc(sizeof(*msg), GFP_KERNEL);

	if (!msg)
		return NULL;
	msg->attr = attr;
	msg->hdr.tid = rcvd->hdr.tid;
	msg->local_comm_id = rcvd->remote_comm_id;
	msg->remote_comm_id = rcvd->local_comm_id;
	return msg;
}

/* A REJ with @reason of @rcvd, a message of type @msg_type, from no connection. */
void softcm_cm_reject_rcvd(struct softcm_net *sn, const struct softcm_pkt *pkt,
			   const struct softcm_cm_msg *rcvd, u8 msg_type, u16 reason)
{
	struct softcm_cm_msg *msg = softcm_cm_alloc_reply(rcvd, SOFTCM_CM_REJ);

	if (!msg)
		return;
	msg->msg_type = msg_type;
	msg->reason = reason;
	softcm_cm_reply(sn, pkt, msg);
}

/* Send @msg to @pkt's sender, and free it. */
void softcm_cm_reply(struct softcm_net *sn, const struct softcm_pkt *pkt,
		     struct softcm_cm_msg *msg)
{
	u8 mad[SOFTCM_MAD_SIZE];

	if (!softcm_wire_encode(msg, mad)) {
		count_tx_msg(sn, msg);
		softcm_xmit(sn, (const struct sockaddr *)&pkt->dst,
			    (const struct sockaddr *)&pkt->src, pkt->ifindex, 0, mad);
	}
	kfree(msg);
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
	softcm_cm_cancel_retransmit(id);
	/* as the Linux CM's cm_enter_timewait(): no longer a live connection */
	softcm_conn_remove_remote_qp(id);
	softcm_cm_set_state(id, SOFTCM_CM_TIMEWAIT);
	id->cm.timer = SOFTCM_CM_TIMER_TIMEWAIT;
	softcm_cm_arm(id, softcm_cm_ms(t));
}

/* The connection is over: back to IDLE, its comm IDs free. */
void softcm_cm_release_ids(struct softcm_id *id)
{
	lockdep_assert_held(&id->mutex);

	softcm_cm_cancel_retransmit(id);
	if (id->cm.state != SOFTCM_CM_IDLE)
		softcm_cm_set_state(id, SOFTCM_CM_IDLE);
	softcm_conn_remove(id);
}

/* A DREQ of the connection, in a transaction of its own; NULL: no memory. */
struct softcm_cm_msg *softcm_cm_dreq_msg(struct softcm_id *id)
{
	struct softcm_cm_msg *msg;

	lockdep_assert_held(&id->mutex);

	id->cm.tid = softcm_conn_new_tid(sn_of(id));
	msg = softcm_cm_alloc_msg(id, SOFTCM_CM_DREQ);
	if (msg)
		msg->qpn = id->cm.remote_qpn;
	return msg;
}

/*
 * The DREQ that ends an established connection, kept for retransmission;
 * -ENOMEM, the connection as it was, if there is no memory for it.
 */
int softcm_cm_send_dreq(struct softcm_id *id)
{
	struct softcm_cm_msg *msg = softcm_cm_dreq_msg(id);
	int ret;

	if (!msg)
		return -ENOMEM;
	softcm_cm_set_state(id, SOFTCM_CM_DREQ_SENT);
	ret = softcm_cm_send_retry(id, msg, id->cm.timeout_ms, id->cm.max_retries);
	kfree(msg);
	if (ret) {
		/* Without its retransmissions the DREQ is as if lost. */
		softcm_cm_timewait(id);
		softcm_cm_report_disconnected(id, -ETIMEDOUT);
	}
	return 0;
}

/*
 * The Linux CM's stale-connection check (cm_match_req(), cm_rep_handler()):
 * a new REQ or REP (@pkt) names the peer QP of @old, a live connection
 * whose end here is a QP (softcm_conn_find_remote_qp()), so the peer has
 * reused that QP and @old is over: a DREQ ends it if it is established
 * (ib_send_cm_dreq() refuses any other state), if there is memory for
 * one, as there.  Unlike the Linux CM's, only a message from @old's peer
 * address counts: the GUID and QPN are what the message claims, and
 * anyone could claim them to end a connection.  True if @old was stale,
 * and the message is to be rejected with REJ(stale connection).  Drops
 * the caller's reference.  The caller may hold another id's mutex (a REP
 * handler, its own id's): @old is taken nested under it.
 */
bool softcm_cm_end_stale(struct softcm_id *old, const struct softcm_pkt *pkt)
{
	bool stale;

	mutex_lock_nested(&old->mutex, SINGLE_DEPTH_NESTING);
	stale = old->cm.in_remote_qp &&
		softcm_sa_equal((const struct sockaddr *)&pkt->src, &old->cm.wire_dst.sa);
	if (stale && old->state == SOFTCM_STATE_CONNECT &&
	    old->cm.state == SOFTCM_CM_ESTABLISHED)
		softcm_cm_send_dreq(old);
	softcm_id_unlock_put(old);
	return stale;
}

/* The peer address is no longer a connection's: getpeername says so. */
void softcm_cm_mark_peer_gone(struct softcm_id *id)
{
	lockdep_assert_held(&id->mutex);

	id->peer_gone = true;
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
void softcm_cm_report_disconnected(struct softcm_id *id, int status)
{
	lockdep_assert_held(&id->mutex);

	if (!softcm_id_cas_state(id, SOFTCM_STATE_CONNECT, SOFTCM_STATE_DISCONNECT))
		return;
	softcm_cm_mark_peer_gone(id);
	softcm_cm_report(id, SOFTCM_EVENT_DISCONNECTED, status, NULL);
}

int softcm_cm_send_rej(struct softcm_id *id, u8 msg_type, u16 reason,
		       const u8 *pdata, u8 len)
{
	struct softcm_cm_msg *msg = softcm_cm_alloc_msg(id, SOFTCM_CM_REJ);
	int ret;

	if (!msg)
		return -ENOMEM;
	msg->msg_type = msg_type;
	msg->reason = reason;
	if (reason == SOFTCM_REJ_TIMEOUT) {
		/* The peer finds us by our CA GUID before it knows our id. */
		put_unaligned_be64(sn_of(id)->conntab.guid, msg->info);
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
	struct softcm_cm_msg *msg = softcm_cm_alloc_msg(id, SOFTCM_CM_MRA);
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
		softcm_cm_release_ids(id);
		softcm_cm_mark_peer_gone(id);
		softcm_cm_report(id, SOFTCM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL);
		break;
	case SOFTCM_CM_DREQ_SENT:
		softcm_cm_timewait(id);
		softcm_cm_report_disconnected(id, -ETIMEDOUT);
		break;
	default:
		softcm_cm_cancel_retransmit(id);
	}
}

static void timer_expired(struct softcm_id *id)
{
	enum softcm_cm_timer timer = id->cm.timer;

	lockdep_assert_held(&id->mutex);

	id->cm.timer = SOFTCM_CM_TIMER_NONE;
	if (timer == SOFTCM_CM_TIMER_TIMEWAIT) {
		softcm_cm_release_ids(id);
		if (id->state == SOFTCM_STATE_DISCONNECT)
			softcm_cm_report(id, SOFTCM_EVENT_TIMEWAIT_EXIT, 0, NULL);
		return;
	}
	if (id->cm.retries_left && id->cm.mad && time_before(jiffies, id->cm.give_up)) {
		unsigned int left = jiffies_to_msecs(id->cm.give_up - jiffies);

		id->cm.retries_left--;
		if (id->cm.resent < U8_MAX)
			id->cm.resent++;
		softcm_stat_inc(&sn_of(id)->stats, SOFTCM_STAT_RETRANSMITS);
		softcm_cm_resend(id);
		id->cm.timer = SOFTCM_CM_TIMER_RETRY;
		/* Backing off, within the budget. */
		softcm_cm_arm(id, min(softcm_cm_backoff_ms(id->cm.timeout_ms,
							   id->cm.resent), left));
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

/* The connection's packet addresses: the resolved ones. */
static void wire_from_route(struct softcm_id *id)
{
	softcm_inaddr_set(&id->cm.wire_src, &id->src);
	softcm_inaddr_set(&id->cm.wire_dst, &id->dst);
	id->cm.ifindex = id->dev.ifindex;
	id->cm.tos = id->path.traffic_class;
}

/*
 * Everything a connect (REQ or SIDR_REQ) needs before anything is sent:
 * the namespace's socket, a comm ID, the state change.  Undone by
 * undo_start().
 */
static int start(struct softcm_id *id, const struct softcm_connect *c)
{
	struct softcm_net *sn = softcm_net(id->net);
	int ret;

	lockdep_assert_held(&id->mutex);

	ret = softcm_transport_get(sn);
	if (ret)
		return ret;
	wire_from_route(id);
	id->cm.qpn = c->param.qp_num & 0xffffff;
	id->cm.max_retries = READ_ONCE(sn->cm_retries);
	id->cm.av_timeout = min(id->path.packet_life_time + 1, 31);
	id->cm.tid = softcm_conn_new_tid(sn);
	id->peer_gone = false;
	id->conn_up = false;
	ret = softcm_conn_insert(id);
	if (ret)
		return ret;
	softcm_id_cas_state(id, SOFTCM_STATE_ROUTE_RESOLVED, SOFTCM_STATE_CONNECT);
	return 0;
}

static void undo_start(struct softcm_id *id)
{
	lockdep_assert_held(&id->mutex);

	softcm_cm_release_ids(id);
	softcm_id_cas_state(id, SOFTCM_STATE_CONNECT, SOFTCM_STATE_ROUTE_RESOLVED);
}

/*
 * The first half of a connect, REQ or SIDR_REQ alike: start() and the
 * message, with the service ID, rdma_cm's header and at most @max_pdata
 * bytes of the application's private data.  The caller fills in what is
 * its own and sends it with softcm_cm_send_request().
 */
struct softcm_cm_msg *softcm_cm_begin_request(struct softcm_id *id,
					      const struct softcm_connect *c,
					      u8 attr, u8 max_pdata)
{
	struct softcm_cm_msg *req;
	int ret;

	lockdep_assert_held(&id->mutex);

	if (c->param.private_data_len > max_pdata || c->param.reserved0)
		return ERR_PTR(-EINVAL);
	ret = start(id, c);
	if (ret)
		return ERR_PTR(ret);
	ret = -ENOMEM;
	req = softcm_cm_alloc_msg(id, attr);
	if (!req)
		goto err_undo;
	req->service_id = softcm_service_id(id->ps, softcm_addr_port(&id->dst));
	ret = softcm_cma_hdr_put(req->pdata, &id->src, &id->dst);
	if (ret)
		goto err_free;
	memcpy(req->pdata + SOFTCM_CMA_HDR_SIZE, c->param.private_data,
	       c->param.private_data_len);
	req->pdata_len = SOFTCM_CMA_HDR_SIZE + c->param.private_data_len;
	return req;

err_free:
	kfree(req);
err_undo:
	undo_start(id);
	return ERR_PTR(ret);
}

/*
 * The second half: @req goes out in CM state @state, and again every
 * @timeout_ms until answered.  Consumes @req; on failure nothing of the
 * connect is left.
 */
int softcm_cm_send_request(struct softcm_id *id, struct softcm_cm_msg *req,
			   enum softcm_cm_state state, unsigned int timeout_ms)
{
	int ret;

	lockdep_assert_held(&id->mutex);

	softcm_cm_set_state(id, state);
	ret = softcm_cm_send_retry(id, req, timeout_ms, id->cm.max_retries);
	kfree(req);
	if (ret)
		undo_start(id);
	return ret;
}

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
 * CONNECT_REQUEST event to fill; NULL (counted) when memory is short: the
 * request is then dropped, and the peer retries.  The caller has checked
 * the listener's backlog (softcm_backlog_admit()).
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
	softcm_id_start_as_request(id);
	id->unaccepted = true;
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
	softcm_cm_release_ids(id);
	mutex_unlock(&id->mutex);
	softcm_id_abort(id);
err_free_event:
	kfree(*event);
err_nomem:
	softcm_stat_inc(&sn->stats, SOFTCM_STAT_DROP_NOMEM);
	return NULL;
}
