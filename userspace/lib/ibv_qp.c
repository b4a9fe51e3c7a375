// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * Queue pairs (RC and UD, without SRQ): creation, the IBTA state machine
 * the kernel enforces through MODIFY_QP, queries, destruction (waiting
 * for the QP's async events to be acknowledged, as libibverbs), and
 * posting: the work request lists become the two arrays of struct
 * softcm_post.  What softcm does not support answers EOPNOTSUPP.
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

/*
 * ibv_create_qp_ex() through the context (verbs.h's inline), and
 * ibv_create_qp(): only a PD may be given beyond ibv_qp_init_attr; the
 * caps granted are written back, as providers do.
 */
struct ibv_qp *softcm_ctx_create_qp_ex(struct ibv_context *ctx,
				       struct ibv_qp_init_attr_ex *attr)
{
	struct softcm_create_qp c;
	struct ibv_qp *qp;

	if (attr->comp_mask & ~IBV_QP_INIT_ATTR_PD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    !attr->send_cq || !attr->recv_cq || attr->pd->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->srq) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
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
		free(qp);
		return NULL;
	}
	cap_from_kern(&attr->cap, &c.cap);
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
	return qp;
}

SOFTCM_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
					   struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp *qp;

	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, qp_init_attr, sizeof(*qp_init_attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = softcm_ctx_create_qp_ex(pd->context, &ex);
	if (qp)
		qp_init_attr->cap = ex.cap;
	return qp;
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
	free(qp);
	softcm_ctx_put(context);
	return 0;
}

/* The arrays of a post on the stack up to these sizes, else on the heap. */
#define POST_STACK_WR	16
#define POST_STACK_SGE	32
/* The device's max_sge (QUERY_DEVICE): no QP takes more in one WR. */
#define WR_MAX_SGE	32

struct post_buf {
	void *wr;
	struct softcm_sge *sge;
	void *wr_heap;
	struct softcm_sge *sge_heap;
};

static int post_alloc(struct post_buf *b, size_t wr_size, unsigned int nwr,
		      unsigned int nsge, void *wr_stack, struct softcm_sge *sge_stack)
{
	b->wr = wr_stack;
	b->sge = sge_stack;
	b->wr_heap = NULL;
	b->sge_heap = NULL;
	if (nwr > POST_STACK_WR)
		b->wr = b->wr_heap = calloc(nwr, wr_size);
	if (nsge > POST_STACK_SGE)
		b->sge = b->sge_heap = calloc(nsge, sizeof(*b->sge));
	if (!b->wr || !b->sge) {
		free(b->wr_heap);
		free(b->sge_heap);
		return ENOMEM;
	}
	return 0;
}

static void post_free(struct post_buf *b)
{
	free(b->wr_heap);
	free(b->sge_heap);
}

static void sge_to_kern(struct softcm_sge *k, const struct ibv_sge *s, int n)
{
	for (int i = 0; i < n; i++) {
		k[i].addr = s[i].addr;
		k[i].length = s[i].length;
		k[i].lkey = s[i].lkey;
	}
}

/*
 * An errno value, as a provider's, with *bad the first WR not queued:
 * those before it are.  A WR the library cannot describe (a num_sge
 * negative or above any QP's, which would make it read past the caller's
 * array or wrap the count) stops the list there.
 */
int softcm_ctx_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct softcm_send_wr wr_stack[POST_STACK_WR], *kwr;
	struct softcm_sge sge_stack[POST_STACK_SGE];
	unsigned int nwr = 0, nsge = 0, i = 0, s = 0;
	struct softcm_post p = { .handle = qp->handle };
	struct ibv_send_wr *w;
	struct post_buf b;
	int ret;

	for (w = wr; w; w = w->next) {
		if (w->num_sge < 0 || w->num_sge > WR_MAX_SGE)
			break;
		nwr++;
		nsge += w->num_sge;
	}
	ret = post_alloc(&b, sizeof(*kwr), nwr, nsge, wr_stack, sge_stack);
	if (ret) {
		*bad = wr;
		return ret;
	}
	kwr = b.wr;
	for (w = wr; i < nwr; w = w->next, i++) {
		memset(&kwr[i], 0, sizeof(kwr[i]));
		kwr[i].wr_id = w->wr_id;
		kwr[i].num_sge = w->num_sge;
		kwr[i].opcode = w->opcode;
		kwr[i].send_flags = w->send_flags;
		kwr[i].imm_data = w->imm_data;
		if (qp->qp_type == IBV_QPT_UD) {
			kwr[i].wr.ud.ah_handle = w->wr.ud.ah ? w->wr.ud.ah->handle : 0;
			kwr[i].wr.ud.remote_qpn = w->wr.ud.remote_qpn;
			kwr[i].wr.ud.remote_qkey = w->wr.ud.remote_qkey;
		} else {
			kwr[i].wr.rdma.remote_addr = w->wr.rdma.remote_addr;
			kwr[i].wr.rdma.rkey = w->wr.rdma.rkey;
		}
		sge_to_kern(&b.sge[s], w->sg_list, w->num_sge);
		s += w->num_sge;
	}
	p.wr = (uintptr_t)kwr;
	p.sge = (uintptr_t)b.sge;
	p.wr_count = nwr;
	p.sge_count = nsge;
	ret = softcm_vioctl(qp->context, SOFTCM_IOCTL_POST_SEND, &p) ? errno : 0;
	post_free(&b);
	if (!ret && nwr == i && w) {
		ret = EINVAL;		/* the WR with a num_sge out of range */
		p.bad_wr = nwr;
	}
	if (ret) {
		for (w = wr, i = 0; w && i < p.bad_wr; w = w->next)
			i++;
		*bad = w ? w : wr;
	}
	return ret;
}

int softcm_ctx_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct softcm_recv_wr wr_stack[POST_STACK_WR], *kwr;
	struct softcm_sge sge_stack[POST_STACK_SGE];
	unsigned int nwr = 0, nsge = 0, i = 0, s = 0;
	struct softcm_post p = { .handle = qp->handle };
	struct ibv_recv_wr *w;
	struct post_buf b;
	int ret;

	for (w = wr; w; w = w->next) {
		if (w->num_sge < 0 || w->num_sge > WR_MAX_SGE)
			break;
		nwr++;
		nsge += w->num_sge;
	}
	ret = post_alloc(&b, sizeof(*kwr), nwr, nsge, wr_stack, sge_stack);
	if (ret) {
		*bad = wr;
		return ret;
	}
	kwr = b.wr;
	for (w = wr; i < nwr; w = w->next, i++) {
		memset(&kwr[i], 0, sizeof(kwr[i]));
		kwr[i].wr_id = w->wr_id;
		kwr[i].num_sge = w->num_sge;
		sge_to_kern(&b.sge[s], w->sg_list, w->num_sge);
		s += w->num_sge;
	}
	p.wr = (uintptr_t)kwr;
	p.sge = (uintptr_t)b.sge;
	p.wr_count = nwr;
	p.sge_count = nsge;
	ret = softcm_vioctl(qp->context, SOFTCM_IOCTL_POST_RECV, &p) ? errno : 0;
	post_free(&b);
	if (!ret && nwr == i && w) {
		ret = EINVAL;
		p.bad_wr = nwr;
	}
	if (ret) {
		for (w = wr, i = 0; w && i < p.bad_wr; w = w->next)
			i++;
		*bad = w ? w : wr;
	}
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
