// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs of type RC and UD: creation on a PD and two CQs, the IBTA
 * state machine (qpstate.c's table, then every attribute's value), and
 * the work queues.
 *
 * There is no data path yet (a later issue moves data over RoCEv2).  Until
 * then a receive WR is validated and queued, and waits; a send WR is
 * validated and completes at once with IBV_WC_GENERAL_ERR and vendor_err
 * SOFTCM_VENDOR_ERR_NO_DATA_PATH, signalled or not, and the QP enters
 * ERR as after any completion error: its receives are flushed, and the
 * WRs posted after it complete with IBV_WC_WR_FLUSH_ERR.  Like rdma_rxe
 * after a local completion error, no async event is reported: the
 * completion says it all.  SGEs' lkeys are the data path's to check
 * against the MRs (mr.c); they are only counted here.
 *
 * QP numbers come from the namespace's xarray (24 bits, cyclic from 2:
 * 0 and 1 are the special QPs), where the data path will look the
 * destination QP of a packet up under RCU (softcm_qp_lookup()).
 */

#include <linux/overflow.h>
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
#include "uobj.h"

#define QPN_MASK	0xffffff
#define PSN_MASK	0xffffff
/* WRs one post may name: the pre-pass reads each one's num_sge */
#define MAX_POST_WR	(4 * SOFTCM_MAX_QP_WR)

/* A receive WQE, as queued: the data path will scatter into its SGEs. */
struct rwqe {
	u64 wr_id;
	u32 num_sge;
	u32 reserved;
	struct softcm_sge sge[];
};

static struct softcm_qp *qp_of(struct softcm_uobj *obj)
{
	return container_of(obj, struct softcm_qp, uobj);
}

static struct rwqe *rq_slot(struct softcm_qp *qp, u32 i)
{
	u32 max = qp->cap.max_recv_wr;

	return (struct rwqe *)(qp->rq + (size_t)((qp->rq_head + i) % max) * qp->rq_stride);
}

/*
 * The QP @qpn of @sn, referenced (softcm_uobj_put()), or NULL: for the
 * data path, from any context.
 */
struct softcm_qp *softcm_qp_lookup(struct softcm_net *sn, u32 qpn)
{
	struct softcm_qp *qp;

	rcu_read_lock();
	qp = xa_load(&sn->qpns, qpn);
	if (qp && !kref_get_unless_zero(&qp->uobj.ref))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

/* Complete every queued receive with IBV_WC_WR_FLUSH_ERR, oldest first. */
static void flush_rq(struct softcm_qp *qp)
{
	struct softcm_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->qpn,
		.port_num = SOFTCM_PORT_NUM,
	};

	lockdep_assert_held(&qp->lock);
	while (qp->rq_count) {
		wc.wr_id = rq_slot(qp, 0)->wr_id;
		/* an error completion ends a solicited-only arming (IBTA 11.4.2.2) */
		softcm_cq_push(qp->rcq, &wc, true);
		qp->rq_head = (qp->rq_head + 1) % qp->cap.max_recv_wr;
		qp->rq_count--;
	}
	qp->rq_head = 0;
}

static void set_state(struct softcm_qp *qp, u32 next)
{
	lockdep_assert_held(&qp->lock);
	if (next == IB_QPS_ERR && qp->state != IB_QPS_ERR)
		flush_rq(qp);
	if (next == IB_QPS_RESET) {
		/* the work queues are emptied, nothing completes (IBTA 10.3.1) */
		qp->rq_count = 0;
		qp->rq_head = 0;
	}
	qp->state = next;
}

static void qp_destroy(struct softcm_uobj *obj)
{
	struct softcm_qp *qp = qp_of(obj);

	spin_lock_bh(&qp->lock);
	qp->dead = true;
	/* what is queued goes without completions: nobody polls for them */
	qp->rq_count = 0;
	spin_unlock_bh(&qp->lock);
	xa_erase(&qp->sn->qpns, qp->qpn);
	qp->events_reported = softcm_evfd_entry_purge(&qp->async_ev);
	softcm_uobj_unuse(&qp->rcq->uobj);
	softcm_uobj_unuse(&qp->scq->uobj);
	softcm_pd_unuse(qp->pd);
	atomic_dec(&qp->sn->nr_qps);
}

static void qp_free(struct softcm_uobj *obj)
{
	struct softcm_qp *qp = qp_of(obj);

	kvfree(qp->rq);
	/* softcm_qp_lookup() may still be looking at it */
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
	qp->state = IB_QPS_RESET;
	qp->type = c->qp_type;
	qp->sq_sig_all = c->sq_sig_all;
	qp->uid = c->uid;
	qp->cap = c->cap;
	qp->sn = sn;
	softcm_evfd_entry_init(&qp->async_ev);
	qp->rq_stride = struct_size((struct rwqe *)NULL, sge, c->cap.max_recv_sge);
	ret = -ENOMEM;
	if (c->cap.max_recv_wr) {
		qp->rq = kvcalloc(c->cap.max_recv_wr, qp->rq_stride, GFP_KERNEL_ACCOUNT);
		if (!qp->rq)
			goto err_free_qp;
	}

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
	kvfree(qp->rq);
err_free_qp:
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
		/* REMOTE_ATOMIC as uverbs takes it; atomics fail when posted. */
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
	spin_lock_bh(&qp->lock);
	ret = modify_locked(qp, c->attr_mask, &c->attr);
	spin_unlock_bh(&qp->lock);
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

static int post_one_recv(struct softcm_qp *qp, const struct softcm_recv_wr *wr,
			 const struct softcm_sge *sge)
{
	struct rwqe *w;

	spin_lock_bh(&qp->lock);
	if (qp->dead || qp->state == IB_QPS_RESET) {
		spin_unlock_bh(&qp->lock);
		return -EINVAL;
	}
	if (qp->rq_count == qp->cap.max_recv_wr) {
		spin_unlock_bh(&qp->lock);
		return -ENOMEM;
	}
	w = rq_slot(qp, qp->rq_count);
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	memcpy(w->sge, sge, wr->num_sge * sizeof(*sge));
	qp->rq_count++;
	/* a receive posted to a QP in error is flushed at once (IBTA 10.8.3.1) */
	if (qp->state == IB_QPS_ERR)
		flush_rq(qp);
	spin_unlock_bh(&qp->lock);
	return 0;
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
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
	case IB_UVERBS_WR_RDMA_READ:
		return type == IB_QPT_RC ? 0 : -EINVAL;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
	case IB_UVERBS_WR_LOCAL_INV:
	case IB_UVERBS_WR_BIND_MW:
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_TSO:
		return type == IB_QPT_RC ? -EOPNOTSUPP : -EINVAL;
	default:
		return -EINVAL;
	}
}

static u32 wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	default:
		return IB_WC_SEND;
	}
}

static int check_send(struct softcm_file *sf, struct softcm_qp *qp,
		      const struct softcm_send_wr *wr, const struct softcm_sge *sge)
{
	struct softcm_ah *ah;
	u64 len = 0;
	u32 i;
	int ret;

	ret = check_opcode(qp->type, wr->opcode);
	if (ret)
		return ret;
	if (wr->send_flags & ~(IB_SEND_FENCE | IB_SEND_SIGNALED | IB_SEND_SOLICITED |
			       IB_SEND_INLINE))
		return -EINVAL;
	if (wr->send_flags & IB_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++)
			len += sge[i].length;
		if (len > qp->cap.max_inline_data)
			return -EINVAL;
	}
	if (qp->type != IB_QPT_UD && wc_opcode(wr->opcode) != IB_WC_SEND &&
	    wr->wr.rdma.reserved0)
		return -EINVAL;
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

/*
 * Complete a valid send: with no data path it fails, and takes the QP to
 * ERR; one posted to a QP already in ERR is flushed.
 */
static int post_one_send(struct softcm_qp *qp, const struct softcm_send_wr *wr)
{
	struct softcm_wc wc = {
		.wr_id = wr->wr_id,
		.opcode = wc_opcode(wr->opcode),
		.qp_num = qp->qpn,
		.port_num = SOFTCM_PORT_NUM,
	};

	spin_lock_bh(&qp->lock);
	if (qp->dead || (qp->state != IB_QPS_RTS && qp->state != IB_QPS_ERR)) {
		spin_unlock_bh(&qp->lock);
		return -EINVAL;
	}
	if (qp->state == IB_QPS_ERR) {
		wc.status = IB_WC_WR_FLUSH_ERR;
	} else {
		wc.status = IB_WC_GENERAL_ERR;
		wc.vendor_err = SOFTCM_VENDOR_ERR_NO_DATA_PATH;
	}
	/* signalled or not: an error always completes */
	softcm_cq_push(qp->scq, &wc, true);
	set_state(qp, IB_QPS_ERR);
	spin_unlock_bh(&qp->lock);
	return 0;
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
			ret = check_send(sf, qp, &wr, sge);
		if (!ret)
			ret = post_one_send(qp, &wr);
		off += wr.num_sge;
	}
	if (!ret)
		c->bad_wr = c->wr_count;
	softcm_uobj_put(obj);
	return ret;
}
