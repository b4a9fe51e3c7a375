/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_QP_H
#define _SOFTCM_QP_H

#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <rdma/ib_user_verbs.h>
#include <uapi/linux/softcm.h>

#include "evfd.h"
#include "rc.h"
#include "uobj.h"

struct completion;
struct softcm_cq;
struct softcm_file;
struct softcm_net;
struct softcm_pd;
struct softcm_ring;

/*
 * A queue pair.  Its state, attributes and the kernel's indices of its
 * queues are under @lock (BH: the data path completes from softirq);
 * it completes to its CQs while holding it (lock order: QP's sq_mutex,
 * QP, then CQ, then event queue).  The work queues are rings the user
 * writes (uapi/linux/softcm.h, "Rings"): the kernel copies a WR out of
 * its slot once, and keeps its own indices, mirrored in kpage.
 */
struct softcm_qp {
	struct softcm_uobj uobj;
	spinlock_t lock;		/* the fields below up to type; BH */
	u32 state;			/* enum ib_qp_state */
	bool dead;			/* destroyed: nothing more is queued */
	/* work in progress outside the lock (softcm_qp_enter()) */
	unsigned int busy;
	struct completion *drained;	/* destroy, waiting for busy to be 0 */
	struct softcm_qp_attr attr;	/* as last modified */
	u32 sq_cons;			/* WRs taken from the send queue */
	u32 rq_cons;			/* WRs taken from the receive queue */
	/* the send queue's consumer and POST_SEND's writes: one at a time */
	struct mutex sq_mutex;
	/* fixed at creation */
	u8 type;			/* IBV_QPT_RC or IBV_QPT_UD */
	u8 sq_sig_all;
	u32 qpn;
	u64 uid;
	kuid_t owner;			/* its file's opener: who sees its QPN */
	struct softcm_qp_cap cap;
	struct softcm_ring *kring;	/* read-only to the user: kpage */
	struct softcm_ring *uring;	/* the user's: upage, SQ, RQ */
	struct softcm_qp_kpage *kpage;
	struct softcm_qp_upage *upage;
	u8 *sq;
	u8 *rq;
	u32 sq_entries;			/* powers of two */
	u32 rq_entries;
	u32 sq_stride;
	u32 rq_stride;
	struct softcm_net *sn;
	struct softcm_file *sf;		/* its rings' offsets are there */
	/* used until destroy, referenced until free */
	struct softcm_pd *pd;
	struct softcm_cq *scq;
	struct softcm_cq *rcq;
	struct softcm_evfd_entry async_ev;
	u32 events_reported;		/* set by destroy */
	struct softcm_rc rc;		/* RC: the transport (rc.h) */
	struct rcu_head rcu;
};

static inline struct softcm_rq_wqe *softcm_qp_rq_slot(struct softcm_qp *qp, u32 i)
{
	return (struct softcm_rq_wqe *)(qp->rq + (size_t)(i & (qp->rq_entries - 1)) *
					qp->rq_stride);
}

int softcm_qp_create(struct softcm_file *sf, struct softcm_create_qp *c);
int softcm_qp_modify(struct softcm_file *sf, struct softcm_modify_qp *c);
int softcm_qp_query(struct softcm_file *sf, struct softcm_query_qp *c);
int softcm_qp_destroy(struct softcm_file *sf, struct softcm_destroy_qp *c);
int softcm_qp_post_send(struct softcm_file *sf, struct softcm_post *c);
int softcm_qp_post_recv(struct softcm_file *sf, struct softcm_post *c);
int softcm_qp_doorbell(struct softcm_file *sf, struct softcm_doorbell *c);

/* The packet path's (Documentation/design.rst, "The packet path") */
struct softcm_qp *softcm_qp_find_rcu(struct softcm_net *sn, u32 qpn);
bool softcm_qp_enter(struct softcm_qp *qp);
bool softcm_qp_enter_locked(struct softcm_qp *qp);
void softcm_qp_leave(struct softcm_qp *qp);
void softcm_qp_leave_locked(struct softcm_qp *qp);

struct softcm_qp *softcm_qp_get_rc(struct softcm_file *sf, u32 handle);
void softcm_qp_put(struct softcm_qp *qp);
int softcm_qp_move(struct softcm_qp *qp, const struct softcm_init_qp_attr *steps,
		   unsigned int n);
void softcm_qp_set_err(struct softcm_qp *qp);
void softcm_qp_set_err_locked(struct softcm_qp *qp);
u32 softcm_wc_opcode(u32 wr_opcode);

/* IBV_WR_ATOMIC_CMP_AND_SWP or IBV_WR_ATOMIC_FETCH_AND_ADD */
static inline bool softcm_is_atomic(u32 wr_opcode)
{
	return wr_opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       wr_opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

#endif /* _SOFTCM_QP_H */
