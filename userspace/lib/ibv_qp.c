// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * Queue pairs (RC and UD, without SRQ): creation, the IBTA state machine
 * the kernel enforces through MODIFY_QP, queries, destruction (waiting
 * for the QP's async events to be acknowledged, as libibverbs), and
 * posting: work requests go into the QP's rings (uapi/linux/softcm.h,
 * "Rings"), a receive with no system call, a send with a DOORBELL only
 * when the kernel's consumer is idle.  What softcm does not support
 * answers EOPNOTSUPP.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void ah_attr_to_kern(struct softcm_ah_attr *k, const struct ibv_ah_attr *a)
{
	memcpy(k->dgid, a->grh.dgid.raw, sizeof(k->dgid));
	k->flow_label = a->grh.flow_label;
	k->sgid_index = a->grh.sgid_index;
	k->hop_limit = a->grh.hop_limit;
	k->traffic_class = a->grh.traffic_class;
	k->dlid = a->dlid;
	k->sl = a->sl;
	k->src_path_bits = a->src_path_bits;
	k->static_rate = a->static_rate;
	k->is_global = a->is_global;
	k->port_num = a->port_num;
}

static void ah_attr_from_kern(struct ibv_ah_attr *a, const struct softcm_ah_attr *k)
{
	memcpy(a->grh.dgid.raw, k->dgid, sizeof(k->dgid));
	a->grh.flow_label = k->flow_label;
	a->grh.sgid_index = k->sgid_index;
	a->grh.hop_limit = k->hop_limit;
	a->grh.traffic_class = k->traffic_class;
	a->dlid = k->dlid;
	a->sl = k->sl;
	a->src_path_bits = k->src_path_bits;
	a->static_rate = k->static_rate;
	a->is_global = k->is_global;
	a->port_num = k->port_num;
}

static void cap_to_kern(struct softcm_qp_cap *k, const struct ibv_qp_cap *c)
{
	k->max_send_wr = c->max_send_wr;
	k->max_recv_wr = c->max_recv_wr;
	k->max_send_sge = c->max_send_sge;
	k->max_recv_sge = c->max_recv_sge;
	k->max_inline_data = c->max_inline_data;
}

static void cap_from_kern(struct ibv_qp_cap *c, const struct softcm_qp_cap *k)
{
	c->max_send_wr = k->max_send_wr;
	c->max_recv_wr = k->max_recv_wr;
	c->max_send_sge = k->max_send_sge;
	c->max_recv_sge = k->max_recv_sge;
	c->max_inline_data = k->max_inline_data;
}

static void qp_attr_to_kern(struct softcm_qp_attr *k, const struct ibv_qp_attr *a)
{
	k->qp_state = a->qp_state;
	k->cur_qp_state = a->cur_qp_state;
	k->path_mtu = a->path_mtu;
	k->path_mig_state = a->path_mig_state;
	k->qkey = a->qkey;
	k->rq_psn = a->rq_psn;
	k->sq_psn = a->sq_psn;
	k->dest_qp_num = a->dest_qp_num;
	k->qp_access_flags = a->qp_access_flags;
	k->pkey_index = a->pkey_index;
	k->alt_pkey_index = a->alt_pkey_index;
	k->en_sqd_async_notify = a->en_sqd_async_notify;
	k->sq_draining = a->sq_draining;
	k->max_rd_atomic = a->max_rd_atomic;
	k->max_dest_rd_atomic = a->max_dest_rd_atomic;
	k->min_rnr_timer = a->min_rnr_timer;
	k->port_num = a->port_num;
	k->timeout = a->timeout;
	k->retry_cnt = a->retry_cnt;
	k->rnr_retry = a->rnr_retry;
	k->alt_port_num = a->alt_port_num;
	k->alt_timeout = a->alt_timeout;
	cap_to_kern(&k->cap, &a->cap);
	ah_attr_to_kern(&k->ah_attr, &a->ah_attr);
	ah_attr_to_kern(&k->alt_ah_attr, &a->alt_ah_attr);
}

/* Also rdma_init_qp_attr()'s (verbs.c), as libibverbs' copy from the kernel. */
void softcm_qp_attr_from_kern(struct ibv_qp_attr *a, const struct softcm_qp_attr *k)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = k->qp_state;
	a->cur_qp_state = k->cur_qp_state;
	a->path_mtu = k->path_mtu;
	a->path_mig_state = k->path_mig_state;
	a->qkey = k->qkey;
	a->rq_psn = k->rq_psn;
	a->sq_psn = k->sq_psn;
	a->dest_qp_num = k->dest_qp_num;
	a->qp_access_flags = k->qp_access_flags;
	a->pkey_index = k->pkey_index;
	a->alt_pkey_index = k->alt_pkey_index;
	a->en_sqd_async_notify = k->en_sqd_async_notify;
	a->sq_draining = k->sq_draining;
	a->max_rd_atomic = k->max_rd_atomic;
	a->max_dest_rd_atomic = k->max_dest_rd_atomic;
	a->min_rnr_timer = k->min_rnr_timer;
	a->port_num = k->port_num;
	a->timeout = k->timeout;
	a->retry_cnt = k->retry_cnt;
	a->rnr_retry = k->rnr_retry;
	a->alt_port_num = k->alt_port_num;
	a->alt_timeout = k->alt_timeout;
	cap_from_kern(&a->cap, &k->cap);
	ah_attr_from_kern(&a->ah_attr, &k->ah_attr);
	ah_attr_from_kern(&a->alt_ah_attr, &k->alt_ah_attr);
}

/* The QP's two areas, as CREATE_QP describes them in @c. */
static int map_rings(struct ibv_context *ctx, struct softcm_qp *sqp,
		     const struct softcm_create_qp *c)
{
	if (softcm_area_map(ctx, &sqp->kmap, &c->kmap, 0))
		return -1;
	if (softcm_area_map(ctx, &sqp->umap, &c->umap, 1)) {
		softcm_area_unmap(&sqp->kmap);
		return -1;
	}
	sqp->kpage = sqp->kmap.addr;
	sqp->upage = sqp->umap.addr;
	sqp->sq = (uint8_t *)sqp->umap.addr + c->sq.offset;
	sqp->rq = (uint8_t *)sqp->umap.addr + c->rq.offset;
	sqp->sq_mask = c->sq.entries - 1;
	sqp->rq_mask = c->rq.entries - 1;
	sqp->sq_stride = c->sq.stride;
	sqp->rq_stride = c->rq.stride;
	pthread_spin_init(&sqp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&sqp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

/*
 * A QP of ibv_create_qp() or of the context's create_qp_ex
 * (ibv_qp_ex.c, which checks what lies beyond ibv_qp_init_attr): the
 * caps granted are written back, as providers do.  NULL with errno.
 */
struct softcm_qp *softcm_qp_create(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	struct softcm_create_qp c;
	struct softcm_qp *sqp;
	struct ibv_qp *qp;

	if (!attr->pd || !attr->send_cq || !attr->recv_cq || attr->pd->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->srq) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	sqp = calloc(1, sizeof(*sqp));
	if (!sqp) {
		errno = ENOMEM;
		return NULL;
	}
	qp = &sqp->qp;
	memset(&c, 0, sizeof(c));
	c.uid = (uintptr_t)qp;
	c.pd_handle = attr->pd->handle;
	c.send_cq_handle = attr->send_cq->handle;
	c.recv_cq_handle = attr->recv_cq->handle;
	c.qp_type = attr->qp_type;
	c.sq_sig_all = !!attr->sq_sig_all;
	if ((unsigned int)attr->qp_type > 0xff)
		c.qp_type = 0xff;	/* the kernel refuses it: EOPNOTSUPP */
	cap_to_kern(&c.cap, &attr->cap);
	if (softcm_vioctl(ctx, SOFTCM_IOCTL_CREATE_QP, &c)) {
		free(sqp);
		return NULL;
	}
	if (map_rings(ctx, sqp, &c)) {
		int err = errno;
		struct softcm_destroy_qp d = { .handle = c.handle };

		softcm_vioctl(ctx, SOFTCM_IOCTL_DESTROY_QP, &d);
		free(sqp);
		errno = err;
		return NULL;
	}
	cap_from_kern(&attr->cap, &c.cap);
	sqp->cap = attr->cap;
	qp->context = ctx;
	qp->qp_context = attr->qp_context;
	qp->pd = attr->pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->handle = c.handle;
	qp->qp_num = c.qp_num;
	qp->state = IBV_QPS_RESET;
	qp->qp_type = attr->qp_type;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	softcm_ctx_hold(ctx);
	return sqp;
}

/* Not an extended QP: ibv_qp_to_qp_ex() answers NULL, as libibverbs. */
SOFTCM_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
					   struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ex;
	struct softcm_qp *sqp;

	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, qp_init_attr, sizeof(*qp_init_attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	sqp = softcm_qp_create(pd->context, &ex);
	if (!sqp)
		return NULL;
	qp_init_attr->cap = ex.cap;
	return &sqp->qp;
}

/* An errno value, as libibverbs; the kernel checks the IBTA table. */
SOFTCM_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct softcm_modify_qp m;

	memset(&m, 0, sizeof(m));
	m.handle = qp->handle;
	m.attr_mask = attr_mask;
	qp_attr_to_kern(&m.attr, attr);
	if (softcm_vioctl(qp->context, SOFTCM_IOCTL_MODIFY_QP, &m))
		return errno;
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

SOFTCM_EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			       struct ibv_qp_init_attr *init_attr)
{
	struct softcm_query_qp q;

	memset(&q, 0, sizeof(q));
	q.handle = qp->handle;
	q.attr_mask = attr_mask;
	if (softcm_vioctl(qp->context, SOFTCM_IOCTL_QUERY_QP, &q))
		return errno;
	softcm_qp_attr_from_kern(attr, &q.attr);
	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = qp->srq;
	cap_from_kern(&init_attr->cap, &q.init_cap);
	init_attr->qp_type = q.qp_type;
	init_attr->sq_sig_all = q.sq_sig_all;
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

/* Waits until the QP's reported async events are acknowledged. */
SOFTCM_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct softcm_destroy_qp d = { .handle = qp->handle };
	struct ibv_context *context = qp->context;

	if (softcm_vioctl(context, SOFTCM_IOCTL_DESTROY_QP, &d))
		return errno;
	pthread_mutex_lock(&qp->mutex);
	while (qp->events_completed < d.events_reported)
		pthread_cond_wait(&qp->cond, &qp->mutex);
	pthread_mutex_unlock(&qp->mutex);
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->mutex);
	softcm_area_unmap(&to_sqp(qp)->umap);
	softcm_area_unmap(&to_sqp(qp)->kmap);
	pthread_spin_destroy(&to_sqp(qp)->sq_lock);
	pthread_spin_destroy(&to_sqp(qp)->rq_lock);
	free(to_sqp(qp));
	softcm_ctx_put(context);
	return 0;
}

/* The opcodes the kernel takes from a QP of @type, as its POST_SEND checks. */
static int check_opcode(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return 0;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return type == IBV_QPT_RC ? 0 : EINVAL;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
	case IBV_WR_TSO:
		return type == IBV_QPT_RC ? EOPNOTSUPP : EINVAL;
	default:
		return EINVAL;
	}
}

#define SEND_FLAGS	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
			 IBV_SEND_INLINE)

/* Write @w into the send queue's next slot: an errno value if it cannot go. */
static int sq_write(struct softcm_qp *sqp, const struct ibv_send_wr *w)
{
	struct softcm_sq_wqe *wqe;
	struct softcm_sge *sge;
	uint32_t len = 0;
	uint8_t *data;
	int ret, i;

	ret = check_opcode(sqp->qp.qp_type, w->opcode);
	if (ret)
		return ret;
	if (w->num_sge < 0 || (unsigned int)w->num_sge > sqp->cap.max_send_sge ||
	    (w->send_flags & ~SEND_FLAGS))
		return EINVAL;
	if (sqp->qp.qp_type == IBV_QPT_UD &&
	    (!w->wr.ud.ah || w->wr.ud.remote_qpn > 0xffffff))
		return EINVAL;
	/* an atomic's one SGE takes the 8 bytes of the original value */
	if (softcm_wr_is_atomic(w->opcode) &&
	    (w->num_sge != 1 || w->sg_list[0].length != 8 || (w->send_flags & IBV_SEND_INLINE)))
		return EINVAL;
	if (w->send_flags & IBV_SEND_INLINE) {
		for (i = 0; i < w->num_sge; i++) {
			len += w->sg_list[i].length;
			if (len > sqp->cap.max_inline_data || len < w->sg_list[i].length)
				return EINVAL;
		}
	}
	if (!softcm_sq_room(sqp, sqp->sq_prod))
		return ENOMEM;
	wqe = softcm_sq_slot(sqp, sqp->sq_prod);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr.wr_id = w->wr_id;
	wqe->wr.num_sge = w->num_sge;
	wqe->wr.opcode = w->opcode;
	wqe->wr.send_flags = w->send_flags;
	/* SEND_WITH_INV: the rkey, in host order, where the immediate goes */
	wqe->wr.imm_data = w->opcode == IBV_WR_SEND_WITH_INV ? w->invalidate_rkey : w->imm_data;
	if (sqp->qp.qp_type == IBV_QPT_UD) {
		wqe->wr.wr.ud.ah_handle = w->wr.ud.ah->handle;
		wqe->wr.wr.ud.remote_qpn = w->wr.ud.remote_qpn;
		wqe->wr.wr.ud.remote_qkey = w->wr.ud.remote_qkey;
	} else if (softcm_wr_is_atomic(w->opcode)) {
		wqe->wr.wr.atomic.remote_addr = w->wr.atomic.remote_addr;
		wqe->wr.wr.atomic.compare_add = w->wr.atomic.compare_add;
		wqe->wr.wr.atomic.swap = w->wr.atomic.swap;
		wqe->wr.wr.atomic.rkey = w->wr.atomic.rkey;
	} else {
		wqe->wr.wr.rdma.remote_addr = w->wr.rdma.remote_addr;
		wqe->wr.wr.rdma.rkey = w->wr.rdma.rkey;
	}
	if (w->send_flags & IBV_SEND_INLINE) {
		/* the data travels in the slot: the caller's buffers are free at return */
		wqe->inline_len = len;
		data = (uint8_t *)(wqe + 1);
		for (i = 0; i < w->num_sge; i++) {
			memcpy(data, (void *)(uintptr_t)w->sg_list[i].addr, w->sg_list[i].length);
			data += w->sg_list[i].length;
		}
	} else {
		sge = (struct softcm_sge *)(wqe + 1);
		for (i = 0; i < w->num_sge; i++) {
			sge[i].addr = w->sg_list[i].addr;
			sge[i].length = w->sg_list[i].length;
			sge[i].lkey = w->sg_list[i].lkey;
		}
	}
	sqp->sq_prod++;
	return 0;
}

static void ring_doorbell(struct softcm_qp *sqp, uint32_t flags)
{
	struct softcm_doorbell d = { .handle = sqp->qp.handle, .flags = flags };

	softcm_vioctl(sqp->qp.context, SOFTCM_IOCTL_DOORBELL, &d);
}

/* Sends go in RTS and ERR only, as the kernel takes them. */
int softcm_sq_can_post(struct softcm_qp *sqp)
{
	uint32_t state = __atomic_load_n(&sqp->kpage->state, __ATOMIC_RELAXED);

	return state == IBV_QPS_RTS || state == IBV_QPS_ERR;
}

/* Under sq_lock: the slots before @prod are written, the kernel may take them. */
void softcm_sq_publish(struct softcm_qp *sqp, uint32_t prod)
{
	sqp->sq_prod = prod;
	/* Pairs with the kernel's acquire of sq_prod: the slots first. */
	__atomic_store_n(&sqp->upage->sq_prod, prod, __ATOMIC_RELEASE);
}

/*
 * After a publish, sq_lock released: the doorbell rule of
 * uapi/linux/softcm.h, a full barrier, then a DOORBELL only if the
 * kernel said it is idle.
 */
void softcm_sq_kick(struct softcm_qp *sqp)
{
	/* Pairs with the kernel's barrier between sq_flags and sq_prod. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&sqp->kpage->sq_flags, __ATOMIC_RELAXED) & SOFTCM_SQ_NEED_DOORBELL)
		ring_doorbell(sqp, SOFTCM_DOORBELL_SQ);
}

/*
 * An errno value, as a provider's, with *bad the first WR not queued:
 * those before it are.
 */
int softcm_ctx_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct softcm_qp *sqp = to_sqp(qp);
	struct ibv_send_wr *w = wr;
	int ret = 0, n = 0;

	pthread_spin_lock(&sqp->sq_lock);
	if (!softcm_sq_can_post(sqp))
		ret = EINVAL;
	for (; !ret && w; w = w->next) {
		ret = sq_write(sqp, w);
		if (ret)
			break;
		n++;
	}
	if (n)
		softcm_sq_publish(sqp, sqp->sq_prod);
	pthread_spin_unlock(&sqp->sq_lock);
	if (n)
		softcm_sq_kick(sqp);
	if (ret)
		*bad = w;
	return ret;
}

/* Write @w into the receive queue's next slot: an errno value if it cannot go. */
static int rq_write(struct softcm_qp *sqp, const struct ibv_recv_wr *w)
{
	struct softcm_rq_wqe *wqe;
	struct softcm_sge *sge;
	uint32_t cons;
	int i;

	if (w->num_sge < 0 || (unsigned int)w->num_sge > sqp->cap.max_recv_sge)
		return EINVAL;
	/* Pairs with the kernel's release of rq_cons: the slot is free. */
	cons = __atomic_load_n(&sqp->kpage->rq_cons, __ATOMIC_ACQUIRE);
	if (sqp->rq_prod - cons >= sqp->cap.max_recv_wr)
		return ENOMEM;
	wqe = (struct softcm_rq_wqe *)(sqp->rq + (size_t)(sqp->rq_prod & sqp->rq_mask) *
				       sqp->rq_stride);
	wqe->wr.wr_id = w->wr_id;
	wqe->wr.num_sge = w->num_sge;
	wqe->wr.reserved0 = 0;
	sge = (struct softcm_sge *)(wqe + 1);
	for (i = 0; i < w->num_sge; i++) {
		sge[i].addr = w->sg_list[i].addr;
		sge[i].length = w->sg_list[i].length;
		sge[i].lkey = w->sg_list[i].lkey;
	}
	sqp->rq_prod++;
	return 0;
}

/*
 * As softcm_ctx_post_send(), with no system call: only a QP in ERR gets
 * a DOORBELL, so that what was posted is flushed at once (IBTA 10.8.3.1).
 */
int softcm_ctx_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct softcm_qp *sqp = to_sqp(qp);
	struct ibv_recv_wr *w = wr;
	int ret = 0, n = 0;

	pthread_spin_lock(&sqp->rq_lock);
	if (__atomic_load_n(&sqp->kpage->state, __ATOMIC_RELAXED) == IBV_QPS_RESET)
		ret = EINVAL;
	for (; !ret && w; w = w->next) {
		ret = rq_write(sqp, w);
		if (ret)
			break;
		n++;
	}
	if (n)
		__atomic_store_n(&sqp->upage->rq_prod, sqp->rq_prod, __ATOMIC_RELEASE);
	pthread_spin_unlock(&sqp->rq_lock);
	if (n) {
		/* Pairs with the kernel's barrier between state and rq_prod. */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&sqp->kpage->state, __ATOMIC_RELAXED) == IBV_QPS_ERR)
			ring_doorbell(sqp, SOFTCM_DOORBELL_RQ);
	}
	if (ret)
		*bad = w;
	return ret;
}

/* Not supported (see softcm(7)): SRQ and multicast. */
SOFTCM_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd,
					     struct ibv_srq_init_attr *srq_init_attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

SOFTCM_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
				 int srq_attr_mask)
{
	return EOPNOTSUPP;
}

SOFTCM_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr)
{
	return EOPNOTSUPP;
}

SOFTCM_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
	return EOPNOTSUPP;
}

SOFTCM_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return EOPNOTSUPP;
}

SOFTCM_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return EOPNOTSUPP;
}
