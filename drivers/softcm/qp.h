/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_QP_H
#define _SOFTCM_QP_H

#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <uapi/linux/softcm.h>

#include "evfd.h"
#include "uobj.h"

struct softcm_cq;
struct softcm_file;
struct softcm_net;
struct softcm_pd;

/*
 * A queue pair.  Its state, attributes and receive queue are under @lock
 * (BH: the data path will complete from softirq); it completes to its
 * CQs while holding it (lock order: QP, then CQ, then event queue).
 */
struct softcm_qp {
	struct softcm_uobj uobj;
	spinlock_t lock;		/* the fields below up to rq_stride; BH */
	u32 state;			/* enum ib_qp_state */
	bool dead;			/* destroyed: nothing more is queued */
	struct softcm_qp_attr attr;	/* as last modified */
	/* the receive queue: rq_count WQEs from rq_head, rq_stride apart */
	u8 *rq;
	u32 rq_head;
	u32 rq_count;
	size_t rq_stride;
	/* fixed at creation */
	u8 type;			/* IBV_QPT_RC or IBV_QPT_UD */
	u8 sq_sig_all;
	u32 qpn;
	u64 uid;
	struct softcm_qp_cap cap;
	struct softcm_net *sn;
	struct softcm_pd *pd;		/* used */
	struct softcm_cq *scq;		/* used */
	struct softcm_cq *rcq;		/* used */
	struct softcm_evfd_entry async_ev;
	u32 events_reported;		/* set by destroy */
	struct rcu_head rcu;
};

int softcm_qp_create(struct softcm_file *sf, struct softcm_create_qp *c);
int softcm_qp_modify(struct softcm_file *sf, struct softcm_modify_qp *c);
int softcm_qp_query(struct softcm_file *sf, struct softcm_query_qp *c);
int softcm_qp_destroy(struct softcm_file *sf, struct softcm_destroy_qp *c);
int softcm_qp_post_send(struct softcm_file *sf, struct softcm_post *c);
int softcm_qp_post_recv(struct softcm_file *sf, struct softcm_post *c);

struct softcm_qp *softcm_qp_lookup(struct softcm_net *sn, u32 qpn);

struct softcm_qp *softcm_qp_get_rc(struct softcm_file *sf, u32 handle);
void softcm_qp_put(struct softcm_qp *qp);
int softcm_qp_move(struct softcm_qp *qp, const struct softcm_init_qp_attr *steps,
		   unsigned int n);
void softcm_qp_set_err(struct softcm_qp *qp);

#endif /* _SOFTCM_QP_H */
