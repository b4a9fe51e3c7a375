// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * The extended QP of libibverbs: ibv_create_qp_ex() with send_ops_flags
 * (the context's create_qp_ex, which <infiniband/verbs.h>'s inline
 * reaches for any comp_mask beyond IBV_QP_INIT_ATTR_PD), ibv_qp_to_qp_ex()
 * and the ibv_wr_* builder, whose calls are verbs.h's inlines through the
 * function pointers of struct ibv_qp_ex, filled here.
 *
 * The builder writes its WRs into the same send ring as ibv_post_send()
 * (uapi/linux/softcm.h, "Rings"), from ibv_wr_start() to
 * ibv_wr_complete() under the send queue's lock: each WR builder takes
 * the next slot with the qp_ex's wr_id and wr_flags, the setters after it
 * fill that slot.  Nothing is visible to the kernel until
 * ibv_wr_complete() publishes sq_prod and rings the doorbell by the
 * ring's rule, as ibv_post_send() does; ibv_wr_abort() publishes nothing,
 * so the slots written are free again.  The calls return nothing: the
 * first error is kept and ibv_wr_complete() returns it, posting none of
 * the WRs (ibv_wr_post(3)).  The checks are ibv_post_send()'s, with the
 * same errno values.
 *
 * Operations: SEND, SEND_WITH_IMM (RC and UD), RDMA_WRITE,
 * RDMA_WRITE_WITH_IMM, RDMA_READ, ATOMIC_CMP_AND_SWP and
 * ATOMIC_FETCH_AND_ADD and SEND_WITH_INV (RC), as ibv_post_send() takes
 * them: an atomic's one SGE of 8 bytes (ibv_wr_set_sge()) takes the
 * original value.  What ibv_post_send() answers EOPNOTSUPP for (LOCAL_INV,
 * BIND_MW, TSO) is refused in send_ops_flags with EOPNOTSUPP when the QP is created,
 * as rdma_rxe refuses what it lacks, so that those builders stay NULL.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define RC_SEND_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV)
#define UD_SEND_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)

/* The wr_flags a builder takes; IBV_SEND_INLINE is the inline setters'. */
#define WR_FLAGS	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED)

static inline struct softcm_qp *to_sqp_ex(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct softcm_qp, qp_ex);
}

static void wr_fail(struct softcm_qp *sqp, int err)
{
	if (!sqp->wr_err)
		sqp->wr_err = err;
	sqp->wr_cur = NULL;
}

/*
 * The next slot, begun as a WR of @opcode with the qp_ex's wr_id and
 * wr_flags: NULL once something failed.  A UD WR before it that never
 * got its address fails the post.
 */
static struct softcm_sq_wqe *wr_begin(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode)
{
	struct softcm_qp *sqp = to_sqp_ex(qpx);
	struct softcm_sq_wqe *wqe;

	if (sqp->wr_need_ud)
		wr_fail(sqp, EINVAL);
	if (sqp->wr_err)
		return NULL;
	if (qpx->wr_flags & ~(WR_FLAGS | IBV_SEND_INLINE)) {
		wr_fail(sqp, EINVAL);
		return NULL;
	}
	if (!softcm_sq_room(sqp, sqp->wr_prod)) {
		wr_fail(sqp, ENOMEM);
		return NULL;
	}
	wqe = softcm_sq_slot(sqp, sqp->wr_prod++);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr.wr_id = qpx->wr_id;
	wqe->wr.opcode = opcode;
	wqe->wr.send_flags = qpx->wr_flags & WR_FLAGS;
	sqp->wr_cur = wqe;
	sqp->wr_need_ud = sqp->qp.qp_type == IBV_QPT_UD;
	return wqe;
}

static void wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode, uint32_t rkey,
		    uint64_t remote_addr, __be32 imm_data)
{
	struct softcm_sq_wqe *wqe = wr_begin(qpx, opcode);

	if (!wqe)
		return;
	wqe->wr.wr.rdma.remote_addr = remote_addr;
	wqe->wr.wr.rdma.rkey = rkey;
	wqe->wr.imm_data = imm_data;
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			      __be32 imm_data)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr, imm_data);
}

static void wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode, uint32_t rkey,
		      uint64_t remote_addr, uint64_t compare_add, uint64_t swap)
{
	struct softcm_sq_wqe *wqe = wr_begin(qpx, opcode);

	if (!wqe)
		return;
	wqe->wr.wr.atomic.remote_addr = remote_addr;
	wqe->wr.wr.atomic.compare_add = compare_add;
	wqe->wr.wr.atomic.swap = swap;
	wqe->wr.wr.atomic.rkey = rkey;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			      uint64_t compare, uint64_t swap)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
				uint64_t add)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, add, 0);
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	wr_begin(qpx, IBV_WR_SEND);
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct softcm_sq_wqe *wqe = wr_begin(qpx, IBV_WR_SEND_WITH_INV);

	/* the rkey, in host order, where the immediate goes */
	if (wqe)
		wqe->wr.imm_data = invalidate_rkey;
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct softcm_sq_wqe *wqe = wr_begin(qpx, IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->wr.imm_data = imm_data;
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
			   uint32_t remote_qkey)
{
	struct softcm_qp *sqp = to_sqp_ex(qpx);
	struct softcm_sq_wqe *wqe = sqp->wr_cur;

	if (!wqe)
		return;
	if (sqp->qp.qp_type != IBV_QPT_UD || !ah || remote_qpn > 0xffffff) {
		wr_fail(sqp, EINVAL);
		return;
	}
	wqe->wr.wr.ud.ah_handle = ah->handle;
	wqe->wr.wr.ud.remote_qpn = remote_qpn;
	wqe->wr.wr.ud.remote_qkey = remote_qkey;
	sqp->wr_need_ud = 0;
}

/* The data setters: once per WR, after its builder. */
static struct softcm_sq_wqe *wr_data(struct softcm_qp *sqp)
{
	struct softcm_sq_wqe *wqe = sqp->wr_cur;

	if (wqe && (wqe->wr.num_sge || (wqe->wr.send_flags & IBV_SEND_INLINE))) {
		wr_fail(sqp, EINVAL);
		return NULL;
	}
	return wqe;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
			    const struct ibv_sge *sg_list)
{
	struct softcm_qp *sqp = to_sqp_ex(qpx);
	struct softcm_sq_wqe *wqe = wr_data(sqp);
	struct softcm_sge *sge;
	size_t i;

	if (!wqe)
		return;
	if (num_sge > sqp->cap.max_send_sge) {
		wr_fail(sqp, EINVAL);
		return;
	}
	/* an atomic's one SGE takes the 8 bytes of the original value */
	if (softcm_wr_is_atomic(wqe->wr.opcode) && (num_sge != 1 || sg_list[0].length != 8)) {
		wr_fail(sqp, EINVAL);
		return;
	}
	sge = (struct softcm_sge *)(wqe + 1);
	for (i = 0; i < num_sge; i++) {
		sge[i].addr = sg_list[i].addr;
		sge[i].length = sg_list[i].length;
		sge[i].lkey = sg_list[i].lkey;
	}
	wqe->wr.num_sge = num_sge;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(qpx, 1, &sge);
}

/* Inline data, for the sends and RDMA writes only, as IBV_SEND_INLINE. */
static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct softcm_qp *sqp = to_sqp_ex(qpx);
	struct softcm_sq_wqe *wqe = wr_data(sqp);
	size_t i, len = 0;
	uint8_t *data;

	if (!wqe)
		return;
	for (i = 0; i < num_buf; i++) {
		len += buf_list[i].length;
		if (len > sqp->cap.max_inline_data || len < buf_list[i].length) {
			wr_fail(sqp, EINVAL);
			return;
		}
	}
	if (wqe->wr.opcode == IBV_WR_RDMA_READ || softcm_wr_is_atomic(wqe->wr.opcode)) {
		wr_fail(sqp, EINVAL);
		return;
	}
	data = (uint8_t *)(wqe + 1);
	for (i = 0; i < num_buf; i++) {
		memcpy(data, buf_list[i].addr, buf_list[i].length);
		data += buf_list[i].length;
	}
	wqe->inline_len = len;
	wqe->wr.send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct softcm_qp *sqp = to_sqp_ex(qpx);

	pthread_spin_lock(&sqp->sq_lock);
	sqp->wr_prod = sqp->sq_prod;
	sqp->wr_cur = NULL;
	sqp->wr_need_ud = 0;
	sqp->wr_err = 0;
}

/*
 * 0, or an errno value and nothing posted: the first error of the
 * builder, or EINVAL outside RTS and ERR, as ibv_post_send().
 */
static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct softcm_qp *sqp = to_sqp_ex(qpx);
	int posted = sqp->wr_prod != sqp->sq_prod;
	int err;

	if (sqp->wr_need_ud)
		wr_fail(sqp, EINVAL);
	err = sqp->wr_err;
	if (!err && posted && !softcm_sq_can_post(sqp))
		err = EINVAL;
	if (!err && posted)
		softcm_sq_publish(sqp, sqp->wr_prod);
	pthread_spin_unlock(&sqp->sq_lock);
	if (!err && posted)
		softcm_sq_kick(sqp);
	return err;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	pthread_spin_unlock(&to_sqp_ex(qpx)->sq_lock);
}

/* EOPNOTSUPP for what softcm lacks, as check_opcode() in ibv_qp.c. */
static int check_send_ops(enum ibv_qp_type type, uint64_t ops)
{
	switch (type) {
	case IBV_QPT_RC:
		return ops & ~(uint64_t)RC_SEND_OPS ? EOPNOTSUPP : 0;
	case IBV_QPT_UD:
		return ops & ~(uint64_t)UD_SEND_OPS ? EOPNOTSUPP : 0;
	default:
		return EOPNOTSUPP;
	}
}

static void set_send_ops(struct ibv_qp_ex *qpx, uint64_t ops)
{
	if (ops & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		qpx->wr_send_inv = wr_send_inv;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qpx->wr_set_ud_addr = wr_set_ud_addr;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
}

/*
 * ibv_create_qp_ex() through the context: beyond ibv_qp_init_attr, a PD
 * (required), send_ops_flags and create_flags 0.  The QP is an extended
 * one, as rdma_rxe's of this path are: ibv_qp_to_qp_ex() gives its
 * ibv_qp_ex, with the builders of its send_ops_flags.
 */
struct ibv_qp *softcm_ctx_create_qp_ex(struct ibv_context *ctx,
				       struct ibv_qp_init_attr_ex *attr)
{
	uint64_t ops = 0;
	struct softcm_qp *sqp;
	int err;

	if (attr->comp_mask & ~(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
				IBV_QP_INIT_ATTR_CREATE_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD)) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = attr->send_ops_flags;
		err = check_send_ops(attr->qp_type, ops);
		if (err) {
			errno = err;
			return NULL;
		}
	}
	sqp = softcm_qp_create(ctx, attr);
	if (!sqp)
		return NULL;
	set_send_ops(&sqp->qp_ex, ops);
	sqp->ex = 1;
	return &sqp->qp;
}

/* NULL for a QP of ibv_create_qp(), as libibverbs. */
SOFTCM_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct softcm_qp *sqp = to_sqp(qp);

	return sqp->ex ? &sqp->qp_ex : NULL;
}
