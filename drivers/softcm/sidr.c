// SPDX-License-Identifier: GPL-2.0
/*
 * Service ID resolution for RDMA_PS_UDP ids (udaddy's flow): the active
 * side's SIDR_REQ carries rdma_cm's header like a REQ; the listener's
 * accept or reject answers with a SIDR_REP, which gives the active side
 * ESTABLISHED with the peer's QPN and Q_Key, or UNREACHABLE.  No
 * connection follows, so both sides' comm IDs are freed at the answer.
 *
 * A SIDR_REQ carries no CA GUID: duplicates are recognised by the request
 * ID and the sender's address instead.
 */

#include <linux/net.h>
#include <linux/siphash.h>
#include <linux/slab.h>

#include "backlog.h"
#include "cmproto.h"
#include "cmtime.h"
#include "conntab.h"
#include "event.h"
#include "file.h"
#include "file.h"
#include "id.h"
#include "netns.h"
#include "stats.h"

static siphash_key_t sender_secret __read_mostly;

/*
 * Stands in for the GUID a SIDR_REQ lacks: the sender's address and
 * family, hashed with a secret key so that no peer can choose an address
 * (or a REQ's CA GUID) whose key collides with another sender's and have
 * that sender's requests taken for duplicates of its own.
 */
static u64 sender_key(const struct sockaddr_storage *ss)
{
	struct {
		struct in6_addr addr;
		u32 family;
	} k = { .family = ss->ss_family };

	net_get_random_once(&sender_secret, sizeof(sender_secret));
	if (ss->ss_family == AF_INET)
		memcpy(&k.addr, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	else
		k.addr = ((const struct sockaddr_in6 *)ss)->sin6_addr;
	/* 48 bits of it under a prefix of our own, as before. */
	return (u64)0x5349 << 48 | (siphash(&k, sizeof(k), &sender_secret) & GENMASK_ULL(47, 0));
}

/* rdma_connect() on a UD id: the SIDR_REQ. */
int softcm_cm_sidr_connect(struct softcm_id *id, const struct softcm_connect *c)
{
	u8 resp_timeout = READ_ONCE(softcm_net(id->net)->cm_response_timeout);
	struct softcm_cm_msg *req;

	lockdep_assert_held(&id->mutex);

	req = softcm_cm_begin_request(id, c, SOFTCM_CM_SIDR_REQ, SOFTCM_SIDR_REQ_PRIVATE_DATA);
	if (IS_ERR(req))
		return PTR_ERR(req);
	req->pkey = SOFTCM_PKEY_DEFAULT;
	return softcm_cm_send_request(id, req, SOFTCM_CM_SIDR_REQ_SENT,
				      softcm_cm_ms(resp_timeout));
}

/* The listener's answer (or ours, for a request nobody may have). */
int softcm_cm_sidr_answer(struct softcm_id *id, u8 status, u32 qpn,
			  const u8 *pdata, u8 len)
{
	struct softcm_cm_msg *rep = softcm_cm_alloc_msg(id, SOFTCM_CM_SIDR_REP);

	lockdep_assert_held(&id->mutex);

	if (!rep)
		return -ENOMEM;
	/* A SIDR_REP names the requester's ID only. */
	rep->local_comm_id = id->cm.remote.comm_id;
	rep->remote_comm_id = 0;
	rep->status = status;
	rep->service_id = id->cm.service_id;
	if (status == SOFTCM_SIDR_SUCCESS) {
		rep->qpn = qpn & 0xffffff;
		rep->qkey = SOFTCM_UDP_QKEY;
	}
	if (len)	/* an anonymous answer has no data, and no buffer */
		memcpy(rep->pdata, pdata, len);
	rep->pdata_len = len;
	softcm_cm_send(id, rep);
	kfree(rep);
	softcm_cm_release_ids(id);
	return 0;
}

/* rdma_accept() of a SIDR_REQ: the SIDR_REP with the application's QP. */
int softcm_cm_sidr_accept(struct softcm_id *id, const struct softcm_accept *c)
{
	const struct softcm_conn_param *p = &c->param;
	int ret;

	lockdep_assert_held(&id->mutex);

	if (id->cm.state != SOFTCM_CM_SIDR_REQ_RCVD ||
	    p->private_data_len > SOFTCM_SIDR_REP_PRIVATE_DATA || p->reserved0)
		return -EINVAL;
	ret = softcm_cm_sidr_answer(id, SOFTCM_SIDR_SUCCESS, p->qp_num,
				    p->private_data, p->private_data_len);
	if (ret)
		return ret;	/* nothing was sent: nothing changed */
	WRITE_ONCE(id->uid, c->uid);
	id->unaccepted = false;
	id->conn_up = true;	/* answered: a UD peer is known */
	return 0;
}

/* rdma_reject() of a SIDR_REQ: a SIDR_REP that says so. */
int softcm_cm_sidr_reject(struct softcm_id *id, const struct softcm_reject *c)
{
	lockdep_assert_held(&id->mutex);

	if (c->private_data_len > SOFTCM_SIDR_REP_PRIVATE_DATA)
		return -EINVAL;
	softcm_cm_sidr_answer(id, SOFTCM_SIDR_REJECT, 0, c->private_data, c->private_data_len);
	softcm_cm_mark_peer_gone(id);
	return 0;
}

static void answer_anonymous(struct softcm_net *sn, const struct softcm_pkt *pkt,
			     const struct softcm_cm_msg *req, u8 status)
{
	struct softcm_cm_msg *rep = softcm_cm_alloc_reply(req, SOFTCM_CM_SIDR_REP);

	if (!rep)
		return;
	rep->local_comm_id = req->local_comm_id;
	rep->status = status;
	rep->service_id = req->service_id;
	softcm_cm_reply(sn, pkt, rep);
}

void softcm_cm_rcv_sidr_req(struct softcm_net *sn, const struct softcm_pkt *pkt,
			    const struct softcm_cm_msg *msg)
{
	u64 key = sender_key(&pkt->src);
	struct sockaddr_storage src, dst;
	struct softcm_id *listener, *id;
	struct softcm_event_entry *e;
	struct softcm_conn_param *p;
	int reason;

	id = softcm_conn_find_remote(sn, key, msg->local_comm_id);
	if (id) {
		/* Our answer comes when the application gives it. */
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_DUPLICATES);
		softcm_id_put(id);
		return;
	}
	reason = softcm_cm_parse_request(sn, pkt, msg->service_id, SOFTCM_PS_UDP,
					 msg->pdata, &src, &dst, &listener);
	if (reason) {
		answer_anonymous(sn, pkt, msg, reason == SOFTCM_REJ_INVALID_SERVICE_ID ?
				 SOFTCM_SIDR_UNSUPPORTED : SOFTCM_SIDR_REJECT);
		return;
	}

	mutex_lock(&listener->mutex);
	if (listener->state != SOFTCM_STATE_LISTEN) {
		answer_anonymous(sn, pkt, msg, SOFTCM_SIDR_REJECT);
		goto out;
	}
	if (!softcm_backlog_admit(listener))
		goto out;	/* a SIDR_REQ is never held: beyond the backlog, dropped */
	id = softcm_cm_new_request(listener, pkt, &src, &dst, key, msg->local_comm_id, &e);
	if (!id)
		goto out;
	id->cm.tid = msg->hdr.tid;
	id->cm.service_id = msg->service_id;
	softcm_cm_set_state(id, SOFTCM_CM_SIDR_REQ_RCVD);
	p = &e->ev.param;
	p->private_data_len = SOFTCM_SIDR_REQ_PRIVATE_DATA;
	memcpy(p->private_data, msg->pdata + SOFTCM_CMA_HDR_SIZE,
	       SOFTCM_SIDR_REQ_PRIVATE_DATA);
	softcm_file_publish_request(listener, id, e);
out:
	mutex_unlock(&listener->mutex);
	softcm_id_put(listener);
}

void softcm_cm_rcv_sidr_rep(struct softcm_net *sn, const struct softcm_pkt *pkt,
			    const struct softcm_cm_msg *msg)
{
	struct softcm_conn_param *p;
	struct softcm_id *id;

	/* The reply names our request ID only. */
	id = softcm_cm_lookup(sn, msg->local_comm_id, 0, pkt);
	if (!id)
		return;
	if (id->cm.state != SOFTCM_CM_SIDR_REQ_SENT) {
		softcm_stat_inc(&sn->stats, SOFTCM_STAT_DUPLICATES);
		goto out;
	}
	softcm_cm_release_ids(id);
	if (msg->status != SOFTCM_SIDR_SUCCESS) {
		softcm_cm_mark_peer_gone(id);
		softcm_cm_report(id, SOFTCM_EVENT_UNREACHABLE, msg->status, NULL);
		goto out;
	}
	/* rdma_cm refuses a Q_Key other than its own for an IP port space. */
	if (msg->qkey != SOFTCM_UDP_QKEY) {
		softcm_cm_mark_peer_gone(id);
		softcm_cm_report(id, SOFTCM_EVENT_ADDR_ERROR, -EINVAL, NULL);
		goto out;
	}
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (p) {
		p->qp_num = msg->qpn;
		p->qkey = msg->qkey;
		p->private_data_len = SOFTCM_SIDR_REP_PDATA;
		memcpy(p->private_data, msg->pdata, SOFTCM_SIDR_REP_PDATA);
	}
	id->conn_up = true;
	softcm_cm_report(id, SOFTCM_EVENT_ESTABLISHED, 0, p);
	kfree(p);
out:
	softcm_id_unlock_put(id);
}
