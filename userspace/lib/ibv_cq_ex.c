// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * The extended CQ of libibverbs: ibv_create_cq_ex() (the context's
 * create_cq_ex, through <infiniband/verbs.h>'s inline) and the poller
 * that ibv_start_poll(), ibv_next_poll(), ibv_end_poll() and the
 * ibv_wc_read_* inlines call through struct ibv_cq_ex's pointers.
 *
 * It polls the CQ's ring (uapi/linux/softcm.h, "Rings") as
 * ibv_poll_cq() does, with no system call, but reads each completion in
 * its slot instead of copying it: from a start_poll that finds one to
 * end_poll the CQ's lock is held and cur is the slot at cons, which the
 * kernel does not write again until cons passes it; next_poll moves cons
 * past it, end_poll too and publishes cons.
 *
 * wc_flags: the standard fields of struct ibv_wc (IBV_WC_STANDARD_FLAGS),
 * each reader installed only when asked for, as providers do.  The
 * kernel's completions carry no time stamp, VLAN, flow tag or tag
 * matching: a CQ asking for one is refused with EOPNOTSUPP, as rdma_rxe
 * refuses it.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SUPPORTED_WC_FLAGS	((uint64_t)IBV_WC_STANDARD_FLAGS)

static inline struct softcm_cq *to_scq_ex(struct ibv_cq_ex *cqx)
{
	return container_of(cqx, struct softcm_cq, cq_ex);
}

/* Whether the slot at cons holds a completion: if so it becomes cur. */
static int poll_one(struct softcm_cq *scq)
{
	/* Pairs with the kernel's release of prod: the slot first. */
	uint32_t prod = __atomic_load_n(&scq->kpage->prod, __ATOMIC_ACQUIRE);

	if (scq->cons == prod) {
		scq->cur = NULL;
		return 0;
	}
	scq->cur = (const struct softcm_wc *)(scq->cqes +
					      (size_t)(scq->cons & scq->mask) * scq->stride);
	scq->cq_ex.wr_id = scq->cur->wr_id;
	scq->cq_ex.status = scq->cur->status;
	return 1;
}

/* ENOENT and the lock released if the CQ is empty, as libibverbs says. */
static int start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct softcm_cq *scq = to_scq_ex(cqx);

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&scq->lock);
	if (poll_one(scq))
		return 0;
	pthread_spin_unlock(&scq->lock);
	return ENOENT;
}

static int next_poll(struct ibv_cq_ex *cqx)
{
	struct softcm_cq *scq = to_scq_ex(cqx);

	if (scq->cur)
		scq->cons++;
	return poll_one(scq) ? 0 : ENOENT;
}

static void end_poll(struct ibv_cq_ex *cqx)
{
	struct softcm_cq *scq = to_scq_ex(cqx);

	if (scq->cur)
		scq->cons++;
	scq->cur = NULL;
	/* Pairs with the kernel's acquire of cons: we are done with the slots. */
	__atomic_store_n(&scq->upage->cons, scq->cons, __ATOMIC_RELEASE);
	pthread_spin_unlock(&scq->lock);
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *cqx)
{
	return to_scq_ex(cqx)->cur->opcode;
}

static uint32_t read_vendor_err(struct ibv_cq_ex *cqx)
{
	return to_scq_ex(cqx)->cur->vendor_err;
}

static unsigned int read_wc_flags(struct ibv_cq_ex *cqx)
{
	return to_scq_ex(cqx)->cur->wc_flags;
}

static uint32_t read_byte_len(struct ibv_cq_ex *cqx)
{
	return to_scq_ex(cqx)->cur->byte_len;
}

/* Also ibv_wc_read_invalidated_rkey()'s: the same field, as in ibv_wc. */
static __be32 read_imm_data(struct ibv_cq_ex *cqx)
{
	return to_scq_ex(cqx)->cur->imm_data;
}

static uint32_t read_qp_num(struct ibv_cq_ex *cqx)
{
	return to_scq_ex(cqx)->cur->qp_num;
}

static uint32_t read_src_qp(struct ibv_cq_ex *cqx)
{
	return to_scq_ex(cqx)->cur->src_qp;
}

static uint32_t read_slid(struct ibv_cq_ex *cqx)
{
	return to_scq_ex(cqx)->cur->slid;
}

static uint8_t read_sl(struct ibv_cq_ex *cqx)
{
	return to_scq_ex(cqx)->cur->sl;
}

static uint8_t read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return to_scq_ex(cqx)->cur->dlid_path_bits;
}

static void set_readers(struct ibv_cq_ex *cqx, uint64_t wc_flags)
{
	cqx->start_poll = start_poll;
	cqx->next_poll = next_poll;
	cqx->end_poll = end_poll;
	cqx->read_opcode = read_opcode;
	cqx->read_vendor_err = read_vendor_err;
	cqx->read_wc_flags = read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cqx->read_byte_len = read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		cqx->read_imm_data = read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cqx->read_qp_num = read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cqx->read_src_qp = read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		cqx->read_slid = read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		cqx->read_sl = read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cqx->read_dlid_path_bits = read_dlid_path_bits;
}

/*
 * NULL with errno: EOPNOTSUPP for a wc_flag, a parent domain or a flag
 * softcm lacks (IBV_CREATE_CQ_ATTR_SINGLE_THREADED is only a hint),
 * EINVAL for an unknown comp_mask bit; then ibv_create_cq()'s.
 */
struct ibv_cq_ex *softcm_ctx_create_cq_ex(struct ibv_context *ctx,
					  struct ibv_cq_init_attr_ex *attr)
{
	struct softcm_cq *scq;

	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					  IBV_CQ_INIT_ATTR_MASK_PD)) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->wc_flags & ~SUPPORTED_WC_FLAGS) ||
	    (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe > INT32_MAX || attr->comp_vector > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	scq = softcm_cq_create(ctx, attr->cqe, attr->cq_context, attr->channel,
			       attr->comp_vector);
	if (!scq)
		return NULL;
	set_readers(&scq->cq_ex, attr->wc_flags);
	return &scq->cq_ex;
}
