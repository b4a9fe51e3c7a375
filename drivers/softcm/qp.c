// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs of type RC and UD: creation on a PD and two CQs, the IBTA
 * state machine (qpstate.c's table, then every attribute's value), and
 * the work queues.
 *
 * The work queues are rings the user writes and the kernel reads
 * (uapi/linux/softcm.h, "Rings"; memory from ring.c): the kernel copies
 * each WR out of its slot once, checks the copy and never reads the slot
 * again, and keeps its consumer indices here, mirrored to the user with
 * the QP's state and the send queue's NEED_DOORBELL flag.  The send
 * queue's consumer runs under sq_mutex, in DOORBELL and POST_SEND.
 *
 * An RC QP's SENDs (with invalidate too), WRITEs, READs and atomics go to its transport
 * (rc.h): a send WR is taken, checked and handed to the requester, which
 * completes it when the peer acknowledges it (a READ: when its responses
 * all came; an atomic: when its ATOMIC ACKNOWLEDGE came); a receive WR
 * waits in its ring for the responder.  A READ or atomic on a QP whose
 * max_rd_atomic is 0 completes at once with IBV_WC_LOC_QP_OP_ERR (rxe
 * would wait for ever for a credit).  Every
 * send of a UD QP completes at once with IBV_WC_GENERAL_ERR and
 * vendor_err SOFTCM_VENDOR_ERR_NO_DATA_PATH, signalled or not, and the
 * QP enters ERR as after any completion error: the WRs in flight and
 * the receives are flushed, and the WRs posted after it complete with
 * IBV_WC_WR_FLUSH_ERR.  Like rdma_rxe after a local completion error,
 * no async event is reported: the completion says it all.  SGEs' lkeys
 * are the transport's to check against the MRs (mr.c), when it copies;
 * they are only counted here.
 *
 * QP numbers come from the namespace's xarray (24 bits, cyclic from 2:
 * 0 and 1 are the special QPs), where the data path looks the
 * destination QP of a packet up under RCU (softcm_qp_find_rcu()).
 *
 * Lifetime: the QP uses its PD and CQs (they are EBUSY to destroy) until
 * it is destroyed, and references them until it is freed.  Destroy waits
 * for whatever works on the QP outside its lock (qp_quiesce()).
 */

#include <kunit/visibility.h>
#include <linux/completion.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_verbs.h>

#include "ah.h"
#include "cq.h"
#include "evfd.h"
#include "file.h"
#include "gid.h"
#include "limits.h"
#include "netns.h"
#include "pd.h"
#include "qp.h"
#include "qpstate.h"
#include "ring.h"
#include "trace.h"
#include "transport.h"
#include "uobj.h"

#define QPN_MASK	0xffffff
#define PSN_MASK	0xffffff
/* WRs one post may name: the pre-pass reads each one's num_sge */
#define MAX_POST_WR	(4 * SOFTCM_MAX_QP_WR)

static_assert(sizeof(struct softcm_qp_kpage) == 128);
static_assert(sizeof(struct softcm_qp_upage) == 128);
static_assert(sizeof(struct softcm_sq_wqe) == 64);
static_assert(sizeof(struct softcm_rq_wqe) == 16);

static struct softcm_qp *qp_of(struct softcm_uobj *obj)
{
	return container_of(obj, struct softcm_qp, uobj);
}

static struct softcm_sq_wqe *sq_slot(struct softcm_qp *qp, u32 i)
{
	return (struct softcm_sq_wqe *)(qp->sq + (size_t)(i & (qp->sq_entries - 1)) *
					qp->sq_stride);
}

static struct softcm_rq_wqe *rq_slot(struct softcm_qp *qp, u32 i)
{
	return softcm_qp_rq_slot(qp, i);
}

/*
 * The packet path finds a QP by number under RCU and takes no reference:
 * softcm_qp_find_rcu(), then softcm_qp_enter() before it touches anything
 * but the QP's lock, softcm_qp_leave() when it is done; destroy takes the
 * number out, then waits for the work that entered (qp_quiesce()), and the
 * memory of the QP itself outlives a grace period (qp_free()).  So no
 * packet takes or drops an atomic reference count on its QP
 * (Documentation/design.rst, "The packet path").
 */

/*
 * The QP @qpn of @sn, or NULL: under rcu_read_lock() (softirq counts),
 * valid until rcu_read_unlock(), and only its lock may be touched before
 * softcm_qp_enter() says it is not destroyed.
 */
struct softcm_qp *softcm_qp_find_rcu(struct softcm_net *sn, u32 qpn)
{
	RCU_LOCKDEP_WARN(!rcu_read_lock_any_held(), "QP lookup outside RCU");
	return xa_load(&sn->qpns, qpn);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_qp_find_rcu);

/* As softcm_qp_enter(), in a hold of the QP's lock that the caller makes anyway. */
bool softcm_qp_enter_locked(struct softcm_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (qp->dead)
		return false;
	qp->busy++;
	return true;
}

/*
 * Begin work on @qp outside its lock, from any context: a packet found by
 * softcm_qp_find_rcu(), a timer, a work item, the send queue's consumer.
 * False once @qp is destroyed: then nothing of it may be touched but its
 * lock.  True: until softcm_qp_leave(), destroy waits, so the QP, its CQs
 * and PD stay as they were, and the work may leave RCU.  An MR is not
 * covered: DEREG_MR waits for a grace period, not for QPs, so an MR found
 * by softcm_mr_find_rcu() may be used only until that RCU section ends.
 * The work must not sleep on anything destroy waits for.  A data path
 * that holds the lock per packet anyway uses the _locked forms in that
 * hold, which costs no atomic operation of its own.
 */
bool softcm_qp_enter(struct softcm_qp *qp)
{
	bool ret;

	spin_lock_bh(&qp->lock);
	ret = softcm_qp_enter_locked(qp);
	spin_unlock_bh(&qp->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_qp_enter);

void softcm_qp_leave_locked(struct softcm_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (!--qp->busy && qp->drained)
		complete(qp->drained);
}

void softcm_qp_leave(struct softcm_qp *qp)
{
	spin_lock_bh(&qp->lock);
	softcm_qp_leave_locked(qp);
	spin_unlock_bh(&qp->lock);
}
EXPORT_SYMBOL_IF_KUNIT(softcm_qp_leave);

/*
 * Make @qp dead and wait until nothing works on it outside its lock.
 * Every context that can reach a QP, and why each one is over when this
 * returns:
 * - the packet path (softirq) finds the QP only by number, which destroy
 *   erased first, and works on it only between softcm_qp_enter() and
 *   _leave(): after this, entering fails;
 * - the send queue's consumer (DOORBELL, POST_SEND: sq_run()) is such
 *   work too, and sees dead at its next WR;
 * - commands that hold the QP by handle (MODIFY_QP, POST_*, QUERY_QP,
 *   ACCEPT with SOFTCM_ACCEPT_QP) touch its state, receive queue and CQs
 *   only under its lock, after a check of dead; POST_SEND writes its WR
 *   into the send queue under sq_mutex alone (after that check): the
 *   ring lives until the QP's last reference, which the command holds,
 *   and the consumer that would take the WR enters first, which fails;
 * - its async event's entry (evfd.c) is purged by destroy, under the
 *   queue's lock that a reader copies it under;
 * - the CM (cm*.c, qpattr.c, notify.c: timers, works, the netevent
 *   notifier) never holds a QP: an id knows its QP's number only;
 * - an RC QP's requester work enters and leaves as above around each
 *   run (the consumer runs the requester inside its own), and its
 *   timer (retransmission, RNR wait) acts only under the lock after a
 *   check of dead; both are shut down by qp_destroy() after this
 *   (softcm_rc_shutdown()), before the references go.
 * No lock is held: the work waited for may take the QP's and its CQs'.
 */
static void qp_quiesce(struct softcm_qp *qp)
{
	DECLARE_COMPLETION_ONSTACK(drained);
	bool busy;

	might_sleep();
	spin_lock_bh(&qp->lock);
	qp->dead = true;
	busy = qp->busy;
	if (busy)
		qp->drained = &drained;
	spin_unlock_bh(&qp->lock);
	if (busy)
		wait_for_completion(&drained);
}

/*
 * Complete every posted receive with IBV_WC_WR_FLUSH_ERR, oldest first:
 * each one's wr_id read once from its slot.
 */
static void flush_rq(struct softcm_qp *qp)
{
	struct softcm_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->qpn,
		.port_num = SOFTCM_PORT_NUM,
	};
	u32 prod;

	lockdep_assert_held(&qp->lock);
	/* Pairs with the user's release of rq_prod: its slots first. */
	prod = smp_load_acquire(&qp->upage->rq_prod);
	/* more than the ring holds: a broken ring, none of it is a WR */
	if (prod - qp->rq_cons > qp->rq_entries)
		qp->rq_cons = prod;
	while (qp->rq_cons != prod) {
		wc.wr_id = READ_ONCE(rq_slot(qp, qp->rq_cons)->wr.wr_id);
		/* an error completion ends a solicited-only arming (IBTA 11.4.2.2) */
		softcm_cq_push(qp->rcq, &wc, true);
		qp->rq_cons++;
	}
	/* Pairs with the user's acquire of rq_cons: the slots are free. */
	smp_store_release(&qp->kpage->rq_cons, qp->rq_cons);
}

static void set_state(struct softcm_qp *qp, u32 next)
{
	u32 prev = qp->state;

	lockdep_assert_held(&qp->lock);
	qp->state = next;
	WRITE_ONCE(qp->kpage->state, next);
	if (prev != next)
		trace_softcm_qp_state(qp->sn->net->ns.inum, qp->qpn,
				      softcm_qp_state_name(prev), softcm_qp_state_name(next));
	if (next == IB_QPS_ERR && prev != IB_QPS_ERR) {
		/*
		 * The state before rq_prod: a receive the user posts after
		 * this read sees ERR and rings the doorbell (uapi: Rings).
		 */
		smp_mb();
		flush_rq(qp);
	}
	if (next == IB_QPS_RESET) {
		/* the work queues are emptied, nothing completes (IBTA 10.3.1) */
		qp->sq_cons = READ_ONCE(qp->upage->sq_prod);
		qp->rc.sq_next = qp->sq_cons;
		qp->rq_cons = READ_ONCE(qp->upage->rq_prod);
		/* Pair with the user's acquire of the consumer indices. */
		smp_store_release(&qp->kpage->sq_cons, qp->sq_cons);
		/* (the same for the receive queue) */
		smp_store_release(&qp->kpage->rq_cons, qp->rq_cons);
	}
	softcm_rc_state_changed(qp, prev, next);
}

/* As softcm_qp_set_err(), for the data path, which holds the lock. */
void softcm_qp_set_err_locked(struct softcm_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (!qp->dead)
		set_state(qp, IB_QPS_ERR);
}

/*
 * Out of its table: when this returns, no packet, timer, work or command
 * can complete to its CQs or touch its rings (qp_quiesce()), so they may
 * be destroyed, and its PD deallocated, as soon as the QP is; their
 * memory stays referenced until the QP is freed, for whoever still holds
 * the QP.
 */
static void qp_destroy(struct softcm_uobj *obj)
{
	struct softcm_qp *qp = qp_of(obj);

	/* no new packet finds it; those that did see it dead or are waited for */
	xa_erase(&qp->sn->qpns, qp->qpn);
	/* what is queued goes without completions: nobody polls for them */
	qp_quiesce(qp);
	if (qp->type == IB_QPT_RC)
		softcm_rc_shutdown(qp);
	softcm_ring_unpublish(qp->sf, qp->kring);
	softcm_ring_unpublish(qp->sf, qp->uring);
	qp->events_reported = softcm_evfd_entry_purge(&qp->async_ev);
	softcm_uobj_drop_use(&qp->rcq->uobj);
	softcm_uobj_drop_use(&qp->scq->uobj);
	softcm_uobj_drop_use(&qp->pd->uobj);
	atomic_dec(&qp->sn->nr_qps);
}

/*
 * The last reference: in process context, since the rings and a CQ this
 * frees last are vunmap()ed (the packet path holds no reference, only
 * RCU).  The memory outlives a grace period: softcm_qp_find_rcu() may
 * still be looking at the QP's lock.
 */
static void qp_free(struct softcm_uobj *obj)
{
	struct softcm_qp *qp = qp_of(obj);

	might_sleep();
	/* mappings keep the memory they hold */
	softcm_ring_put(qp->uring);
	softcm_ring_put(qp->kring);
	softcm_uobj_put(&qp->rcq->uobj);
	softcm_uobj_put(&qp->scq->uobj);
	softcm_uobj_put(&qp->pd->uobj);
	if (qp->type == IB_QPT_RC)
		softcm_rc_uninit(qp);
	mutex_destroy(&qp->sq_mutex);
	kfree_rcu(qp, rcu);
}

static const struct softcm_uobj_ops qp_ops = {
	.destroy = qp_destroy,
	.free = qp_free,
};

static int check_create(const struct softcm_create_qp *c)
{
	const struct softcm_qp_cap *cap = &c->cap;

	if (c->srq_handle)
		return -EOPNOTSUPP;
	if (c->qp_type != IB_QPT_RC && c->qp_type != IB_QPT_UD)
		return -EOPNOTSUPP;
	if (c->sq_sig_all > 1 || c->reserved0 || c->reserved1 || cap->reserved0)
		return -EINVAL;
	if (cap->max_send_wr > SOFTCM_MAX_QP_WR || cap->max_recv_wr > SOFTCM_MAX_QP_WR ||
	    cap->max_send_sge > SOFTCM_MAX_SGE || cap->max_recv_sge > SOFTCM_MAX_SGE ||
	    cap->max_inline_data > SOFTCM_MAX_INLINE)
		return -EINVAL;
	return 0;
}

/* The PD and the CQs, used: under the table's lock, as uobj.c requires. */
static int use_objects(struct softcm_file *sf, struct softcm_qp *qp,
		       const struct softcm_create_qp *c)
{
	struct softcm_uobj *obj;
	int ret;

	lockdep_assert_held(&sf->uobjs.lock);
	qp->pd = softcm_pd_use(sf, c->pd_handle);
	if (IS_ERR(qp->pd))
		return PTR_ERR(qp->pd);
	obj = softcm_uobj_use(&sf->uobjs, SOFTCM_UOBJ_CQ, c->send_cq_handle);
	if (IS_ERR(obj)) {
		ret = PTR_ERR(obj);
		goto err_unuse_pd;
	}
	qp->scq = softcm_cq_of(obj);
	obj = softcm_uobj_use(&sf->uobjs, SOFTCM_UOBJ_CQ, c->recv_cq_handle);
	if (IS_ERR(obj)) {
		ret = PTR_ERR(obj);
		goto err_unuse_scq;
	}
	qp->rcq = softcm_cq_of(obj);
	return 0;

err_unuse_scq:
	softcm_uobj_unuse(&qp->scq->uobj);
err_unuse_pd:
	softcm_pd_unuse(qp->pd);
	return ret;
}

static void unuse_objects(struct softcm_qp *qp)
{
	softcm_uobj_unuse(&qp->rcq->uobj);
	softcm_uobj_unuse(&qp->scq->uobj);
	softcm_pd_unuse(qp->pd);
}

/*
 * The rings of @qp, for the capacities @c asks, described in @c.  A send
 * slot holds the SGEs or the inline data; max_inline_data and
 * max_send_sge are granted as rdma_rxe grants them, the slot's whole
 * room each (a QP that asked for no inline data still takes inline
 * sends of its SGEs' size, one that asked for 64 bytes inline takes
 * four SGEs).
 */
static int qp_alloc_rings(struct softcm_file *sf, struct softcm_qp *qp,
			  struct softcm_create_qp *c)
{
	struct softcm_qp_cap *cap = &c->cap;
	size_t sq_bytes, rq_bytes;
	u32 data;

	/* the posting paths' SGE arrays hold SOFTCM_MAX_SGE */
	BUILD_BUG_ON(SOFTCM_MAX_SGE * sizeof(struct softcm_sge) < SOFTCM_MAX_INLINE);
	data = max_t(u32, cap->max_send_sge * sizeof(struct softcm_sge), cap->max_inline_data);
	cap->max_inline_data = data;
	cap->max_send_sge = data / sizeof(struct softcm_sge);
	qp->sq_stride = roundup_pow_of_two(sizeof(struct softcm_sq_wqe) + data);
	qp->rq_stride = roundup_pow_of_two(sizeof(struct softcm_rq_wqe) +
					   cap->max_recv_sge * sizeof(struct softcm_sge));
	qp->sq_entries = roundup_pow_of_two(max(cap->max_send_wr, 1U));
	qp->rq_entries = roundup_pow_of_two(max(cap->max_recv_wr, 1U));
	sq_bytes = PAGE_ALIGN((size_t)qp->sq_entries * qp->sq_stride);
	rq_bytes = PAGE_ALIGN((size_t)qp->rq_entries * qp->rq_stride);

	qp->kring = softcm_ring_alloc(sf, sizeof(*qp->kpage), true);
	if (IS_ERR(qp->kring))
		return PTR_ERR(qp->kring);
	qp->uring = softcm_ring_alloc(sf, PAGE_SIZE + sq_bytes + rq_bytes, false);
	if (IS_ERR(qp->uring)) {
		softcm_ring_put(qp->kring);
		return PTR_ERR(qp->uring);
	}
	qp->kpage = qp->kring->vaddr;
	qp->upage = qp->uring->vaddr;
	qp->sq = (u8 *)qp->uring->vaddr + PAGE_SIZE;
	qp->rq = qp->sq + sq_bytes;
	/* idle: the first send rings the doorbell */
	qp->kpage->sq_flags = SOFTCM_SQ_NEED_DOORBELL;
	qp->kpage->state = IB_QPS_RESET;
	c->sq = (struct softcm_ring_info){
		.offset = PAGE_SIZE, .entries = qp->sq_entries, .stride = qp->sq_stride,
	};
	c->rq = (struct softcm_ring_info){
		.offset = PAGE_SIZE + sq_bytes, .entries = qp->rq_entries,
		.stride = qp->rq_stride,
	};
	return 0;
}

static void qp_unpublish(struct softcm_qp *qp)
{
	softcm_ring_unpublish(qp->sf, qp->uring);
	softcm_ring_unpublish(qp->sf, qp->kring);
}

static int qp_publish(struct softcm_qp *qp, struct softcm_create_qp *c)
{
	int ret;

	ret = softcm_ring_publish(qp->sf, qp->kring, &c->kmap);
	if (ret)
		return ret;
	ret = softcm_ring_publish(qp->sf, qp->uring, &c->umap);
	if (ret)
		softcm_ring_unpublish(qp->sf, qp->kring);
	return ret;
}

int softcm_qp_create(struct softcm_file *sf, struct softcm_create_qp *c)
{
	struct softcm_net *sn = softcm_net(sf->net);
	struct softcm_qp *qp;
	u32 qpn;
	int ret;

	ret = check_create(c);
	if (ret)
		return ret;
	qp = kzalloc(sizeof(*qp), GFP_KERNEL_ACCOUNT);
	if (!qp)
		return -ENOMEM;
	softcm_uobj_init(&qp->uobj, SOFTCM_UOBJ_QP, &qp_ops);
	spin_lock_init(&qp->lock);
	mutex_init(&qp->sq_mutex);
	qp->state = IB_QPS_RESET;
	qp->type = c->qp_type;
	qp->sq_sig_all = c->sq_sig_all;
	qp->uid = c->uid;
	qp->sn = sn;
	qp->sf = sf;
	qp->owner = sf->uid;
	softcm_evfd_entry_init(&qp->async_ev);
	ret = qp_alloc_rings(sf, qp, c);
	if (ret)
		goto err_free_qp;
	qp->cap = c->cap;
	if (qp->type == IB_QPT_RC) {
		ret = softcm_rc_init(qp);
		if (ret)
			goto err_put_rings;
		/*
		 * The peer's packets come to the namespace's sockets, which
		 * the CM opens on first use, and a QP connected by hand has
		 * no CM.  Without them (the port taken), the QP still works
		 * as verbs say, its sends time out: as a cable unplugged.
		 */
		softcm_transport_get(sn);
	}
	ret = qp_publish(qp, c);
	if (ret)
		goto err_uninit_rc;

	mutex_lock(&sf->uobjs.lock);
	ret = use_objects(sf, qp, c);
	if (ret)
		goto err_unlock;
	/* reserved now, published (findable) once the QP is in its table */
	ret = xa_alloc_cyclic(&sn->qpns, &qpn, NULL, XA_LIMIT(2, QPN_MASK),
			      &sn->qpn_next, GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto err_unuse;
	qp->qpn = qpn;
	qp->async_ev.async.uid = qp->uid;
	ret = softcm_uobj_add(&sf->uobjs, &qp->uobj);
	if (ret)
		goto err_release_qpn;
	qp->async_ev.async.handle = qp->uobj.handle;
	xa_store(&sn->qpns, qpn, qp, GFP_KERNEL_ACCOUNT);
	atomic_inc(&sn->nr_qps);
	mutex_unlock(&sf->uobjs.lock);

	c->handle = qp->uobj.handle;
	c->qp_num = qpn;
	return 0;

err_release_qpn:
	xa_erase(&sn->qpns, qpn);
err_unuse:
	unuse_objects(qp);
err_unlock:
	mutex_unlock(&sf->uobjs.lock);
	qp_unpublish(qp);
err_uninit_rc:
	if (qp->type == IB_QPT_RC) {
		/* never published: nothing of it runs, shutting down is cheap */
		softcm_rc_shutdown(qp);
		softcm_rc_uninit(qp);
	}
err_put_rings:
	softcm_ring_put(qp->uring);
	softcm_ring_put(qp->kring);
err_free_qp:
	mutex_destroy(&qp->sq_mutex);
	kfree(qp);
	return ret;
}

int softcm_qp_destroy(struct softcm_file *sf, struct softcm_destroy_qp *c)
{
	struct softcm_uobj *obj;

	obj = softcm_uobj_remove(&sf->uobjs, SOFTCM_UOBJ_QP, c->handle);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	c->events_reported = qp_of(obj)->events_reported;
	softcm_uobj_put(obj);
	return 0;
}

/* The values of the attributes @mask names, whatever the transition. */
static int check_attr(struct softcm_net *sn, u32 mask, const struct softcm_qp_attr *a)
{
	/* reserved members are zero whatever the mask, so they can gain a meaning */
	if (a->reserved0 || a->reserved1 || a->cap.reserved0 ||
	    a->ah_attr.reserved0 || a->alt_ah_attr.reserved0)
		return -EINVAL;
	if ((mask & IB_QP_STATE) && a->qp_state > IB_QPS_ERR)
		return -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && a->cur_qp_state > IB_QPS_ERR)
		return -EINVAL;
	if (mask & IB_QP_ACCESS_FLAGS) {
		/* REMOTE_ATOMIC: the responder's atomics need it (resp.c) */
		if (a->qp_access_flags & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
					   IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC))
			return -EINVAL;
	}
	if ((mask & IB_QP_PKEY_INDEX) && a->pkey_index >= SOFTCM_MAX_PKEYS)
		return -EINVAL;
	if ((mask & IB_QP_PORT) && a->port_num != SOFTCM_PORT_NUM)
		return -EINVAL;
	if ((mask & IB_QP_AV) && softcm_ah_check_av(sn, &a->ah_attr))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (a->path_mtu < IB_MTU_256 || a->path_mtu > IB_MTU_4096))
		return -EINVAL;
	/* RTR names both: the path MTU must fit the AV's device, as rxe's port */
	if ((mask & (IB_QP_AV | IB_QP_PATH_MTU)) == (IB_QP_AV | IB_QP_PATH_MTU) &&
	    !softcm_ah_mtu_fits(sn, &a->ah_attr, a->path_mtu))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_RQ_PSN) && a->rq_psn > PSN_MASK)
		return -EINVAL;
	if ((mask & IB_QP_SQ_PSN) && a->sq_psn > PSN_MASK)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > SOFTCM_MAX_QP_INIT_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > SOFTCM_MAX_QP_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && a->dest_qp_num > QPN_MASK)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MIG_STATE) && a->path_mig_state != IB_MIG_MIGRATED)
		return -EOPNOTSUPP;
	return 0;
}

/* Keep what @mask names. */
static void store_attr(struct softcm_qp_attr *to, u32 mask, const struct softcm_qp_attr *a)
{
	if (mask & IB_QP_ACCESS_FLAGS)
		to->qp_access_flags = a->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		to->pkey_index = a->pkey_index;
	if (mask & IB_QP_PORT)
		to->port_num = a->port_num;
	if (mask & IB_QP_QKEY)
		to->qkey = a->qkey;
	if (mask & IB_QP_AV)
		to->ah_attr = a->ah_attr;
	if (mask & IB_QP_PATH_MTU)
		to->path_mtu = a->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		to->timeout = a->timeout;
	if (mask & IB_QP_RETRY_CNT)
		to->retry_cnt = a->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		to->rnr_retry = a->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		to->rq_psn = a->rq_psn;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		to->max_rd_atomic = a->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		to->min_rnr_timer = a->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		to->sq_psn = a->sq_psn;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		to->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IB_QP_PATH_MIG_STATE)
		to->path_mig_state = a->path_mig_state;
	if (mask & IB_QP_DEST_QPN)
		to->dest_qp_num = a->dest_qp_num;
}

/*
 * Check the transition and apply it: under the lock, since a send error
 * may move the QP to ERR meanwhile.  @a's values are checked already.
 */
static int modify_locked(struct softcm_qp *qp, u32 mask, const struct softcm_qp_attr *a)
{
	u32 cur, next;

	lockdep_assert_held(&qp->lock);
	/* destroyed by another thread meanwhile: as if already gone */
	if (qp->dead)
		return -ENOENT;
	cur = qp->state;
	next = (mask & IB_QP_STATE) ? a->qp_state : cur;
	if ((mask & IB_QP_CUR_STATE) && a->cur_qp_state != cur)
		return -EINVAL;
	if (!softcm_qpstate_is_ok(cur, next, qp->type, mask))
		return -EINVAL;
	/* allowed by the table, not by softcm */
	if (next == IB_QPS_SQD || (mask & (IB_QP_ALT_PATH | IB_QP_EN_SQD_ASYNC_NOTIFY)))
		return -EOPNOTSUPP;
	store_attr(&qp->attr, mask, a);
	set_state(qp, next);
	return 0;
}

int softcm_qp_modify(struct softcm_file *sf, struct softcm_modify_qp *c)
{
	struct softcm_uobj *obj;
	struct softcm_qp *qp;
	int ret;

	ret = check_attr(softcm_net(sf->net), c->attr_mask, &c->attr);
	if (ret)
		return ret;
	obj = softcm_uobj_get(&sf->uobjs, SOFTCM_UOBJ_QP, c->handle);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	qp = qp_of(obj);
	/* the application's vector, resolved as ib_core does; ACCEPT's is the CM's */
	if ((c->attr_mask & IB_QP_AV) && qp->type == IB_QPT_RC) {
		ret = softcm_ah_resolve_hop_limit(qp->sn, &c->attr.ah_attr);
		if (ret)
			goto out_put;
	}
	spin_lock_bh(&qp->lock);
	ret = modify_locked(qp, c->attr_mask, &c->attr);
	spin_unlock_bh(&qp->lock);
out_put:
	softcm_uobj_put(obj);
	return ret;
}

/*
 * The RC QP @handle of @sf, referenced (softcm_qp_put()), for ACCEPT to
 * move: ENOENT if there is none, EINVAL for a UD QP, which has no
 * connection to follow.  A lookup, as MODIFY_QP's: no table lock.
 */
struct softcm_qp *softcm_qp_get_rc(struct softcm_file *sf, u32 handle)
{
	struct softcm_uobj *obj;

	obj = softcm_uobj_get(&sf->uobjs, SOFTCM_UOBJ_QP, handle);
	if (IS_ERR(obj))
		return ERR_CAST(obj);
	if (qp_of(obj)->type != IB_QPT_RC) {
		softcm_uobj_put(obj);
		return ERR_PTR(-EINVAL);
	}
	return qp_of(obj);
}

void softcm_qp_put(struct softcm_qp *qp)
{
	softcm_uobj_put(&qp->uobj);
}

/*
 * ACCEPT's moves (INIT, RTR, RTS), @n MODIFY_QPs in one hold of the lock,
 * so that neither a post nor a MODIFY_QP of another thread sees the QP
 * half way; they stop at the first that fails, whose error is returned.
 */
int softcm_qp_move(struct softcm_qp *qp, const struct softcm_init_qp_attr *steps,
		   unsigned int n)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; !ret && i < n; i++)
		ret = check_attr(qp->sn, steps[i].attr_mask, &steps[i].attr);
	if (ret)
		return ret;
	spin_lock_bh(&qp->lock);
	for (i = 0; !ret && i < n; i++)
		ret = modify_locked(qp, steps[i].attr_mask, &steps[i].attr);
	spin_unlock_bh(&qp->lock);
	return ret;
}

/* ERR, as MODIFY_QP to ERR: the receives are flushed.  Gone: nothing to do. */
void softcm_qp_set_err(struct softcm_qp *qp)
{
	spin_lock_bh(&qp->lock);
	if (!qp->dead)
		set_state(qp, IB_QPS_ERR);
	spin_unlock_bh(&qp->lock);
}

int softcm_qp_query(struct softcm_file *sf, struct softcm_query_qp *c)
{
	struct softcm_uobj *obj;
	struct softcm_qp *qp;

	obj = softcm_uobj_get(&sf->uobjs, SOFTCM_UOBJ_QP, c->handle);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	qp = qp_of(obj);
	/* all of them, whatever attr_mask asks, as ibv_query_qp allows */
	spin_lock_bh(&qp->lock);
	c->attr = qp->attr;
	c->attr.qp_state = qp->state;
	c->attr.cur_qp_state = qp->state;
	spin_unlock_bh(&qp->lock);
	c->attr.cap = qp->cap;
	c->init_cap = qp->cap;
	c->qp_type = qp->type;
	c->sq_sig_all = qp->sq_sig_all;
	c->reserved0 = 0;
	c->reserved1 = 0;
	softcm_uobj_put(obj);
	return 0;
}

/*
 * The WRs of a post name sge_count SGEs in all: check the sum first, so
 * that a post whose counts disagree queues nothing.
 */
static int check_sge_sum(const struct softcm_post *c, size_t wr_size, size_t num_sge_off)
{
	const u8 __user *wr = u64_to_user_ptr(c->wr);
	u64 sum = 0;
	u32 i, n;

	if (c->wr_count > MAX_POST_WR)
		return -EINVAL;
	for (i = 0; i < c->wr_count; i++) {
		if (get_user(n, (const u32 __user *)(wr + i * wr_size + num_sge_off)))
			return -EFAULT;
		sum += n;
	}
	return sum == c->sge_count ? 0 : -EINVAL;
}

/* Read WR @i's SGEs, from SGE @off; @n is its num_sge, already bounded. */
static int read_sges(const struct softcm_post *c, u32 off, u32 n, struct softcm_sge *sge)
{
	const struct softcm_sge __user *usge = u64_to_user_ptr(c->sge);

	if (n > c->sge_count - off)
		return -EINVAL;
	if (copy_from_user(sge, usge + off, n * sizeof(*sge)))
		return -EFAULT;
	return 0;
}

/* POST_RECV's WR, written into the receive queue as the library writes it. */
static int post_one_recv(struct softcm_qp *qp, const struct softcm_recv_wr *wr,
			 const struct softcm_sge *sge)
{
	struct softcm_rq_wqe *w;
	int ret = 0;
	u32 prod;

	spin_lock_bh(&qp->lock);
	if (qp->dead || qp->state == IB_QPS_RESET) {
		ret = -EINVAL;
		goto out_unlock;
	}
	prod = READ_ONCE(qp->upage->rq_prod);
	if (prod - qp->rq_cons >= qp->cap.max_recv_wr) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	w = rq_slot(qp, prod);
	w->wr = *wr;
	memcpy(w + 1, sge, wr->num_sge * sizeof(*sge));
	/* Pairs with flush_rq()'s acquire: the slot first, as the library. */
	smp_store_release(&qp->upage->rq_prod, prod + 1);
	/* a receive posted to a QP in error is flushed at once (IBTA 10.8.3.1) */
	if (qp->state == IB_QPS_ERR)
		flush_rq(qp);
out_unlock:
	spin_unlock_bh(&qp->lock);
	return ret;
}

int softcm_qp_post_recv(struct softcm_file *sf, struct softcm_post *c)
{
	const struct softcm_recv_wr __user *uwr = u64_to_user_ptr(c->wr);
	struct softcm_sge sge[SOFTCM_MAX_SGE];
	struct softcm_recv_wr wr;
	struct softcm_uobj *obj;
	struct softcm_qp *qp;
	u32 i, off = 0;
	int ret;

	c->bad_wr = 0;
	obj = softcm_uobj_get(&sf->uobjs, SOFTCM_UOBJ_QP, c->handle);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	qp = qp_of(obj);
	ret = check_sge_sum(c, sizeof(wr), offsetof(struct softcm_recv_wr, num_sge));
	for (i = 0; !ret && i < c->wr_count; i++) {
		c->bad_wr = i;
		if (copy_from_user(&wr, uwr + i, sizeof(wr))) {
			ret = -EFAULT;
			break;
		}
		if (wr.num_sge > qp->cap.max_recv_sge || wr.reserved0) {
			ret = -EINVAL;
			break;
		}
		ret = read_sges(c, off, wr.num_sge, sge);
		if (!ret)
			ret = post_one_recv(qp, &wr, sge);
		off += wr.num_sge;
	}
	if (!ret)
		c->bad_wr = c->wr_count;
	softcm_uobj_put(obj);
	return ret;
}

/* Whether @opcode is a send WR of @type's; EOPNOTSUPP for what softcm lacks. */
static int check_opcode(u8 type, u32 opcode)
{
	switch (opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return 0;
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
	case IB_UVERBS_WR_RDMA_READ:
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return type == IB_QPT_RC ? 0 : -EINVAL;
	case IB_UVERBS_WR_LOCAL_INV:
	case IB_UVERBS_WR_BIND_MW:
	case IB_UVERBS_WR_TSO:
		return type == IB_QPT_RC ? -EOPNOTSUPP : -EINVAL;
	default:
		return -EINVAL;
	}
}

u32 softcm_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	default:
		return IB_WC_SEND;
	}
}

/* A send WR, with @inline_len bytes of inline data if it has any. */
static int check_send(struct softcm_file *sf, struct softcm_qp *qp,
		      const struct softcm_send_wr *wr, u64 inline_len)
{
	struct softcm_ah *ah;
	int ret;

	ret = check_opcode(qp->type, wr->opcode);
	if (ret)
		return ret;
	if (wr->send_flags & ~(IB_SEND_FENCE | IB_SEND_SIGNALED | IB_SEND_SOLICITED |
			       IB_SEND_INLINE))
		return -EINVAL;
	if ((wr->send_flags & IB_SEND_INLINE) && inline_len > qp->cap.max_inline_data)
		return -EINVAL;
	/* a READ's SGEs are where its bytes land: not inline */
	if ((wr->send_flags & IB_SEND_INLINE) && wr->opcode == IB_UVERBS_WR_RDMA_READ)
		return -EINVAL;
	if (softcm_is_atomic(wr->opcode)) {
		/* one SGE for the original value (its 8 bytes: softcm_rc_take()) */
		if (wr->num_sge != 1 || (wr->send_flags & IB_SEND_INLINE) ||
		    wr->wr.atomic.reserved0)
			return -EINVAL;
	} else if (qp->type != IB_QPT_UD && softcm_wc_opcode(wr->opcode) != IB_WC_SEND &&
		   wr->wr.rdma.reserved0) {
		return -EINVAL;
	}
	if (qp->type == IB_QPT_UD) {
		if (wr->wr.ud.remote_qpn > QPN_MASK || wr->wr.ud.reserved0)
			return -EINVAL;
		/* an AH of this file, in the QP's PD as IBTA requires */
		ah = softcm_ah_get(sf, wr->wr.ud.ah_handle);
		if (IS_ERR(ah))
			return PTR_ERR(ah);
		ret = ah->pd == qp->pd ? 0 : -EINVAL;
		softcm_ah_put(ah);
	}
	return ret;
}

static u64 inline_len(const struct softcm_send_wr *wr, const struct softcm_sge *sge)
{
	u64 len = 0;
	u32 i;

	if (!(wr->send_flags & IB_SEND_INLINE))
		return 0;
	for (i = 0; i < wr->num_sge; i++)
		len += sge[i].length;
	return len;
}

/*
 * Complete the send WR the consumer took at @cons (@w, copied from
 * @slot), checked with @err: a valid SEND of an RC QP in RTS goes to the
 * requester (req.c) and completes when it is acknowledged; any other
 * valid one fails for want of a data path and takes the QP to ERR, as a
 * WR that failed its checks does; one taken in ERR is flushed.  Nothing
 * if the QP was reset or destroyed since the WR was copied: it went with
 * its queue.  True if the requester took it: the caller has it sent
 * (softcm_rc_push()).
 */
static bool complete_send(struct softcm_qp *qp, u32 cons, const struct softcm_sq_wqe *w,
			  const void *slot, int err)
{
	const struct softcm_send_wr *wr = &w->wr;
	struct softcm_wc wc = {
		.wr_id = wr->wr_id,
		.opcode = softcm_wc_opcode(wr->opcode),
		.qp_num = qp->qpn,
		.port_num = SOFTCM_PORT_NUM,
	};
	bool taken = false;

	spin_lock_bh(&qp->lock);
	if (qp->dead || qp->rc.sq_next != cons ||
	    (qp->state != IB_QPS_RTS && qp->state != IB_QPS_ERR))
		goto out_unlock;
	/* a READ or atomic with no credits at all could never be sent */
	if (!err && qp->type == IB_QPT_RC && !qp->attr.max_rd_atomic &&
	    (wr->opcode == IB_UVERBS_WR_RDMA_READ || softcm_is_atomic(wr->opcode)))
		err = -EINVAL;
	if (qp->state == IB_QPS_RTS && !err && qp->type == IB_QPT_RC) {
		err = softcm_rc_take(qp, w, slot);
		if (!err) {
			taken = true;
			goto out_unlock;
		}
		if (err == -EOPNOTSUPP)
			err = 0;
	}
	if (qp->state == IB_QPS_ERR) {
		wc.status = IB_WC_WR_FLUSH_ERR;
	} else if (err) {
		wc.status = IB_WC_LOC_QP_OP_ERR;
	} else {
		wc.status = IB_WC_GENERAL_ERR;
		wc.vendor_err = SOFTCM_VENDOR_ERR_NO_DATA_PATH;
	}
	/* the WRs taken before it complete first */
	softcm_rc_flush_sq(qp);
	/* signalled or not: an error always completes */
	softcm_cq_push(qp->scq, &wc, true);
	set_state(qp, IB_QPS_ERR);
	qp->sq_cons = cons + 1;
	qp->rc.sq_next = qp->sq_cons;
	/* Pairs with the user's acquire of sq_cons: the slot is free. */
	smp_store_release(&qp->kpage->sq_cons, qp->sq_cons);
out_unlock:
	spin_unlock_bh(&qp->lock);
	return taken;
}

/*
 * Whether the send queue has a WR to take now (in RTS or ERR), *@cons its
 * index.  A producer index more than the ring ahead, or behind the WRs
 * already taken, is a broken ring: nothing in it can be taken, and the
 * QP goes to ERR.
 */
static bool sq_ready(struct softcm_qp *qp, u32 *cons)
{
	bool ready;
	u32 prod;

	spin_lock_bh(&qp->lock);
	*cons = qp->rc.sq_next;
	ready = !qp->dead && (qp->state == IB_QPS_RTS || qp->state == IB_QPS_ERR);
	if (ready) {
		/* Pairs with the user's release of sq_prod: its slots first. */
		prod = smp_load_acquire(&qp->upage->sq_prod);
		ready = prod != *cons;
		if (prod - qp->sq_cons > qp->sq_entries ||
		    prod - qp->sq_cons < *cons - qp->sq_cons) {
			set_state(qp, IB_QPS_ERR);
			ready = false;
		}
	}
	spin_unlock_bh(&qp->lock);
	return ready;
}

/*
 * Take the WR at @cons: one copy out of its slot, then only the copy is
 * checked and used.  Its SGEs (or inline bytes) stay in the slot until
 * the data path copies them out; no check here reads them.  True if the
 * requester took it.
 */
static bool sq_take(struct softcm_file *sf, struct softcm_qp *qp, u32 cons)
{
	const struct softcm_sq_wqe *slot = sq_slot(qp, cons);
	struct softcm_sq_wqe w;
	int err;

	lockdep_assert_held(&qp->sq_mutex);
	memcpy(&w, slot, sizeof(w));
	if (w.reserved0)
		err = -EINVAL;
	else if (!(w.wr.send_flags & IB_SEND_INLINE) && w.wr.num_sge > qp->cap.max_send_sge)
		err = -EINVAL;
	else
		err = check_send(sf, qp, &w.wr, w.inline_len);
	return complete_send(qp, cons, &w, slot, err);
}

/*
 * Run the send queue until it is empty, then go idle: set NEED_DOORBELL
 * and look once more, with a full barrier between, so that a WR the user
 * published before it could see the flag is taken here (uapi: Rings).
 * WRs posted meanwhile by other threads need no doorbell of theirs.
 * An RC QP's WRs taken are sent from here before the queue goes idle
 * (req.c): WRs posted while they are sent are taken by the next round,
 * still without a doorbell.
 */
static void sq_run(struct softcm_file *sf, struct softcm_qp *qp)
{
	unsigned long n;
	bool taken;
	u32 cons;

	lockdep_assert_held(&qp->sq_mutex);
	/* work outside the lock: destroy waits for it (qp_quiesce()) */
	if (!softcm_qp_enter(qp))
		return;
	do {
		WRITE_ONCE(qp->kpage->sq_flags, 0);
		/* Running: posters see it before we read their index. */
		smp_mb();
		taken = false;
		n = 0;
		while (sq_ready(qp, &cons)) {
			taken |= sq_take(sf, qp, cons);
			n++;
			if (fatal_signal_pending(current))
				break;
			cond_resched();
		}
		softcm_rc_count(qp, SOFTCM_RC_SQ_WRS, n);
		if (taken)
			softcm_rc_push(qp);
		WRITE_ONCE(qp->kpage->sq_flags, SOFTCM_SQ_NEED_DOORBELL);
		/* Pairs with the user's barrier between sq_prod and sq_flags. */
		smp_mb();
	} while (!fatal_signal_pending(current) && sq_ready(qp, &cons));
	softcm_qp_leave(qp);
}

/* Copy POST_SEND's inline data into slot @w, from the caller's SGEs. */
static int copy_inline(struct softcm_sq_wqe *w, const struct softcm_sge *sge, u32 n)
{
	u8 *to = (u8 *)(w + 1);
	u32 i;

	for (i = 0; i < n; i++) {
		if (copy_from_user(to, u64_to_user_ptr(sge[i].addr), sge[i].length))
			return -EFAULT;
		to += sge[i].length;
	}
	return 0;
}

/*
 * POST_SEND's WR, checked: written into the send queue as the library
 * writes it, then the queue runs as on a doorbell.
 */
static int post_one_send(struct softcm_file *sf, struct softcm_qp *qp,
			 const struct softcm_send_wr *wr, const struct softcm_sge *sge)
{
	struct softcm_sq_wqe *w;
	bool inl = wr->send_flags & IB_SEND_INLINE;
	int ret = 0;
	u32 prod;

	mutex_lock(&qp->sq_mutex);
	prod = READ_ONCE(qp->upage->sq_prod);
	spin_lock_bh(&qp->lock);
	if (qp->dead || (qp->state != IB_QPS_RTS && qp->state != IB_QPS_ERR))
		ret = -EINVAL;
	/* the WRs in flight hold their slots until they complete */
	else if (prod - qp->sq_cons >= qp->cap.max_send_wr)
		ret = -ENOMEM;
	spin_unlock_bh(&qp->lock);
	if (ret)
		goto out_unlock;
	w = sq_slot(qp, prod);
	w->wr = *wr;
	w->inline_len = inl ? inline_len(wr, sge) : 0;
	w->reserved0 = 0;
	if (inl)
		ret = copy_inline(w, sge, wr->num_sge);
	else
		memcpy(w + 1, sge, wr->num_sge * sizeof(*sge));
	if (ret)
		goto out_unlock;
	/* Pairs with sq_ready()'s acquire: the slot first, as the library. */
	smp_store_release(&qp->upage->sq_prod, prod + 1);
	sq_run(sf, qp);
out_unlock:
	mutex_unlock(&qp->sq_mutex);
	return ret;
}

int softcm_qp_post_send(struct softcm_file *sf, struct softcm_post *c)
{
	const struct softcm_send_wr __user *uwr = u64_to_user_ptr(c->wr);
	struct softcm_sge sge[SOFTCM_MAX_SGE];
	struct softcm_send_wr wr;
	struct softcm_uobj *obj;
	struct softcm_qp *qp;
	u32 i, off = 0;
	int ret;

	c->bad_wr = 0;
	obj = softcm_uobj_get(&sf->uobjs, SOFTCM_UOBJ_QP, c->handle);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	qp = qp_of(obj);
	ret = check_sge_sum(c, sizeof(wr), offsetof(struct softcm_send_wr, num_sge));
	for (i = 0; !ret && i < c->wr_count; i++) {
		c->bad_wr = i;
		/* each send completes at once, so a post may fill the queue once */
		if (i >= qp->cap.max_send_wr) {
			ret = -ENOMEM;
			break;
		}
		if (copy_from_user(&wr, uwr + i, sizeof(wr))) {
			ret = -EFAULT;
			break;
		}
		if (wr.num_sge > qp->cap.max_send_sge) {
			ret = -EINVAL;
			break;
		}
		ret = read_sges(c, off, wr.num_sge, sge);
		if (!ret)
			ret = check_send(sf, qp, &wr, inline_len(&wr, sge));
		/* an atomic's SGE is its 8 bytes (the ring's: softcm_rc_take()) */
		if (!ret && softcm_is_atomic(wr.opcode) && sge[0].length != sizeof(u64))
			ret = -EINVAL;
		if (!ret)
			ret = post_one_send(sf, qp, &wr, sge);
		off += wr.num_sge;
	}
	if (!ret)
		c->bad_wr = c->wr_count;
	softcm_uobj_put(obj);
	return ret;
}

int softcm_qp_doorbell(struct softcm_file *sf, struct softcm_doorbell *c)
{
	struct softcm_uobj *obj;
	struct softcm_qp *qp;

	if (!c->flags || (c->flags & ~(SOFTCM_DOORBELL_SQ | SOFTCM_DOORBELL_RQ)))
		return -EINVAL;
	obj = softcm_uobj_get(&sf->uobjs, SOFTCM_UOBJ_QP, c->handle);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	qp = qp_of(obj);
	if (c->flags & SOFTCM_DOORBELL_RQ) {
		spin_lock_bh(&qp->lock);
		if (!qp->dead && qp->state == IB_QPS_ERR)
			flush_rq(qp);
		spin_unlock_bh(&qp->lock);
	}
	if (c->flags & SOFTCM_DOORBELL_SQ) {
		softcm_rc_count(qp, SOFTCM_RC_DOORBELLS, 1);
		mutex_lock(&qp->sq_mutex);
		sq_run(sf, qp);
		mutex_unlock(&qp->sq_mutex);
	}
	softcm_uobj_put(obj);
	return 0;
}
