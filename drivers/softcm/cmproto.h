/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the CM's files share: cmcore.c's machinery, which active.c,
 * passive.c, sidr.c and cm.c call, and the side files' functions, which
 * only cm.c calls (the side files never call each other).  Every
 * function that takes an id expects its mutex held.
 *
 * The CM reaches user context in exactly three ways: an id's events go to
 * its event queue (softcm_event_queue(), through softcm_cm_report()), a
 * connection request's new id goes to its listener's file through
 * softcm_file_publish_request() (file.c), and a held request's id that
 * was never published is given back to softcm_file_destroy_id().  It
 * never sees a file, a handle or a handle table.
 */
#ifndef _SOFTCM_CMPROTO_H
#define _SOFTCM_CMPROTO_H

#include <linux/socket.h>
#include <softcm/wire.h>
#include <uapi/linux/softcm.h>

#include "cmstate.h"

struct softcm_event_entry;
struct softcm_id;
struct softcm_net;

/* IBTA REJ reasons and message types we send or act on. */
enum {
	SOFTCM_REJ_TIMEOUT		= 4,
	SOFTCM_REJ_INVALID_SERVICE_ID	= 8,
	SOFTCM_REJ_STALE_CONN		= 10,
	SOFTCM_REJ_CONSUMER		= SOFTCM_REJ_CONSUMER_DEFINED,

	SOFTCM_MSG_REQ			= 0,
	SOFTCM_MSG_REP			= 1,
	SOFTCM_MSG_OTHER		= 2,

	SOFTCM_SIDR_SUCCESS		= 0,
	SOFTCM_SIDR_UNSUPPORTED		= 1,
	SOFTCM_SIDR_REJECT		= 2,
};

/* A received packet's addresses (ports unused). */
struct softcm_pkt {
	struct sockaddr_storage src;	/* the sender */
	struct sockaddr_storage dst;	/* us */
	int ifindex;
};

/* cmcore.c */
void softcm_cm_set_state(struct softcm_id *id, enum softcm_cm_state to);
struct softcm_cm_msg *softcm_cm_alloc_msg(struct softcm_id *id, u8 attr);
int softcm_cm_send(struct softcm_id *id, struct softcm_cm_msg *msg);
int softcm_cm_send_bare(struct softcm_id *id, u8 attr);
int softcm_cm_send_retry(struct softcm_id *id, struct softcm_cm_msg *msg,
			 unsigned int timeout_ms, u8 retries);
struct softcm_cm_msg *softcm_cm_alloc_reply(const struct softcm_cm_msg *rcvd, u8 attr);
void softcm_cm_reply(struct softcm_net *sn, const struct softcm_pkt *pkt,
		     struct softcm_cm_msg *msg);
void softcm_cm_reject_rcvd(struct softcm_net *sn, const struct softcm_pkt *pkt,
			   const struct softcm_cm_msg *rcvd, u8 msg_type, u16 reason);
void softcm_cm_resend(struct softcm_id *id);
void softcm_cm_cancel_retransmit(struct softcm_id *id);
void softcm_cm_arm(struct softcm_id *id, unsigned int ms);
void softcm_cm_timewait(struct softcm_id *id);
void softcm_cm_release_ids(struct softcm_id *id);
void softcm_cm_mark_peer_gone(struct softcm_id *id);
int softcm_cm_send_rej(struct softcm_id *id, u8 msg_type, u16 reason,
		       const u8 *pdata, u8 len);
int softcm_cm_send_mra(struct softcm_id *id, u8 msg_type);
bool softcm_cm_matches(struct softcm_id *id, u32 local_id, u32 remote_id,
		       const struct softcm_pkt *pkt);
struct softcm_id *softcm_cm_lookup(struct softcm_net *sn, u32 local_id,
				   u32 remote_id, const struct softcm_pkt *pkt);
void softcm_cm_report(struct softcm_id *id, enum softcm_event_type type,
		      int status, const struct softcm_conn_param *param);
void softcm_cm_report_disconnected(struct softcm_id *id, int status);
struct softcm_cm_msg *softcm_cm_dreq_msg(struct softcm_id *id);
int softcm_cm_send_dreq(struct softcm_id *id);
bool softcm_cm_end_stale(struct softcm_id *old, const struct softcm_pkt *pkt);
struct softcm_cm_msg *softcm_cm_begin_request(struct softcm_id *id,
					      const struct softcm_connect *c,
					      u8 attr, u8 max_pdata);
int softcm_cm_send_request(struct softcm_id *id, struct softcm_cm_msg *req,
			   enum softcm_cm_state state, unsigned int timeout_ms);
int softcm_cm_parse_request(struct softcm_net *sn, const struct softcm_pkt *pkt,
			    u64 service_id, u16 want_ps, const u8 *pdata,
			    struct sockaddr_storage *src, struct sockaddr_storage *dst,
			    struct softcm_id **listener);
struct softcm_id *softcm_cm_new_request(struct softcm_id *listener,
					const struct softcm_pkt *pkt,
					const struct sockaddr_storage *src,
					const struct sockaddr_storage *dst,
					u64 guid, u32 comm_id,
					struct softcm_event_entry **event);
/* active.c */
int softcm_cm_active_connect(struct softcm_id *id, const struct softcm_connect *c);
int softcm_cm_establish(struct softcm_id *id);
void softcm_cm_rcv_rep(struct softcm_net *sn, const struct softcm_pkt *pkt,
		       const struct softcm_cm_msg *msg);

/* passive.c */
int softcm_cm_passive_accept(struct softcm_id *id, const struct softcm_accept *c);
int softcm_cm_passive_reject(struct softcm_id *id, const struct softcm_reject *c, u8 reason);
void softcm_cm_rcv_req(struct softcm_net *sn, const struct softcm_pkt *pkt,
		       const struct softcm_cm_msg *msg);
void softcm_cm_rcv_rtu(struct softcm_net *sn, const struct softcm_pkt *pkt,
		       const struct softcm_cm_msg *msg);

/* sidr.c */
int softcm_cm_sidr_connect(struct softcm_id *id, const struct softcm_connect *c);
int softcm_cm_sidr_accept(struct softcm_id *id, const struct softcm_accept *c);
int softcm_cm_sidr_reject(struct softcm_id *id, const struct softcm_reject *c);
int softcm_cm_sidr_answer(struct softcm_id *id, u8 status, u32 qpn,
			  const u8 *pdata, u8 len);
void softcm_cm_rcv_sidr_req(struct softcm_net *sn, const struct softcm_pkt *pkt,
			    const struct softcm_cm_msg *msg);
void softcm_cm_rcv_sidr_rep(struct softcm_net *sn, const struct softcm_pkt *pkt,
			    const struct softcm_cm_msg *msg);

#endif /* _SOFTCM_CMPROTO_H */
