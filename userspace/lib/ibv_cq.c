// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * Completion channels and completion queues.  A channel is a descriptor
 * the kernel made; read() gives one record per completion event, naming
 * the CQ by the pointer we gave as its uid.  Destroying a CQ waits until
 * the application has acknowledged every event the kernel reported for
 * it, as libibverbs does.  poll_cq and req_notify_cq are the context's
 * operations, which <infiniband/verbs.h>'s inlines call: polling reads
 * the CQ's ring (uapi/linux/softcm.h, "Rings") with no system call;
 * arming is REQ_NOTIFY_CQ.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

SOFTCM_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct softcm_create_comp_channel c = { 0 };
	struct ibv_comp_channel *channel;

	channel = calloc(1, sizeof(*channel));
	if (!channel) {
		errno = ENOMEM;
		return NULL;
	}
	if (softcm_vioctl(context, SOFTCM_IOCTL_CREATE_COMP_CHANNEL, &c)) {
		free(channel);
		return NULL;
	}
	channel->context = context;
	channel->fd = c.fd;
	softcm_ctx_hold(context);
	return channel;
}

/*
 * EBUSY while a CQ uses it or is being created on it (the CQ counts from
 * before its CREATE_CQ names the descriptor); an errno value, as
 * libibverbs.  The check and the close under one hold of the mutex.
 */
SOFTCM_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct ibv_context *context = channel->context;

	pthread_mutex_lock(&context->mutex);
	if (channel->refcnt) {
		pthread_mutex_unlock(&context->mutex);
		return EBUSY;
	}
	close(channel->fd);
	pthread_mutex_unlock(&context->mutex);
	free(channel);
	softcm_ctx_put(context);
	return 0;
}

static void channel_get(struct ibv_context *context, struct ibv_comp_channel *channel)
{
	if (!channel)
		return;
	pthread_mutex_lock(&context->mutex);
	channel->refcnt++;
	pthread_mutex_unlock(&context->mutex);
}

static void channel_put(struct ibv_context *context, struct ibv_comp_channel *channel)
{
	if (!channel)
		return;
	pthread_mutex_lock(&context->mutex);
	channel->refcnt--;
	pthread_mutex_unlock(&context->mutex);
}

/*
 * The fewest completions a CQ holds.  A CQ may hold more than asked
 * (cq->cqe says how many), as providers round up theirs.  Debian's
 * perftest (4.5-0.17) gives its latency tests a send CQ of one entry and
 * one completion channel for both CQs: when the peer's answer is seen
 * before the ACK of the SEND it answers (over veth they can pass each
 * other), it takes the receive's event while it waits for the send's,
 * leaves that send's completion unpolled, and the next one finds the CQ
 * full: lost, the CQ in error, and the program asleep for good.  A
 * model of its loop, ACKs and answers in any order, never has more than
 * two waiting there: four leave room, and a CQ asked for four or more is
 * as asked.
 */
#define MIN_CQE		4

/* A CQ of ibv_create_cq() or of ibv_cq_ex.c's create_cq_ex; NULL with errno. */
struct softcm_cq *softcm_cq_create(struct ibv_context *context, int cqe, void *cq_context,
				   struct ibv_comp_channel *channel, int comp_vector)
{
	struct softcm_create_cq c;
	struct softcm_cq *scq;
	struct ibv_cq *cq;

	if (cqe < 1 || comp_vector < 0 || comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	scq = calloc(1, sizeof(*scq));
	if (!scq) {
		errno = ENOMEM;
		return NULL;
	}
	cq = &scq->cq;
	memset(&c, 0, sizeof(c));
	c.uid = (uintptr_t)cq;
	c.cqe = cqe < MIN_CQE ? MIN_CQE : cqe;
	c.comp_vector = comp_vector;
	channel_get(context, channel);
	c.channel_fd = channel ? channel->fd : -1;
	if (softcm_vioctl(context, SOFTCM_IOCTL_CREATE_CQ, &c)) {
		int err = errno;

		channel_put(context, channel);
		free(scq);
		errno = err;
		return NULL;
	}
	if (softcm_area_map(context, &scq->kmap, &c.kmap, 0) ||
	    softcm_area_map(context, &scq->umap, &c.umap, 1)) {
		int err = errno;
		struct softcm_destroy_cq d = { .handle = c.handle };

		softcm_area_unmap(&scq->kmap);
		softcm_vioctl(context, SOFTCM_IOCTL_DESTROY_CQ, &d);
		channel_put(context, channel);
		free(scq);
		errno = err;
		return NULL;
	}
	scq->kpage = scq->kmap.addr;
	scq->cqes = (const uint8_t *)scq->kmap.addr + c.ring.offset;
	scq->mask = c.ring.entries - 1;
	scq->stride = c.ring.stride;
	scq->upage = scq->umap.addr;
	pthread_spin_init(&scq->lock, PTHREAD_PROCESS_PRIVATE);
	cq->context = context;
	cq->channel = channel;
	cq->cq_context = cq_context;
	cq->handle = c.handle;
	cq->cqe = c.cqe;
	pthread_mutex_init(&cq->mutex, NULL);
	pthread_cond_init(&cq->cond, NULL);
	softcm_ctx_hold(context);
	return scq;
}

SOFTCM_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
					   void *cq_context,
					   struct ibv_comp_channel *channel,
					   int comp_vector)
{
	struct softcm_cq *scq = softcm_cq_create(context, cqe, cq_context, channel, comp_vector);

	return scq ? &scq->cq : NULL;
}

/* Not supported: an errno value, as a provider without resize_cq. */
SOFTCM_EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	return EOPNOTSUPP;
}

/*
 * EBUSY while a QP uses it.  Then waits for the application to
 * acknowledge the events the kernel reported, so that none it still holds
 * points at freed memory.
 */
SOFTCM_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct softcm_destroy_cq d = { .handle = cq->handle };
	struct ibv_comp_channel *channel = cq->channel;
	struct ibv_context *context = cq->context;

	if (softcm_vioctl(context, SOFTCM_IOCTL_DESTROY_CQ, &d))
		return errno;
	channel_put(context, channel);
	pthread_mutex_lock(&cq->mutex);
	while (cq->comp_events_completed < d.comp_events_reported ||
	       cq->async_events_completed < d.async_events_reported)
		pthread_cond_wait(&cq->cond, &cq->mutex);
	pthread_mutex_unlock(&cq->mutex);
	pthread_cond_destroy(&cq->cond);
	pthread_mutex_destroy(&cq->mutex);
	softcm_area_unmap(&to_scq(cq)->umap);
	softcm_area_unmap(&to_scq(cq)->kmap);
	pthread_spin_destroy(&to_scq(cq)->lock);
	free(to_scq(cq));
	softcm_ctx_put(context);
	return 0;
}

/* Blocks unless the channel's fd is O_NONBLOCK; 0, or -1 with errno. */
SOFTCM_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel,
				   struct ibv_cq **cq, void **cq_context)
{
	struct softcm_comp_event ev;
	ssize_t len;

	len = read(channel->fd, &ev, sizeof(ev));
	if (len != sizeof(ev))
		return softcm_err(len < 0 ? errno : EIO);
	*cq = (struct ibv_cq *)(uintptr_t)ev.cq_uid;
	*cq_context = (*cq)->cq_context;
	return 0;
}

SOFTCM_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

static void wc_from_kern(struct ibv_wc *wc, const struct softcm_wc *k)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = k->wr_id;
	wc->status = k->status;
	wc->opcode = k->opcode;
	wc->vendor_err = k->vendor_err;
	wc->byte_len = k->byte_len;
	wc->imm_data = k->imm_data;
	wc->qp_num = k->qp_num;
	wc->src_qp = k->src_qp;
	wc->wc_flags = k->wc_flags;
	wc->pkey_index = k->pkey_index;
	wc->slid = k->slid;
	wc->sl = k->sl;
	wc->dlid_path_bits = k->dlid_path_bits;
}

/*
 * The number of completions, or -1 with errno, as a provider's: read
 * from the ring, the kernel's index with acquire semantics before the
 * slots, ours published (release) once they are copied.
 */
int softcm_ctx_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc)
{
	struct softcm_cq *scq = to_scq(cq);
	uint32_t prod;
	int got = 0;

	if (ne < 0)
		return softcm_err(EINVAL);
	pthread_spin_lock(&scq->lock);
	prod = __atomic_load_n(&scq->kpage->prod, __ATOMIC_ACQUIRE);
	while (got < ne && scq->cons != prod) {
		wc_from_kern(&wc[got++], (const struct softcm_wc *)
			     (scq->cqes + (size_t)(scq->cons & scq->mask) * scq->stride));
		scq->cons++;
	}
	if (got)
		__atomic_store_n(&scq->upage->cons, scq->cons, __ATOMIC_RELEASE);
	pthread_spin_unlock(&scq->lock);
	return got;
}

/* An errno value, as a provider's. */
int softcm_ctx_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct softcm_req_notify_cq r = {
		.handle = cq->handle,
		.solicited_only = !!solicited_only,
	};

	return softcm_vioctl(cq->context, SOFTCM_IOCTL_REQ_NOTIFY_CQ, &r) ? errno : 0;
}
